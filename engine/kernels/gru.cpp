// Circle GRU (op -5), as onert-micro runs it (shared/research/onert-micro.md §1):
//   0 x [T,B,I]: dim 0 is time whatever GRUOptions.time_major says (onert-micro
//     ignores the option; files it runs carry time_major=false with [T,1,I]),
//   1 W_x [3H,I] (luci calls it "hidden_hidden"; it multiplies x),
//   2 b_x [3H] (optional),
//   3 W_h [3H,H] (luci calls it "hidden_input"; it multiplies h),
//   4 b_h [3H] (optional),
//   5 initial state [B,H]: a constant (zeros in converted models), an
//     activation, or a variable tensor, which then carries the final state
//     over to the next invoke.
// Gates z | r | n, reset after the recurrent product (Keras reset_after=True).
// Output: the last state (return_sequences=false; onert-micro's only mode),
// or every step [T,B,H]. The file's output shape is kept when its size fits
// ([1,1,H] and [1,H] both occur), since the following ops were built for it.
// The input-name inversion is verified numerically by gru_test.cpp on
// onert-micro's gru_float.circle.

#include <cstdio>
#include <new>

#include "engine/kernels/gru_cell.h"
#include "engine/kernels/gru_integer.h"
#include "engine/kernels/op_cost.h"

