#include "engine/kernels/gru_integer.h"

#include <cstdio>
#include <cstring>

namespace gruwb {
namespace {

// An int8 weight matrix with one scale per row (or one for all rows);
// check_dense_weights refuses zero points.
Status integer_weights(const Tensor* w, int32_t rows, int32_t cols, const char* role,
                       TensorQuantization* q) {
  GRUWB_RETURN_IF_ERROR(check_dense_weights(w, rows, cols, role));
  GRUWB_RETURN_IF_ERROR(expect_type(w, TensorType::INT8, role));
  return expect_quantized(w, role, q, rows);
}

// Fixed-point state and output: h in Q0.15 needs scale 2^-15, zero point 0.
Status expect_q0_15(const Tensor* t, const char* role) {
  TensorQuantization q;
  GRUWB_RETURN_IF_ERROR(expect_type(t, TensorType::INT16, role));
  GRUWB_RETURN_IF_ERROR(expect_quantized(t, role, &q));
  if (q.count != 1 || q.scale != 1.f / 32768.f || q.zero_point != 0) {
    return Status::error(StatusCode::kInvalidModel,
                         "int16 %s '%s' must have scale 2^-15 and zero point 0 (Q0.15), has "
                         "scale %g zero point %d",
                         role, t->name, static_cast<double>(q.scale),
                         static_cast<int>(q.zero_point));
  }
  return Status();
}

// b - zp * sum(row) and the largest |accumulator| a row can reach with
// |v| <= v_max, in int64: refused when it could overflow int32.
Status fold_bias(const int8_t* w, int32_t rows, int32_t cols, const int32_t* bias,
                 int32_t zero_point, int32_t v_max, const char* role, int32_t* out) {
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* row = w + static_cast<int64_t>(r) * cols;
    int64_t sum = 0, magnitude = 0;
    for (int32_t i = 0; i < cols; ++i) {
      sum += row[i];
      magnitude += row[i] < 0 ? -row[i] : row[i];
    }
    const int64_t folded = (bias ? bias[r] : 0) - static_cast<int64_t>(zero_point) * sum;
    const int64_t bound = (folded < 0 ? -folded : folded) + magnitude * v_max;
    if (bound > INT32_MAX) {
      return Status::error(StatusCode::kUnsupported,
                           "%s row %d: an int32 accumulator could overflow (bound %lld)", role,
                           static_cast<int>(r), static_cast<long long>(bound));
    }
    out[r] = static_cast<int32_t>(folded);
  }
  return Status();
}

// Where gru_sequence_integer's states go for one batch row.
struct IntegerOutput {
  const IntegerGru* gru;
  Tensor* output;
  int32_t batch_row;
  int32_t steps;
};

void write_integer_output(void* context, int32_t step, const int16_t* h) {
  const IntegerOutput& o = *static_cast<const IntegerOutput*>(context);
  const IntegerGru& gru = *o.gru;
  if (!gru.return_sequences && step != o.steps - 1) return;
  const int32_t units = gru.cell.units;
  const int64_t at = gru.return_sequences ? gru.layout.offset(o.batch_row, step, units)
                                          : static_cast<int64_t>(o.batch_row) * units;
  if (o.output->type == TensorType::INT16) {
    memcpy(reinterpret_cast<int16_t*>(o.output->data) + at, h, sizeof(int16_t) * units);
    return;
  }
  int8_t* out = reinterpret_cast<int8_t*>(o.output->data) + at;
  for (int32_t i = 0; i < units; ++i) {
    const int32_t v =
        gru.output_zero_point + multiply_by_quantized_multiplier(h[i], gru.output_multiplier);
    out[i] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
  }
}

}  // namespace

