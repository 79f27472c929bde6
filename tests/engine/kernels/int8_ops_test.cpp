// Full-integer ADD, SUB, MUL (int8 and int16), CONV_2D (int8, 16x8), MAX_POOL_2D,
// AVERAGE_POOL_2D, uint8 CONCATENATION, 16x8 FULLY_CONNECTED, QUANTIZE int16 -> int32, SOFTMAX
// int8 -> int16 and int16, int16 LOGISTIC/TANH on
// hand-made models, values worked out by hand from TFLite's reference integer kernels (multipliers
// from QuantizeMultiplier, gemmlowp's rounding doubling high multiply and rounding shift, so ties
// and double rounding show). Real TFLite's outputs for the same kernels: tests/fixtures/int8
// (golden_models_test).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

void quantize_tensor(OpModelBuilder& b, int t, float scale, int64_t zero_point) {
  auto q = std::make_unique<fb::QuantizationParametersT>();
  q->scale = {scale};
  q->zero_point = {zero_point};
  b.tensor_def(t).quantization = std::move(q);
}

int quantized_input(OpModelBuilder& b, const std::string& name, std::vector<int32_t> shape,
                    TensorType type, float scale, int64_t zero_point) {
  int t = b.input(name, std::move(shape), type);
  quantize_tensor(b, t, scale, zero_point);
  return t;
}

int quantized_output(OpModelBuilder& b, std::vector<int32_t> shape, TensorType type, float scale,
                     int64_t zero_point) {
  int t = b.output("y", std::move(shape), type);
  quantize_tensor(b, t, scale, zero_point);
  return t;
}

Values i16(std::vector<int32_t> shape, const std::vector<int16_t>& values) {
  Values v;
  v.type = TensorType::INT16;
  v.shape = std::move(shape);
  v.bytes.resize(values.size() * sizeof(int16_t));
  std::memcpy(v.bytes.data(), values.data(), v.bytes.size());
  return v;
}

Values u8(std::vector<int32_t> shape, const std::vector<uint8_t>& values) {
  Values v;
  v.type = TensorType::UINT8;
  v.shape = std::move(shape);
  v.bytes = values;
  return v;
}

// The integer values of an int8/uint8/int16 output.
std::vector<int32_t> integers(const Values& v) {
  std::vector<int32_t> out;
  if (v.type == TensorType::INT16) {
    for (size_t i = 0; i + 1 < v.bytes.size(); i += 2) {
      int16_t x = 0;
      std::memcpy(&x, &v.bytes[i], 2);
      out.push_back(x);
    }
  } else {
    for (uint8_t byte : v.bytes) {
      out.push_back(v.type == TensorType::INT8 ? static_cast<int8_t>(byte) : byte);
    }
  }
  return out;
}

template <typename Options>
std::vector<int32_t> run_binary(BuiltinOperator code, TensorType type, float s1, int64_t zp1,
                                float s2, int64_t zp2, float so, int64_t zpo, const Values& a,
                                const Values& b_values, Options options) {
  OpModelBuilder b;
  int x1 = quantized_input(b, "x1", a.shape, type, s1, zp1);
  int x2 = quantized_input(b, "x2", b_values.shape, type, s2, zp2);
  int y = quantized_output(b, a.shape, type, so, zpo);
  b.op(code, {x1, x2}, {y}, options);
  auto out = run(b, {a, b_values});
  return out.size() == 1 ? integers(out[0]) : std::vector<int32_t>{};
}

