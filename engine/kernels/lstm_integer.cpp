// Full-integer UNIDIRECTIONAL_SEQUENCE_LSTM: TFLite's 8x8->16 integer LSTM
// (lstm.cc PopulateQuantizedLstmParams8x8_16, lstm_eval.cc
// EvalInteger8x8_16), the kernel of post-training quantized Keras LSTMs and
// TFLite Micro's int8 examples. Per step and batch row:
//   gate pre-activation (int16, Q3.12) = sat16(sat16(rescale(b' + W x))
//     + rescale(r' + R h)) [+ rescale(p * c) on the first min(O, H) cells,
//     as TFLite passes n_output there], each product rescaled by its
//     own quantized multiplier s_W s_x / 2^-12 (/ the gate's intermediate
//     scale with layer norm, which then normalizes to Q3.12 and adds the bias
//     there); b' = bias - zp_x * row sums of W (no bias with layer norm) and
//     r' = -zp_h * row sums of R are precomputed;
//   i, f, o = logistic, g = tanh on Q3.12 -> Q0.15, gemmlowp's
//     fixed-point functions (fixed_point.h);
//   c (int16, scale 2^k) = sat16((f c) >> 15 + (i g) >> (30 + k)), rounding
//     shifts, clipped to cell_clip / 2^k; CIFG: i = 32767 - f;
//   hidden (int8) = clamp(rescale(o tanh(c)) - zp_hidden), tanh on c read
//     with 15 + k integer bits, rescaled by 2^-30 / s_hidden (intermediate 4);
//   with a projection: h = clamp(rescale(p' + P hidden) + zp_h), p' = bias +
//     zp_hidden * row sums; else h = hidden. The output is h at every step.
// The zero point of the hidden intermediate is subtracted, not added, as
// TFLite does (the files' hidden zero point is the output's).
// Scales are combined in float as TFLite does (then quantize_multiplier in
// double), so the multipliers match TFLite's bit for bit.

#include "engine/kernels/lstm_integer.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include "engine/kernels/fixed_point.h"
#include "engine/kernels/quant_util.h"
#include "engine/kernels/recurrent_util.h"

namespace gruwb {
namespace {

using namespace lstm;

struct IntegerGate {
  bool present = false;
  const int8_t* input_weights = nullptr;      // [H, I]
  const int8_t* recurrent_weights = nullptr;  // [H, O]
  const int16_t* peephole = nullptr;          // [H] or null
  const int16_t* layer_norm = nullptr;        // [H] coefficients, or null
  const int32_t* layer_norm_bias = nullptr;   // [H] the gate bias, added after normalizing
  QuantizedMultiplier layer_norm_scale;
  int32_t variance_guard = 1;
  int32_t* input_bias = nullptr;      // [H] bias - zp_x * row sums
  int32_t* recurrent_bias = nullptr;  // [H] -zp_h * row sums
  QuantizedMultiplier input_scale, recurrent_scale, peephole_scale;
};

struct IntegerLstm {
  IntegerGate gates[4];
  const int8_t* projection = nullptr;  // [O, H]
  int32_t* projection_bias = nullptr;  // [O] bias + zp_hidden * row sums
  QuantizedMultiplier projection_scale, hidden_scale;
  int32_t hidden_zero_point = 0;
  int32_t output_state_zero_point = 0;
  int32_t cell_scale_log2 = 0;  // the cell state's scale is 2^cell_scale_log2
  int16_t cell_clip = 0;        // 0: none
  int8_t projection_clip = 0;
  bool cifg = false;
  int32_t input_size = 0, units = 0, output = 0;
  SequenceLayout layout;
  int scratch_slot = -1;
};

Status expect_integer(const Tensor* t, TensorType type, const char* role, TensorQuantization* q) {
  GRUWB_RETURN_IF_ERROR(expect_type(t, type, role));
  return q ? expect_quantized(t, role, q) : Status();
}

// Weights, biases and coefficients: read at prepare (row sums, scales), so they must be in the
// file, as TFLite requires.
Status expect_constant(const Tensor* t, const char* role) {
  if (t->kind == TensorKind::kConstant && t->bytes > 0) return Status();
  return Status::error(StatusCode::kInvalidModel, "%s '%s' must be a constant in the file", role,
                       t->name);
}

Status expect_matrix(const Tensor* t, int32_t rows, int32_t cols, const char* role) {
  GRUWB_RETURN_IF_ERROR(expect_constant(t, role));
  if (t->shape.rank != 2 || t->shape.dims[0] != rows || t->shape.dims[1] != cols) {
    char expected[32];
    snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(rows), static_cast<int>(cols));
    return shape_error(t, role, expected);
  }
  return Status();
}

Status expect_vector(const Tensor* t, int32_t size, const char* role) {
  GRUWB_RETURN_IF_ERROR(expect_constant(t, role));
  if (t->elements() != size) {
    char expected[32];
    snprintf(expected, sizeof expected, "%d values", static_cast<int>(size));
    return shape_error(t, role, expected);
  }
  return Status();
}

// bias[r] (or 0) + zero_point * sum of row r, TFLite's precomputed zero-point term.
Status row_sum_bias(OpContext& ctx, const int8_t* w, int32_t rows, int32_t cols,
                    const int32_t* bias, int32_t zero_point, int32_t** out) {
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(
      ctx.allocate_persistent(sizeof(int32_t) * static_cast<size_t>(rows), &memory));
  int32_t* sums = static_cast<int32_t*>(memory);
  for (int32_t r = 0; r < rows; ++r) {
    int32_t sum = 0;
    for (int32_t c = 0; c < cols; ++c) sum += w[static_cast<int64_t>(r) * cols + c];
    sums[r] = wrap_add(
        bias ? bias[r] : 0,
        static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(zero_point) * sum)));
  }
  *out = sums;
  return Status();
}

