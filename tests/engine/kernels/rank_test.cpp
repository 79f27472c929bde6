// RANK of tensors of rank 0..4, known at prepare (a constant), and feeding
// RANGE(0, RANK(x), 1) as the converter's reduction axes do.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

TEST(RankTest, RankOfEachShape) {
  for (const std::vector<int32_t>& shape :
       {std::vector<int32_t>{}, {5}, {2, 3}, {1, 2, 3}, {2, 1, 1, 2}}) {
    OpModelBuilder m;
    int x = m.input("x", shape);
    int r = m.output("r", {}, TensorType::INT32);
    m.op(BuiltinOperator::RANK, {x}, {r});
    OpRunner runner(m);
    ASSERT_TRUE(runner.ok()) << runner.error();
    EXPECT_EQ(runner.interpreter().output(0)->kind, TensorKind::kConstant);
    Values before = runner.output(0);
    EXPECT_EQ(before.shape, (std::vector<int32_t>{}));
    EXPECT_EQ(before.ints(), (std::vector<int32_t>{static_cast<int32_t>(shape.size())}));
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    runner.set_input(0, Values::f32(shape, iota_floats(n)));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    EXPECT_EQ(runner.output(0).ints(), before.ints());
  }
}

TEST(RankTest, FeedsRangeOfAxes) {
  OpModelBuilder m;
  int x = m.input("x", {2, 3, 4});
  int rank = m.tensor("rank", {}, TensorType::INT32);
  m.op(BuiltinOperator::RANK, {x}, {rank});
  int zero = m.constant_i32("zero", {}, {0});
  int one = m.constant_i32("one", {}, {1});
  int axes = m.output("axes", {}, TensorType::INT32);
  m.op(BuiltinOperator::RANGE, {zero, rank, one}, {axes});
  OpRunner runner(m);
  ASSERT_TRUE(runner.ok()) << runner.error();
  EXPECT_EQ(runner.interpreter().output(0)->kind, TensorKind::kConstant);
  EXPECT_EQ(runner.output(0).ints(), (std::vector<int32_t>{0, 1, 2}));
}

}  // namespace
}  // namespace gruwb::test