// x1 scale 0.5, x2 scale 0.25 zero point 1 (broadcast), output scale 1 zero point -2. ADD/SUB:
// left shift 20, input multipliers 0.5 and 0.25 of twice the larger scale (2^30 with shifts 0
// and -1), output multiplier 2^-20 (2^30, shift -19).
TEST(Int8OpsTest, AddAndSubRescaleBothInputsAndRoundTiesAwayFromZero) {
  const Values a = Values::i8({1, 3}, {3, -3, 100}), b = Values::i8({1}, {5});  // b = 1.0
  fb::AddOptionsT add;
  // 1.5 + 1 = 2.5 -> 3; -1.5 + 1 = -0.5 -> -1; 50 + 1 = 51; each minus 2.
  EXPECT_EQ(
      run_binary(BuiltinOperator::ADD, TensorType::INT8, 0.5f, 0, 0.25f, 1, 1.f, -2, a, b, add),
      (std::vector<int32_t>{1, -3, 49}));
  add.fused_activation_function = fb::ActivationFunctionType::RELU;  // clamps at the zero point
  EXPECT_EQ(
      run_binary(BuiltinOperator::ADD, TensorType::INT8, 0.5f, 0, 0.25f, 1, 1.f, -2, a, b, add),
      (std::vector<int32_t>{1, -2, 49}));
  fb::SubOptionsT sub;
  // 1.5 - 1 = 0.5 -> 1; -1.5 - 1 = -2.5 -> -3; 50 - 1 = 49; each minus 2.
  EXPECT_EQ(
      run_binary(BuiltinOperator::SUB, TensorType::INT8, 0.5f, 0, 0.25f, 1, 1.f, -2, a, b, sub),
      (std::vector<int32_t>{-1, -5, 47}));
}

// x1 scale 0.5 zero point 1, x2 scale 0.25, output scale 0.5 zero point 3: the product of the
// offset inputs times 0.25 (2^30, shift -1).
TEST(Int8OpsTest, MulRescalesTheProductAndSaturates) {
  fb::MulOptionsT mul;
  const Values a = Values::i8({1, 3}, {5, 2, 127}), b = Values::i8({1, 3}, {6, -3, 127});
  // 4 * 6 / 4 = 6 -> 9; 1 * -3 / 4 = -0.75 -> -1 -> 2; 126 * 127 / 4 -> saturates at 127.
  EXPECT_EQ(
      run_binary(BuiltinOperator::MUL, TensorType::INT8, 0.5f, 1, 0.25f, 0, 0.5f, 3, a, b, mul),
      (std::vector<int32_t>{9, 2, 127}));
}

TEST(Int8OpsTest, Int16AddGeneralAndPowerOfTwoScales) {
  fb::AddOptionsT general;
  general.pot_scale_int16 = false;
  // Left shift 15: 3 * 0.5 + 4 * 0.25 = 2.5 at output scale 1 -> 3; -32768 * 0.5 -> -16384.
  EXPECT_EQ(run_binary(BuiltinOperator::ADD, TensorType::INT16, 0.5f, 0, 0.25f, 0, 1.f, 0,
                       i16({1, 2}, {3, -32768}), i16({1, 2}, {4, 0}), general),
            (std::vector<int32_t>{3, -16384}));
  fb::AddOptionsT pot;  // pot_scale_int16 (the default) and scales 2^-1, 2^-2, 2^-1
  // x2 shifts right by one, rounding: 5 -> 3 (2.5 away from zero), 3 + 3 = 6; the sum
  // saturates at 32767.
  EXPECT_EQ(run_binary(BuiltinOperator::ADD, TensorType::INT16, 0.5f, 0, 0.25f, 0, 0.5f, 0,
                       i16({1, 2}, {3, 32767}), i16({1, 2}, {5, 32767}), pot),
            (std::vector<int32_t>{6, 32767}));
  fb::SubOptionsT sub;  // the same path subtracts: 3 - 3 = 0; -32768 - 16384 saturates
  EXPECT_EQ(run_binary(BuiltinOperator::SUB, TensorType::INT16, 0.5f, 0, 0.25f, 0, 0.5f, 0,
                       i16({1, 2}, {3, -32768}), i16({1, 2}, {5, 32767}), sub),
            (std::vector<int32_t>{0, -32768}));
}

