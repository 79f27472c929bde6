// LOGICAL_AND, LOGICAL_OR (broadcasting) and LOGICAL_NOT on BOOL tensors. The
// converter's two-counter WHILE condition is LESS + LESS + LOGICAL_AND. Small
// constant results are folded at prepare (see fold_if_constant).

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"

namespace gruwb {
namespace {

Status expect_bool(const Tensor* tensor, const char* role) {
  return expect_type(tensor, TensorType::BOOL, role);
}

Status prepare_binary(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* a = ctx.input(0);
  const Tensor* b = ctx.input(1);
  GRUWB_RETURN_IF_ERROR(expect_bool(a, "first input"));
  GRUWB_RETURN_IF_ERROR(expect_bool(b, "second input"));
  Shape shape;
  GRUWB_RETURN_IF_ERROR(broadcast_shapes(a->shape, b->shape, &shape));
  Tensor* out = ctx.output(0);
  out->type = TensorType::BOOL;
  set_output_shape(out, shape);
  return Status();
}

template <bool kAnd>
Status eval_binary(OpContext& ctx) {
  const Tensor* a = ctx.input(0);
  const Tensor* b = ctx.input(1);
  Tensor* out = ctx.output(0);
  const uint8_t* x = a->data;
  const uint8_t* y = b->data;
  uint8_t* z = out->data;
  auto f = [](uint8_t p, uint8_t q) -> uint8_t {
    return kAnd ? (p != 0 && q != 0) : (p != 0 || q != 0);
  };
  if (a->shape == b->shape) {
    for (int64_t i = 0; i < out->elements(); ++i) z[i] = f(x[i], y[i]);
  } else {
    for_each_broadcast(out->shape, a->shape, b->shape,
                       [&](int64_t o, int64_t i, int64_t j) { z[o] = f(x[i], y[j]); });
  }
  return Status();
}

Status prepare_not(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  GRUWB_RETURN_IF_ERROR(expect_bool(ctx.input(0), "input"));
  Tensor* out = ctx.output(0);
  out->type = TensorType::BOOL;
  set_output_shape(out, ctx.input(0)->shape);
  return Status();
}

Status eval_not(OpContext& ctx) {
  const uint8_t* x = ctx.input(0)->data;
  uint8_t* z = ctx.output(0)->data;
  const int64_t n = ctx.output(0)->elements();
  for (int64_t i = 0; i < n; ++i) z[i] = x[i] == 0;
  return Status();
}

}  // namespace

extern const KernelRegistration kLogicalAndKernel = {
    static_cast<int32_t>(BuiltinOperator::LOGICAL_AND), nullptr,
    prepare_then_fold<prepare_binary, eval_binary<true>>, eval_binary<true>};
extern const KernelRegistration kLogicalOrKernel = {
    static_cast<int32_t>(BuiltinOperator::LOGICAL_OR), nullptr,
    prepare_then_fold<prepare_binary, eval_binary<false>>, eval_binary<false>};
extern const KernelRegistration kLogicalNotKernel = {
    static_cast<int32_t>(BuiltinOperator::LOGICAL_NOT), nullptr,
    prepare_then_fold<prepare_not, eval_not>, eval_not};

}  // namespace gruwb
