#pragma once
// gemmlowp's 16-bit fixed-point arithmetic, as TFLite's integer LSTM uses it
// (int16 gate pre-activations in Q3.12 through logistic/tanh, the int16 cell
// state in Q(15+log2 scale) through tanh). A value with `integer_bits` k is
// raw / 2^(15-k): Q0.15 ("F0") holds [-1, 1), Q3.12 holds [-8, 8).
//
// The results must equal gemmlowp's bit for bit, so every step keeps its
// quirks: int16 additions wrap (gemmlowp's Add), except the one saturating
// add in the exp polynomial; negation wraps (-(-32768) == -32768); constants
// are gemmlowp's int32 ones rounded to 16 bits (RescaleConstantInitializer);
// Newton-Raphson runs exactly three iterations.

#include <cstdint>

#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace fixed16 {

inline int16_t wrap(int32_t x) { return static_cast<int16_t>(x); }

// round(a * b / 2^15), -1 * -1 saturating to the largest value (VQRDMULH).
inline int16_t saturating_rounding_doubling_high_mul(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  const int32_t ab = static_cast<int32_t>(a) * static_cast<int32_t>(b);
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return wrap((ab + nudge) / (1 << 15));
}

// x / 2^exponent, rounded to nearest with ties away from zero.
inline int16_t rounding_divide_by_pot(int16_t x, int exponent) {
  return wrap(gruwb::rounding_divide_by_pot(x, exponent));
}

// x * 2^exponent: a saturating left shift (exponent > 0) or a rounding right
// shift (exponent < 0).
inline int16_t saturating_rounding_multiply_by_pot(int16_t x, int exponent) {
  if (exponent < 0) return rounding_divide_by_pot(x, -exponent);
  if (exponent == 0) return x;
  const int32_t threshold = (1 << (15 - exponent)) - 1;
  if (x > threshold) return INT16_MAX;
  if (x < -threshold) return INT16_MIN;
  return wrap(static_cast<int32_t>(x) * (1 << exponent));
}

// gemmlowp's 32-bit constant as a 16-bit raw value.
inline int16_t constant(int32_t raw32) { return wrap(gruwb::rounding_divide_by_pot(raw32, 16)); }

// The raw value of 1 (the largest value in Q0.15) and of 2^exponent in Qk.
inline int16_t one(int integer_bits) {
  return integer_bits == 0 ? INT16_MAX : wrap(1 << (15 - integer_bits));
}
inline int16_t constant_pot(int integer_bits, int exponent) {
  return wrap(1 << (15 - integer_bits + exponent));
}

// Changes the number of integer bits, keeping the value (saturating/rounding).
inline int16_t rescale(int16_t x, int from_bits, int to_bits) {
  return saturating_rounding_multiply_by_pot(x, from_bits - to_bits);
}

// exp(a) for a in [-1/4, 0), a in Q0.15: Taylor expansion around -1/8.
inline int16_t exp_on_interval_between_negative_one_quarter_and_0_excl(int16_t a) {
  const int16_t constant_term = constant(1895147668);  // exp(-1/8)
  const int16_t one_third = constant(715827883);
  const int16_t x = wrap(a + constant_pot(0, -3));
  const int16_t x2 = saturating_rounding_doubling_high_mul(x, x);
  const int16_t x3 = saturating_rounding_doubling_high_mul(x2, x);
  const int16_t x4 = saturating_rounding_doubling_high_mul(x2, x2);
  const int16_t x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2);
  const int16_t poly = saturating_rounding_multiply_by_pot(
      wrap(saturating_rounding_doubling_high_mul(wrap(x4_over_4 + x3), one_third) + x2), -1);
  const int32_t sum = static_cast<int32_t>(constant_term) +
                      saturating_rounding_doubling_high_mul(constant_term, wrap(x + poly));
  return wrap(sum > INT16_MAX ? INT16_MAX : (sum < INT16_MIN ? INT16_MIN : sum));
}

// exp(a) for a <= 0 with `integer_bits` integer bits; the result in Q0.15.
inline int16_t exp_on_negative_values(int16_t a, int integer_bits) {
  const int fractional_bits = 15 - integer_bits;
  const int16_t one_quarter = constant_pot(integer_bits, -2);
  const int16_t mask = wrap(one_quarter - 1);
  const int16_t a_mod_quarter_minus_one_quarter = wrap((a & mask) - one_quarter);
  int16_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
      rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0));
  const int16_t remainder = wrap(a_mod_quarter_minus_one_quarter - a);
  // exp(-2^e) for e = -2 .. 4, multiplied in for each set bit of the remainder.
  const int32_t multipliers[] = {1672461947, 1302514674, 790015084, 290630308,
                                 39332535,   720401,     242};
  for (int e = -2; e <= 4; ++e) {
    if (integer_bits <= e) continue;
    if (remainder & (1 << (fractional_bits + e))) {
      result = saturating_rounding_doubling_high_mul(result, constant(multipliers[e + 2]));
    }
  }
  if (integer_bits > 5) {  // below -32 the result is 0
    const int16_t clamp = constant(-(1 << (36 - integer_bits)));
    if (a < clamp) result = 0;
  }
  return a == 0 ? one(0) : result;
}

