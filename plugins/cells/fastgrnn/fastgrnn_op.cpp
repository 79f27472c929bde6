// GRUWB_FASTGRNN: the fused FastGRNN cell as a CUSTOM op (README.md here is
// the specification).
//   0 x [B,T,I] ([T,B,I] with time_major)
//   1 W [H,I]              2 U [H,H]
//   3 bias [2,H] (optional: zeros): row 0 b_z (gate), row 1 b_h (update)
//   4 zeta [1]             5 nu [1]   (before their sigmoids)
//   6 initial state [B,H] (optional: zeros); a variable tensor here receives
//     the final state, so a stateful model carries it to the next invoke.
// Output: [B,H], or [B,T,H] / [T,B,H] with return_sequences.
// Options: a FlexBuffer map {return_sequences, time_major, gate_nonlinearity,
// update_nonlinearity}; missing keys take EdgeML's defaults.

#include <cstdio>
#include <cstring>

#include "engine/kernels/kernel_util.h"
#include "engine/kernels/op_cost.h"
#include "plugins/cells/fastgrnn/fastgrnn_cell.h"

namespace gruwb {
namespace {

enum Input { kX = 0, kW, kU, kBias, kZeta, kNu, kState };

struct Options {
  bool return_sequences = false;
  bool time_major = false;
  FastGrnnNonlinearity gate = FastGrnnNonlinearity::kSigmoid;
  FastGrnnNonlinearity update = FastGrnnNonlinearity::kTanh;
};

Status read_nonlinearity(const CustomOption& option, FastGrnnNonlinearity* out) {
  const char* name = nullptr;
  GRUWB_RETURN_IF_ERROR(option.read_string(&name));
  if (strcmp(name, "sigmoid") == 0) {
    *out = FastGrnnNonlinearity::kSigmoid;
  } else if (strcmp(name, "tanh") == 0) {
    *out = FastGrnnNonlinearity::kTanh;
  } else if (strcmp(name, "relu") == 0) {
    *out = FastGrnnNonlinearity::kRelu;
  } else {
    return Status::error(StatusCode::kUnsupported,
                         "GRUWB_FASTGRNN %s '%s' (supported: sigmoid, tanh, relu)", option.key,
                         name);
  }
  return Status();
}

Status parse_options(Span<uint8_t> bytes, Options* options) {
  *options = Options();
  return for_each_custom_option(bytes, "GRUWB_FASTGRNN", [&](const CustomOption& option) {
    if (option.is("return_sequences")) return option.read_bool(&options->return_sequences);
    if (option.is("time_major")) return option.read_bool(&options->time_major);
    if (option.is("gate_nonlinearity")) return read_nonlinearity(option, &options->gate);
    if (option.is("update_nonlinearity")) return read_nonlinearity(option, &options->update);
    return option.unknown();
  });
}

Status check_scalar(const Tensor* tensor, const char* role) {
  if (!tensor) return Status::error(StatusCode::kInvalidModel, "%s is missing", role);
  GRUWB_RETURN_IF_ERROR(expect_float(tensor, role));
  if (tensor->elements() != 1) return shape_error(tensor, role, "[1]");
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 6, 7));
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
    return Status::error(StatusCode::kInvalidModel, "input 2 (recurrent kernel U) must be [H,H]");
  }
  const int32_t units = u->shape.dims[1];
  const int32_t input_size = x->shape.dims[2];
  GRUWB_RETURN_IF_ERROR(check_dense_weights(u, units, units, "recurrent kernel U (input 2)"));
  GRUWB_RETURN_IF_ERROR(expect_float(u, "recurrent kernel U (input 2)"));
  GRUWB_RETURN_IF_ERROR(
      check_dense_weights(ctx.input(kW), units, input_size, "kernel W (input 1)"));
  GRUWB_RETURN_IF_ERROR(expect_float(ctx.input(kW), "kernel W (input 1)"));
  if (const Tensor* bias = ctx.input(kBias)) {
    GRUWB_RETURN_IF_ERROR(expect_float(bias, "bias (input 3)"));
    if (bias->shape.rank != 2 || bias->shape.dims[0] != 2 || bias->shape.dims[1] != units) {
      char expected[32];
      snprintf(expected, sizeof expected, "[2,%d]", static_cast<int>(units));
      return shape_error(bias, "bias (input 3)", expected);
    }
  }
  GRUWB_RETURN_IF_ERROR(check_scalar(ctx.input(kZeta), "zeta (input 4)"));
  GRUWB_RETURN_IF_ERROR(check_scalar(ctx.input(kNu), "nu (input 5)"));
  if (const Tensor* state = ctx.input(kState)) {
    GRUWB_RETURN_IF_ERROR(expect_float(state, "initial state"));
    if (state->shape.rank != 2 || state->shape.dims[0] != layout.batch ||
        state->shape.dims[1] != units) {
      char expected[32];
      snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(layout.batch),
               static_cast<int>(units));
      return shape_error(state, "initial state (input 6)", expected);
    }
  }
  Tensor* output = ctx.output(0);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, options->return_sequences ? sequence_shape(layout, units)
                                                     : make_shape({layout.batch, units}));
  size_t bytes = 0;
  int slot = 0;
  GRUWB_RETURN_IF_ERROR(
      float_bytes(fastgrnn_scratch_floats(input_size, units), "GRUWB_FASTGRNN scratch", &bytes));
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(bytes, &slot));
  if (ctx.training()) {
    // Backpropagation through time reads every step's h_prev, z and h~.
    GRUWB_RETURN_IF_ERROR(
        float_bytes(static_cast<int64_t>(layout.batch) * layout.time * fastgrnn_tape_floats(units),
                    "GRUWB_FASTGRNN tape", &bytes));
    GRUWB_RETURN_IF_ERROR(ctx.request_tape(bytes));
    GRUWB_RETURN_IF_ERROR(float_bytes(fastgrnn_backward_scratch_floats(units) + layout.time,
                                      "GRUWB_FASTGRNN backward scratch", &bytes));
    GRUWB_RETURN_IF_ERROR(ctx.request_backward_scratch(bytes, &slot));
  }
  return Status();
}