Status check_state(const Tensor* state, int index, TensorType type, int64_t elements,
                   const char* role, TensorQuantization* q) {
  if (!state)
    return Status::error(StatusCode::kInvalidModel, "input %d (%s) is missing", index, role);
  GRUWB_RETURN_IF_ERROR(expect_integer(state, type, role, q));
  if (state->kind != TensorKind::kVariable) {
    return Status::error(StatusCode::kInvalidModel, "%s '%s' (input %d) must be a variable tensor",
                         role, state->name, index);
  }
  if (state->elements() != elements) {
    char expected[32];
    snprintf(expected, sizeof expected, "%lld values", static_cast<long long>(elements));
    return shape_error(state, role, expected);
  }
  return Status();
}

// One gate's weights, biases and multipliers (the gate's intermediate scale
// is 2^-12: Q3.12 pre-activations).
Status prepare_gate(OpContext& ctx, int g, const TensorQuantization& x_q,
                    const TensorQuantization& h_q, int32_t cell_scale_log2, bool layer_norm,
                    IntegerLstm* lstm) {
  IntegerGate& gate = lstm->gates[g];
  char role[64];
  // The scale of the gate's pre-activation: Q3.12 without layer norm, the
  // intermediate's with it (normalizing brings it back to Q3.12).
  float intermediate_scale = 1.f / 4096.f;
  if (layer_norm) {
    TensorQuantization i_q;
    const Tensor* intermediate = ctx.intermediate(g);
    if (!intermediate || !tensor_quantization(intermediate, &i_q)) {
      return Status::error(StatusCode::kInvalidModel,
                           "int8 LSTM with layer norm: intermediate %d (%s gate) has no scale", g,
                           kGateNames[g]);
    }
    intermediate_scale = i_q.scale;
    const Tensor* coefficients = ctx.input(kLayerNorm + g);
    TensorQuantization l_q;
    snprintf(role, sizeof role, "%s gate layer norm (input %d)", kGateNames[g], kLayerNorm + g);
    if (!coefficients) {
      return Status::error(StatusCode::kInvalidModel, "input %d (%s) is missing", kLayerNorm + g,
                           role);
    }
    GRUWB_RETURN_IF_ERROR(expect_integer(coefficients, TensorType::INT16, role, &l_q));
    GRUWB_RETURN_IF_ERROR(expect_vector(coefficients, lstm->units, role));
    gate.layer_norm = reinterpret_cast<const int16_t*>(coefficients->data);
    gate.layer_norm_scale = quantize_multiplier(l_q.scale);
    // In double and clamped: a hostile scale near FLT_MAX times 10000 does not fit an int.
    const double guard = 10000.0 * static_cast<double>(l_q.scale);
    gate.variance_guard = guard >= INT32_MAX ? INT32_MAX
                          : guard > 1        ? static_cast<int32_t>(guard)
                                             : 1;
  }
  TensorQuantization w_q, r_q;
  const Tensor* w = ctx.input(kInputWeights + g);
  const Tensor* r = ctx.input(kRecurrentWeights + g);
  const Tensor* bias = ctx.input(kGateBias + g);
  if (!w || !r || !bias) {
    return Status::error(StatusCode::kInvalidModel,
                         "%s gate: inputs %d, %d and %d (weights, recurrent weights, bias) are "
                         "needed",
                         kGateNames[g], kInputWeights + g, kRecurrentWeights + g, kGateBias + g);
  }
  snprintf(role, sizeof role, "input-to-%s weights (input %d)", kGateNames[g], kInputWeights + g);
  GRUWB_RETURN_IF_ERROR(expect_integer(w, TensorType::INT8, role, &w_q));
  GRUWB_RETURN_IF_ERROR(expect_matrix(w, lstm->units, lstm->input_size, role));
  snprintf(role, sizeof role, "recurrent-to-%s weights (input %d)", kGateNames[g],
           kRecurrentWeights + g);
  GRUWB_RETURN_IF_ERROR(expect_integer(r, TensorType::INT8, role, &r_q));
  GRUWB_RETURN_IF_ERROR(expect_matrix(r, lstm->units, lstm->output, role));
  snprintf(role, sizeof role, "%s gate bias (input %d)", kGateNames[g], kGateBias + g);
  GRUWB_RETURN_IF_ERROR(expect_integer(bias, TensorType::INT32, role, nullptr));
  GRUWB_RETURN_IF_ERROR(expect_vector(bias, lstm->units, role));
  gate.present = true;
  gate.input_weights = reinterpret_cast<const int8_t*>(w->data);
  gate.recurrent_weights = reinterpret_cast<const int8_t*>(r->data);
  // TFLite multiplies the float scales in float, then quantizes in double.
  gate.input_scale = quantize_multiplier(w_q.scale * x_q.scale / intermediate_scale);
  gate.recurrent_scale = quantize_multiplier(r_q.scale * h_q.scale / intermediate_scale);
  // With layer norm the bias is added after normalizing, not to the products.
  if (layer_norm) gate.layer_norm_bias = bias->i32();
  GRUWB_RETURN_IF_ERROR(row_sum_bias(ctx, gate.input_weights, lstm->units, lstm->input_size,
                                     layer_norm ? nullptr : bias->i32(), -x_q.zero_point,
                                     &gate.input_bias));
  GRUWB_RETURN_IF_ERROR(row_sum_bias(ctx, gate.recurrent_weights, lstm->units, lstm->output,
                                     nullptr, -h_q.zero_point, &gate.recurrent_bias));
  const Tensor* peephole = kPeepholeInput[g] >= 0 ? ctx.input(kPeepholeInput[g]) : nullptr;
  if (peephole) {
    TensorQuantization p_q;
    snprintf(role, sizeof role, "cell-to-%s peephole (input %d)", kGateNames[g], kPeepholeInput[g]);
    GRUWB_RETURN_IF_ERROR(expect_integer(peephole, TensorType::INT16, role, &p_q));
    GRUWB_RETURN_IF_ERROR(expect_vector(peephole, lstm->units, role));
    gate.peephole = reinterpret_cast<const int16_t*>(peephole->data);
    gate.peephole_scale = quantize_multiplier(std::pow(2.f, static_cast<float>(cell_scale_log2)) *
                                              p_q.scale / intermediate_scale);
  }
  return Status();
}

}  // namespace