namespace gruwb {
namespace {

enum Input { kX = 0, kInputKernel, kInputBias, kRecurrentKernel, kRecurrentBias, kState };

struct GruLayout {
  int32_t time;
  int32_t batch;
  int32_t input_size;
  int32_t units;
};

GruLayout layout_of(OpContext& ctx) {
  const Tensor* x = ctx.input(kX);
  return GruLayout{x->shape.dims[0], x->shape.dims[1], x->shape.dims[2],
                   ctx.input(kRecurrentKernel)->shape.dims[1]};
}

#if GRUWB_BATCHED_KERNELS
// B > 1 rows with float weights run as matrix products (gru_sequence_batch).
bool batched(const GruLayout& l, bool hybrid) { return l.batch > 1 && !hybrid; }

// Time-major [T,B,I] in, [T,B,H] or [B,H] out.
GruBatchLayout batch_layout(const GruLayout& l, bool return_sequences) {
  GruBatchLayout b;
  b.batch = l.batch;
  b.time = l.time;
  b.x_row = l.input_size;
  b.x_step = static_cast<int64_t>(l.batch) * l.input_size;
  b.out_row = l.units;
  b.out_step = return_sequences ? static_cast<int64_t>(l.batch) * l.units : 0;
  return b;
}
#endif

// Full-integer models: int32 biases [3H], the shared integer GRU
// (gru_integer.h); the output keeps the file's shape when its size fits.
Status prepare_integer(OpContext& ctx, const GruLayout& l, bool return_sequences) {
  IntegerGruTensors t;
  const int32_t gates = 3 * l.units;
  for (int input : {kInputBias, kRecurrentBias}) {
    const Tensor* bias = ctx.input(input);
    const char* role = input == kInputBias ? "b_x (input 2)" : "b_h (input 4)";
    if (!bias) continue;
    GRUWB_RETURN_IF_ERROR(expect_type(bias, TensorType::INT32, role));
    if (bias->elements() != gates) {
      char expected[24];
      snprintf(expected, sizeof expected, "[%d]", static_cast<int>(gates));
      return shape_error(bias, role, expected);
    }
    (input == kInputBias ? t.input_bias : t.recurrent_bias) = bias->i32();
  }
  t.op_name = "GRU";
  t.x = ctx.input(kX);
  t.input_kernel = ctx.input(kInputKernel);
  t.recurrent_kernel = ctx.input(kRecurrentKernel);
  t.input_kernel_role = "W_x (input 1, hidden_hidden)";
  t.recurrent_kernel_role = "W_h (input 3, hidden_input)";
  t.state = ctx.input(kState);
  t.state_role = "state (input 5)";
  t.output = ctx.output(0);
  GRUWB_RETURN_IF_ERROR(sequence_layout(t.x, /*time_major=*/true, &t.layout));
  t.return_sequences = return_sequences;
  if (!t.state) return Status::error(StatusCode::kInvalidModel, "input 5 (state) is missing");
  IntegerGru* gru = nullptr;
  GRUWB_RETURN_IF_ERROR(prepare_integer_gru(ctx, t, &gru));
  const int64_t out_elements =
      static_cast<int64_t>(l.batch) * l.units * (return_sequences ? l.time : 1);
  if (t.output->shape.rank == 0 || t.output->elements() != out_elements) {
    set_output_shape(t.output, return_sequences ? make_shape({l.time, l.batch, l.units})
                                                : make_shape({l.batch, l.units}));
  }
  ctx.set_user_data(gru);
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_input_count(ctx, 6, 6));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* x = ctx.input(kX);
  const Tensor* recurrent_kernel = ctx.input(kRecurrentKernel);
  const Tensor* state = ctx.input(kState);
  Tensor* output = ctx.output(0);
  const bool integer = GRUWB_INTEGER_FORM(GRU) && x->type == TensorType::INT8;
  if (!integer) GRUWB_RETURN_IF_ERROR(expect_float(x, "input"));
  if (x->shape.rank != 3) return shape_error(x, "input", "[time,batch,features]");
  if (!recurrent_kernel || recurrent_kernel->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "input 3 (W_h, named hidden_input) must be a [3H,H] matrix");
  }
  const auto* options = ctx.op().options<fb::GRUOptions>();
  if (options && options->fused_activation_function() != Activation::NONE) {
    return Status::error(StatusCode::kUnsupported,
                         "GRU fused activation %s is undefined (onert-micro ignores it)",
                         fb::EnumNameActivationFunctionType(options->fused_activation_function()));
  }
  GruLayout l = layout_of(ctx);
  if (integer) return prepare_integer(ctx, l, options && options->return_sequences());
  GRUWB_RETURN_IF_ERROR(
      check_dense_weights(recurrent_kernel, 3 * l.units, l.units, "W_h (input 3, hidden_input)"));
  GRUWB_RETURN_IF_ERROR(check_dense_weights(ctx.input(kInputKernel), 3 * l.units, l.input_size,
                                            "W_x (input 1, hidden_hidden)"));
  if (ctx.input(kInputBias)) {
    GRUWB_RETURN_IF_ERROR(check_float_vector(ctx.input(kInputBias), 3 * l.units, "b_x (input 2)"));
  }
  if (ctx.input(kRecurrentBias)) {
    GRUWB_RETURN_IF_ERROR(
        check_float_vector(ctx.input(kRecurrentBias), 3 * l.units, "b_h (input 4)"));
  }
  if (!state) return Status::error(StatusCode::kInvalidModel, "input 5 (state) is missing");
  GRUWB_RETURN_IF_ERROR(expect_float(state, "state"));
  if (state->elements() != static_cast<int64_t>(l.batch) * l.units) {
    char expected[32];
    snprintf(expected, sizeof expected, "%d values ([%d,%d])", static_cast<int>(l.batch * l.units),
             static_cast<int>(l.batch), static_cast<int>(l.units));
    return shape_error(state, "state (input 5)", expected);
  }
  bool return_sequences = options && options->return_sequences();
  int64_t out_elements = static_cast<int64_t>(l.batch) * l.units * (return_sequences ? l.time : 1);
  output->type = TensorType::FLOAT32;
  if (output->shape.rank == 0 || output->elements() != out_elements) {
    set_output_shape(output, return_sequences ? make_shape({l.time, l.batch, l.units})
                                              : make_shape({l.batch, l.units}));
  }
  int slot = 0;
  const bool hybrid = ctx.input(kInputKernel)->type == TensorType::INT8 ||
                      ctx.input(kRecurrentKernel)->type == TensorType::INT8;
  bool batched_rows = false;
#if GRUWB_BATCHED_KERNELS
  batched_rows = batched(l, hybrid);
#endif
  GruArenaBytes bytes;
  GRUWB_RETURN_IF_ERROR(
      gru_arena_bytes(l.input_size, l.units, l.batch, l.time, hybrid, batched_rows, &bytes));
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(bytes.scratch, &slot));
  if (ctx.training()) {
    if (ctx.input(kInputKernel)->type != TensorType::FLOAT32 ||
        recurrent_kernel->type != TensorType::FLOAT32) {
      return Status::error(StatusCode::kUnsupported,
                           "training through a GRU needs float32 kernels (hybrid INT8 here)");
    }
    GRUWB_RETURN_IF_ERROR(ctx.request_tape(bytes.tape));
    GRUWB_RETURN_IF_ERROR(ctx.request_backward_scratch(bytes.backward_scratch, &slot));
  }
  return Status();
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
// packed_inference_ops(): prepare, then W_x and W_h packed for eval.
Status prepare_packing(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(prepare(ctx));
  if (GRUWB_INTEGER_FORM(GRU) && ctx.input(kX)->type == TensorType::INT8) return Status();
  const GruLayout l = layout_of(ctx);
  bool batched_rows = false;
#if GRUWB_BATCHED_KERNELS
  batched_rows = batched(l, ctx.input(kInputKernel)->type == TensorType::INT8 ||
                                ctx.input(kRecurrentKernel)->type == TensorType::INT8);
#endif
  GruPackedKernels packed;
  GRUWB_RETURN_IF_ERROR(prepare_gru_packed_kernels(ctx, ctx.input(kInputKernel),
                                                   ctx.input(kRecurrentKernel), l.input_size,
                                                   l.units, true, batched_rows, &packed));
  ctx.set_user_data(nullptr);
  if (packed.input.data || packed.recurrent.data) {
    void* memory = nullptr;
    GRUWB_RETURN_IF_ERROR(
        ctx.allocate_persistent(whole_alignment_units(sizeof(GruPackedKernels)), &memory));
    ctx.set_user_data(new (memory) GruPackedKernels(packed));
  }
  return Status();
}
#endif

