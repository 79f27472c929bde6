// TILE: each dimension repeated, int32 data folded, multiples errors;
// backward (sums over the copies) by finite differences.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

TEST(TileTest, RepeatsEachDimension) {
  OpModelBuilder m;
  int x = m.input("x", {2, 3});
  int mult = m.constant_i32("multiples", {2}, {2, 2});
  int y = m.output("y");
  m.op(BuiltinOperator::TILE, {x, mult}, {y});
  auto out = run(m, {Values::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{4, 6}));
  EXPECT_EQ(out[0].floats(),
            (Floats{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
}

TEST(TileTest, ThreeDimensionsWithOnes) {
  OpModelBuilder m;
  int x = m.input("x", {1, 2, 1});
  int mult = m.constant_i64("multiples", {3}, {3, 1, 2});
  int y = m.output("y");
  m.op(BuiltinOperator::TILE, {x, mult}, {y});
  auto out = run(m, {Values::f32({1, 2, 1}, {7, 8})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{3, 2, 2}));
  EXPECT_EQ(out[0].floats(), (Floats{7, 7, 8, 8, 7, 7, 8, 8, 7, 7, 8, 8}));
}

TEST(TileTest, ConstantInt32IsFolded) {
  OpModelBuilder m;
  int x = m.constant_i32("x", {2}, {4, 5});
  int mult = m.constant_i32("multiples", {1}, {3});
  int y = m.output("y", {}, TensorType::INT32);
  m.op(BuiltinOperator::TILE, {x, mult}, {y});
  OpRunner runner(m);
  ASSERT_TRUE(runner.ok()) << runner.error();
  EXPECT_EQ(runner.interpreter().output(0)->kind, TensorKind::kConstant);
  EXPECT_EQ(runner.output(0).ints(), (std::vector<int32_t>{4, 5, 4, 5, 4, 5}));
}

TEST(TileTest, RejectsMultiplesOfTheWrongLength) {
  OpModelBuilder m;
  int x = m.input("x", {2, 3});
  int mult = m.constant_i32("multiples", {1}, {2});
  int y = m.output("y");
  m.op(BuiltinOperator::TILE, {x, mult}, {y});
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("expected one value per dimension of 'x' [2,3]"), std::string::npos)
      << error;
}

TEST(TileBackward, MatchesFiniteDifferences) {
  OpModelBuilder b;
  int x = b.input("x", {2, 2});
  int mult = b.constant_i32("multiples", {2}, {2, 3});
  int t = b.tensor("t");
  b.op(BuiltinOperator::TILE, {x, mult}, {t});
  int w = b.constant("w", {4, 6}, iota_floats(24, 0.25f, -2.f));
  int y = b.output("y");
  b.op(BuiltinOperator::MUL, {t, w}, {y}, fb::MulOptionsT());
  check_input_gradients(b, {random_floats(4, 1.f, 8)}, 24, "TILE");
}

}  // namespace
}  // namespace gruwb::test