Status prepare_integer_lstm(OpContext& ctx) {
  const Tensor* x = ctx.input(kX);
  Tensor* output = ctx.output(0);
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  if (ctx.training()) {
    return Status::error(StatusCode::kUnsupported, "training through an int8 LSTM");
  }
  if (ctx.intermediate_count() == 12) {
    return Status::error(StatusCode::kUnsupported,
                         "TFLite's 8x8->8 integer LSTM (12 intermediates) is not supported");
  }
  if (ctx.intermediate_count() != 5) {
    return Status::error(StatusCode::kInvalidModel,
                         "an int8 LSTM needs 5 intermediate tensors (TFLite's 8x8->16 kernel), "
                         "this one has %d",
                         ctx.intermediate_count());
  }
  // As TFLite: the forget gate's coefficients (input 21) switch layer norm on.
  const bool layer_norm = ctx.input(kLayerNorm + kForgetGate) != nullptr;
  if (options && options->diagonal_recurrent_tensors()) {
    return Status::error(StatusCode::kUnsupported, "diagonal recurrent tensors are not supported");
  }
  const Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  if (activation != Activation::TANH) {
    return Status::error(StatusCode::kUnsupported,
                         "int8 LSTM: cell activation %s has no integer form (TANH only)",
                         fb::EnumNameActivationFunctionType(activation));
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(IntegerLstm), &memory));
  IntegerLstm* lstm = new (memory) IntegerLstm();

  TensorQuantization x_q, h_q, c_q, y_q, hidden_q;
  GRUWB_RETURN_IF_ERROR(expect_quantized(x, "input", &x_q));
  GRUWB_RETURN_IF_ERROR(sequence_layout(x, options && options->time_major(), &lstm->layout));
  const Tensor* forget = ctx.input(kInputWeights + kForgetGate);
  const Tensor* recurrent_forget = ctx.input(kRecurrentWeights + kForgetGate);
  if (!forget || forget->shape.rank != 2 || !recurrent_forget ||
      recurrent_forget->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "inputs 2 and 6 (forget gate weights) must be matrices");
  }
  lstm->input_size = x->shape.dims[2];
  lstm->units = forget->shape.dims[0];
  lstm->output = recurrent_forget->shape.dims[1];
  lstm->cifg = ctx.input(kInputWeights + kInputGate) == nullptr;
  const int64_t batch = lstm->layout.batch;

  const Tensor* output_state = ctx.input(kOutputState);
  const Tensor* cell_state = ctx.input(kCellState);
  GRUWB_RETURN_IF_ERROR(check_state(output_state, kOutputState, TensorType::INT8,
                                    batch * lstm->output, "output state", &h_q));
  GRUWB_RETURN_IF_ERROR(check_state(cell_state, kCellState, TensorType::INT16, batch * lstm->units,
                                    "cell state", &c_q));
  if (!checked_log2(c_q.scale, &lstm->cell_scale_log2) || lstm->cell_scale_log2 < -15 ||
      lstm->cell_scale_log2 > -9) {
    return Status::error(StatusCode::kUnsupported,
                         "int8 LSTM: cell state '%s' scale %g is not a power of two in "
                         "[2^-15, 2^-9]",
                         cell_state->name, static_cast<double>(c_q.scale));
  }
  const Tensor* hidden = ctx.intermediate(4);
  if (!hidden || !tensor_quantization(hidden, &hidden_q)) {
    return Status::error(StatusCode::kInvalidModel,
                         "int8 LSTM: intermediate 4 (the hidden state's quantization) has no "
                         "scale");
  }
  // The hidden state is int8 whatever type the intermediate declares; its zero point is
  // subtracted in int32.
  if (hidden_q.zero_point < INT8_MIN || hidden_q.zero_point > INT8_MAX) {
    return Status::error(StatusCode::kInvalidModel,
                         "int8 LSTM: intermediate 4 '%s': zero point %d is outside int8's "
                         "[-128, 127]",
                         hidden->name, static_cast<int>(hidden_q.zero_point));
  }
  lstm->hidden_zero_point = hidden_q.zero_point;
  lstm->output_state_zero_point = h_q.zero_point;
  for (int g = 0; g < 4; ++g) {
    if (g == kInputGate && lstm->cifg) {
      if (ctx.input(kRecurrentWeights + kInputGate) || ctx.input(kCellToInput)) {
        return Status::error(StatusCode::kInvalidModel,
                             "CIFG LSTM (input 1 omitted) must omit inputs 5 and 9 too");
      }
      continue;
    }
    GRUWB_RETURN_IF_ERROR(prepare_gate(ctx, g, x_q, h_q, lstm->cell_scale_log2, layer_norm, lstm));
  }
  if ((ctx.input(kCellToForget) != nullptr) != (ctx.input(kCellToOutput) != nullptr) ||
      (!lstm->cifg &&
       (ctx.input(kCellToInput) != nullptr) != (ctx.input(kCellToOutput) != nullptr))) {
    return Status::error(StatusCode::kInvalidModel, "peepholes (inputs 9-11): all or none");
  }
  // TFLite's peephole products run over O values of a [B, H] cell state: only O <= H on one
  // batch row at a time (batch-major) gives a defined result we can match.
  if (ctx.input(kCellToOutput) && lstm->output != lstm->units &&
      (lstm->output > lstm->units || (lstm->layout.time_major && lstm->layout.batch > 1))) {
    return Status::error(StatusCode::kUnsupported,
                         "int8 LSTM with peepholes and a projection of %d outputs for %d cells%s: "
                         "TFLite's kernel reads the cell state out of step there",
                         static_cast<int>(lstm->output), static_cast<int>(lstm->units),
                         lstm->layout.time_major ? " (time-major, batch > 1)" : "");
  }
  // 2^-15 * 2^-15 / s_hidden: Q0.15 o times Q0.15 tanh(c) to the hidden scale.
  lstm->hidden_scale =
      quantize_multiplier(std::pow(2.f, -15.f) / hidden_q.scale * std::pow(2.f, -15.f));
  const Tensor* projection = ctx.input(kProjectionWeights);
  if (projection) {
    TensorQuantization p_q;
    GRUWB_RETURN_IF_ERROR(
        expect_integer(projection, TensorType::INT8, "projection weights (input 16)", &p_q));
    GRUWB_RETURN_IF_ERROR(
        expect_matrix(projection, lstm->output, lstm->units, "projection weights (input 16)"));
    const Tensor* projection_bias = ctx.input(kProjectionBias);
    if (projection_bias) {
      GRUWB_RETURN_IF_ERROR(expect_integer(projection_bias, TensorType::INT32,
                                           "projection bias (input 17)", nullptr));
      GRUWB_RETURN_IF_ERROR(
          expect_vector(projection_bias, lstm->output, "projection bias (input 17)"));
    }
    lstm->projection = reinterpret_cast<const int8_t*>(projection->data);
    lstm->projection_scale = quantize_multiplier(p_q.scale * hidden_q.scale / h_q.scale);
    GRUWB_RETURN_IF_ERROR(row_sum_bias(ctx, lstm->projection, lstm->output, lstm->units,
                                       projection_bias ? projection_bias->i32() : nullptr,
                                       lstm->hidden_zero_point, &lstm->projection_bias));
  } else if (lstm->output != lstm->units) {
    return shape_error(recurrent_forget, "recurrent-to-forget weights (input 6)",
                       "[H,H] without projection");
  }
  const float cell_clip = options ? options->cell_clip() : 0.f;
  const float proj_clip = options ? options->proj_clip() : 0.f;
  if (cell_clip > 0.f) {
    const float q = cell_clip / c_q.scale;
    lstm->cell_clip = static_cast<int16_t>(q < -32768.f ? -32768.f : (q > 32767.f ? 32767.f : q));
  }
  GRUWB_RETURN_IF_ERROR(output->type == TensorType::INT8
                            ? expect_quantized(output, "output", &y_q)
                            : expect_type(output, TensorType::INT8, "output"));
  if (proj_clip > 0.f) {
    const float q = proj_clip / y_q.scale;
    lstm->projection_clip = static_cast<int8_t>(q < -128.f ? -128.f : (q > 127.f ? 127.f : q));
  }
  set_output_shape(output, sequence_shape(lstm->layout, lstm->output));
  // Per step: four int16 gates, tanh(c) in int16, the int8 hidden state.
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(
      static_cast<size_t>(lstm->units) * (5 * sizeof(int16_t) + 1), &lstm->scratch_slot));
  ctx.set_user_data(lstm);
  return Status();
}

