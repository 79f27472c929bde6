#pragma once
// TFLite's integer arithmetic for full-integer (int8) kernels, in one place:
// a real multiplier becomes an int32 fixed-point multiplier and a power-of-two
// shift at prepare; eval multiplies with a rounding, saturating doubling high
// multiply and a rounding right shift. These reproduce TFLite's
// quantization_util / common.h semantics (round half away from zero in
// QuantizeMultiplier, gemmlowp's nudged high multiply, round-half-up-in-
// magnitude shifts), which is what makes int8 outputs bit-exact.

#include <cmath>
#include <cstdint>

#include "engine/runtime/tensor.h"

namespace gruwb {

// multiplier * 2^shift ~= real, multiplier in [2^30, 2^31) (or 0 for 0);
// shift > 0 shifts left. Tiny values (shift < -31) flush to 0.
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
};
QuantizedMultiplier quantize_multiplier(double real);

// round(v) (half away from zero) as an int32, saturating, NaN giving 0. A
// plain cast of a float outside int32's range is undefined and CPUs differ
// (x86 gives INT32_MIN, Arm saturates): values from users reach QUANTIZE and
// the hybrid kernels, and a board must compute what the host computes.
inline int32_t round_saturated(float v) {
  if (!(v == v)) return 0;
  if (v >= 2147483648.f) return INT32_MAX;
  if (v < -2147483648.f) return INT32_MIN;
  return static_cast<int32_t>(std::round(v));
}

// gemmlowp's SaturatingRoundingDoublingHighMul: round(a * b / 2^31), with
// INT32_MIN * INT32_MIN saturating to INT32_MAX.
int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b);

// x / 2^exponent rounded to nearest, ties away from zero (0 <= exponent <= 31).
int32_t rounding_divide_by_pot(int32_t x, int32_t exponent);

// int32 sums as TFLite's integer kernels do them: they rely on two's-complement wrap-around, which
// only hostile biases or zero points reach; uint32 arithmetic wraps with defined behaviour.
inline int32_t wrap_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
// The same for the int64 sums of the 16x8 kernels, which start from a file's int64 bias.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// TFLite's MultiplyByQuantizedMultiplier: x * multiplier * 2^shift with the
// left part of the shift applied before the high multiply and the right part
// as a rounding shift after it.
inline int32_t multiply_by_quantized_multiplier(int32_t x, QuantizedMultiplier m) {
  const int32_t left = m.shift > 0 ? m.shift : 0;
  const int32_t right = m.shift > 0 ? 0 : -m.shift;
  return rounding_divide_by_pot(
      saturating_rounding_doubling_high_mul(static_cast<int32_t>(static_cast<uint32_t>(x) << left),
                                            m.multiplier),
      right);
}

// The same for the int64 sums of TFLite's 16x8 kernels (int16 activations,
// int8 weights, int64 bias): the multiplier rounded to 16 bits, then one
// rounding shift (TFLite's int64 MultiplyByQuantizedMultiplier).
inline int32_t multiply_by_quantized_multiplier_64(int64_t x, QuantizedMultiplier m) {
  // Real sums stay far below 2^47; a hostile int64 bias is clamped so the product fits int64.
  constexpr int64_t kLimit = int64_t{1} << 47;
  x = x > kLimit ? kLimit : (x < -kLimit ? -kLimit : x);
  const int64_t reduced = m.multiplier < 0x7FFF0000 ? (m.multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int32_t total_shift = 15 - m.shift;
  if (total_shift < 1) return x > 0 ? INT32_MAX : (x < 0 ? INT32_MIN : 0);  // ratio >= 2^14
  return static_cast<int32_t>((x * reduced + (int64_t{1} << (total_shift - 1))) >> total_shift);
}

// A tensor's quantization: one scale and zero point (per tensor), or the
// first of several (per channel); count is how many scales the file gives.
struct TensorQuantization {
  const float* scales = nullptr;
  int32_t count = 0;
  float scale = 0.f;
  int32_t zero_point = 0;
  int32_t zero_point_at(int32_t i) const;
  const fb::QuantizationParameters* params = nullptr;
};
// False (and a zero count) when the tensor has no scale.
bool tensor_quantization(const Tensor* tensor, TensorQuantization* out);

// Prepare checks for integer kernels: the tensor has a scale (one, or
// `channels` for per-channel weights when channels > 0), naming the tensor.
Status expect_quantized(const Tensor* tensor, const char* role, TensorQuantization* out,
                        int32_t channels = 0);
// Zero points inside the tensor type's range (none outside an integer type),
// so the kernels' int32 offset arithmetic cannot overflow. Part of
// expect_quantized; on its own for hybrid weights.
Status expect_zero_points_in_range(const Tensor* tensor, const char* role);

// Data-movement ops copy integer values as bytes, right only when input and
// output share scale and zero point: kUnsupported (naming both) otherwise.
// Float tensors and tensors without quantization pass.
Status expect_same_quantization(const Tensor* input, const Tensor* output);

// TFLite's Quantize(): zero_point + round(value / scale) in float, used for
// activation clamps.
int32_t quantize_value(float value, float scale, int32_t zero_point);

// The int8/uint8/int16 value range of a type; false for other types.
bool integer_range(TensorType type, int32_t* min, int32_t* max);

// TFLite's CheckedLog2: the rounded log2 of a scale in *log2, and whether the scale is a power of
// two (false, *log2 = 0, for a scale of 0, inf or nan).
bool checked_log2(float x, int32_t* log2);

// CalculateActivationRangeQuantized: the output clamp for a fused activation.
Status activation_range_quantized(fb::ActivationFunctionType activation, TensorType type,
                                  float scale, int32_t zero_point, int32_t* min, int32_t* max);

// Elements of an integer tensor as int32 (int8, uint8, int16).
inline int32_t integer_at(const Tensor* tensor, int64_t i) {
  switch (tensor->type) {
    case TensorType::INT8: return reinterpret_cast<const int8_t*>(tensor->data)[i];
    case TensorType::UINT8: return tensor->data[i];
    case TensorType::INT16: return reinterpret_cast<const int16_t*>(tensor->data)[i];
    default: return 0;
  }
}
inline void set_integer_at(Tensor* tensor, int64_t i, int32_t value) {
  switch (tensor->type) {
    case TensorType::INT8:
      reinterpret_cast<int8_t*>(tensor->data)[i] = static_cast<int8_t>(value);
      break;
    case TensorType::UINT8: tensor->data[i] = static_cast<uint8_t>(value); break;
    case TensorType::INT16:
      reinterpret_cast<int16_t*>(tensor->data)[i] = static_cast<int16_t>(value);
      break;
    case TensorType::INT32: reinterpret_cast<int32_t*>(tensor->data)[i] = value; break;
    default: break;
  }
}

}  // namespace gruwb
