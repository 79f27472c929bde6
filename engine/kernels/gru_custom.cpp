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
#include <new>

#include "engine/kernels/gru_cell.h"
#include "engine/kernels/gru_integer.h"
#include "engine/kernels/kernel_util.h"
#include "engine/kernels/op_cost.h"

namespace gruwb {

struct GruPackedKernels;  // gru_cell.h, on x86-64 hosts only: eval_with's nullptr elsewhere

namespace {

enum Input { kX = 0, kInputKernel, kRecurrentKernel, kBias, kState };

struct Options {
  const IntegerGru* integer = nullptr;  // full-integer models only
  bool reset_after = true;
  bool return_sequences = false;
  bool time_major = false;
  bool asymmetric_quantize_inputs = false;  // hybrid kernels only
  bool batched = false;  // B > 1 float rows as matrix products (gru_sequence_batch)
  GruActivation activation = GruActivation::kTanh;
  GruGateActivation recurrent_activation = GruGateActivation::kSigmoid;
};

#if defined(GRUWB_CLONED_HOT_LOOPS)
// packed_inference_ops()'s user data: the options, then the packed weights. The default
// table's Options stay the board's size, so the host's arena figures are the board's.
struct PackedOptions {
  Options options;
  GruPackedKernels packed;
};
#endif

Status read_activation(const CustomOption& option, Options* options) {
  const char* name = nullptr;
  GRUWB_RETURN_IF_ERROR(option.read_string(&name));
  if (option.is("activation")) {
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
                         "GRUWB_GRU recurrent_activation '%s' (sigmoid or hard_sigmoid)", name);
  }
  return Status();
}

Status parse_options(Span<uint8_t> bytes, Options* options) {
  *options = Options();
  return for_each_custom_option(bytes, "GRUWB_GRU", [&](const CustomOption& option) {
    if (option.is("reset_after")) return option.read_bool(&options->reset_after);
    if (option.is("return_sequences")) return option.read_bool(&options->return_sequences);
    if (option.is("time_major")) return option.read_bool(&options->time_major);
    if (option.is("asymmetric_quantize_inputs")) {
      return option.read_bool(&options->asymmetric_quantize_inputs);
    }
    if (option.is("activation") || option.is("recurrent_activation")) {
      return read_activation(option, options);
    }
    return option.unknown();
  });
}

// Full-integer models: this op's bias layout and options, then the shared
// integer GRU (gru_integer.h).
Status prepare_integer(OpContext& ctx, Options* options, const SequenceLayout& layout) {
  if (!options->reset_after || options->activation != GruActivation::kTanh ||
      options->recurrent_activation != GruGateActivation::kSigmoid) {
    return Status::error(StatusCode::kUnsupported,
                         "int8 GRUWB_GRU supports reset_after=true, activation tanh, "
                         "recurrent_activation sigmoid only");
  }
  const Tensor* wh = ctx.input(kRecurrentKernel);
  if (!wh || wh->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "input 2 (recurrent kernel) must be a [3H,H] matrix");
  }
  const int32_t gates = 3 * wh->shape.dims[1];
  const Tensor* bias = ctx.input(kBias);
  if (bias) {
    GRUWB_RETURN_IF_ERROR(expect_type(bias, TensorType::INT32, "bias (input 3)"));
    if (bias->shape.rank != 2 || bias->shape.dims[0] != 2 || bias->shape.dims[1] != gates) {
      char expected[32];
      snprintf(expected, sizeof expected, "[2,%d]", static_cast<int>(gates));
      return shape_error(bias, "bias (input 3)", expected);
    }
  }
  IntegerGruTensors t;
  t.op_name = "GRUWB_GRU";
  t.x = ctx.input(kX);
  t.input_kernel = ctx.input(kInputKernel);
  t.recurrent_kernel = wh;
  t.input_kernel_role = "kernel (input 1)";
  t.recurrent_kernel_role = "recurrent kernel (input 2)";
  t.input_bias = bias ? bias->i32() : nullptr;
  t.recurrent_bias = bias ? bias->i32() + gates : nullptr;
  t.state = ctx.input(kState);
  t.state_role = "initial state (input 4)";
  t.output = ctx.output(0);
  t.layout = layout;
  t.return_sequences = options->return_sequences;
  IntegerGru* gru = nullptr;
  GRUWB_RETURN_IF_ERROR(prepare_integer_gru(ctx, t, &gru));
  set_output_shape(t.output, options->return_sequences
                                 ? sequence_shape(layout, gru->cell.units)
                                 : make_shape({layout.batch, gru->cell.units}));
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
  const bool integer = GRUWB_INTEGER_FORM(GRUWB_GRU) && x->type == TensorType::INT8;
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
  const bool hybrid = ctx.input(kInputKernel)->type == TensorType::INT8 ||
                      recurrent_kernel->type == TensorType::INT8;
#if GRUWB_BATCHED_KERNELS
  options->batched = layout.batch > 1 && !hybrid;
  const bool batched_rows = options->batched;
#else
  const bool batched_rows = false;
#endif
  GruArenaBytes bytes;
  GRUWB_RETURN_IF_ERROR(
      gru_arena_bytes(input_size, units, layout.batch, layout.time, hybrid, batched_rows, &bytes));
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(bytes.scratch, &slot));
  if (ctx.training()) {
    if (ctx.input(kInputKernel)->type != TensorType::FLOAT32 ||
        recurrent_kernel->type != TensorType::FLOAT32) {
      return Status::error(StatusCode::kUnsupported,
                           "training through a GRU needs float32 kernels (hybrid INT8 here)");
    }
    // Backpropagation through time reads every step's gates and states.
    GRUWB_RETURN_IF_ERROR(ctx.request_tape(bytes.tape));
    GRUWB_RETURN_IF_ERROR(ctx.request_backward_scratch(bytes.backward_scratch, &slot));
  }
  return Status();
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
// packed_inference_ops(): prepare, then W_x and W_h packed for eval.
Status prepare_packing(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(prepare(ctx));
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(
      ctx.allocate_persistent(whole_alignment_units(sizeof(PackedOptions)), &memory));
  auto* packed = new (memory) PackedOptions{*static_cast<const Options*>(ctx.user_data()), {}};
  ctx.set_user_data(packed);  // its options first: eval and backward read them as Options
  if (packed->options.integer) return Status();
  const Tensor* input_kernel = ctx.input(kInputKernel);
  const Tensor* recurrent_kernel = ctx.input(kRecurrentKernel);
  return prepare_gru_packed_kernels(ctx, input_kernel, recurrent_kernel,
                                    input_kernel->shape.dims[1], recurrent_kernel->shape.dims[1],
                                    packed->options.reset_after, packed->options.batched,
                                    &packed->packed);
}
#endif

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

