// Broadcasting binary ops: arithmetic (ADD, SUB, MUL, DIV, MINIMUM, MAXIMUM,
// FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE; float32 with fused activation, or
// int32 as WHILE loop counters and the converter's shape arithmetic need) and
// comparisons (LESS, ..., NOT_EQUAL; BOOL out). One family, one file: the ops
// differ only in their scalar function. Results computed only from constants
// (small int32/BOOL tensors) are folded at prepare (see fold_if_constant).
// Full-integer ADD, SUB and MUL (int8/uint8, and int16 with zero points 0) are
// TFLite's reference integer kernels: ADD/SUB shift both inputs left (20 bits,
// 15 for int16) and rescale each to twice the larger input scale, add or
// subtract, and rescale to the output; MUL multiplies the offset inputs in
// int32 and rescales the product by s1 * s2 / s_out. int16 ADD/SUB whose
// scales are all powers of two (AddOptions' pot_scale_int16, TFLite's default)
// shift the finer input right and add with int16 saturation instead.

#include <cfloat>
#include <cmath>
#include <limits>
#include <new>
#include <type_traits>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"
#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace {

struct NoOptions {};  // MINIMUM/MAXIMUM: no fused activation

template <typename Options>
Activation fused_activation(const OpContext& ctx) {
  if constexpr (std::is_same_v<Options, NoOptions>) {
    return Activation::NONE;
  } else {
    const Options* options = ctx.op().template options<Options>();
    return options ? options->fused_activation_function() : Activation::NONE;
  }
}

enum class IntegerOp { kNone, kAdd, kSub, kMul };

// Whether this build links the op's integer form (GRUWB_FW_OPS ADD:int8, ...; kernel.h).
constexpr bool integer_form_linked(IntegerOp op) {
  return (op == IntegerOp::kAdd && GRUWB_INTEGER_FORM(ADD)) ||
         (op == IntegerOp::kSub && GRUWB_INTEGER_FORM(SUB)) ||
         (op == IntegerOp::kMul && GRUWB_INTEGER_FORM(MUL));
}

// Full-integer ADD/SUB/MUL's constants, computed once at prepare.
struct IntegerArithmetic {
  IntegerOp op = IntegerOp::kNone;
  int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;  // -zp, -zp, +zp
  int32_t left_shift = 0;
  QuantizedMultiplier input1, input2, output;  // ADD/SUB: all three; MUL: output
  bool power_of_two = false;                   // int16 ADD/SUB with power-of-two scales
  int32_t input1_shift = 0, input2_shift = 0;  // right shifts of that path
  int32_t output_min = 0, output_max = 0;
};

// TFLite's CheckedLog2: whether a scale is a power of two, and which.
bool power_of_two_scale(float scale, int32_t* log2) {
  const float x = std::log(scale) * (1.f / std::log(2.f));
  const float rounded = std::round(x);
  *log2 = static_cast<int32_t>(rounded);
  return std::fabs(x - rounded) < 1e-3f;
}

