#include "engine/tools/model_builder.h"

#include <flatbuffers/flexbuffers.h>

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

// Rows [first, first + count) of a row-major matrix with `cols` columns.
std::vector<float> rows(const std::vector<float>& m, int cols, int first, int count) {
  auto begin = m.begin() + static_cast<ptrdiff_t>(first) * cols;
  return std::vector<float>(begin, begin + static_cast<ptrdiff_t>(count) * cols);
}

// ---- Cells ---------------------------------------------------------------------

const char* layer_name(RnnCell cell) {
  switch (cell) {
    case RnnCell::kGru: return "gru";
    case RnnCell::kLstm: return "lstm";
    case RnnCell::kRnn: return "simple_rnn";
  }
  return "rnn";
}

bool is_legacy_gru(const BuildSpec& s) {
  return s.cell == RnnCell::kGru && s.gru_variant == GruVariant::kLegacy;
}

// The weight constants of one cell in the current subgraph, in the split the
// cell's op pattern uses.
struct CellConstants {
  int kernel = -1, recurrent = -1, bias = -1, recurrent_bias = -1;
  int recurrent_zr = -1, recurrent_h = -1;  // modern GRU, reset_after=false
  int gate_kernel[3] = {-1, -1, -1};        // legacy GRU: one FC per gate and side
  int gate_bias[3] = {-1, -1, -1};
  int gate_recurrent[3] = {-1, -1, -1};
};

CellConstants add_legacy_gru_constants(GraphWriter& g, const BuildSpec& s, const RnnWeights& w,
                                       const std::string& p) {
  const int h = s.units;
  const char* gate[3] = {"z", "r", "h"};
  CellConstants k;
  for (int i = 0; i < 3; ++i) {
    k.gate_kernel[i] =
        g.constant(p + "kernel_" + gate[i], {h, s.features}, rows(w.kernel, s.features, i * h, h));
    k.gate_recurrent[i] = g.constant(p + "recurrent_kernel_" + gate[i], {h, h},
                                     rows(w.recurrent_kernel, h, i * h, h));
    k.gate_bias[i] = g.constant(p + "bias_" + gate[i], {h}, rows(w.bias, 1, i * h, h));
  }
  return k;
}

CellConstants add_cell_constants(GraphWriter& g, const BuildSpec& s, const RnnWeights& w,
                                 const std::string& p) {
  if (is_legacy_gru(s)) return add_legacy_gru_constants(g, s, w, p);
  const int gh = gate_count(s.cell) * s.units;
  CellConstants k;
  k.kernel = g.constant(p + "kernel", {gh, s.features}, w.kernel);
  k.bias = g.constant(p + "bias", {gh}, w.bias);
  if (s.cell == RnnCell::kGru && !s.reset_after) {
    const int h = s.units;
    k.recurrent_zr =
        g.constant(p + "recurrent_kernel_zr", {2 * h, h}, rows(w.recurrent_kernel, h, 0, 2 * h));
    k.recurrent_h =
        g.constant(p + "recurrent_kernel_h", {h, h}, rows(w.recurrent_kernel, h, 2 * h, h));
    return k;
  }
  k.recurrent = g.constant(p + "recurrent_kernel", {gh, s.units}, w.recurrent_kernel);
  if (s.cell == RnnCell::kGru)
    k.recurrent_bias = g.constant(p + "recurrent_bias", {gh}, w.recurrent_bias);
  return k;
}

struct CellState {
  int h = -1;
  int c = -1;  // LSTM only
};

// h' = z*h + (1-z)*candidate
int gru_update(GraphWriter& g, int z, int h, int candidate, const std::string& p) {
  int keep = binary(g, BuiltinOperator::MUL, z, h, p + "z_h");
  int one_minus_z = binary(g, BuiltinOperator::SUB, g.scalar(1.f), z, p + "one_minus_z");
  int take = binary(g, BuiltinOperator::MUL, one_minus_z, candidate, p + "one_minus_z_hh");
  return binary(g, BuiltinOperator::ADD, keep, take, p + "h");
}

