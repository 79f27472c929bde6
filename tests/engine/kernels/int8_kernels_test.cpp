// Full-integer (int8) kernels on hand-made models, values worked out by hand from TFLite's
// definitions: QUANTIZE (float -> int8, uint8 -> int8), DEQUANTIZE, int8 FULLY_CONNECTED
// (zero points, int32 bias, per-channel scales, fused clamps), DEPTHWISE_CONV_2D, SOFTMAX,
// LOGISTIC/TANH tables, data movement that keeps int8 bytes, and the refusal of an op without an
// integer kernel. Real TFLite's outputs for the same kernels: tests/fixtures/int8
// (golden_models_test).

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

void quantize_tensor(OpModelBuilder& b, int t, std::vector<float> scales,
                     std::vector<int64_t> zero_points) {
  auto q = std::make_unique<fb::QuantizationParametersT>();
  q->scale = std::move(scales);
  q->zero_point = std::move(zero_points);
  b.tensor_def(t).quantization = std::move(q);
}

Values u8(std::vector<int32_t> shape, const std::vector<uint8_t>& values) {
  Values v;
  v.type = TensorType::UINT8;
  v.shape = std::move(shape);
  v.bytes = values;
  return v;
}

std::vector<int32_t> int8s(const Values& v) {
  EXPECT_EQ(v.type, TensorType::INT8);
  std::vector<int32_t> out;
  for (uint8_t byte : v.bytes) out.push_back(static_cast<int8_t>(byte));
  return out;
}

TEST(Int8KernelsTest, QuantizeRoundsHalfAwayFromZeroAndSaturates) {
  OpModelBuilder b;
  int x = b.input("x", {1, 6});
  int y = b.output("y", {1, 6}, TensorType::INT8);
  quantize_tensor(b, y, {0.5f}, {3});
  b.op(BuiltinOperator::QUANTIZE, {x}, {y});
  auto out = run(b, {Values::f32({1, 6}, {0.25f, -0.25f, 1.f, -1.3f, 100.f, -100.f})});
  ASSERT_EQ(out.size(), 1u);
  // 3 + round(0.5) = 4, 3 + round(-0.5) = 2, 3 + 2, 3 + round(-2.6) = 0, saturated.
  EXPECT_EQ(int8s(out[0]), (std::vector<int32_t>{4, 2, 5, 0, 127, -128}));
}

