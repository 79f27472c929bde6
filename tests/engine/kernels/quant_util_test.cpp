// TFLite's integer arithmetic (engine/kernels/quant_util.h) against values
// worked out by hand from TFLite's definitions (quantization_util.cc,
// common.h): frexp + round into an int32 multiplier and shift, gemmlowp's
// nudged doubling high multiply (ties of negative products round toward
// zero), and rounding shifts with ties away from zero.

#include "engine/kernels/quant_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace gruwb {
namespace {

constexpr int32_t kHalf = 1 << 30;  // 0.5 in Q31

TEST(QuantUtilTest, QuantizeMultiplier) {
  struct Case {
    double real;
    int32_t multiplier, shift;
  };
  const Case cases[] = {
      {0.5, kHalf, 0},
      {1.0, kHalf, 1},
      {0.25, kHalf, -1},
      {0.75, 1610612736, 0},     // 0.75 * 2^31
      {0.1, 1717986918, -3},     // 0.8 * 2^31 = 1717986918.4
      {0.0123, 1690499128, -6},  // 0.7872 * 2^31
      {3.5, 1879048192, 2},      // 0.875 * 2^31, x4
      {1.0 - 1e-12, kHalf, 1},   // rounds up to 2^31: halved, shift + 1
      {0.0, 0, 0},
      {1e-12, 0, 0},  // below 2^-31 * 2^-31: flushed to zero
  };
  for (const Case& c : cases) {
    const QuantizedMultiplier m = quantize_multiplier(c.real);
    EXPECT_EQ(m.multiplier, c.multiplier) << c.real;
    EXPECT_EQ(m.shift, c.shift) << c.real;
  }
}

TEST(QuantUtilTest, SaturatingRoundingDoublingHighMul) {
  EXPECT_EQ(saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MIN), INT32_MAX);
  EXPECT_EQ(saturating_rounding_doubling_high_mul(kHalf, kHalf), 1 << 29);
  EXPECT_EQ(saturating_rounding_doubling_high_mul(1, kHalf), 1);          // 0.5 -> 1
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-1, kHalf), 0);         // -0.5 -> 0
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-3, kHalf), -1);        // -1.5 -> -1
  EXPECT_EQ(saturating_rounding_doubling_high_mul(100, 1717986918), 80);  // 80.0000000009
  EXPECT_EQ(saturating_rounding_doubling_high_mul(INT32_MAX, INT32_MAX), INT32_MAX - 1);
}

TEST(QuantUtilTest, RoundingDivideByPowerOfTwo) {
  EXPECT_EQ(rounding_divide_by_pot(5, 1), 3);    // 2.5
  EXPECT_EQ(rounding_divide_by_pot(-5, 1), -3);  // -2.5: away from zero
  EXPECT_EQ(rounding_divide_by_pot(4, 1), 2);
  EXPECT_EQ(rounding_divide_by_pot(7, 2), 2);    // 1.75
  EXPECT_EQ(rounding_divide_by_pot(6, 2), 2);    // 1.5
  EXPECT_EQ(rounding_divide_by_pot(-6, 2), -2);  // -1.5
  EXPECT_EQ(rounding_divide_by_pot(-5, 2), -1);  // -1.25
  EXPECT_EQ(rounding_divide_by_pot(123, 0), 123);
  EXPECT_EQ(rounding_divide_by_pot(INT32_MAX, 31), 1);
}

