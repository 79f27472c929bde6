// SVDF, float32 and full-integer, on hand-made models over several invokes (the state is a
// variable tensor that keeps each filter's memory), values worked out by hand from TFLite's
// definition. Real TFLite on TFLite Micro's keyword model: golden_models_test; on one-kernel
// models: tests/fixtures/int8/*svdf*.

#include <gtest/gtest.h>

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

Values i16(std::vector<int32_t> shape, const std::vector<int16_t>& values) {
  Values v;
  v.type = TensorType::INT16;
  v.shape = std::move(shape);
  v.bytes.resize(values.size() * sizeof(int16_t));
  std::memcpy(v.bytes.data(), values.data(), v.bytes.size());
  return v;
}

std::vector<int32_t> int8s(const Values& v) {
  std::vector<int32_t> out;
  for (uint8_t byte : v.bytes) out.push_back(static_cast<int8_t>(byte));
  return out;
}

// Input 2, two filters of rank 2 (one unit), memory 2: the feature weights pick one input
// each; weights_time [[1, 2], [3, 4]] weigh (older, newer).
TEST(SvdfTest, FloatKeepsEachFiltersMemoryAcrossInvokes) {
  OpModelBuilder b;
  int x = b.input("x", {1, 2});
  int wf = b.constant("weights_feature", {2, 2}, {1.f, 0.f, 0.f, 1.f});
  int wt = b.constant("weights_time", {2, 2}, {1.f, 2.f, 3.f, 4.f});
  int bias = b.constant("bias", {1}, {0.5f});
  int state = b.variable("state", {1, 4});
  int y = b.output("y", {1, 1});
  fb::SVDFOptionsT options;
  options.rank = 2;
  options.fused_activation_function = fb::ActivationFunctionType::RELU;
  b.op(BuiltinOperator::SVDF, {x, wf, wt, bias, state}, {y}, options);
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  // 1: memories (0, 1), (0, 2): 2 + 8 + 0.5. 2: (1, 3), (2, -1): 7 + 2 + 0.5.
  // 3: (3, -5), (-1, -5): -7 - 23 + 0.5 < 0, RELU gives 0.
  const float inputs[3][2] = {{1.f, 2.f}, {3.f, -1.f}, {-5.f, -5.f}};
  const float expected[3] = {10.5f, 9.5f, 0.f};
  for (int step = 0; step < 3; ++step) {
    runner.set_input(0, Values::f32({1, 2}, {inputs[step][0], inputs[step][1]}));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    EXPECT_EQ(runner.output(0).floats(), (std::vector<float>{expected[step]})) << "step " << step;
  }
}

// Scales: input 0.5 (zero point 1) x weights_feature 0.25 / state 0.125 = 1, so the memory
// holds the integer feature sums; state 0.125 x weights_time 0.5 / output 0.25 (zero point -3)
// = 0.25 (multiplier 2^30, shift -1).
TEST(SvdfTest, Int8RescalesTheFeaturesToTheStateAndTheSumsToTheOutput) {
  OpModelBuilder b;
  int x = b.input("x", {1, 2}, TensorType::INT8);
  quantize_tensor(b, x, 0.5f, 1);
  int wf = b.constant_int8("weights_feature", {2, 2}, {2, 0, 1, -1}, {0.25f});
  int wt = b.constant("weights_time", i16({2, 2}, {1, 2, 3, -1}));
  quantize_tensor(b, wt, 0.5f, 0);
  int bias = b.constant_i32("bias", {2}, {4, 0});
  quantize_tensor(b, bias, 0.0625f, 0);
  int state = b.variable("state", {1, 4}, TensorType::INT16);
  quantize_tensor(b, state, 0.125f, 0);
  int y = b.output("y", {1, 2}, TensorType::INT8);
  quantize_tensor(b, y, 0.25f, -3);
  fb::SVDFOptionsT options;
  options.rank = 1;
  b.op(BuiltinOperator::SVDF, {x, wf, wt, bias, state}, {y}, options);
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  // 1: x - zp = (4, 2): features 8 and 2, memories (0, 8), (0, 2): sums 16 + 4 bias and -2;
  //    x 0.25 = 5 -> 2 and -0.5 -> -1 -> -4 (half away from zero).
  // 2: x - zp = (0, 100): features 0 and -100, memories (8, 0), (2, -100): sums 8 + 4 and
  //    6 + 100; 3 -> 0 and 26.5 -> 27 -> 24.
  runner.set_input(0, Values::i8({1, 2}, {5, 3}));
  ASSERT_TRUE(runner.invoke()) << runner.error();
  EXPECT_EQ(int8s(runner.output(0)), (std::vector<int32_t>{2, -4}));
  runner.set_input(0, Values::i8({1, 2}, {1, 101}));
  ASSERT_TRUE(runner.invoke()) << runner.error();
  EXPECT_EQ(int8s(runner.output(0)), (std::vector<int32_t>{0, 24}));
}

TEST(SvdfTest, RankThatDoesNotDivideTheFiltersIsRefused) {
  OpModelBuilder b;
  int x = b.input("x", {1, 2});
  int wf = b.constant("weights_feature", {3, 2}, std::vector<float>(6, 1.f));
  int wt = b.constant("weights_time", {3, 2}, std::vector<float>(6, 1.f));
  int state = b.variable("state", {1, 6});
  int y = b.output("y");
  fb::SVDFOptionsT options;
  options.rank = 2;
  b.op(BuiltinOperator::SVDF, {x, wf, wt, -1, state}, {y}, options);
  EXPECT_NE(prepare_error(b).find("rank 2 does not divide the 3 filters"), std::string::npos)
      << prepare_error(b);
}

}  // namespace
}  // namespace gruwb::test
