#include "engine/kernels/quant_util.h"

#include <cfloat>
#include <cmath>
#include <cstdint>

namespace gruwb {

QuantizedMultiplier quantize_multiplier(double real) {
  QuantizedMultiplier m;
  if (real == 0. || !std::isfinite(real)) return m;  // hostile scales: no rescaling at all
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent);  // [0.5, 1)
  int64_t fixed = static_cast<int64_t>(std::round(fraction * static_cast<double>(1ll << 31)));
  if (fixed == (1ll << 31)) {
    fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) return m;  // every bit would shift out
  // A ratio of scales over 2^30 saturates every non-zero value anyway; the shift stays in range.
  if (exponent > 30) exponent = 30;
  m.multiplier = static_cast<int32_t>(fixed);
  m.shift = exponent;
  return m;
}

int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  const int64_t product = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = product >= 0 ? (1ll << 30) : (1 - (1ll << 30));
  // Division truncates toward zero, as gemmlowp's does.
  return static_cast<int32_t>((product + nudge) / (1ll << 31));
}

int32_t rounding_divide_by_pot(int32_t x, int32_t exponent) {
  const int32_t mask = static_cast<int32_t>((1ll << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

bool checked_log2(float x, int32_t* log2) {
  const float exact = std::log(x) * (1.f / std::log(2.f));
  const float rounded = std::round(exact);
  *log2 = 0;
  if (!(std::fabs(rounded) < 1024.f)) return false;  // a scale of 0, inf or nan
  *log2 = static_cast<int32_t>(rounded);
  return std::fabs(exact - rounded) < 1e-3f;
}

int32_t TensorQuantization::zero_point_at(int32_t i) const {
  const uint32_t count = zero_point_count(params);
  if (count == 0) return 0;
  return static_cast<int32_t>(gruwb::zero_point_at(
      params, count > static_cast<uint32_t>(i) ? static_cast<uint32_t>(i) : 0));
}

bool tensor_quantization(const Tensor* tensor, TensorQuantization* out) {
  *out = TensorQuantization();
  const fb::QuantizationParameters* q = tensor ? tensor->quantization : nullptr;
  if (!q || !q->scale() || q->scale()->size() == 0) return false;
  out->params = q;
  out->scales = q->scale()->data();
  out->count = static_cast<int32_t>(q->scale()->size());
  out->scale = out->scales[0];
  out->zero_point = out->zero_point_at(0);
  return true;
}

Status expect_quantized(const Tensor* tensor, const char* role, TensorQuantization* out,
                        int32_t channels) {
  if (!tensor_quantization(tensor, out)) {
    return Status::error(StatusCode::kInvalidModel, "%s '%s' (%s) has no quantization scale", role,
                         tensor->name, tensor_type_name(tensor->type));
  }
  if (out->count != 1 && out->count != channels) {
    return Status::error(StatusCode::kInvalidModel, "%s '%s' has %d scales, expected 1%s", role,
                         tensor->name, static_cast<int>(out->count),
                         channels > 0 ? " or one per channel" : "");
  }
  for (int32_t i = 0; i < out->count; ++i) {
    // Denormal or infinite scales make 1 / scale or scale * q infinite, then NaN in the kernels.
    if (!(out->scales[i] >= FLT_MIN && out->scales[i] <= FLT_MAX)) {
      return Status::error(StatusCode::kInvalidModel, "%s '%s': scale %d is not a normal float > 0",
                           role, tensor->name, static_cast<int>(i));
    }
  }
  return expect_zero_points_in_range(tensor, role);
}

Status expect_zero_points_in_range(const Tensor* tensor, const char* role) {
  // (int16 kernels that need 0 check it themselves: TFLite's int16 SOFTMAX output has -32768.)
  int32_t min = 0, max = 0;
  if (!integer_range(tensor->type, &min, &max)) return Status();
  for (uint32_t i = 0; i < zero_point_count(tensor->quantization); ++i) {
    const int64_t zero_point = zero_point_at(tensor->quantization, i);
    if (zero_point < min || zero_point > max) {
      return Status::error(StatusCode::kInvalidModel,
                           "%s '%s': zero point %lld is outside %s's [%d, %d]", role, tensor->name,
                           static_cast<long long>(zero_point), tensor_type_name(tensor->type),
                           static_cast<int>(min), static_cast<int>(max));
    }
  }
  return Status();
}

Status expect_same_quantization(const Tensor* input, const Tensor* output) {
  int32_t min = 0, max = 0;
  if (!integer_range(input->type, &min, &max)) return Status();
  TensorQuantization in, out;
  if (!tensor_quantization(input, &in) || !tensor_quantization(output, &out)) return Status();
  if (in.scale == out.scale && in.zero_point == out.zero_point) return Status();
  return Status::error(StatusCode::kUnsupported,
                       "requantizing %s '%s' (scale %g, zero point %d) to '%s' (scale %g, zero "
                       "point %d) is not supported yet",
                       tensor_type_name(input->type), input->name, static_cast<double>(in.scale),
                       static_cast<int>(in.zero_point), output->name,
                       static_cast<double>(out.scale), static_cast<int>(out.zero_point));
}

int32_t quantize_value(float value, float scale, int32_t zero_point) {
  const int64_t q = static_cast<int64_t>(round_saturated(value / scale)) + zero_point;
  return q > INT32_MAX ? INT32_MAX : (q < INT32_MIN ? INT32_MIN : static_cast<int32_t>(q));
}

bool integer_range(TensorType type, int32_t* min, int32_t* max) {
  switch (type) {
    case TensorType::INT8: *min = -128, *max = 127; return true;
    case TensorType::UINT8: *min = 0, *max = 255; return true;
    case TensorType::INT16: *min = -32768, *max = 32767; return true;
    default: return false;
  }
}

Status activation_range_quantized(fb::ActivationFunctionType activation, TensorType type,
                                  float scale, int32_t zero_point, int32_t* min, int32_t* max) {
  if (!integer_range(type, min, max)) {
    return Status::error(StatusCode::kUnsupported, "%s is not an integer activation type",
                         tensor_type_name(type));
  }
  auto clamp_low = [&](float v) {
    const int32_t q = quantize_value(v, scale, zero_point);
    if (q > *min) *min = q;
  };
  auto clamp_high = [&](float v) {
    const int32_t q = quantize_value(v, scale, zero_point);
    if (q < *max) *max = q;
  };
  switch (activation) {
    case fb::ActivationFunctionType::NONE: return Status();
    case fb::ActivationFunctionType::RELU: clamp_low(0.f); return Status();
    case fb::ActivationFunctionType::RELU6: clamp_low(0.f), clamp_high(6.f); return Status();
    case fb::ActivationFunctionType::RELU_N1_TO_1:
      clamp_low(-1.f), clamp_high(1.f);
      return Status();
    default:
      return Status::error(StatusCode::kUnsupported, "fused activation %s has no integer form",
                           fb::EnumNameActivationFunctionType(activation));
  }
}

}  // namespace gruwb
