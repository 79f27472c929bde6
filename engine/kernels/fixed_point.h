#pragma once
// gemmlowp-style fixed-point numbers and the transcendental functions integer
// recurrent kernels need (logistic, tanh), written for this engine with
// gemmlowp's names and algorithms (gemmlowp/fixedpoint/fixedpoint.h): a
// FixedPoint<kIntegerBits> is an int32 raw value with 31 - kIntegerBits
// fractional bits. exp of a negative value is exp(-1/8)-centred Taylor on
// [-1/4, 0) times a barrel of exp(-2^k) constants; 1/(1+x) and (1-x)/(1+x) are
// three Newton-Raphson steps from the 48/17 - 32/17 x start. Products use
// quant_util.h's SaturatingRoundingDoublingHighMul, so every result is exact
// integer arithmetic: the same on a host and a Cortex-M.
//
// int16 Q3.12 -> Q0.15 entry points (logistic_q3_12, tanh_q3_12) compute in
// int32 (Q4.27) and round once to Q0.15, so they are within one step of the
// correctly rounded value.

#include <cstdint>

#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace fixed_point {

template <int kIntegerBits>
struct FixedPoint {
  static_assert(kIntegerBits >= 0 && kIntegerBits < 31, "int32 raw value");
  static constexpr int kFractionalBits = 31 - kIntegerBits;
  int32_t raw = 0;

  static constexpr FixedPoint FromRaw(int32_t value) { return FixedPoint{value}; }
  // 1.0 (saturated to the largest value when there are no integer bits).
  static constexpr FixedPoint One() {
    return FromRaw(kIntegerBits == 0 ? INT32_MAX : static_cast<int32_t>(1) << kFractionalBits);
  }
  static constexpr FixedPoint Zero() { return FromRaw(0); }
  // round(value * 2^kFractionalBits) for constants.
  static constexpr FixedPoint FromDouble(double value) {
    const double scaled = value * static_cast<double>(1ll << kFractionalBits);
    const double rounded = scaled >= 0 ? scaled + 0.5 : scaled - 0.5;
    return FromRaw(rounded >= 2147483647.0 ? INT32_MAX : static_cast<int32_t>(rounded));
  }
};

// Wrapping add/sub as gemmlowp's: callers keep values in range.
template <int b>
inline FixedPoint<b> operator+(FixedPoint<b> x, FixedPoint<b> y) {
  return FixedPoint<b>::FromRaw(
      static_cast<int32_t>(static_cast<uint32_t>(x.raw) + static_cast<uint32_t>(y.raw)));
}
template <int b>
inline FixedPoint<b> operator-(FixedPoint<b> x, FixedPoint<b> y) {
  return FixedPoint<b>::FromRaw(
      static_cast<int32_t>(static_cast<uint32_t>(x.raw) - static_cast<uint32_t>(y.raw)));
}
template <int b>
inline FixedPoint<b> operator-(FixedPoint<b> x) {
  return FixedPoint<b>::FromRaw(static_cast<int32_t>(0u - static_cast<uint32_t>(x.raw)));
}
// The product of a Qa and a Qb number is a Q(a+b) number.
template <int a, int b>
inline FixedPoint<a + b> operator*(FixedPoint<a> x, FixedPoint<b> y) {
  return FixedPoint<a + b>::FromRaw(saturating_rounding_doubling_high_mul(x.raw, y.raw));
}

inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  return saturating_rounding_doubling_high_mul(a, b);
}
inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  return rounding_divide_by_pot(x, exponent);
}

// x * 2^exponent, rounded (exponent < 0) or saturated (exponent > 0).
template <int kExponent>
inline int32_t SaturatingRoundingMultiplyByPOT(int32_t x) {
  if constexpr (kExponent < 0) {
    return rounding_divide_by_pot(x, -kExponent);
  } else if constexpr (kExponent == 0) {
    return x;
  } else {
    constexpr int32_t kLimit = INT32_MAX >> kExponent;
    if (x > kLimit) return INT32_MAX;
    if (x < -kLimit - 1) return INT32_MIN;
    return static_cast<int32_t>(static_cast<uint32_t>(x) << kExponent);
  }
}

