#include "tests/tools/converter_variants.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "engine/tools/graph_writer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/npy.h"
#include "tests/engine/flex_options.h"

namespace gruwb::test {
namespace {

using tools::CellDescriptor;
using tools::find_cell;
using tools::GraphWriter;
using BO = fb::BuiltinOperator;
using fb::TensorType;
using Dims = std::vector<int32_t>;

int gates_of(const CellDescriptor* cell) { return cell->gates; }

// ---- Weights ------------------------------------------------------------------------

struct CellParams {
  int in = 0, units = 0, gates = 1;
  std::vector<float> kernel;            // [G*H, in]
  std::vector<float> recurrent_kernel;  // [G*H, H]
  std::vector<float> bias;              // [G*H]
  std::vector<float> recurrent_bias;    // [G*H], GRU reset_after only
};

struct Params {
  std::vector<CellParams> cells;  // layer-major, then direction
  std::vector<float> head_kernel, head_bias;
};

class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  float uniform(float limit) {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state_ >> 11) / 9007199254740992.0;
    return static_cast<float>((2 * u - 1) * limit);
  }
  std::vector<float> values(size_t n, float limit) {
    std::vector<float> v(n);
    for (float& x : v) x = uniform(limit);
    return v;
  }

 private:
  uint64_t state_;
};

int directions(const ConverterVariant& v) {
  return v.direction == Direction::kBidirectional ? 2 : 1;
}

