// GRUWB_GRU: our fused Keras GRU for .tflite files, a CUSTOM op because TFLite
// has no builtin GRU (docs/fused-gru-op.md is the specification).
//   0 x [B,T,I] ([T,B,I] with time_major)
//   1 kernel W_x [3H,I], rows z | r | h (the Keras kernel transposed)
//   2 recurrent kernel W_h [3H,H]
//   3 bias (optional): [2,3H] (input row, recurrent row) for reset_after,
//     [3H] otherwise
//   4 initial state [B,H] (optional: zeros); a variable tensor here receives
//     the final state, so a stateful model carries it to the next invoke.
// Output: [B,H], or [B,T,H] / [T,B,H] with return_sequences.
// Options: a FlexBuffer map {reset_after, activation, recurrent_activation,
// return_sequences, time_major, asymmetric_quantize_inputs}; missing keys take
// Keras's defaults (asymmetric_quantize_inputs: false).
// Hybrid mode (INT8 kernels, per-tensor or per-row scales): the products are
// those of TFLite's hybrid FULLY_CONNECTED on x, h and (reset_after = false)
// r * h, each quantized at run time (gru_cell.h; docs/fused-gru-op.md).
// Integer mode (int8 x, full-integer models): int8 weights with per-row
// scales, int32 biases, int16 Q0.15 state, int8 or int16 output; fixed-point
// gates (gru_sequence_integer; docs/fused-gru-op.md "Integer GRU").

#include <cstdio>
#include <cstring>

#include "engine/kernels/flexbuffer_map.h"
#include "engine/kernels/gru_cell.h"
#include "engine/kernels/op_cost.h"

