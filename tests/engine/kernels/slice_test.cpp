// SLICE: begin/size per dimension, size -1 to the end, INT64 index tensors,
// run-time begin with constant sizes (the converter's accumulator update),
// out-of-range errors.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

// x[i,j,k] = 100i + 10j + k: a value spells its own index.
Floats indexed_2x3x4() {
  Floats v;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) v.push_back(static_cast<float>(100 * i + 10 * j + k));
    }
  }
  return v;
}

TEST(SliceTest, BeginAndSizePerDimension) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3, 4});
  int begin = b.constant_i32("begin", {3}, {1, 0, 2});
  int size = b.constant_i32("size", {3}, {1, 2, 2});
  int y = b.output("y");
  b.op(BuiltinOperator::SLICE, {x, begin, size}, {y});
  auto out = run(b, {Values::f32({2, 3, 4}, indexed_2x3x4())});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{1, 2, 2}));
  EXPECT_EQ(out[0].floats(), (Floats{102, 103, 112, 113}));
}

TEST(SliceTest, SizeMinusOneRunsToTheEndWithInt64Indices) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3, 4});
  int begin = b.constant_i64("begin", {3}, {0, 1, 3});
  int size = b.constant_i64("size", {3}, {-1, -1, 1});
  int y = b.output("y");
  b.op(BuiltinOperator::SLICE, {x, begin, size}, {y});
  auto out = run(b, {Values::f32({2, 3, 4}, indexed_2x3x4())});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{2, 2, 1}));
  EXPECT_EQ(out[0].floats(), (Floats{13, 23, 113, 123}));
}

TEST(SliceTest, RunTimeBeginWithConstantSizes) {
  // acc[t:t+1, :] with t fed at run time; int32 data.
  OpModelBuilder b;
  int x = b.input("acc", {4, 2}, TensorType::INT32);
  int begin = b.input("begin", {2}, TensorType::INT32);
  int size = b.constant_i32("size", {2}, {1, 2});
  int y = b.output("row", {}, TensorType::INT32);
  b.op(BuiltinOperator::SLICE, {x, begin, size}, {y});
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  runner.set_input(0, Values::i32({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}));
  for (int32_t t = 0; t < 4; ++t) {
    runner.set_input(1, Values::i32({2}, {t, 0}));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    EXPECT_EQ(runner.output(0).shape, (Dims{1, 2}));
    EXPECT_EQ(runner.output(0).ints(), (std::vector<int32_t>{10 * t, 10 * t + 1}));
  }
  runner.set_input(1, Values::i32({2}, {4, 0}));
  EXPECT_FALSE(runner.invoke());
  EXPECT_NE(runner.error().find("begin 4 size 1 is out of range for dimension 0 of 'acc' [4,2]"),
            std::string::npos)
      << runner.error();
}

// The converter's TensorListSetItem lowering: acc' = CONCAT(SLICE(acc, 0, [t,-1]), row,
// SLICE(acc, [t+1,0], -1)) with t from the loop counter. The slices change shape every
// step (bounded-dynamic); the concatenation is back to the accumulator's shape.
TEST(SliceTest, RunTimeSizesGiveBoundedDynamicShapes) {
  OpModelBuilder b;
  int acc = b.input("acc", {4, 2});
  int row = b.input("row", {1, 2});
  int head_size = b.input("head_size", {2}, TensorType::INT32);
  int tail_begin = b.input("tail_begin", {2}, TensorType::INT32);
  int zeros = b.constant_i32("zeros", {2}, {0, 0});
  int to_end = b.constant_i32("to_end", {2}, {-1, -1});
  int head = b.tensor("head");
  int tail = b.tensor("tail");
  int head_copy = b.output("head_copy");
  int next = b.output("next");
  b.op(BuiltinOperator::SLICE, {acc, zeros, head_size}, {head});
  b.op(BuiltinOperator::SLICE, {acc, tail_begin, to_end}, {tail});
  b.op(BuiltinOperator::CAST, {head}, {head_copy});
  b.op(BuiltinOperator::CONCATENATION, {head, row, tail}, {next});
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  const Floats acc_values = {0, 1, 10, 11, 20, 21, 30, 31};
  for (int32_t t = 0; t < 4; ++t) {
    runner.set_input(0, Values::f32({4, 2}, acc_values));  // the planner may reuse inputs
    runner.set_input(1, Values::f32({1, 2}, {-1, -2}));
    runner.set_input(2, Values::i32({2}, {t, -1}));
    runner.set_input(3, Values::i32({2}, {t + 1, 0}));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    EXPECT_EQ(runner.output(0).shape, (Dims{t, 2}));
    EXPECT_EQ(runner.output(0).floats(), Floats(acc_values.begin(), acc_values.begin() + 2 * t));
    Floats expected = acc_values;
    expected[2 * t] = -1;
    expected[2 * t + 1] = -2;
    EXPECT_EQ(runner.output(1).shape, (Dims{4, 2}));
    EXPECT_EQ(runner.output(1).floats(), expected) << "t=" << t;
  }
  runner.set_input(2, Values::i32({2}, {5, -1}));
  EXPECT_FALSE(runner.invoke());
  EXPECT_NE(runner.error().find("begin 0 size 5 is out of range for dimension 0 of 'acc' [4,2]"),
            std::string::npos)
      << runner.error();
}

// A kernel that plans with static shapes is never handed a run-time-shaped tensor.
TEST(SliceTest, RunTimeShapedOutputIsRefusedByStaticKernels) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3});
  int begin = b.constant_i32("begin", {2}, {0, 0});
  int size = b.input("size", {2}, TensorType::INT32);
  int part = b.tensor("part");
  int y = b.output("y");
  b.op(BuiltinOperator::SLICE, {x, begin, size}, {part});
  b.op(BuiltinOperator::SOFTMAX, {part}, {y});
  std::string error = prepare_error(b);
  EXPECT_NE(error.find("(SOFTMAX): input 0 'part' changes shape at run time (up to [2,3])"),
            std::string::npos)
      << error;
}

TEST(SliceTest, RejectsBadRanges) {
  {
    OpModelBuilder b;
    int x = b.input("x", {2, 3});
    int begin = b.constant_i32("begin", {2}, {1, 2});
    int size = b.constant_i32("size", {2}, {1, 2});
    int y = b.output("y");
    b.op(BuiltinOperator::SLICE, {x, begin, size}, {y});
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("begin 2 size 2 is out of range for dimension 1 of 'x' [2,3]"),
              std::string::npos)
        << error;
  }
  {
    OpModelBuilder b;
    int x = b.input("x", {2, 3});
    int begin = b.constant_i32("begin", {1}, {0});
    int size = b.constant_i32("size", {2}, {1, 1});
    int y = b.output("y");
    b.op(BuiltinOperator::SLICE, {x, begin, size}, {y});
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("begin 'begin' has shape [1], expected [2]"), std::string::npos) << error;
  }
}

// Training: the slice's elements get the gradient, the others zero.
TEST(SliceBackward, MatchesFiniteDifferences) {
  OpModelBuilder b;
  int x = b.input("x", {3, 4, 2});
  int begin = b.constant_i32("begin", {3}, {1, 1, 0});
  int size = b.constant_i32("size", {3}, {2, -1, 1});
  int y = b.output("y");
  b.op(BuiltinOperator::SLICE, {x, begin, size}, {y});
  check_input_gradients(b, {random_floats(24, 1.f, 3)}, 6, "SLICE");
}

}  // namespace
}  // namespace gruwb::test