Status prepare_integer_arithmetic(OpContext& ctx, IntegerOp op, Activation activation,
                                  const Shape& shape, bool pot_scale_int16) {
  const Tensor* a = ctx.input(0);
  const Tensor* b = ctx.input(1);
  Tensor* out = ctx.output(0);
  GRUWB_RETURN_IF_ERROR(expect_type(b, a->type, "second input"));
  GRUWB_RETURN_IF_ERROR(expect_type(out, a->type, "output"));
  if (ctx.training()) {
    return Status::error(StatusCode::kUnsupported, "training through an integer %s",
                         ctx.op().name());
  }
  TensorQuantization qa, qb, qo;
  GRUWB_RETURN_IF_ERROR(expect_quantized(a, "input", &qa));
  GRUWB_RETURN_IF_ERROR(expect_quantized(b, "second input", &qb));
  GRUWB_RETURN_IF_ERROR(expect_quantized(out, "output", &qo));
  const bool int16 = a->type == TensorType::INT16;
  if (int16 && (qa.zero_point != 0 || qb.zero_point != 0 || qo.zero_point != 0)) {
    return Status::error(StatusCode::kInvalidModel,
                         "int16 '%s', '%s' and '%s' need zero point 0 (symmetric)", a->name,
                         b->name, out->name);
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(IntegerArithmetic), &memory));
  IntegerArithmetic* data = new (memory) IntegerArithmetic();
  data->op = op;
  data->input1_offset = -qa.zero_point;
  data->input2_offset = -qb.zero_point;
  data->output_offset = qo.zero_point;
  GRUWB_RETURN_IF_ERROR(activation_range_quantized(activation, out->type, qo.scale, qo.zero_point,
                                                   &data->output_min, &data->output_max));
  if (op == IntegerOp::kMul) {
    data->output =
        quantize_multiplier(static_cast<double>(qa.scale) * static_cast<double>(qb.scale) /
                            static_cast<double>(qo.scale));
  } else {
    int32_t log_a = 0, log_b = 0, log_o = 0;
    data->power_of_two = int16 && pot_scale_int16 && power_of_two_scale(qa.scale, &log_a) &&
                         power_of_two_scale(qb.scale, &log_b) &&
                         power_of_two_scale(qo.scale, &log_o);
    if (data->power_of_two) {
      // TFLite shifts at most one input, and only right (towards the output's scale).
      data->input1_shift = log_o - log_a;
      data->input2_shift = log_o - log_b;
      if (data->input1_shift < 0 || data->input2_shift < 0 ||
          (data->input1_shift != 0 && data->input2_shift != 0)) {
        return Status::error(StatusCode::kInvalidModel,
                             "int16 %s with power-of-two scales: one of '%s', '%s' must have "
                             "output '%s''s scale and the other a finer one",
                             ctx.op().name(), a->name, b->name, out->name);
      }
    } else {
      data->left_shift = int16 ? 15 : 20;
      const double twice_max = 2. * static_cast<double>(qa.scale > qb.scale ? qa.scale : qb.scale);
      data->input1 = quantize_multiplier(static_cast<double>(qa.scale) / twice_max);
      data->input2 = quantize_multiplier(static_cast<double>(qb.scale) / twice_max);
      data->output = quantize_multiplier(
          twice_max / (static_cast<double>(1 << data->left_shift) * static_cast<double>(qo.scale)));
    }
  }
  ctx.set_user_data(data);
  set_output_shape(out, shape);
  return Status();
}

int32_t integer_arithmetic(const IntegerArithmetic& d, int32_t x, int32_t y) {
  int32_t v = 0;
  if (d.op == IntegerOp::kMul) {
    v = multiply_by_quantized_multiplier((x + d.input1_offset) * (y + d.input2_offset), d.output) +
        d.output_offset;
  } else if (d.power_of_two) {
    const int32_t a = rounding_divide_by_pot(x, d.input1_shift);
    const int32_t b = rounding_divide_by_pot(y, d.input2_shift);
    v = d.op == IntegerOp::kAdd ? a + b : a - b;
    v = v < -32768 ? -32768 : (v > 32767 ? 32767 : v);  // gemmlowp's int16 SaturatingAdd
  } else {
    const int32_t a =
        multiply_by_quantized_multiplier((x + d.input1_offset) * (1 << d.left_shift), d.input1);
    const int32_t b =
        multiply_by_quantized_multiplier((y + d.input2_offset) * (1 << d.left_shift), d.input2);
    v = multiply_by_quantized_multiplier(d.op == IntegerOp::kAdd ? a + b : a - b, d.output) +
        d.output_offset;
  }
  return v < d.output_min ? d.output_min : (v > d.output_max ? d.output_max : v);
}

Status eval_integer_arithmetic(OpContext& ctx) {
  const IntegerArithmetic& d = *static_cast<const IntegerArithmetic*>(ctx.user_data());
  const Tensor* a = ctx.input(0);
  const Tensor* b = ctx.input(1);
  Tensor* out = ctx.output(0);
  if (a->shape == b->shape) {
    for (int64_t i = 0; i < out->elements(); ++i) {
      set_integer_at(out, i, integer_arithmetic(d, integer_at(a, i), integer_at(b, i)));
    }
    return Status();
  }
  for_each_broadcast(out->shape, a->shape, b->shape, [&](int64_t o, int64_t i, int64_t j) {
    set_integer_at(out, o, integer_arithmetic(d, integer_at(a, i), integer_at(b, j)));
  });
  return Status();
}

bool is_integer_activation(TensorType type) {
  return type == TensorType::INT8 || type == TensorType::UINT8 || type == TensorType::INT16;
}