namespace {

inline int32_t clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// TFLite's MatrixBatchVectorMultiplyAccumulate (int8 -> int16) for one row
// vector: out = sat16(out + rescale(bias + W x)).
void gate_product(const int8_t* w, const int32_t* bias, int32_t rows, int32_t cols, const int8_t* x,
                  QuantizedMultiplier scale, int16_t* out) {
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* row = w + static_cast<int64_t>(r) * cols;
    int32_t acc = bias[r];
    for (int32_t c = 0; c < cols; ++c) acc = wrap_add(acc, static_cast<int32_t>(row[c]) * x[c]);
    acc = wrap_add(multiply_by_quantized_multiplier(acc, scale), out[r]);
    out[r] = static_cast<int16_t>(clamp(acc, INT16_MIN, INT16_MAX));
  }
}

// TFLite's integer layer norm (ApplyLayerNorm) of one gate: mean and
// variance in int64 with 10 extra bits (exact only for a power-of-two H, as
// TFLite's), 1/stddev as a quantized multiplier, then coefficient and bias,
// back to Q3.12 by the coefficients' scale. The int32 products wrap as
// TFLite's do.
void layer_norm(const IntegerGate& g, int32_t n, int16_t* gate) {
  constexpr int64_t kTwoToPower20 = 1 << 20;
  int64_t sum = 0, sum_squares = 0;
  for (int32_t r = 0; r < n; ++r) {
    sum += gate[r];
    sum_squares += static_cast<int32_t>(gate[r]) * gate[r];
  }
  const int32_t mean = static_cast<int32_t>(sum * 1024 / n);
  const int32_t per_value = static_cast<int32_t>(kTwoToPower20 / n);
  const int64_t variance =
      sum_squares * per_value - static_cast<int64_t>(mean) * static_cast<int64_t>(mean);
  int32_t variance_q = static_cast<int32_t>(variance / kTwoToPower20);
  if (variance_q < 1) variance_q = g.variance_guard;
  const QuantizedMultiplier inverse_stddev = fixed32::inverse_sqrt(variance_q);
  QuantizedMultiplier scale = g.layer_norm_scale;
  scale.shift += 12;
  for (int32_t r = 0; r < n; ++r) {
    const int32_t shifted = 1024 * static_cast<int32_t>(gate[r]) - mean;
    const int32_t rescaled = multiply_by_quantized_multiplier(shifted, inverse_stddev);
    const int64_t weighted = static_cast<int32_t>(static_cast<uint32_t>(rescaled) *
                                                      static_cast<uint32_t>(g.layer_norm[r]) +
                                                  static_cast<uint32_t>(g.layer_norm_bias[r]));
    const int32_t rounded =
        static_cast<int32_t>((weighted > 0 ? weighted + 512 : weighted - 512) / 1024);
    gate[r] = static_cast<int16_t>(
        clamp(multiply_by_quantized_multiplier(rounded, scale), INT16_MIN, INT16_MAX));
  }
}

