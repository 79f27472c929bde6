#include "engine/tools/quantizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "engine/kernels/quant_util.h"
#include "engine/runtime/op_profiler.h"
#include "engine/runtime/op_resolver.h"
#include "engine/tools/dequantize.h"
#include "engine/tools/graph_writer.h"
#include "engine/tools/gru_quantization.h"
#include "engine/tools/model_runner.h"

namespace gruwb::tools {
namespace {

using Op = BuiltinOperator;

// ---- Tensors of the editable model ---------------------------------------------------------

int32_t code_of(const ModelDef& def, const fb::OperatorT& op) {
  return static_cast<int32_t>(def.operator_codes[op.opcode_index]->builtin_code);
}
std::string name_of(const ModelDef& def, const fb::OperatorT& op) {
  const fb::OperatorCodeT& c = *def.operator_codes[op.opcode_index];
  if (static_cast<int32_t>(c.builtin_code) == kOpCustom) return c.custom_code;
  const char* name = op_code_name(static_cast<int32_t>(c.builtin_code));
  return name ? name : "op " + std::to_string(static_cast<int32_t>(c.builtin_code));
}
bool is_constant(const ModelDef& def, const fb::TensorT& t) {
  return t.buffer != 0 && t.buffer < def.buffers.size() && !def.buffers[t.buffer]->data.empty();
}
std::vector<float> float_values(const ModelDef& def, const fb::TensorT& t) {
  const std::vector<uint8_t>& data = def.buffers[t.buffer]->data;
  std::vector<float> values(data.size() / sizeof(float));
  if (!values.empty()) std::memcpy(values.data(), data.data(), values.size() * sizeof(float));
  return values;
}

// ---- Calibration ---------------------------------------------------------------------------

struct Range {
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  bool seen() const { return lo <= hi; }
  void add(float v) {
    if (std::isnan(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  void add(const Range& r) {
    if (r.seen()) add(r.lo), add(r.hi);
  }
};

struct Calibration {
  std::vector<std::vector<Range>> ranges;              // [subgraph][tensor]
  std::map<std::pair<int, int>, float> lstm_cell_max;  // (subgraph, op) -> max |cell state|
};

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

// Sees every op of every invoke, WHILE bodies included: inputs before the eval, outputs after.
class RangeRecorder final : public OpProfiler {
 public:
  RangeRecorder(Interpreter* interpreter, const ModelDef& def, Calibration* calibration)
      : interpreter_(interpreter), def_(def), calibration_(calibration) {}
  bool begin_op(int32_t subgraph, int32_t op) override {
    const OpNode& node = interpreter_->subgraph_state(subgraph).nodes[op];
    for (int32_t t : node.op.inputs) record(subgraph, t);
    if (node.op.op_code == static_cast<int32_t>(Op::UNIDIRECTIONAL_SEQUENCE_LSTM)) {
      lstm_cell(subgraph, op, node);
    }
    return true;
  }
  void end_op(int32_t subgraph, int32_t op, const char*) override {
    const OpNode& node = interpreter_->subgraph_state(subgraph).nodes[op];
    for (int32_t t : node.op.outputs) record(subgraph, t);
  }

 private:
  Tensor* tensor(int32_t subgraph, int32_t t) {
    const SubgraphState& s = interpreter_->subgraph_state(subgraph);
    return t >= 0 && t < s.tensor_count ? &s.tensors[t] : nullptr;
  }
  void record(int32_t subgraph, int32_t t) {
    const Tensor* x = tensor(subgraph, t);
    if (!x || x->type != TensorType::FLOAT32 || x->kind == TensorKind::kConstant || !x->data) {
      return;
    }
    Range& r = calibration_->ranges[static_cast<size_t>(subgraph)][static_cast<size_t>(t)];
    const float* v = x->f32();
    for (int64_t i = 0; i < x->elements(); ++i) r.add(v[i]);
  }
  // The fused LSTM keeps its cell state inside: replay the cell in float (TFLite's gates i, f,
  // c, o) to find the largest |c|, which sets the int16 cell state's power-of-two scale.
  void lstm_cell(int32_t subgraph, int32_t op, const OpNode& node) {
    const Span<int32_t>& in = node.op.inputs;
    if (in.size < 20) return;
    const Tensor* x = tensor(subgraph, in[0]);
    const Tensor *w[8], *b[4];
    for (int i = 0; i < 8; ++i) w[i] = tensor(subgraph, in[1 + i]);
    for (int i = 0; i < 4; ++i) b[i] = tensor(subgraph, in[12 + i]);
    const Tensor* h0 = tensor(subgraph, in[18]);
    const Tensor* c0 = tensor(subgraph, in[19]);
    auto is_float = [](const Tensor* t) { return t && t->type == TensorType::FLOAT32 && t->data; };
    if (!is_float(x) || !is_float(h0) || !is_float(c0) || x->shape.rank != 3) return;
    for (const Tensor* t : w) {
      if (!is_float(t)) return;
    }
    for (const Tensor* t : b) {
      if (!is_float(t)) return;
    }
    const fb::OperatorT& def_op = *def_.subgraphs[static_cast<size_t>(subgraph)]->operators[op];
    const fb::UnidirectionalSequenceLSTMOptionsT* options =
        def_op.builtin_options.AsUnidirectionalSequenceLSTMOptions();
    const bool time_major = options && options->time_major;
    const float clip = options ? options->cell_clip : 0.f;
    const int32_t steps = time_major ? x->shape.dims[0] : x->shape.dims[1];
    const int32_t batch = time_major ? x->shape.dims[1] : x->shape.dims[0];
    const int32_t features = x->shape.dims[2];
    const int32_t units = c0->shape.dims[c0->shape.rank - 1];
    if (w[0]->elements() != int64_t{units} * features ||
        w[4]->elements() != int64_t{units} * units) {
      return;
    }
    std::vector<float> h(h0->f32(), h0->f32() + h0->elements());
    std::vector<float> c(c0->f32(), c0->f32() + c0->elements());
    std::vector<float> gate(4 * static_cast<size_t>(units));
    float& max_c = calibration_->lstm_cell_max[{subgraph, op}];
    for (int32_t t = 0; t < steps; ++t) {
      for (int32_t n = 0; n < batch; ++n) {
        const float* xv = x->f32() + (time_major ? (int64_t{t} * batch + n) * features
                                                 : (int64_t{n} * steps + t) * features);
        float* hv = h.data() + static_cast<size_t>(n) * units;
        float* cv = c.data() + static_cast<size_t>(n) * units;
        for (int g = 0; g < 4; ++g) {
          for (int32_t u = 0; u < units; ++u) {
            float sum = b[g]->f32()[u];
            for (int32_t f = 0; f < features; ++f) sum += w[g]->f32()[u * features + f] * xv[f];
            for (int32_t k = 0; k < units; ++k) sum += w[4 + g]->f32()[u * units + k] * hv[k];
            gate[static_cast<size_t>(g * units + u)] = sum;
          }
        }
        for (int32_t u = 0; u < units; ++u) {
          const float i = sigmoid(gate[static_cast<size_t>(u)]);
          const float f = sigmoid(gate[static_cast<size_t>(units + u)]);
          const float g = std::tanh(gate[static_cast<size_t>(2 * units + u)]);
          const float o = sigmoid(gate[static_cast<size_t>(3 * units + u)]);
          float cell = f * cv[u] + i * g;
          if (clip > 0) cell = std::max(-clip, std::min(clip, cell));
          cv[u] = cell;
          max_c = std::max(max_c, std::fabs(cell));
          hv[u] = o * std::tanh(cell);
        }
      }
    }
  }

  Interpreter* interpreter_;
  const ModelDef& def_;
  Calibration* calibration_;
};

bool set_float_inputs(ModelRunner& runner, const RepresentativeSample& sample, size_t index,
                      std::string* error) {
  if (static_cast<int>(sample.size()) != runner.input_count()) {
    *error = "sample " + std::to_string(index) + " has " + std::to_string(sample.size()) +
             " inputs, the model takes " + std::to_string(runner.input_count());
    return false;
  }
  for (int i = 0; i < runner.input_count(); ++i) {
    Tensor* in = runner.interpreter().input(i);
    const std::vector<float>& values = sample[static_cast<size_t>(i)];
    if (static_cast<int64_t>(values.size()) != in->elements()) {
      char shape[64];
      format_shape(in->shape, shape, sizeof shape);
      *error = "sample " + std::to_string(index) + " input " + std::to_string(i) + " '" + in->name +
               "' has " + std::to_string(values.size()) + " values, shape " + shape + " needs " +
               std::to_string(in->elements());
      return false;
    }
    if (in->type == TensorType::FLOAT32) {
      if (!values.empty()) std::memcpy(in->data, values.data(), values.size() * sizeof(float));
      continue;
    }
    TensorQuantization q;
    int32_t lo = 0, hi = 0;
    if (!tensor_quantization(in, &q) || !integer_range(in->type, &lo, &hi)) {
      *error = std::string("input '") + in->name + "' is neither float nor quantized";
      return false;
    }
    for (size_t k = 0; k < values.size(); ++k) {
      const int32_t v = quantize_value(values[k], q.scale, q.zero_point);
      set_integer_at(in, static_cast<int64_t>(k), std::max(lo, std::min(hi, v)));
    }
  }
  return true;
}

// An output as floats (integer outputs dequantized with their scale and zero point).
std::vector<float> float_output(Interpreter& interpreter, int o) {
  const Tensor* t = interpreter.output(o);
  std::vector<float> values(static_cast<size_t>(t->elements()));
  if (t->type == TensorType::FLOAT32) {
    if (!values.empty()) std::memcpy(values.data(), t->data, values.size() * sizeof(float));
    return values;
  }
  TensorQuantization q;
  const bool quantized = tensor_quantization(t, &q);
  for (size_t k = 0; k < values.size(); ++k) {
    const int32_t v = integer_at(t, static_cast<int64_t>(k));
    values[k] = quantized ? q.scale * static_cast<float>(v - q.zero_point) : static_cast<float>(v);
  }
  return values;
}

bool calibrate(const Model& model, const ModelDef& def,
               const std::vector<RepresentativeSample>& samples, Calibration* calibration,
               std::string* error) {
  ModelRunner runner;
  if (!runner.prepare(model, error)) return *error = "float model: " + *error, false;
  calibration->ranges.clear();
  for (const auto& sg : def.subgraphs) calibration->ranges.emplace_back(sg->tensors.size());
  RangeRecorder recorder(&runner.interpreter(), def, calibration);
  runner.interpreter().set_profiler(&recorder);
  for (size_t s = 0; s < samples.size(); ++s) {
    if (!set_float_inputs(runner, samples[s], s, error)) return false;
    runner.interpreter().reset_variables();  // every sample starts from the zero state
    if (!runner.invoke(error)) {
      *error = "sample " + std::to_string(s) + ": " + *error;
      return false;
    }
  }
  runner.interpreter().set_profiler(nullptr);
  return true;
}

// ---- Quantization parameters (TFLite's conventions) ----------------------------------------

struct Params {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t dimension = 0;
  bool operator==(const Params& o) const {
    return scale == o.scale && zero_point == o.zero_point && dimension == o.dimension;
  }
};
Params per_tensor(float scale, int64_t zero_point) { return {{scale}, {zero_point}, 0}; }

// Asymmetric int8: the range widened to hold 0, zero point nudged to an integer (TFLite's
// GetAsymmetricQuantizationParams).
Params asymmetric_int8(Range r) {
  const double lo = std::min(0.0, static_cast<double>(r.lo));
  const double hi = std::max(0.0, static_cast<double>(r.hi));
  if (hi - lo <= 0) return per_tensor(1.f, 0);
  const double qmin = -128, qmax = 127;
  const double scale = (hi - lo) / (qmax - qmin);
  const double from_min = qmin - lo / scale, from_max = qmax - hi / scale;
  const double zp = std::abs(qmin) + std::abs(lo / scale) < std::abs(qmax) + std::abs(hi / scale)
                        ? from_min
                        : from_max;
  return per_tensor(static_cast<float>(scale),
                    static_cast<int64_t>(std::round(std::max(qmin, std::min(qmax, zp)))));
}
// int8 with zero point 0 for the LSTM's output, which its hidden state variable shares: a
// runtime that clears variables to 0 bytes (rather than to the zero point) then starts from
// h = 0 as the float model does.
Params zero_centred_int8(Range r) {
  const double scale = std::max({std::fabs(static_cast<double>(r.lo)) / 128.0,
                                 std::fabs(static_cast<double>(r.hi)) / 127.0, 1e-9});
  return per_tensor(static_cast<float>(scale), 0);
}
// Symmetric int16 activations (16x8): zero point 0.
Params symmetric_int16(Range r) {
  const double m =
      std::max(std::fabs(static_cast<double>(r.lo)), std::fabs(static_cast<double>(r.hi)));
  return per_tensor(m > 0 ? static_cast<float>(m / 32767.0) : 1.f, 0);
}

template <typename T>
void append_bytes(std::vector<uint8_t>* out, const std::vector<T>& values) {
  out->resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(out->data(), values.data(), out->size());
}

// Symmetric int8 weights, one scale per slice along `dimension` (channels = 1: per tensor).
Params quantize_weights(const std::vector<float>& w, const std::vector<int32_t>& shape,
                        int32_t dimension, bool per_channel, std::vector<uint8_t>* out) {
  // Element i lies in channel (i / inner) % channels, inner = the product of the dims after
  // `dimension`.
  int64_t inner = 1;
  const int32_t channels = per_channel ? shape[static_cast<size_t>(dimension)] : 1;
  for (size_t d = static_cast<size_t>(dimension) + 1; d < shape.size(); ++d) inner *= shape[d];
  auto channel_of = [&](size_t i) {
    return per_channel ? static_cast<int32_t>((static_cast<int64_t>(i) / inner) % channels) : 0;
  };
  std::vector<float> max_abs(static_cast<size_t>(channels), 0.f);
  for (size_t i = 0; i < w.size(); ++i) {
    float& m = max_abs[static_cast<size_t>(channel_of(i))];
    m = std::max(m, std::fabs(w[i]));
  }
  Params p;
  p.dimension = per_channel ? dimension : 0;
  for (float m : max_abs) p.scale.push_back(m > 0 ? m / 127.f : 1.f);
  p.zero_point.assign(p.scale.size(), 0);
  std::vector<int8_t> q(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    const float v = std::round(w[i] / p.scale[static_cast<size_t>(channel_of(i))]);
    q[i] = static_cast<int8_t>(std::max(-127.f, std::min(127.f, v)));
  }
  append_bytes(out, q);
  return p;
}

// ---- The plan: which ops turn integer, which tensors carry integers -------------------------

enum class Kind { kWeighted, kFixedOutput, kSameScale, kOwnScale, kLstm, kWhile, kGru, kOther };

Kind kind_of(int32_t code, const std::string& name) {
  switch (static_cast<Op>(code)) {
    case Op::FULLY_CONNECTED:
    case Op::CONV_2D:
    case Op::DEPTHWISE_CONV_2D: return Kind::kWeighted;
    case Op::SOFTMAX:
    case Op::LOGISTIC:
    case Op::TANH: return Kind::kFixedOutput;
    case Op::RESHAPE:
    case Op::EXPAND_DIMS:
    case Op::SQUEEZE:
    case Op::STRIDED_SLICE:
    case Op::SLICE:
    case Op::GATHER:
    case Op::SPLIT:
    case Op::SPLIT_V:
    case Op::PACK:
    case Op::UNPACK:
    case Op::TRANSPOSE:
    case Op::CONCATENATION:
    case Op::MAX_POOL_2D:
    case Op::AVERAGE_POOL_2D: return Kind::kSameScale;
    case Op::ADD:
    case Op::SUB:
    case Op::MUL: return Kind::kOwnScale;
    case Op::UNIDIRECTIONAL_SEQUENCE_LSTM: return Kind::kLstm;
    case Op::WHILE: return Kind::kWhile;
    case Op::GRU: return Kind::kGru;
    default: return name == "GRUWB_GRU" ? Kind::kGru : Kind::kOther;
  }
}

// The rewrite keeps every GRU float between a DEQUANTIZE and a QUANTIZE; integer_grus() then
// turns each GRUWB_GRU into the integer GRU (gru_quantization.h) with its own QUANTIZE of x and
// DEQUANTIZE of h, so the int8 x it gets back from its neighbour's DEQUANTIZE is requantized
// at the same calibrated scale (exact) and only its output is rounded once more.
bool integer_gru_available(std::string* reason) {
  *reason = "the GRU stays float (DEQUANTIZE before, QUANTIZE after)";
  return false;
}

// One GRU op of the float model with its calibrated ranges, in file order per subgraph.
struct GruSite {
  int subgraph = 0;
  int nth = 0;  // among the subgraph's GRU ops
  Range x, h;
};

std::vector<GruSite> gru_sites(const ModelDef& def, const Calibration& calibration) {
  std::vector<GruSite> sites;
  for (size_t s = 0; s < def.subgraphs.size(); ++s) {
    int nth = 0;
    for (const auto& op : def.subgraphs[s]->operators) {
      const fb::OperatorCodeT& c = *def.operator_codes[op->opcode_index];
      if (c.custom_code != "GRUWB_GRU" || op->inputs.empty() || op->outputs.empty()) continue;
      GruSite site;
      site.subgraph = static_cast<int>(s);
      site.nth = nth++;
      const auto& ranges = calibration.ranges[s];
      const auto at = [&](int32_t t) {
        return t >= 0 && static_cast<size_t>(t) < ranges.size() ? ranges[static_cast<size_t>(t)]
                                                                : Range();
      };
      site.x = at(op->inputs[0]);
      site.h = at(op->outputs[0]);
      sites.push_back(site);
    }
  }
  return sites;
}

// Every GRUWB_GRU the samples reached becomes the integer GRU (int8 x: no GRU takes int16 x;
// int16x8: its int16 Q0.15 state as the output, an int16 activation); the outcome says which
// did and why the others stayed float.
void integer_grus(ModelDef* def, const std::vector<GruSite>& sites, bool int16_output,
                  QuantizeResult* result) {
  for (const GruSite& site : sites) {
    int nth = 0, index = -1;
    const auto& ops = def->subgraphs[static_cast<size_t>(site.subgraph)]->operators;
    for (size_t o = 0; o < ops.size() && index < 0; ++o) {
      if (def->operator_codes[ops[o]->opcode_index]->custom_code != "GRUWB_GRU") continue;
      if (nth++ == site.nth) index = static_cast<int>(o);
    }
    QuantizedOpOutcome* outcome = nullptr;
    for (QuantizedOpOutcome& op : result->ops) {
      if (op.subgraph == site.subgraph && op.name == "GRUWB_GRU" && !op.quantized) {
        outcome = &op;
        break;
      }
    }
    if (index < 0 || !outcome) continue;
    if (!site.x.seen()) {
      outcome->reason = "the GRU stays float: not reached by the representative samples";
      continue;
    }
    GruCalibration calibration;
    calibration.x_min = std::min(site.x.lo, 0.f);
    calibration.x_max = std::max(site.x.hi, 0.f);
    calibration.output_min = site.h.seen() ? std::min(site.h.lo, 0.f) : 0.f;
    calibration.output_max = site.h.seen() ? std::max(site.h.hi, 0.f) : 0.f;
    calibration.int16_output = int16_output;
    calibration.float_boundaries = true;
    // Weight and bias bytes (inputs 1-3) before and after, for the report's weight figures.
    const auto weight_bytes = [&](int at) {
      uint64_t bytes = 0;
      const fb::SubGraphT& sg = *def->subgraphs[static_cast<size_t>(site.subgraph)];
      const fb::OperatorT& op = *sg.operators[static_cast<size_t>(at)];
      for (size_t i = 1; i < op.inputs.size() && i <= 3; ++i) {
        if (op.inputs[i] < 0) continue;
        bytes += def->buffers[sg.tensors[static_cast<size_t>(op.inputs[i])]->buffer]->data.size();
      }
      return bytes;
    };
    const uint64_t before = weight_bytes(index);
    std::string why;
    if (quantize_gru_op(def, site.subgraph, index, calibration, &why)) {
      result->weight_bytes_before += before;
      // With float boundaries a QUANTIZE of x now precedes the op.
      const auto& moved = def->subgraphs[static_cast<size_t>(site.subgraph)]->operators;
      const bool shifted =
          def->operator_codes[moved[static_cast<size_t>(index)]->opcode_index]->custom_code !=
          "GRUWB_GRU";
      result->weight_bytes_after += weight_bytes(shifted ? index + 1 : index);
      outcome->quantized = true;
      outcome->reason = int16_output ? "integer GRU: int8 x and weights, int16 state and output"
                                     : "integer GRU: int8 x and weights, int16 state";
      outcome->engine_refuses = false;
    } else {
      outcome->reason = "the GRU stays float: " + why;
    }
  }
}

class Quantizer {
 public:
  Quantizer(ModelDef* def, const Calibration& calibration, const QuantizeOptions& options,
            QuantizeResult* result)
      : def_(*def), cal_(calibration), options_(options), result_(result) {
    int16_ = options.mode == QuantizeMode::kInt16x8;
    for (const auto& sg : def_.subgraphs) {
      first_.push_back(static_cast<int>(parent_.size()));
      integer_.emplace_back(sg->tensors.size(), 0);
      decision_.emplace_back(sg->operators.size(), 0);
      for (size_t t = 0; t < sg->tensors.size(); ++t)
        parent_.push_back(static_cast<int>(parent_.size()));
    }
    reached_.assign(def_.subgraphs.size(), 0);
    fixed_.resize(parent_.size());
  }

  void plan() {
    // Subgraph 0's inputs: integer only when asked (--integer-io).
    if (options_.integer_io) {
      for (int32_t t : def_.subgraphs[0]->inputs) {
        if (is_float_activation(0, t)) integer_[0][static_cast<size_t>(t)] = 1;
      }
    }
    plan_subgraph(0);
  }

  void rewrite() {
    for (size_t s = 0; s < def_.subgraphs.size(); ++s) {
      if (reached_[s]) rewrite_subgraph(static_cast<int>(s));
    }
  }

 private:
  TensorType activation_type() const { return int16_ ? TensorType::INT16 : TensorType::INT8; }
  fb::SubGraphT& sg(int s) { return *def_.subgraphs[static_cast<size_t>(s)]; }
  fb::TensorT& tensor(int s, int t) { return *sg(s).tensors[static_cast<size_t>(t)]; }
  bool is_float_activation(int s, int t) {
    if (t < 0) return false;
    const fb::TensorT& x = tensor(s, t);
    return x.type == TensorType::FLOAT32 && !is_constant(def_, x);
  }
  bool is_float_constant(int s, int t) {
    if (t < 0) return false;
    const fb::TensorT& x = tensor(s, t);
    return x.type == TensorType::FLOAT32 && is_constant(def_, x);
  }
  const Range& range(int s, int t) {
    return cal_.ranges[static_cast<size_t>(s)][static_cast<size_t>(t)];
  }
  int id(int s, int t) { return first_[static_cast<size_t>(s)] + t; }
  int find(int x) {
    while (parent_[static_cast<size_t>(x)] != x) {
      x = parent_[static_cast<size_t>(x)] =
          parent_[static_cast<size_t>(parent_[static_cast<size_t>(x)])];
    }
    return x;
  }
  // False when both sides carry different fixed quantizations (TFLite's kernels check them).
  bool unite(int a, int b) {
    a = find(a), b = find(b);
    if (a == b) return true;
    const Params* fa = fixed_[static_cast<size_t>(a)].get();
    const Params* fb_ = fixed_[static_cast<size_t>(b)].get();
    if (fa && fb_ && !(*fa == *fb_)) return false;
    parent_[static_cast<size_t>(b)] = a;
    if (!fa && fb_) fixed_[static_cast<size_t>(a)] = std::move(fixed_[static_cast<size_t>(b)]);
    return true;
  }
  void set_fixed(int s, int t, Params p) {
    fixed_[static_cast<size_t>(find(id(s, t)))] = std::make_unique<Params>(std::move(p));
  }

  // The quantization every member of a tensor's class shares: the fixed one of SOFTMAX,
  // LOGISTIC, TANH outputs, else from the union of the members' calibrated ranges (and
  // the values of constant members).
  Params class_params(int s, int t) {
    if (class_size_.empty()) gather_classes();
    const int root = find(id(s, t));
    if (fixed_[static_cast<size_t>(root)]) return *fixed_[static_cast<size_t>(root)];
    const Range& r = class_range_[root];
    return int16_ ? symmetric_int16(r) : asymmetric_int8(r);
  }
  void gather_classes() {
    for (size_t sx = 0; sx < def_.subgraphs.size(); ++sx) {
      const int s = static_cast<int>(sx);
      for (size_t tx = 0; tx < cal_.ranges[sx].size(); ++tx) {
        const int t = static_cast<int>(tx);
        const int root = find(id(s, t));
        ++class_size_[root];
        Range& r = class_range_[root];
        r.add(range(s, t));
        if (is_float_constant(s, t)) {
          for (float v : float_values(def_, tensor(s, t))) r.add(v);
        }
      }
    }
  }

  Params fixed_output(int32_t code) const {
    if (int16_) return per_tensor(1.f / 32768.f, 0);
    if (code == static_cast<int32_t>(Op::TANH)) return per_tensor(1.f / 128.f, 0);
    return per_tensor(1.f / 256.f, -128);  // SOFTMAX, LOGISTIC
  }

  void record(int s, int o, const std::string& name, bool quantized, const std::string& reason) {
    QuantizedOpOutcome outcome;
    outcome.subgraph = s;
    outcome.op = o;
    outcome.name = name;
    outcome.quantized = quantized;
    outcome.reason = reason;
    if (quantized) {
      const fb::OperatorT& op = *sg(s).operators[static_cast<size_t>(o)];
      const fb::OperatorCodeT& c = *def_.operator_codes[op.opcode_index];
      const KernelRegistration* k = all_ops().find(
          static_cast<int32_t>(c.builtin_code),
          static_cast<int32_t>(c.builtin_code) == kOpCustom ? c.custom_code.c_str() : nullptr);
      // Every op the plan turns integer has its int8 and int16 (16x8) form in our engine
      // when its registration says integer_activations (docs/integer-kernels.md).
      outcome.engine_refuses = !k || !k->integer_activations;
    }
    result_->ops.push_back(outcome);
  }

  // Why the op cannot turn integer ("" when it can).
  std::string why_float(int s, const fb::OperatorT& op, Kind kind) {
    std::string reason;
    if (kind == Kind::kGru) {
      if (!integer_gru_available(&reason)) return reason;
    }
    if (kind == Kind::kOther) return "no integer form in TFLite's quantizer";
    for (int32_t t : op.inputs) {
      if (is_float_activation(s, t) && !range(s, t).seen() && kind != Kind::kWhile) {
        return "not reached by the representative samples";
      }
    }
    switch (kind) {
      case Kind::kWeighted: {
        if (op.inputs.size() < 2 || !is_float_constant(s, op.inputs[1])) {
          return "its weights are not a float constant";
        }
        if (op.inputs.size() > 2 && op.inputs[2] >= 0 && !is_float_constant(s, op.inputs[2])) {
          return "its bias is not a float constant";
        }
        if (!is_float_activation(s, op.inputs[0])) return "its input is not a float activation";
        break;
      }
      case Kind::kSameScale: {
        for (int32_t t : op.inputs) {
          if (is_float_constant(s, t)) return "a float constant input";
          if (is_float_activation(s, t) &&
              !integer_[static_cast<size_t>(s)][static_cast<size_t>(t)]) {
            return "its input is float (data movement follows its input)";
          }
        }
        break;
      }
      case Kind::kLstm: {
        if (options_.mode != QuantizeMode::kInt8) return "TFLite's integer LSTM is 8x8->16 only";
        if (op.inputs.size() != 24) return "not the 24-input LSTM";
        for (int i = 1; i <= 8; ++i) {
          if (!is_float_constant(s, op.inputs[static_cast<size_t>(i)])) {
            return "a gate weight is missing or not a float constant (CIFG)";
          }
        }
        for (int i : {9, 10, 11, 16, 17, 20, 21, 22, 23}) {
          if (op.inputs[static_cast<size_t>(i)] >= 0) {
            return "peephole, projection or layer norm (only the Keras form is quantized)";
          }
        }
        for (int i = 12; i <= 15; ++i) {
          if (!is_float_constant(s, op.inputs[static_cast<size_t>(i)]))
            return "a gate bias is missing";
        }
        const auto* lstm = op.builtin_options.AsUnidirectionalSequenceLSTMOptions();
        if (!lstm || lstm->fused_activation_function != fb::ActivationFunctionType::TANH) {
          return "the cell activation is not TANH";
        }
        break;
      }
      default: break;
    }
    return "";
  }

  void plan_subgraph(int s) {
    if (reached_[static_cast<size_t>(s)]) return;
    reached_[static_cast<size_t>(s)] = 1;
    std::vector<char>& integer = integer_[static_cast<size_t>(s)];
    for (size_t o = 0; o < sg(s).operators.size(); ++o) {
      fb::OperatorT& op = *sg(s).operators[o];
      bool touches_float = false;
      for (int32_t t : op.inputs) touches_float |= is_float_activation(s, t);
      for (int32_t t : op.outputs) touches_float |= is_float_activation(s, t);
      const int32_t code = code_of(def_, op);
      const std::string name = name_of(def_, op);
      const Kind kind = kind_of(code, name);
      if (!touches_float) {
        if (kind == Kind::kWhile) plan_while(s, op);  // an integer loop: its body may hold floats
        continue;
      }
      std::string reason = why_float(s, op, kind);
      if (reason.empty() && kind == Kind::kLstm &&
          !cal_.lstm_cell_max.count({s, static_cast<int>(o)})) {
        reason = "not reached by the representative samples";
      }
      if (reason.empty() && kind == Kind::kSameScale) {
        // One quantization for the data in and out (TFLite: same scale as the input).
        const int first = op_data_input(op, code);
        for (int32_t t : op.inputs) {
          if (is_float_activation(s, t) && !unite(id(s, first), id(s, t))) {
            reason = "its inputs carry different fixed quantizations";
          }
        }
        for (int32_t t : op.outputs) {
          if (reason.empty() && is_float_activation(s, t) && !unite(id(s, first), id(s, t))) {
            reason = "its inputs carry different fixed quantizations";
          }
        }
      }
      if (reason.empty() && kind == Kind::kFixedOutput)
        set_fixed(s, op.outputs[0], fixed_output(code));
      if (reason.empty() && kind == Kind::kLstm) {
        set_fixed(s, op.outputs[0], zero_centred_int8(range(s, op.outputs[0])));
      }
      if (reason.empty() && kind == Kind::kWhile) plan_while(s, op);
      if (!reason.empty()) {
        decision_[static_cast<size_t>(s)][o] = 2;
        record(s, static_cast<int>(o), name, false, reason);
        continue;
      }
      decision_[static_cast<size_t>(s)][o] = 1;
      for (int32_t t : op.outputs) {
        if (is_float_activation(s, t)) integer[static_cast<size_t>(t)] = 1;
      }
      std::string note;
      if (kind == Kind::kLstm) {
        note = "8x8->16: int16 cell state 2^" +
               std::to_string(cell_exponent(cal_.lstm_cell_max.at({s, static_cast<int>(o)})) - 15);
      }
      record(s, static_cast<int>(o), name, true, note);
    }
  }
  static int op_data_input(const fb::OperatorT& op, int32_t code) {
    if (code == static_cast<int32_t>(Op::SPLIT)) return op.inputs[1];
    return op.inputs[0];
  }
  // The loop carries integers: every float value is one class across the WHILE's inputs and
  // outputs and the cond's and body's inputs and the body's outputs.
  void plan_while(int s, fb::OperatorT& op) {
    const fb::WhileOptionsT* w = op.builtin_options.AsWhileOptions();
    if (!w) return;
    const int cond = w->cond_subgraph_index, body = w->body_subgraph_index;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const int32_t t = op.inputs[i];
      if (tensor(s, t).type != TensorType::FLOAT32) continue;
      const int cls = id(s, t);
      if (i < op.outputs.size()) unite(cls, id(s, op.outputs[i]));
      for (int sub : {cond, body}) {
        if (i < sg(sub).inputs.size()) {
          const int32_t in = sg(sub).inputs[i];
          unite(cls, id(sub, in));
          integer_[static_cast<size_t>(sub)][static_cast<size_t>(in)] = 1;
        }
      }
      if (i < sg(body).outputs.size()) unite(cls, id(body, sg(body).outputs[i]));
    }
    plan_subgraph(cond);
    plan_subgraph(body);
  }
  static int cell_exponent(float max_abs) {
    int p = 0;  // the smallest power of two >= max |c| (TFLite: cell state scale 2^p / 2^15)
    while (p < 15 && std::ldexp(1.0f, p) < max_abs) ++p;
    return p;
  }

  // ---- Rewrite -----------------------------------------------------------------------------

  void set_params(fb::TensorT& t, TensorType type, const Params& p) {
    t.type = type;
    t.quantization = std::make_unique<fb::QuantizationParametersT>();
    t.quantization->scale = p.scale;
    t.quantization->zero_point = p.zero_point;
    t.quantization->quantized_dimension = p.dimension;
  }
  int new_constant(GraphWriter& g, const fb::TensorT& like, const std::string& suffix,
                   TensorType type, const std::vector<uint8_t>& bytes, const Params& p) {
    const int t =
        g.constant_bytes(like.name + suffix, like.shape, type, bytes.data(), bytes.size());
    set_params(*g.sg().tensors[static_cast<size_t>(t)], type, p);
    result_->weight_bytes_after += bytes.size();
    return t;
  }
  void count_float_weight(const fb::TensorT& t) {
    result_->weight_bytes_before += def_.buffers[t.buffer]->data.size();
  }
  // Bias at scale s_in * s_w[c]: int32, or int64 in 16x8 (TFLite's FC/conv).
  int quantize_bias(GraphWriter& g, int s, int b, float input_scale, const Params& w, bool wide) {
    const fb::TensorT& t = tensor(s, b);
    const std::vector<float> values = float_values(def_, t);
    count_float_weight(t);
    Params p;
    for (size_t c = 0; c < values.size(); ++c) {
      p.scale.push_back(input_scale * w.scale[w.scale.size() == 1 ? 0 : c]);
    }
    if (w.scale.size() == 1) p.scale.resize(1);
    p.zero_point.assign(p.scale.size(), 0);
    std::vector<int64_t> q(values.size());
    const double limit = wide ? 9.2e18 : 2147483647.0;
    for (size_t c = 0; c < values.size(); ++c) {
      const double scale = p.scale[p.scale.size() == 1 ? 0 : c];
      const double v = std::round(static_cast<double>(values[c]) / scale);
      q[c] = static_cast<int64_t>(std::max(-limit, std::min(limit, v)));
    }
    std::vector<uint8_t> bytes;
    if (wide) {
      append_bytes(&bytes, q);
    } else {
      append_bytes(&bytes, std::vector<int32_t>(q.begin(), q.end()));
    }
    return new_constant(g, t, "_quantized", wide ? TensorType::INT64 : TensorType::INT32, bytes, p);
  }
  int quantize_weight(GraphWriter& g, int s, int w, int32_t dimension, bool per_channel,
                      Params* p) {
    const fb::TensorT& t = tensor(s, w);
    count_float_weight(t);
    std::vector<uint8_t> bytes;
    *p = quantize_weights(float_values(def_, t), t.shape, dimension, per_channel, &bytes);
    return new_constant(g, t, "_quantized", TensorType::INT8, bytes, *p);
  }
  // A constant operand of ADD/SUB/MUL or a constant a loop starts from, as an activation.
  int quantize_constant_activation(GraphWriter& g, int s, int t) {
    const fb::TensorT& x = tensor(s, t);
    const std::vector<float> values = float_values(def_, x);
    Range r;
    for (float v : values) r.add(v);
    const int root = find(id(s, t));
    if (class_size_.empty()) gather_classes();
    const Params p = class_size_[root] > 1 || fixed_[static_cast<size_t>(root)]
                         ? class_params(s, t)
                         : (int16_ ? symmetric_int16(r) : asymmetric_int8(r));
    int32_t lo = 0, hi = 0;
    integer_range(activation_type(), &lo, &hi);
    std::vector<uint8_t> bytes;
    if (int16_) {
      std::vector<int16_t> q(values.size());
      for (size_t i = 0; i < values.size(); ++i) {
        q[i] = static_cast<int16_t>(
            std::max(lo, std::min(hi, quantize_value(values[i], p.scale[0], 0))));
      }
      append_bytes(&bytes, q);
    } else {
      std::vector<int8_t> q(values.size());
      for (size_t i = 0; i < values.size(); ++i) {
        const int32_t v =
            quantize_value(values[i], p.scale[0], static_cast<int32_t>(p.zero_point[0]));
        q[i] = static_cast<int8_t>(std::max(lo, std::min(hi, v)));
      }
      append_bytes(&bytes, q);
    }
    return new_constant(g, x, "_quantized", activation_type(), bytes, p);
  }
  struct Versions {
    std::map<int, int> integer, real;  // original float tensor -> its integer / float form
  };

  int integer_form(GraphWriter& g, int s, int t, Versions& v) {
    auto it = v.integer.find(t);
    if (it != v.integer.end()) return it->second;
    int q;
    if (is_float_constant(s, t)) {
      q = quantize_constant_activation(g, s, t);
    } else {
      const fb::TensorT& x = tensor(s, t);
      q = g.tensor(x.name + "_quantized", x.shape, activation_type());
      set_params(tensor(s, q), activation_type(), class_params(s, t));
      g.op(Op::QUANTIZE, {t}, {q});
    }
    return v.integer[t] = q;
  }
  int float_form(GraphWriter& g, int s, int t, Versions& v) {
    auto it = v.real.find(t);
    if (it != v.real.end()) return it->second;
    const fb::TensorT& x = tensor(s, t);
    const int f = g.tensor(x.name + "_dequantized", x.shape, TensorType::FLOAT32);
    g.op(Op::DEQUANTIZE, {v.integer.at(t)}, {f});
    return v.real[t] = f;
  }

  void rewrite_subgraph(int s) {
    GraphWriter g(&def_, s);
    Versions v;
    const size_t tensor_count = sg(s).tensors.size();
    std::vector<char> was_float(tensor_count);
    for (size_t t = 0; t < tensor_count; ++t)
      was_float[t] = is_float_activation(s, static_cast<int>(t));
    const bool main_float_io = s == 0 && !options_.integer_io;
    std::set<int> main_outputs;
    if (main_float_io) main_outputs.insert(sg(0).outputs.begin(), sg(0).outputs.end());
    // Integer in place, except float model outputs: their producer writes a new integer
    // tensor and a DEQUANTIZE gives the output its float value under the original index.
    std::map<int, int> redirected;
    for (size_t t = 0; t < tensor_count; ++t) {
      if (!integer_[static_cast<size_t>(s)][t]) continue;
      const int ti = static_cast<int>(t);
      const Params p = class_params(s, ti);
      if (main_outputs.count(ti)) {
        const int q =
            g.tensor(tensor(s, ti).name + "_quantized", tensor(s, ti).shape, activation_type());
        set_params(tensor(s, q), activation_type(), p);
        redirected[ti] = q;
        v.integer[ti] = q;
        v.real[ti] = ti;
      } else {
        set_params(tensor(s, ti), activation_type(), p);
        v.integer[ti] = ti;
      }
    }
    std::vector<std::unique_ptr<fb::OperatorT>> ops = std::move(sg(s).operators);
    sg(s).operators.clear();
    for (size_t o = 0; o < ops.size(); ++o) {
      std::unique_ptr<fb::OperatorT> op = std::move(ops[o]);
      const int decision = decision_[static_cast<size_t>(s)][o];
      std::vector<std::pair<int, int>> after;  // DEQUANTIZE (integer, float) after the op
      if (decision == 1) {
        quantize_op(g, s, *op, v, was_float);
        for (int32_t& t : op->outputs) {
          auto r = redirected.find(t);
          if (r != redirected.end()) after.emplace_back(r->second, t), t = r->second;
        }
      } else {
        for (int32_t& t : op->inputs) {
          if (t >= 0 && was_float[static_cast<size_t>(t)] && v.integer.count(t)) {
            t = float_form(g, s, t, v);
          }
        }
      }
      sg(s).operators.push_back(std::move(op));
      for (const auto& [q, f] : after) g.op(Op::DEQUANTIZE, {q}, {f});
    }
    // Outputs: the model's as asked (float, or integer with --integer-io), a loop body's as
    // its inputs (integer where the loop carries integers).
    for (size_t i = 0; i < sg(s).outputs.size(); ++i) {
      int32_t& t = sg(s).outputs[i];
      if (t < 0 || t >= static_cast<int32_t>(tensor_count)) continue;
      if (!was_float[static_cast<size_t>(t)] && !is_float_constant(s, t)) continue;
      const bool want_integer = wants_integer_output(s, i);
      const bool is_integer = v.integer.count(t) && v.integer.at(t) == t;
      if (want_integer && !is_integer) {
        const int q = integer_form(g, s, t, v);
        rename_signature(s, t, q, false);
        t = q;
      } else if (!want_integer && is_integer) {
        const int f = float_form(g, s, t, v);
        rename_signature(s, t, f, false);
        t = f;
      }
    }
  }
  bool wants_integer_output(int s, size_t i) {
    if (s == 0) return options_.integer_io;
    const fb::SubGraphT& body = sg(s);
    return i < body.inputs.size() && body.inputs[i] >= 0 &&
           integer_[static_cast<size_t>(s)][static_cast<size_t>(body.inputs[i])];
  }
  void rename_signature(int s, int from, int to, bool input) {
    for (auto& sig : def_.signature_defs) {
      if (static_cast<int>(sig->subgraph_index) != s) continue;
      for (auto& m : input ? sig->inputs : sig->outputs) {
        if (static_cast<int>(m->tensor_index) == from) m->tensor_index = static_cast<uint32_t>(to);
      }
    }
  }

  void quantize_op(GraphWriter& g, int s, fb::OperatorT& op, Versions& v,
                   const std::vector<char>& was_float) {
    const int32_t code = code_of(def_, op);
    const Kind kind = kind_of(code, name_of(def_, op));
    if (kind == Kind::kLstm) return quantize_lstm(g, s, op, v);
    // The integer GRU goes here (engine/tools/gru_quantization) when integer_gru_available()
    // says so; until then the plan keeps every GRU float and this is never reached for one.
    const size_t data_inputs = kind == Kind::kWeighted ? 1 : op.inputs.size();
    for (size_t i = 0; i < data_inputs; ++i) {
      int32_t& t = op.inputs[i];
      if (t < 0) continue;
      if ((static_cast<size_t>(t) < was_float.size() && was_float[static_cast<size_t>(t)]) ||
          is_float_constant(s, t)) {
        t = integer_form(g, s, t, v);
      }
    }
    if (kind != Kind::kWeighted) return;
    const bool depthwise = code == static_cast<int32_t>(Op::DEPTHWISE_CONV_2D);
    const int32_t dimension =
        depthwise ? static_cast<int32_t>(tensor(s, op.inputs[1]).shape.size()) - 1 : 0;
    const float input_scale = tensor(s, op.inputs[0]).quantization->scale[0];
    Params w;
    op.inputs[1] = quantize_weight(g, s, op.inputs[1], dimension, options_.per_channel, &w);
    if (op.inputs.size() > 2 && op.inputs[2] >= 0) {
      op.inputs[2] = quantize_bias(g, s, op.inputs[2], input_scale, w, int16_);
    }
  }

  // TFLite's 8x8->16 LSTM: int8 input/output/hidden state, int16 cell state at a power-of-two
  // scale, per-tensor int8 weights, int32 biases at s_x * s_w, and the five intermediates
  // TFLite's quantizer attaches (gate matmul outputs without layer norm: float, unused; the
  // effective hidden scale: the output's quantization).
  void quantize_lstm(GraphWriter& g, int s, fb::OperatorT& op, Versions& v) {
    op.inputs[0] = integer_form(g, s, op.inputs[0], v);
    const float input_scale = tensor(s, op.inputs[0]).quantization->scale[0];
    Params gate_w[4];
    for (int i = 1; i <= 8; ++i) {
      Params p;
      op.inputs[static_cast<size_t>(i)] =
          quantize_weight(g, s, op.inputs[static_cast<size_t>(i)], 0, false, &p);
      if (i <= 4) gate_w[i - 1] = p;
    }
    for (int i = 12; i <= 15; ++i) {
      op.inputs[static_cast<size_t>(i)] = quantize_bias(g, s, op.inputs[static_cast<size_t>(i)],
                                                        input_scale, gate_w[i - 12], false);
    }
    const Params out = class_params(s, op.outputs[0]);
    set_params(tensor(s, op.inputs[18]), TensorType::INT8, out);
    const float max_c = cell_max_for(s, op);
    set_params(tensor(s, op.inputs[19]), TensorType::INT16,
               per_tensor(std::ldexp(1.f, cell_exponent(max_c) - 15), 0));
    op.intermediates.clear();
    for (const char* name : {"input_to_input_intermediate", "input_to_forget_intermediate",
                             "input_to_cell_intermediate", "input_to_output_intermediate"}) {
      op.intermediates.push_back(g.tensor(name, {0}, TensorType::FLOAT32));
    }
    const int hidden = g.tensor("effective_hidden_scale_intermediate", {0}, TensorType::INT8);
    set_params(tensor(s, hidden), TensorType::INT8, out);
    op.intermediates.push_back(hidden);
  }
  float cell_max_for(int s, const fb::OperatorT& op) {
    // Original op index: the op's position before the rewrite moved it.
    auto it = lstm_index_.find(&op);
    return it == lstm_index_.end() ? 0.f : cal_.lstm_cell_max.at({s, it->second});
  }

 public:
  void index_lstms() {
    for (size_t s = 0; s < def_.subgraphs.size(); ++s) {
      for (size_t o = 0; o < sg(static_cast<int>(s)).operators.size(); ++o) {
        const auto key = std::make_pair(static_cast<int>(s), static_cast<int>(o));
        if (cal_.lstm_cell_max.count(key))
          lstm_index_[sg(static_cast<int>(s)).operators[o].get()] = key.second;
      }
    }
  }

 private:
  ModelDef& def_;
  const Calibration& cal_;
  QuantizeOptions options_;
  QuantizeResult* result_;
  bool int16_ = false;
  std::vector<int> first_;                  // subgraph -> first class id
  std::vector<std::vector<char>> integer_;  // [subgraph][tensor]: carries integers in place
  std::vector<std::vector<int>> decision_;  // [subgraph][op]: 0 untouched, 1 integer, 2 float
  std::vector<char> reached_;
  std::vector<int> parent_;
  std::vector<std::unique_ptr<Params>> fixed_;
  std::map<int, Range> class_range_;
  std::map<int, int> class_size_;
  std::map<const fb::OperatorT*, int> lstm_index_;
};

// ---- Dynamic range (hybrid) ------------------------------------------------------------------

void quantize_dynamic(ModelDef* def, bool fc_per_channel, QuantizeResult* result) {
  for (size_t s = 0; s < def->subgraphs.size(); ++s) {
    GraphWriter g(def, static_cast<int>(s));
    for (size_t o = 0; o < def->subgraphs[s]->operators.size(); ++o) {
      fb::OperatorT& op = *def->subgraphs[s]->operators[o];
      const int32_t code = code_of(*def, op);
      const std::string name = name_of(*def, op);
      std::vector<int> weights;
      bool per_channel = false;
      if (code == static_cast<int32_t>(Op::FULLY_CONNECTED)) {
        weights = {1};
        per_channel = fc_per_channel;
      } else if (code == static_cast<int32_t>(Op::UNIDIRECTIONAL_SEQUENCE_LSTM)) {
        weights = {1, 2, 3, 4, 5, 6, 7, 8};  // TFLite's hybrid LSTM reads one scale per tensor
      } else if (code == static_cast<int32_t>(Op::UNIDIRECTIONAL_SEQUENCE_RNN)) {
        weights = {1, 2};
      }
      bool any_float = false;
      for (int32_t t : op.inputs) {
        any_float |= t >= 0 && def->subgraphs[s]->tensors[static_cast<size_t>(t)]->type ==
                                   TensorType::FLOAT32;
      }
      if (!any_float) continue;
      QuantizedOpOutcome outcome;
      outcome.subgraph = static_cast<int>(s);
      outcome.op = static_cast<int>(o);
      outcome.name = name;
      if (kind_of(code, name) == Kind::kGru && !integer_gru_available(&outcome.reason)) {
        result->ops.push_back(outcome);
        continue;
      }
      int done = 0;
      for (int i : weights) {
        if (static_cast<size_t>(i) >= op.inputs.size() || op.inputs[static_cast<size_t>(i)] < 0) {
          continue;
        }
        const fb::TensorT& w =
            *def->subgraphs[s]->tensors[static_cast<size_t>(op.inputs[static_cast<size_t>(i)])];
        if (w.type != TensorType::FLOAT32 || !is_constant(*def, w)) continue;
        std::vector<uint8_t> bytes;
        result->weight_bytes_before += def->buffers[w.buffer]->data.size();
        const Params p = quantize_weights(float_values(*def, w), w.shape, 0, per_channel, &bytes);
        const int q = g.constant_bytes(w.name + "_quantized", w.shape, TensorType::INT8,
                                       bytes.data(), bytes.size());
        fb::TensorT& qt = *def->subgraphs[s]->tensors[static_cast<size_t>(q)];
        qt.quantization = std::make_unique<fb::QuantizationParametersT>();
        qt.quantization->scale = p.scale;
        qt.quantization->zero_point = p.zero_point;
        qt.quantization->quantized_dimension = p.dimension;
        result->weight_bytes_after += bytes.size();
        op.inputs[static_cast<size_t>(i)] = q;
        ++done;
      }
      outcome.quantized = done > 0;
      if (!outcome.quantized && outcome.reason.empty()) {
        outcome.reason = weights.empty() ? "no hybrid form (activations stay float)"
                                         : "its weights are not float constants";
      }
      if (outcome.quantized) outcome.reason = "hybrid: int8 weights, float activations";
      if (!weights.empty() || !outcome.reason.empty()) result->ops.push_back(outcome);
    }
  }
}

// Largest output difference float vs quantized over the samples, on our engine.
bool measure_difference(const Model& float_model, const Model& quantized,
                        const std::vector<RepresentativeSample>& samples, double* max_diff,
                        std::string* error) {
  ModelRunner a, b;
  if (!a.prepare(float_model, error)) return false;
  if (!b.prepare(quantized, error)) return false;
  *max_diff = 0;
  for (size_t s = 0; s < samples.size(); ++s) {
    if (!set_float_inputs(a, samples[s], s, error) || !set_float_inputs(b, samples[s], s, error)) {
      return false;
    }
    a.interpreter().reset_variables();
    b.interpreter().reset_variables();
    if (!a.invoke(error) || !b.invoke(error)) return false;
    for (int o = 0; o < a.output_count() && o < b.output_count(); ++o) {
      const std::vector<float> x = float_output(a.interpreter(), o);
      const std::vector<float> y = float_output(b.interpreter(), o);
      for (size_t k = 0; k < x.size() && k < y.size(); ++k) {
        *max_diff = std::max(*max_diff, std::fabs(static_cast<double>(x[k]) - y[k]));
      }
    }
  }
  return true;
}

}  // namespace

const char* quantize_mode_name(QuantizeMode mode) {
  switch (mode) {
    case QuantizeMode::kInt8: return "int8";
    case QuantizeMode::kInt16x8: return "int16x8";
    case QuantizeMode::kDynamic: return "dynamic";
  }
  return "?";
}

bool parse_quantize_mode(const std::string& text, QuantizeMode* out) {
  for (QuantizeMode m : {QuantizeMode::kInt8, QuantizeMode::kInt16x8, QuantizeMode::kDynamic}) {
    if (text == quantize_mode_name(m)) return *out = m, true;
  }
  return false;
}

int QuantizeResult::quantized_count() const {
  return static_cast<int>(std::count_if(ops.begin(), ops.end(),
                                        [](const QuantizedOpOutcome& o) { return o.quantized; }));
}
int QuantizeResult::float_count() const { return static_cast<int>(ops.size()) - quantized_count(); }

bool quantize_model(const std::vector<uint8_t>& bytes,
                    const std::vector<RepresentativeSample>& samples,
                    const QuantizeOptions& options, QuantizeResult* result, std::string* error) {
  *result = QuantizeResult();
  if (samples.empty()) return *error = "no representative samples", false;
  // Hybrid weights go back to float first: the quantizer starts from a float model.
  std::vector<uint8_t> float_bytes;
  DequantizeResult dequantized;
  if (!dequantize_hybrid_model(bytes, &float_bytes, &dequantized, error)) return false;
  Model model;
  Status loaded = Model::load(float_bytes.data(), float_bytes.size(), &model);
  if (!loaded.ok()) return *error = std::string("invalid model: ") + loaded.message(), false;
  ModelDef def;
  if (!unpack_model(model, &def, error)) return false;
  if (has_integer_activations(def)) {
    *error = "the model already has integer activations (it is quantized)";
    return false;
  }
  if (!measure_model(bytes, &result->before, error)) return false;
  result->samples = static_cast<int>(samples.size());
  if (options.mode == QuantizeMode::kDynamic) {
    quantize_dynamic(&def, options.per_channel, result);
  } else {
    Calibration calibration;
    if (!calibrate(model, def, samples, &calibration, error)) return false;
    const std::vector<GruSite> grus = gru_sites(def, calibration);
    Quantizer quantizer(&def, calibration, options, result);
    quantizer.index_lstms();
    quantizer.plan();
    quantizer.rewrite();
    integer_grus(&def, grus, options.mode == QuantizeMode::kInt16x8, result);
    // The plan visits a loop's body before the rest of its caller: report in file order.
    std::stable_sort(result->ops.begin(), result->ops.end(),
                     [](const QuantizedOpOutcome& a, const QuantizedOpOutcome& b) {
                       return a.subgraph != b.subgraph ? a.subgraph < b.subgraph : a.op < b.op;
                     });
  }
  remove_unused(&def);
  if (!write_model(def, options.format, &result->bytes, error)) return false;
  Model quantized;
  Status check = Model::load(result->bytes.data(), result->bytes.size(), &quantized);
  if (!check.ok()) {
    *error = std::string("the quantized model does not validate: ") + check.message();
    return false;
  }
  std::string note;
  if (!measure_model(result->bytes, &result->after, &note)) result->after.arena_error = note;
  result->diff_measured =
      measure_difference(model, quantized, samples, &result->max_abs_diff, &result->diff_note);
  if (!result->diff_measured) result->diff_note = "not measured: " + result->diff_note;
  return true;
}

}  // namespace gruwb::tools