Params params_for(const ConverterVariant& v) {
  uint64_t seed = 1469598103934665603ull;
  for (char c : v.name) seed = (seed ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  Lcg rng(seed);
  Params p;
  const int G = gates_of(v.cell), H = v.units;
  for (int layer = 0; layer < v.layers; ++layer) {
    for (int d = 0; d < directions(v); ++d) {
      CellParams c;
      c.in = layer == 0 ? v.features : H * directions(v);
      c.units = H;
      c.gates = G;
      c.kernel = rng.values(static_cast<size_t>(G * H * c.in), 0.6f);
      c.recurrent_kernel = rng.values(static_cast<size_t>(G * H * H), 0.6f);
      c.bias = rng.values(static_cast<size_t>(G * H), 0.3f);
      if (v.cell == find_cell("gru") && v.reset_after) {
        c.recurrent_bias = rng.values(static_cast<size_t>(G * H), 0.3f);
      }
      p.cells.push_back(std::move(c));
    }
  }
  const int head_in = H * directions(v);
  p.head_kernel = rng.values(static_cast<size_t>(v.classes * head_in), 0.8f);
  p.head_bias = rng.values(static_cast<size_t>(v.classes), 0.2f);
  return p;
}

std::vector<float> rows(const std::vector<float>& m, int cols, int first, int count) {
  auto begin = m.begin() + static_cast<ptrdiff_t>(first) * cols;
  return std::vector<float>(begin, begin + static_cast<ptrdiff_t>(count) * cols);
}

// ---- Op emitters the builder does not need ----------------------------------------------

int int_vector(GraphWriter& g, const std::string& name, const std::vector<int32_t>& values) {
  return g.constant_i32(name, {static_cast<int32_t>(values.size())}, values);
}

int strided_cut(GraphWriter& g, int x, int first, int count, const std::string& name) {
  fb::StridedSliceOptionsT options;
  options.begin_mask = 1;
  options.end_mask = 1;
  int out = g.tensor(name, {g.shape(x)[0], count});
  g.op(BO::STRIDED_SLICE,
       {x, int_vector(g, name + "/begin", {0, first}),
        int_vector(g, name + "/end", {0, first + count}), int_vector(g, name + "/strides", {1, 1})},
       {out}, options);
  return out;
}

std::vector<int> split_v(GraphWriter& g, int x, int parts, int units, const std::string& name) {
  std::vector<int32_t> sizes(static_cast<size_t>(parts), units);
  sizes.back() = -1;
  std::vector<int> outs;
  for (int i = 0; i < parts; ++i) {
    outs.push_back(g.tensor(name + ":" + std::to_string(i), {g.shape(x)[0], units}));
  }
  fb::SplitVOptionsT options;
  options.num_splits = parts;
  g.op(BO::SPLIT_V, {x, int_vector(g, name + "/sizes", sizes), g.scalar_i32(1)}, outs, options);
  return outs;
}

int hard_sigmoid(GraphWriter& g, int x, const std::string& p) {
  int scaled = tools::binary(g, BO::MUL, x, g.scalar(0.2f), p + "/mul");
  int shifted = tools::binary(g, BO::ADD, scaled, g.scalar(0.5f), p + "/add");
  int capped = tools::binary(g, BO::MINIMUM, shifted, g.scalar(1.f), p + "/minimum");
  return tools::binary(g, BO::MAXIMUM, capped, g.scalar(0.f), p + "/maximum");
}

int gate_activation(GraphWriter& g, const ConverterVariant& v, int x, const std::string& p) {
  return v.hard_sigmoid ? hard_sigmoid(g, x, p) : tools::unary(g, BO::LOGISTIC, x, p);
}

int activation(GraphWriter& g, const ConverterVariant& v, int x, const std::string& p) {
  if (v.activation == "tanh") return tools::unary(g, BO::TANH, x, p);
  if (v.activation == "relu") return tools::unary(g, BO::RELU, x, p);
  return x;
}

// ---- One cell step in the body ----------------------------------------------------------

// The weight tensors a step reads, by name: constants of the body, or (weights passed as
// loop arguments) body inputs fed by main's constants.
struct WeightTensor {
  std::string name;
  Dims shape;
  std::vector<float> values;
};

std::vector<WeightTensor> weight_tensors(const ConverterVariant& v, const CellParams& c) {
  const int G = c.gates, H = c.units;
  const bool gru_before = v.cell == find_cell("gru") && !v.reset_after;
  std::vector<WeightTensor> w;
  auto add = [&](const std::string& name, Dims shape, std::vector<float> values) {
    w.push_back({name, std::move(shape), std::move(values)});
  };
  if (v.gates == GateCut::kPerGateFc) {
    for (int k = 0; k < G; ++k) {
      const std::string s = std::to_string(k);
      add("kernel_" + s, {H, c.in}, rows(c.kernel, c.in, k * H, H));
      add("recurrent_kernel_" + s, {H, H}, rows(c.recurrent_kernel, H, k * H, H));
      add("bias_" + s, {H}, rows(c.bias, 1, k * H, H));
      if (!c.recurrent_bias.empty())
        add("recurrent_bias_" + s, {H}, rows(c.recurrent_bias, 1, k * H, H));
    }
    return w;
  }
  add("kernel", {G * H, c.in}, c.kernel);
  if (gru_before) {
    add("recurrent_kernel", {2 * H, H}, rows(c.recurrent_kernel, H, 0, 2 * H));
    add("recurrent_kernel_candidate", {H, H}, rows(c.recurrent_kernel, H, 2 * H, H));
  } else {
    add("recurrent_kernel", {G * H, H}, c.recurrent_kernel);
  }
  add("bias", {G * H}, c.bias);
  if (!c.recurrent_bias.empty()) add("recurrent_bias", {G * H}, c.recurrent_bias);
  return w;
}

// A weight constant of the body: float32, or for a hybrid variant's kernels INT8 with one
// scale per tensor or per row (symmetric, as TFLite's post-training quantizer writes them).
int weight_constant(GraphWriter& g, const ConverterVariant& v, const std::string& prefix,
                    const WeightTensor& w) {
  const bool kernel = w.name.find("kernel") != std::string::npos;
  if (v.hybrid == ConverterVariant::Hybrid::kNone || !kernel) {
    return g.constant(prefix + w.name, w.shape, w.values);
  }
  const size_t rows = static_cast<size_t>(w.shape[0]), cols = w.values.size() / rows;
  std::vector<float> scales(v.hybrid == ConverterVariant::Hybrid::kPerRow ? rows : 1, 0.f);
  for (size_t i = 0; i < w.values.size(); ++i) {
    float& s = scales[scales.size() == 1 ? 0 : i / cols];
    s = std::max(s, std::fabs(w.values[i]) / 127.f);
  }
  std::vector<int8_t> q(w.values.size());
  for (size_t i = 0; i < q.size(); ++i) {
    const float s = scales[scales.size() == 1 ? 0 : i / cols];
    q[i] = static_cast<int8_t>(std::lround(std::max(-127.f, std::min(127.f, w.values[i] / s))));
  }
  int t = g.constant_bytes(prefix + w.name, w.shape, TensorType::INT8, q.data(), q.size());
  auto quantization = std::make_unique<fb::QuantizationParametersT>();
  quantization->scale = scales;
  quantization->zero_point.assign(scales.size(), 0);
  g.sg().tensors[static_cast<size_t>(t)]->quantization = std::move(quantization);
  return t;
}

class Step {
 public:
  Step(GraphWriter& g, const ConverterVariant& v, std::map<std::string, int> weights,
       std::string prefix)
      : g_(g), v_(v), w_(std::move(weights)), p_(std::move(prefix)) {}

  int weight(const std::string& name) const {
    auto it = w_.find(name);
    return it == w_.end() ? -1 : it->second;
  }

  // FC(src, kernel) [+ bias, in the FC or as its own ADD].
  // FULLY_CONNECTED; a hybrid variant's quantizes its input asymmetrically when asked.
  int fc(int src, int w, int b, const std::string& name) {
    int out = tools::fully_connected(g_, src, w, b, name);
    g_.sg()
        .operators.back()
        ->builtin_options.AsFullyConnectedOptions()
        ->asymmetric_quantize_inputs = v_.asymmetric_inputs;
    return out;
  }

  int product(int src, const std::string& kernel, const std::string& bias, const std::string& n) {
    const int b = bias.empty() ? -1 : weight(bias);
    if (!v_.bias_add || b < 0) return fc(src, weight(kernel), b, p_ + n);
    int bare = fc(src, weight(kernel), -1, p_ + n + "/matmul");
    return tools::binary(g_, BO::ADD, bare, b, p_ + n + "/bias_add");
  }

  // The gate blocks of `product`'s output, cut the variant's way.
  std::vector<int> cut(int all, int parts, bool recurrent_side, const std::string& n) {
    if (parts == 1) return {all};  // a SimpleRNN's one block needs no cut
    const int H = v_.units;
    GateCut how = v_.gates;
    if (how == GateCut::kStridedSlice && !recurrent_side) how = GateCut::kSplit;  // TF 2.17+
    switch (how) {
      case GateCut::kSplitV: return split_v(g_, all, parts, H, p_ + n + "/split_v");
      case GateCut::kStridedSlice: {
        std::vector<int> out;
        for (int k = 0; k < parts; ++k) {
          out.push_back(strided_cut(g_, all, k * H, H, p_ + n + "/slice_" + std::to_string(k)));
        }
        return out;
      }
      default: return tools::split(g_, all, parts, p_ + n + "/split");
    }
  }

  // Per-gate pre-activations of one side (x or h), G blocks.
  std::vector<int> side(int src, bool recurrent, int gates, const std::string& n) {
    const std::string kernel = recurrent ? "recurrent_kernel" : "kernel";
    const std::string bias =
        recurrent
            ? (weight("recurrent_bias") >= 0 || weight("recurrent_bias_0") >= 0 ? "recurrent_bias"
                                                                                : "")
            : "bias";
    if (v_.gates == GateCut::kPerGateFc) {
      std::vector<int> out;
      for (int k = 0; k < gates; ++k) {
        const std::string s = "_" + std::to_string(k);
        out.push_back(product(src, kernel + s, bias.empty() ? "" : bias + s, n + s));
      }
      return out;
    }
    return cut(product(src, kernel, bias, n), gates, recurrent, n);
  }

  // h' (and c') from x and the state.
  void cell(int x, int h, int c, int* h_next, int* c_next) {
    if (v_.cell == find_cell("gru")) {
      *h_next = gru(x, h);
    } else if (v_.cell == find_cell("lstm")) {
      lstm(x, h, c, h_next, c_next);
    } else {
      *h_next = rnn(x, h);
    }
  }

 private:
  int gru(int x, int h) {
    std::vector<int> xs = side(x, false, 3, "x");
    int z, r, n;
    if (v_.reset_after) {
      std::vector<int> hs = side(h, true, 3, "h");
      z = gate_activation(g_, v_, tools::binary(g_, BO::ADD, xs[0], hs[0], p_ + "z_pre"), p_ + "z");
      r = gate_activation(g_, v_, tools::binary(g_, BO::ADD, xs[1], hs[1], p_ + "r_pre"), p_ + "r");
      int gated = tools::binary(g_, BO::MUL, r, hs[2], p_ + "r_hh");
      n = activation(g_, v_, tools::binary(g_, BO::ADD, xs[2], gated, p_ + "hh_pre"), p_ + "hh");
    } else {
      std::vector<int> hs;
      if (v_.gates == GateCut::kPerGateFc) {
        hs = {product(h, "recurrent_kernel_0", "", "h_0"),
              product(h, "recurrent_kernel_1", "", "h_1")};
      } else {
        hs = cut(product(h, "recurrent_kernel", "", "h"), 2, true, "h");
      }
      z = gate_activation(g_, v_, tools::binary(g_, BO::ADD, xs[0], hs[0], p_ + "z_pre"), p_ + "z");
      r = gate_activation(g_, v_, tools::binary(g_, BO::ADD, xs[1], hs[1], p_ + "r_pre"), p_ + "r");
      int r_h = tools::binary(g_, BO::MUL, r, h, p_ + "r_h");
      const std::string candidate =
          v_.gates == GateCut::kPerGateFc ? "recurrent_kernel_2" : "recurrent_kernel_candidate";
      int hh = product(r_h, candidate, "", "r_h_matmul");
      n = activation(g_, v_, tools::binary(g_, BO::ADD, xs[2], hh, p_ + "hh_pre"), p_ + "hh");
    }
    if (v_.update == GruUpdate::kDifference) {
      int diff = tools::binary(g_, BO::SUB, h, n, p_ + "h_minus_hh");
      int scaled = tools::binary(g_, BO::MUL, z, diff, p_ + "z_diff");
      return tools::binary(g_, BO::ADD, n, scaled, p_ + "h_next");
    }
    int keep = tools::binary(g_, BO::MUL, z, h, p_ + "z_h");
    int one_minus_z = tools::binary(g_, BO::SUB, g_.scalar(1.f), z, p_ + "one_minus_z");
    int take = tools::binary(g_, BO::MUL, one_minus_z, n, p_ + "one_minus_z_hh");
    return tools::binary(g_, BO::ADD, keep, take, p_ + "h_next");
  }

  // The converter's LSTM: FC(x) + FC(h) -> ADD [-> ADD(bias)] -> SPLIT 4 when the gates are
  // split; per-gate sums otherwise.
  std::vector<int> summed_gates(int x, int h, int gates) {
    if (v_.gates == GateCut::kSplit || v_.gates == GateCut::kSplitV) {
      int xw = v_.bias_add ? fc(x, weight("kernel"), -1, p_ + "x_matmul")
                           : product(x, "kernel", "bias", "x_matmul");
      int hu = fc(h, weight("recurrent_kernel"), -1, p_ + "h_matmul");
      int sum = tools::binary(g_, BO::ADD, xw, hu, p_ + "sum");
      if (v_.bias_add) sum = tools::binary(g_, BO::ADD, sum, weight("bias"), p_ + "bias_add");
      return cut(sum, gates, false, "gates");
    }
    std::vector<int> xs = side(x, false, gates, "x"), hs = side(h, true, gates, "h");
    std::vector<int> out;
    for (int k = 0; k < gates; ++k) {
      out.push_back(tools::binary(g_, BO::ADD, xs[static_cast<size_t>(k)],
                                  hs[static_cast<size_t>(k)], p_ + "pre_" + std::to_string(k)));
    }
    return out;
  }

  void lstm(int x, int h, int c, int* h_next, int* c_next) {
    std::vector<int> pre = summed_gates(x, h, 4);
    int i = gate_activation(g_, v_, pre[0], p_ + "i");
    int f = gate_activation(g_, v_, pre[1], p_ + "f");
    int cand = activation(g_, v_, pre[2], p_ + "g");
    int o = gate_activation(g_, v_, pre[3], p_ + "o");
    int keep = tools::binary(g_, BO::MUL, f, c, p_ + "f_c");
    int write = tools::binary(g_, BO::MUL, i, cand, p_ + "i_g");
    *c_next = tools::binary(g_, BO::ADD, keep, write, p_ + "c_next");
    *h_next =
        tools::binary(g_, BO::MUL, o, activation(g_, v_, *c_next, p_ + "c_act"), p_ + "h_next");
  }

  int rnn(int x, int h) {
    std::vector<int> pre = summed_gates(x, h, 1);
    return activation(g_, v_, pre[0], p_ + "h_next");
  }

  GraphWriter& g_;
  const ConverterVariant& v_;
  std::map<std::string, int> w_;
  std::string p_;
};

// ---- The loop --------------------------------------------------------------------------

struct LoopSlots {
  int counter = -1, max_iterations = -1, time = 0, acc = 1, h = 2, c = -1, sequence = 3, mask = -1,
      trip = -1, first_weight = -1;
  int count = 0;
};

int scalar_shape_slice(GraphWriter& g, int x, const std::string& p) {
  int shape = g.tensor(p + "shape", {3}, TensorType::INT32);
  fb::ShapeOptionsT so;
  so.out_type = TensorType::INT32;
  g.op(BO::SHAPE, {x}, {shape}, so);
  fb::StridedSliceOptionsT ss;
  ss.shrink_axis_mask = 1;
  int batch = g.tensor(p + "batch", {}, TensorType::INT32);
  g.op(BO::STRIDED_SLICE,
       {shape, int_vector(g, p + "batch/begin", {0}), int_vector(g, p + "batch/end", {1}),
        int_vector(g, p + "batch/strides", {1})},
       {batch}, ss);
  return batch;
}

// FILL(PACK(batch, H), 0.0): the zero state of a dynamic-batch model.
int filled_zeros(GraphWriter& g, int model_input, int units, const std::string& p) {
  int batch = scalar_shape_slice(g, model_input, p);
  int dims = g.tensor(p + "zeros/dims", {2}, TensorType::INT32);
  fb::PackOptionsT pack;
  pack.values_count = 2;
  pack.axis = 0;
  g.op(BO::PACK, {batch, g.scalar_i32(units)}, {dims}, pack);
  int out = g.tensor(p + "zeros", {1, units});
  g.op(BO::FILL, {dims, g.scalar(0.f)}, {out}, fb::FillOptionsT());
  return out;
}

struct Built {
  int output = -1;  // [1,H] last output, or [T,1,H] with return_sequences
};

struct LoopContext {
  int model_input = -1;  // for SHAPE-made states
  std::vector<int>* model_inputs = nullptr;
};

std::vector<uint8_t> flex(const std::string& op) { return flex_node_def_options(op, 1); }

Built emit_loop(GraphWriter& g, const ConverterVariant& v, const CellParams& c, int sequence,
                bool return_sequences, const std::string& name, LoopContext& ctx) {
  const int T = v.timesteps, H = v.units, F = c.in;
  const bool lstm = v.cell == find_cell("lstm");
  Accumulator acc_form = v.accumulator;
  if (return_sequences) {  // a layer that returns sequences keeps every step
    if (acc_form == Accumulator::kLastOutput || acc_form == Accumulator::kSetItemOneRow) {
      acc_form = Accumulator::kSetItem;
    } else if (acc_form == Accumulator::kFlexLastOutput) {
      acc_form = Accumulator::kFlexList;
    }
  }
  const bool flex_list =
      acc_form == Accumulator::kFlexList || acc_form == Accumulator::kFlexLastOutput;
  const int acc_steps = acc_form == Accumulator::kLastOutput ||
                                acc_form == Accumulator::kSetItemOneRow ||
                                acc_form == Accumulator::kFlexLastOutput
                            ? 1
                            : T;
  const std::vector<WeightTensor> weights = weight_tensors(v, c);
  const std::string p = name + "/";

  LoopSlots s;
  int next = 0;
  if (v.two_counters) {
    s.counter = next++;
    s.max_iterations = next++;
  }
  s.time = next++;
  s.acc = next++;
  s.h = next++;
  if (lstm) s.c = next++;
  s.sequence = next++;
  if (v.masking) s.mask = next++;
  if (v.weights_as_args) {
    s.trip = next++;
    s.first_weight = next;
    next += static_cast<int>(weights.size());
  }
  s.count = next;

  struct Value {
    std::string name;
    Dims shape;
    TensorType type;
  };
  std::vector<Value> values(static_cast<size_t>(s.count));
  if (s.counter >= 0) values[s.counter] = {"loop_counter", {}, TensorType::INT32};
  if (s.max_iterations >= 0)
    values[s.max_iterations] = {"maximum_iterations", {}, TensorType::INT32};
  values[s.time] = {"time", {}, TensorType::INT32};
  values[s.acc] = flex_list ? Value{"output_list", {}, TensorType::VARIANT}
                            : Value{"output_accumulator", {acc_steps, 1, H}, TensorType::FLOAT32};
  values[s.h] = {"h", {1, H}, TensorType::FLOAT32};
  if (s.c >= 0) values[s.c] = {"c", {1, H}, TensorType::FLOAT32};
  values[s.sequence] = v.flex_input ? Value{"input_list", {}, TensorType::VARIANT}
                                    : Value{"sequence", {T, 1, F}, TensorType::FLOAT32};
  if (s.mask >= 0) values[s.mask] = {"mask", {T, 1, 1}, TensorType::BOOL};
  if (s.trip >= 0) values[s.trip] = {"timesteps", {}, TensorType::INT32};
  for (size_t k = 0; k < weights.size() && s.first_weight >= 0; ++k) {
    values[static_cast<size_t>(s.first_weight) + k] = {weights[k].name, weights[k].shape,
                                                       TensorType::FLOAT32};
  }

  // Main: the loop's initial values.
  const int main = g.current();
  std::vector<int> init(static_cast<size_t>(s.count));
  if (s.counter >= 0) init[s.counter] = g.constant_i32(p + "loop_counter", {}, {0});
  if (s.max_iterations >= 0) init[s.max_iterations] = g.constant_i32(p + "max_iterations", {}, {T});
  init[s.time] = g.constant_i32(p + "time", {}, {0});
  const int element_shape = flex_list ? int_vector(g, p + "element_shape", {-1, H}) : -1;
  if (flex_list) {
    init[s.acc] = g.tensor(p + "reserved", {}, TensorType::VARIANT);
    g.custom_op("FlexTensorListReserve",
                {element_shape, g.constant_i32(p + "steps", {}, {acc_steps})}, {init[s.acc]},
                flex("TensorListReserve"));
  } else {
    init[s.acc] = g.constant(p + "output_accumulator", {acc_steps, 1, H},
                             std::vector<float>(static_cast<size_t>(acc_steps * H), 0.f));
  }
  for (int slot : {s.h, s.c}) {
    if (slot < 0) continue;
    const std::string state = slot == s.h ? "h0" : "c0";
    switch (v.state) {
      case StateInit::kConstZeros:
        init[slot] = g.constant(p + state, {1, H}, std::vector<float>(static_cast<size_t>(H), 0.f));
        break;
      case StateInit::kFill:
        init[slot] = filled_zeros(g, ctx.model_input, H, p + state + "/");
        break;
      case StateInit::kModelInput:
        init[slot] = g.tensor(p + state, {1, H});
        ctx.model_inputs->push_back(init[slot]);
        break;
    }
  }
  init[s.sequence] = sequence;
  if (v.flex_input) {
    init[s.sequence] = g.tensor(p + "input_list", {}, TensorType::VARIANT);
    g.custom_op("FlexTensorListFromTensor", {sequence, int_vector(g, p + "input_shape", {-1, F})},
                {init[s.sequence]}, flex("TensorListFromTensor"));
  }
  if (s.mask >= 0) {  // every step present: the mask changes nothing but the graph
    std::vector<uint8_t> all(static_cast<size_t>(T), 1);
    init[s.mask] = g.constant_bool(p + "mask", {T, 1, 1}, all);
  }
  if (s.trip >= 0) init[s.trip] = g.constant_i32(p + "timesteps", {}, {T});
  for (size_t k = 0; k < weights.size() && s.first_weight >= 0; ++k) {
    init[static_cast<size_t>(s.first_weight) + k] =
        g.constant(p + weights[k].name, weights[k].shape, weights[k].values);
  }
  std::vector<int> result;
  for (const Value& value : values)
    result.push_back(g.tensor(p + "while:" + value.name, value.shape, value.type));
  fb::WhileOptionsT options;
  options.cond_subgraph_index = g.add_subgraph(name + "_while_cond");
  options.body_subgraph_index = g.add_subgraph(name + "_while_body");
  g.op(BO::WHILE, init, result, options);

  auto loop_inputs = [&](const std::string& q) {
    std::vector<int> in;
    for (const Value& value : values) {
      in.push_back(g.tensor(q + value.name, value.shape, value.type));
      g.sg().inputs.push_back(in.back());
    }
    return in;
  };

  // Cond.
  g.use(options.cond_subgraph_index);
  {
    std::vector<int> in = loop_inputs(p + "cond/");
    const int limit = s.trip >= 0 ? in[s.trip] : g.constant_i32(p + "cond/T", {}, {T});
    int more = g.tensor(p + "cond/less", {}, TensorType::BOOL);
    g.op(BO::LESS, {in[s.time], limit}, {more}, fb::LessOptionsT());
    if (v.two_counters) {
      int below = g.tensor(p + "cond/less_max", {}, TensorType::BOOL);
      g.op(BO::LESS, {in[s.counter], in[s.max_iterations]}, {below}, fb::LessOptionsT());
      int both = g.tensor(p + "cond/and", {}, TensorType::BOOL);
      g.op(BO::LOGICAL_AND, {below, more}, {both}, fb::LogicalAndOptionsT());
      more = both;
    }
    g.sg().outputs.push_back(more);
  }

  // Body.
  g.use(options.body_subgraph_index);
  {
    const std::string q = p + "body/";
    std::vector<int> in = loop_inputs(q);
    std::vector<int> out = in;
    std::map<std::string, int> w;
    for (size_t k = 0; k < weights.size(); ++k) {
      w[weights[k].name] = s.first_weight >= 0 ? in[static_cast<size_t>(s.first_weight) + k]
                                               : weight_constant(g, v, q, weights[k]);
    }
    if (s.counter >= 0) {
      out[s.counter] =
          tools::binary(g, BO::ADD, in[s.counter], g.scalar_i32(1), q + "counter_next");
    }
    out[s.time] = tools::binary(g, BO::ADD, in[s.time], g.scalar_i32(1), q + "time_next");
    int x = g.tensor(q + "x", {1, F});
    if (v.flex_input) {
      g.custom_op("FlexTensorListGetItem",
                  {in[s.sequence], in[s.time], int_vector(g, q + "x_shape", {-1, F})}, {x},
                  flex("TensorListGetItem"));
    } else {
      fb::GatherOptionsT gather;
      gather.axis = 0;
      g.op(BO::GATHER, {in[s.sequence], in[s.time]}, {x}, gather);
    }
    if (v.ones_mask) {
      int shape = g.tensor(q + "x_shape", {2}, TensorType::INT32);
      fb::ShapeOptionsT so;
      so.out_type = TensorType::INT32;
      g.op(BO::SHAPE, {x}, {shape}, so);
      int ones = g.tensor(q + "ones", {1, F});
      g.op(BO::FILL, {shape, g.scalar(1.f)}, {ones}, fb::FillOptionsT());
      x = tools::binary(g, BO::MUL, x, ones, q + "x_masked");
    }
    Step step(g, v, w, q);
    int h_next = -1, c_next = -1;
    step.cell(x, in[s.h], s.c >= 0 ? in[s.c] : -1, &h_next, &c_next);
    if (s.mask >= 0) {
      int m = g.tensor(q + "mask_t", {1, 1}, TensorType::BOOL);
      fb::GatherOptionsT gather;
      gather.axis = 0;
      g.op(BO::GATHER, {in[s.mask], in[s.time]}, {m}, gather);
      int kept = g.tensor(q + "h_masked", {1, H});
      g.op(BO::SELECT_V2, {m, h_next, in[s.h]}, {kept}, fb::SelectV2OptionsT());
      h_next = kept;
      if (s.c >= 0) {
        int kept_c = g.tensor(q + "c_masked", {1, H});
        g.op(BO::SELECT_V2, {m, c_next, in[s.c]}, {kept_c}, fb::SelectV2OptionsT());
        c_next = kept_c;
      }
    }
    out[s.h] = h_next;
    if (s.c >= 0) out[s.c] = c_next;
    switch (acc_form) {
      case Accumulator::kLastOutput:
        out[s.acc] = tools::reshape(g, h_next, {1, 1, H}, q + "output_item");
        break;
      case Accumulator::kSetItem:
      case Accumulator::kSetItemCast: {
        fb::ConcatenationOptionsT axis0;
        axis0.axis = 0;
        int t_vec = tools::reshape(g, in[s.time], {1}, q + "t_vec");
        int next_vec = tools::reshape(g, out[s.time], {1}, q + "t_next_vec");
        int head_size = g.tensor(q + "head_size", {3}, TensorType::INT32);
        g.op(BO::CONCATENATION, {t_vec, int_vector(g, q + "rest", {-1, -1})}, {head_size}, axis0);
        int tail_begin = g.tensor(q + "tail_begin", {3}, TensorType::INT32);
        g.op(BO::CONCATENATION, {next_vec, int_vector(g, q + "zeros", {0, 0})}, {tail_begin},
             axis0);
        int head = g.tensor(q + "head", {T, 1, H}), tail = g.tensor(q + "tail", {T, 1, H});
        int item = g.tensor(q + "item", {1, 1, H});
        g.op(BO::SLICE, {in[s.acc], int_vector(g, q + "origin", {0, 0, 0}), head_size}, {head},
             fb::SliceOptionsT());
        g.op(BO::SLICE, {in[s.acc], tail_begin, int_vector(g, q + "to_end", {-1, -1, -1})}, {tail},
             fb::SliceOptionsT());
        fb::ExpandDimsOptionsT ed;
        g.op(BO::EXPAND_DIMS, {h_next, g.scalar_i32(0)}, {item}, ed);
        int written = g.tensor(q + "written", {T, 1, H});
        // The slices change shape every step: the converter marks them dynamic.
        for (int t : {head, tail, written}) {
          g.sg().tensors[static_cast<size_t>(t)]->shape_signature = {-1, -1, H};
        }
        g.op(BO::CONCATENATION, {head, item, tail}, {written}, axis0);
        if (acc_form == Accumulator::kSetItemCast) {
          int cast = g.tensor(q + "written_cast", {T, 1, H});
          fb::CastOptionsT co;
          co.in_data_type = TensorType::FLOAT32;
          co.out_data_type = TensorType::FLOAT32;
          g.op(BO::CAST, {written}, {cast}, co);
          written = cast;
        }
        out[s.acc] = written;
        break;
      }
      case Accumulator::kSetItemOneRow: {
        fb::ConcatenationOptionsT axis0;
        axis0.axis = 0;
        int head = g.tensor(q + "head", {0, 1, H}), tail = g.tensor(q + "tail", {0, 1, H});
        int item = g.tensor(q + "item", {1, 1, H});
        g.op(BO::SLICE,
             {in[s.acc], int_vector(g, q + "origin", {0, 0, 0}),
              int_vector(g, q + "head_size", {0, -1, -1})},
             {head}, fb::SliceOptionsT());
        g.op(BO::SLICE,
             {in[s.acc], int_vector(g, q + "tail_begin", {1, 0, 0}),
              int_vector(g, q + "to_end", {-1, -1, -1})},
             {tail}, fb::SliceOptionsT());
        g.op(BO::EXPAND_DIMS, {h_next, g.scalar_i32(0)}, {item}, fb::ExpandDimsOptionsT());
        out[s.acc] = g.tensor(q + "written", {1, 1, H});
        g.op(BO::CONCATENATION, {head, item, tail}, {out[s.acc]}, axis0);
        break;
      }
      case Accumulator::kFlexList:
      case Accumulator::kFlexLastOutput: {
        int written = g.tensor(q + "list_written", {}, TensorType::VARIANT);
        const int index = acc_form == Accumulator::kFlexList ? in[s.time] : g.scalar_i32(0);
        g.custom_op("FlexTensorListSetItem", {in[s.acc], index, h_next}, {written},
                    flex("TensorListSetItem"));
        out[s.acc] = written;
        break;
      }
    }
    g.sg().outputs = out;
  }
  if (v.unknown_loop_shapes) {  // written after the body: the emitters read these shapes
    for (int sub : {options.cond_subgraph_index, options.body_subgraph_index}) {
      g.use(sub);
      for (int t : g.sg().inputs) g.sg().tensors[static_cast<size_t>(t)]->shape.clear();
    }
  }
  g.use(main);

  int sequence_out = result[s.acc];
  if (flex_list) {
    sequence_out = g.tensor(p + "stacked", {acc_steps, 1, H});
    g.custom_op("FlexTensorListStack", {result[s.acc], element_shape}, {sequence_out},
                flex("TensorListStack"));
  }
  Built b;
  b.output = return_sequences ? sequence_out : tools::last_step(g, sequence_out, 0, p + "last");
  return b;
}

const char* cell_layer(const CellDescriptor* cell) { return cell->layer_name; }

// ---- Reference ---------------------------------------------------------------------------

double sigmoid(const ConverterVariant& v, double x) {
  if (v.hard_sigmoid) return std::min(1.0, std::max(0.0, 0.2 * x + 0.5));
  return 1 / (1 + std::exp(-x));
}
double act(const ConverterVariant& v, double x) {
  if (v.activation == "tanh") return std::tanh(x);
  if (v.activation == "relu") return std::max(0.0, x);
  return x;
}

// W[row, :] . x
double dot(const std::vector<float>& m, int cols, int row, const std::vector<double>& x) {
  double sum = 0;
  for (int j = 0; j < cols; ++j)
    sum += double{m[static_cast<size_t>(row * cols + j)]} * x[static_cast<size_t>(j)];
  return sum;
}

// One layer over a sequence (steps x in), returning every h.
std::vector<std::vector<double>> run_cell(const ConverterVariant& v, const CellParams& c,
                                          const std::vector<std::vector<double>>& xs,
                                          std::vector<double> h, std::vector<double> cs) {
  const int H = c.units;
  std::vector<std::vector<double>> outs;
  for (const std::vector<double>& x : xs) {
    std::vector<double> next(static_cast<size_t>(H)), next_c = cs;
    auto bias = [&](const std::vector<float>& b, int i) {
      return b.empty() ? 0.0 : double{b[static_cast<size_t>(i)]};
    };
    for (int u = 0; u < H; ++u) {
      if (v.cell == find_cell("rnn")) {
        next[static_cast<size_t>(u)] =
            act(v, dot(c.kernel, c.in, u, x) + dot(c.recurrent_kernel, H, u, h) + bias(c.bias, u));
      }
    }
    if (v.cell == find_cell("gru")) {
      std::vector<double> r(static_cast<size_t>(H)), z(static_cast<size_t>(H));
      for (int u = 0; u < H; ++u) {
        z[static_cast<size_t>(u)] =
            sigmoid(v, dot(c.kernel, c.in, u, x) + bias(c.bias, u) +
                           dot(c.recurrent_kernel, H, u, h) + bias(c.recurrent_bias, u));
        r[static_cast<size_t>(u)] =
            sigmoid(v, dot(c.kernel, c.in, H + u, x) + bias(c.bias, H + u) +
                           dot(c.recurrent_kernel, H, H + u, h) + bias(c.recurrent_bias, H + u));
      }
      std::vector<double> rh(static_cast<size_t>(H));
      for (int u = 0; u < H; ++u)
        rh[static_cast<size_t>(u)] = r[static_cast<size_t>(u)] * h[static_cast<size_t>(u)];
      for (int u = 0; u < H; ++u) {
        const double xn = dot(c.kernel, c.in, 2 * H + u, x) + bias(c.bias, 2 * H + u);
        const double hn =
            v.reset_after ? r[static_cast<size_t>(u)] * (dot(c.recurrent_kernel, H, 2 * H + u, h) +
                                                         bias(c.recurrent_bias, 2 * H + u))
                          : dot(c.recurrent_kernel, H, 2 * H + u, rh);
        const double n = act(v, xn + hn);
        const double zu = z[static_cast<size_t>(u)];
        next[static_cast<size_t>(u)] = zu * h[static_cast<size_t>(u)] + (1 - zu) * n;
      }
    }
    if (v.cell == find_cell("lstm")) {
      for (int u = 0; u < H; ++u) {
        double pre[4];
        for (int k = 0; k < 4; ++k) {
          pre[k] = dot(c.kernel, c.in, k * H + u, x) + dot(c.recurrent_kernel, H, k * H + u, h) +
                   bias(c.bias, k * H + u);
        }
        const double cu =
            sigmoid(v, pre[1]) * cs[static_cast<size_t>(u)] + sigmoid(v, pre[0]) * act(v, pre[2]);
        next_c[static_cast<size_t>(u)] = cu;
        next[static_cast<size_t>(u)] = sigmoid(v, pre[3]) * act(v, cu);
      }
    }
    h = next;
    cs = next_c;
    outs.push_back(h);
  }
  return outs;
}

}  // namespace

