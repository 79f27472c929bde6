// UNIDIRECTIONAL_SEQUENCE_LSTM, float compute, TFLite's 20/24-input layout
// (shared/research/tflite-format.md §2.1):
//    0 x [B,T,I] ([T,B,I] with time_major)
//  1-4 input-to-{input,forget,cell,output} weights [H,I] (1 omitted = CIFG)
//  5-8 recurrent-to-{input,forget,cell,output} weights [H,O] (5 omitted = CIFG)
// 9-11 peepholes cell-to-{input,forget,output} [H] (optional, all or none)
// 12-15 gate biases i,f,c,o [H] (12 omitted = CIFG)
//   16 projection weights [P,H] (optional; O = P, else O = H), 17 its bias [P]
//   18 output (activation) state [B,O], 19 cell state [B,H]: variable tensors
//      that carry the state to the next invoke (reset_variables() zeroes them)
// 20-23 layer norm coefficients i,f,c,o [H] (optional)
// Gates i,f,o use sigmoid, the cell gate and the cell output the fused
// activation (TANH in Keras files). As in TFLite: peepholes of i and f see the
// old cell state, o the new one; with layer norm the bias is added after the
// normalization; the cell state is clipped to cell_clip and the projection to
// proj_clip when those are > 0. CIFG: i = 1 - f.
// Full-integer models (int8 x): lstm_integer.cpp, TFLite's integer LSTM.
// Weights are float or INT8 with per-tensor/per-row scales (hybrid models).
// INT8 weights follow TFLite's hybrid LSTM (lstm_eval's EvalHybrid): every
// step, x and the output state h of each batch row are quantized to int8
// (symmetric, or asymmetric with a zero point when asymmetric_quantize_inputs
// is set; hybrid_util.h), each quantized once and shared by the four gates;
// a gate is its bias (0 with layer norm) + int32(W_x q_x) * (s_x * s_W)
// + int32(W_h q_h) * (s_h * s_R), then the float gate maths below. With INT8
// projection weights the cell output o * act(c) is quantized the same way.
// TFLite reads one scale per weight tensor; per-row scales are our extension
// (scale of row r = s_x * s_W[r], as in a per-channel hybrid
// FULLY_CONNECTED).
//
// Training (BPTT over all steps): float weights, with or without CIFG,
// peepholes and cell clip; projection and layer norm are refused in prepare.
// The tape keeps lstm_tape_floats(H) per step and batch row. While training,
// every sequence starts from the state variables' values and does not write
// its final state back (Keras' stateful=False: training windows are
// independent samples, and the finite-difference checks need a forward that
// does not depend on the previous one).

#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include "engine/kernels/lstm_batch.h"
#include "engine/kernels/lstm_integer.h"
#include "engine/kernels/op_cost.h"
#include "engine/kernels/recurrent_util.h"