#if GRUWB_BATCHED_KERNELS
GruBatchLayout batch_layout(const SequenceLayout& layout, const GruCell& cell,
                            const Options& options) {
  GruBatchLayout l;
  l.batch = layout.batch;
  l.time = layout.time;
  l.x_row = layout.offset(1, 0, cell.input_size) - layout.offset(0, 0, cell.input_size);
  l.x_step = layout.offset(0, 1, cell.input_size) - layout.offset(0, 0, cell.input_size);
  if (options.return_sequences) {
    l.out_row = layout.offset(1, 0, cell.units) - layout.offset(0, 0, cell.units);
    l.out_step = layout.offset(0, 1, cell.units) - layout.offset(0, 0, cell.units);
  } else {
    l.out_row = cell.units;
  }
  return l;
}
#endif

// `packed`: the packed weights (packed_inference_ops()) or nullptr.
Status eval_with(OpContext& ctx, const GruPackedKernels* packed) {
  const Options& options = *static_cast<const Options*>(ctx.user_data());
  if (GRUWB_INTEGER_FORM(GRUWB_GRU) && options.integer) {
    eval_integer_gru(ctx, *options.integer, ctx.input(kX), ctx.input(kState), ctx.output(0));
    return Status();
  }
  const Tensor* x = ctx.input(kX);
  Tensor* state = ctx.input(kState);
  GruCell cell = make_cell(ctx, options);
#if defined(GRUWB_CLONED_HOT_LOOPS)
  if (packed) cell.packed = *packed;
#else
  (void)packed;
#endif
  const int32_t units = cell.units;
  SequenceLayout layout;
  sequence_layout(x, options.time_major, &layout);
  float* scratch = static_cast<float*>(ctx.scratch(0));
  float* out = ctx.output(0)->f32();
  const size_t state_bytes = sizeof(float) * static_cast<size_t>(units);
  const int64_t x_stride =
      layout.offset(0, 1, cell.input_size) - layout.offset(0, 0, cell.input_size);
  const int64_t out_stride = layout.offset(0, 1, units) - layout.offset(0, 0, units);
#if GRUWB_BATCHED_KERNELS
  if (options.batched) {
    const GruBatchLayout batch = batch_layout(layout, cell, options);
    gru_sequence_batch(cell, batch, x->f32(), state ? state->f32() : nullptr, out, scratch,
                       static_cast<float*>(ctx.tape()));
    if (state && state->kind == TensorKind::kVariable && layout.time > 0) {
      for (int32_t b = 0; b < layout.batch; ++b) {
        const float* last = out + b * batch.out_row + (layout.time - 1) * batch.out_step;
        memcpy(state->f32() + static_cast<int64_t>(b) * units, last, state_bytes);
      }
    }
    return Status();
  }
#endif
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

Status eval(OpContext& ctx) { return eval_with(ctx, nullptr); }

#if defined(GRUWB_CLONED_HOT_LOOPS)
Status eval_packed(OpContext& ctx) {
  return eval_with(ctx, &static_cast<const PackedOptions*>(ctx.user_data())->packed);
}
#endif

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
#if GRUWB_BATCHED_KERNELS
  if (options.batched) {
    float* squares = begin_state_gradients(
        ctx, scratch + gru_batch_backward_scratch_floats(units, layout.batch), layout.time);
    gru_sequence_batch_backward(cell, batch_layout(layout, cell, options), x->f32(), tape,
                                dout->f32(), dx ? dx->f32() : nullptr,
                                dstate ? dstate->f32() : nullptr, grads, scratch, squares);
    report_state_gradients(ctx, squares, layout.time);
    return Status();
  }
#endif
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

#if defined(GRUWB_CLONED_HOT_LOOPS)
extern const KernelRegistration kGruCustomPackedKernel = {
    kOpCustom,
    "GRUWB_GRU",
    prepare_packing,
    eval_packed,
    GRUWB_BACKWARD(backward),
    cost,
    input_range(1, 3),
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(GRUWB_GRU) != 0};
#endif

extern const KernelRegistration kGruCustomKernel = {
    kOpCustom,
    "GRUWB_GRU",
    prepare,
    eval,
    GRUWB_BACKWARD(backward),
    cost,
    input_range(1, 3),
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(GRUWB_GRU) != 0};

}  // namespace gruwb