Status prepare_binary(OpContext& ctx, bool comparison, Activation activation,
                      IntegerOp integer_op = IntegerOp::kNone, bool pot_scale_int16 = true) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  GRUWB_RETURN_IF_ERROR(check_activation(activation));
  const Tensor* a = ctx.input(0);
  const Tensor* b = ctx.input(1);
  if (integer_form_linked(integer_op) && is_integer_activation(a->type)) {
    Shape shape;
    GRUWB_RETURN_IF_ERROR(broadcast_shapes(a->shape, b->shape, &shape));
    return prepare_integer_arithmetic(ctx, integer_op, activation, shape, pot_scale_int16);
  }
  if (a->type != TensorType::FLOAT32 && a->type != TensorType::INT32) {
    return Status::error(StatusCode::kUnsupported, "input '%s' is %s, expected FLOAT32 or INT32",
                         a->name, tensor_type_name(a->type));
  }
  GRUWB_RETURN_IF_ERROR(expect_type(b, a->type, "second input"));
  Shape shape;
  GRUWB_RETURN_IF_ERROR(broadcast_shapes(a->shape, b->shape, &shape));
  Tensor* out = ctx.output(0);
  out->type = comparison ? TensorType::BOOL : a->type;
  set_output_shape(out, shape);
  return Status();
}

template <typename T, typename Out, typename F>
void binary_loop(const Tensor* a, const Tensor* b, Tensor* out, F f) {
  const T* x = reinterpret_cast<const T*>(a->data);
  const T* y = reinterpret_cast<const T*>(b->data);
  Out* z = reinterpret_cast<Out*>(out->data);
  int64_t n = out->elements();
  if (a->shape == b->shape) {
    for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
  } else if (b->elements() == 1) {
    const T s = y[0];
    for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], s);
  } else if (a->elements() == 1) {
    const T s = x[0];
    for (int64_t i = 0; i < n; ++i) z[i] = f(s, y[i]);
  } else {
    for_each_broadcast(out->shape, a->shape, b->shape,
                       [&](int64_t o, int64_t i, int64_t j) { z[o] = f(x[i], y[j]); });
  }
}

struct AddFn;
struct SubFn;
struct MulFn;

template <typename F>
constexpr IntegerOp integer_op_of() {
  if constexpr (std::is_same_v<F, AddFn>) return IntegerOp::kAdd;
  if constexpr (std::is_same_v<F, SubFn>) return IntegerOp::kSub;
  if constexpr (std::is_same_v<F, MulFn>) return IntegerOp::kMul;
  return IntegerOp::kNone;
}

// AddOptions/SubOptions' pot_scale_int16 (true when absent, as TFLite reads it).
template <typename Options>
bool pot_scale_int16(const OpContext& ctx) {
  if constexpr (std::is_same_v<Options, fb::AddOptions> ||
                std::is_same_v<Options, fb::SubOptions>) {
    const Options* options = ctx.op().template options<Options>();
    return !options || options->pot_scale_int16();
  } else {
    return false;
  }
}

template <typename Options, typename F>
Status prepare_arithmetic(OpContext& ctx) {
  return prepare_binary(ctx, false, fused_activation<Options>(ctx), integer_op_of<F>(),
                        pot_scale_int16<Options>(ctx));
}

// Integer division by zero is an error, as in TFLite (floats give inf/nan).
Status check_int_divisor(const Tensor* b) {
  const int32_t* y = b->i32();
  for (int64_t i = 0; i < b->elements(); ++i) {
    if (y[i] == 0) {
      return Status::error(StatusCode::kInvalidArgument, "divisor '%s' holds a zero at %lld",
                           b->name, static_cast<long long>(i));
    }
  }
  return Status();
}

template <typename Options, typename F>
Status eval_arithmetic(OpContext& ctx) {
  const Tensor* a = ctx.input(0);
  Tensor* out = ctx.output(0);
  if (integer_form_linked(integer_op_of<F>()) && is_integer_activation(a->type)) {
    return eval_integer_arithmetic(ctx);
  }
  if (a->type == TensorType::INT32) {
    if (F::kDivides) GRUWB_RETURN_IF_ERROR(check_int_divisor(ctx.input(1)));
    binary_loop<int32_t, int32_t>(a, ctx.input(1), out, F{});
  } else {
    binary_loop<float, float>(a, ctx.input(1), out, F{});
    apply_activation(fused_activation<Options>(ctx), out->f32(), out->elements());
    if (F::kDivides) {
      // TFLite clamps to the activation range, [lowest, max] for NONE: x / 0
      // gives +-FLT_MAX there, not inf (nan stays nan).
      float* z = out->f32();
      for (int64_t i = 0; i < out->elements(); ++i) {
        if (z[i] > FLT_MAX) z[i] = FLT_MAX;
        if (z[i] < -FLT_MAX) z[i] = -FLT_MAX;
      }
    }
  }
  return Status();
}

Status prepare_comparison(OpContext& ctx) { return prepare_binary(ctx, true, Activation::NONE); }