TEST(Int8OpsTest, Int16MulAndItsZeroPointCheck) {
  fb::MulOptionsT mul;
  // 1000 * 3000 * (0.001 * 0.002 / 0.01) = 600.
  EXPECT_EQ(run_binary(BuiltinOperator::MUL, TensorType::INT16, 0.001f, 0, 0.002f, 0, 0.01f, 0,
                       i16({1, 1}, {1000}), i16({1, 1}, {3000}), mul),
            (std::vector<int32_t>{600}));
  OpModelBuilder b;
  int x1 = quantized_input(b, "x1", {1, 2}, TensorType::INT16, 0.5f, 3);
  int x2 = quantized_input(b, "x2", {1, 2}, TensorType::INT16, 0.5f, 0);
  int y = quantized_output(b, {1, 2}, TensorType::INT16, 0.5f, 0);
  b.op(BuiltinOperator::MUL, {x1, x2}, {y}, mul);
  EXPECT_NE(prepare_error(b).find("need zero point 0"), std::string::npos) << prepare_error(b);
}

// x [1,2,2,1] scale 0.5 zero point 1; filter [2,1,2,1] per channel (0.25, 0.5), bias (4, -2),
// output scale 1: VALID 1x2 windows, one per row.
TEST(Int8OpsTest, Conv2dPerChannelWithTflitesDoubleRounding) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {1, 2, 2, 1}, TensorType::INT8, 0.5f, 1);
  int w = b.constant_int8("w", {2, 1, 2, 1}, {1, 2, -3, 1}, {0.25f, 0.5f});
  int bias = b.constant_i32("bias", {2}, {4, -2});
  int y = quantized_output(b, {1, 2, 1, 2}, TensorType::INT8, 1.f, 0);
  fb::Conv2DOptionsT options;
  options.padding = fb::Padding::VALID;
  options.stride_h = options.stride_w = 1;
  options.dilation_h_factor = options.dilation_w_factor = 1;
  b.op(BuiltinOperator::CONV_2D, {x, w, bias}, {y}, options);
  auto out = run(b, {Values::i8({1, 2, 2, 1}, {3, 5, -1, 2})});
  ASSERT_EQ(out.size(), 1u);
  // x - zp: row 0 (2, 4), row 1 (-2, 1).
  // ch0 (x 1/8): (2 + 8) + 4 = 14 -> 1.75 -> 2; (-2 + 2) + 4 = 4 -> 0.5 -> 1.
  // ch1 (x 1/4): (-6 + 4) - 2 = -4 -> -1; (6 + 1) - 2 = 5 -> 1.25, but TFLite rounds twice:
  // the high multiply by 2^30 gives 2.5 -> 3, the shift by one 1.5 -> 2.
  EXPECT_EQ(integers(out[0]), (std::vector<int32_t>{2, -1, 1, 2}));
}

// x [1,2,3,1] (scale 1): 2x2 VALID windows at x = 0 and 1.
TEST(Int8OpsTest, PoolsMaxClampsAndAverageRoundsHalfAwayFromZero) {
  for (BuiltinOperator code : {BuiltinOperator::MAX_POOL_2D, BuiltinOperator::AVERAGE_POOL_2D}) {
    const bool max = code == BuiltinOperator::MAX_POOL_2D;
    OpModelBuilder b;
    int x = quantized_input(b, "x", {1, 2, 3, 1}, TensorType::INT8, 1.f, 0);
    int y = quantized_output(b, {1, 1, 2, 1}, TensorType::INT8, 1.f, 0);
    fb::Pool2DOptionsT options;
    options.padding = fb::Padding::VALID;
    options.stride_h = options.stride_w = 1;
    options.filter_height = options.filter_width = 2;
    options.fused_activation_function =
        max ? fb::ActivationFunctionType::RELU6 : fb::ActivationFunctionType::NONE;
    b.op(code, {x}, {y}, options);
    auto out = run(b, {Values::i8({1, 2, 3, 1}, {1, 2, 4, -4, -5, 9})});
    ASSERT_EQ(out.size(), 1u);
    // Max: 2 and 9, RELU6 clamps 9 to 6. Average: -6 / 4 = -1.5 -> -2, 10 / 4 = 2.5 -> 3.
    EXPECT_EQ(integers(out[0]), max ? (std::vector<int32_t>{2, 6}) : (std::vector<int32_t>{-2, 3}));
  }
}