// The same value in another Q format (saturating when it gains fractional bits).
template <int kTo, int kFrom>
inline FixedPoint<kTo> Rescale(FixedPoint<kFrom> x) {
  return FixedPoint<kTo>::FromRaw(SaturatingRoundingMultiplyByPOT<kFrom - kTo>(x.raw));
}

// (a + b) / 2 rounded, without overflow.
inline int32_t RoundingHalfSum(int32_t a, int32_t b) {
  const int64_t sum = static_cast<int64_t>(a) + b;
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// exp(a) for a in [-1/4, 0): Taylor to 4th order around -1/8.
inline FixedPoint<0> exp_on_interval_between_negative_one_quarter_and_0_excl(FixedPoint<0> a) {
  using F0 = FixedPoint<0>;
  // Constants fold at compile time: no double arithmetic at run time.
  constexpr F0 constant_term = F0::FromDouble(0.88249690258459540286);  // exp(-1/8)
  constexpr F0 constant_1_over_3 = F0::FromDouble(1.0 / 3.0);
  constexpr F0 one_eighth = F0::FromDouble(1.0 / 8.0);
  const F0 x = a + one_eighth;
  const F0 x2 = x * x;
  const F0 x3 = x2 * x;
  const F0 x4 = x2 * x2;
  const F0 x4_over_4 = F0::FromRaw(SaturatingRoundingMultiplyByPOT<-2>(x4.raw));
  const F0 x4_over_24_plus_x3_over_6_plus_x2_over_2 = F0::FromRaw(
      SaturatingRoundingMultiplyByPOT<-1>(((x4_over_4 + x3) * constant_1_over_3 + x2).raw));
  return constant_term + constant_term * (x + x4_over_24_plus_x3_over_6_plus_x2_over_2);
}

// exp(a) for a <= 0: a = -(k/4) - f with f in [0, 1/4); exp(-f) from the
// Taylor step, then one multiply by exp(-2^e) per set bit e of the rest.
template <int kIntegerBits>
inline FixedPoint<0> exp_on_negative_values(FixedPoint<kIntegerBits> a) {
  using InputF = FixedPoint<kIntegerBits>;
  using F0 = FixedPoint<0>;
  constexpr int kFractionalBits = InputF::kFractionalBits;
  constexpr int32_t kOneQuarter = static_cast<int32_t>(1) << (kFractionalBits - 2);
  const InputF a_mod_quarter_minus_one_quarter =
      InputF::FromRaw((a.raw & (kOneQuarter - 1)) - kOneQuarter);
  F0 result = exp_on_interval_between_negative_one_quarter_and_0_excl(
      Rescale<0>(a_mod_quarter_minus_one_quarter));
  const int32_t remainder = (a_mod_quarter_minus_one_quarter - a).raw;
  // exp(-2^e) for e = -2 .. 4 (exp(-16) is below one step of Q0.31 / 2^7).
  static constexpr int32_t kExpOfMinusPowerOfTwo[] = {
      F0::FromDouble(0.77880078307140486825).raw,   // exp(-1/4)
      F0::FromDouble(0.60653065971263342360).raw,   // exp(-1/2)
      F0::FromDouble(0.36787944117144233402).raw,   // exp(-1)
      F0::FromDouble(0.13533528323661269189).raw,   // exp(-2)
      F0::FromDouble(0.01831563888873418029).raw,   // exp(-4)
      F0::FromDouble(0.00033546262790251185).raw,   // exp(-8)
      F0::FromDouble(0.00000011253517471926).raw};  // exp(-16)
  for (int e = -2; e <= 4; ++e) {
    if (kIntegerBits <= e) break;
    const int shift = kFractionalBits + e;
    if (remainder & (static_cast<int32_t>(1) << shift)) {
      result = result * F0::FromRaw(kExpOfMinusPowerOfTwo[e + 2]);
    }
  }
  if (kIntegerBits > 5) {
    // Below -32 the result is 0 at this precision (and the barrel above stops at 2^4).
    const int32_t clamp = -(static_cast<int32_t>(1) << (kFractionalBits + 5));
    if (a.raw < clamp) result = F0::Zero();
  }
  if (a.raw == 0) result = F0::One();
  return result;
}

// 1 / (1 + a) for a in [0, 1]: Newton-Raphson on 1 / d with d = (1 + a) / 2.
inline FixedPoint<0> one_over_one_plus_x_for_x_in_0_1(FixedPoint<0> a) {
  using F0 = FixedPoint<0>;
  using F2 = FixedPoint<2>;
  const F0 half_denominator = F0::FromRaw(RoundingHalfSum(a.raw, F0::One().raw));
  constexpr F2 constant_48_over_17 = F2::FromDouble(48.0 / 17.0);
  constexpr F2 constant_neg_32_over_17 = F2::FromDouble(-32.0 / 17.0);
  F2 x = constant_48_over_17 + half_denominator * constant_neg_32_over_17;
  for (int i = 0; i < 3; ++i) {
    const F2 half_denominator_times_x = half_denominator * x;
    const F2 one_minus_half_denominator_times_x = F2::One() - half_denominator_times_x;
    x = x + Rescale<2>(x * one_minus_half_denominator_times_x);
  }
  // x ~ 1 / d = 2 / (1 + a); halve it.
  return Rescale<0>(F2::FromRaw(x.raw >> 1));
}

// (1 - a) / (1 + a) for a in [0, 1]: the same iteration, 2 / (1 + a) - 1.
inline FixedPoint<0> one_minus_x_over_one_plus_x_for_x_in_0_1(FixedPoint<0> a) {
  using F0 = FixedPoint<0>;
  using F2 = FixedPoint<2>;
  const F0 half_denominator = F0::FromRaw(RoundingHalfSum(a.raw, F0::One().raw));
  constexpr F2 constant_48_over_17 = F2::FromDouble(48.0 / 17.0);
  constexpr F2 constant_neg_32_over_17 = F2::FromDouble(-32.0 / 17.0);
  F2 x = constant_48_over_17 + half_denominator * constant_neg_32_over_17;
  for (int i = 0; i < 3; ++i) {
    const F2 half_denominator_times_x = half_denominator * x;
    const F2 one_minus_half_denominator_times_x = F2::One() - half_denominator_times_x;
    x = x + Rescale<2>(x * one_minus_half_denominator_times_x);
  }
  return Rescale<0>(x - F2::One());
}

// 1 / (1 + exp(-a)); symmetric about 0, computed on -|a|.
template <int kIntegerBits>
inline FixedPoint<0> logistic(FixedPoint<kIntegerBits> a) {
  using F0 = FixedPoint<0>;
  if (a.raw == 0) return F0::FromRaw(static_cast<int32_t>(1) << 30);  // 1/2
  const FixedPoint<kIntegerBits> negative_abs = a.raw > 0 ? -a : a;
  const F0 result_if_positive =
      one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(negative_abs));
  return a.raw > 0 ? result_if_positive : F0::One() - result_if_positive;
}

