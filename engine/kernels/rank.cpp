// RANK: the input's number of dimensions as an INT32 scalar. Shapes are
// static after prepare, so the value is computed once and becomes a constant
// (as SHAPE does): the converter's RANGE(0, RANK(x), 1) reduction axes and
// set-item bounds then fold too.

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

Status eval(OpContext& ctx) {
  ctx.output(0)->i32()[0] = ctx.input(0)->shape.rank;
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  Tensor* output = ctx.output(0);
  output->type = TensorType::INT32;
  set_output_shape(output, Shape());
  GRUWB_RETURN_IF_ERROR(make_output_constant(ctx, output));
  return eval(ctx);
}

}  // namespace

extern const KernelRegistration kRankKernel = {static_cast<int32_t>(BuiltinOperator::RANK), nullptr,
                                               prepare, eval};

}  // namespace gruwb