// Keras 2's hard_sigmoid, as older converter output spells it.
int hard_sigmoid(GraphWriter& g, int x, const std::string& p) {
  int scaled = binary(g, BuiltinOperator::MUL, x, g.scalar(0.2f), p + "/mul");
  int shifted = binary(g, BuiltinOperator::ADD, scaled, g.scalar(0.5f), p + "/add");
  int upper = binary(g, BuiltinOperator::MINIMUM, shifted, g.scalar(1.f), p + "/min");
  return binary(g, BuiltinOperator::MAXIMUM, upper, g.scalar(0.f), p);
}

int gate(GraphWriter& g, int x_part, int h_part, const std::string& name) {
  return unary(g, BuiltinOperator::LOGISTIC,
               binary(g, BuiltinOperator::ADD, x_part, h_part, name + "_in"), name);
}

CellState gru_step(GraphWriter& g, const BuildSpec& s, const CellConstants& k, int x, int h,
                   const std::string& p) {
  std::vector<int> xs =
      split(g, fully_connected(g, x, k.kernel, k.bias, p + "x_gates"), 3, p + "x_gates_split");
  int candidate_in = -1, z = -1;
  if (s.reset_after) {
    std::vector<int> hs =
        split(g, fully_connected(g, h, k.recurrent, k.recurrent_bias, p + "h_gates"), 3,
              p + "h_gates_split");
    z = gate(g, xs[0], hs[0], p + "z");
    int r = gate(g, xs[1], hs[1], p + "r");
    candidate_in = binary(g, BuiltinOperator::ADD, xs[2],
                          binary(g, BuiltinOperator::MUL, r, hs[2], p + "r_hh"), p + "hh_in");
  } else {
    std::vector<int> hs =
        split(g, fully_connected(g, h, k.recurrent_zr, -1, p + "h_gates"), 2, p + "h_gates_split");
    z = gate(g, xs[0], hs[0], p + "z");
    int r = gate(g, xs[1], hs[1], p + "r");
    int rh = fully_connected(g, binary(g, BuiltinOperator::MUL, r, h, p + "r_h"), k.recurrent_h, -1,
                             p + "r_h_kernel");
    candidate_in = binary(g, BuiltinOperator::ADD, xs[2], rh, p + "hh_in");
  }
  int candidate = unary(g, BuiltinOperator::TANH, candidate_in, p + "hh");
  return {gru_update(g, z, h, candidate, p), -1};
}

CellState legacy_gru_step(GraphWriter& g, const CellConstants& k, int x, int h,
                          const std::string& p) {
  int xz = fully_connected(g, x, k.gate_kernel[0], k.gate_bias[0], p + "x_z");
  int xr = fully_connected(g, x, k.gate_kernel[1], k.gate_bias[1], p + "x_r");
  int xh = fully_connected(g, x, k.gate_kernel[2], k.gate_bias[2], p + "x_h");
  int hz = fully_connected(g, h, k.gate_recurrent[0], -1, p + "h_z");
  int hr = fully_connected(g, h, k.gate_recurrent[1], -1, p + "h_r");
  int z = hard_sigmoid(g, binary(g, BuiltinOperator::ADD, xz, hz, p + "z_in"), p + "z");
  int r = hard_sigmoid(g, binary(g, BuiltinOperator::ADD, xr, hr, p + "r_in"), p + "r");
  int rh = fully_connected(g, binary(g, BuiltinOperator::MUL, r, h, p + "r_h"), k.gate_recurrent[2],
                           -1, p + "r_h_kernel");
  int candidate = unary(g, BuiltinOperator::TANH,
                        binary(g, BuiltinOperator::ADD, xh, rh, p + "hh_in"), p + "hh");
  return {gru_update(g, z, h, candidate, p), -1};
}