int cell_count(const ConverterVariant& v) { return v.layers * directions(v); }

bool write_variant(const ConverterVariant& v, std::vector<uint8_t>* bytes, std::string* error) {
  const Params params = params_for(v);
  tools::ModelDef def;
  def.version = 3;
  def.description = "converter variant: " + v.structure;
  GraphWriter g(&def);
  g.use(g.add_subgraph("main"));
  const int T = v.timesteps, F = v.features;
  int input = g.tensor("input", {1, T, F});
  if (v.dynamic_batch) g.sg().tensors[static_cast<size_t>(input)]->shape_signature = {-1, T, F};
  std::vector<int> model_inputs = {input};
  int sequence;
  if (v.dynamic_batch) {
    sequence = tools::transpose_time_major(g, input, "time_major");
  } else {
    sequence = tools::reshape(g, input, {T, 1, F}, "time_major");
  }
  LoopContext ctx{input, &model_inputs};
  size_t cell = 0;
  int last = -1;
  for (int layer = 0; layer < v.layers; ++layer) {
    const bool return_sequences = layer + 1 < v.layers;
    std::vector<int> finals;
    for (int d = 0; d < directions(v); ++d) {
      const bool backward = v.direction == Direction::kBackward || d == 1;
      int seq = sequence;
      const std::string name = std::string(backward ? "backward_" : "") + cell_layer(v.cell) +
                               (layer ? "_" + std::to_string(layer) : "");
      if (backward) {
        seq = g.tensor(name + "/reverse", g.shape(sequence));
        g.op(BO::REVERSE_V2, {sequence, int_vector(g, name + "/reverse_axis", {0})}, {seq},
             fb::ReverseV2OptionsT());
      }
      finals.push_back(
          emit_loop(g, v, params.cells[cell++], seq, return_sequences, name, ctx).output);
    }
    if (return_sequences && finals.size() == 2) {
      // The backward layer's outputs are in reverse time order: turn them back, then join
      // both directions feature-wise.
      int backward =
          g.tensor("backward_" + std::to_string(layer) + "/reverse_out", g.shape(finals[1]));
      g.op(BO::REVERSE_V2, {finals[1], int_vector(g, "reverse_out_axis", {0})}, {backward},
           fb::ReverseV2OptionsT());
      sequence =
          g.tensor("bidirectional_" + std::to_string(layer) + "/concat", {T, 1, 2 * v.units});
      fb::ConcatenationOptionsT options;
      options.axis = 2;
      g.op(BO::CONCATENATION, {finals[0], backward}, {sequence}, options);
    } else if (return_sequences) {
      sequence = finals[0];
    } else if (finals.size() == 2) {
      last = g.tensor("bidirectional/concat", {1, 2 * v.units});
      fb::ConcatenationOptionsT options;
      options.axis = 1;
      g.op(BO::CONCATENATION, finals, {last}, options);
    } else {
      last = finals[0];
    }
  }
  const int head_in = v.units * directions(v);
  int logits = tools::fully_connected(
      g, last, g.constant("dense/kernel", {v.classes, head_in}, params.head_kernel),
      g.constant("dense/bias", {v.classes}, params.head_bias), "dense");
  int probs = g.tensor("probabilities", {1, v.classes});
  fb::SoftmaxOptionsT softmax;
  softmax.beta = 1.f;
  g.op(BO::SOFTMAX, {logits}, {probs}, softmax);
  g.sg().inputs = model_inputs;
  g.sg().outputs = {probs};
  return tools::write_model(def, ModelFormat::kTflite, bytes, error);
}