TEST(Int8OpsTest, PoolOfAnotherOutputScaleIsRefused) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {1, 2, 2, 1}, TensorType::INT8, 1.f, 0);
  int y = quantized_output(b, {1, 1, 1, 1}, TensorType::INT8, 0.5f, 0);
  fb::Pool2DOptionsT options;
  options.padding = fb::Padding::VALID;
  options.stride_h = options.stride_w = 1;
  options.filter_height = options.filter_width = 2;
  b.op(BuiltinOperator::MAX_POOL_2D, {x}, {y}, options);
  EXPECT_NE(prepare_error(b).find("requantizing INT8 'x'"), std::string::npos) << prepare_error(b);
}

// 16x8: x int16 scale 0.5, weights int8 0.25, y int16 scale 1 -> multiplier 1/8 (2^30, shift -2).
// TFLite's int64 requantization rounds the multiplier to 16 bits (2^14) and shifts once by 17
// with half added: ties go up, so -1.5 -> -1 where the int32 path gives -2.
TEST(Int8OpsTest, FullyConnected16x8RoundsTiesUpWithItsInt64Multiply) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {3, 2}, TensorType::INT16, 0.5f, 0);
  int w = b.constant_int8("w", {1, 2}, {2, 2}, {0.25f});
  int bias = b.constant_i64("bias", {1}, {0});
  int y = quantized_output(b, {3, 1}, TensorType::INT16, 1.f, 0);
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, bias}, {y}, fb::FullyConnectedOptionsT());
  auto out = run(b, {i16({3, 2}, {3, 3, -3, -3, 32767, 32767})});
  ASSERT_EQ(out.size(), 1u);
  // Sums 12, -12, 131068: / 8 = 1.5 -> 2, -1.5 -> -1, 16383.5 -> 16384.
  EXPECT_EQ(integers(out[0]), (std::vector<int32_t>{2, -1, 16384}));
}

// int16 -> int32 (TFLite Micro's keyword model's last op): (q - 0) x 0.5 / 0.25, plus 3.
TEST(Int8OpsTest, QuantizeInt16ToInt32) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {1, 3}, TensorType::INT16, 0.5f, 0);
  int y = b.output("y", {1, 3}, TensorType::INT32);
  quantize_tensor(b, y, 0.25f, 3);
  b.op(BuiltinOperator::QUANTIZE, {x}, {y});
  auto out = run(b, {i16({1, 3}, {5, -32768, 32767})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{13, -65533, 65537}));
}

// int8 -> int16 SOFTMAX: the int8 kernel's table, clamped to int16 at scale 2^-15.
TEST(Int8OpsTest, SoftmaxInt8ToInt16) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {1, 3}, TensorType::INT8, std::log(2.f), 0);  // a step halves
  int y = quantized_output(b, {1, 3}, TensorType::INT16, 1.f / 32768.f, 0);
  fb::SoftmaxOptionsT options;
  options.beta = 1.f;
  b.op(BuiltinOperator::SOFTMAX, {x}, {y}, options);
  auto out = run(b, {Values::i8({1, 3}, {10, 9, 8})});
  ASSERT_EQ(out.size(), 1u);
  // 4/7, 2/7, 1/7 of 32768 = 18724.6, 9362.3, 4681.1.
  EXPECT_EQ(integers(out[0]), (std::vector<int32_t>{18725, 9362, 4681}));
}

