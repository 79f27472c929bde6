// CONCATENATION: any axis (incl. negative), several inputs of different
// sizes along the axis, fused activation, int32 data, shape mismatches.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

fb::ConcatenationOptionsT concat_options(
    int axis, fb::ActivationFunctionType activation = fb::ActivationFunctionType::NONE) {
  fb::ConcatenationOptionsT options;
  options.axis = axis;
  options.fused_activation_function = activation;
  return options;
}

// The row-major reference: for each outer index, each input's slab in turn.
Floats reference_concat(const std::vector<Floats>& inputs, const std::vector<Dims>& shapes,
                        int axis) {
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shapes[0][d];
  Floats out;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      int64_t slab = 1;
      for (size_t d = axis; d < shapes[i].size(); ++d) slab *= shapes[i][d];
      for (int64_t k = 0; k < slab; ++k) out.push_back(inputs[i][o * slab + k]);
    }
  }
  return out;
}

void expect_concat(const std::vector<Dims>& shapes, int axis, const Dims& expected_shape) {
  OpModelBuilder b;
  std::vector<int32_t> ins;
  std::vector<Floats> data;
  std::vector<Values> values;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ins.push_back(b.input("in" + std::to_string(i), shapes[i]));
    int64_t n = 1;
    for (int32_t d : shapes[i]) n *= d;
    data.push_back(iota_floats(n, 1.f, 100.f * static_cast<float>(i)));
    values.push_back(Values::f32(shapes[i], data.back()));
  }
  int y = b.output("y");
  b.op(BuiltinOperator::CONCATENATION, ins, {y}, concat_options(axis));
  auto out = run(b, values);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, expected_shape);
  int positive = axis < 0 ? axis + static_cast<int>(shapes[0].size()) : axis;
  EXPECT_EQ(out[0].floats(), reference_concat(data, shapes, positive));
}

TEST(ConcatenationTest, AlongEachAxis) {
  expect_concat({{2, 3}, {1, 3}}, 0, {3, 3});
  expect_concat({{2, 3}, {2, 1}, {2, 2}}, 1, {2, 6});
  expect_concat({{2, 2, 3}, {2, 1, 3}}, 1, {2, 3, 3});
}

TEST(ConcatenationTest, NegativeAxisCountsFromTheEnd) {
  expect_concat({{2, 2, 1}, {2, 2, 3}}, -1, {2, 2, 4});
  expect_concat({{1, 2}, {3, 2}}, -2, {4, 2});
}

TEST(ConcatenationTest, FusedRelu6ClampsTheResult) {
  OpModelBuilder b;
  int a = b.input("a", {1, 3});
  int c = b.input("c", {1, 2});
  int y = b.output("y");
  b.op(BuiltinOperator::CONCATENATION, {a, c}, {y},
       concat_options(1, fb::ActivationFunctionType::RELU6));
  auto out = run(b, {Values::f32({1, 3}, {-1, 2.5f, 7}), Values::f32({1, 2}, {6.5f, 0})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].floats(), (Floats{0, 2.5f, 6, 6, 0}));
}

TEST(ConcatenationTest, Int32InputsIncludingAConstant) {
  OpModelBuilder b;
  int a = b.input("a", {2}, TensorType::INT32);
  int c = b.constant_i32("c", {1}, {9});
  int y = b.output("y", {}, TensorType::INT32);
  b.op(BuiltinOperator::CONCATENATION, {a, c}, {y}, concat_options(0));
  auto out = run(b, {Values::i32({2}, {-4, 5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{-4, 5, 9}));
}

TEST(ConcatenationTest, RejectsMismatchedShapesTypesAndAxes) {
  {
    OpModelBuilder b;
    int a = b.input("a", {2, 3});
    int c = b.input("c", {3, 2});
    int y = b.output("y");
    b.op(BuiltinOperator::CONCATENATION, {a, c}, {y}, concat_options(1));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("input 1 'c' [3,2] does not match input 0 'a' [2,3] outside axis 1"),
              std::string::npos)
        << error;
  }
  {
    OpModelBuilder b;
    int a = b.input("a", {2});
    int c = b.input("c", {2}, TensorType::INT32);
    int y = b.output("y");
    b.op(BuiltinOperator::CONCATENATION, {a, c}, {y}, concat_options(0));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("'c' is INT32, expected FLOAT32"), std::string::npos) << error;
  }
  {
    OpModelBuilder b;
    int a = b.input("a", {2});
    int c = b.input("c", {2});
    int y = b.output("y");
    b.op(BuiltinOperator::CONCATENATION, {a, c}, {y}, concat_options(-2));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("axis -2 is out of range for 'a' [2]"), std::string::npos) << error;
  }
}

// Training: each input gets its slab, through a fused RELU.
TEST(ConcatenationBackward, MatchesFiniteDifferences) {
  for (auto act : {fb::ActivationFunctionType::NONE, fb::ActivationFunctionType::TANH}) {
    OpModelBuilder b;
    int a = b.input("a", {2, 1, 3});
    int c = b.input("c", {2, 2, 3});
    int y = b.output("y");
    fb::ConcatenationOptionsT options;
    options.axis = 1;
    options.fused_activation_function = act;
    b.op(BuiltinOperator::CONCATENATION, {a, c}, {y}, options);
    check_input_gradients(b, {random_floats(6, 1.f, 7), random_floats(12, 1.f, 8)}, 18,
                          std::string("CONCATENATION ") + fb::EnumNameActivationFunctionType(act));
  }
}

}  // namespace
}  // namespace gruwb::test
