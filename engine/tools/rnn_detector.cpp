#include "engine/tools/rnn_detector.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "engine/tools/dequantize.h"
#include "engine/tools/engine_facts.h"
#include "engine/tools/model_runner.h"

namespace gruwb::tools {
namespace {

using Op = BuiltinOperator;

// ---- Read-only view of one subgraph -----------------------------------------------

class Graph {
 public:
  Graph(const ModelDef& def, int subgraph, const EngineFacts* facts = nullptr)
      : def_(def), sg_(*def.subgraphs[static_cast<size_t>(subgraph)]) {
    if (facts && static_cast<size_t>(subgraph) < facts->shapes.size() &&
        facts->shapes[static_cast<size_t>(subgraph)].size() == sg_.tensors.size()) {
      shapes_ = &facts->shapes[static_cast<size_t>(subgraph)];
      folded_ = &facts->folded_scalars[static_cast<size_t>(subgraph)];
    }
    producer_.assign(sg_.tensors.size(), -1);
    for (size_t i = 0; i < sg_.operators.size(); ++i) {
      for (int32_t t : sg_.operators[i]->outputs) {
        if (valid(t)) producer_[static_cast<size_t>(t)] = static_cast<int>(i);
      }
    }
  }

  const fb::SubGraphT& sg() const { return sg_; }
  bool valid(int t) const { return t >= 0 && static_cast<size_t>(t) < sg_.tensors.size(); }
  const fb::TensorT& tensor(int t) const { return *sg_.tensors[static_cast<size_t>(t)]; }
  // The engine's inferred shape when known, else the file's.
  const std::vector<int32_t>& shape(int t) const {
    static const std::vector<int32_t> kNone;  // an omitted (-1) or out-of-range tensor
    if (auto it = borrowed_.find(t); it != borrowed_.end()) return it->second.second;
    if (!valid(t)) return kNone;
    return shapes_ ? (*shapes_)[static_cast<size_t>(t)] : tensor(t).shape;
  }
  int producer(int t) const { return valid(t) ? producer_[static_cast<size_t>(t)] : -1; }
  const fb::OperatorT& op(int i) const { return *sg_.operators[static_cast<size_t>(i)]; }
  Op code(int i) const { return def_.operator_codes[op(i).opcode_index]->builtin_code; }
  bool is_custom(int i, const char* custom_code) const {
    return code(i) == Op::CUSTOM &&
           def_.operator_codes[op(i).opcode_index]->custom_code == custom_code;
  }
  // The op producing `t` if it has code `c`, else -1.
  int produced_by(int t, Op c) const {
    int p = producer(t);
    return p >= 0 && code(p) == c ? p : -1;
  }
  // A body input that carries a constant of the calling subgraph unchanged
  // (older converters pass the weights into the loop as loop values) reads
  // as that constant.
  void borrow(int t, const std::vector<uint8_t>* data, const std::vector<int32_t>& shape) {
    borrowed_[t] = {data, shape};
  }
  const std::vector<uint8_t>* data(int t) const {
    if (!valid(t)) return nullptr;
    if (auto it = borrowed_.find(t); it != borrowed_.end()) return it->second.first;
    uint32_t b = tensor(t).buffer;
    if (b == 0 || b >= def_.buffers.size() || def_.buffers[b]->data.empty()) return nullptr;
    return &def_.buffers[b]->data;
  }
  bool is_const(int t) const { return data(t) != nullptr; }
  bool is_float(int t) const { return valid(t) && tensor(t).type == fb::TensorType::FLOAT32; }
  // int8 constant with scales (a hybrid model's weights), per tensor or per row.
  bool is_int8_weight(int t) const {
    if (!valid(t) || tensor(t).type != fb::TensorType::INT8 || !is_const(t)) return false;
    const auto& q = tensor(t).quantization;
    const auto& shape = tensor(t).shape;
    return q && !q->scale.empty() &&
           (q->scale.size() == 1 || (q->quantized_dimension == 0 && !shape.empty() &&
                                     q->scale.size() == static_cast<size_t>(shape[0])));
  }
  // The int8 scale of row `r` of a hybrid weight (0: a float weight, or a zero point that
  // is not 0, which no fused hybrid op takes).
  float row_scale(int t, int r) const {
    if (!is_int8_weight(t)) return 0.f;
    const fb::QuantizationParametersT& q = *tensor(t).quantization;
    const size_t ch = q.scale.size() == 1 ? 0 : static_cast<size_t>(r);
    if (ch >= q.scale.size()) return 0.f;
    if (ch < q.zero_point.size() && q.zero_point[ch] != 0) return 0.f;
    return q.scale[ch];
  }
  // A constant float tensor as values, int8 weights dequantized (empty if it is neither).
  std::vector<float> floats(int t) const {
    const std::vector<uint8_t>* d = data(t);
    if (d && is_int8_weight(t)) return dequantized(t, *d);
    if (!d || !is_float(t) || d->size() % 4 != 0) return {};
    std::vector<float> v(d->size() / 4);
    std::memcpy(v.data(), d->data(), d->size());
    return v;
  }
  // A constant with one value (any shape), as double.
  bool scalar(int t, double* out) const {
    const std::vector<uint8_t>* d = data(t);
    if (!d && folded_) {
      auto it = folded_->find(t);
      if (it != folded_->end()) return *out = static_cast<double>(it->second), true;
    }
    if (!d) return false;
    if (tensor(t).type == fb::TensorType::FLOAT32 && d->size() == 4) {
      float v;
      std::memcpy(&v, d->data(), 4);
      return *out = v, true;
    }
    if (tensor(t).type == fb::TensorType::INT32 && d->size() == 4) {
      int32_t v;
      std::memcpy(&v, d->data(), 4);
      return *out = v, true;
    }
    return false;
  }
  bool scalar_is(int t, double value) const {
    double v = 0;
    return scalar(t, &v) && std::fabs(v - value) < 1e-6;
  }
  bool all_zero(int t) const {
    const std::vector<uint8_t>* d = data(t);
    return d && std::all_of(d->begin(), d->end(), [](uint8_t b) { return b == 0; });
  }
  int64_t elements(int t) const {
    int64_t n = 1;
    for (int32_t d : shape(t)) n *= d;
    return n;
  }
  // Last dimension (the vector size of a [B,N] activation).
  int last_dim(int t) const {
    const auto& s = shape(t);
    return s.empty() ? 1 : s.back();
  }
  int activation(int i) const {
    const fb::OperatorT& o = op(i);
    switch (code(i)) {
      case Op::ADD:
        return o.builtin_options.AsAddOptions()
                   ? static_cast<int>(o.builtin_options.AsAddOptions()->fused_activation_function)
                   : 0;
      case Op::MUL:
        return o.builtin_options.AsMulOptions()
                   ? static_cast<int>(o.builtin_options.AsMulOptions()->fused_activation_function)
                   : 0;
      case Op::SUB:
        return o.builtin_options.AsSubOptions()
                   ? static_cast<int>(o.builtin_options.AsSubOptions()->fused_activation_function)
                   : 0;
      default: return 0;
    }
  }

 private:
  std::vector<float> dequantized(int t, const std::vector<uint8_t>& d) const {
    std::vector<float> v;
    std::string error;
    return dequantize_int8(tensor(t), d, &v, &error) ? v : std::vector<float>();
  }

  const ModelDef& def_;
  const fb::SubGraphT& sg_;
  std::vector<int> producer_;
  const std::vector<std::vector<int32_t>>* shapes_ = nullptr;
  const std::map<int, int64_t>* folded_ = nullptr;
  std::map<int, std::pair<const std::vector<uint8_t>*, std::vector<int32_t>>> borrowed_;
};

// ---- Affine expressions: sums of FC products and biases ---------------------------

// rows [row0, row0 + n) of constant `weight` [out,in] applied to `source`.
struct Term {
  int source = -1;
  int weight = -1;
  int row0 = 0;
};
// values [offset, offset + n) of constant `tensor`; `side` is the FC input it
// was the bias of (-1 for a bare ADD of a constant).
struct BiasPiece {
  int tensor = -1;
  int offset = 0;
  int side = -1;
};
struct Affine {
  int size = 0;
  std::vector<Term> terms;
  std::vector<BiasPiece> biases;
};

class Matcher {
 public:
  Matcher(const Graph& g, std::function<bool(int)> is_x) : g_(g), is_x_(std::move(is_x)) {}

  std::set<int> ops;  // every op a successful match used
  std::string why;    // the last reason a match failed

  bool fail(const std::string& reason) {
    why = reason;
    return false;
  }