// One gate of one step: products, peephole, layer norm, activation (Q3.12 -> Q0.15).
void compute_gate(const IntegerGate& g, const IntegerLstm& lstm, const int8_t* x, const int8_t* h,
                  const int16_t* c, bool sigmoid, int16_t* gate) {
  const int32_t H = lstm.units;
  for (int32_t r = 0; r < H; ++r) gate[r] = 0;
  gate_product(g.input_weights, g.input_bias, H, lstm.input_size, x, g.input_scale, gate);
  gate_product(g.recurrent_weights, g.recurrent_bias, H, lstm.output, h, g.recurrent_scale, gate);
  if (g.peephole) {
    // TFLite passes n_output as the peephole's length: with a projection (O < H) only the
    // first O cells get their peephole term.
    const int32_t n = lstm.output < H ? lstm.output : H;
    for (int32_t r = 0; r < n; ++r) {
      const int32_t product = multiply_by_quantized_multiplier(
          static_cast<int32_t>(g.peephole[r]) * c[r], g.peephole_scale);
      gate[r] = static_cast<int16_t>(clamp(product + gate[r], INT16_MIN, INT16_MAX));
    }
  }
  if (g.layer_norm) layer_norm(g, H, gate);
  for (int32_t r = 0; r < H; ++r) {
    gate[r] = sigmoid ? fixed16::logistic(gate[r], 3) : fixed16::tanh(gate[r], 3);
  }
}