namespace gruwb {
namespace {

enum Input { kX = 0, kInputKernel, kRecurrentKernel, kBias, kState };

struct IntegerGru;

struct Options {
  const IntegerGru* integer = nullptr;  // full-integer models only
  bool reset_after = true;
  bool return_sequences = false;
  bool time_major = false;
  bool asymmetric_quantize_inputs = false;  // hybrid kernels only
  GruActivation activation = GruActivation::kTanh;
  GruGateActivation recurrent_activation = GruGateActivation::kSigmoid;
};

Status read_bool(const FlexMap& map, const FlexValue& value, const char* key, bool* out) {
  if (!map.as_bool(value, out)) {
    return Status::error(StatusCode::kInvalidModel, "GRUWB_GRU option '%s' must be a bool", key);
  }
  return Status();
}

Status parse_options(Span<uint8_t> bytes, Options* options) {
  *options = Options();
  if (bytes.empty()) return Status();
  FlexMap map;
  if (!map.parse(bytes.data, bytes.size)) {
    return Status::error(StatusCode::kInvalidModel,
                         "GRUWB_GRU custom options (%u bytes) are not a FlexBuffer map",
                         static_cast<unsigned>(bytes.size));
  }
  for (size_t i = 0; i < map.size(); ++i) {
    const char* key = map.key(i);
    FlexValue value;
    if (!key || !map.value_at(i, &value)) {
      return Status::error(StatusCode::kInvalidModel,
                           "GRUWB_GRU custom options: entry %u is "
                           "malformed",
                           static_cast<unsigned>(i));
    }
    if (strcmp(key, "reset_after") == 0) {
      GRUWB_RETURN_IF_ERROR(read_bool(map, value, key, &options->reset_after));
    } else if (strcmp(key, "return_sequences") == 0) {
      GRUWB_RETURN_IF_ERROR(read_bool(map, value, key, &options->return_sequences));
    } else if (strcmp(key, "time_major") == 0) {
      GRUWB_RETURN_IF_ERROR(read_bool(map, value, key, &options->time_major));
    } else if (strcmp(key, "asymmetric_quantize_inputs") == 0) {
      GRUWB_RETURN_IF_ERROR(read_bool(map, value, key, &options->asymmetric_quantize_inputs));
    } else if (strcmp(key, "activation") == 0 || strcmp(key, "recurrent_activation") == 0) {
      const char* name = nullptr;
      if (!map.as_string(value, &name)) {
        return Status::error(StatusCode::kInvalidModel, "GRUWB_GRU option '%s' must be a string",
                             key);
      }
      if (key[0] == 'a') {
        if (strcmp(name, "tanh") == 0) {
          options->activation = GruActivation::kTanh;
        } else if (strcmp(name, "linear") == 0) {
          options->activation = GruActivation::kLinear;
        } else if (strcmp(name, "relu") == 0) {
          options->activation = GruActivation::kRelu;
        } else {
          return Status::error(StatusCode::kUnsupported,
                               "GRUWB_GRU activation '%s' (supported: tanh, linear, relu)", name);
        }
      } else if (strcmp(name, "sigmoid") == 0) {
        options->recurrent_activation = GruGateActivation::kSigmoid;
      } else if (strcmp(name, "hard_sigmoid") == 0) {
        options->recurrent_activation = GruGateActivation::kHardSigmoid;
      } else {
        return Status::error(StatusCode::kUnsupported,
                             "GRUWB_GRU recurrent_activation '%s' (supported: sigmoid, "
                             "hard_sigmoid)",
                             name);
      }
    } else {
      // Every option changes the maths: running with one we do not know
      // would give wrong numbers silently.
      return Status::error(StatusCode::kUnsupported, "GRUWB_GRU option '%s' is unknown", key);
    }
  }
  return Status();
}

// The integer form's constants, computed once at prepare.
struct IntegerGru {
  GruIntegerCell cell;
  int32_t output_zero_point = 0;
  QuantizedMultiplier output_multiplier;  // 2^-15 / s_out (int8 output)
  int scratch_slot = 0;
};

// Scales of a per-row int8 weight matrix: one per row (or one for all rows,
// repeated), symmetric.
Status integer_weights(const Tensor* w, int32_t rows, int32_t cols, const char* role,
                       TensorQuantization* q) {
  GRUWB_RETURN_IF_ERROR(check_dense_weights(w, rows, cols, role));
  GRUWB_RETURN_IF_ERROR(expect_type(w, TensorType::INT8, role));
  GRUWB_RETURN_IF_ERROR(expect_quantized(w, role, q, rows));
  for (int32_t r = 0; r < q->count; ++r) {
    if (q->zero_point_at(r) != 0) {
      return Status::error(StatusCode::kUnsupported,
                           "int8 %s '%s' has zero point %d; weights must be symmetric", role,
                           w->name, static_cast<int>(q->zero_point_at(r)));
    }
  }
  return Status();
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

Status prepare_integer(OpContext& ctx, Options* options, const SequenceLayout& layout) {
  const Tensor* x = ctx.input(kX);
  const Tensor* wx = ctx.input(kInputKernel);
  const Tensor* wh = ctx.input(kRecurrentKernel);
  const Tensor* bias = ctx.input(kBias);
  const Tensor* state = ctx.input(kState);
  Tensor* output = ctx.output(0);
  if (ctx.training()) {
    return Status::error(StatusCode::kUnsupported,
                         "training through an int8 GRUWB_GRU is not supported (the integer form "
                         "is inference-only; train the float model, then quantize)");
  }
  if (!options->reset_after || options->activation != GruActivation::kTanh ||
      options->recurrent_activation != GruGateActivation::kSigmoid) {
    return Status::error(StatusCode::kUnsupported,
                         "int8 GRUWB_GRU supports reset_after=true, activation tanh, "
                         "recurrent_activation sigmoid only");
  }
  if (!wh || wh->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "input 2 (recurrent kernel) must be a [3H,H] matrix");
  }
  const int32_t units = wh->shape.dims[1];
  const int32_t input_size = x->shape.dims[2];
  const int32_t gates = 3 * units;
  TensorQuantization xq, wxq, whq;
  GRUWB_RETURN_IF_ERROR(expect_quantized(x, "input", &xq));
  if (xq.count != 1) {
    return Status::error(StatusCode::kInvalidModel, "int8 input '%s' needs one scale, has %d",
                         x->name, static_cast<int>(xq.count));
  }
  GRUWB_RETURN_IF_ERROR(integer_weights(wx, gates, input_size, "kernel (input 1)", &wxq));
  GRUWB_RETURN_IF_ERROR(integer_weights(wh, gates, units, "recurrent kernel (input 2)", &whq));
  if (bias) {
    GRUWB_RETURN_IF_ERROR(expect_type(bias, TensorType::INT32, "bias (input 3)"));
    if (bias->shape.rank != 2 || bias->shape.dims[0] != 2 || bias->shape.dims[1] != gates) {
      char expected[32];
      snprintf(expected, sizeof expected, "[2,%d]", static_cast<int>(gates));
      return shape_error(bias, "bias (input 3)", expected);
    }
  }
  if (state) {
    GRUWB_RETURN_IF_ERROR(expect_q0_15(state, "initial state (input 4)"));
    if (state->shape.rank != 2 || state->shape.dims[0] != layout.batch ||
        state->shape.dims[1] != units) {
      char expected[32];
      snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(layout.batch),
               static_cast<int>(units));
      return shape_error(state, "initial state (input 4)", expected);
    }
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(IntegerGru), &memory));
  IntegerGru* gru = static_cast<IntegerGru*>(memory);
  *gru = IntegerGru();
  if (output->type == TensorType::INT16) {
    GRUWB_RETURN_IF_ERROR(expect_q0_15(output, "output"));
  } else {
    TensorQuantization oq;
    GRUWB_RETURN_IF_ERROR(expect_type(output, TensorType::INT8, "output"));
    GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &oq));
    gru->output_zero_point = oq.zero_point;
    gru->output_multiplier = quantize_multiplier(1.0 / 32768.0 / static_cast<double>(oq.scale));
  }
  GruIntegerCell& cell = gru->cell;
  cell.input_size = input_size;
  cell.units = units;
  cell.input_kernel = reinterpret_cast<const int8_t*>(wx->data);
  cell.recurrent_kernel = reinterpret_cast<const int8_t*>(wh->data);
  const size_t row_bytes = static_cast<size_t>(gates) * sizeof(int32_t);
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(2 * row_bytes, &memory));
  int32_t* biases = static_cast<int32_t*>(memory);
  const int32_t* b = bias ? bias->i32() : nullptr;
  GRUWB_RETURN_IF_ERROR(fold_bias(cell.input_kernel, gates, input_size, b, xq.zero_point,
                                  128 + (xq.zero_point < 0 ? -xq.zero_point : xq.zero_point),
                                  "kernel (input 1)", biases));
  GRUWB_RETURN_IF_ERROR(fold_bias(cell.recurrent_kernel, gates, units, b ? b + gates : nullptr, 0,
                                  32768, "recurrent kernel (input 2)", biases + gates));
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
  set_output_shape(output, options->return_sequences ? sequence_shape(layout, units)
                                                     : make_shape({layout.batch, units}));
  // Scratch: the running state [H] and the step's gates.
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(
      sizeof(int16_t) * static_cast<size_t>(units + gru_integer_scratch_values(units)),
      &gru->scratch_slot));
  options->integer = gru;
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 3, 5));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(Options), &memory));
  Options* options = static_cast<Options*>(memory);
  GRUWB_RETURN_IF_ERROR(parse_options(ctx.op().custom_options, options));
  ctx.set_user_data(options);

  const Tensor* x = ctx.input(kX);
  const Tensor* recurrent_kernel = ctx.input(kRecurrentKernel);
  const bool integer = GRUWB_INTEGER && x->type == TensorType::INT8;
  if (!integer) GRUWB_RETURN_IF_ERROR(expect_float(x, "input"));
  SequenceLayout layout;
  GRUWB_RETURN_IF_ERROR(sequence_layout(x, options->time_major, &layout));
  if (integer) return prepare_integer(ctx, options, layout);
  if (!recurrent_kernel || recurrent_kernel->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "input 2 (recurrent kernel) must be a [3H,H] matrix");
  }
  const int32_t units = recurrent_kernel->shape.dims[1];
  const int32_t input_size = x->shape.dims[2];
  GRUWB_RETURN_IF_ERROR(
      check_dense_weights(recurrent_kernel, 3 * units, units, "recurrent kernel (input 2)"));
  GRUWB_RETURN_IF_ERROR(
      check_dense_weights(ctx.input(kInputKernel), 3 * units, input_size, "kernel (input 1)"));
  if (const Tensor* bias = ctx.input(kBias)) {
    GRUWB_RETURN_IF_ERROR(expect_float(bias, "bias"));
    bool fits = options->reset_after ? bias->shape.rank == 2 && bias->shape.dims[0] == 2 &&
                                           bias->shape.dims[1] == 3 * units
                                     : bias->shape.rank == 1 && bias->shape.dims[0] == 3 * units;
    if (!fits) {
      char expected[48];
      snprintf(expected, sizeof expected, options->reset_after ? "[2,%d] (reset_after)" : "[%d]",
               static_cast<int>(3 * units));
      return shape_error(bias, "bias (input 3)", expected);
    }
  }
  if (const Tensor* state = ctx.input(kState)) {
    GRUWB_RETURN_IF_ERROR(expect_float(state, "initial state"));
    if (state->shape.rank != 2 || state->shape.dims[0] != layout.batch ||
        state->shape.dims[1] != units) {
      char expected[32];
      snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(layout.batch),
               static_cast<int>(units));
      return shape_error(state, "initial state (input 4)", expected);
    }
  }
  Tensor* output = ctx.output(0);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, options->return_sequences ? sequence_shape(layout, units)
                                                     : make_shape({layout.batch, units}));
  int slot = 0;
  GRUWB_RETURN_IF_ERROR(
      ctx.request_scratch(sizeof(float) * static_cast<size_t>(gru_scratch_floats(
                                              input_size, units,
                                              ctx.input(kInputKernel)->type == TensorType::INT8 ||
                                                  recurrent_kernel->type == TensorType::INT8)),
                          &slot));
  if (ctx.training()) {
    if (ctx.input(kInputKernel)->type != TensorType::FLOAT32 ||
        recurrent_kernel->type != TensorType::FLOAT32) {
      return Status::error(StatusCode::kUnsupported,
                           "training through a GRU needs float32 kernels (hybrid INT8 here)");
    }
    // Backpropagation through time reads every step's gates and states.
    GRUWB_RETURN_IF_ERROR(ctx.request_tape(sizeof(float) * static_cast<size_t>(layout.batch) *
                                           static_cast<size_t>(layout.time) *
                                           static_cast<size_t>(gru_tape_floats(units))));
    GRUWB_RETURN_IF_ERROR(ctx.request_backward_scratch(
        sizeof(float) * static_cast<size_t>(gru_backward_scratch_floats(units) + layout.time),
        &slot));
  }
  return Status();
}