  // t as an affine function of activations (FC outputs, SPLIT pieces, ADDs).
  bool affine(int t, Affine* out) {
    int p = g_.producer(t);
    if (p < 0) return fail("tensor '" + g_.tensor(t).name + "' is not computed by an FC");
    const fb::OperatorT& o = g_.op(p);
    switch (g_.code(p)) {
      case Op::FULLY_CONNECTED: {
        const auto* opt = o.builtin_options.AsFullyConnectedOptions();
        if (opt && (opt->fused_activation_function != fb::ActivationFunctionType::NONE ||
                    opt->keep_num_dims)) {
          return fail("FC '" + g_.tensor(t).name + "' has a fused activation");
        }
        if (o.inputs.size() < 2 || !(g_.is_float(o.inputs[1]) || g_.is_int8_weight(o.inputs[1])) ||
            !g_.is_const(o.inputs[1]) || g_.shape(o.inputs[1]).size() != 2) {
          return fail("FC '" + g_.tensor(t).name + "' has no constant float32 weights");
        }
        out->size = g_.shape(o.inputs[1])[0];
        out->terms = {{o.inputs[0], o.inputs[1], 0}};
        out->biases.clear();
        if (o.inputs.size() > 2 && o.inputs[2] >= 0) {
          if (!g_.is_float(o.inputs[2]) || !g_.is_const(o.inputs[2])) {
            return fail("FC '" + g_.tensor(t).name + "' has a non-constant bias");
          }
          out->biases.push_back({o.inputs[2], 0, o.inputs[0]});
        }
        ops.insert(p);
        return true;
      }
      case Op::SPLIT: {
        const auto* opt = o.builtin_options.AsSplitOptions();
        if (!opt || o.inputs.size() != 2 || opt->num_splits < 1) return fail("bad SPLIT");
        const int rank = static_cast<int>(g_.tensor(o.inputs[1]).shape.size());
        double axis = 0;
        if (!g_.scalar(o.inputs[0], &axis) || (axis != rank - 1 && axis != -1)) {
          return fail("SPLIT of '" + g_.tensor(t).name + "' is not along the last axis");
        }
        Affine whole;
        if (!affine(o.inputs[1], &whole)) return false;
        const int piece = whole.size / opt->num_splits;
        const int k =
            static_cast<int>(std::find(o.outputs.begin(), o.outputs.end(), t) - o.outputs.begin());
        *out = whole;
        out->size = piece;
        for (Term& term : out->terms) term.row0 += k * piece;
        for (BiasPiece& b : out->biases) b.offset += k * piece;
        ops.insert(p);
        return true;
      }
      case Op::SPLIT_V: {
        // SPLIT_V(x, sizes, axis): piece k starts after the sizes before it (-1 = the rest).
        if (o.inputs.size() != 3) return fail("bad SPLIT_V");
        const int rank = static_cast<int>(g_.shape(o.inputs[0]).size());
        double axis = 0;
        const std::vector<uint8_t>* sizes = g_.data(o.inputs[1]);
        if (!g_.scalar(o.inputs[2], &axis) || (axis != rank - 1 && axis != -1) || !sizes ||
            g_.tensor(o.inputs[1]).type != fb::TensorType::INT32 ||
            sizes->size() != 4 * o.outputs.size()) {
          return fail("SPLIT_V of '" + g_.tensor(t).name + "' is not along the last axis");
        }
        Affine whole;
        if (!affine(o.inputs[0], &whole)) return false;
        std::vector<int32_t> n(o.outputs.size());
        std::memcpy(n.data(), sizes->data(), sizes->size());
        int known = 0, rest = -1;
        for (size_t i = 0; i < n.size(); ++i) {
          if (n[i] < 0)
            rest = static_cast<int>(i);
          else
            known += n[i];
        }
        if (rest >= 0) n[static_cast<size_t>(rest)] = whole.size - known;
        const size_t k = static_cast<size_t>(std::find(o.outputs.begin(), o.outputs.end(), t) -
                                             o.outputs.begin());
        int offset = 0;
        for (size_t i = 0; i < k; ++i) offset += n[i];
        if (n[k] <= 0 || offset + n[k] > whole.size) return fail("SPLIT_V sizes do not add up");
        return cut(whole, offset, n[k], p, out);
      }
      case Op::STRIDED_SLICE: {
        // x[:, b:e] of a [B, N] activation, stride 1.
        const auto* opt = o.builtin_options.AsStridedSliceOptions();
        const std::vector<uint8_t>* b = g_.data(o.inputs.size() == 4 ? o.inputs[1] : -1);
        const std::vector<uint8_t>* e = g_.data(o.inputs.size() == 4 ? o.inputs[2] : -1);
        const std::vector<uint8_t>* st = g_.data(o.inputs.size() == 4 ? o.inputs[3] : -1);
        if (!opt || !b || !e || !st || b->size() != 8 || e->size() != 8 || st->size() != 8 ||
            opt->ellipsis_mask || opt->new_axis_mask || opt->shrink_axis_mask ||
            (opt->end_mask & 2) || g_.shape(o.inputs[0]).size() != 2) {
          return fail("STRIDED_SLICE of '" + g_.tensor(t).name + "' is not a cut of the last axis");
        }
        int32_t begin[2], end[2], stride[2];
        std::memcpy(begin, b->data(), 8);
        std::memcpy(end, e->data(), 8);
        std::memcpy(stride, st->data(), 8);
        const bool all_rows = ((opt->begin_mask & 1) || begin[0] == 0) &&
                              ((opt->end_mask & 1) || end[0] >= g_.shape(o.inputs[0])[0]);
        const int first = (opt->begin_mask & 2) ? 0 : begin[1];
        if (!all_rows || stride[0] != 1 || stride[1] != 1 || first < 0 || end[1] <= first) {
          return fail("STRIDED_SLICE of '" + g_.tensor(t).name + "' is not a cut of the last axis");
        }
        Affine whole;
        if (!affine(o.inputs[0], &whole)) return false;
        if (end[1] > whole.size) return fail("STRIDED_SLICE cut past the gates");
        return cut(whole, first, end[1] - first, p, out);
      }
      case Op::ADD: {
        if (g_.activation(p) != 0) return fail("ADD with a fused activation");
        Affine a, b;
        for (int side = 0; side < 2; ++side) {
          int c = o.inputs[static_cast<size_t>(side)];
          int other = o.inputs[static_cast<size_t>(1 - side)];
          if (g_.is_const(c) && g_.is_float(c) && !g_.is_const(other)) {
            if (!affine(other, out)) return false;
            if (g_.elements(c) != out->size) return fail("bias size mismatch");
            out->biases.push_back({c, 0, -1});
            ops.insert(p);
            return true;
          }
        }
        if (!affine(o.inputs[0], &a) || !affine(o.inputs[1], &b)) return false;
        if (a.size != b.size) return fail("ADD of different sizes");
        *out = a;
        out->terms.insert(out->terms.end(), b.terms.begin(), b.terms.end());
        out->biases.insert(out->biases.end(), b.biases.begin(), b.biases.end());
        ops.insert(p);
        return true;
      }
      default:
        return fail("'" + g_.tensor(t).name + "' (" +
                    op_code_name(static_cast<int32_t>(g_.code(p))) +
                    ") is not an FC product or a sum of them");
    }
  }

  // Values [offset, offset + n) of `whole`, computed by op `p`.
  bool cut(const Affine& whole, int offset, int n, int p, Affine* out) {
    *out = whole;
    out->size = n;
    for (Term& term : out->terms) term.row0 += offset;
    for (BiasPiece& b : out->biases) b.offset += offset;
    ops.insert(p);
    return true;
  }

  // sigmoid / hard_sigmoid gate of an affine pre-activation.
  bool gate(int t, std::string* kind, Affine* pre) {
    if (int p = g_.produced_by(t, Op::LOGISTIC); p >= 0) {
      *kind = "sigmoid";
      if (!affine(g_.op(p).inputs[0], pre)) return false;
      ops.insert(p);
      return true;
    }
    // MAXIMUM(MINIMUM(ADD(MUL(x, 0.2), 0.5), 1), 0): Keras 2's hard_sigmoid.
    int steps[4] = {-1, -1, -1, -1};
    const Op codes[4] = {Op::MAXIMUM, Op::MINIMUM, Op::ADD, Op::MUL};
    const double constants[4] = {0, 1, 0.5, 0.2};
    int cur = t;
    for (int i = 0; i < 4; ++i) {
      int p = g_.produced_by(cur, codes[i]);
      if (p < 0) return fail("'" + g_.tensor(t).name + "' is not a sigmoid gate");
      const auto& in = g_.op(p).inputs;
      if (g_.scalar_is(in[1], constants[i])) {
        cur = in[0];
      } else if (g_.scalar_is(in[0], constants[i])) {
        cur = in[1];
      } else {
        return fail("'" + g_.tensor(t).name + "' is not a sigmoid gate");
      }
      steps[i] = p;
    }
    if (!affine(cur, pre)) return false;
    for (int p : steps) ops.insert(p);
    *kind = "hard_sigmoid";
    return true;
  }