Status eval(OpContext& ctx) {
  if (GRUWB_INTEGER_FORM(GRU) && ctx.input(kX)->type == TensorType::INT8) {
    eval_integer_gru(ctx, *static_cast<const IntegerGru*>(ctx.user_data()), ctx.input(kX),
                     ctx.input(kState), ctx.output(0));
    return Status();
  }
  GruLayout l = layout_of(ctx);
  const Tensor* bx = ctx.input(kInputBias);
  const Tensor* bh = ctx.input(kRecurrentBias);
  Tensor* state = ctx.input(kState);
  GruCell cell;
  cell.input_size = l.input_size;
  cell.units = l.units;
  cell.input_kernel = dense_weights(ctx.input(kInputKernel));
  cell.recurrent_kernel = dense_weights(ctx.input(kRecurrentKernel));
  cell.input_bias = bx ? bx->f32() : nullptr;
  cell.recurrent_bias = bh ? bh->f32() : nullptr;
#if defined(GRUWB_CLONED_HOT_LOOPS)
  if (ctx.user_data()) cell.packed = *static_cast<const GruPackedKernels*>(ctx.user_data());
#endif
  const auto* options = ctx.op().options<fb::GRUOptions>();
  bool return_sequences = options && options->return_sequences();
  float* scratch = static_cast<float*>(ctx.scratch(0));
  float* out = ctx.output(0)->f32();
  const float* x = ctx.input(kX)->f32();
  const int64_t state_size = static_cast<int64_t>(l.batch) * l.units;
#if GRUWB_BATCHED_KERNELS
  if (batched(l, cell.input_kernel.i8 || cell.recurrent_kernel.i8)) {
    gru_sequence_batch(cell, batch_layout(l, return_sequences), x, state->f32(), out, scratch,
                       static_cast<float*>(ctx.tape()));
  } else
#endif
    // Time-major [T,B,I]: consecutive steps of one batch row are B rows apart.
    // Return-last keeps the running state in the output row (stride 0).
    for (int32_t b = 0; b < l.batch; ++b) {
      const int64_t row = static_cast<int64_t>(b) * l.units;
      float* tape = static_cast<float*>(ctx.tape());
      if (tape) tape += static_cast<int64_t>(b) * l.time * gru_tape_floats(l.units);
      gru_sequence(cell, x + static_cast<int64_t>(b) * l.input_size,
                   static_cast<int64_t>(l.batch) * l.input_size, l.time, state->f32() + row,
                   out + row, return_sequences ? state_size : 0, scratch, tape);
    }
  const float* last = return_sequences && l.time > 0 ? out + (l.time - 1) * state_size : out;
  if (state->kind == TensorKind::kVariable && l.time > 0) {
    memcpy(state->f32(), last, sizeof(float) * static_cast<size_t>(state_size));
  }
  return Status();
}

