// ZEROS_LIKE: zeros of the input's shape and type (Keras' zero states and
// masks). The output does not depend on the input's values, so its gradient
// is zero: the backward step has nothing to add.

#include <cstring>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(input, "input", &element_bytes));
  Tensor* output = ctx.output(0);
  output->type = input->type;
  set_output_shape(output, input->shape);
  return Status();
}

Status eval(OpContext& ctx) {
  Tensor* output = ctx.output(0);
  memset(output->data, 0, output->elements() * element_bytes_of(output->type));
  return Status();
}

Status backward(OpContext&) { return Status(); }

// Folded whenever the result is a small integer tensor: its values never
// depend on the input's.
Status prepare_and_fold(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(prepare(ctx));
  Tensor* output = ctx.output(0);
  const bool small_integer = output->type == TensorType::INT32 ||
                             output->type == TensorType::INT64 || output->type == TensorType::BOOL;
  if (!small_integer || output->elements() > kMaxFoldedElements) return Status();
  GRUWB_RETURN_IF_ERROR(make_output_constant(ctx, output));
  return eval(ctx);
}

}  // namespace

extern const KernelRegistration kZerosLikeKernel = {
    static_cast<int32_t>(BuiltinOperator::ZEROS_LIKE), nullptr, prepare_and_fold, eval,
    GRUWB_BACKWARD(backward)};

}  // namespace gruwb