namespace gruwb {
namespace {

using namespace lstm;
// Weight gradients are summed over blocks of this many steps (one pass over
// each gradient row per block instead of one per step), as the GRU does.
constexpr int32_t kLstmGradientBlock = 8;

struct LstmShape {
  SequenceLayout layout;
  int32_t input_size;
  int32_t units;   // H: cells
  int32_t output;  // O: P with projection, else H
  bool cifg;
  bool peephole;
  bool layer_norm;
};

// Pure reading of the shape and the optional parts; prepare checks them.
LstmShape lstm_shape(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  LstmShape s;
  const Tensor* x = ctx.input(kX);
  sequence_layout(x, options && options->time_major(), &s.layout);
  s.input_size = x->shape.dims[2];
  s.units = ctx.input(kInputWeights + kForgetGate)->shape.dims[0];
  s.output = ctx.input(kRecurrentWeights + kForgetGate)->shape.dims[1];
  s.cifg = ctx.input(kInputWeights + kInputGate) == nullptr;
  s.peephole = ctx.input(kCellToOutput) != nullptr;
  s.layer_norm = ctx.input(kLayerNorm + kOutputGate) != nullptr;
  return s;
}

Status check_optional_vector(OpContext& ctx, int index, bool wanted, int32_t size,
                             const char* role) {
  const Tensor* t = ctx.input(index);
  if (!wanted) {
    if (t) {
      return Status::error(StatusCode::kInvalidModel, "input %d (%s) '%s' must be omitted here",
                           index, role, t->name);
    }
    return Status();
  }
  if (!t) return Status::error(StatusCode::kInvalidModel, "input %d (%s) is missing", index, role);
  return check_float_vector(t, size, role);
}

Status check_state(const Tensor* state, int index, const LstmShape& s, int32_t width,
                   const char* role) {
  if (!state)
    return Status::error(StatusCode::kInvalidModel, "input %d (%s) is missing", index, role);
  GRUWB_RETURN_IF_ERROR(expect_float(state, role));
  if (state->kind != TensorKind::kVariable) {
    return Status::error(StatusCode::kInvalidModel, "%s '%s' (input %d) must be a variable tensor",
                         role, state->name, index);
  }
  if (state->elements() != static_cast<int64_t>(s.layout.batch) * width) {
    char expected[32];
    snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(s.layout.batch),
             static_cast<int>(width));
    return shape_error(state, role, expected);
  }
  return Status();
}

// Float weights and at least kTimeBlock steps: each gate's input products
// W x + b of kTimeBlock steps are computed at once before their recurrence
// (project_steps), in [4][kTimeBlock][H] floats of scratch. Shorter sequences
// (streaming models run one step per invoke) keep the per-step products and
// their smaller scratch.
bool lstm_projects_steps(const LstmShape& s, bool hybrid) {
  return !hybrid && s.layout.time >= kTimeBlock;
}

// Floats of the gates' scratch: the projected steps and x transposed, or the
// four gate vectors of one step.
size_t lstm_gate_scratch_floats(const LstmShape& s, bool projects) {
  const size_t H = static_cast<size_t>(s.units);
  return projects ? kTimeBlock * (4 * H + static_cast<size_t>(s.input_size)) : 4 * H;
}

// Any weight matrix in INT8 (the kernel then needs scratch for quantized rows).
bool lstm_is_hybrid(OpContext& ctx) {
  for (int i = kInputWeights; i < kCellToInput; ++i) {
    const Tensor* w = ctx.input(i);
    if (w && w->type == TensorType::INT8) return true;
  }
  const Tensor* projection = ctx.input(kProjectionWeights);
  return projection && projection->type == TensorType::INT8;
}

// B > 1 rows of a plain float LSTM run as matrix products (lstm_batch.h).
bool lstm_runs_batched(OpContext& ctx, const LstmShape& s) {
  return GRUWB_BATCHED_KERNELS && s.layout.batch > 1 && !s.cifg && !s.peephole && !s.layer_norm &&
         !ctx.input(kProjectionWeights) && !lstm_is_hybrid(ctx);
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
// Inference on AVX-512 hosts: the gates' input and recurrent matrices stacked
// into one column-major [gates * H, I] and [gates * H, O] (recurrent_util.h),
// so each step is two products for all gates (not 8 small ones), and the
// gate biases side by side.
struct LstmPacked {
  ColumnMajorWeights input;
  ColumnMajorWeights recurrent;
  const float* bias = nullptr;  // [gates * H]; nullptr with layer norm (bias after the norm)
};

Status prepare_lstm_packed(OpContext& ctx, const LstmShape& s, bool hybrid) {
  ctx.set_user_data(nullptr);
  if (hybrid || lstm_runs_batched(ctx, s)) return Status();  // batched: products over B rows
  const int first = s.cifg ? 1 : 0;
  const int count = 4 - first;
  const Tensor* input[4] = {};
  const Tensor* recurrent[4] = {};
  for (int g = first; g < 4; ++g) {
    input[g - first] = ctx.input(kInputWeights + g);
    recurrent[g - first] = ctx.input(kRecurrentWeights + g);
  }
  LstmPacked packed;
  GRUWB_RETURN_IF_ERROR(
      prepare_column_major(ctx, recurrent, count, s.units, s.output, &packed.recurrent));
  if (!packed.recurrent.data) return Status();
  GRUWB_RETURN_IF_ERROR(
      prepare_column_major(ctx, input, count, s.units, s.input_size, &packed.input));
  if (!packed.input.data) return Status();
  void* memory = nullptr;
  if (!s.layer_norm) {  // rows = count * H fit: column_major_bytes checked them
    const size_t rows = static_cast<size_t>(count) * static_cast<size_t>(s.units);
    GRUWB_RETURN_IF_ERROR(
        ctx.allocate_persistent(whole_alignment_units(sizeof(float) * rows), &memory));
    float* bias = static_cast<float*>(memory);  // zero-filled: an omitted bias stays 0
    for (int g = first; g < 4; ++g) {
      const Tensor* b = ctx.input(kGateBias + g);
      if (b) memcpy(bias + (g - first) * s.units, b->f32(), sizeof(float) * s.units);
    }
    packed.bias = bias;
  }
  GRUWB_RETURN_IF_ERROR(
      ctx.allocate_persistent(whole_alignment_units(sizeof(LstmPacked)), &memory));
  ctx.set_user_data(new (memory) LstmPacked(packed));
  return Status();
}
#endif

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_input_count(ctx, 20, 24));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* x = ctx.input(kX);
  if (GRUWB_INTEGER_FORM(UNIDIRECTIONAL_SEQUENCE_LSTM) && x && x->type == TensorType::INT8)
    return prepare_integer_lstm(ctx);
  GRUWB_RETURN_IF_ERROR(expect_float(x, "input"));
  if (x->shape.rank != 3) return shape_error(x, "input", "rank 3 ([batch,time,features])");
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  GRUWB_RETURN_IF_ERROR(check_activation(activation));
  if (options && options->diagonal_recurrent_tensors()) {
    return Status::error(StatusCode::kUnsupported, "diagonal recurrent tensors are not supported");
  }
  if (options && (options->cell_clip() < 0.f || options->proj_clip() < 0.f)) {
    return Status::error(StatusCode::kInvalidModel, "cell_clip %g / proj_clip %g must be >= 0",
                         static_cast<double>(options->cell_clip()),
                         static_cast<double>(options->proj_clip()));
  }
  const Tensor* forget = ctx.input(kInputWeights + kForgetGate);
  const Tensor* recurrent_forget = ctx.input(kRecurrentWeights + kForgetGate);
  if (!forget || forget->shape.rank != 2 || !recurrent_forget ||
      recurrent_forget->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "inputs 2 and 6 (forget gate weights) must be matrices");
  }
  LstmShape s = lstm_shape(ctx);
  char role[64];
  for (int g = 0; g < 4; ++g) {
    bool present = !(s.cifg && g == kInputGate);
    if (!present) {
      if (ctx.input(kRecurrentWeights + g)) {
        return Status::error(StatusCode::kInvalidModel,
                             "CIFG LSTM (input 1 omitted) must omit input 5 too");
      }
      continue;
    }
    snprintf(role, sizeof role, "input-to-%s weights (input %d)", kGateNames[g], kInputWeights + g);
    GRUWB_RETURN_IF_ERROR(
        check_dense_weights(ctx.input(kInputWeights + g), s.units, s.input_size, role));
    snprintf(role, sizeof role, "recurrent-to-%s weights (input %d)", kGateNames[g],
             kRecurrentWeights + g);
    GRUWB_RETURN_IF_ERROR(
        check_dense_weights(ctx.input(kRecurrentWeights + g), s.units, s.output, role));
  }
  bool any_peephole = ctx.input(kCellToInput) || ctx.input(kCellToForget) || s.peephole;
  GRUWB_RETURN_IF_ERROR(check_optional_vector(ctx, kCellToInput, any_peephole && !s.cifg, s.units,
                                              "cell-to-input peephole"));
  GRUWB_RETURN_IF_ERROR(
      check_optional_vector(ctx, kCellToForget, any_peephole, s.units, "cell-to-forget peephole"));
  GRUWB_RETURN_IF_ERROR(
      check_optional_vector(ctx, kCellToOutput, any_peephole, s.units, "cell-to-output peephole"));
  bool any_layer_norm = false;
  for (int g = 0; g < 4; ++g) any_layer_norm = any_layer_norm || ctx.input(kLayerNorm + g);
  for (int g = 0; g < 4; ++g) {
    bool present = !(s.cifg && g == kInputGate);
    snprintf(role, sizeof role, "%s gate bias", kGateNames[g]);
    GRUWB_RETURN_IF_ERROR(check_optional_vector(ctx, kGateBias + g, present, s.units, role));
    snprintf(role, sizeof role, "%s gate layer norm", kGateNames[g]);
    GRUWB_RETURN_IF_ERROR(
        check_optional_vector(ctx, kLayerNorm + g, present && any_layer_norm, s.units, role));
  }
  const Tensor* projection = ctx.input(kProjectionWeights);
  if (projection) {
    if (projection->shape.rank != 2) return shape_error(projection, "projection weights", "[P,H]");
    GRUWB_RETURN_IF_ERROR(
        check_dense_weights(projection, s.output, s.units, "projection weights (input 16)"));
  } else if (s.output != s.units) {
    return shape_error(recurrent_forget, "recurrent-to-forget weights (input 6)",
                       "[H,H] without projection");
  }
  GRUWB_RETURN_IF_ERROR(check_optional_vector(
      ctx, kProjectionBias, projection && ctx.input(kProjectionBias), s.output, "projection bias"));
  GRUWB_RETURN_IF_ERROR(
      check_state(ctx.input(kOutputState), kOutputState, s, s.output, "output state"));
  GRUWB_RETURN_IF_ERROR(check_state(ctx.input(kCellState), kCellState, s, s.units, "cell state"));
  Tensor* output = ctx.output(0);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, sequence_shape(s.layout, s.output));
  int slot = 0;
  // The cell output before projection for one step, the running output and
  // cell state of one batch row, then the gates (lstm_gate_scratch_floats).
  const bool hybrid = lstm_is_hybrid(ctx);
  [[maybe_unused]] const bool batched = lstm_runs_batched(ctx, s);
  size_t scratch_floats = 2 * static_cast<size_t>(s.units) + static_cast<size_t>(s.output) +
                          lstm_gate_scratch_floats(s, lstm_projects_steps(s, hybrid));