Status backward(OpContext& ctx) {
  GruLayout l = layout_of(ctx);
  const Tensor* dout = ctx.gradient(ctx.output(0));
  const float* tape = static_cast<const float*>(ctx.tape());
  if (!dout || !tape) return Status();
  const Tensor* bx = ctx.input(kInputBias);
  const Tensor* bh = ctx.input(kRecurrentBias);
  GruCell cell;
  cell.input_size = l.input_size;
  cell.units = l.units;
  cell.input_kernel = dense_weights(ctx.input(kInputKernel));
  cell.recurrent_kernel = dense_weights(ctx.input(kRecurrentKernel));
  cell.input_bias = bx ? bx->f32() : nullptr;
  cell.recurrent_bias = bh ? bh->f32() : nullptr;
  GruGradients grads;
  Tensor* g = ctx.gradient(ctx.input(kInputKernel));
  grads.input_kernel = g ? g->f32() : nullptr;
  g = ctx.gradient(ctx.input(kRecurrentKernel));
  grads.recurrent_kernel = g ? g->f32() : nullptr;
  g = ctx.gradient(bx);
  grads.input_bias = g ? g->f32() : nullptr;
  g = ctx.gradient(bh);
  grads.recurrent_bias = g ? g->f32() : nullptr;
  const auto* options = ctx.op().options<fb::GRUOptions>();
  bool return_sequences = options && options->return_sequences();
  Tensor* dx = ctx.gradient(ctx.input(kX));
  Tensor* dstate = ctx.gradient(ctx.input(kState));
  const int64_t state_size = static_cast<int64_t>(l.batch) * l.units;
  float* scratch = static_cast<float*>(ctx.backward_scratch(0));
#if GRUWB_BATCHED_KERNELS
  if (batched(l, false)) {
    float* squares = begin_state_gradients(
        ctx, scratch + gru_batch_backward_scratch_floats(l.units, l.batch), l.time);
    gru_sequence_batch_backward(cell, batch_layout(l, return_sequences), ctx.input(kX)->f32(), tape,
                                dout->f32(), dx ? dx->f32() : nullptr,
                                dstate ? dstate->f32() : nullptr, grads, scratch, squares);
    report_state_gradients(ctx, squares, l.time);
    return Status();
  }
#endif
  float* squares =
      begin_state_gradients(ctx, scratch + gru_backward_scratch_floats(l.units), l.time);
  for (int32_t b = 0; b < l.batch; ++b) {
    const int64_t row = static_cast<int64_t>(b) * l.units;
    gru_sequence_backward(cell, ctx.input(kX)->f32() + static_cast<int64_t>(b) * l.input_size,
                          static_cast<int64_t>(l.batch) * l.input_size, l.time,
                          tape + static_cast<int64_t>(b) * l.time * gru_tape_floats(l.units),
                          dout->f32() + row, return_sequences ? state_size : 0,
                          dx ? dx->f32() + static_cast<int64_t>(b) * l.input_size : nullptr,
                          dstate ? dstate->f32() + row : nullptr, grads, scratch, squares);
  }
  report_state_gradients(ctx, squares, l.time);
  return Status();
}

// W_x [3H, I] and W_h [3H, H] once per time step and batch row.
OpCost cost(const OpCostQuery& q) {
  return gru_cost(q.subgraph, q.op, kInputKernel, kRecurrentKernel);
}

}  // namespace

#if defined(GRUWB_CLONED_HOT_LOOPS)
extern const KernelRegistration kGruPackedKernel = {
    static_cast<int32_t>(BuiltinOperator::GRU),
    nullptr,
    prepare_packing,
    eval,
    GRUWB_BACKWARD(backward),
    cost,
    input_range(1, 4),
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(GRU) != 0};
#endif

extern const KernelRegistration kGruKernel = {static_cast<int32_t>(BuiltinOperator::GRU),
                                              nullptr,
                                              prepare,
                                              eval,
                                              GRUWB_BACKWARD(backward),
                                              cost,
                                              input_range(1, 4),
                                              /*dynamic_inputs=*/false,
                                              /*integer_activations=*/GRUWB_INTEGER_FORM(GRU) != 0};

}  // namespace gruwb