// int16 LOGISTIC / TANH, TFLite's interpolated table. Input scale 2^-12: multiplier 3, so
// x = 4096 (1.0) lands on entry 24 exactly: sigmoid(1) = 0.7310586 is 47910.96 in 0.16, the
// entry is raised by half its chord's sag (0.65) to 47911, and (47911 * 2^9 + 2^9) >> 10 =
// 23956 in Q15 (plain rounding of 0.7310586 * 32768 would give 23955). 0 -> 0.5 exactly;
// +-8 (entry 192): sigmoid(8) = 0.9996646 -> 32757.0, sigmoid(-8) = 0.0003354 -> 10.99 -> 11.
// TANH reads sigmoid(2x): 16 is beyond the table (255/24), so it saturates to +-32767.
TEST(Int8OpsTest, Int16LogisticAndTanhInterpolateTflitesTable) {
  for (BuiltinOperator code : {BuiltinOperator::LOGISTIC, BuiltinOperator::TANH}) {
    OpModelBuilder b;
    int x = quantized_input(b, "x", {1, 4}, TensorType::INT16, 1.f / 4096.f, 0);
    int y = quantized_output(b, {1, 4}, TensorType::INT16, 1.f / 32768.f, 0);
    b.op(code, {x}, {y});
    auto out = run(b, {i16({1, 4}, {0, 4096, 32767, -32768})});
    ASSERT_EQ(out.size(), 1u);
    const std::vector<int32_t> got = integers(out[0]);
    if (code == BuiltinOperator::LOGISTIC) {
      EXPECT_EQ(got, (std::vector<int32_t>{16384, 23956, 32757, 11}));
    } else {
      // tanh(1) = 0.7615942 = 24956.3 in Q15; tanh(x) = 2 sigmoid(2x) - 1 reads entry 48.
      EXPECT_EQ(got[0], 0);
      EXPECT_NEAR(got[1], 24956, 1);
      EXPECT_EQ(got[2], 32767);
      EXPECT_EQ(got[3], -32767);
    }
  }
}

TEST(Int8OpsTest, Int16LogisticNeedsOutputScale2ToThe15) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {1, 2}, TensorType::INT16, 0.001f, 0);
  int y = quantized_output(b, {1, 2}, TensorType::INT16, 1.f / 256.f, 0);
  b.op(BuiltinOperator::LOGISTIC, {x}, {y});
  EXPECT_NE(prepare_error(b).find("output scale 2^-15"), std::string::npos) << prepare_error(b);
}

// int16 SOFTMAX of four equal values: each difference 0 reads exp(0) from the table's last
// interval (entry 511 = 32133, entry 512 = 32767 clamped, offset 127: 32133 + 629 = 32762);
// the sum 131048 has 15 leading zeros, is normalized to 131048 - 98304 = 32744 for the
// 1/(1+x) table (entry 511 = 16400, slope -16, offset 104: 16387), and
// (32762 * 16387 + 2^15) >> 16 = 8192, a quarter in Q15.
TEST(Int8OpsTest, Int16SoftmaxOfEqualValuesIsAQuarter) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {2, 4}, TensorType::INT16, 0.001f, 0);
  int y = quantized_output(b, {2, 4}, TensorType::INT16, 1.f / 32768.f, 0);
  fb::SoftmaxOptionsT options;
  options.beta = 1.f;
  b.op(BuiltinOperator::SOFTMAX, {x}, {y}, options);
  // Second row: -20000 lies 25 units below the others, past the exp table's range [-10, 0]:
  // it reads exp(-10) = 1.5 in Q15 and gets at most a step; the three others a third each.
  auto out = run(b, {i16({2, 4}, {7, 7, 7, 7, -20000, 5000, 5000, 5000})});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<int32_t> got = integers(out[0]);
  EXPECT_EQ(std::vector<int32_t>(got.begin(), got.begin() + 4),
            (std::vector<int32_t>{8192, 8192, 8192, 8192}));
  EXPECT_LE(got[4], 1);
  EXPECT_NEAR(got[5], 10923, 2);  // a third
  EXPECT_EQ(got[5], got[6]);
}

