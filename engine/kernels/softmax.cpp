// SOFTMAX over the last dimension, with beta; max-subtracted for stability.

#include "engine/kernels/kernel_util.h"

namespace gruwb {
namespace {

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  GRUWB_RETURN_IF_ERROR(expect_float(input, "input"));
  if (input->shape.rank < 1) {
    return Status::error(StatusCode::kInvalidModel, "input '%s' must have rank >= 1", input->name);
  }
  ctx.output(0)->type = TensorType::FLOAT32;
  set_output_shape(ctx.output(0), input->shape);
  return Status();
}

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const auto* options = ctx.op().options<fb::SoftmaxOptions>();
  float beta = options ? options->beta() : 1.f;
  int32_t depth = input->shape.dims[input->shape.rank - 1];
  int64_t rows = depth ? input->elements() / depth : 0;
  const float* x = input->f32();
  float* y = ctx.output(0)->f32();
  for (int64_t r = 0; r < rows; ++r, x += depth, y += depth) {
    float max = x[0];
    for (int32_t i = 1; i < depth; ++i) max = x[i] > max ? x[i] : max;
    float sum = 0.f;
    for (int32_t i = 0; i < depth; ++i) {
      y[i] = std::exp((x[i] - max) * beta);
      sum += y[i];
    }
    float inverse = 1.f / sum;
    for (int32_t i = 0; i < depth; ++i) y[i] *= inverse;
  }
  return Status();
}

// dx_i = beta * y_i * (dy_i - sum_j dy_j y_j) per row.
Status backward(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  Tensor* dx = ctx.gradient(input);
  if (!dy || !dx) return Status();
  const auto* options = ctx.op().options<fb::SoftmaxOptions>();
  float beta = options ? options->beta() : 1.f;
  int32_t depth = input->shape.dims[input->shape.rank - 1];
  int64_t rows = depth ? input->elements() / depth : 0;
  const float* y = output->f32();
  const float* g = dy->f32();
  float* d = dx->f32();
  for (int64_t r = 0; r < rows; ++r, y += depth, g += depth, d += depth) {
    float dot = 0.f;
    for (int32_t i = 0; i < depth; ++i) dot += g[i] * y[i];
    for (int32_t i = 0; i < depth; ++i) d[i] += beta * y[i] * (g[i] - dot);
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kSoftmaxKernel = {static_cast<int32_t>(BuiltinOperator::SOFTMAX),
                                                  nullptr, prepare, eval, GRUWB_BACKWARD(backward)};

}  // namespace gruwb
