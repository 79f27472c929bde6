// gemmlowp's 16-bit fixed-point functions (engine/kernels/fixed_point.h)
// against hand-worked values of their definitions and against libm over
// every int16 input: the integer LSTM's bit-exactness rests on them (the
// models' golden tests check the bits end to end; these check the maths).

#include "engine/kernels/fixed_point.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace gruwb {
namespace {

double q15(int16_t raw) { return raw / 32768.0; }

TEST(FixedPointTest, SaturatingRoundingDoublingHighMul) {
  EXPECT_EQ(fixed16::saturating_rounding_doubling_high_mul(16384, 16384), 8192);  // 0.5 * 0.5
  EXPECT_EQ(fixed16::saturating_rounding_doubling_high_mul(-32768, -32768), 32767);
  EXPECT_EQ(fixed16::saturating_rounding_doubling_high_mul(-32768, 32767), -32767);
  // 3 * 0.5 = 1.5: positive ties round up, negative ties toward zero (nudge).
  EXPECT_EQ(fixed16::saturating_rounding_doubling_high_mul(3, 16384), 2);
  EXPECT_EQ(fixed16::saturating_rounding_doubling_high_mul(-3, 16384), -1);
}

TEST(FixedPointTest, RoundingAndSaturatingShifts) {
  EXPECT_EQ(fixed16::rounding_divide_by_pot(6, 2), 2);    // 1.5 -> 2
  EXPECT_EQ(fixed16::rounding_divide_by_pot(-6, 2), -2);  // -1.5 -> -2 (away from zero)
  EXPECT_EQ(fixed16::rounding_divide_by_pot(-5, 2), -1);
  EXPECT_EQ(fixed16::saturating_rounding_multiply_by_pot(8191, 2), 32764);
  EXPECT_EQ(fixed16::saturating_rounding_multiply_by_pot(8192, 2), 32767);
  EXPECT_EQ(fixed16::saturating_rounding_multiply_by_pot(-8192, 2), -32768);
  EXPECT_EQ(fixed16::saturating_rounding_multiply_by_pot(-8193, 2), -32768);
  EXPECT_EQ(fixed16::saturating_rounding_multiply_by_pot(7, -1), 4);
  // gemmlowp's 32-bit constants rounded to 16 bits: exp(-1/8), 1/3, 48/17.
  EXPECT_EQ(fixed16::constant(1895147668), 28918);
  EXPECT_EQ(fixed16::constant(715827883), 10923);
  EXPECT_EQ(fixed16::constant(1515870810), 23130);
}

TEST(FixedPointTest, SpecialValues) {
  EXPECT_EQ(fixed16::logistic(0, 3), 16384);  // exactly 1/2
  EXPECT_EQ(fixed16::tanh(0, 3), 0);
  EXPECT_EQ(fixed16::exp_on_negative_values(0, 3), 32767);  // 1, the largest Q0.15
  // exp(-1) in Q0.15 = 12054.6, 1/(1 + 1/2) = 21845.3, (1 - 1/2)/(1 + 1/2) = 10922.7.
  EXPECT_NEAR(fixed16::exp_on_negative_values(-4096, 3), 12055, 2);
  // 16-bit Newton-Raphson keeps ~12 bits: a few steps off the real value.
  EXPECT_NEAR(fixed16::one_over_one_plus_x_for_x_in_0_1(16384), 21845, 6);
  EXPECT_NEAR(fixed16::one_minus_x_over_one_plus_x_for_x_in_0_1(16384), 10923, 12);
}

// Every Q3.12 input: within 8 Q0.15 steps of the real sigmoid (gemmlowp's int16 functions are
// that coarse: 6.4 at worst), and
// sigmoid(-x) = 1 - sigmoid(x) exactly (gemmlowp computes it so).
TEST(FixedPointTest, LogisticOverEveryInput) {
  double worst = 0;
  for (int32_t a = -32767; a <= 32767; ++a) {
    const int16_t y = fixed16::logistic(static_cast<int16_t>(a), 3);
    worst = std::max(worst, std::fabs(q15(y) - 1.0 / (1.0 + std::exp(-a / 4096.0))));
    if (a > 0) {
      EXPECT_EQ(fixed16::logistic(static_cast<int16_t>(-a), 3), 32767 - y) << a;
    }
  }
  EXPECT_LT(worst, 8.0 / 32768);
  std::printf("logistic Q3.12: worst error %.2f steps\n", worst * 32768);
}

// tanh with 0..6 integer bits (the cell state's format varies with its scale): within 16 steps
// (12.1 at worst).
TEST(FixedPointTest, TanhOverEveryInput) {
  for (int bits = 0; bits <= 6; ++bits) {
    double worst = 0;
    for (int32_t a = -32767; a <= 32767; ++a) {
      const int16_t y = fixed16::tanh(static_cast<int16_t>(a), bits);
      worst = std::max(worst, std::fabs(q15(y) - std::tanh(a / std::ldexp(1.0, 15 - bits))));
      if (a > 0) {
        EXPECT_EQ(fixed16::tanh(static_cast<int16_t>(-a), bits), -y) << a;
      }
    }
    EXPECT_LT(worst, 16.0 / 32768) << bits << " integer bits";
    std::printf("tanh Q%d.%d: worst error %.2f steps\n", bits, 15 - bits, worst * 32768);
  }
}

}  // namespace
}  // namespace gruwb
