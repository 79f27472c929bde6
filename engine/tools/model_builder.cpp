#include "engine/tools/model_builder.h"

#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include "engine/tools/analyzer.h"
#include "engine/tools/graph_writer.h"
#include "engine/tools/initializers.h"
#include "engine/tools/model_runner.h"

namespace gruwb::tools {
namespace {

using fb::ActivationFunctionType;
using fb::TensorType;

std::vector<float> zeros(size_t n) { return std::vector<float>(n, 0.f); }

// ---- Cells ----------------------------------------------------------------------

bool is_legacy(const BuildSpec& s) {
  return s.cell->has_legacy_body && s.gru_variant == GruVariant::kLegacy;
}

CellState zero_state(GraphWriter& g, const BuildSpec& s, const std::string& p) {
  const size_t h = static_cast<size_t>(s.units);
  CellState state;
  state.h = g.constant(p + "zeros_h", {1, s.units}, zeros(h));
  if (s.cell->states == 2) state.c = g.constant(p + "zeros_c", {1, s.units}, zeros(h));
  return state;
}

// ---- Layout: fused ---------------------------------------------------------------

int build_fused(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  FusedCell cell;
  cell.config = cell_config(s);
  cell.weights = &w;
  cell.timesteps = s.timesteps;
  cell.format = s.format;
  FusedPlan plan;
  plan.time_major = s.cell->fused_needs_time_major(cell.config, s.format, false);
  plan.input = plan.time_major
                   ? transpose_time_major(g, x, std::string(s.cell->layer_name) + "/time_major")
                   : x;
  s.cell->emit_fused(g, cell, &plan);
  return plan.h_final;
}

// ---- Layout: while -------------------------------------------------------------
// Loop values in the converter's order: counter, time, output accumulator, h
// (, c), (trip count: legacy GRU, as the older real model has it), sequence.

struct LoopLayout {
  int counter = 0, time = 1, accumulator = 2, h = 3, c = -1, trip = -1, sequence = -1;
  int count = 0;
};

LoopLayout loop_layout(const BuildSpec& s) {
  LoopLayout l;
  int next = 4;
  if (s.cell->states == 2) l.c = next++;
  if (is_legacy(s)) l.trip = next++;
  l.sequence = next++;
  l.count = next;
  return l;
}

// The modern bodies keep only the last output ([1,1,H], a RESHAPE of h); the
// legacy body keeps every step ([T,1,H]).
int accumulator_steps(const BuildSpec& s) { return is_legacy(s) ? s.timesteps : 1; }

struct LoopValue {
  std::string name;
  Dims shape;
  TensorType type;
};

std::vector<LoopValue> loop_values(const BuildSpec& s, const LoopLayout& l) {
  std::vector<LoopValue> v(static_cast<size_t>(l.count));
  v[l.counter] = {"loop_counter", {}, TensorType::INT32};
  v[l.time] = {"time", {}, TensorType::INT32};
  v[l.accumulator] = {
      "output_accumulator", {accumulator_steps(s), 1, s.units}, TensorType::FLOAT32};
  v[l.h] = {"h", {1, s.units}, TensorType::FLOAT32};
  if (l.c >= 0) v[l.c] = {"c", {1, s.units}, TensorType::FLOAT32};
  if (l.trip >= 0) v[l.trip] = {"trip_count", {}, TensorType::INT32};
  v[l.sequence] = {"sequence", {s.timesteps, 1, s.features}, TensorType::FLOAT32};
  return v;
}

std::vector<int> loop_inputs(GraphWriter& g, const std::vector<LoopValue>& values,
                             const std::string& p) {
  std::vector<int> inputs;
  for (const LoopValue& v : values) {
    inputs.push_back(g.tensor(p + v.name, v.shape, v.type));
    g.sg().inputs.push_back(inputs.back());
  }
  return inputs;
}

void build_cond(GraphWriter& g, const BuildSpec& s, const std::vector<LoopValue>& values,
                const LoopLayout& l, const std::string& p) {
  std::vector<int> in = loop_inputs(g, values, p);
  int limit = l.trip >= 0 ? in[l.trip] : g.constant_i32(p + "timesteps", {}, {s.timesteps});
  int more = g.tensor(p + "less", {}, TensorType::BOOL);
  g.op(BuiltinOperator::LESS, {in[l.time], limit}, {more}, fb::LessOptionsT());
  g.sg().outputs.push_back(more);
}

// The accumulator after writing h: RESHAPE for the last-output form; for the
// legacy [T,1,H] form a shift (drop the oldest step, append h), which after T
// steps holds every output in order and, unlike the converter's
// SLICE(acc, 0, time) lowering, keeps all shapes static.
int update_accumulator(GraphWriter& g, const BuildSpec& s, int accumulator, int h,
                       const std::string& p) {
  int item = reshape(g, h, {1, 1, s.units}, p + "output_item");
  const int steps = accumulator_steps(s);
  if (steps == 1) return item;
  int older = g.tensor(p + "older_outputs", {steps - 1, 1, s.units});
  g.op(BuiltinOperator::SLICE,
       {accumulator, g.constant_i32(p + "slice_begin", {3}, {1, 0, 0}),
        g.constant_i32(p + "slice_size", {3}, {steps - 1, 1, s.units})},
       {older}, fb::SliceOptionsT());
  int out = g.tensor(p + "outputs", {steps, 1, s.units});
  fb::ConcatenationOptionsT options;
  options.axis = 0;
  g.op(BuiltinOperator::CONCATENATION, {older, item}, {out}, options);
  return out;
}

void build_body(GraphWriter& g, const BuildSpec& s, const RnnWeights& w,
                const std::vector<LoopValue>& values, const LoopLayout& l, const std::string& p) {
  std::vector<int> in = loop_inputs(g, values, p);
  std::vector<int> out = in;  // loop-invariant values pass through
  const CellConfig config = cell_config(s);
  StepConstants k = s.cell->add_constants(g, config, w, p);
  out[l.counter] =
      binary(g, BuiltinOperator::ADD, in[l.counter], g.scalar_i32(1), p + "counter_next");
  out[l.time] = binary(g, BuiltinOperator::ADD, in[l.time], g.scalar_i32(1), p + "time_next");
  int x = g.tensor(p + "x", {1, s.features});
  fb::GatherOptionsT gather;
  gather.axis = 0;
  g.op(BuiltinOperator::GATHER, {in[l.sequence], in[l.time]}, {x}, gather);
  CellState next = s.cell->step(g, config, k, x, {in[l.h], l.c >= 0 ? in[l.c] : -1}, p);
  out[l.h] = next.h;
  if (l.c >= 0) out[l.c] = next.c;
  out[l.accumulator] = update_accumulator(g, s, in[l.accumulator], next.h, p);
  g.sg().outputs = out;
}

int build_while(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  const std::string layer = s.cell->layer_name;
  const std::string p = layer + "/";
  const LoopLayout l = loop_layout(s);
  const std::vector<LoopValue> values = loop_values(s, l);
  const int main = g.current();
  std::vector<int> init(static_cast<size_t>(l.count));
  init[l.sequence] = transpose_time_major(g, x, p + "time_major");
  init[l.counter] = g.constant_i32(p + "while/loop_counter", {}, {0});
  init[l.time] = g.constant_i32(p + "time", {}, {0});
  const int acc_values = accumulator_steps(s) * s.units;
  init[l.accumulator] = g.constant(p + "output_accumulator", {accumulator_steps(s), 1, s.units},
                                   zeros(static_cast<size_t>(acc_values)));
  CellState state = zero_state(g, s, p);
  init[l.h] = state.h;
  if (l.c >= 0) init[l.c] = state.c;
  if (l.trip >= 0) init[l.trip] = g.constant_i32(p + "while/maximum_iterations", {}, {s.timesteps});
  std::vector<int> result;
  for (const LoopValue& v : values)
    result.push_back(g.tensor(p + "while:" + v.name, v.shape, v.type));

  fb::WhileOptionsT options;
  options.cond_subgraph_index = g.add_subgraph(layer + "_while_cond");
  options.body_subgraph_index = g.add_subgraph(layer + "_while_body");
  g.op(BuiltinOperator::WHILE, init, result, options);
  g.use(options.cond_subgraph_index);
  build_cond(g, s, values, l, p + "while/");
  g.use(options.body_subgraph_index);
  build_body(g, s, w, values, l, p + "while/");
  g.use(main);
  return last_step(g, result[l.accumulator], 0, p + "last");
}

// ---- Layout: unrolled ----------------------------------------------------------

int build_unrolled(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  const std::string p = std::string(s.cell->layer_name) + "/";
  const CellConfig config = cell_config(s);
  int seq = transpose_time_major(g, x, p + "time_major");
  std::vector<int> steps;
  for (int t = 0; t < s.timesteps; ++t) {
    steps.push_back(g.tensor(p + "unstack:" + std::to_string(t), {1, s.features}));
  }
  fb::UnpackOptionsT unpack;
  unpack.num = s.timesteps;
  unpack.axis = 0;
  g.op(BuiltinOperator::UNPACK, {seq}, steps, unpack);
  CellState state = zero_state(g, s, p);
  StepConstants shared;
  if (s.unrolled_shared_weights) shared = s.cell->add_constants(g, config, w, p);
  for (int t = 0; t < s.timesteps; ++t) {
    const std::string step = p + "step_" + std::to_string(t) + "/";
    StepConstants k =
        s.unrolled_shared_weights ? shared : s.cell->add_constants(g, config, w, step);
    state = s.cell->step(g, config, k, steps[static_cast<size_t>(t)], state, step);
  }
  return state.h;
}

// ---- Model -----------------------------------------------------------------------

// Keras Normalization: (x - mean) / max(sqrt(var), epsilon), as SUB and MUL.
int normalize(GraphWriter& g, const BuildSpec& s, int x) {
  if (s.mean.empty()) return x;
  std::vector<float> inverse_std;
  for (float v : s.variance) {
    inverse_std.push_back(static_cast<float>(1.0 / std::max(std::sqrt(double{v}), 1e-7)));
  }
  int mean = g.constant("normalization/mean", {s.features}, s.mean);
  int scale = g.constant("normalization/inverse_std", {s.features}, inverse_std);
  int centered = binary(g, BuiltinOperator::SUB, x, mean, "normalization/sub");
  return binary(g, BuiltinOperator::MUL, centered, scale, "normalization/mul");
}

int dense_head(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int h) {
  int in = s.units;
  for (size_t i = 0; i < w.dense.size(); ++i) {
    const bool last = i + 1 == w.dense.size();
    const std::string p = "dense_" + std::to_string(i) + "/";
    const int units = last ? s.classes : s.dense[i];
    int kernel = g.constant(p + "kernel", {units, in}, w.dense[i].kernel);
    int bias = g.constant(p + "bias", {units}, w.dense[i].bias);
    h = fully_connected(g, h, kernel, bias, p + (last ? "logits" : "relu"),
                        last ? ActivationFunctionType::NONE : ActivationFunctionType::RELU);
    in = units;
  }
  int out = g.tensor("output", {1, s.classes});
  fb::SoftmaxOptionsT softmax;
  softmax.beta = 1.f;
  g.op(BuiltinOperator::SOFTMAX, {h}, {out}, softmax);
  return out;
}

void add_signature(ModelDef* def, int input, int output) {
  auto signature = std::make_unique<fb::SignatureDefT>();
  signature->signature_key = "serving_default";
  signature->subgraph_index = 0;
  auto in = std::make_unique<fb::TensorMapT>();
  in->name = "input";
  in->tensor_index = static_cast<uint32_t>(input);
  signature->inputs.push_back(std::move(in));
  auto out = std::make_unique<fb::TensorMapT>();
  out->name = "output";
  out->tensor_index = static_cast<uint32_t>(output);
  signature->outputs.push_back(std::move(out));
  def->signature_defs.push_back(std::move(signature));
}

std::string describe(const BuildSpec& s) {
  return std::string("gruwb build: ") + s.cell->layer_name + " " + rnn_layout_name(s.layout) +
         " T=" + std::to_string(s.timesteps) + " F=" + std::to_string(s.features) +
         " H=" + std::to_string(s.units) + " C=" + std::to_string(s.classes);
}

bool positive(int value, const char* field, std::string* error) {
  if (value >= 1 && value <= 100000) return true;
  *error = std::string(field) + " " + std::to_string(value) + " is out of range (1..100000)";
  return false;
}

bool check_size(const std::vector<float>& v, size_t expected, const char* what,
                std::string* error) {
  if (v.size() == expected) return true;
  *error = std::string("weights: ") + what + " has " + std::to_string(v.size()) +
           " values, expected " + std::to_string(expected);
  return false;
}

}  // namespace

// ---- Public API --------------------------------------------------------------------

const char* rnn_layout_name(RnnLayout layout) {
  switch (layout) {
    case RnnLayout::kFused: return "fused";
    case RnnLayout::kWhile: return "while";
    case RnnLayout::kUnrolled: return "unrolled";
  }
  return "?";
}

const char* gru_variant_name(GruVariant variant) {
  return variant == GruVariant::kModern ? "modern" : "legacy";
}

const char* bias_init_name(BiasInit init) {
  switch (init) {
    case BiasInit::kKeras: return "keras";
    case BiasInit::kZeros: return "zeros";
    case BiasInit::kUniform: return "uniform";
  }
  return "?";
}

bool parse_rnn_layout(const std::string& text, RnnLayout* out) {
  for (RnnLayout l : {RnnLayout::kFused, RnnLayout::kWhile, RnnLayout::kUnrolled}) {
    if (text == rnn_layout_name(l)) return *out = l, true;
  }
  return false;
}

bool parse_gru_variant(const std::string& text, GruVariant* out) {
  for (GruVariant v : {GruVariant::kModern, GruVariant::kLegacy}) {
    if (text == gru_variant_name(v)) return *out = v, true;
  }
  return false;
}

bool parse_bias_init(const std::string& text, BiasInit* out) {
  for (BiasInit b : {BiasInit::kKeras, BiasInit::kZeros, BiasInit::kUniform}) {
    if (text == bias_init_name(b)) return *out = b, true;
  }
  return false;
}

CellConfig cell_config(const BuildSpec& s) {
  CellConfig c;
  c.features = s.features;
  c.units = s.units;
  c.reset_after = s.reset_after;
  c.legacy = is_legacy(s);
  c.gate_activation = c.legacy ? "hard_sigmoid" : "sigmoid";
  return c;
}

const char* fused_op_name(const BuildSpec& spec) {
  return spec.cell->fused_op(cell_config(spec), spec.format, false);
}

bool check_spec(const BuildSpec& s, std::string* error) {
  if (!positive(s.timesteps, "timesteps", error) || !positive(s.features, "features", error) ||
      !positive(s.units, "units", error) || !positive(s.classes, "classes", error)) {
    return false;
  }
  for (int units : s.dense) {
    if (!positive(units, "dense layer size", error)) return false;
  }
  if (s.mean.size() != s.variance.size() ||
      (!s.mean.empty() && s.mean.size() != static_cast<size_t>(s.features))) {
    *error = "normalization needs one mean and one variance per feature (" +
             std::to_string(s.features) + "), got " + std::to_string(s.mean.size()) +
             " means and " + std::to_string(s.variance.size()) + " variances";
    return false;
  }
  for (size_t i = 0; i < s.variance.size(); ++i) {
    if (!(s.variance[i] >= 0.f) || !std::isfinite(s.mean[i]) || !std::isfinite(s.variance[i])) {
      *error = "normalization of feature " + std::to_string(i) +
               ": mean and variance must be finite and the variance >= 0";
      return false;
    }
  }
  if (!s.cell) {
    *error = "no cell type";
    return false;
  }
  if (const std::string problem = s.cell->check(cell_config(s)); !problem.empty()) {
    *error = problem;
    return false;
  }
  if (s.layout == RnnLayout::kUnrolled &&
      static_cast<int64_t>(s.timesteps) * s.units * (s.units + s.features) > (int64_t{1} << 28)) {
    *error = "an unrolled model of " + std::to_string(s.timesteps) + " steps and " +
             std::to_string(s.units) + " units would exceed 1 GB";
    return false;
  }
  return s.weights ? check_weights(s, *s.weights, error) : true;
}

RnnWeights initial_weights(const BuildSpec& s) {
  Rng rng(s.seed);
  RnnWeights w;
  s.cell->initialize(cell_config(s), s.bias_init, rng, &w);
  int in = s.units;
  std::vector<int> sizes = s.dense;
  sizes.push_back(s.classes);
  for (int units : sizes) {
    w.dense.push_back({glorot_uniform(rng, units, in), zeros(static_cast<size_t>(units))});
    in = units;
  }
  return w;
}

bool check_weights(const BuildSpec& s, const RnnWeights& w, std::string* error) {
  const size_t gh = static_cast<size_t>(s.cell->gates * s.units);
  const size_t h = static_cast<size_t>(s.units);
  const bool two_biases = s.cell->two_biases(cell_config(s));
  if (!check_size(w.kernel, gh * static_cast<size_t>(s.features), "kernel", error) ||
      !check_size(w.recurrent_kernel, gh * h, "recurrent kernel", error) ||
      !check_size(w.bias, static_cast<size_t>(s.cell->bias_blocks) * h, "bias", error) ||
      !check_size(w.recurrent_bias, two_biases ? gh : 0, "recurrent bias", error) ||
      !check_size(w.scalars, static_cast<size_t>(s.cell->scalars), "scalars", error)) {
    return false;
  }
  if (w.dense.size() != s.dense.size() + 1) {
    *error = "weights: " + std::to_string(w.dense.size()) + " Dense layers, expected " +
             std::to_string(s.dense.size() + 1);
    return false;
  }
  size_t in = h;
  for (size_t i = 0; i < w.dense.size(); ++i) {
    const size_t units = static_cast<size_t>(i < s.dense.size() ? s.dense[i] : s.classes);
    const std::string name = "dense " + std::to_string(i);
    if (!check_size(w.dense[i].kernel, units * in, (name + " kernel").c_str(), error) ||
        !check_size(w.dense[i].bias, units, (name + " bias").c_str(), error)) {
      return false;
    }
    in = units;
  }
  return true;
}

bool build_model(const BuildSpec& spec, ModelDef* out, std::string* error) {
  if (!check_spec(spec, error)) return false;
  const RnnWeights initial = spec.weights ? RnnWeights() : initial_weights(spec);
  const RnnWeights& w = spec.weights ? *spec.weights : initial;
  *out = ModelDef();
  out->version = spec.format == ModelFormat::kCircle ? 0 : 3;
  out->description = describe(spec);
  GraphWriter g(out);
  g.use(g.add_subgraph("main"));
  int input = g.tensor("input", {1, spec.timesteps, spec.features});
  g.sg().inputs.push_back(input);
  int x = normalize(g, spec, input);
  int h = -1;
  switch (spec.layout) {
    case RnnLayout::kFused: h = build_fused(g, spec, w, x); break;
    case RnnLayout::kWhile: h = build_while(g, spec, w, x); break;
    case RnnLayout::kUnrolled: h = build_unrolled(g, spec, w, x); break;
  }
  g.use(0);
  int output = dense_head(g, spec, w, h);
  g.sg().outputs.push_back(output);
  add_signature(out, input, output);
  return true;
}

uint64_t trainable_parameters(const BuildSpec& s) {
  const uint64_t h = static_cast<uint64_t>(s.units);
  const uint64_t gh = static_cast<uint64_t>(s.cell->gates) * h;
  uint64_t n = gh * static_cast<uint64_t>(s.features + s.units) +
               static_cast<uint64_t>(s.cell->bias_blocks) * h +
               static_cast<uint64_t>(s.cell->scalars);
  if (s.cell->two_biases(cell_config(s))) n += gh;
  uint64_t in = static_cast<uint64_t>(s.units);
  std::vector<int> sizes = s.dense;
  sizes.push_back(s.classes);
  for (int units : sizes) {
    n += (in + 1) * static_cast<uint64_t>(units);
    in = static_cast<uint64_t>(units);
  }
  return n;
}

bool build_and_measure(const BuildSpec& spec, BuildFigures* figures, std::vector<uint8_t>* bytes,
                       std::string* error) {
  ModelDef def;
  if (!build_model(spec, &def, error)) return false;
  std::vector<uint8_t> file;
  if (!write_model(def, spec.format, &file, error)) return false;
  Model model;
  Status status = Model::load(file.data(), file.size(), &model);
  if (!status.ok()) {
    *error = std::string("built model does not validate: ") + status.message();
    return false;
  }
  AnalyzerReport report = analyze_model(model, "");
  ModelRunner runner;
  if (!runner.prepare(model, error)) return false;
  BuildFigures f;
  f.layout = spec.layout;
  f.model_bytes = report.model_bytes;
  f.data_bytes = report.data_bytes;
  f.weight_bytes = trainable_parameters(spec) * sizeof(float);
  f.parameters = report.parameters;
  f.subgraphs = static_cast<uint32_t>(report.subgraphs.size());
  for (const SubgraphReport& sg : report.subgraphs) {
    f.ops += static_cast<uint32_t>(sg.ops.size());
    f.tensors += static_cast<uint32_t>(sg.tensors.size());
  }
  f.arena_bytes = runner.arena_bytes();
  f.size_goal_bytes = f.weight_bytes + f.weight_bytes / 20 + 2048;
  f.meets_size_goal = f.model_bytes <= f.size_goal_bytes;
  *figures = f;
  if (bytes) *bytes = std::move(file);
  return true;
}

}  // namespace gruwb::tools