#if GRUWB_BATCHED_KERNELS
  if (batched) {  // + the running h and c of every row (sizes fit: checked weights and states)
    scratch_floats =
        static_cast<size_t>(lstm_batch_scratch_floats(s.input_size, s.units, s.layout.batch) +
                            2 * int64_t{s.layout.batch} * s.units);
  }
#endif
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(sizeof(float) * scratch_floats, &slot));
  if (hybrid) {
    // Quantized rows: x, the output state h, the cell output (projection).
    GRUWB_RETURN_IF_ERROR(ctx.request_scratch(static_cast<size_t>(s.input_size) +
                                                  static_cast<size_t>(s.output) +
                                                  static_cast<size_t>(s.units),
                                              &slot));
  }
  if (!ctx.training()) return Status();
  if (projection || any_layer_norm) {
    return Status::error(StatusCode::kUnsupported,
                         "training through an LSTM with %s is not supported",
                         projection ? "a projection (input 16)" : "layer norm (inputs 20-23)");
  }
  for (int i = kInputWeights; i < kCellToInput; ++i) {
    const Tensor* w = ctx.input(i);
    if (w && w->type != TensorType::FLOAT32) {
      return Status::error(StatusCode::kUnsupported,
                           "training through an LSTM needs float32 weights (input %d '%s' is %s)",
                           i, w->name, tensor_type_name(w->type));
    }
  }
  GRUWB_RETURN_IF_ERROR(ctx.request_tape(sizeof(float) * static_cast<size_t>(s.layout.batch) *
                                         static_cast<size_t>(s.layout.time) *
                                         static_cast<size_t>(lstm_tape_floats(s.units))));
  // dh, dc, 4 gate gradients of kLstmGradientBlock steps, dh_prev, dc_prev;
  // then state gradient norms.
  size_t backward_floats = (4 + 4 * kLstmGradientBlock) * static_cast<size_t>(s.units);
