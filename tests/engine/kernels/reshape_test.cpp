// RESHAPE (shape tensor with -1, options-only new_shape), EXPAND_DIMS
// (negative axis), SQUEEZE (all ones or listed dims): shapes change, data
// does not; bad requests are named.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;

Values reshape_with_tensor(const Dims& in_shape, const Dims& new_shape) {
  int64_t n = 1;
  for (int32_t d : in_shape) n *= d;
  OpModelBuilder b;
  int x = b.input("x", in_shape);
  int s = b.constant_i32("shape", {static_cast<int32_t>(new_shape.size())}, new_shape);
  int y = b.output("y");
  b.op(BuiltinOperator::RESHAPE, {x, s}, {y});
  auto out = run(b, {Values::f32(in_shape, iota_floats(n))});
  return out.empty() ? Values{} : out[0];
}

TEST(ReshapeTest, MinusOneTakesTheRest) {
  Values y = reshape_with_tensor({2, 3, 4}, {-1, 4});
  EXPECT_EQ(y.shape, (Dims{6, 4}));
  EXPECT_EQ(y.floats(), iota_floats(24));
  y = reshape_with_tensor({1, 60}, {1, -1, 3});
  EXPECT_EQ(y.shape, (Dims{1, 20, 3}));
  y = reshape_with_tensor({2, 3}, {6});
  EXPECT_EQ(y.shape, (Dims{6}));
}

TEST(ReshapeTest, NewShapeFromOptionsWhenThereIsNoShapeTensor) {
  OpModelBuilder b;
  int x = b.input("x", {4, 3});
  int y = b.output("y");
  fb::ReshapeOptionsT options;
  options.new_shape = {3, -1};
  b.op(BuiltinOperator::RESHAPE, {x}, {y}, options);
  auto out = run(b, {Values::f32({4, 3}, iota_floats(12))});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{3, 4}));
  EXPECT_EQ(out[0].floats(), iota_floats(12));
}

TEST(ReshapeTest, Int32Data) {
  OpModelBuilder b;
  int x = b.input("x", {2, 2}, TensorType::INT32);
  int s = b.constant_i32("shape", {1}, {-1});
  int y = b.output("y", {}, TensorType::INT32);
  b.op(BuiltinOperator::RESHAPE, {x, s}, {y});
  auto out = run(b, {Values::i32({2, 2}, {5, 6, 7, 8})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{4}));
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{5, 6, 7, 8}));
}

TEST(ReshapeTest, RejectsTwoUnknownsAndWrongCounts) {
  for (const Dims& bad : {Dims{-1, -1}, Dims{5, 5}}) {
    OpModelBuilder b;
    int x = b.input("x", {2, 3});
    int s = b.constant_i32("shape", {2}, bad);
    int y = b.output("y");
    b.op(BuiltinOperator::RESHAPE, {x, s}, {y});
    EXPECT_FALSE(prepare_error(b).empty());
  }
  OpModelBuilder b;
  int x = b.input("x", {2, 3});
  int s = b.constant_i32("shape", {2}, {4, 2});
  int y = b.output("y");
  b.op(BuiltinOperator::RESHAPE, {x, s}, {y});
  EXPECT_NE(prepare_error(b).find("cannot reshape 'x' [2,3] to [4,2]"), std::string::npos)
      << prepare_error(b);
}

Values expand_dims(const Dims& in_shape, int32_t axis) {
  int64_t n = 1;
  for (int32_t d : in_shape) n *= d;
  OpModelBuilder b;
  int x = b.input("x", in_shape);
  int a = b.constant_i32("axis", {}, {axis});
  int y = b.output("y");
  b.op(BuiltinOperator::EXPAND_DIMS, {x, a}, {y});
  auto out = run(b, {Values::f32(in_shape, iota_floats(n))});
  return out.empty() ? Values{} : out[0];
}

TEST(ExpandDimsTest, PositiveAndNegativeAxes) {
  EXPECT_EQ(expand_dims({2, 3}, 0).shape, (Dims{1, 2, 3}));
  EXPECT_EQ(expand_dims({2, 3}, 1).shape, (Dims{2, 1, 3}));
  EXPECT_EQ(expand_dims({2, 3}, 2).shape, (Dims{2, 3, 1}));
  EXPECT_EQ(expand_dims({2, 3}, -1).shape, (Dims{2, 3, 1}));
  EXPECT_EQ(expand_dims({2, 3}, -3).shape, (Dims{1, 2, 3}));
  EXPECT_EQ(expand_dims({2, 3}, 1).floats(), iota_floats(6));
}

TEST(ExpandDimsTest, RejectsOutOfRangeAxis) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3});
  int a = b.constant_i32("axis", {}, {3});
  int y = b.output("y");
  b.op(BuiltinOperator::EXPAND_DIMS, {x, a}, {y});
  EXPECT_NE(prepare_error(b).find("axis 3 out of range for rank 2"), std::string::npos)
      << prepare_error(b);
}

Values squeeze(const Dims& in_shape, const Dims& dims) {
  int64_t n = 1;
  for (int32_t d : in_shape) n *= d;
  OpModelBuilder b;
  int x = b.input("x", in_shape);
  int y = b.output("y");
  fb::SqueezeOptionsT options;
  options.squeeze_dims = dims;
  b.op(BuiltinOperator::SQUEEZE, {x}, {y}, options);
  auto out = run(b, {Values::f32(in_shape, iota_floats(n))});
  return out.empty() ? Values{} : out[0];
}

TEST(SqueezeTest, AllOnesOrListedDims) {
  EXPECT_EQ(squeeze({1, 3, 1, 2}, {}).shape, (Dims{3, 2}));
  EXPECT_EQ(squeeze({1, 3, 1, 2}, {2}).shape, (Dims{1, 3, 2}));
  EXPECT_EQ(squeeze({1, 3, 1, 2}, {-4}).shape, (Dims{3, 1, 2}));
  EXPECT_EQ(squeeze({1, 1}, {}).shape, (Dims{}));
  EXPECT_EQ(squeeze({1, 3, 1, 2}, {0, 2}).floats(), iota_floats(6));
}

TEST(SqueezeTest, RejectsDimensionsThatAreNotOne) {
  OpModelBuilder b;
  int x = b.input("x", {1, 3});
  int y = b.output("y");
  fb::SqueezeOptionsT options;
  options.squeeze_dims = {1};
  b.op(BuiltinOperator::SQUEEZE, {x}, {y}, options);
  EXPECT_NE(prepare_error(b).find("cannot squeeze dimension 1"), std::string::npos)
      << prepare_error(b);
}

}  // namespace
}  // namespace gruwb::test