FastGrnnCell make_cell(OpContext& ctx, const Options& options) {
  const Tensor* u = ctx.input(kU);
  FastGrnnCell cell;
  cell.units = u->shape.dims[1];
  cell.input_size = ctx.input(kW)->shape.dims[1];
  cell.input_kernel = ctx.input(kW)->f32();
  cell.recurrent_kernel = u->f32();
  if (const Tensor* bias = ctx.input(kBias)) {
    cell.gate_bias = bias->f32();
    cell.update_bias = bias->f32() + cell.units;
  }
  cell.zeta = ctx.input(kZeta)->f32()[0];
  cell.nu = ctx.input(kNu)->f32()[0];
  cell.gate = options.gate;
  cell.update = options.update;
  return cell;
}

Status eval(OpContext& ctx) {
  const Options& options = *static_cast<const Options*>(ctx.user_data());
  const Tensor* x = ctx.input(kX);
  Tensor* state = ctx.input(kState);
  const FastGrnnCell cell = make_cell(ctx, options);
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
    if (tape) tape += static_cast<int64_t>(b) * layout.time * fastgrnn_tape_floats(units);
    fastgrnn_sequence(cell, x->f32() + layout.offset(b, 0, cell.input_size), x_stride, layout.time,
                      initial, h, options.return_sequences ? out_stride : 0, scratch, tape);
    if (state && state->kind == TensorKind::kVariable && layout.time > 0) {
      const float* last = options.return_sequences ? h + (layout.time - 1) * out_stride : h;
      memcpy(state->f32() + static_cast<int64_t>(b) * units, last,
             sizeof(float) * static_cast<size_t>(units));
    }
  }
  return Status();
}

float* gradient_of(OpContext& ctx, int input, int64_t offset = 0) {
  Tensor* g = ctx.gradient(ctx.input(input));
  return g ? g->f32() + offset : nullptr;
}

Status backward(OpContext& ctx) {
  const Options& options = *static_cast<const Options*>(ctx.user_data());
  const Tensor* x = ctx.input(kX);
  const Tensor* dout = ctx.gradient(ctx.output(0));
  const float* tape = static_cast<const float*>(ctx.tape());
  if (!dout || !tape) return Status();
  const FastGrnnCell cell = make_cell(ctx, options);
  const int32_t units = cell.units;
  FastGrnnGradients grads;
  grads.input_kernel = gradient_of(ctx, kW);
  grads.recurrent_kernel = gradient_of(ctx, kU);
  grads.gate_bias = gradient_of(ctx, kBias);
  grads.update_bias = gradient_of(ctx, kBias, units);
  grads.zeta = gradient_of(ctx, kZeta);
  grads.nu = gradient_of(ctx, kNu);
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
      begin_state_gradients(ctx, scratch + fastgrnn_backward_scratch_floats(units), layout.time);
  for (int32_t b = 0; b < layout.batch; ++b) {
    const float* d = options.return_sequences ? dout->f32() + layout.offset(b, 0, units)
                                              : dout->f32() + static_cast<int64_t>(b) * units;
    fastgrnn_sequence_backward(
        cell, x->f32() + layout.offset(b, 0, cell.input_size), x_stride, layout.time,
        tape + static_cast<int64_t>(b) * layout.time * fastgrnn_tape_floats(units), d,
        options.return_sequences ? out_stride : 0,
        dx ? dx->f32() + layout.offset(b, 0, cell.input_size) : nullptr,
        dstate ? dstate->f32() + static_cast<int64_t>(b) * units : nullptr, grads, scratch,
        squares);
  }
  report_state_gradients(ctx, squares, layout.time);
  return Status();
}

// W [H, I] and U [H, H] once per time step and batch row (the gate and the
// candidate share both products).
OpCost cost(const OpCostQuery& q) {
  if (!has_input(q.op, kW) || !has_input(q.op, kU)) return OpCost();
  const int64_t hidden = input_dim(q.subgraph, q.op, kU, 0);
  const int64_t in = input_dim(q.subgraph, q.op, kW, 1);
  const uint64_t steps = rows_of(q.subgraph, q.op, kX, in);
  if (steps == 0 || hidden <= 0) return OpCost();
  return make_cost(steps * static_cast<uint64_t>(hidden * (in + hidden)),
                   "T*B {} x H {} x (I {} + H {})",
                   {static_cast<int64_t>(steps), hidden, in, hidden});
}

}  // namespace

extern const KernelRegistration kFastGrnnKernel = {kOpCustom,
                                                   "GRUWB_FASTGRNN",
                                                   prepare,
                                                   eval,
                                                   GRUWB_BACKWARD(backward),
                                                   cost,
                                                   input_range(kW, kNu),
                                                   /*dynamic_inputs=*/false,
                                                   /*integer_activations=*/false};

}  // namespace gruwb