  // Splits a gate's pre-activation into its x term and its h term.
  struct Parts {
    int x_weight = -1, x_row = 0;
    int h_weight = -1, h_row = 0;
    int h_source = -1;
    std::vector<BiasPiece> biases;
  };
  bool parts(const Affine& a, int h_source, Parts* out, const char* gate_name) {
    *out = Parts();
    out->h_source = h_source;
    for (const Term& term : a.terms) {
      if (is_x_(term.source)) {
        if (out->x_weight >= 0) return fail(std::string(gate_name) + ": two products with x");
        out->x_weight = term.weight;
        out->x_row = term.row0;
      } else {
        if (out->h_weight >= 0) return fail(std::string(gate_name) + ": two products with h");
        if (out->h_source >= 0 && term.source != out->h_source) {
          return fail(std::string(gate_name) + ": the recurrent product reads '" +
                      g_.tensor(term.source).name + "', not the state");
        }
        out->h_source = term.source;
        out->h_weight = term.weight;
        out->h_row = term.row0;
      }
    }
    if (out->x_weight < 0) return fail(std::string(gate_name) + ": no product with the input x");
    if (out->h_weight < 0) return fail(std::string(gate_name) + ": no product with the state h");
    out->biases = a.biases;
    return true;
  }

  const Graph& g_;
  std::function<bool(int)> is_x_;
};

// ---- Cell matchers (backwards from h') -----------------------------------------------

struct CellMatch {
  CellKind kind = CellKind::kGru;
  int h_in = -1, c_in = -1, c_out = -1, x = -1;
  bool reset_after = true;
  std::string gate_activation = "sigmoid";
  std::string activation = "tanh";
  int units = 0, features = 0;
  CellWeights weights;
  std::set<int> ops;
};

// Rows [row0, row0 + rows) of `weight` (dequantized when int8) and, per row, its int8
// scale (0 for float rows) so a fused op can keep a hybrid cell's int8 weights.
void append_rows(const Graph& g, int weight, int row0, int rows, std::vector<float>* out,
                 std::vector<float>* scales) {
  std::vector<float> w = g.floats(weight);
  const int cols = g.shape(weight)[1];
  out->insert(out->end(), w.begin() + static_cast<ptrdiff_t>(row0) * cols,
              w.begin() + static_cast<ptrdiff_t>(row0 + rows) * cols);
  for (int r = row0; r < row0 + rows; ++r) scales->push_back(g.row_scale(weight, r));
}

// Adds the bias pieces of one gate block into `input`/`recurrent` (size n
// each, from position `at`). A bias belongs to the recurrent side when it is
// the bias of the FC on h (or given as such by `recurrent_side`).
void add_biases(const Graph& g, const std::vector<BiasPiece>& pieces, int n, int h_source,
                bool force_recurrent, std::vector<float>* input, std::vector<float>* recurrent,
                size_t at) {
  for (const BiasPiece& b : pieces) {
    std::vector<float> v = g.floats(b.tensor);
    std::vector<float>* dst =
        force_recurrent || (b.side >= 0 && b.side == h_source) ? recurrent : input;
    for (int i = 0; i < n; ++i)
      (*dst)[at + static_cast<size_t>(i)] += v[static_cast<size_t>(b.offset + i)];
  }
}

bool block_ok(const Graph& g, int weight, int row0, int rows, int cols) {
  const auto& s = g.shape(weight);
  if (s.size() != 2 || s[1] != cols || row0 < 0 || row0 + rows > s[0]) return false;
  // The buffer holds the whole matrix (append_rows reads it).
  return g.floats(weight).size() == static_cast<size_t>(s[0]) * static_cast<size_t>(s[1]);
}

// The non-constant operand of a two-input op that is not `known`.
int other_input(const fb::OperatorT& o, int known) {
  return o.inputs[0] == known ? o.inputs[1] : o.inputs[0];
}

// The GRU state update h' = z*h + (1-z)*n, or its other algebraic form
// n + z*(h - n): the update gate z, the state h and the candidate n, with the
// ops that combine them.
struct GruUpdate {
  int z = -1, h = -1, n = -1;
  std::set<int> ops;
};

std::vector<GruUpdate> gru_updates(const Graph& g, int h_out) {
  std::vector<GruUpdate> found;
  const int top = g.produced_by(h_out, Op::ADD);
  if (top < 0 || g.activation(top) != 0) return found;
  const auto& in = g.op(top).inputs;
  for (int order = 0; order < 2; ++order) {
    const int a = in[static_cast<size_t>(order)], b = in[static_cast<size_t>(1 - order)];
    const int a_op = g.produced_by(a, Op::MUL), b_op = g.produced_by(b, Op::MUL);
    // z*h + MUL(SUB(1, z), n)
    for (int s = 0; a_op >= 0 && b_op >= 0 && s < 2; ++s) {
      const int sub = g.produced_by(g.op(b_op).inputs[static_cast<size_t>(s)], Op::SUB);
      if (sub < 0 || !g.scalar_is(g.op(sub).inputs[0], 1.0)) continue;
      const int z = g.op(sub).inputs[1];
      const auto& kin = g.op(a_op).inputs;
      if (kin[0] != z && kin[1] != z) continue;
      found.push_back({z,
                       other_input(g.op(a_op), z),
                       g.op(b_op).inputs[static_cast<size_t>(1 - s)],
                       {top, a_op, b_op, sub}});
    }
    // n + MUL(z, SUB(h, n))
    for (int s = 0; b_op >= 0 && s < 2; ++s) {
      const int sub = g.produced_by(g.op(b_op).inputs[static_cast<size_t>(s)], Op::SUB);
      if (sub < 0 || g.activation(sub) != 0 || g.op(sub).inputs[1] != a) continue;
      found.push_back({g.op(b_op).inputs[static_cast<size_t>(1 - s)],
                       g.op(sub).inputs[0],
                       a,
                       {top, b_op, sub}});
    }
  }
  return found;
}

bool match_gru(const Graph& g, Matcher& m, int h_out, CellMatch* out) {
  const std::vector<GruUpdate> updates = gru_updates(g, h_out);
  for (const GruUpdate& update : updates) {
    const int z_t = update.z, h_in = update.h, n = update.n;
    // The candidate's activation: TANH, RELU, or none (Keras activation=None).
    std::string activation = "linear";
    int act_op = g.produced_by(n, Op::TANH);
    if (act_op >= 0) {
      activation = "tanh";
    } else if ((act_op = g.produced_by(n, Op::RELU)) >= 0) {
      activation = "relu";
    }
    const int cand_pre = act_op >= 0 ? g.op(act_op).inputs[0] : n;
    const int add_op = g.produced_by(cand_pre, Op::ADD);
    if (add_op < 0 || g.activation(add_op) != 0) return m.fail("GRU candidate input is not an ADD");
    // z gate
    std::string z_kind, r_kind;
    Affine z_pre, r_pre;
    if (!m.gate(z_t, &z_kind, &z_pre)) return false;
    Matcher::Parts zp, rp;
    if (!m.parts(z_pre, h_in, &zp, "update gate z")) return false;
    // candidate: ADD(x side, MUL(r, Uh h + b) | FC(MUL(r, h)))
    const int H = g.last_dim(h_out);
    for (int side = 0; side < 2; ++side) {
      const int xs = g.op(add_op).inputs[static_cast<size_t>(side)];
      const int hs = g.op(add_op).inputs[static_cast<size_t>(1 - side)];
      Affine x_aff;
      Matcher probe(g, m.is_x_);
      if (!probe.affine(xs, &x_aff) || x_aff.terms.size() != 1 || !m.is_x_(x_aff.terms[0].source)) {
        continue;
      }
      CellMatch c;
      c.kind = CellKind::kGru;
      c.h_in = h_in;
      c.x = x_aff.terms[0].source;
      c.units = H;
      c.features = g.last_dim(c.x);
      int r_t = -1;
      Affine h_aff;
      bool reset_after = false;
      if (int mul = g.produced_by(hs, Op::MUL); mul >= 0) {
        // reset_after: MUL(r, affine over h)
        for (int s = 0; s < 2 && r_t < 0; ++s) {
          Affine a;
          Matcher probe2(g, m.is_x_);
          int cand_r = g.op(mul).inputs[static_cast<size_t>(s)];
          int cand_h = g.op(mul).inputs[static_cast<size_t>(1 - s)];
          if (probe2.affine(cand_h, &a) && a.terms.size() == 1 && a.terms[0].source == h_in) {
            std::string k;
            Affine pre;
            Matcher probe3(g, m.is_x_);
            if (probe3.gate(cand_r, &k, &pre)) {
              r_t = cand_r;
              h_aff = a;
              reset_after = true;
              m.ops.insert(mul);
            }
          }
        }
      }
      if (r_t < 0) {
        // reset_before: FC(MUL(r, h))
        Affine a;
        Matcher probe2(g, m.is_x_);
        if (!probe2.affine(hs, &a) || a.terms.size() != 1) continue;
        int mul = g.produced_by(a.terms[0].source, Op::MUL);
        if (mul < 0) continue;
        const auto& mi = g.op(mul).inputs;
        if (mi[0] != h_in && mi[1] != h_in) continue;
        r_t = other_input(g.op(mul), h_in);
        h_aff = a;
        m.ops.insert(mul);
      }
      if (!m.affine(xs, &x_aff)) return false;
      if (reset_after) {
        if (!m.affine(other_input(g.op(g.produced_by(hs, Op::MUL)), r_t), &h_aff)) return false;
      } else if (!m.affine(hs, &h_aff)) {
        return false;
      }
      if (!m.gate(r_t, &r_kind, &r_pre)) return false;
      if (!m.parts(r_pre, h_in, &rp, "reset gate r")) return false;
      if (z_kind != r_kind) return m.fail("the GRU gates use different activations");
      c.reset_after = reset_after;
      c.gate_activation = z_kind;
      c.activation = activation;
      const int F = c.features;
      if (!block_ok(g, zp.x_weight, zp.x_row, H, F) || !block_ok(g, rp.x_weight, rp.x_row, H, F) ||
          !block_ok(g, x_aff.terms[0].weight, x_aff.terms[0].row0, H, F) ||
          !block_ok(g, zp.h_weight, zp.h_row, H, H) || !block_ok(g, rp.h_weight, rp.h_row, H, H) ||
          !block_ok(g, h_aff.terms[0].weight, h_aff.terms[0].row0, H, H)) {
        return m.fail("GRU weight blocks do not have the state's " + std::to_string(H) + " units");
      }
      CellWeights& w = c.weights;
      append_rows(g, zp.x_weight, zp.x_row, H, &w.kernel, &w.kernel_scales);
      append_rows(g, rp.x_weight, rp.x_row, H, &w.kernel, &w.kernel_scales);
      append_rows(g, x_aff.terms[0].weight, x_aff.terms[0].row0, H, &w.kernel, &w.kernel_scales);
      append_rows(g, zp.h_weight, zp.h_row, H, &w.recurrent_kernel, &w.recurrent_kernel_scales);
      append_rows(g, rp.h_weight, rp.h_row, H, &w.recurrent_kernel, &w.recurrent_kernel_scales);
      append_rows(g, h_aff.terms[0].weight, h_aff.terms[0].row0, H, &w.recurrent_kernel,
                  &w.recurrent_kernel_scales);
      w.bias.assign(static_cast<size_t>(3 * H), 0.f);
      w.recurrent_bias.assign(static_cast<size_t>(3 * H), 0.f);
      add_biases(g, zp.biases, H, h_in, false, &w.bias, &w.recurrent_bias, 0);
      add_biases(g, rp.biases, H, h_in, false, &w.bias, &w.recurrent_bias, static_cast<size_t>(H));
      add_biases(g, x_aff.biases, H, h_in, false, &w.bias, &w.recurrent_bias,
                 static_cast<size_t>(2 * H));
      add_biases(g, h_aff.biases, H, h_in, true, &w.bias, &w.recurrent_bias,
                 static_cast<size_t>(2 * H));
      if (!reset_after) {
        // Without reset_after every bias adds before the nonlinearity: one vector.
        for (size_t i = 0; i < w.bias.size(); ++i) w.bias[i] += w.recurrent_bias[i];
        w.recurrent_bias.clear();
      }
      m.ops.insert(update.ops.begin(), update.ops.end());
      m.ops.insert(add_op);
      if (act_op >= 0) m.ops.insert(act_op);
      c.ops = m.ops;
      *out = c;
      return true;
    }
    return m.fail("GRU candidate is not " + activation + "(x part + reset-gated h part)");
  }
  return m.fail("h' is not z*h + (1-z)*candidate or candidate + z*(h - candidate)");
}

bool match_lstm(const Graph& g, Matcher& m, int h_out, CellMatch* out) {
  int top = g.produced_by(h_out, Op::MUL);
  if (top < 0 || g.activation(top) != 0) return m.fail("h' is not a MUL");
  for (int order = 0; order < 2; ++order) {
    const int o_t = g.op(top).inputs[static_cast<size_t>(order)];
    const int tc = g.op(top).inputs[static_cast<size_t>(1 - order)];
    // The cell activation: TANH, or RELU (Keras activation='relu'), the same for g and c'.
    Op act = Op::TANH;
    int tanh_c = g.produced_by(tc, Op::TANH);
    if (tanh_c < 0 && (tanh_c = g.produced_by(tc, Op::RELU)) >= 0) act = Op::RELU;
    if (tanh_c < 0) continue;
    const int c_out = g.op(tanh_c).inputs[0];
    const int add = g.produced_by(c_out, Op::ADD);
    if (add < 0 || g.activation(add) != 0) return m.fail("LSTM c' is not an ADD");
    int f_t = -1, c_in = -1, i_t = -1, g_t = -1, f_mul = -1, i_mul = -1;
    int muls[2];
    for (int s = 0; s < 2; ++s) {
      muls[s] = g.produced_by(g.op(add).inputs[static_cast<size_t>(s)], Op::MUL);
      if (muls[s] < 0) return m.fail("LSTM c' terms are not products");
    }
    // i * tanh(g) is the product of a LOGISTIC and a TANH; the other is f * c.
    for (int s = 0; s < 2 && i_mul < 0; ++s) {
      for (int k = 0; k < 2; ++k) {
        const int a = g.op(muls[s]).inputs[static_cast<size_t>(k)];
        const int b = g.op(muls[s]).inputs[static_cast<size_t>(1 - k)];
        if (g.produced_by(a, Op::LOGISTIC) >= 0 && g.produced_by(b, act) >= 0) {
          i_t = a, g_t = b, i_mul = muls[s], f_mul = muls[1 - s];
          break;
        }
      }
    }
    if (i_mul < 0) return m.fail("LSTM c' is not f*c + i*act(g)");
    for (int k = 0; k < 2; ++k) {
      const int a = g.op(f_mul).inputs[static_cast<size_t>(k)];
      if (g.produced_by(a, Op::LOGISTIC) >= 0) {
        f_t = a;
        c_in = g.op(f_mul).inputs[static_cast<size_t>(1 - k)];
      }
    }
    if (f_t < 0) return m.fail("LSTM forget gate is not LOGISTIC");
    std::string kind;
    Affine pre[4];
    const int gates[4] = {i_t, f_t, -1, o_t};
    for (int k : {0, 1, 3}) {
      if (!m.gate(gates[k], &kind, &pre[k])) return false;
      if (kind != "sigmoid") return m.fail("LSTM gates are not sigmoid (unsupported activation)");
    }
    const int g_op = g.produced_by(g_t, act);
    if (!m.affine(g.op(g_op).inputs[0], &pre[2])) return false;
    const char* names[4] = {"input gate", "forget gate", "cell candidate", "output gate"};
    Matcher::Parts p[4];
    int h_in = -1;
    for (int k = 0; k < 4; ++k) {
      if (!m.parts(pre[k], h_in, &p[k], names[k])) return false;
      h_in = p[k].h_source;
    }
    CellMatch c;
    c.kind = CellKind::kLstm;
    c.activation = act == Op::RELU ? "relu" : "tanh";
    c.h_in = h_in;
    c.c_in = c_in;
    c.c_out = c_out;
    c.units = g.last_dim(h_out);
    const int H = c.units;
    // x: the source of the input-side term
    for (const Term& t : pre[0].terms) {
      if (m.is_x_(t.source)) c.x = t.source;
    }
    c.features = g.last_dim(c.x);
    c.weights.bias.assign(static_cast<size_t>(4 * H), 0.f);
    std::vector<float> unused(static_cast<size_t>(4 * H), 0.f);
    for (int k = 0; k < 4; ++k) {
      if (!block_ok(g, p[k].x_weight, p[k].x_row, H, c.features) ||
          !block_ok(g, p[k].h_weight, p[k].h_row, H, H)) {
        return m.fail("LSTM weight blocks do not have the state's " + std::to_string(H) + " units");
      }
      append_rows(g, p[k].x_weight, p[k].x_row, H, &c.weights.kernel, &c.weights.kernel_scales);
      append_rows(g, p[k].h_weight, p[k].h_row, H, &c.weights.recurrent_kernel,
                  &c.weights.recurrent_kernel_scales);
      add_biases(g, p[k].biases, H, h_in, false, &c.weights.bias, &unused,
                 static_cast<size_t>(k * H));
    }
    for (size_t i = 0; i < unused.size(); ++i) c.weights.bias[i] += unused[i];
    m.ops.insert({top, tanh_c, add, f_mul, i_mul, g_op});
    c.ops = m.ops;
    *out = c;
    return true;
  }
  return m.fail("h' is not o * act(c')");
}

// h' = act(W x + U h + b) with act TANH, RELU or none (Keras activation=None).
bool match_rnn(const Graph& g, Matcher& m, int h_out, CellMatch* out) {
  int top = g.producer(h_out);
  std::string activation = "linear";
  if (top >= 0 && g.code(top) == Op::TANH) {
    activation = "tanh";
  } else if (top >= 0 && g.code(top) == Op::RELU) {
    activation = "relu";
  } else {
    top = -1;
  }
  Affine pre;
  if (!m.affine(top >= 0 ? g.op(top).inputs[0] : h_out, &pre)) return false;
  Matcher::Parts p;
  if (!m.parts(pre, -1, &p, "SimpleRNN")) return false;
  CellMatch c;
  c.kind = CellKind::kSimpleRnn;
  c.activation = activation;
  c.h_in = p.h_source;
  c.units = g.last_dim(h_out);
  for (const Term& t : pre.terms) {
    if (m.is_x_(t.source)) c.x = t.source;
  }
  c.features = g.last_dim(c.x);
  if (!block_ok(g, p.x_weight, p.x_row, c.units, c.features) ||
      !block_ok(g, p.h_weight, p.h_row, c.units, c.units)) {
    return m.fail("SimpleRNN weights do not have the state's units");
  }
  append_rows(g, p.x_weight, p.x_row, c.units, &c.weights.kernel, &c.weights.kernel_scales);
  append_rows(g, p.h_weight, p.h_row, c.units, &c.weights.recurrent_kernel,
              &c.weights.recurrent_kernel_scales);
  c.weights.bias.assign(static_cast<size_t>(c.units), 0.f);
  std::vector<float> rec(static_cast<size_t>(c.units), 0.f);
  add_biases(g, p.biases, c.units, c.h_in, false, &c.weights.bias, &rec, 0);
  for (size_t i = 0; i < rec.size(); ++i) c.weights.bias[i] += rec[i];
  if (top >= 0) m.ops.insert(top);
  c.ops = m.ops;
  *out = c;
  return true;
}

// Tries the cell whose state update ends in h_out's producer.
bool match_cell(const Graph& g, int h_out, const std::function<bool(int)>& is_x, CellMatch* out,
                std::string* why) {
  Matcher m(g, is_x);
  const int p = g.producer(h_out);
  bool ok = false;
  if (p < 0) {
    m.why = "the state is not computed in the loop";
  } else if (g.code(p) == Op::ADD) {
    ok = match_gru(g, m, h_out, out);
    if (!ok && gru_updates(g, h_out).empty()) {
      Matcher linear(g, is_x);  // a SimpleRNN without activation: h' is the sum itself
      if (match_rnn(g, linear, h_out, out)) {
        ok = true;
      } else {
        m.why += "; as a linear SimpleRNN: " + linear.why;
      }
    }
  } else if (g.code(p) == Op::MUL) {
    ok = match_lstm(g, m, h_out, out);
  } else if (g.code(p) == Op::TANH || g.code(p) == Op::RELU) {
    ok = match_rnn(g, m, h_out, out);
  } else if (g.code(p) == Op::SELECT_V2 || g.code(p) == Op::SELECT) {
    m.why =
        "the state is masked (SELECT_V2 keeps the old state on masked steps: mask_zero or a "
        "Masking layer), which no fused RNN op can express";
  } else {
    m.why = std::string("the state comes from ") + op_code_name(static_cast<int32_t>(g.code(p))) +
            ", not a GRU/LSTM/SimpleRNN update";
  }
  if (ok && (out->x < 0 || out->h_in < 0)) ok = (m.why = "no input x in the cell", false);
  if (!ok && why) *why = m.why;
  return ok;
}

std::string summary(const DetectedCell& c) {
  std::string s = std::string(cell_kind_name(c.kind)) + "(" + std::to_string(c.units) + ")";
  if (c.kind == CellKind::kGru) {
    s += std::string(c.reset_after ? " reset_after" : " reset_before") + ", " + c.gate_activation +
         "/" + c.activation;
  } else if (c.activation != "tanh") {
    s += ", " + c.activation;
  }
  return s + ", T=" + std::to_string(c.timesteps) + " F=" + std::to_string(c.features) + ", " +
         cell_form_name(c.form);
}

void fill_from_match(const CellMatch& cm, DetectedCell* c) {
  c->kind = cm.kind;
  c->reset_after = cm.reset_after;
  c->gate_activation = cm.gate_activation;
  c->activation = cm.activation;
  c->units = cm.units;
  c->features = cm.features;
  c->weights = cm.weights;
}

// ---- WHILE loops -------------------------------------------------------------------

// t = MUL(x, ones): Keras multiplies x_t by a dropout mask that is all ones
// at inference (FILL(SHAPE(x_t), 1.0), or a constant of ones).
bool ones_mask_of(const Graph& g, int t, int x) {
  const int mul = g.produced_by(t, Op::MUL);
  if (mul < 0 || g.activation(mul) != 0) return false;
  const auto& in = g.op(mul).inputs;
  if (in.size() != 2 || (in[0] != x && in[1] != x)) return false;
  const int mask = in[0] == x ? in[1] : in[0];
  if (const int fill = g.produced_by(mask, Op::FILL); fill >= 0) {
    return g.op(fill).inputs.size() == 2 && g.scalar_is(g.op(fill).inputs[1], 1.0);
  }
  const std::vector<float> v = g.floats(mask);
  return !v.empty() && std::all_of(v.begin(), v.end(), [](float f) { return f == 1.f; });
}

// acc' = [CAST](CONCATENATION(SLICE(acc, 0, [t,-1,-1]), EXPAND_DIMS|RESHAPE(h'),
//                             SLICE(acc, [t+1,0,0], -1))) along axis 0: the converter's
// TensorListSetItem(acc, t, h') with builtin ops. The slice bounds come from the counter;
// the fuser's numeric check confirms that row t is the step-t output.
bool set_item_accumulator(const Graph& body, int next, int acc, int h_out, std::set<int>* ops) {
  int cat = body.producer(next);
  if (cat >= 0 && body.code(cat) == Op::CAST) {
    ops->insert(cat);
    cat = body.producer(body.op(cat).inputs[0]);
  }
  if (cat < 0 || body.code(cat) != Op::CONCATENATION) return false;
  const auto* options = body.op(cat).builtin_options.AsConcatenationOptions();
  const auto& in = body.op(cat).inputs;
  if (!options || options->axis != 0 || in.size() != 3) return false;
  const int head = body.produced_by(in[0], Op::SLICE);
  const int tail = body.produced_by(in[2], Op::SLICE);
  int item = body.produced_by(in[1], Op::EXPAND_DIMS);
  if (item < 0) item = body.produced_by(in[1], Op::RESHAPE);
  if (head < 0 || tail < 0 || item < 0 || body.op(item).inputs[0] != h_out ||
      body.op(head).inputs[0] != acc || body.op(tail).inputs[0] != acc) {
    return false;
  }
  ops->insert({cat, head, tail, item});
  return true;
}

// acc' = FlexTensorListSetItem(acc, index, h'): a list of T rows indexed by the counter
// (return_sequences) or of one row at index 0 (the last output).
bool flex_set_item_accumulator(const Graph& body, int next, int acc, int h_out,
                               std::set<int>* ops) {
  const int set = body.producer(next);
  if (set < 0 || !body.is_custom(set, "FlexTensorListSetItem")) return false;
  const auto& in = body.op(set).inputs;
  if (in.size() != 3 || in[0] != acc || in[2] != h_out) return false;
  ops->insert(set);
  return true;
}

bool counter_step(const Graph& body, int index) {
  const auto& sg = body.sg();
  int out = sg.outputs[static_cast<size_t>(index)];
  int add = body.produced_by(out, Op::ADD);
  if (add < 0) return false;
  const auto& in = body.op(add).inputs;
  const int var = sg.inputs[static_cast<size_t>(index)];
  return (in[0] == var && body.scalar_is(in[1], 1)) || (in[1] == var && body.scalar_is(in[0], 1));
}

// The number of iterations the cond allows when every counter starts at 0,
// or -1 when it is not LESS(counter, limit) [AND LESS(...)].
int trip_count(const ModelDef& def, const EngineFacts& facts, const Graph& main,
               const fb::OperatorT& loop, int cond_index, const std::vector<LoopRole>& roles) {
  Graph cond(def, cond_index, &facts);
  if (cond.sg().outputs.size() != 1) return -1;
  std::vector<int> lesses;
  int top = cond.producer(cond.sg().outputs[0]);
  if (top < 0) return -1;
  if (cond.code(top) == Op::LOGICAL_AND) {
    for (int t : cond.op(top).inputs) lesses.push_back(cond.producer(t));
  } else {
    lesses.push_back(top);
  }
  int trips = -1;
  for (int p : lesses) {
    if (p < 0 || cond.code(p) != Op::LESS) return -1;
    const auto& in = cond.op(p).inputs;
    auto pos = std::find(cond.sg().inputs.begin(), cond.sg().inputs.end(), in[0]);
    if (pos == cond.sg().inputs.end()) return -1;
    const size_t k = static_cast<size_t>(pos - cond.sg().inputs.begin());
    if (roles[k] != LoopRole::kCounter || !main.scalar_is(loop.inputs[k], 0)) return -1;
    double limit = 0;
    if (!cond.scalar(in[1], &limit)) {
      auto lp = std::find(cond.sg().inputs.begin(), cond.sg().inputs.end(), in[1]);
      if (lp == cond.sg().inputs.end()) return -1;
      const size_t j = static_cast<size_t>(lp - cond.sg().inputs.begin());
      if (roles[j] != LoopRole::kInvariant || !main.scalar(loop.inputs[j], &limit)) return -1;
    }
    trips = trips < 0 ? static_cast<int>(limit) : std::min(trips, static_cast<int>(limit));
  }
  return trips;
}

bool analyze_while(const ModelDef& def, const EngineFacts& facts, int subgraph, int op_index,
                   DetectedCell* cell, std::string* reason) {
  Graph main(def, subgraph, &facts);
  const fb::OperatorT& loop = main.op(op_index);
  const auto* opt = loop.builtin_options.AsWhileOptions();
  if (!opt) return *reason = "WHILE without options", false;
  cell->form = CellForm::kWhile;
  cell->subgraph = subgraph;
  cell->op = op_index;
  cell->cond_subgraph = opt->cond_subgraph_index;
  cell->body_subgraph = opt->body_subgraph_index;
  const int nsg = static_cast<int>(def.subgraphs.size());
  if (opt->body_subgraph_index < 0 || opt->body_subgraph_index >= nsg ||
      opt->cond_subgraph_index < 0 || opt->cond_subgraph_index >= nsg) {
    return *reason = "WHILE subgraph index out of range", false;
  }
  Graph body(def, opt->body_subgraph_index, &facts);
  const auto& bin = body.sg().inputs;
  const auto& bout = body.sg().outputs;
  const size_t n = loop.inputs.size();
  if (bin.size() != n || bout.size() != n || loop.outputs.size() != n) {
    return *reason = "loop values do not line up (WHILE/body inputs/outputs differ in count)",
           false;
  }
  std::vector<LoopRole> roles(n, LoopRole::kOther);
  for (size_t i = 0; i < n; ++i) {
    if (bout[i] == bin[i])
      roles[i] = LoopRole::kInvariant;
    else if (counter_step(body, static_cast<int>(i)))
      roles[i] = LoopRole::kCounter;
  }
  for (size_t i = 0; i < n; ++i) {
    if (roles[i] == LoopRole::kInvariant && main.is_const(loop.inputs[i])) {
      body.borrow(bin[i], main.data(loop.inputs[i]), main.shape(loop.inputs[i]));
    }
  }
  // The time step: GATHER(sequence, counter) along axis 0, or FlexTensorListGetItem(list,
  // counter) of a list made by FlexTensorListFromTensor(sequence) before the loop.
  int gather = -1, seq_pos = -1, x = -1, sequence = -1;
  for (size_t i = 0; i < body.sg().operators.size() && gather < 0; ++i) {
    const auto& o = body.op(static_cast<int>(i));
    int list_source = -1;
    if (body.is_custom(static_cast<int>(i), "FlexTensorListGetItem") && o.inputs.size() >= 2) {
      auto lp = std::find(bin.begin(), bin.end(), o.inputs[0]);
      if (lp == bin.end()) continue;
      const int from = main.producer(loop.inputs[static_cast<size_t>(lp - bin.begin())]);
      if (from < 0 || !main.is_custom(from, "FlexTensorListFromTensor")) continue;
      list_source = main.op(from).inputs[0];
    } else if (body.code(static_cast<int>(i)) != Op::GATHER) {
      continue;
    }
    const auto* gopt = o.builtin_options.AsGatherOptions();
    if (gopt && gopt->axis != 0) continue;
    auto sp = std::find(bin.begin(), bin.end(), o.inputs[0]);
    auto tp = std::find(bin.begin(), bin.end(), o.inputs[1]);
    if (sp == bin.end() || tp == bin.end()) continue;
    if (roles[static_cast<size_t>(sp - bin.begin())] != LoopRole::kInvariant ||
        roles[static_cast<size_t>(tp - bin.begin())] != LoopRole::kCounter) {
      continue;
    }
    gather = static_cast<int>(i);
    seq_pos = static_cast<int>(sp - bin.begin());
    x = o.outputs[0];
    sequence = list_source >= 0 ? list_source : loop.inputs[static_cast<size_t>(seq_pos)];
  }
  if (gather < 0) {
    return *reason =
               "no GATHER of a loop-invariant sequence by a loop counter: not an RNN over time",
           false;
  }
  const std::vector<int32_t> seq_shape = main.shape(sequence);
  if (seq_shape.size() != 3) return *reason = "the GATHERed sequence is not [T,B,F]", false;
  // The state: a loop value whose update is a recognised cell of x and itself.
  CellMatch match;
  int h_pos = -1, c_pos = -1;
  std::string why = "no loop state is updated from the GATHERed step";
  bool why_from_mul = false;
  for (size_t i = 0; i < n && h_pos < 0; ++i) {
    if (roles[i] != LoopRole::kOther || !body.is_float(bout[i])) continue;
    CellMatch cm;
    std::string w;
    const auto is_x = [x, &body](int t) { return t == x || ones_mask_of(body, t, x); };
    if (!match_cell(body, bout[i], is_x, &cm, &w)) {
      // An LSTM's h' (a MUL) says more than its c' (an ADD, tried as a GRU): keep its reason.
      const int top = body.producer(bout[i]);
      if (top >= 0 && body.code(top) != Op::RESHAPE && body.code(top) != Op::CONCATENATION &&
          !why_from_mul) {
        why = w;
        why_from_mul = body.code(top) == Op::MUL;
      }
      continue;
    }
    if (cm.h_in != bin[i]) {
      why = "the cell's state input is not the loop value it updates";
      continue;
    }
    if (cm.kind == CellKind::kLstm) {
      auto cp = std::find(bin.begin(), bin.end(), cm.c_in);
      if (cp == bin.end() || bout[static_cast<size_t>(cp - bin.begin())] != cm.c_out) {
        why = "the LSTM cell state is not a loop value";
        continue;
      }
      c_pos = static_cast<int>(cp - bin.begin());
    }
    h_pos = static_cast<int>(i);
    match = cm;
  }
  if (h_pos < 0) return *reason = why, false;
  roles[static_cast<size_t>(h_pos)] = LoopRole::kHidden;
  if (c_pos >= 0) roles[static_cast<size_t>(c_pos)] = LoopRole::kCell;
  const int h_out = bout[static_cast<size_t>(h_pos)];
  std::set<int> ops = match.ops;
  ops.insert(gather);
  // Accumulators: RESHAPE(h'), CONCATENATION(SLICE(acc, 1..), RESHAPE(h')) (a shift), or
  // the converter's TensorListSetItem lowering (below).
  for (size_t i = 0; i < n; ++i) {
    if (roles[i] != LoopRole::kOther) continue;
    int r = body.produced_by(bout[i], Op::RESHAPE);
    if (r >= 0 && body.op(r).inputs[0] == h_out) {
      roles[i] = LoopRole::kLastOutput;
      ops.insert(r);
      continue;
    }
    std::set<int> set_ops;
    if (set_item_accumulator(body, bout[i], bin[i], h_out, &set_ops) ||
        flex_set_item_accumulator(body, bout[i], bin[i], h_out, &set_ops)) {
      const auto& acc_shape = body.shape(bin[i]);
      if (acc_shape.size() != 3) continue;
      // A one-row list keeps only the last output (TF 2.20); T rows keep them all.
      if (acc_shape[0] == 1) {
        roles[i] = LoopRole::kLastOutput;
      } else if (acc_shape[0] == seq_shape[0]) {
        roles[i] = LoopRole::kSequenceAccumulator;
      } else {
        continue;
      }
      ops.insert(set_ops.begin(), set_ops.end());
      continue;
    }
    int cat = body.produced_by(bout[i], Op::CONCATENATION);
    if (cat < 0 || body.op(cat).inputs.size() != 2) continue;
    const auto* copt = body.op(cat).builtin_options.AsConcatenationOptions();
    int sl = body.produced_by(body.op(cat).inputs[0], Op::SLICE);
    int rs = body.produced_by(body.op(cat).inputs[1], Op::RESHAPE);
    if (!copt || copt->axis != 0 || sl < 0 || rs < 0 || body.op(rs).inputs[0] != h_out ||
        body.op(sl).inputs[0] != bin[i]) {
      continue;
    }
    const std::vector<uint8_t>* begin = body.data(body.op(sl).inputs[1]);
    int32_t b0 = 0;
    if (begin && begin->size() >= 4) std::memcpy(&b0, begin->data(), 4);
    const auto& acc_shape = body.shape(bin[i]);
    if (b0 != 1 || acc_shape.size() != 3 || acc_shape[0] != seq_shape[0]) continue;
    roles[i] = LoopRole::kSequenceAccumulator;
    ops.insert({cat, sl, rs});
  }
  for (size_t i = 0; i < n; ++i) {
    if (roles[i] == LoopRole::kCounter) {
      int add = body.producer(bout[i]);
      ops.insert(add);
    }
  }
  const int trips = trip_count(def, facts, main, loop, opt->cond_subgraph_index, roles);
  if (trips != seq_shape[0]) {
    return *reason = "the loop runs " +
                     (trips < 0 ? std::string("an unknown number of") : std::to_string(trips)) +
                     " times over a sequence of " + std::to_string(seq_shape[0]) + " steps",
           false;
  }
  fill_from_match(match, cell);
  cell->timesteps = seq_shape[0];
  cell->batch = seq_shape[1];
  cell->sequence_tensor = sequence;
  cell->initial_hidden = loop.inputs[static_cast<size_t>(h_pos)];
  if (c_pos >= 0) cell->initial_cell = loop.inputs[static_cast<size_t>(c_pos)];
  cell->loop_roles = roles;
  cell->cell_ops.assign(ops.begin(), ops.end());
  cell->summary = summary(*cell);
  return true;
}

// ---- Unrolled chains ------------------------------------------------------------------

bool same_weights(const CellWeights& a, const CellWeights& b) {
  return a.kernel == b.kernel && a.recurrent_kernel == b.recurrent_kernel && a.bias == b.bias &&
         a.recurrent_bias == b.recurrent_bias;
}

// The x_t of an unrolled chain: the outputs of an UNPACK along the time axis
// (0 for [T,B,F], 1 for [B,T,F]), or one STRIDED_SLICE per step taking index t
// of that axis (shrunk) with the other axes whole.
struct UnrolledSteps {
  int sequence = -1;
  int axis = 0;
  std::vector<int> x;       // per step
  std::vector<int> slices;  // the STRIDED_SLICE ops (empty for UNPACK)
};

bool int_constant(const Graph& g, int t, size_t n, std::vector<int32_t>* v) {
  const std::vector<uint8_t>* d = g.data(t);
  if (!d || g.tensor(t).type != fb::TensorType::INT32 || d->size() != 4 * n) return false;
  v->resize(n);
  std::memcpy(v->data(), d->data(), d->size());
  return true;
}

// The step STRIDED_SLICE `op` takes (axis in *axis), or -1 when it is not one.
int step_slice_index(const Graph& g, int op, int* axis) {
  const fb::OperatorT& o = g.op(op);
  const auto* opt = o.builtin_options.AsStridedSliceOptions();
  if (g.code(op) != Op::STRIDED_SLICE || !opt || o.inputs.size() != 4 || o.outputs.size() != 1 ||
      opt->ellipsis_mask != 0 || opt->new_axis_mask != 0 ||
      (opt->shrink_axis_mask != 1 && opt->shrink_axis_mask != 2) || !g.valid(o.inputs[0])) {
    return -1;
  }
  const auto& shape = g.shape(o.inputs[0]);
  std::vector<int32_t> begin, end, strides;
  if (shape.size() != 3 || !int_constant(g, o.inputs[1], 3, &begin) ||
      !int_constant(g, o.inputs[2], 3, &end) || !int_constant(g, o.inputs[3], 3, &strides)) {
    return -1;
  }
  const int a = opt->shrink_axis_mask == 1 ? 0 : 1;
  for (int b = 0; b < 3; ++b) {
    if (strides[static_cast<size_t>(b)] != 1) return -1;
    if (b == a) continue;
    const bool whole_begin = (opt->begin_mask >> b & 1) || begin[static_cast<size_t>(b)] == 0;
    const bool whole_end =
        (opt->end_mask >> b & 1) || end[static_cast<size_t>(b)] == shape[static_cast<size_t>(b)];
    if (!whole_begin || !whole_end) return -1;
  }
  int index = begin[static_cast<size_t>(a)];
  if (opt->begin_mask >> a & 1) index = 0;
  if (index < 0) index += shape[static_cast<size_t>(a)];
  if (index < 0 || index >= shape[static_cast<size_t>(a)]) return -1;
  *axis = a;
  return index;
}

// The steps that start at `op` (an UNPACK, or the first STRIDED_SLICE of step 0).
bool unrolled_steps(const Graph& g, int op, const std::vector<std::vector<int>>& consumers,
                    UnrolledSteps* out) {
  const fb::OperatorT& o = g.op(op);
  if (o.inputs.empty() || !g.valid(o.inputs[0])) return false;
  out->sequence = o.inputs[0];
  const auto& shape = g.shape(out->sequence);
  if (shape.size() != 3) return false;
  if (g.code(op) == Op::UNPACK) {
    const auto* opt = o.builtin_options.AsUnpackOptions();
    if (!opt) return false;
    out->axis = opt->axis < 0 ? opt->axis + 3 : opt->axis;
    if (out->axis > 1 || o.outputs.size() != static_cast<size_t>(shape[out->axis])) return false;
    out->x.assign(o.outputs.begin(), o.outputs.end());
    return true;
  }
  if (step_slice_index(g, op, &out->axis) != 0) return false;
  const int T = shape[static_cast<size_t>(out->axis)];
  out->x.assign(static_cast<size_t>(T), -1);
  out->slices.assign(static_cast<size_t>(T), -1);
  for (int reader : consumers[static_cast<size_t>(out->sequence)]) {
    int axis = -1;
    const int t = step_slice_index(g, reader, &axis);
    if (t < 0 || axis != out->axis || g.op(reader).inputs[0] != out->sequence ||
        out->slices[static_cast<size_t>(t)] >= 0) {
      continue;
    }
    out->slices[static_cast<size_t>(t)] = reader;
    out->x[static_cast<size_t>(t)] = g.op(reader).outputs[0];
  }
  // One chain per sequence: it starts at the first slice of step 0.
  return out->slices[0] == op && std::find(out->x.begin(), out->x.end(), -1) == out->x.end();
}

// The ops computing `states` from x_0 and constants alone (at most 64 of them): a first
// step whose zero-state products the converter folded. False when a state reads anything
// else (a model input, another layer's value) or does not depend on x_0.
bool folded_first_step(const Graph& g, int x0, std::vector<int> states, std::set<int>* ops) {
  bool reads_x = false;
  while (!states.empty()) {
    const int v = states.back();
    states.pop_back();
    if (v == x0) {
      reads_x = true;
      continue;
    }
    if (v < 0 || g.is_const(v)) continue;
    const int p = g.producer(v);
    if (p < 0) return false;
    if (!ops->insert(p).second) continue;
    if (ops->size() > 64) return false;
    for (int32_t in : g.op(p).inputs) states.push_back(in);
  }
  return reads_x;
}

// Steps of a [T,B,F] (or [B,T,F]) sequence that each feed one cell, chained
// through h (and c): step t's state input is step t-1's h' (c'). Step 0 starts
// from whatever state the model gives (zeros, FILL, a model input or a slice
// of one: streaming models); the fuser decides what it can express.
bool analyze_unrolled(const ModelDef& def, const EngineFacts& facts, int subgraph, int first_op,
                      DetectedCell* cell) {
  Graph g(def, subgraph, &facts);
  // Consumers per tensor, to walk forward from h_t to step t+1.
  std::vector<std::vector<int>> consumers(g.sg().tensors.size());
  for (size_t i = 0; i < g.sg().operators.size(); ++i) {
    for (int32_t t : g.sg().operators[i]->inputs) {
      if (g.valid(t)) consumers[static_cast<size_t>(t)].push_back(static_cast<int>(i));
    }
  }
  UnrolledSteps steps;
  if (!unrolled_steps(g, first_op, consumers, &steps)) return false;
  const auto& seq_shape = g.shape(steps.sequence);
  // Candidate h' of step t: outputs of ADD/MUL/TANH/RELU ops downstream of x_t
  // (a bounded forward walk), tried in op order.
  auto candidates = [&](int x) {
    std::set<int> seen_ops;
    std::vector<int> frontier = {x};
    std::vector<int> result;
    for (int depth = 0; depth < 12 && !frontier.empty(); ++depth) {
      std::vector<int> next;
      for (int t : frontier) {
        for (int o : consumers[static_cast<size_t>(t)]) {
          if (!seen_ops.insert(o).second) continue;
          for (int32_t out : g.op(o).outputs) {
            next.push_back(out);
            Op c = g.code(o);
            if (c == Op::ADD || c == Op::MUL || c == Op::TANH || c == Op::RELU)
              result.push_back(out);
          }
        }
      }
      frontier = next;
    }
    return result;
  };
  std::vector<CellMatch> chain;
  std::vector<int> hidden;
  int h_prev = -1, c_prev = -1;
  size_t start = 0;  // 1 when step 0 is a constant-folded zero-state step (below)
  for (size_t t = 0; t < steps.x.size(); ++t) {
    const int x = steps.x[t];
    // Several tensors of a step can look like a cell (an LSTM's TANH(g) reads
    // like a SimpleRNN's h'): the match that explains the most ops wins.
    bool found = false;
    CellMatch best;
    int best_h = -1;
    for (int cand : candidates(x)) {
      CellMatch cm;
      if (!match_cell(
              g, cand, [x](int v) { return v == x; }, &cm, nullptr))
        continue;
      // Step 0's state comes from before the chain (not from this step's ops).
      const auto outside = [&](int v) {
        const int p = g.producer(v);
        return v != x && (p < 0 || !cm.ops.count(p));
      };
      const bool h_ok = t == start ? outside(cm.h_in) : cm.h_in == h_prev;
      const bool c_ok =
          cm.kind != CellKind::kLstm || (t == start ? outside(cm.c_in) : cm.c_in == c_prev);
      if (!h_ok || !c_ok) continue;
      if (!chain.empty() &&
          (cm.kind != chain[0].kind || cm.reset_after != chain[0].reset_after ||
           cm.gate_activation != chain[0].gate_activation || cm.activation != chain[0].activation ||
           !same_weights(cm.weights, chain[0].weights))) {
        continue;
      }
      if (found && cm.ops.size() <= best.ops.size()) continue;
      best = cm;
      best_h = cand;
      found = true;
    }
    if (!found && t == 0 && steps.x.size() >= 2) {
      start = 1;  // perhaps folded: the chain may start at step 1
      continue;
    }
    if (!found) return false;
    chain.push_back(best);
    hidden.push_back(best_h);
    h_prev = best_h;
    c_prev = best.c_out;
  }
  if (chain.empty()) return false;
  // With a constant zero state a converter may fold step 0's recurrent products away
  // (FC(0, U) = b, f * 0 = 0), leaving a step that reads x_0 and constants only. Those ops
  // become part of the cell, which then starts from zeros; the fuser keeps the rewrite only
  // if the outputs agree, so a step 0 that was something else is caught there.
  std::set<int> first_step_ops;
  if (start == 1) {
    std::vector<int> states = {chain[0].h_in};
    if (chain[0].kind == CellKind::kLstm) states.push_back(chain[0].c_in);
    if (!folded_first_step(g, steps.x[0], states, &first_step_ops)) return false;
    hidden.insert(hidden.begin(), chain[0].h_in);
  }
  fill_from_match(chain[0], cell);
  cell->form = CellForm::kUnrolled;
  cell->subgraph = subgraph;
  cell->op = first_op;
  cell->timesteps = seq_shape[static_cast<size_t>(steps.axis)];
  cell->batch = seq_shape[static_cast<size_t>(1 - steps.axis)];
  cell->sequence_tensor = steps.sequence;
  cell->time_axis = steps.axis;
  cell->step_slices = !steps.slices.empty();
  cell->final_hidden = h_prev;
  cell->step_hidden = hidden;
  cell->final_cell = chain.back().kind == CellKind::kLstm ? chain.back().c_out : -1;
  cell->initial_hidden = start == 1 ? -1 : chain[0].h_in;
  cell->initial_cell = start == 1 ? -1 : chain[0].c_in;
  cell->folded_first_step = start == 1;
  std::set<int> ops = first_step_ops;
  if (steps.slices.empty()) ops.insert(first_op);
  ops.insert(steps.slices.begin(), steps.slices.end());
  for (const CellMatch& cm : chain) ops.insert(cm.ops.begin(), cm.ops.end());
  cell->cell_ops.assign(ops.begin(), ops.end());
  cell->summary = summary(*cell);
  if (cell->folded_first_step) cell->summary += " (step 0 folded from a zero state)";
  return true;
}

// Whether any FC among `ops` of `subgraph` has int8 weights (a hybrid cell), and how those
// FCs quantize their inputs at run time (asymmetric_quantize_inputs; "mixed" when they differ).
void hybrid_facts(const ModelDef& def, int subgraph, const std::vector<int>& ops,
                  DetectedCell* cell) {
  if (subgraph < 0 || static_cast<size_t>(subgraph) >= def.subgraphs.size()) return;
  Graph g(def, subgraph);
  int asymmetric = 0, symmetric = 0;
  for (int o : ops) {
    if (g.code(o) != Op::FULLY_CONNECTED || g.op(o).inputs.size() < 2 ||
        !g.is_int8_weight(g.op(o).inputs[1])) {
      continue;
    }
    cell->hybrid = true;
    const auto* opt = g.op(o).builtin_options.AsFullyConnectedOptions();
    (opt && opt->asymmetric_quantize_inputs ? asymmetric : symmetric) += 1;
  }
  cell->hybrid_inputs = asymmetric && symmetric ? "mixed" : asymmetric ? "asymmetric" : "symmetric";
}

}  // namespace

const char* cell_kind_name(CellKind kind) {
  switch (kind) {
    case CellKind::kGru: return "GRU";
    case CellKind::kLstm: return "LSTM";
    case CellKind::kSimpleRnn: return "SimpleRNN";
  }
  return "?";
}

const char* cell_form_name(CellForm form) {
  return form == CellForm::kWhile ? "while" : "unrolled";
}

DetectionReport detect_rnn_cells(const ModelDef& model) {
  DetectionReport report;
  const EngineFacts facts = engine_facts(model);
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    const fb::SubGraphT& sg = *model.subgraphs[s];
    for (size_t i = 0; i < sg.operators.size(); ++i) {
      const uint32_t code_index = sg.operators[i]->opcode_index;
      if (code_index >= model.operator_codes.size()) continue;
      const Op code = model.operator_codes[code_index]->builtin_code;
      DetectedCell cell;
      if (code == Op::WHILE) {
        std::string reason;
        if (analyze_while(model, facts, static_cast<int>(s), static_cast<int>(i), &cell, &reason)) {
          report.cells.push_back(std::move(cell));
        } else {
          OtherLoop other;
          other.subgraph = static_cast<int>(s);
          other.op = static_cast<int>(i);
          other.cond_subgraph = cell.cond_subgraph;
          other.body_subgraph = cell.body_subgraph;
          other.reason = reason;
          report.other_loops.push_back(other);
        }
      } else if (code == Op::UNPACK || code == Op::STRIDED_SLICE) {
        if (analyze_unrolled(model, facts, static_cast<int>(s), static_cast<int>(i), &cell)) {
          report.cells.push_back(std::move(cell));
        }
      }
    }
  }
  for (DetectedCell& cell : report.cells) {
    hybrid_facts(model, cell.form == CellForm::kWhile ? cell.body_subgraph : cell.subgraph,
                 cell.cell_ops, &cell);
  }
  return report;
}

}  // namespace gruwb::tools
