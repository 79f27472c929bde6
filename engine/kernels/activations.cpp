// Element-wise activations: LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1,
// RELU_0_TO_1, ELU and LEAKY_RELU (float32).
// LOGISTIC and TANH run through the recurrent kernels' vectorized
// vector_sigmoid / vector_tanh (max error ~2e-7): in a GRU written as a WHILE
// loop they are the gate nonlinearities, once per unit per step, and libm's
// exp/tanh were a quarter of that model's time.
// int8/uint8 LOGISTIC and TANH (full-integer models) are TFLite's builtin
// kernels: a 256-entry table built at prepare by dequantizing every input
// value, applying the function in float and quantizing the result to the
// output's scale and zero point (round half away from zero, clamped).

#include <cmath>
#include <cstring>

#include "engine/kernels/kernel_util.h"
#include "engine/kernels/quant_util.h"
#include "engine/kernels/recurrent_util.h"

namespace gruwb {
namespace {

// The table of an 8-bit activation: table[uint8(q)] is the output for input q.
Status prepare_lookup_table(OpContext& ctx, float (*function)(float)) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  int32_t min = 0, max = 0;
  if (input->type != TensorType::INT8 && input->type != TensorType::UINT8) {
    return Status::error(StatusCode::kUnsupported, "%s input '%s' (int8 or uint8)",
                         tensor_type_name(input->type), input->name);
  }
  GRUWB_RETURN_IF_ERROR(expect_type(output, input->type, "output"));
  integer_range(input->type, &min, &max);
  TensorQuantization in, out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(256, &memory));
  uint8_t* table = static_cast<uint8_t*>(memory);
  const float inverse_scale = 1.f / out.scale;
  for (int32_t q = min; q <= max; ++q) {
    const float x = in.scale * static_cast<float>(q - in.zero_point);
    const float rescaled = std::round(function(x) * inverse_scale);
    int32_t y = static_cast<int32_t>(rescaled + static_cast<float>(out.zero_point));
    y = y < min ? min : (y > max ? max : y);
    table[static_cast<uint8_t>(q)] = static_cast<uint8_t>(y);  // int8 stored as its bits
  }
  ctx.set_user_data(table);
  set_output_shape(output, input->shape);
  return Status();
}

Status eval_lookup_table(OpContext& ctx) {
  const uint8_t* table = static_cast<const uint8_t*>(ctx.user_data());
  const uint8_t* x = ctx.input(0)->data;
  uint8_t* y = ctx.output(0)->data;
  const int64_t n = ctx.output(0)->elements();
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
  return Status();
}

bool is_8bit(TensorType type) { return type == TensorType::INT8 || type == TensorType::UINT8; }

float logistic_of(float x) { return 1.f / (1.f + std::exp(-x)); }
float tanh_of(float x) { return std::tanh(x); }

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  GRUWB_RETURN_IF_ERROR(expect_float(ctx.input(0), "input"));
  ctx.output(0)->type = TensorType::FLOAT32;
  set_output_shape(ctx.output(0), ctx.input(0)->shape);
  return Status();
}

Status prepare_logistic(OpContext& ctx) {
  if (GRUWB_INTEGER_FORM(LOGISTIC) && ctx.input_count() == 1 && ctx.input(0) &&
      is_8bit(ctx.input(0)->type) && ctx.output_count() == 1) {
    return prepare_lookup_table(ctx, logistic_of);
  }
  return prepare(ctx);
}

Status prepare_tanh(OpContext& ctx) {
  if (GRUWB_INTEGER_FORM(TANH) && ctx.input_count() == 1 && ctx.input(0) &&
      is_8bit(ctx.input(0)->type) && ctx.output_count() == 1) {
    return prepare_lookup_table(ctx, tanh_of);
  }
  return prepare(ctx);
}

template <typename F>
Status eval(OpContext& ctx) {
  if ((GRUWB_INTEGER_FORM(LOGISTIC) || GRUWB_INTEGER_FORM(TANH)) &&
      ctx.input(0)->type != TensorType::FLOAT32) {
    return eval_lookup_table(ctx);
  }
  const float* x = ctx.input(0)->f32();
  float* y = ctx.output(0)->f32();
  int64_t n = ctx.output(0)->elements();
  F f;
  f.apply(x, y, n);
  return Status();
}

// In place in blocks that fit int32_t (the vector helpers' count).
template <void (*vector_fn)(float*, int32_t)>
void apply_vector(const float* x, float* y, int64_t n) {
  if (x != y) memcpy(y, x, sizeof(float) * static_cast<size_t>(n));
  const int64_t kBlock = int64_t{1} << 30;
  for (int64_t i = 0; i < n; i += kBlock) {
    vector_fn(y + i, static_cast<int32_t>(n - i < kBlock ? n - i : kBlock));
  }
}