// Newton-Raphson reciprocal of (1 + a) / 2 for a in (0, 1), in Q2.13.
inline int16_t half_reciprocal_newton_raphson(int16_t a) {
  const int32_t sum = static_cast<int32_t>(a) + one(0);
  const int16_t half_denominator = wrap((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int16_t c48_over_17 = constant(1515870810);
  const int16_t c_neg_32_over_17 = constant(-1010580540);
  int16_t x =
      wrap(c48_over_17 + saturating_rounding_doubling_high_mul(half_denominator, c_neg_32_over_17));
  for (int i = 0; i < 3; ++i) {
    const int16_t half_denominator_times_x =
        saturating_rounding_doubling_high_mul(half_denominator, x);
    const int16_t one_minus = wrap(one(2) - half_denominator_times_x);
    x = wrap(x + rescale(saturating_rounding_doubling_high_mul(x, one_minus), 4, 2));
  }
  return x;
}

// 1 / (1 + a) for a in (0, 1), Q0.15 in and out.
inline int16_t one_over_one_plus_x_for_x_in_0_1(int16_t a) {
  return rescale(half_reciprocal_newton_raphson(a), 1, 0);  // x/2, read as Q1.14
}

// (1 - a) / (1 + a) for a in (0, 1), Q0.15 in and out.
inline int16_t one_minus_x_over_one_plus_x_for_x_in_0_1(int16_t a) {
  return rescale(wrap(half_reciprocal_newton_raphson(a) - one(2)), 2, 0);
}

// 1 / (1 + exp(-a)), a with `integer_bits` integer bits, result in Q0.15.
inline int16_t logistic(int16_t a, int integer_bits) {
  if (a == 0) return constant(1 << 30);  // 1/2
  const int16_t abs_input = a > 0 ? a : wrap(-a);
  const int16_t if_positive =
      one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(wrap(-abs_input), integer_bits));
  return a > 0 ? if_positive : wrap(one(0) - if_positive);
}

// tanh(a), a with `integer_bits` integer bits (exp(-2|a|) needs one more),
// result in Q0.15.
inline int16_t tanh(int16_t a, int integer_bits) {
  if (a == 0) return 0;
  const int16_t negative = a < 0 ? a : wrap(-a);
  const int16_t t =
      one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(negative, integer_bits + 1));
  return a < 0 ? wrap(-t) : t;
}

}  // namespace fixed16

namespace fixed32 {

// x * 2^exponent for exponent > 0, saturating (gemmlowp's SaturatingRoundingMultiplyByPOT).
inline int32_t saturating_shift_left(int32_t x, int exponent) {
  const int32_t threshold = static_cast<int32_t>((1u << (31 - exponent)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// TFLite's GetInvSqrtQuantizedMultiplierExp with reverse_shift -1: 1/sqrt(input) as a
// quantized multiplier (multiplier in Q31, shift > 0 left), by five Newton-Raphson steps on
// int32 Q3.28 values. Inputs <= 1 give the largest multiplier and no shift.
inline QuantizedMultiplier inverse_sqrt(int32_t input) {
  QuantizedMultiplier out;
  if (input <= 1) {
    out.multiplier = INT32_MAX;
    return out;
  }
  int32_t shift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++shift;
  }
  const int leading_zeros = __builtin_clz(static_cast<uint32_t>(input));
  const int left_shift_bit_pairs = (leading_zeros - 1) / 2 - 1;
  shift -= left_shift_bit_pairs;
  input <<= 2 * left_shift_bit_pairs;
  // Q3.28: 1 is 1 << 28.
  const int32_t half_input = rounding_divide_by_pot(input >> 1, 1);
  const int32_t half_three = (1 << 28) + (1 << 27);
  int32_t x = 1 << 28;
  for (int i = 0; i < 5; ++i) {
    const int32_t x3 = saturating_shift_left(
        saturating_rounding_doubling_high_mul(saturating_rounding_doubling_high_mul(x, x), x), 6);
    const int32_t difference = static_cast<int32_t>(
        static_cast<uint32_t>(saturating_rounding_doubling_high_mul(half_three, x)) -
        static_cast<uint32_t>(saturating_rounding_doubling_high_mul(half_input, x3)));
    x = saturating_shift_left(difference, 3);
  }
  x = saturating_rounding_doubling_high_mul(x, 1518500250);  // sqrt(2) / 2 in Q0.31
  if (shift < 0) {
    x = static_cast<int32_t>(static_cast<uint32_t>(x) << -shift);
    shift = 0;
  }
  out.multiplier = x;
  out.shift = -shift;
  return out;
}

}  // namespace fixed32
}  // namespace gruwb