// 16x8 CONV_2D: int16 x, int8 weights, int64 bias; the int64 requantization as in
// FULLY_CONNECTED 16x8 (ties up). x scale 0.5, w 0.25, y 1: multiplier 1/8.
TEST(Int8OpsTest, Conv2d16x8SumsInInt64) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {1, 1, 2, 1}, TensorType::INT16, 0.5f, 0);
  int w = b.constant_int8("w", {1, 1, 2, 1}, {127, 127}, {0.25f});
  int bias = b.constant_i64("bias", {1}, {4});
  int y = quantized_output(b, {1, 1, 1, 1}, TensorType::INT16, 1.f, 0);
  fb::Conv2DOptionsT options;
  options.padding = fb::Padding::VALID;
  options.stride_h = options.stride_w = 1;
  b.op(BuiltinOperator::CONV_2D, {x, w, bias}, {y}, options);
  auto out = run(b, {i16({1, 1, 2, 1}, {32767, 32767})});
  ASSERT_EQ(out.size(), 1u);
  // 2 * 127 * 32767 + 4 = 8322822 (beyond int16 x int8 in int16); / 8 = 1040352.75, clamped.
  EXPECT_EQ(integers(out[0]), (std::vector<int32_t>{32767}));
  auto low = run(b, {i16({1, 1, 2, 1}, {-12, 1})});
  // -11 * 127 + 4 = -1393; / 8 = -174.125 -> -174.
  EXPECT_EQ(integers(low[0]), (std::vector<int32_t>{-174}));
}

TEST(Int8OpsTest, Conv2d16x8NeedsZeroPoint0) {
  OpModelBuilder b;
  int x = quantized_input(b, "x", {1, 1, 1, 1}, TensorType::INT16, 0.5f, 3);
  int w = b.constant_int8("w", {1, 1, 1, 1}, {1}, {0.25f});
  int y = quantized_output(b, {1, 1, 1, 1}, TensorType::INT16, 1.f, 0);
  fb::Conv2DOptionsT options;
  options.padding = fb::Padding::VALID;
  options.stride_h = options.stride_w = 1;
  b.op(BuiltinOperator::CONV_2D, {x, w}, {y}, options);
  EXPECT_NE(prepare_error(b).find("need zero point 0"), std::string::npos) << prepare_error(b);
}

// uint8 inputs of other scales are requantized in float: q * s_in / s_out - zp_in * s_in / s_out,
// rounded half away from zero, plus zp_out.
TEST(Int8OpsTest, Uint8ConcatenationRequantizesItsInputs) {
  OpModelBuilder b;
  int x0 = quantized_input(b, "x0", {1, 2}, TensorType::UINT8, 0.5f, 10);
  int x1 = quantized_input(b, "x1", {1, 2}, TensorType::UINT8, 0.25f, 128);
  int y = quantized_output(b, {1, 4}, TensorType::UINT8, 0.5f, 128);
  fb::ConcatenationOptionsT options;
  options.axis = 1;
  b.op(BuiltinOperator::CONCATENATION, {x0, x1}, {y}, options);
  auto out = run(b, {u8({1, 2}, {0, 255}), u8({1, 2}, {131, 0})});
  ASSERT_EQ(out.size(), 1u);
  // x0: (0 - 10) + 128 = 118, (255 - 10) + 128 = 373 -> 255.
  // x1: (131 - 128) / 2 = 1.5 -> 2 -> 130; -128 / 2 = -64 -> 64.
  EXPECT_EQ(integers(out[0]), (std::vector<int32_t>{118, 255, 130, 64}));
}

}  // namespace
}  // namespace gruwb::test