template <typename F>
void apply_each(const F& f, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// Training: dx += dy * f'(x), with f' written in terms of the output y.
template <typename F>
Status backward(OpContext& ctx) {
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  Tensor* dx = ctx.gradient(ctx.input(0));
  if (!dy || !dx) return Status();
  const float* y = output->f32();
  const float* g = dy->f32();
  float* d = dx->f32();
  int64_t n = output->elements();
  F f;
  for (int64_t i = 0; i < n; ++i) d[i] += g[i] * f.derivative(y[i]);
  return Status();
}

struct LogisticFn {
  void apply(const float* x, float* y, int64_t n) const { apply_vector<vector_sigmoid>(x, y, n); }
  float derivative(float y) const { return y * (1.f - y); }
};
struct TanhFn {
  void apply(const float* x, float* y, int64_t n) const { apply_vector<vector_tanh>(x, y, n); }
  float derivative(float y) const { return 1.f - y * y; }
};
struct ReluFn {
  float operator()(float x) const { return x < 0.f ? 0.f : x; }
  void apply(const float* x, float* y, int64_t n) const { apply_each(*this, x, y, n); }
  float derivative(float y) const { return y > 0.f ? 1.f : 0.f; }
};
struct Relu6Fn {
  float operator()(float x) const { return x < 0.f ? 0.f : (x > 6.f ? 6.f : x); }
  void apply(const float* x, float* y, int64_t n) const { apply_each(*this, x, y, n); }
  float derivative(float y) const { return y > 0.f && y < 6.f ? 1.f : 0.f; }
};
struct ReluN1To1Fn {
  float operator()(float x) const { return x < -1.f ? -1.f : (x > 1.f ? 1.f : x); }
  void apply(const float* x, float* y, int64_t n) const { apply_each(*this, x, y, n); }
  float derivative(float y) const { return y > -1.f && y < 1.f ? 1.f : 0.f; }
};
struct Relu0To1Fn {
  float operator()(float x) const { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
  void apply(const float* x, float* y, int64_t n) const { apply_each(*this, x, y, n); }
  float derivative(float y) const { return y > 0.f && y < 1.f ? 1.f : 0.f; }
};
// As TFLite: expm1 for negative inputs; d/dx = exp(x) = y + 1 there.
struct EluFn {
  float operator()(float x) const { return x < 0.f ? std::expm1(x) : x; }
  void apply(const float* x, float* y, int64_t n) const { apply_each(*this, x, y, n); }
  float derivative(float y) const { return y < 0.f ? y + 1.f : 1.f; }
};

// LEAKY_RELU: x > 0 ? x : alpha * x, alpha from LeakyReluOptions. The
// derivative needs the input's sign (alpha may be negative or zero).
float leaky_alpha(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::LeakyReluOptions>();
  return options ? options->alpha() : 0.f;
}

Status eval_leaky_relu(OpContext& ctx) {
  const float alpha = leaky_alpha(ctx);
  const float* x = ctx.input(0)->f32();
  float* y = ctx.output(0)->f32();
  const int64_t n = ctx.output(0)->elements();
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : x[i] * alpha;
  return Status();
}

Status backward_leaky_relu(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(input);
  if (!dy || !dx) return Status();
  const float alpha = leaky_alpha(ctx);
  const float* x = input->f32();
  const float* g = dy->f32();
  float* d = dx->f32();
  const int64_t n = input->elements();
  for (int64_t i = 0; i < n; ++i) d[i] += x[i] > 0.f ? g[i] : g[i] * alpha;
  return Status();
}

}  // namespace

extern const KernelRegistration kLogisticKernel = {
    static_cast<int32_t>(BuiltinOperator::LOGISTIC),
    nullptr,
    prepare_logistic,
    eval<LogisticFn>,
    GRUWB_BACKWARD(backward<LogisticFn>),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(LOGISTIC) != 0};
extern const KernelRegistration kTanhKernel = {
    static_cast<int32_t>(BuiltinOperator::TANH),
    nullptr,
    prepare_tanh,
    eval<TanhFn>,
    GRUWB_BACKWARD(backward<TanhFn>),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(TANH) != 0};
extern const KernelRegistration kReluKernel = {static_cast<int32_t>(BuiltinOperator::RELU), nullptr,
                                               prepare, eval<ReluFn>,
                                               GRUWB_BACKWARD(backward<ReluFn>)};
extern const KernelRegistration kRelu6Kernel = {static_cast<int32_t>(BuiltinOperator::RELU6),
                                                nullptr, prepare, eval<Relu6Fn>,
                                                GRUWB_BACKWARD(backward<Relu6Fn>)};
extern const KernelRegistration kReluN1To1Kernel = {
    static_cast<int32_t>(BuiltinOperator::RELU_N1_TO_1), nullptr, prepare, eval<ReluN1To1Fn>,
    GRUWB_BACKWARD(backward<ReluN1To1Fn>)};
extern const KernelRegistration kRelu0To1Kernel = {
    static_cast<int32_t>(BuiltinOperator::RELU_0_TO_1), nullptr, prepare, eval<Relu0To1Fn>,
    GRUWB_BACKWARD(backward<Relu0To1Fn>)};
extern const KernelRegistration kEluKernel = {static_cast<int32_t>(BuiltinOperator::ELU), nullptr,
                                              prepare, eval<EluFn>,
                                              GRUWB_BACKWARD(backward<EluFn>)};
extern const KernelRegistration kLeakyReluKernel = {
    static_cast<int32_t>(BuiltinOperator::LEAKY_RELU), nullptr, prepare, eval_leaky_relu,
    GRUWB_BACKWARD(backward_leaky_relu)};

}  // namespace gruwb