std::vector<float> reference_output(const ConverterVariant& v, const std::vector<float>& x,
                                    const std::vector<std::vector<float>>& state) {
  const Params params = params_for(v);
  const int T = v.timesteps, F = v.features, H = v.units;
  std::vector<std::vector<double>> seq(static_cast<size_t>(T));
  for (int t = 0; t < T; ++t) {
    for (int f = 0; f < F; ++f)
      seq[static_cast<size_t>(t)].push_back(x[static_cast<size_t>(t * F + f)]);
  }
  size_t cell = 0, next_state = 0;
  auto initial = [&]() {
    std::vector<double> s(static_cast<size_t>(H), 0.0);
    if (v.state == StateInit::kModelInput && next_state < state.size()) {
      const std::vector<float>& given = state[next_state++];
      for (int u = 0; u < H; ++u) s[static_cast<size_t>(u)] = given[static_cast<size_t>(u)];
    }
    return s;
  };
  std::vector<double> last;
  for (int layer = 0; layer < v.layers; ++layer) {
    std::vector<std::vector<std::vector<double>>> outs;
    for (int d = 0; d < directions(v); ++d) {
      const bool backward = v.direction == Direction::kBackward || d == 1;
      std::vector<std::vector<double>> in = seq;
      if (backward) std::reverse(in.begin(), in.end());
      std::vector<double> h0 = initial();
      std::vector<double> c0 = v.cell == find_cell("lstm") ? initial() : std::vector<double>();
      outs.push_back(run_cell(v, params.cells[cell++], in, h0, c0));
    }
    if (layer + 1 < v.layers) {
      seq = outs[0];
      if (outs.size() == 2) {
        std::reverse(outs[1].begin(), outs[1].end());
        for (size_t t = 0; t < seq.size(); ++t) {
          seq[t].insert(seq[t].end(), outs[1][t].begin(), outs[1][t].end());
        }
      }
    } else {
      last.clear();
      for (const auto& o : outs) last.insert(last.end(), o.back().begin(), o.back().end());
    }
  }
  const int head_in = static_cast<int>(last.size());
  std::vector<double> logits(static_cast<size_t>(v.classes));
  double top = -1e300;
  for (int k = 0; k < v.classes; ++k) {
    logits[static_cast<size_t>(k)] =
        dot(params.head_kernel, head_in, k, last) + params.head_bias[static_cast<size_t>(k)];
    top = std::max(top, logits[static_cast<size_t>(k)]);
  }
  double sum = 0;
  for (double& l : logits) sum += (l = std::exp(l - top));
  std::vector<float> out;
  for (double l : logits) out.push_back(static_cast<float>(l / sum));
  return out;
}