GruCell make_cell(OpContext& ctx, const Options& options) {
  const Tensor* bias = ctx.input(kBias);
  GruCell cell;
  cell.recurrent_kernel = dense_weights(ctx.input(kRecurrentKernel));
  cell.input_kernel = dense_weights(ctx.input(kInputKernel));
  cell.units = cell.recurrent_kernel.cols;
  cell.input_size = cell.input_kernel.cols;
  cell.reset_after = options.reset_after;
  cell.activation = options.activation;
  cell.recurrent_activation = options.recurrent_activation;
  cell.asymmetric_inputs = options.asymmetric_quantize_inputs;
  if (bias) {
    cell.input_bias = bias->f32();
    cell.recurrent_bias = options.reset_after ? bias->f32() + 3 * cell.units : nullptr;
  }
  return cell;
}

// Where gru_sequence_integer's states go for one batch row.
struct IntegerOutput {
  const IntegerGru* gru;
  Tensor* output;
  SequenceLayout layout;
  int32_t batch_row;
  int32_t steps;
  bool return_sequences;
};

void write_integer_output(void* context, int32_t step, const int16_t* h) {
  const IntegerOutput& o = *static_cast<const IntegerOutput*>(context);
  if (!o.return_sequences && step != o.steps - 1) return;
  const int32_t units = o.gru->cell.units;
  const int64_t at = o.return_sequences ? o.layout.offset(o.batch_row, step, units)
                                        : static_cast<int64_t>(o.batch_row) * units;
  if (o.output->type == TensorType::INT16) {
    memcpy(reinterpret_cast<int16_t*>(o.output->data) + at, h, sizeof(int16_t) * units);
    return;
  }
  int8_t* out = reinterpret_cast<int8_t*>(o.output->data) + at;
  for (int32_t i = 0; i < units; ++i) {
    int32_t v =
        o.gru->output_zero_point + multiply_by_quantized_multiplier(h[i], o.gru->output_multiplier);
    out[i] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
  }
}