#if GRUWB_BATCHED_KERNELS
  if (batched) {
    backward_floats =
        static_cast<size_t>(lstm_batch_backward_scratch_floats(s.units, s.layout.batch));
  }
#endif
  return ctx.request_backward_scratch(
      sizeof(float) * (backward_floats + static_cast<size_t>(s.layout.time)), &slot);
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
// packed_inference_ops(): prepare, then the stacked gate matrices packed for eval.
Status prepare_packing(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(prepare(ctx));
  if (GRUWB_INTEGER_FORM(UNIDIRECTIONAL_SEQUENCE_LSTM) && ctx.input(kX)->type == TensorType::INT8)
    return Status();
  return prepare_lstm_packed(ctx, lstm_shape(ctx), lstm_is_hybrid(ctx));
}
#endif

// TFLite's layer norm: zero mean, unit variance (epsilon 1e-8), then scale.
void layer_norm(const float* coefficients, float* gate, int32_t n) {
  float sum = 0.f;
  for (int32_t i = 0; i < n; ++i) sum += gate[i];
  const float mean = sum / static_cast<float>(n);
  float squares = 0.f;
  for (int32_t i = 0; i < n; ++i) squares += (gate[i] - mean) * (gate[i] - mean);
  const float inv_stddev = 1.f / std::sqrt(squares / static_cast<float>(n) + 1e-8f);
  for (int32_t i = 0; i < n; ++i) gate[i] = (gate[i] - mean) * inv_stddev * coefficients[i];
}

void clip(float* x, int32_t n, float limit) {
  if (limit <= 0.f) return;
  for (int32_t i = 0; i < n; ++i) x[i] = x[i] > limit ? limit : (x[i] < -limit ? -limit : x[i]);
}

struct LstmWeights {
  DenseWeights input[4];
  DenseWeights recurrent[4];
  const float* bias[4];
  const float* layer_norm[4];
  const float* peephole[4];  // cell gate: none
  DenseWeights projection;
  const float* projection_bias;
};

#if GRUWB_BATCHED_KERNELS
LstmBatch batch_lstm(OpContext& ctx, const LstmShape& s) {
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  LstmBatch lstm;
  lstm.layout = s.layout;
  lstm.input_size = s.input_size;
  lstm.units = s.units;
  for (int g = 0; g < 4; ++g) {
    lstm.input_weights[g] = ctx.input(kInputWeights + g)->f32();
    lstm.recurrent_weights[g] = ctx.input(kRecurrentWeights + g)->f32();
    const Tensor* bias = ctx.input(kGateBias + g);
    lstm.bias[g] = bias ? bias->f32() : nullptr;
  }
  lstm.activation = options ? options->fused_activation_function() : Activation::NONE;
  lstm.cell_clip = options ? options->cell_clip() : 0.f;
  return lstm;
}

// All rows at once; the states as the row-by-row eval leaves them.
Status eval_batched(OpContext& ctx, const LstmShape& s) {
  const LstmBatch lstm = batch_lstm(ctx, s);
  const int64_t state_floats = int64_t{s.layout.batch} * s.units;
  const size_t state_bytes = sizeof(float) * static_cast<size_t>(state_floats);
  float* h = static_cast<float*>(ctx.scratch(0));
  float* c = h + state_floats;
  float* output_state = ctx.input(kOutputState)->f32();
  float* cell_state = ctx.input(kCellState)->f32();
  memcpy(h, output_state, state_bytes);
  memcpy(c, cell_state, state_bytes);
  lstm_sequence_batch(lstm, ctx.input(kX)->f32(), h, c, ctx.output(0)->f32(), c + state_floats,
                      static_cast<float*>(ctx.tape()));
  if (!ctx.training()) {  // see the header: training windows are independent
    memcpy(output_state, h, state_bytes);
    memcpy(cell_state, c, state_bytes);
  }
  return Status();
}
#endif

