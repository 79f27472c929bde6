// FILL: constant dims (INT32/INT64), float/int32/bool values, scalar output,
// run-time dims rejected, bad sizes.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;

TEST(FillTest, FloatValueFromARunTimeInput) {
  OpModelBuilder b;
  int dims = b.constant_i32("dims", {3}, {2, 1, 3});
  int value = b.input("value", {});
  int y = b.output("y");
  b.op(BuiltinOperator::FILL, {dims, value}, {y});
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  for (float v : {1.f, -2.5f}) {
    runner.set_input(0, Values::f32({}, {v}));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    Values out = runner.output(0);
    EXPECT_EQ(out.shape, (Dims{2, 1, 3}));
    EXPECT_EQ(out.floats(), std::vector<float>(6, v));
  }
}

TEST(FillTest, Int32ValueWithInt64Dims) {
  OpModelBuilder b;
  int dims = b.constant_i64("dims", {2}, {2, 2});
  int value = b.input("value", {}, TensorType::INT32);
  int y = b.output("y", {}, TensorType::INT32);
  b.op(BuiltinOperator::FILL, {dims, value}, {y});
  auto out = run(b, {Values::i32({}, {-7})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, TensorType::INT32);
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{-7, -7, -7, -7}));
}

TEST(FillTest, BoolValueAndScalarOutput) {
  OpModelBuilder b;
  int dims = b.constant_i32("dims", {0}, {});
  int value = b.input("value", {}, TensorType::BOOL);
  int y = b.output("y", {}, TensorType::BOOL);
  b.op(BuiltinOperator::FILL, {dims, value}, {y});
  auto out = run(b, {Values::boolean({}, {true})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{}));
  EXPECT_EQ(out[0].bools(), (std::vector<bool>{true}));
}

TEST(FillTest, RejectsRunTimeDimsNegativeSizesAndVectorValues) {
  {
    OpModelBuilder b;
    int dims = b.input("dims", {2}, TensorType::INT32);
    int value = b.constant("value", {}, {0.f});
    int y = b.output("y");
    b.op(BuiltinOperator::FILL, {dims, value}, {y});
    EXPECT_NE(prepare_error(b).find("dims 'dims' is computed at run time"), std::string::npos)
        << prepare_error(b);
  }
  {
    OpModelBuilder b;
    int dims = b.constant_i32("dims", {2}, {2, -1});
    int value = b.constant("value", {}, {0.f});
    int y = b.output("y");
    b.op(BuiltinOperator::FILL, {dims, value}, {y});
    EXPECT_NE(prepare_error(b).find("dims 'dims' holds a bad size -1 at 1"), std::string::npos)
        << prepare_error(b);
  }
  {
    OpModelBuilder b;
    int dims = b.constant_i32("dims", {1}, {2});
    int value = b.input("value", {2});
    int y = b.output("y");
    b.op(BuiltinOperator::FILL, {dims, value}, {y});
    EXPECT_NE(prepare_error(b).find("value 'value' has shape [2], expected a scalar"),
              std::string::npos)
        << prepare_error(b);
  }
}

}  // namespace
}  // namespace gruwb::test