Status prepare_integer_gru(OpContext& ctx, const IntegerGruTensors& t, IntegerGru** out) {
  if (ctx.training()) {
    return Status::error(StatusCode::kUnsupported,
                         "training through an int8 %s is not supported (the integer form is "
                         "inference-only; train the float model, then quantize)",
                         t.op_name);
  }
  const int32_t units = t.recurrent_kernel->shape.dims[1];
  const int32_t input_size = t.x->shape.dims[2];
  const int32_t gates = 3 * units;
  TensorQuantization xq, wxq, whq;
  GRUWB_RETURN_IF_ERROR(expect_quantized(t.x, "input", &xq));
  if (xq.count != 1) {
    return Status::error(StatusCode::kInvalidModel, "int8 input '%s' needs one scale, has %d",
                         t.x->name, static_cast<int>(xq.count));
  }
  GRUWB_RETURN_IF_ERROR(
      integer_weights(t.input_kernel, gates, input_size, t.input_kernel_role, &wxq));
  GRUWB_RETURN_IF_ERROR(
      integer_weights(t.recurrent_kernel, gates, units, t.recurrent_kernel_role, &whq));
  if (t.state) {
    GRUWB_RETURN_IF_ERROR(expect_q0_15(t.state, t.state_role));
    if (t.state->elements() != static_cast<int64_t>(t.layout.batch) * units) {
      char expected[32];
      snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(t.layout.batch),
               static_cast<int>(units));
      return shape_error(t.state, t.state_role, expected);
    }
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(IntegerGru), &memory));
  IntegerGru* gru = static_cast<IntegerGru*>(memory);
  *gru = IntegerGru();
  gru->layout = t.layout;
  gru->return_sequences = t.return_sequences;
  if (t.output->type == TensorType::INT16) {
    GRUWB_RETURN_IF_ERROR(expect_q0_15(t.output, "output"));
  } else {
    TensorQuantization oq;
    GRUWB_RETURN_IF_ERROR(expect_type(t.output, TensorType::INT8, "output"));
    GRUWB_RETURN_IF_ERROR(expect_quantized(t.output, "output", &oq));
    gru->output_zero_point = oq.zero_point;
    gru->output_multiplier = quantize_multiplier(1.0 / 32768.0 / static_cast<double>(oq.scale));
  }
  GruIntegerCell& cell = gru->cell;
  cell.input_size = input_size;
  cell.units = units;
  cell.input_kernel = reinterpret_cast<const int8_t*>(t.input_kernel->data);
  cell.recurrent_kernel = reinterpret_cast<const int8_t*>(t.recurrent_kernel->data);
  GRUWB_RETURN_IF_ERROR(
      ctx.allocate_persistent(2 * static_cast<size_t>(gates) * sizeof(int32_t), &memory));
  int32_t* biases = static_cast<int32_t*>(memory);
  // The raw int8 x multiplies (its zero point is in the bias): |x| <= 128.
  GRUWB_RETURN_IF_ERROR(fold_bias(cell.input_kernel, gates, input_size, t.input_bias, xq.zero_point,
                                  128, t.input_kernel_role, biases));
  GRUWB_RETURN_IF_ERROR(fold_bias(cell.recurrent_kernel, gates, units, t.recurrent_bias, 0, 32768,
                                  t.recurrent_kernel_role, biases + gates));
  cell.input_bias = biases;
  cell.recurrent_bias = biases + gates;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(
      2 * static_cast<size_t>(gates) * sizeof(QuantizedMultiplier), &memory));
  QuantizedMultiplier* multipliers = static_cast<QuantizedMultiplier*>(memory);
  for (int32_t r = 0; r < gates; ++r) {
    // Products to Q3.12 (scale 2^-12), in double as TFLite's effective scales.
    const double wx_scale = wxq.scales[wxq.count > 1 ? r : 0];
    const double wh_scale = whq.scales[whq.count > 1 ? r : 0];
    multipliers[r] = quantize_multiplier(static_cast<double>(xq.scale) * wx_scale * 4096.0);
    multipliers[gates + r] = quantize_multiplier(wh_scale / 8.0);
  }
  cell.input_multipliers = multipliers;
  cell.recurrent_multipliers = multipliers + gates;
  // Scratch: the running state [H] and the step's gates.
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(
      sizeof(int16_t) * static_cast<size_t>(units + gru_integer_scratch_values(units)),
      &gru->scratch_slot));
  *out = gru;
  return Status();
}

void eval_integer_gru(OpContext& ctx, const IntegerGru& gru, const Tensor* x, Tensor* state,
                      Tensor* output) {
  const int32_t units = gru.cell.units;
  const int32_t input_size = gru.cell.input_size;
  const SequenceLayout& layout = gru.layout;
  int16_t* h = static_cast<int16_t*>(ctx.scratch(gru.scratch_slot));
  const size_t state_bytes = sizeof(int16_t) * static_cast<size_t>(units);
  const int64_t x_stride = layout.offset(0, 1, input_size) - layout.offset(0, 0, input_size);
  IntegerOutput out{&gru, output, 0, layout.time};
  for (int32_t b = 0; b < layout.batch; ++b) {
    int16_t* row_state =
        state ? reinterpret_cast<int16_t*>(state->data) + static_cast<int64_t>(b) * units : nullptr;
    if (row_state) {
      memcpy(h, row_state, state_bytes);
    } else {
      memset(h, 0, state_bytes);
    }
    out.batch_row = b;
    const int8_t* xb = reinterpret_cast<const int8_t*>(x->data) + layout.offset(b, 0, input_size);
    gru_sequence_integer(gru.cell, xb, x_stride, layout.time, h, h + units, write_integer_output,
                         &out);
    if (layout.time == 0 && !gru.return_sequences) {
      out.steps = 1;  // no step: the last state is the initial one
      write_integer_output(&out, 0, h);
      out.steps = layout.time;
    }
    if (row_state && state->kind == TensorKind::kVariable) memcpy(row_state, h, state_bytes);
  }
}

}  // namespace gruwb