// A tiny scale (or a huge input) put x / scale beyond int32, a conversion with undefined
// behaviour (model_invoke_fuzz on a shipped fixture); NaN and Inf inputs likewise.
TEST(Int8KernelsTest, QuantizeBeyondInt32AndNonFiniteInputsSaturate) {
  OpModelBuilder b;
  int x = b.input("x", {1, 5});
  int y = b.output("y", {1, 5}, TensorType::INT8);
  quantize_tensor(b, y, {1e-12f}, {100});
  b.op(BuiltinOperator::QUANTIZE, {x}, {y});
  const float inf = std::numeric_limits<float>::infinity();
  auto out = run(b, {Values::f32({1, 5}, {1.f, -1.f, inf, -inf, std::nanf("")})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(int8s(out[0]), (std::vector<int32_t>{127, -128, 127, -128, 100}));
}

TEST(Int8KernelsTest, QuantizeUint8ToInt8ShiftsByTheZeroPoints) {
  OpModelBuilder b;
  int x = b.input("x", {1, 4}, TensorType::UINT8);
  quantize_tensor(b, x, {0.003921569f}, {0});
  int y = b.output("y", {1, 4}, TensorType::INT8);
  quantize_tensor(b, y, {0.003921569f}, {-128});
  b.op(BuiltinOperator::QUANTIZE, {x}, {y});
  auto out = run(b, {u8({1, 4}, {0, 1, 128, 255})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(int8s(out[0]), (std::vector<int32_t>{-128, -127, 0, 127}));
}

TEST(Int8KernelsTest, QuantizeRescalesBetweenScales) {
  OpModelBuilder b;
  int x = b.input("x", {1, 4}, TensorType::INT8);
  quantize_tensor(b, x, {0.5f}, {0});
  int y = b.output("y", {1, 4}, TensorType::INT8);
  quantize_tensor(b, y, {0.25f}, {1});
  b.op(BuiltinOperator::QUANTIZE, {x}, {y});
  auto out = run(b, {Values::i8({1, 4}, {0, 3, -5, 100})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(int8s(out[0]), (std::vector<int32_t>{1, 7, -9, 127}));  // 2q + 1, saturated
}

TEST(Int8KernelsTest, Dequantize) {
  OpModelBuilder b;
  int x = b.input("x", {1, 3}, TensorType::INT8);
  quantize_tensor(b, x, {0.25f}, {-2});
  int y = b.output("y");
  b.op(BuiltinOperator::DEQUANTIZE, {x}, {y});
  auto out = run(b, {Values::i8({1, 3}, {-2, 2, -128})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].floats(), (std::vector<float>{0.f, 1.f, -31.5f}));
}

// x [1, 2] (scale 0.5, zp 1), W [2, 2] per channel (0.25, 0.5), bias int32, y (scale 1, zp -3).
TEST(Int8KernelsTest, FullyConnectedPerChannelWithZeroPointsAndClamp) {
  for (auto activation : {fb::ActivationFunctionType::NONE, fb::ActivationFunctionType::RELU}) {
    OpModelBuilder b;
    int x = b.input("x", {1, 2}, TensorType::INT8);
    quantize_tensor(b, x, {0.5f}, {1});
    int w = b.constant_int8("w", {2, 2}, {4, -8, 2, 6}, {0.25f, 0.5f});
    int bias = b.constant_i32("bias", {2}, {8, -20});
    quantize_tensor(b, bias, {0.125f, 0.25f}, {0, 0});
    int y = b.output("y", {1, 2}, TensorType::INT8);
    quantize_tensor(b, y, {1.f}, {-3});
    fb::FullyConnectedOptionsT options;
    options.fused_activation_function = activation;
    b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, bias}, {y}, options);
    auto out = run(b, {Values::i8({1, 2}, {5, -3})});
    ASSERT_EQ(out.size(), 1u);
    // Row 0: (4*4 + -8*-4) + 8 = 56, x 0.125 = 7 -> 4. Row 1: (2*4 + 6*-4) - 20 = -36,
    // x 0.25 = -9 -> -12, clamped by RELU to the zero point -3.
    const int32_t second = activation == fb::ActivationFunctionType::RELU ? -3 : -12;
    EXPECT_EQ(int8s(out[0]), (std::vector<int32_t>{4, second}));
  }
}

// x [1,1,2,1] (scale 0.5, zp 1), filter [1,1,1,2] per channel (0.25, 0.5): depth multiplier 2.
TEST(Int8KernelsTest, DepthwiseConvPerChannel) {
  OpModelBuilder b;
  int x = b.input("x", {1, 1, 2, 1}, TensorType::INT8);
  quantize_tensor(b, x, {0.5f}, {1});
  int w = b.constant_int8("w", {1, 1, 1, 2}, {2, -4}, {0.25f, 0.5f}, {}, 3);
  int bias = b.constant_i32("bias", {2}, {4, -8});
  quantize_tensor(b, bias, {0.125f, 0.25f}, {0, 0});
  int y = b.output("y", {1, 1, 2, 2}, TensorType::INT8);
  quantize_tensor(b, y, {1.f}, {0});
  fb::DepthwiseConv2DOptionsT options;
  options.padding = fb::Padding::VALID;
  options.stride_w = options.stride_h = 1;
  options.depth_multiplier = 2;
  b.op(BuiltinOperator::DEPTHWISE_CONV_2D, {x, w, bias}, {y}, options);
  auto out = run(b, {Values::i8({1, 1, 2, 1}, {3, 6})});
  ASSERT_EQ(out.size(), 1u);
  // x - zp = 2, 5: (2*2 + 4) / 8 = 1, (-4*2 - 8) / 4 = -4, (2*5 + 4) / 8 = 1.75 -> 2,
  // (-4*5 - 8) / 4 = -7.
  EXPECT_EQ(int8s(out[0]), (std::vector<int32_t>{1, -4, 2, -7}));
}

TEST(Int8KernelsTest, SoftmaxSumsTableEntries) {
  OpModelBuilder b;
  int x = b.input("x", {1, 3}, TensorType::INT8);
  quantize_tensor(b, x, {std::log(2.f)}, {0});  // one step = a factor of 2
  int y = b.output("y", {1, 3}, TensorType::INT8);
  quantize_tensor(b, y, {1.f / 256.f}, {-128});
  fb::SoftmaxOptionsT options;
  options.beta = 1.f;
  b.op(BuiltinOperator::SOFTMAX, {x}, {y}, options);
  auto out = run(b, {Values::i8({1, 3}, {10, 9, 8})});
  ASSERT_EQ(out.size(), 1u);
  // 4/7, 2/7, 1/7 of 256 = 146.3, 73.1, 36.6 -> 146, 73, 37, minus 128.
  EXPECT_EQ(int8s(out[0]), (std::vector<int32_t>{18, -55, -91}));
}

TEST(Int8KernelsTest, LogisticAndTanhTables) {
  for (auto code : {BuiltinOperator::LOGISTIC, BuiltinOperator::TANH}) {
    const bool logistic = code == BuiltinOperator::LOGISTIC;
    OpModelBuilder b;
    int x = b.input("x", {1, 3}, TensorType::INT8);
    quantize_tensor(b, x, {0.125f}, {0});
    int y = b.output("y", {1, 3}, TensorType::INT8);
    quantize_tensor(b, y, {logistic ? 1.f / 256.f : 1.f / 128.f}, {logistic ? -128 : 0});
    b.op(code, {x}, {y});
    auto out = run(b, {Values::i8({1, 3}, {0, 8, -128})});
    ASSERT_EQ(out.size(), 1u);
    // logistic(0) = 0.5 -> 0; logistic(1) = 0.7311 -> 187 - 128 = 59; logistic(-16) -> -128.
    // tanh(0) = 0; tanh(1) = 0.7616 -> 97; tanh(-16) = -1 -> -128.
    EXPECT_EQ(int8s(out[0]),
              logistic ? (std::vector<int32_t>{0, 59, -128}) : (std::vector<int32_t>{0, 97, -128}));
  }
}

TEST(Int8KernelsTest, ReshapeMovesInt8Bytes) {
  OpModelBuilder b;
  int x = b.input("x", {2, 2}, TensorType::INT8);
  quantize_tensor(b, x, {0.1f}, {3});
  int shape = b.constant_i32("shape", {1}, {4});
  int y = b.output("y", {4}, TensorType::INT8);
  quantize_tensor(b, y, {0.1f}, {3});
  b.op(BuiltinOperator::RESHAPE, {x, shape}, {y});
  auto out = run(b, {Values::i8({2, 2}, {1, -2, 127, -128})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int32_t>{4}));
  EXPECT_EQ(int8s(out[0]), (std::vector<int32_t>{1, -2, 127, -128}));
}

TEST(Int8KernelsTest, ConcatenationOfDifferentScalesIsRefused) {
  OpModelBuilder b;
  int x0 = b.input("x0", {1, 2}, TensorType::INT8);
  quantize_tensor(b, x0, {0.1f}, {0});
  int x1 = b.input("x1", {1, 2}, TensorType::INT8);
  quantize_tensor(b, x1, {0.2f}, {0});
  int y = b.output("y", {1, 4}, TensorType::INT8);
  quantize_tensor(b, y, {0.1f}, {0});
  fb::ConcatenationOptionsT options;
  options.axis = 1;
  b.op(BuiltinOperator::CONCATENATION, {x0, x1}, {y}, options);
  EXPECT_NE(prepare_error(b).find("requantizing INT8 'x1'"), std::string::npos) << prepare_error(b);
}

// An op without an integer kernel is refused at prepare, by name, in one line.
TEST(Int8KernelsTest, OpWithoutIntegerKernelIsRefusedByName) {
  OpModelBuilder b;
  int x0 = b.input("x0", {1, 2}, TensorType::INT8);
  quantize_tensor(b, x0, {0.1f}, {0});
  int x1 = b.input("x1", {1, 2}, TensorType::INT8);
  quantize_tensor(b, x1, {0.1f}, {0});
  int y = b.output("y", {1, 2}, TensorType::INT8);
  quantize_tensor(b, y, {0.1f}, {0});
  b.op(BuiltinOperator::MAXIMUM, {x0, x1}, {y});
  const std::string error = prepare_error(b);
  EXPECT_NE(error.find("op 0 (MAXIMUM) has no integer kernel"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("tensor 0 'x0' is INT8"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb::test