CellState lstm_step(GraphWriter& g, const CellConstants& k, int x, CellState in,
                    const std::string& p) {
  int pre = binary(g, BuiltinOperator::ADD, fully_connected(g, x, k.kernel, k.bias, p + "x_gates"),
                   fully_connected(g, in.h, k.recurrent, -1, p + "h_gates"), p + "gates");
  std::vector<int> parts = split(g, pre, 4, p + "gates_split");
  int i = unary(g, BuiltinOperator::LOGISTIC, parts[0], p + "i");
  int f = unary(g, BuiltinOperator::LOGISTIC, parts[1], p + "f");
  int cell = unary(g, BuiltinOperator::TANH, parts[2], p + "g");
  int o = unary(g, BuiltinOperator::LOGISTIC, parts[3], p + "o");
  int c = binary(g, BuiltinOperator::ADD, binary(g, BuiltinOperator::MUL, f, in.c, p + "f_c"),
                 binary(g, BuiltinOperator::MUL, i, cell, p + "i_g"), p + "c");
  int h =
      binary(g, BuiltinOperator::MUL, o, unary(g, BuiltinOperator::TANH, c, p + "tanh_c"), p + "h");
  return {h, c};
}

CellState rnn_step(GraphWriter& g, const CellConstants& k, int x, int h, const std::string& p) {
  int pre = binary(g, BuiltinOperator::ADD, fully_connected(g, x, k.kernel, k.bias, p + "x_w"),
                   fully_connected(g, h, k.recurrent, -1, p + "h_w"), p + "pre");
  return {unary(g, BuiltinOperator::TANH, pre, p + "h"), -1};
}

// One time step of the cell on x [1,F]: the op pattern of the converter's
// WHILE body (shared/research/tflite-format.md §4.3), also used unrolled.
CellState cell_step(GraphWriter& g, const BuildSpec& s, const CellConstants& k, int x, CellState in,
                    const std::string& p) {
  switch (s.cell) {
    case RnnCell::kGru:
      return is_legacy_gru(s) ? legacy_gru_step(g, k, x, in.h, p) : gru_step(g, s, k, x, in.h, p);
    case RnnCell::kLstm: return lstm_step(g, k, x, in, p);
    case RnnCell::kRnn: return rnn_step(g, k, x, in.h, p);
  }
  return in;
}

CellState zero_state(GraphWriter& g, const BuildSpec& s, const std::string& p) {
  const size_t h = static_cast<size_t>(s.units);
  CellState state;
  state.h = g.constant(p + "zeros_h", {1, s.units}, zeros(h));
  if (s.cell == RnnCell::kLstm) state.c = g.constant(p + "zeros_c", {1, s.units}, zeros(h));
  return state;
}

// ---- Layout: fused ---------------------------------------------------------------

std::vector<uint8_t> gru_custom_options(const BuildSpec& s) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Bool("reset_after", s.reset_after);
    fbb.String("activation", "tanh");
    fbb.String("recurrent_activation", is_legacy_gru(s) ? "hard_sigmoid" : "sigmoid");
    fbb.Bool("return_sequences", false);
    fbb.Bool("time_major", false);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

bool uses_circle_gru(const BuildSpec& s) {
  return s.cell == RnnCell::kGru && s.format == ModelFormat::kCircle && s.reset_after &&
         s.gru_variant == GruVariant::kModern;
}

// Circle GRU (-5): x time-major, inputs x, W_x, b_x, W_h, b_h, state (see
// engine/kernels/gru.cpp: input 1 multiplies x, input 3 multiplies h).
int fused_circle_gru(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  const std::string p = "gru/";
  const int gh = 3 * s.units;
  int seq = transpose_time_major(g, x, p + "time_major");
  int wx = g.constant(p + "kernel", {gh, s.features}, w.kernel);
  int bx = g.constant(p + "bias", {gh}, w.bias);
  int wh = g.constant(p + "recurrent_kernel", {gh, s.units}, w.recurrent_kernel);
  int bh = g.constant(p + "recurrent_bias", {gh}, w.recurrent_bias);
  int state = g.constant(p + "zeros", {1, s.units}, zeros(static_cast<size_t>(s.units)));
  int out = g.tensor(p + "h", {1, s.units});
  fb::GRUOptionsT options;
  g.op(BuiltinOperator::GRU, {seq, wx, bx, wh, bh, state}, {out}, options);
  return out;
}