// tanh(a) = (1 - exp(-2|a|)) / (1 + exp(-2|a|)), sign of a. Needs |2a| in
// range: one spare integer bit over the input's values.
template <int kIntegerBits>
inline FixedPoint<0> tanh(FixedPoint<kIntegerBits> a) {
  using F0 = FixedPoint<0>;
  if (a.raw == 0) return F0::Zero();
  const FixedPoint<kIntegerBits> negative_abs = a.raw > 0 ? -a : a;
  const F0 t = exp_on_negative_values(negative_abs + negative_abs);
  const F0 result = one_minus_x_over_one_plus_x_for_x_in_0_1(t);
  return a.raw > 0 ? result : -result;
}

// Q0.31 -> Q0.15, rounded to nearest, saturated (1.0 becomes 32767).
inline int16_t round_q0_31_to_q0_15(FixedPoint<0> v) {
  const int32_t q = rounding_divide_by_pot(v.raw, 16);
  return static_cast<int16_t>(q > INT16_MAX ? INT16_MAX : (q < INT16_MIN ? INT16_MIN : q));
}

// int16 Q3.12 gate pre-activations (scale 2^-12, [-8, 8)) to Q0.15 outputs
// (scale 2^-15). Q4.27 inside leaves tanh its spare bit for 2a.
inline int16_t logistic_q3_12(int16_t x) {
  return round_q0_31_to_q0_15(logistic(FixedPoint<4>::FromRaw(static_cast<int32_t>(x) * 32768)));
}
inline int16_t tanh_q3_12(int16_t x) {
  return round_q0_31_to_q0_15(tanh(FixedPoint<4>::FromRaw(static_cast<int32_t>(x) * 32768)));
}

}  // namespace fixed_point
}  // namespace gruwb