// c = sat16(f c >> 15 + i g >> (30 + k)) with rounding shifts, then the clip.
void update_cell(const IntegerLstm& lstm, const int16_t* i_gate, const int16_t* f_gate,
                 const int16_t* g_gate, int16_t* c) {
  const int32_t shift = 30 + lstm.cell_scale_log2;
  for (int32_t r = 0; r < lstm.units; ++r) {
    const int16_t kept =
        static_cast<int16_t>(rounding_divide_by_pot(static_cast<int32_t>(f_gate[r]) * c[r], 15));
    const int32_t input_gate = lstm.cifg ? 32767 - f_gate[r] : i_gate[r];
    const int16_t added =
        static_cast<int16_t>(rounding_divide_by_pot(input_gate * g_gate[r], shift));
    int32_t cell = clamp(static_cast<int32_t>(kept) + added, INT16_MIN, INT16_MAX);
    if (lstm.cell_clip > 0) cell = clamp(cell, -lstm.cell_clip, lstm.cell_clip);
    c[r] = static_cast<int16_t>(cell);
  }
}

// h from the output gate and the new cell state (and the projection).
void update_output(const IntegerLstm& lstm, const int16_t* o_gate, const int16_t* c,
                   int16_t* tanh_c, int8_t* hidden, int8_t* h) {
  const int32_t H = lstm.units;
  const int cell_integer_bits = 15 + lstm.cell_scale_log2;
  for (int32_t r = 0; r < H; ++r) tanh_c[r] = fixed16::tanh(c[r], cell_integer_bits);
  int8_t* target = lstm.projection ? hidden : h;
  for (int32_t r = 0; r < H; ++r) {
    int32_t value = multiply_by_quantized_multiplier(static_cast<int32_t>(o_gate[r]) * tanh_c[r],
                                                     lstm.hidden_scale);
    value -= lstm.hidden_zero_point;  // sic: TFLite subtracts it
    target[r] = static_cast<int8_t>(clamp(value, -128, 127));
  }
  if (!lstm.projection) return;
  for (int32_t r = 0; r < lstm.output; ++r) {
    const int8_t* row = lstm.projection + static_cast<int64_t>(r) * H;
    int32_t acc = lstm.projection_bias[r];
    for (int32_t i = 0; i < H; ++i) acc = wrap_add(acc, static_cast<int32_t>(row[i]) * hidden[i]);
    acc = wrap_add(multiply_by_quantized_multiplier(acc, lstm.projection_scale),
                   lstm.output_state_zero_point);
    acc = clamp(acc, -128, 127);
    if (lstm.projection_clip > 0) acc = clamp(acc, -lstm.projection_clip, lstm.projection_clip);
    h[r] = static_cast<int8_t>(acc);
  }
}

}  // namespace