int fused_custom_gru(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  const std::string p = "gru/";
  const int gh = 3 * s.units;
  int wx = g.constant(p + "kernel", {gh, s.features}, w.kernel);
  int wh = g.constant(p + "recurrent_kernel", {gh, s.units}, w.recurrent_kernel);
  std::vector<float> bias = w.bias;
  Dims bias_shape = {gh};
  if (s.reset_after) {
    bias.insert(bias.end(), w.recurrent_bias.begin(), w.recurrent_bias.end());
    bias_shape = {2, gh};
  }
  int b = g.constant(p + "bias", bias_shape, bias);
  int out = g.tensor(p + "h", {1, s.units});
  g.custom_op("GRUWB_GRU", {x, wx, wh, b, -1}, {out}, gru_custom_options(s));
  return out;
}

// UNIDIRECTIONAL_SEQUENCE_LSTM in the exact form Keras files use (and TFLite
// Micro accepts): 24 inputs, no CIFG/peephole/projection/layer norm (those 9
// inputs are -1), variable states 18/19. cell_clip 0: Keras does not clip.
int fused_lstm(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  const std::string p = "lstm/";
  const int h = s.units;
  const char* gate[4] = {"input", "forget", "cell", "output"};
  std::vector<int32_t> inputs(24, -1);
  inputs[0] = x;
  for (int i = 0; i < 4; ++i) {
    inputs[1 + i] =
        g.constant(p + gate[i] + "_kernel", {h, s.features}, rows(w.kernel, s.features, i * h, h));
    inputs[5 + i] = g.constant(p + gate[i] + "_recurrent_kernel", {h, h},
                               rows(w.recurrent_kernel, h, i * h, h));
    inputs[12 + i] = g.constant(p + gate[i] + "_bias", {h}, rows(w.bias, 1, i * h, h));
  }
  inputs[18] = g.variable(p + "output_state", {1, h});
  inputs[19] = g.variable(p + "cell_state", {1, h});
  int seq = g.tensor(p + "sequence", {1, s.timesteps, h});
  fb::UnidirectionalSequenceLSTMOptionsT options;
  options.fused_activation_function = ActivationFunctionType::TANH;
  options.cell_clip = 0.f;
  options.proj_clip = 0.f;
  options.time_major = false;
  g.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, {seq}, options);
  return last_step(g, seq, 1, p + "last");
}

int fused_rnn(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  const std::string p = "simple_rnn/";
  const int h = s.units;
  int wx = g.constant(p + "kernel", {h, s.features}, w.kernel);
  int wh = g.constant(p + "recurrent_kernel", {h, h}, w.recurrent_kernel);
  int b = g.constant(p + "bias", {h}, w.bias);
  int state = g.variable(p + "hidden_state", {1, h});
  int seq = g.tensor(p + "sequence", {1, s.timesteps, h});
  fb::SequenceRNNOptionsT options;
  options.time_major = false;
  options.fused_activation_function = ActivationFunctionType::TANH;
  g.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN, {x, wx, wh, b, state}, {seq}, options);
  return last_step(g, seq, 1, p + "last");
}

int build_fused(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  switch (s.cell) {
    case RnnCell::kGru:
      return uses_circle_gru(s) ? fused_circle_gru(g, s, w, x) : fused_custom_gru(g, s, w, x);
    case RnnCell::kLstm: return fused_lstm(g, s, w, x);
    case RnnCell::kRnn: return fused_rnn(g, s, w, x);
  }
  return -1;
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
  if (s.cell == RnnCell::kLstm) l.c = next++;
  if (is_legacy_gru(s)) l.trip = next++;
  l.sequence = next++;
  l.count = next;
  return l;
}

// The modern bodies keep only the last output ([1,1,H], a RESHAPE of h); the
// legacy body keeps every step ([T,1,H]).
int accumulator_steps(const BuildSpec& s) { return is_legacy_gru(s) ? s.timesteps : 1; }

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
  CellConstants k = add_cell_constants(g, s, w, p);
  out[l.counter] =
      binary(g, BuiltinOperator::ADD, in[l.counter], g.scalar_i32(1), p + "counter_next");
  out[l.time] = binary(g, BuiltinOperator::ADD, in[l.time], g.scalar_i32(1), p + "time_next");
  int x = g.tensor(p + "x", {1, s.features});
  fb::GatherOptionsT gather;
  gather.axis = 0;
  g.op(BuiltinOperator::GATHER, {in[l.sequence], in[l.time]}, {x}, gather);
  CellState next = cell_step(g, s, k, x, {in[l.h], l.c >= 0 ? in[l.c] : -1}, p);
  out[l.h] = next.h;
  if (l.c >= 0) out[l.c] = next.c;
  out[l.accumulator] = update_accumulator(g, s, in[l.accumulator], next.h, p);
  g.sg().outputs = out;
}

