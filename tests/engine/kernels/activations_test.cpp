// LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, ELU and LEAKY_RELU
// element-wise on values across their ranges (saturated ends included); the
// backward passes by finite differences.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Floats = std::vector<float>;

const Floats kInputs = {-100.f, -8.f, -6.5f, -1.f, -0.25f, 0.f, 0.1f, 1.f, 5.9f, 6.f, 6.5f, 50.f};

TEST(ActivationsTest, EachMatchesItsFormula) {
  const std::pair<BuiltinOperator, std::function<double(double)>> ops[] = {
      {BuiltinOperator::LOGISTIC, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {BuiltinOperator::TANH, [](double x) { return std::tanh(x); }},
      {BuiltinOperator::RELU, [](double x) { return x < 0 ? 0.0 : x; }},
      {BuiltinOperator::RELU6, [](double x) { return x < 0 ? 0.0 : (x > 6 ? 6.0 : x); }},
      {BuiltinOperator::RELU_N1_TO_1, [](double x) { return x < -1 ? -1.0 : (x > 1 ? 1.0 : x); }},
      {BuiltinOperator::RELU_0_TO_1, [](double x) { return x < 0 ? 0.0 : (x > 1 ? 1.0 : x); }},
      {BuiltinOperator::ELU, [](double x) { return x < 0 ? std::exp(x) - 1.0 : x; }},
  };
  for (const auto& [code, f] : ops) {
    OpModelBuilder b;
    int x = b.input("x", {3, 4});
    int y = b.output("y");
    b.op(code, {x}, {y});
    auto out = run(b, {Values::f32({3, 4}, kInputs)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int32_t>{3, 4}));
    Floats expected;
    for (float v : kInputs) expected.push_back(static_cast<float>(f(v)));
    EXPECT_TRUE(floats_near(expected, out[0].floats(), 2e-7f)) << fb::EnumNameBuiltinOperator(code);
  }
}

TEST(ActivationsTest, LeakyReluUsesAlpha) {
  for (float alpha : {0.2f, 0.f, -0.5f}) {
    OpModelBuilder b;
    int x = b.input("x", {3, 4});
    int y = b.output("y");
    fb::LeakyReluOptionsT options;
    options.alpha = alpha;
    b.op(BuiltinOperator::LEAKY_RELU, {x}, {y}, options);
    auto out = run(b, {Values::f32({3, 4}, kInputs)});
    ASSERT_EQ(out.size(), 1u);
    Floats expected;
    for (float v : kInputs) expected.push_back(v > 0.f ? v : v * alpha);
    EXPECT_EQ(out[0].floats(), expected) << alpha;
  }
}

// Inputs away from the kinks, so central differences are exact enough.
TEST(ActivationsBackward, MatchFiniteDifferences) {
  const Floats inputs = {-2.5f, -1.3f, -0.6f, -0.2f, 0.3f, 0.7f, 1.4f, 6.6f};
  for (BuiltinOperator code : {BuiltinOperator::RELU_N1_TO_1, BuiltinOperator::RELU_0_TO_1,
                               BuiltinOperator::ELU, BuiltinOperator::LEAKY_RELU}) {
    OpModelBuilder b;
    int x = b.input("x", {8});
    int y = b.output("y");
    if (code == BuiltinOperator::LEAKY_RELU) {
      fb::LeakyReluOptionsT options;
      options.alpha = 0.3f;
      b.op(code, {x}, {y}, options);
    } else {
      b.op(code, {x}, {y});
    }
    check_input_gradients(b, {inputs}, 8, fb::EnumNameBuiltinOperator(code));
  }
}

TEST(ActivationsTest, RejectsNonFloatInput) {
  OpModelBuilder b;
  int x = b.input("x", {2}, TensorType::INT32);
  int y = b.output("y", {}, TensorType::INT32);
  b.op(BuiltinOperator::TANH, {x}, {y});
  EXPECT_NE(prepare_error(b).find("input 'x' is INT32, expected FLOAT32"), std::string::npos)
      << prepare_error(b);
}

}  // namespace
}  // namespace gruwb::test