template <typename F>
Status eval_comparison(OpContext& ctx) {
  const Tensor* a = ctx.input(0);
  if (a->type == TensorType::INT32) {
    binary_loop<int32_t, bool>(a, ctx.input(1), ctx.output(0), F{});
  } else {
    binary_loop<float, bool>(a, ctx.input(1), ctx.output(0), F{});
  }
  return Status();
}

// int32 arithmetic wraps around, as TFLite's does on every target; in C++ signed overflow is
// undefined, so integers go through their unsigned type (int32 and wider only: narrower unsigned
// types would promote back to int).
template <typename T>
T plus(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    static_assert(sizeof(T) >= sizeof(int), "narrow integers promote to int");
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T minus(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T>
T times(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

#define GRUWB_SCALAR_FN(Name, expr)                          \
  struct Name {                                              \
    [[maybe_unused]] static constexpr bool kDivides = false; \
    template <typename T>                                    \
    auto operator()(T a, T b) const {                        \
      return expr;                                           \
    }                                                        \
  }
GRUWB_SCALAR_FN(AddFn, plus(a, b));
GRUWB_SCALAR_FN(SubFn, minus(a, b));
GRUWB_SCALAR_FN(MulFn, times(a, b));
GRUWB_SCALAR_FN(MinFn, a < b ? a : b);
GRUWB_SCALAR_FN(MaxFn, a > b ? a : b);
GRUWB_SCALAR_FN(LessFn, a < b);
GRUWB_SCALAR_FN(LessEqualFn, a <= b);
GRUWB_SCALAR_FN(GreaterFn, a > b);
GRUWB_SCALAR_FN(GreaterEqualFn, a >= b);
GRUWB_SCALAR_FN(EqualFn, a == b);
GRUWB_SCALAR_FN(NotEqualFn, a != b);
GRUWB_SCALAR_FN(SquaredDifferenceFn, times(minus(a, b), minus(a, b)));
#undef GRUWB_SCALAR_FN

// The one integer quotient that overflows, lowest / -1, wraps to lowest (x86 traps on it).
template <typename T>
bool quotient_overflows(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return b == -1 && a == std::numeric_limits<T>::lowest();
  } else {
    return false;
  }
}

// int32 DIV truncates (C++ division), as TFLite's does.
struct DivFn {
  static constexpr bool kDivides = true;
  template <typename T>
  T operator()(T a, T b) const {
    return quotient_overflows(a, b) ? a : a / b;
  }
};
// floor(a / b) computed in double, for floats and integers alike (TFLite).
struct FloorDivFn {
  static constexpr bool kDivides = true;
  template <typename T>
  T operator()(T a, T b) const {
    if (quotient_overflows(a, b)) return a;
    return static_cast<T>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
  }
};
// The remainder with the divisor's sign: the truncated remainder, moved by b
// when its sign differs from b's.
struct FloorModFn {
  static constexpr bool kDivides = true;
  template <typename T>
  T operator()(T a, T b) const {
    T r;
    if constexpr (std::is_integral_v<T>) {
      r = quotient_overflows(a, b) ? 0 : a % b;
    } else {
      r = std::fmod(a, b);
    }
    return r != 0 && ((b < 0) != (r < 0)) ? r + b : r;
  }
};

// Training: the partial derivatives of z = f(a, b), given a, b and dz.
struct AddGrad {
  void operator()(float, float, float g, float* da, float* db) const {
    *da = g;
    *db = g;
  }
};
struct SubGrad {
  void operator()(float, float, float g, float* da, float* db) const {
    *da = g;
    *db = -g;
  }
};
struct MulGrad {
  void operator()(float a, float b, float g, float* da, float* db) const {
    *da = g * b;
    *db = g * a;
  }
};
// Ties go to the first input (as the forward picks `b` only when strictly better).
struct MinGrad {
  void operator()(float a, float b, float g, float* da, float* db) const {
    *da = a <= b ? g : 0.f;
    *db = a <= b ? 0.f : g;
  }
};
struct MaxGrad {
  void operator()(float a, float b, float g, float* da, float* db) const {
    *da = a >= b ? g : 0.f;
    *db = a >= b ? 0.f : g;
  }
};

struct DivGrad {
  void operator()(float a, float b, float g, float* da, float* db) const {
    *da = g / b;
    *db = -g * a / (b * b);
  }
};
// Piecewise constant: no gradient (TensorFlow's FloorDiv has none either).
struct FloorDivGrad {
  void operator()(float, float, float, float* da, float* db) const {
    *da = 0.f;
    *db = 0.f;
  }
};
// a mod b = a - floor(a / b) * b (TensorFlow's FloorMod gradient).
struct FloorModGrad {
  void operator()(float a, float b, float g, float* da, float* db) const {
    *da = g;
    *db = -g * std::floor(a / b);
  }
};
struct SquaredDifferenceGrad {
  void operator()(float a, float b, float g, float* da, float* db) const {
    *da = 2.f * (a - b) * g;
    *db = -2.f * (a - b) * g;
  }
};

// Broadcast inputs receive the sum over the dimensions they were repeated in.
template <typename Options, typename G>
Status backward_arithmetic(OpContext& ctx) {
  const Tensor* a = ctx.input(0);
  const Tensor* b = ctx.input(1);
  const Tensor* out = ctx.output(0);
  const Tensor* dz = ctx.gradient(out);
  Tensor* da = ctx.gradient(a);
  Tensor* db = ctx.gradient(b);
  if (!dz || (!da && !db)) return Status();
  const Activation activation = fused_activation<Options>(ctx);
  const float* x = a->f32();
  const float* y = b->f32();
  const float* z = out->f32();
  const float* g = dz->f32();
  float* gx = da ? da->f32() : nullptr;
  float* gy = db ? db->f32() : nullptr;
  G grad;
  for_each_broadcast(out->shape, a->shape, b->shape, [&](int64_t o, int64_t i, int64_t j) {
    float go = g[o] * activation_derivative(activation, z[o]);
    float ga = 0.f, gb = 0.f;
    grad(x[i], y[j], go, &ga, &gb);
    if (gx) gx[i] += ga;
    if (gy) gy[j] += gb;
  });
  return Status();
}

template <BuiltinOperator kOp, typename Options, typename F, typename G>
constexpr KernelRegistration arithmetic() {
  return {static_cast<int32_t>(kOp),
          nullptr,
          prepare_then_fold<prepare_arithmetic<Options, F>, eval_arithmetic<Options, F>>,
          eval_arithmetic<Options, F>,
          GRUWB_BACKWARD(backward_arithmetic<Options, G>),
          /*cost=*/nullptr,
          /*weight_inputs=*/0,
          /*dynamic_inputs=*/false,
          /*integer_activations=*/integer_form_linked(integer_op_of<F>())};
}

template <BuiltinOperator kOp, typename F>
constexpr KernelRegistration comparison() {
  return {static_cast<int32_t>(kOp), nullptr,
          prepare_then_fold<prepare_comparison, eval_comparison<F>>, eval_comparison<F>};
}

}  // namespace

extern const KernelRegistration kAddKernel =
    arithmetic<BuiltinOperator::ADD, fb::AddOptions, AddFn, AddGrad>();
extern const KernelRegistration kSubKernel =
    arithmetic<BuiltinOperator::SUB, fb::SubOptions, SubFn, SubGrad>();
extern const KernelRegistration kMulKernel =
    arithmetic<BuiltinOperator::MUL, fb::MulOptions, MulFn, MulGrad>();
extern const KernelRegistration kMinimumKernel =
    arithmetic<BuiltinOperator::MINIMUM, NoOptions, MinFn, MinGrad>();
extern const KernelRegistration kMaximumKernel =
    arithmetic<BuiltinOperator::MAXIMUM, NoOptions, MaxFn, MaxGrad>();
extern const KernelRegistration kDivKernel =
    arithmetic<BuiltinOperator::DIV, fb::DivOptions, DivFn, DivGrad>();
extern const KernelRegistration kFloorDivKernel =
    arithmetic<BuiltinOperator::FLOOR_DIV, NoOptions, FloorDivFn, FloorDivGrad>();
extern const KernelRegistration kFloorModKernel =
    arithmetic<BuiltinOperator::FLOOR_MOD, NoOptions, FloorModFn, FloorModGrad>();
extern const KernelRegistration kSquaredDifferenceKernel =
    arithmetic<BuiltinOperator::SQUARED_DIFFERENCE, NoOptions, SquaredDifferenceFn,
               SquaredDifferenceGrad>();
extern const KernelRegistration kLessKernel = comparison<BuiltinOperator::LESS, LessFn>();
extern const KernelRegistration kLessEqualKernel =
    comparison<BuiltinOperator::LESS_EQUAL, LessEqualFn>();
extern const KernelRegistration kGreaterKernel = comparison<BuiltinOperator::GREATER, GreaterFn>();
extern const KernelRegistration kGreaterEqualKernel =
    comparison<BuiltinOperator::GREATER_EQUAL, GreaterEqualFn>();
extern const KernelRegistration kEqualKernel = comparison<BuiltinOperator::EQUAL, EqualFn>();
extern const KernelRegistration kNotEqualKernel =
    comparison<BuiltinOperator::NOT_EQUAL, NotEqualFn>();

}  // namespace gruwb