Status eval_integer(OpContext& ctx, const Options& options) {
  const IntegerGru& gru = *options.integer;
  const Tensor* x = ctx.input(kX);
  Tensor* state = ctx.input(kState);
  const int32_t units = gru.cell.units;
  const int32_t input_size = gru.cell.input_size;
  SequenceLayout layout;
  sequence_layout(x, options.time_major, &layout);
  int16_t* h = static_cast<int16_t*>(ctx.scratch(gru.scratch_slot));
  const size_t state_bytes = sizeof(int16_t) * static_cast<size_t>(units);
  const int64_t x_stride = layout.offset(0, 1, input_size) - layout.offset(0, 0, input_size);
  IntegerOutput out{&gru, ctx.output(0), layout, 0, layout.time, options.return_sequences};
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
    if (layout.time == 0 && !options.return_sequences) {
      out.steps = 1;
      write_integer_output(&out, 0, h);
      out.steps = layout.time;
    }
    if (row_state && state->kind == TensorKind::kVariable) memcpy(row_state, h, state_bytes);
  }
  return Status();
}

Status eval(OpContext& ctx) {
  const Options& options = *static_cast<const Options*>(ctx.user_data());
  if (GRUWB_INTEGER && options.integer) return eval_integer(ctx, options);
  const Tensor* x = ctx.input(kX);
  Tensor* state = ctx.input(kState);
  const GruCell cell = make_cell(ctx, options);
  const int32_t units = cell.units;
  SequenceLayout layout;
  sequence_layout(x, options.time_major, &layout);
  float* scratch = static_cast<float*>(ctx.scratch(0));
  float* out = ctx.output(0)->f32();
  const size_t state_bytes = sizeof(float) * static_cast<size_t>(units);
  const int64_t x_stride =
      layout.offset(0, 1, cell.input_size) - layout.offset(0, 0, cell.input_size);
  const int64_t out_stride = layout.offset(0, 1, units) - layout.offset(0, 0, units);
  for (int32_t b = 0; b < layout.batch; ++b) {
    const float* initial = state ? state->f32() + static_cast<int64_t>(b) * units : nullptr;
    // Return-last keeps the running state in its output row (stride 0).
    float* h = options.return_sequences ? out + layout.offset(b, 0, units)
                                        : out + static_cast<int64_t>(b) * units;
    float* tape = static_cast<float*>(ctx.tape());
    if (tape) tape += static_cast<int64_t>(b) * layout.time * gru_tape_floats(units);
    gru_sequence(cell, x->f32() + layout.offset(b, 0, cell.input_size), x_stride, layout.time,
                 initial, h, options.return_sequences ? out_stride : 0, scratch, tape);
    if (state && state->kind == TensorKind::kVariable && layout.time > 0) {
      const float* last = options.return_sequences ? h + (layout.time - 1) * out_stride : h;
      memcpy(state->f32() + static_cast<int64_t>(b) * units, last, state_bytes);
    }
  }
  return Status();
}