Status eval(OpContext& ctx) {
  if (GRUWB_INTEGER_FORM(UNIDIRECTIONAL_SEQUENCE_LSTM) && ctx.input(kX)->type == TensorType::INT8)
    return eval_integer_lstm(ctx);
  const LstmShape s = lstm_shape(ctx);
#if GRUWB_BATCHED_KERNELS
  if (lstm_runs_batched(ctx, s)) return eval_batched(ctx, s);
#endif
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  const Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  const float cell_clip = options ? options->cell_clip() : 0.f;
  const float proj_clip = options ? options->proj_clip() : 0.f;
  LstmWeights w = {};
  for (int g = 0; g < 4; ++g) {
    w.input[g] = dense_weights(ctx.input(kInputWeights + g));
    w.recurrent[g] = dense_weights(ctx.input(kRecurrentWeights + g));
    const Tensor* bias = ctx.input(kGateBias + g);
    w.bias[g] = bias ? bias->f32() : nullptr;
    const Tensor* norm = ctx.input(kLayerNorm + g);
    w.layer_norm[g] = norm ? norm->f32() : nullptr;
  }
  for (int g = 0; g < 4; ++g) {
    const Tensor* p = kPeepholeInput[g] >= 0 ? ctx.input(kPeepholeInput[g]) : nullptr;
    w.peephole[g] = p ? p->f32() : nullptr;
  }
  w.projection = dense_weights(ctx.input(kProjectionWeights));
  const Tensor* projection_bias = ctx.input(kProjectionBias);
  w.projection_bias = projection_bias ? projection_bias->f32() : nullptr;

  const int32_t H = s.units;
  const int32_t O = s.output;
  float* cell_output = static_cast<float*>(ctx.scratch(0));
  float* h = cell_output + H;  // [O] running output state of one batch row
  float* c = h + O;            // [H] running cell state
  // One step's gates; or (lstm_projects_steps) each gate's input products of
  // kTimeBlock steps [4][kTimeBlock][H], then x transposed [I, kTimeBlock].
  float* gates[4];
  for (int g = 0; g < 4; ++g) gates[g] = c + H + g * H;
  float* projected = c + H;
  float* transposed = projected + 4 * kTimeBlock * H;
  const float* x = ctx.input(kX)->f32();
  float* out = ctx.output(0)->f32();
  float* output_state = ctx.input(kOutputState)->f32();
  float* cell_state = ctx.input(kCellState)->f32();
  float* tape = static_cast<float*>(ctx.tape());
  // Hybrid: quantized copies of x, h and the cell output (hybrid_util.h).
  const bool hybrid = lstm_is_hybrid(ctx);
#if defined(GRUWB_CLONED_HOT_LOOPS)
  const LstmPacked* packed = static_cast<const LstmPacked*>(ctx.user_data());
  const bool projects = !packed && lstm_projects_steps(s, hybrid);
  // Keras' LSTM in inference: its whole gate math in one pass (lstm_default_gates_avx512).
  const bool keras_default = !tape && !s.cifg && !s.layer_norm && activation == Activation::TANH &&
                             !(cell_clip > 0.f) && !w.projection.present() && !w.peephole[0] &&
                             !w.peephole[1] && !w.peephole[3];
#else
  const bool projects = lstm_projects_steps(s, hybrid);
#endif
  const bool asymmetric = options && options->asymmetric_quantize_inputs();
  QuantizedRow xq, hq, cell_output_q;
  if (hybrid) {
    xq.values = static_cast<int8_t*>(ctx.scratch(1));
    hq.values = xq.values + s.input_size;
    cell_output_q.values = hq.values + O;
  }
  const size_t h_bytes = sizeof(float) * static_cast<size_t>(O);
  const size_t c_bytes = sizeof(float) * static_cast<size_t>(H);

  for (int32_t b = 0; b < s.layout.batch; ++b) {
    memcpy(h, output_state + static_cast<int64_t>(b) * O, h_bytes);
    memcpy(c, cell_state + static_cast<int64_t>(b) * H, c_bytes);
    for (int32_t t = 0; t < s.layout.time; ++t) {
      const float* xt = x + s.layout.offset(b, t, s.input_size);
      const int32_t s_in_block = t % kTimeBlock;
      if (projects && s_in_block == 0) {
        const int32_t block = s.layout.time - t < kTimeBlock ? s.layout.time - t : kTimeBlock;
        const int64_t x_stride =
            s.layout.offset(b, 1, s.input_size) - s.layout.offset(b, 0, s.input_size);
        for (int g = s.cifg ? 1 : 0; g < 4; ++g) {
          // With layer norm the bias comes after the normalization.
          project_steps(w.input[g], xt, x_stride, block, s.layer_norm ? nullptr : w.bias[g],
                        transposed, projected + g * kTimeBlock * H);
        }
      }
      float* step_tape =
          tape ? tape + (static_cast<int64_t>(b) * s.layout.time + t) * lstm_tape_floats(H)
               : nullptr;
      if (step_tape) {
        memcpy(step_tape + kTapeH * H, h, c_bytes);  // O == H: training refuses projections
        memcpy(step_tape + kTapeC * H, c, c_bytes);
      }
      if (hybrid) {
        quantize_row(xt, s.input_size, asymmetric, &xq);
        quantize_row(h, O, asymmetric, &hq);
      }
#if defined(GRUWB_CLONED_HOT_LOOPS)
      if (packed) {
        // All gates of the step as one stacked vector in the gate scratch.
        float* stacked = c + H;
        matvec_columns_avx512(packed->input, xt, packed->bias, false, stacked);
        matvec_columns_avx512(packed->recurrent, h, nullptr, true, stacked);
        if (keras_default) {
          float* yt = out + s.layout.offset(b, t, O);
          lstm_default_gates_avx512(stacked, c, yt, H);
          memcpy(h, yt, h_bytes);
          continue;
        }
        for (int g = s.cifg ? 1 : 0; g < 4; ++g) gates[g] = stacked + (g - (s.cifg ? 1 : 0)) * H;
      } else
#endif
      {
        for (int g = s.cifg ? 1 : 0; g < 4; ++g) {
          if (projects) {
            gates[g] = projected + (g * kTimeBlock + s_in_block) * H;
          } else {
            // With layer norm the bias comes after the normalization.
            matvec_assign(w.input[g], 0, H, xt, xq, s.layer_norm ? nullptr : w.bias[g], gates[g]);
          }
          matvec_accumulate(w.recurrent[g], 0, H, h, hq, gates[g]);
        }
      }
      // Non-linearity of one gate; `peephole_cell` is the cell state its
      // peephole sees (old for i and f, new for o).
      auto finish_gate = [&](int g, const float* peephole_cell, bool sigmoid) {
        float* gate = gates[g];
        if (w.peephole[g]) {
          for (int32_t i = 0; i < H; ++i) gate[i] += w.peephole[g][i] * peephole_cell[i];
        }
        if (s.layer_norm) {
          layer_norm(w.layer_norm[g], gate, H);
          for (int32_t i = 0; i < H; ++i) gate[i] += w.bias[g][i];
        }
        if (sigmoid) {
          vector_sigmoid(gate, H);
        } else {
          vector_activation(activation, gate, H);
        }
      };
      if (!s.cifg) finish_gate(kInputGate, c, true);
      finish_gate(kForgetGate, c, true);
      finish_gate(kCellGate, nullptr, false);
      const float* i_gate = gates[kInputGate];
      const float* f_gate = gates[kForgetGate];
      const float* g_gate = gates[kCellGate];
      for (int32_t i = 0; i < H; ++i) {
        float input_gate = s.cifg ? 1.f - f_gate[i] : i_gate[i];
        c[i] = f_gate[i] * c[i] + input_gate * g_gate[i];
      }
      clip(c, H, cell_clip);
      finish_gate(kOutputGate, c, true);
      memcpy(cell_output, c, c_bytes);
      vector_activation(activation, cell_output, H);
      if (step_tape) {
        for (int g = 0; g < 4; ++g) {
          float* slot = step_tape + (kTapeGates + g) * H;
          if (g == kInputGate && s.cifg) {
            for (int32_t i = 0; i < H; ++i) slot[i] = 1.f - gates[kForgetGate][i];
          } else {
            memcpy(slot, gates[g], c_bytes);
          }
        }
        memcpy(step_tape + kTapeCell * H, c, c_bytes);
        memcpy(step_tape + kTapeCellOutput * H, cell_output, c_bytes);
      }
      for (int32_t i = 0; i < H; ++i) cell_output[i] *= gates[kOutputGate][i];
      float* yt = out + s.layout.offset(b, t, O);
      if (w.projection.present()) {
        if (w.projection.i8) quantize_row(cell_output, H, asymmetric, &cell_output_q);
        matvec_assign(w.projection, 0, O, cell_output, cell_output_q, w.projection_bias, yt);
        clip(yt, O, proj_clip);
      } else {
        memcpy(yt, cell_output, c_bytes);
      }
      memcpy(h, yt, h_bytes);
    }
    if (!ctx.training()) {  // see the header: training windows are independent
      memcpy(output_state + static_cast<int64_t>(b) * O, h, h_bytes);
      memcpy(cell_state + static_cast<int64_t>(b) * H, c, c_bytes);
    }
  }
  return Status();
}