TEST(QuantUtilTest, MultiplyByQuantizedMultiplier) {
  const QuantizedMultiplier one = quantize_multiplier(1.0);
  for (int32_t x : {0, 1, -1, 127, -128, 100000, -100000}) {
    EXPECT_EQ(multiply_by_quantized_multiplier(x, one), x) << x;
  }
  EXPECT_EQ(multiply_by_quantized_multiplier(1000, quantize_multiplier(0.1)), 100);
  EXPECT_EQ(multiply_by_quantized_multiplier(-1000, quantize_multiplier(0.1)), -100);
  EXPECT_EQ(multiply_by_quantized_multiplier(12345, quantize_multiplier(0.0123)), 152);
  EXPECT_EQ(multiply_by_quantized_multiplier(-12345, quantize_multiplier(0.0123)), -152);
  // Left shift before the high multiply: 7 * 3.5 = 24.5 -> 25; -24.5 -> -24
  // (the high multiply's negative tie rounds toward zero).
  EXPECT_EQ(multiply_by_quantized_multiplier(7, quantize_multiplier(3.5)), 25);
  EXPECT_EQ(multiply_by_quantized_multiplier(-7, quantize_multiplier(3.5)), -24);
  // micro_speech's FULLY_CONNECTED: input 0.101715684 x weights 0.00047870507 / output 0.09173192.
  const QuantizedMultiplier fc = quantize_multiplier(0.101715684 * 0.00047870507 / 0.09173192);
  EXPECT_EQ(fc.multiplier, 1167253782);
  EXPECT_EQ(fc.shift, -10);
}

TEST(QuantUtilTest, ActivationRangeQuantized) {
  int32_t min = 0, max = 0;
  ASSERT_TRUE(activation_range_quantized(fb::ActivationFunctionType::NONE, TensorType::INT8, 0.1f,
                                         -10, &min, &max)
                  .ok());
  EXPECT_EQ(min, -128);
  EXPECT_EQ(max, 127);
  ASSERT_TRUE(activation_range_quantized(fb::ActivationFunctionType::RELU, TensorType::INT8, 0.1f,
                                         -10, &min, &max)
                  .ok());
  EXPECT_EQ(min, -10);
  EXPECT_EQ(max, 127);
  ASSERT_TRUE(activation_range_quantized(fb::ActivationFunctionType::RELU6, TensorType::INT8, 0.1f,
                                         -10, &min, &max)
                  .ok());
  EXPECT_EQ(min, -10);
  EXPECT_EQ(max, 50);
  ASSERT_TRUE(activation_range_quantized(fb::ActivationFunctionType::RELU_N1_TO_1,
                                         TensorType::UINT8, 0.01f, 128, &min, &max)
                  .ok());
  EXPECT_EQ(min, 28);
  EXPECT_EQ(max, 228);
  EXPECT_FALSE(activation_range_quantized(fb::ActivationFunctionType::TANH, TensorType::INT8, 0.1f,
                                          0, &min, &max)
                   .ok());
}

TEST(QuantUtilTest, QuantizeValueRoundsHalfAwayFromZero) {
  EXPECT_EQ(quantize_value(0.25f, 0.5f, 0), 1);    // 0.5 -> 1
  EXPECT_EQ(quantize_value(-0.25f, 0.5f, 0), -1);  // -0.5 -> -1
  EXPECT_EQ(quantize_value(6.f, 0.1f, -10), 50);
}

// Float inputs from users may be NaN, infinite or huge: the result must be
// the same on every CPU (a plain cast is undefined there; x86 and Arm differ).
TEST(QuantUtilTest, RoundSaturatedIsDefinedForEveryFloat) {
  EXPECT_EQ(round_saturated(2.5f), 3);
  EXPECT_EQ(round_saturated(-2.5f), -3);
  EXPECT_EQ(round_saturated(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(round_saturated(std::numeric_limits<float>::infinity()), INT32_MAX);
  EXPECT_EQ(round_saturated(-std::numeric_limits<float>::infinity()), INT32_MIN);
  EXPECT_EQ(round_saturated(3e9f), INT32_MAX);
  EXPECT_EQ(round_saturated(-3e9f), INT32_MIN);
  EXPECT_EQ(round_saturated(-2147483648.f), INT32_MIN);
  EXPECT_EQ(round_saturated(2147483520.f), 2147483520);  // the largest float below 2^31
  EXPECT_EQ(quantize_value(1e30f, 1e-3f, 5), INT32_MAX);
  EXPECT_EQ(quantize_value(-1e30f, 1e-3f, -5), INT32_MIN);
}

}  // namespace
}  // namespace gruwb
