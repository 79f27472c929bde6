// GRUWB_MGU: the fused minimal gated unit as a CUSTOM op (README.md here is
// the specification).
//   0 x [B,T,I] ([T,B,I] with time_major)
//   1 kernel W [2H,I], rows f | h      2 recurrent kernel U [2H,H], rows f | h
//   3 bias [2H] (optional: zeros)
//   4 initial state [B,H] (optional: zeros); a variable tensor here receives
//     the final state, so a stateful model carries it to the next invoke.
// Output: [B,H], or [B,T,H] / [T,B,H] with return_sequences.
// Options: a FlexBuffer map {return_sequences, time_major}, both false when
// missing.

#include <cstdio>
#include <cstring>

#include "engine/kernels/kernel_util.h"
#include "engine/kernels/op_cost.h"
#include "plugins/cells/mgu/mgu_cell.h"

namespace gruwb {
namespace {

enum Input { kX = 0, kW, kU, kBias, kState };

struct Options {
  bool return_sequences = false;
  bool time_major = false;
};

Status parse_options(Span<uint8_t> bytes, Options* options) {
  *options = Options();
  return for_each_custom_option(bytes, "GRUWB_MGU", [&](const CustomOption& option) {
    if (option.is("return_sequences")) return option.read_bool(&options->return_sequences);
    if (option.is("time_major")) return option.read_bool(&options->time_major);
    return option.unknown();
  });
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
  GRUWB_RETURN_IF_ERROR(expect_float(x, "input"));
  SequenceLayout layout;
  GRUWB_RETURN_IF_ERROR(sequence_layout(x, options->time_major, &layout));
  const Tensor* u = ctx.input(kU);
  if (!u || u->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "input 2 (recurrent kernel) must be a [2H,H] matrix");
  }
  const int32_t units = u->shape.dims[1];
  const int32_t input_size = x->shape.dims[2];
  GRUWB_RETURN_IF_ERROR(check_dense_weights(u, 2 * units, units, "recurrent kernel (input 2)"));
  GRUWB_RETURN_IF_ERROR(expect_float(u, "recurrent kernel (input 2)"));
  GRUWB_RETURN_IF_ERROR(
      check_dense_weights(ctx.input(kW), 2 * units, input_size, "kernel (input 1)"));
  GRUWB_RETURN_IF_ERROR(expect_float(ctx.input(kW), "kernel (input 1)"));
  if (const Tensor* bias = ctx.input(kBias)) {
    GRUWB_RETURN_IF_ERROR(check_float_vector(bias, 2 * units, "bias (input 3)"));
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
  size_t bytes = 0;
  int slot = 0;
  GRUWB_RETURN_IF_ERROR(
      float_bytes(mgu_scratch_floats(input_size, units), "GRUWB_MGU scratch", &bytes));
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(bytes, &slot));
  if (ctx.training()) {
    // Backpropagation through time reads every step's h_prev, f and h~.
    GRUWB_RETURN_IF_ERROR(
        float_bytes(static_cast<int64_t>(layout.batch) * layout.time * mgu_tape_floats(units),
                    "GRUWB_MGU tape", &bytes));
    GRUWB_RETURN_IF_ERROR(ctx.request_tape(bytes));
    GRUWB_RETURN_IF_ERROR(float_bytes(mgu_backward_scratch_floats(units) + layout.time,
                                      "GRUWB_MGU backward scratch", &bytes));
    GRUWB_RETURN_IF_ERROR(ctx.request_backward_scratch(bytes, &slot));
  }
  return Status();
}

MguCell make_cell(OpContext& ctx) {
  const Tensor* u = ctx.input(kU);
  const Tensor* bias = ctx.input(kBias);
  MguCell cell;
  cell.units = u->shape.dims[1];
  cell.input_size = ctx.input(kW)->shape.dims[1];
  cell.input_kernel = ctx.input(kW)->f32();
  cell.recurrent_kernel = u->f32();
  cell.bias = bias ? bias->f32() : nullptr;
  return cell;
}

Status eval(OpContext& ctx) {
  const Options& options = *static_cast<const Options*>(ctx.user_data());
  const Tensor* x = ctx.input(kX);
  Tensor* state = ctx.input(kState);
  const MguCell cell = make_cell(ctx);
  const int32_t units = cell.units;
  SequenceLayout layout;
  sequence_layout(x, options.time_major, &layout);
  float* scratch = static_cast<float*>(ctx.scratch(0));
  float* out = ctx.output(0)->f32();
  const int64_t x_stride =
      layout.offset(0, 1, cell.input_size) - layout.offset(0, 0, cell.input_size);
  const int64_t out_stride = layout.offset(0, 1, units) - layout.offset(0, 0, units);
  for (int32_t b = 0; b < layout.batch; ++b) {
    const float* initial = state ? state->f32() + static_cast<int64_t>(b) * units : nullptr;
    // Return-last keeps the running state in its output row (stride 0).
    float* h = options.return_sequences ? out + layout.offset(b, 0, units)
                                        : out + static_cast<int64_t>(b) * units;
    float* tape = static_cast<float*>(ctx.tape());
    if (tape) tape += static_cast<int64_t>(b) * layout.time * mgu_tape_floats(units);
    mgu_sequence(cell, x->f32() + layout.offset(b, 0, cell.input_size), x_stride, layout.time,
                 initial, h, options.return_sequences ? out_stride : 0, scratch, tape);
    if (state && state->kind == TensorKind::kVariable && layout.time > 0) {
      const float* last = options.return_sequences ? h + (layout.time - 1) * out_stride : h;
      memcpy(state->f32() + static_cast<int64_t>(b) * units, last,
             sizeof(float) * static_cast<size_t>(units));
    }
  }
  return Status();
}

Status backward(OpContext& ctx) {
  const Options& options = *static_cast<const Options*>(ctx.user_data());
  const Tensor* x = ctx.input(kX);
  const Tensor* dout = ctx.gradient(ctx.output(0));
  const float* tape = static_cast<const float*>(ctx.tape());
  if (!dout || !tape) return Status();
  const MguCell cell = make_cell(ctx);
  const int32_t units = cell.units;
  MguGradients grads;
  Tensor* g = ctx.gradient(ctx.input(kW));
  grads.input_kernel = g ? g->f32() : nullptr;
  g = ctx.gradient(ctx.input(kU));
  grads.recurrent_kernel = g ? g->f32() : nullptr;
  g = ctx.gradient(ctx.input(kBias));
  grads.bias = g ? g->f32() : nullptr;
  Tensor* dx = ctx.gradient(x);
  const Tensor* state = ctx.input(kState);
  Tensor* dstate = state ? ctx.gradient(state) : nullptr;
  SequenceLayout layout;
  sequence_layout(x, options.time_major, &layout);
  const int64_t x_stride =
      layout.offset(0, 1, cell.input_size) - layout.offset(0, 0, cell.input_size);
  const int64_t out_stride = layout.offset(0, 1, units) - layout.offset(0, 0, units);
  float* scratch = static_cast<float*>(ctx.backward_scratch(0));
  float* squares =
      begin_state_gradients(ctx, scratch + mgu_backward_scratch_floats(units), layout.time);
  for (int32_t b = 0; b < layout.batch; ++b) {
    const float* d = options.return_sequences ? dout->f32() + layout.offset(b, 0, units)
                                              : dout->f32() + static_cast<int64_t>(b) * units;
    mgu_sequence_backward(cell, x->f32() + layout.offset(b, 0, cell.input_size), x_stride,
                          layout.time,
                          tape + static_cast<int64_t>(b) * layout.time * mgu_tape_floats(units), d,
                          options.return_sequences ? out_stride : 0,
                          dx ? dx->f32() + layout.offset(b, 0, cell.input_size) : nullptr,
                          dstate ? dstate->f32() + static_cast<int64_t>(b) * units : nullptr, grads,
                          scratch, squares);
  }
  report_state_gradients(ctx, squares, layout.time);
  return Status();
}

// W [2H, I] and U [2H, H] once per time step and batch row.
OpCost cost(const OpCostQuery& q) {
  if (!has_input(q.op, kW) || !has_input(q.op, kU)) return OpCost();
  const int64_t gates_hidden = input_dim(q.subgraph, q.op, kW, 0);
  const int64_t in = input_dim(q.subgraph, q.op, kW, 1);
  const int64_t hidden = input_dim(q.subgraph, q.op, kU, 1);
  const uint64_t steps = rows_of(q.subgraph, q.op, kX, in);
  if (steps == 0 || gates_hidden <= 0 || hidden <= 0) return OpCost();
  return make_cost(steps * static_cast<uint64_t>(gates_hidden * (in + hidden)),
                   "T*B {} x 2H {} x (I {} + H {})",
                   {static_cast<int64_t>(steps), gates_hidden, in, hidden});
}

}  // namespace

extern const KernelRegistration kMguKernel = {kOpCustom,
                                              "GRUWB_MGU",
                                              prepare,
                                              eval,
                                              GRUWB_BACKWARD(backward),
                                              cost,
                                              input_range(kW, kBias),
                                              /*dynamic_inputs=*/false,
                                              /*integer_activations=*/false};

}  // namespace gruwb