std::vector<ConverterVariant> converter_variants() {
  std::vector<ConverterVariant> all;
  auto add = [&](std::string name, std::string structure, const CellDescriptor* cell,
                 const std::function<void(ConverterVariant&)>& edit) {
    ConverterVariant v;
    v.name = std::move(name);
    v.structure = std::move(structure);
    v.cell = cell;
    edit(v);
    all.push_back(v);
  };
  const CellDescriptor *gru = find_cell("gru"), *lstm = find_cell("lstm"), *rnn = find_cell("rnn");
  auto none = [](ConverterVariant&) {};
  // Gates and their cuts.
  add("gru_split", "GRU gates: SPLIT into 3 on both FC outputs", gru, none);
  add("gru_split_v", "GRU gates: SPLIT_V with sizes [H,H,-1]", gru,
      [](ConverterVariant& v) { v.gates = GateCut::kSplitV; });
  add("gru_strided_slice", "GRU gates: the h side cut by 3 STRIDED_SLICE (TF 2.17+)", gru,
      [](ConverterVariant& v) { v.gates = GateCut::kStridedSlice; });
  add("gru_six_fc", "GRU gates: 6 separate FULLY_CONNECTED, no split", gru,
      [](ConverterVariant& v) { v.gates = GateCut::kPerGateFc; });
  add("gru_bias_add", "bias as a separate ADD after bias-free FCs", gru,
      [](ConverterVariant& v) { v.bias_add = true; });
  add("gru_reset_before", "GRU reset gate applied to h before the recurrent FC", gru,
      [](ConverterVariant& v) { v.reset_after = false; });
  add("gru_legacy_keras2",
      "Keras 2 GRU: reset_before, hard_sigmoid as MUL/ADD/MINIMUM/MAXIMUM, linear, 6 FCs", gru,
      [](ConverterVariant& v) {
        v.reset_after = false;
        v.hard_sigmoid = true;
        v.activation = "linear";
        v.gates = GateCut::kPerGateFc;
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
        v.accumulator = Accumulator::kSetItemCast;
      });
  add("gru_relu", "GRU candidate with relu activation", gru,
      [](ConverterVariant& v) { v.activation = "relu"; });
  add("gru_difference_update", "state update written as h~ + z*(h - h~)", gru,
      [](ConverterVariant& v) { v.update = GruUpdate::kDifference; });
  add("gru_ones_mask", "x multiplied by a FILL(1.0) mask", gru,
      [](ConverterVariant& v) { v.ones_mask = true; });
  // Loop plumbing.
  add("gru_two_counters", "condition LESS + LESS + LOGICAL_AND, two counters", gru,
      [](ConverterVariant& v) { v.two_counters = true; });
  add("gru_weights_as_args", "weights and T passed into the body as loop arguments", gru,
      [](ConverterVariant& v) { v.weights_as_args = true; });
  add("gru_dynamic_batch_fill", "dynamic batch: TRANSPOSE, zero state FILL(PACK(SHAPE..., H))", gru,
      [](ConverterVariant& v) {
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
      });
  add("gru_set_item", "accumulator: TensorListSetItem lowered to SLICE/CONCATENATION", gru,
      [](ConverterVariant& v) { v.accumulator = Accumulator::kSetItem; });
  add("gru_set_item_cast", "accumulator: SLICE/CONCATENATION then CAST", gru,
      [](ConverterVariant& v) { v.accumulator = Accumulator::kSetItemCast; });
  add("gru_flex_list", "Flex TensorList accumulator (Reserve/SetItem/Stack)", gru,
      [](ConverterVariant& v) {
        v.accumulator = Accumulator::kFlexList;
        v.two_counters = true;
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
      });
  add("gru_state_input", "streaming: the initial state is a model input", gru,
      [](ConverterVariant& v) { v.state = StateInit::kModelInput; });
  add("gru_set_item_one_row", "one-row accumulator with constant SLICE bounds (TF 2.20)", gru,
      [](ConverterVariant& v) {
        v.accumulator = Accumulator::kSetItemOneRow;
        v.two_counters = true;
      });
  add("gru_flex_last_output",
      "Flex list of one element written at a constant index (last layer), Stack, last step", gru,
      [](ConverterVariant& v) {
        v.accumulator = Accumulator::kFlexLastOutput;
        v.two_counters = true;
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
      });
  add("gru_flex_stacked",
      "two Flex loops: return_sequences by the counter, then the last layer at index 0", gru,
      [](ConverterVariant& v) {
        v.accumulator = Accumulator::kFlexLastOutput;
        v.layers = 2;
      });
  add("gru_old_converter",
      "TF 1.14: weights and T as loop arguments, loop values of rank 0, CAST/GATHER", gru,
      [](ConverterVariant& v) {
        v.weights_as_args = true;
        v.unknown_loop_shapes = true;
        v.accumulator = Accumulator::kSetItem;
      });
  add("gru_stacked", "stacked layers (return_sequences)", gru,
      [](ConverterVariant& v) { v.layers = 2; });
  add("gru_backward", "go_backwards: REVERSE_V2 of the time-major sequence", gru,
      [](ConverterVariant& v) { v.direction = Direction::kBackward; });
  add("gru_bidirectional", "bidirectional: two loops, REVERSE_V2, CONCATENATION", gru,
      [](ConverterVariant& v) {
        v.direction = Direction::kBidirectional;
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
      });
  // LSTM.
  add("lstm_split", "LSTM: FC(x) + FC(h) -> ADD -> SPLIT 4", lstm, none);
  add("lstm_bias_add", "LSTM: FC(x) + FC(h) -> ADD -> ADD(bias) -> SPLIT 4", lstm,
      [](ConverterVariant& v) { v.bias_add = true; });
  add("lstm_split_v", "LSTM gates cut by SPLIT_V", lstm,
      [](ConverterVariant& v) { v.gates = GateCut::kSplitV; });
  add("lstm_eight_fc", "LSTM: one FC per gate and side", lstm,
      [](ConverterVariant& v) { v.gates = GateCut::kPerGateFc; });
  add("lstm_relu", "LSTM with RELU in place of TANH", lstm,
      [](ConverterVariant& v) { v.activation = "relu"; });
  add("lstm_two_counters_fill",
      "LSTM: LESS+LESS+LOGICAL_AND, FILL states, set-item accumulator, dynamic batch", lstm,
      [](ConverterVariant& v) {
        v.two_counters = true;
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
        v.accumulator = Accumulator::kSetItemCast;
      });
  add("lstm_weights_as_args", "LSTM with weights passed as loop arguments", lstm,
      [](ConverterVariant& v) { v.weights_as_args = true; });
  add("lstm_flex_list", "LSTM with a Flex TensorList accumulator", lstm,
      [](ConverterVariant& v) { v.accumulator = Accumulator::kFlexList; });
  add("lstm_stacked", "two stacked LSTM loops", lstm, [](ConverterVariant& v) { v.layers = 2; });
  add("lstm_bidirectional", "bidirectional LSTM", lstm,
      [](ConverterVariant& v) { v.direction = Direction::kBidirectional; });
  add("lstm_flex_input", "x read by FlexTensorListGetItem of a FlexTensorListFromTensor list", lstm,
      [](ConverterVariant& v) {
        v.flex_input = true;
        v.accumulator = Accumulator::kFlexList;
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
      });
  add("lstm_bidirectional_stacked",
      "stacked bidirectional LSTM: REVERSE_V2 in and out, CONCATENATION of both directions", lstm,
      [](ConverterVariant& v) {
        v.direction = Direction::kBidirectional;
        v.layers = 2;
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
        v.accumulator = Accumulator::kSetItemCast;
      });
  add("lstm_masked", "SELECT_V2 masking of state and output (mask_zero), reported not fused", lstm,
      [](ConverterVariant& v) {
        v.masking = true;
        v.unfused_reason = "masked (SELECT_V2";
      });
  add("lstm_masked_flex", "masked LSTM whose Flex TensorList accumulator stays (builtin-only)",
      lstm, [](ConverterVariant& v) {
        v.masking = true;
        v.accumulator = Accumulator::kFlexList;
        v.unfused_reason = "masked (SELECT_V2";
      });
  // Hybrid loops (int8 weights, float activations, inputs quantized at run time).
  add("gru_hybrid_per_row", "hybrid GRU: INT8 FC weights with one scale per row", gru,
      [](ConverterVariant& v) { v.hybrid = ConverterVariant::Hybrid::kPerRow; });
  add("gru_hybrid_asymmetric", "hybrid GRU, reset_before, asymmetric_quantize_inputs", gru,
      [](ConverterVariant& v) {
        v.hybrid = ConverterVariant::Hybrid::kPerTensor;
        v.asymmetric_inputs = true;
        v.reset_after = false;
      });
  add("lstm_hybrid", "hybrid LSTM: INT8 FC weights, one scale per tensor", lstm,
      [](ConverterVariant& v) { v.hybrid = ConverterVariant::Hybrid::kPerTensor; });
  add("lstm_hybrid_asymmetric", "hybrid LSTM, bias ADD, asymmetric_quantize_inputs", lstm,
      [](ConverterVariant& v) {
        v.hybrid = ConverterVariant::Hybrid::kPerTensor;
        v.asymmetric_inputs = true;
        v.bias_add = true;
      });
  add("lstm_hybrid_per_row",
      "hybrid LSTM with per-row scales, which TFLite's LSTM op cannot hold: reported", lstm,
      [](ConverterVariant& v) {
        v.hybrid = ConverterVariant::Hybrid::kPerRow;
        v.unfused_reason = "per-channel";
      });
  add("rnn_hybrid", "hybrid SimpleRNN, one scale per tensor", rnn,
      [](ConverterVariant& v) { v.hybrid = ConverterVariant::Hybrid::kPerTensor; });
  // TFLite's LSTM op keeps its state in variable tensors that start at zero: a state that
  // comes in as a model input has no place in it, so the loop stays (and says so).
  add("lstm_state_input", "streaming LSTM: h and c are model inputs, reported not fused", lstm,
      [](ConverterVariant& v) {
        v.state = StateInit::kModelInput;
        v.unfused_reason = "takes no initial state";
      });
  // SimpleRNN.
  add("rnn_tanh", "SimpleRNN: FC(x) + FC(h) -> ADD -> TANH", rnn, none);
  add("rnn_linear", "SimpleRNN with linear activation (no activation op)", rnn,
      [](ConverterVariant& v) { v.activation = "linear"; });
  add("rnn_relu", "SimpleRNN with relu activation", rnn,
      [](ConverterVariant& v) { v.activation = "relu"; });
  add("rnn_two_counters", "SimpleRNN: LESS+LESS+LOGICAL_AND, last output RESHAPE(h)", rnn,
      [](ConverterVariant& v) { v.two_counters = true; });
  add("rnn_flex_list", "SimpleRNN with a Flex TensorList accumulator, dynamic batch", rnn,
      [](ConverterVariant& v) {
        v.accumulator = Accumulator::kFlexList;
        v.dynamic_batch = true;
        v.state = StateInit::kFill;
      });
  return all;
}