Status backward(OpContext& ctx) {
  const Options& options = *static_cast<const Options*>(ctx.user_data());
  const Tensor* x = ctx.input(kX);
  const Tensor* state = ctx.input(kState);
  const Tensor* dout = ctx.gradient(ctx.output(0));
  const float* tape = static_cast<const float*>(ctx.tape());
  if (!dout || !tape) return Status();
  GruCell cell = make_cell(ctx, options);
  const int32_t units = cell.units;
  GruGradients grads;
  Tensor* g = ctx.gradient(ctx.input(kInputKernel));
  grads.input_kernel = g ? g->f32() : nullptr;
  g = ctx.gradient(ctx.input(kRecurrentKernel));
  grads.recurrent_kernel = g ? g->f32() : nullptr;
  g = ctx.gradient(ctx.input(kBias));
  if (g) {
    grads.input_bias = g->f32();
    grads.recurrent_bias = options.reset_after ? g->f32() + 3 * units : nullptr;
  }
  Tensor* dx = ctx.gradient(x);
  Tensor* dstate = state ? ctx.gradient(state) : nullptr;
  SequenceLayout layout;
  sequence_layout(x, options.time_major, &layout);
  const int64_t x_stride =
      layout.offset(0, 1, cell.input_size) - layout.offset(0, 0, cell.input_size);
  const int64_t out_stride = layout.offset(0, 1, units) - layout.offset(0, 0, units);
  float* scratch = static_cast<float*>(ctx.backward_scratch(0));
  float* squares =
      begin_state_gradients(ctx, scratch + gru_backward_scratch_floats(units), layout.time);
  for (int32_t b = 0; b < layout.batch; ++b) {
    const float* d = options.return_sequences ? dout->f32() + layout.offset(b, 0, units)
                                              : dout->f32() + static_cast<int64_t>(b) * units;
    gru_sequence_backward(cell, x->f32() + layout.offset(b, 0, cell.input_size), x_stride,
                          layout.time,
                          tape + static_cast<int64_t>(b) * layout.time * gru_tape_floats(units), d,
                          options.return_sequences ? out_stride : 0,
                          dx ? dx->f32() + layout.offset(b, 0, cell.input_size) : nullptr,
                          dstate ? dstate->f32() + static_cast<int64_t>(b) * units : nullptr, grads,
                          scratch, squares);
  }
  report_state_gradients(ctx, squares, layout.time);
  return Status();
}

// W_x [3H, I] and W_h [3H, H] once per time step and batch row.
OpCost cost(const OpCostQuery& q) {
  return gru_cost(q.subgraph, q.op, kInputKernel, kRecurrentKernel);
}

}  // namespace

extern const KernelRegistration kGruCustomKernel = {kOpCustom,
                                                    "GRUWB_GRU",
                                                    prepare,
                                                    eval,
                                                    GRUWB_BACKWARD(backward),
                                                    cost,
                                                    input_range(1, 3),
                                                    /*dynamic_inputs=*/false,
                                                    /*integer_activations=*/GRUWB_INTEGER != 0};

}  // namespace gruwb
