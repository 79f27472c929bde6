// Element-wise math: EXP, SQRT, RSQRT (float32) and NEG, ABS, SQUARE (float32,
// or int32 as shape arithmetic needs; small constant results fold). One
// family, one file: the ops differ only in their scalar function and its
// derivative.

#include <cmath>
#include <cstdint>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"

namespace gruwb {
namespace {

template <bool kIntegerToo>
Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  if (!(input->type == TensorType::FLOAT32 || (kIntegerToo && input->type == TensorType::INT32))) {
    return Status::error(StatusCode::kUnsupported, "input '%s' is %s, expected FLOAT32%s",
                         input->name, tensor_type_name(input->type),
                         kIntegerToo ? " or INT32" : "");
  }
  Tensor* output = ctx.output(0);
  output->type = input->type;
  set_output_shape(output, input->shape);
  return Status();
}

template <typename F>
Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  const int64_t n = output->elements();
  F f;
  if (input->type == TensorType::INT32) {
    const int32_t* x = input->i32();
    int32_t* y = output->i32();
    for (int64_t i = 0; i < n; ++i) y[i] = f.integer(x[i]);
  } else {
    const float* x = input->f32();
    float* y = output->f32();
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  }
  return Status();
}

// Training: dx += dy * f'(x), with f' given x and y = f(x).
template <typename F>
Status backward(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  Tensor* dx = ctx.gradient(input);
  if (!dy || !dx) return Status();
  const float* x = input->f32();
  const float* y = output->f32();
  const float* g = dy->f32();
  float* d = dx->f32();
  const int64_t n = output->elements();
  F f;
  for (int64_t i = 0; i < n; ++i) d[i] += g[i] * f.derivative(x[i], y[i]);
  return Status();
}

struct ExpFn {
  float operator()(float x) const { return std::exp(x); }
  int32_t integer(int32_t x) const { return x; }  // unused: float only
  float derivative(float, float y) const { return y; }
};
struct SqrtFn {
  float operator()(float x) const { return std::sqrt(x); }
  int32_t integer(int32_t x) const { return x; }
  float derivative(float, float y) const { return 0.5f / y; }
};
struct RsqrtFn {
  float operator()(float x) const { return 1.f / std::sqrt(x); }
  int32_t integer(int32_t x) const { return x; }
  float derivative(float, float y) const { return -0.5f * y * y * y; }
};
// Integer versions wrap on overflow as TFLite's do (two's complement).
struct NegFn {
  float operator()(float x) const { return -x; }
  int32_t integer(int32_t x) const { return static_cast<int32_t>(0u - static_cast<uint32_t>(x)); }
  float derivative(float, float) const { return -1.f; }
};
struct AbsFn {
  float operator()(float x) const { return std::fabs(x); }
  int32_t integer(int32_t x) const { return x < 0 ? NegFn().integer(x) : x; }
  // Zero at 0, as TensorFlow's gradient (sign(x)).
  float derivative(float x, float) const { return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f); }
};
struct SquareFn {
  float operator()(float x) const { return x * x; }
  int32_t integer(int32_t x) const {
    return static_cast<int32_t>(static_cast<uint32_t>(x) * static_cast<uint32_t>(x));
  }
  float derivative(float x, float) const { return 2.f * x; }
};

template <BuiltinOperator kOp, typename F, bool kIntegerToo>
constexpr KernelRegistration unary() {
  return {static_cast<int32_t>(kOp), nullptr, prepare_then_fold<prepare<kIntegerToo>, eval<F>>,
          eval<F>, backward<F>};
}

}  // namespace

extern const KernelRegistration kExpKernel = unary<BuiltinOperator::EXP, ExpFn, false>();
extern const KernelRegistration kSqrtKernel = unary<BuiltinOperator::SQRT, SqrtFn, false>();
extern const KernelRegistration kRsqrtKernel = unary<BuiltinOperator::RSQRT, RsqrtFn, false>();
extern const KernelRegistration kNegKernel = unary<BuiltinOperator::NEG, NegFn, true>();
extern const KernelRegistration kAbsKernel = unary<BuiltinOperator::ABS, AbsFn, true>();
extern const KernelRegistration kSquareKernel = unary<BuiltinOperator::SQUARE, SquareFn, true>();

}  // namespace gruwb