std::vector<std::vector<float>> variant_inputs(const ConverterVariant& v) {
  Lcg rng(static_cast<uint64_t>(v.name.size()) * 7919u + 17u);
  std::vector<std::vector<float>> inputs = {
      rng.values(static_cast<size_t>(v.timesteps * v.features), 1.f)};
  if (v.state == StateInit::kModelInput) {
    const int states = cell_count(v) * (v.cell == find_cell("lstm") ? 2 : 1);
    for (int k = 0; k < states; ++k)
      inputs.push_back(rng.values(static_cast<size_t>(v.units), 0.5f));
  }
  return inputs;
}

namespace {

tools::NpyArray float_array(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  tools::NpyArray a;
  a.dtype = "<f4";
  a.shape = shape;
  a.data.resize(values.size() * sizeof(float));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

}  // namespace

bool write_variant_folder(const std::string& dir, std::string* error) {
  for (const ConverterVariant& v : converter_variants()) {
    std::vector<uint8_t> bytes;
    if (!write_variant(v, &bytes, error)) return false;
    const std::string golden = dir + "/golden/" + v.name;
    std::error_code ec;
    std::filesystem::create_directories(golden, ec);
    if (ec) return *error = golden + ": " + ec.message(), false;
    if (!tools::write_file_atomically(dir + "/" + v.name + ".tflite", bytes, error)) return false;
    const std::vector<std::vector<float>> inputs = variant_inputs(v);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::vector<int64_t> shape = i == 0 ? std::vector<int64_t>{1, v.timesteps, v.features}
                                                : std::vector<int64_t>{1, v.units};
      if (!tools::write_npy(golden + "/input" + std::to_string(i) + ".npy",
                            float_array(shape, inputs[i]), error)) {
        return false;
      }
    }
    // The reference is float: a hybrid model's outputs carry its quantization, so no golden.
    if (v.hybrid != ConverterVariant::Hybrid::kNone) {
      std::filesystem::remove_all(golden, ec);
      continue;
    }
    const std::vector<float> out = reference_output(
        v, inputs[0], std::vector<std::vector<float>>(inputs.begin() + 1, inputs.end()));
    if (!tools::write_npy(golden + "/output0.npy", float_array({1, v.classes}, out), error)) {
      return false;
    }
  }
  return true;
}

}  // namespace gruwb::test
