#pragma once
// The toolkit cell matchers share (cell_descriptor.h `match`): a read-only dataflow view of
// one subgraph and an affine matcher that reads a gate's pre-activation as sums of
// FULLY_CONNECTED products (possibly per gate, SPLIT, SPLIT_V or STRIDED_SLICE cut) and
// biases, split into the product with x and the product with h. Matchers work backwards
// from a step's new state h' (docs/fuser.md).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/tools/cells/cell_descriptor.h"
#include "engine/tools/dequantize.h"
#include "engine/tools/engine_facts.h"

namespace gruwb::tools::cells {

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
      if (sg_.operators[i]->inputs.size() < min_inputs(code(static_cast<int>(i)))) continue;
      for (int32_t t : sg_.operators[i]->outputs) {
        if (valid(t)) producer_[static_cast<size_t>(t)] = static_cast<int>(i);
      }
    }
  }

  const fb::SubGraphT& sg() const { return sg_; }
  bool valid(int t) const { return t >= 0 && static_cast<size_t>(t) < sg_.tensors.size(); }
  // An omitted (-1) or out-of-range index reads as a nameless tensor with no shape or buffer, so
  // a matcher following a mutated graph fails its pattern instead of reading past the list.
  const fb::TensorT& tensor(int t) const {
    static const fb::TensorT kAbsent = [] {
      fb::TensorT absent;
      absent.name = "(omitted)";
      return absent;
    }();
    return valid(t) ? *sg_.tensors[static_cast<size_t>(t)] : kAbsent;
  }
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
  // Its schema name, or "op N" for a code the schema does not name (any int32 may be in a file).
  std::string code_name(int i) const {
    const char* name = op_code_name(static_cast<int32_t>(code(i)));
    return name ? name : "op " + std::to_string(static_cast<int32_t>(code(i)));
  }
  bool is_custom(int i, const char* custom_code) const {
    return code(i) == Op::CUSTOM &&
           def_.operator_codes[op(i).opcode_index]->custom_code == custom_code;
  }
  // The op producing `t` if it has code `c`, else -1.
  int produced_by(int t, Op c) const {
    int p = producer(t);
    return p >= 0 && code(p) == c ? p : -1;
  }
  // The inputs an op of code `c` has at least. An op with fewer is nobody's producer, so the
  // matchers, which read those inputs unchecked, fail their pattern on a mutated ADD with one
  // input instead of reading past its list.
  // Codes no matcher reads inputs of by position keep any count (a VAR_HANDLE has none).
  static size_t min_inputs(Op c) {
    switch (c) {
      case Op::TANH:
      case Op::LOGISTIC:
      case Op::RELU:
      case Op::RESHAPE:
      case Op::CONCATENATION:
      case Op::UNPACK:
      case Op::CAST: return 1;
      case Op::ADD:
      case Op::SUB:
      case Op::MUL:
      case Op::DIV:
      case Op::MAXIMUM:
      case Op::MINIMUM:
      case Op::LESS:
      case Op::LOGICAL_AND:
      case Op::FULLY_CONNECTED:
      case Op::SPLIT:
      case Op::GATHER:
      case Op::FILL:
      case Op::EXPAND_DIMS: return 2;
      case Op::SLICE:
      case Op::SPLIT_V:
      case Op::SELECT:
      case Op::SELECT_V2: return 3;
      case Op::STRIDED_SLICE: return 4;
      default: return 0;
    }
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
    return dequantize_values(tensor(t), d, &v, &error) ? v : std::vector<float>();
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
    // A cycle (an op that reads its own result) would recurse without end.
    constexpr int kMaxDepth = 64;
    if (depth_ >= kMaxDepth) {
      return fail("tensor '" + g_.tensor(t).name + "' is computed through more than " +
                  std::to_string(kMaxDepth) + " nested ops (a cycle?)");
    }
    ++depth_;
    const bool matched = affine_of_producer(t, out);
    --depth_;
    return matched;
  }

 private:
  bool affine_of_producer(int t, Affine* out) {
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
        const int rank = static_cast<int>(g_.shape(o.inputs[1]).size());
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
        return fail("'" + g_.tensor(t).name + "' (" + g_.code_name(p) +
                    ") is not an FC product or a sum of them");
    }
  }

 public:
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
  int depth_ = 0;  // affine()'s recursion
};

// What a cell matcher found: the cell's type and variant, its weights in the fused layout,
// the step's x, state inputs and outputs, and every op of the step.
struct CellMatch {
  const CellDescriptor* type = nullptr;
  int h_in = -1, c_in = -1, c_out = -1, x = -1;  // c: cells with two states
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
                 std::vector<float>* scales);

// Adds the bias pieces of one gate block into `input`/`recurrent` (size n
// each, from position `at`). A bias belongs to the recurrent side when it is
// the bias of the FC on h (or given as such by `force_recurrent`).
void add_biases(const Graph& g, const std::vector<BiasPiece>& pieces, int n, int h_source,
                bool force_recurrent, std::vector<float>* input, std::vector<float>* recurrent,
                size_t at);

// `rows` rows from row0 of a [*, cols] constant whose buffer holds the whole matrix.
bool block_ok(const Graph& g, int weight, int row0, int rows, int cols);

// The non-constant operand of a two-input op that is not `known`.
int other_input(const fb::OperatorT& o, int known);

}  // namespace gruwb::tools::cells
