// SPLIT (axis is input 0, a constant) and SPLIT_V (size_splits with one -1):
// every output's shape and values, negative axes, errors.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

// The part [from, from+size) of axis 1 of a [rows, cols] iota matrix.
Floats columns(int rows, int cols, int from, int size) {
  Floats out;
  for (int r = 0; r < rows; ++r) {
    for (int c = from; c < from + size; ++c) out.push_back(static_cast<float>(r * cols + c));
  }
  return out;
}

fb::SplitOptionsT split_options(int n) {
  fb::SplitOptionsT o;
  o.num_splits = n;
  return o;
}

fb::SplitVOptionsT split_v_options(int n) {
  fb::SplitVOptionsT o;
  o.num_splits = n;
  return o;
}

TEST(SplitTest, ThreeGatesAlongTheLastAxis) {
  // The GRU cell's SPLIT(3) of [1, 3H] pre-activations, H = 2, batch 2.
  OpModelBuilder b;
  int axis = b.constant_i32("axis", {}, {1});
  int x = b.input("x", {2, 6});
  int z = b.output("z"), r = b.output("r"), h = b.output("h");
  b.op(BuiltinOperator::SPLIT, {axis, x}, {z, r, h}, split_options(3));
  auto out = run(b, {Values::f32({2, 6}, iota_floats(12))});
  ASSERT_EQ(out.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].shape, (Dims{2, 2}));
    EXPECT_EQ(out[i].floats(), columns(2, 6, 2 * i, 2)) << "part " << i;
  }
}

TEST(SplitTest, NegativeAxisAndAxisZero) {
  OpModelBuilder b;
  int axis = b.constant_i32("axis", {1}, {-2});
  int x = b.input("x", {4, 3});
  int p0 = b.output("p0"), p1 = b.output("p1");
  b.op(BuiltinOperator::SPLIT, {axis, x}, {p0, p1}, split_options(2));
  auto out = run(b, {Values::f32({4, 3}, iota_floats(12))});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, (Dims{2, 3}));
  EXPECT_EQ(out[0].floats(), iota_floats(6));
  EXPECT_EQ(out[1].floats(), iota_floats(6, 1.f, 6.f));
}

TEST(SplitTest, RejectsUnevenSplitsAndRunTimeAxis) {
  {
    OpModelBuilder b;
    int axis = b.constant_i32("axis", {}, {1});
    int x = b.input("x", {2, 5});
    int p0 = b.output("p0"), p1 = b.output("p1");
    b.op(BuiltinOperator::SPLIT, {axis, x}, {p0, p1}, split_options(2));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("dimension 1 of 'x' [2,5] does not split into 2 equal parts"),
              std::string::npos)
        << error;
  }
  {
    OpModelBuilder b;
    int axis = b.input("axis", {}, TensorType::INT32);
    int x = b.input("x", {2, 4});
    int p0 = b.output("p0"), p1 = b.output("p1");
    b.op(BuiltinOperator::SPLIT, {axis, x}, {p0, p1}, split_options(2));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("axis 'axis' is computed at run time"), std::string::npos) << error;
  }
  {
    OpModelBuilder b;
    int axis = b.constant_i32("axis", {}, {0});
    int x = b.input("x", {2, 4});
    int p0 = b.output("p0"), p1 = b.output("p1");
    b.op(BuiltinOperator::SPLIT, {axis, x}, {p0, p1}, split_options(3));
    EXPECT_NE(prepare_error(b).find("num_splits 3 but 2 outputs"), std::string::npos)
        << prepare_error(b);
  }
}

TEST(SplitVTest, SizesWithOneMinusOne) {
  OpModelBuilder b;
  int x = b.input("x", {2, 7});
  int sizes = b.constant_i32("size_splits", {3}, {2, -1, 1});
  int axis = b.constant_i32("axis", {}, {-1});
  int p0 = b.output("p0"), p1 = b.output("p1"), p2 = b.output("p2");
  b.op(BuiltinOperator::SPLIT_V, {x, sizes, axis}, {p0, p1, p2}, split_v_options(3));
  auto out = run(b, {Values::f32({2, 7}, iota_floats(14))});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape, (Dims{2, 2}));
  EXPECT_EQ(out[1].shape, (Dims{2, 4}));
  EXPECT_EQ(out[2].shape, (Dims{2, 1}));
  EXPECT_EQ(out[0].floats(), columns(2, 7, 0, 2));
  EXPECT_EQ(out[1].floats(), columns(2, 7, 2, 4));
  EXPECT_EQ(out[2].floats(), columns(2, 7, 6, 1));
}

TEST(SplitVTest, Int64SizesAlongAxisZeroWithInt32Data) {
  OpModelBuilder b;
  int x = b.input("x", {3, 2}, TensorType::INT32);
  int sizes = b.constant_i64("size_splits", {2}, {1, 2});
  int axis = b.constant_i32("axis", {}, {0});
  int p0 = b.output("p0", {}, TensorType::INT32), p1 = b.output("p1", {}, TensorType::INT32);
  b.op(BuiltinOperator::SPLIT_V, {x, sizes, axis}, {p0, p1}, split_v_options(2));
  auto out = run(b, {Values::i32({3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(out[1].shape, (Dims{2, 2}));
  EXPECT_EQ(out[1].ints(), (std::vector<int32_t>{3, 4, 5, 6}));
}

TEST(SplitVTest, RejectsSizesThatDoNotAddUp) {
  for (auto sizes_values :
       {std::vector<int32_t>{2, 2}, std::vector<int32_t>{-1, 6}, std::vector<int32_t>{-1, -1}}) {
    OpModelBuilder b;
    int x = b.input("x", {5});
    int sizes = b.constant_i32("size_splits", {2}, sizes_values);
    int axis = b.constant_i32("axis", {}, {0});
    int p0 = b.output("p0"), p1 = b.output("p1");
    b.op(BuiltinOperator::SPLIT_V, {x, sizes, axis}, {p0, p1}, split_v_options(2));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("size_splits 'size_splits'"), std::string::npos) << error;
  }
}

// Training: the parts are combined (p0 * p1 + p2) so every output carries a
// gradient back into its slab.
TEST(SplitBackward, SplitAndSplitVMatchFiniteDifferences) {
  for (bool v : {false, true}) {
    OpModelBuilder b;
    int x = b.input("x", {2, 6});
    int axis = b.constant_i32("axis", {}, {1});
    int p0 = b.tensor("p0"), p1 = b.tensor("p1"), p2 = b.tensor("p2");
    if (v) {
      int sizes = b.constant_i32("sizes", {3}, {2, 2, -1});
      fb::SplitVOptionsT options;
      options.num_splits = 3;
      b.op(BuiltinOperator::SPLIT_V, {x, sizes, axis}, {p0, p1, p2}, options);
    } else {
      fb::SplitOptionsT options;
      options.num_splits = 3;
      b.op(BuiltinOperator::SPLIT, {axis, x}, {p0, p1, p2}, options);
    }
    int m = b.tensor("m");
    int y = b.output("y");
    b.op(BuiltinOperator::MUL, {p0, p1}, {m});
    b.op(BuiltinOperator::ADD, {m, p2}, {y});
    check_input_gradients(b, {random_floats(12, 1.f, 9)}, 4, v ? "SPLIT_V" : "SPLIT");
  }
}

}  // namespace
}  // namespace gruwb::test