Status eval_integer_lstm(OpContext& ctx) {
  const IntegerLstm& lstm = *static_cast<const IntegerLstm*>(ctx.user_data());
  const int32_t H = lstm.units;
  const int32_t O = lstm.output;
  int16_t* gates[4];
  int16_t* scratch = static_cast<int16_t*>(ctx.scratch(lstm.scratch_slot));
  for (int g = 0; g < 4; ++g) gates[g] = scratch + g * H;
  int16_t* tanh_c = scratch + 4 * H;
  int8_t* hidden = reinterpret_cast<int8_t*>(tanh_c + H);
  const int8_t* x = reinterpret_cast<const int8_t*>(ctx.input(kX)->data);
  int8_t* out = reinterpret_cast<int8_t*>(ctx.output(0)->data);
  int8_t* output_state = reinterpret_cast<int8_t*>(ctx.input(kOutputState)->data);
  int16_t* cell_state = reinterpret_cast<int16_t*>(ctx.input(kCellState)->data);
  // Batch rows are independent: each runs all its steps on its own state row.
  for (int32_t b = 0; b < lstm.layout.batch; ++b) {
    int8_t* h = output_state + static_cast<int64_t>(b) * O;
    int16_t* c = cell_state + static_cast<int64_t>(b) * H;
    for (int32_t t = 0; t < lstm.layout.time; ++t) {
      const int8_t* xt = x + lstm.layout.offset(b, t, lstm.input_size);
      compute_gate(lstm.gates[kForgetGate], lstm, xt, h, c, true, gates[kForgetGate]);
      compute_gate(lstm.gates[kCellGate], lstm, xt, h, nullptr, false, gates[kCellGate]);
      if (!lstm.cifg) {
        compute_gate(lstm.gates[kInputGate], lstm, xt, h, c, true, gates[kInputGate]);
      }
      update_cell(lstm, gates[kInputGate], gates[kForgetGate], gates[kCellGate], c);
      compute_gate(lstm.gates[kOutputGate], lstm, xt, h, c, true, gates[kOutputGate]);
      update_output(lstm, gates[kOutputGate], c, tanh_c, hidden, h);
      memcpy(out + lstm.layout.offset(b, t, O), h, static_cast<size_t>(O));
    }
  }
  return Status();
}

}  // namespace gruwb