// BPTT, the forward step in reverse. dh and dc carry dL/dh_t and dL/dc_t from
// step t+1; per step: y = o * a, a = act(c), c = clip(f * c_prev + i * g).
Status backward(OpContext& ctx) {
  const Tensor* dout = ctx.gradient(ctx.output(0));
  const float* tape = static_cast<const float*>(ctx.tape());
  if (!dout || !tape) return Status();
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  const Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  const float cell_clip = options ? options->cell_clip() : 0.f;
  const LstmShape s = lstm_shape(ctx);
#if GRUWB_BATCHED_KERNELS
  if (lstm_runs_batched(ctx, s)) {
    LstmBatchGradients grads;
    for (int g = 0; g < 4; ++g) {
      Tensor* d = ctx.gradient(ctx.input(kInputWeights + g));
      grads.input_weights[g] = d ? d->f32() : nullptr;
      d = ctx.gradient(ctx.input(kRecurrentWeights + g));
      grads.recurrent_weights[g] = d ? d->f32() : nullptr;
      const Tensor* bias = ctx.input(kGateBias + g);
      d = bias ? ctx.gradient(bias) : nullptr;
      grads.bias[g] = d ? d->f32() : nullptr;
    }
    Tensor* d = ctx.gradient(ctx.input(kX));
    grads.dx = d ? d->f32() : nullptr;
    d = ctx.gradient(ctx.input(kOutputState));
    grads.dh0 = d ? d->f32() : nullptr;
    d = ctx.gradient(ctx.input(kCellState));
    grads.dc0 = d ? d->f32() : nullptr;
    float* scratch = static_cast<float*>(ctx.backward_scratch(0));
    const int64_t floats = lstm_batch_backward_scratch_floats(s.units, s.layout.batch);
    float* squares = begin_state_gradients(ctx, scratch + floats, s.layout.time);
    lstm_sequence_batch_backward(batch_lstm(ctx, s), ctx.input(kX)->f32(), tape, dout->f32(), grads,
                                 scratch, squares);
    report_state_gradients(ctx, squares, s.layout.time);
    return Status();
  }
#endif
  const int32_t H = s.units;
  const int32_t I = s.input_size;
  const float* wx[4] = {};
  const float* wh[4] = {};
  float* dwx[4] = {};
  float* dwh[4] = {};
  float* dbias[4] = {};
  for (int g = s.cifg ? 1 : 0; g < 4; ++g) {
    wx[g] = ctx.input(kInputWeights + g)->f32();
    wh[g] = ctx.input(kRecurrentWeights + g)->f32();
    Tensor* d = ctx.gradient(ctx.input(kInputWeights + g));
    dwx[g] = d ? d->f32() : nullptr;
    d = ctx.gradient(ctx.input(kRecurrentWeights + g));
    dwh[g] = d ? d->f32() : nullptr;
    d = ctx.gradient(ctx.input(kGateBias + g));
    dbias[g] = d ? d->f32() : nullptr;
  }
  const int peephole_index[3] = {kCellToInput, kCellToForget, kCellToOutput};
  const float* peephole[3] = {};  // i, f, o
  float* dpeephole[3] = {};
  for (int k = 0; k < 3; ++k) {
    const Tensor* p = ctx.input(peephole_index[k]);
    peephole[k] = p ? p->f32() : nullptr;
    Tensor* d = p ? ctx.gradient(p) : nullptr;
    dpeephole[k] = d ? d->f32() : nullptr;
  }
  const Tensor* x = ctx.input(kX);
  Tensor* dx = ctx.gradient(x);
  Tensor* dh0 = ctx.gradient(ctx.input(kOutputState));
  Tensor* dc0 = ctx.gradient(ctx.input(kCellState));
  float* scratch = static_cast<float*>(ctx.backward_scratch(0));
  float* dh = scratch;     // dL/dh_t
  float* dc = dh + H;      // dL/dc_t
  float* dblock = dc + H;  // [kLstmGradientBlock][4H] gate pre-activation gradients i | f | g | o
  float* dh_prev = dblock + kLstmGradientBlock * 4 * H;
  float* dc_prev = dh_prev + H;
  float* squares = begin_state_gradients(ctx, dc_prev + H, s.layout.time);
  for (int32_t b = 0; b < s.layout.batch; ++b) {
    for (int32_t i = 0; i < 2 * H; ++i) dh[i] = 0.f;  // dh and dc
    for (int32_t t = s.layout.time - 1; t >= 0; --t) {
      // Steps t_first..t_first + kLstmGradientBlock - 1 share one block of dblock.
      const int32_t t_first = t - t % kLstmGradientBlock;
      float* dpre = dblock + (t - t_first) * 4 * H;
      const float* step =
          tape + (static_cast<int64_t>(b) * s.layout.time + t) * lstm_tape_floats(H);
      const float* h_prev = step + kTapeH * H;
      const float* c_prev = step + kTapeC * H;
      const float* gi = step + (kTapeGates + kInputGate) * H;
      const float* gf = step + (kTapeGates + kForgetGate) * H;
      const float* gg = step + (kTapeGates + kCellGate) * H;
      const float* go = step + (kTapeGates + kOutputGate) * H;
      const float* cell = step + kTapeCell * H;
      const float* a = step + kTapeCellOutput * H;
      const float* g_out = dout->f32() + s.layout.offset(b, t, H);
      float* di = dpre + kInputGate * H;
      float* df = dpre + kForgetGate * H;
      float* dg = dpre + kCellGate * H;
      float* d_o = dpre + kOutputGate * H;
      if (squares) {
        float sum = 0.f;
        for (int32_t i = 0; i < H; ++i) sum += (dh[i] + g_out[i]) * (dh[i] + g_out[i]);
        squares[t] += sum;
      }
      for (int32_t i = 0; i < H; ++i) {
        const float dy = dh[i] + g_out[i];
        d_o[i] = dy * a[i] * go[i] * (1.f - go[i]);
        float dcell = dc[i] + dy * go[i] * activation_derivative(activation, a[i]);
        if (peephole[2]) dcell += d_o[i] * peephole[2][i];
        if (cell_clip > 0.f && (cell[i] >= cell_clip || cell[i] <= -cell_clip)) dcell = 0.f;
        dc_prev[i] = dcell * gf[i];
        float dforget = dcell * c_prev[i];
        if (s.cifg) dforget -= dcell * gg[i];  // i = 1 - f
        df[i] = dforget * gf[i] * (1.f - gf[i]);
        di[i] = s.cifg ? 0.f : dcell * gg[i] * gi[i] * (1.f - gi[i]);
        dg[i] = dcell * gi[i] * activation_derivative(activation, gg[i]);
        if (peephole[0]) dc_prev[i] += di[i] * peephole[0][i];
        if (peephole[1]) dc_prev[i] += df[i] * peephole[1][i];
        dh_prev[i] = 0.f;
      }
      for (int k = 0; k < 3; ++k) {
        if (!dpeephole[k]) continue;
        const float* d = k == 0 ? di : (k == 1 ? df : d_o);
        const float* seen = k == 2 ? cell : c_prev;  // o sees the new cell state
        for (int32_t i = 0; i < H; ++i) dpeephole[k][i] += d[i] * seen[i];
      }
      for (int g = s.cifg ? 1 : 0; g < 4; ++g) {
        const float* d = dpre + g * H;
        add_transposed_product(wh[g], H, H, d, dh_prev);
        if (dx) add_transposed_product(wx[g], H, I, d, dx->f32() + s.layout.offset(b, t, I));
      }
      if (t == t_first) {
        // The weight gradients of the block's steps, each gradient row once.
        const int32_t steps =
            (t + kLstmGradientBlock <= s.layout.time ? kLstmGradientBlock : s.layout.time - t);
        const float* x_first = x->f32() + s.layout.offset(b, t, I);
        const int64_t x_stride = s.layout.offset(b, 1, I) - s.layout.offset(b, 0, I);
        const int64_t tape_stride = lstm_tape_floats(H);
        for (int g = s.cifg ? 1 : 0; g < 4; ++g) {
          const float* d = dblock + g * H;
          if (dwx[g]) add_outer_steps(dwx[g], H, I, d, 4 * H, x_first, x_stride, steps);
          if (dwh[g]) add_outer_steps(dwh[g], H, H, d, 4 * H, h_prev, tape_stride, steps);
          if (dbias[g]) add_rows(dbias[g], H, d, 4 * H, steps);
        }
      }
      memcpy(dh, dh_prev, sizeof(float) * static_cast<size_t>(H));
      memcpy(dc, dc_prev, sizeof(float) * static_cast<size_t>(H));
    }
    if (dh0) {
      for (int32_t i = 0; i < H; ++i) dh0->f32()[static_cast<int64_t>(b) * H + i] += dh[i];
    }
    if (dc0) {
      for (int32_t i = 0; i < H; ++i) dc0->f32()[static_cast<int64_t>(b) * H + i] += dc[i];
    }
  }
  report_state_gradients(ctx, squares, s.layout.time);
  return Status();
}

OpCost cost(const OpCostQuery& q) { return lstm_cost(q.subgraph, q.op, true); }

}  // namespace

#if defined(GRUWB_CLONED_HOT_LOOPS)
extern const KernelRegistration kUnidirectionalSequenceLstmPackedKernel = {
    static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM),
    nullptr,
    prepare_packing,
    eval,
    GRUWB_BACKWARD(backward),
    cost,
    input_range(1, 23) & ~input_bits(18, 19),  // 18, 19: states
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(UNIDIRECTIONAL_SEQUENCE_LSTM) != 0};
#endif

extern const KernelRegistration kUnidirectionalSequenceLstmKernel = {
    static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM),
    nullptr,
    prepare,
    eval,
    GRUWB_BACKWARD(backward),
    cost,
    input_range(1, 23) & ~input_bits(18, 19),  // 18, 19: states
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(UNIDIRECTIONAL_SEQUENCE_LSTM) != 0};

}  // namespace gruwb