int build_while(GraphWriter& g, const BuildSpec& s, const RnnWeights& w, int x) {
  const std::string layer = layer_name(s.cell);
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
  const std::string p = std::string(layer_name(s.cell)) + "/";
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
  CellConstants shared;
  if (s.unrolled_shared_weights) shared = add_cell_constants(g, s, w, p);
  for (int t = 0; t < s.timesteps; ++t) {
    const std::string step = p + "step_" + std::to_string(t) + "/";
    CellConstants k = s.unrolled_shared_weights ? shared : add_cell_constants(g, s, w, step);
    state = cell_step(g, s, k, steps[static_cast<size_t>(t)], state, step);
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
  return std::string("gruwb build: ") + layer_name(s.cell) + " " + rnn_layout_name(s.layout) +
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

const char* rnn_cell_name(RnnCell cell) {
  switch (cell) {
    case RnnCell::kGru: return "gru";
    case RnnCell::kLstm: return "lstm";
    case RnnCell::kRnn: return "rnn";
  }
  return "?";
}

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

bool parse_rnn_cell(const std::string& text, RnnCell* out) {
  for (RnnCell c : {RnnCell::kGru, RnnCell::kLstm, RnnCell::kRnn}) {
    if (text == rnn_cell_name(c)) return *out = c, true;
  }
  return false;
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

int gate_count(RnnCell cell) {
  switch (cell) {
    case RnnCell::kGru: return 3;
    case RnnCell::kLstm: return 4;
    case RnnCell::kRnn: return 1;
  }
  return 1;
}

const char* fused_op_name(const BuildSpec& spec) {
  switch (spec.cell) {
    case RnnCell::kGru: return uses_circle_gru(spec) ? "GRU" : "GRUWB_GRU";
    case RnnCell::kLstm: return "UNIDIRECTIONAL_SEQUENCE_LSTM";
    case RnnCell::kRnn: return "UNIDIRECTIONAL_SEQUENCE_RNN";
  }
  return "?";
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
  if (is_legacy_gru(s) && s.reset_after) {
    *error = "the legacy GRU variant is reset_after=false (use --reset-after false)";
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
  const int gh = gate_count(s.cell) * s.units;
  RnnWeights w;
  w.kernel = glorot_uniform(rng, gh, s.features);
  w.recurrent_kernel = orthogonal(rng, gh, s.units);
  const bool uniform_bias = s.bias_init == BiasInit::kUniform;
  w.bias = uniform_bias ? uniform(rng, gh, 0.1f) : zeros(static_cast<size_t>(gh));
  if (s.cell == RnnCell::kGru && s.reset_after) {
    w.recurrent_bias = uniform_bias ? uniform(rng, gh, 0.1f) : zeros(static_cast<size_t>(gh));
  }
  if (s.cell == RnnCell::kLstm && s.bias_init == BiasInit::kKeras) {
    for (int i = s.units; i < 2 * s.units; ++i) w.bias[static_cast<size_t>(i)] = 1.f;
  }
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
  const size_t gh = static_cast<size_t>(gate_count(s.cell) * s.units);
  const size_t h = static_cast<size_t>(s.units);
  const bool two_biases = s.cell == RnnCell::kGru && s.reset_after;
  if (!check_size(w.kernel, gh * static_cast<size_t>(s.features), "kernel", error) ||
      !check_size(w.recurrent_kernel, gh * h, "recurrent kernel", error) ||
      !check_size(w.bias, gh, "bias", error) ||
      !check_size(w.recurrent_bias, two_biases ? gh : 0, "recurrent bias", error)) {
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
  const uint64_t gh = static_cast<uint64_t>(gate_count(s.cell)) * static_cast<uint64_t>(s.units);
  uint64_t n = gh * static_cast<uint64_t>(s.features + s.units) + gh;
  if (s.cell == RnnCell::kGru && s.reset_after) n += gh;
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
