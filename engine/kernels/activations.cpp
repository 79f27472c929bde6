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
// int16 LOGISTIC and TANH (16x8 models) as TFLite's reference integer kernels
// and TFLite Micro: the input rescaled to 3 * 4096 steps per unit (an int16
// multiplier and a rounding right shift), then linear interpolation in a
// 256-entry table of sigmoid(i / 24) in 0.16 fixed point; TANH reads the same
// table at twice the rate (tanh(x) = 2 sigmoid(2x) - 1).

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
    // Saturated: a denormal output scale makes inverse_scale infinite (and 0 * inf NaN).
    const int64_t y =
        static_cast<int64_t>(round_saturated(function(x) * inverse_scale)) + out.zero_point;
    // int8 is stored as its bits
    table[static_cast<uint8_t>(q)] = static_cast<uint8_t>(y < min ? min : (y > max ? max : y));
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

struct Int16Activation {
  uint16_t table[256];  // sigmoid(i / 24) in 0.16
  int32_t multiplier;   // input * multiplier >> shift: 3 * 4096 steps per unit
  int32_t shift;
  bool tanh;
};

// TFLite's table is documented as sigmoid(i/24) in 0.16 but lies up to ~1.1 above it: each
// entry is raised by half the sag of the chord to the next one (the largest error of linear
// interpolation there), as TFLite's gen_lut does for its other tables (there with each term
// rounded). This formula reproduces all 256 entries (checked against real TFLite over every
// int16 input, docs/integer-kernels.md).
void sigmoid_interpolation_table(uint16_t* table) {
  const double step = 1.0 / 24.0;
  const auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  for (int i = 0; i < 256; ++i) {
    const double x = i * step;
    const double sag = sigmoid(x + step / 2) - (sigmoid(x) + sigmoid(x + step)) / 2;
    const double v = std::round(65536.0 * (sigmoid(x) + sag / 2));
    table[i] = static_cast<uint16_t>(v > 65535.0 ? 65535.0 : v);
  }
}

// int16 in and out, zero points 0, output scale 2^-15 (TFLite's rules).
Status prepare_int16(OpContext& ctx, bool tanh) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  GRUWB_RETURN_IF_ERROR(expect_type(output, TensorType::INT16, "output"));
  TensorQuantization in, out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  int32_t out_log2 = 0;
  if (in.zero_point != 0 || out.zero_point != 0 || !checked_log2(out.scale, &out_log2) ||
      out_log2 != -15) {
    return Status::error(StatusCode::kUnsupported,
                         "int16 input '%s' and output '%s' need zero point 0 and output scale "
                         "2^-15 (have %g, %d and %g, %d)",
                         input->name, output->name, static_cast<double>(in.scale),
                         static_cast<int>(in.zero_point), static_cast<double>(out.scale),
                         static_cast<int>(out.zero_point));
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(Int16Activation), &memory));
  Int16Activation* data = static_cast<Int16Activation*>(memory);
  sigmoid_interpolation_table(data->table);
  data->tanh = tanh;
  // Q3.12 input (Q3.12 or Q4.11 for TANH): 3 << shift exactly; else the scale times
  // 3 * 4096 doubled up to [2^14, 2^15), truncated (TFLite's Prepare).
  int32_t in_log2 = 0;
  const bool pot = checked_log2(in.scale, &in_log2);
  const int32_t left = 12 + in_log2;
  if (pot && (left == 0 || (tanh && left == 1))) {
    data->multiplier = 3 << left;
    data->shift = 0;
  } else {
    double multiplier = static_cast<double>(in.scale) * 4096.0 * 3.0;
    int32_t shift = 0;
    while (multiplier <= 32767.0 / 2.0 && shift <= 30) {
      ++shift;
      multiplier *= 2.0;
    }
    if (multiplier > 32767.0) {
      return Status::error(StatusCode::kUnsupported,
                           "int16 input '%s' scale %g is above 32767 / 12288 (TFLite's limit)",
                           input->name, static_cast<double>(in.scale));
    }
    data->multiplier = static_cast<int32_t>(multiplier);
    data->shift = shift;
  }
  ctx.set_user_data(data);
  set_output_shape(output, input->shape);
  return Status();
}

// TFLite's reference integer Logistic / Tanh for one int16 value.
int16_t int16_activation(const Int16Activation& p, int32_t x) {
  const int32_t round = p.shift > 0 ? 1 << (p.shift - 1) : 0;
  const int32_t v = (x * p.multiplier + round) >> p.shift;
  const uint32_t a = static_cast<uint32_t>(v < 0 ? -v : v);
  // 9 (LOGISTIC) or 8 (TANH: twice the rate) fraction bits between table entries.
  const uint32_t bits = p.tanh ? 8 : 9;
  const uint32_t index = a >> bits;
  const uint32_t t = a & ((1u << bits) - 1);
  const uint32_t ua = index < 255 ? p.table[index] : 0, ub = index < 255 ? p.table[index + 1] : 0;
  if (!p.tanh) {
    uint32_t r = index >= 255 ? 0x7FFFu << 10 : (ua << 9) + t * (ub - ua);
    r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
    return static_cast<int16_t>(r >> 10);
  }
  int32_t r = static_cast<int32_t>(index >= 255 ? 0xFFFFu << 8 : (ua << 8) + t * (ub - ua));
  r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return static_cast<int16_t>(r >> 8);
}

Status eval_int16(OpContext& ctx) {
  const Int16Activation& p = *static_cast<const Int16Activation*>(ctx.user_data());
  const int16_t* x = reinterpret_cast<const int16_t*>(ctx.input(0)->data);
  int16_t* y = reinterpret_cast<int16_t*>(ctx.output(0)->data);
  const int64_t n = ctx.output(0)->elements();
  for (int64_t i = 0; i < n; ++i) y[i] = int16_activation(p, x[i]);
  return Status();
}

bool is_int16_input(OpContext& ctx) {
  return ctx.input_count() == 1 && ctx.input(0) && ctx.input(0)->type == TensorType::INT16 &&
         ctx.output_count() == 1;
}

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
  if (GRUWB_INTEGER_FORM(LOGISTIC) && is_int16_input(ctx)) return prepare_int16(ctx, false);
  return prepare(ctx);
}

Status prepare_tanh(OpContext& ctx) {
  if (GRUWB_INTEGER_FORM(TANH) && ctx.input_count() == 1 && ctx.input(0) &&
      is_8bit(ctx.input(0)->type) && ctx.output_count() == 1) {
    return prepare_lookup_table(ctx, tanh_of);
  }
  if (GRUWB_INTEGER_FORM(TANH) && is_int16_input(ctx)) return prepare_int16(ctx, true);
  return prepare(ctx);
}

template <typename F>
Status eval(OpContext& ctx) {
  if ((GRUWB_INTEGER_FORM(LOGISTIC) || GRUWB_INTEGER_FORM(TANH)) &&
      ctx.input(0)->type != TensorType::FLOAT32) {
    if (ctx.input(0)->type == TensorType::INT16) return eval_int16(ctx);
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
