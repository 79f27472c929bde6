// STRIDED_SLICE: every mask (begin, end, ellipsis, new_axis, shrink_axis),
// the offset flag, negative indices and strides, fewer specs than dims,
// INT64 index tensors, run-time begin with shrunk axes, and the errors.
// Inputs hold their own flat index (iota), so an expected value is the
// NumPy index it came from, written out by hand.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

struct Masks {
  int begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
  bool offset = false;

  static Masks of(int begin, int end = 0, int ellipsis = 0, int new_axis = 0, int shrink = 0,
                  bool offset = false) {
    return Masks{begin, end, ellipsis, new_axis, shrink, offset};
  }
};

fb::StridedSliceOptionsT options_for(const Masks& m) {
  fb::StridedSliceOptionsT o;
  o.begin_mask = m.begin;
  o.end_mask = m.end;
  o.ellipsis_mask = m.ellipsis;
  o.new_axis_mask = m.new_axis;
  o.shrink_axis_mask = m.shrink;
  o.offset = m.offset;
  return o;
}

// Runs x[spec] on an iota input of `shape`; begin/end/strides constant.
Values slice(const std::vector<int32_t>& shape, const std::vector<int32_t>& begin,
             const std::vector<int32_t>& end, const std::vector<int32_t>& strides,
             const Masks& masks = {}) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  const int32_t specs = static_cast<int32_t>(begin.size());
  OpModelBuilder b;
  int x = b.input("x", shape);
  int bt = b.constant_i32("begin", {specs}, begin);
  int et = b.constant_i32("end", {specs}, end);
  int st = b.constant_i32("strides", {specs}, strides);
  int y = b.output("y");
  b.op(BuiltinOperator::STRIDED_SLICE, {x, bt, et, st}, {y}, options_for(masks));
  auto out = run(b, {Values::f32(shape, iota_floats(n))});
  return out.empty() ? Values{} : out[0];
}

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

TEST(StridedSliceTest, BasicRangeWithStride) {
  Values y = slice({3, 4}, {1, 0}, {3, 4}, {1, 2});  // x[1:3, 0:4:2]
  EXPECT_EQ(y.shape, (Dims{2, 2}));
  EXPECT_EQ(y.floats(), (Floats{4, 6, 8, 10}));
}

TEST(StridedSliceTest, NegativeIndicesAndNegativeStrides) {
  Values y = slice({5}, {-1}, {0}, {-1});  // x[-1:0:-1]
  EXPECT_EQ(y.shape, (Dims{4}));
  EXPECT_EQ(y.floats(), (Floats{4, 3, 2, 1}));
  y = slice({5}, {0}, {0}, {-2}, Masks::of(1, 1));  // x[::-2]
  EXPECT_EQ(y.floats(), (Floats{4, 2, 0}));
  y = slice({3, 4}, {0, -2}, {3, -5}, {2, -1});  // x[0:3:2, -2:-5:-1]
  EXPECT_EQ(y.shape, (Dims{2, 3}));
  EXPECT_EQ(y.floats(), (Floats{2, 1, 0, 10, 9, 8}));
}

TEST(StridedSliceTest, OutOfRangeBoundsAreClampedAndEmptyRangesGiveZeroSize) {
  Values y = slice({5}, {-100}, {100}, {1});  // x[-100:100]
  EXPECT_EQ(y.floats(), (Floats{0, 1, 2, 3, 4}));
  y = slice({5}, {3}, {1}, {1});  // x[3:1]
  EXPECT_EQ(y.shape, (Dims{0}));
  EXPECT_TRUE(y.floats().empty());
}

TEST(StridedSliceTest, BeginAndEndMasksIgnoreTheirValues) {
  // x[:2, 1:] written as begin [9,1] end [2,-9] with begin_mask bit 0, end_mask bit 1.
  Values y = slice({3, 4}, {9, 1}, {2, -9}, {1, 1}, Masks::of(1, 2));
  EXPECT_EQ(y.shape, (Dims{2, 3}));
  EXPECT_EQ(y.floats(), (Floats{1, 2, 3, 5, 6, 7}));
}

TEST(StridedSliceTest, ShrinkAxisDropsTheDimension) {
  Values y = slice({3, 4}, {1, 0}, {2, 4}, {1, 1}, Masks::of(0, 0, 0, 0, 1));  // x[1, 0:4]
  EXPECT_EQ(y.shape, (Dims{4}));
  EXPECT_EQ(y.floats(), (Floats{4, 5, 6, 7}));
  y = slice({3, 4}, {-1, -1}, {0, 0}, {1, 1}, Masks::of(0, 0, 0, 0, 3));  // x[-1, -1]: a scalar
  EXPECT_EQ(y.shape, (Dims{}));
  EXPECT_EQ(y.floats(), (Floats{11}));
}

TEST(StridedSliceTest, LastTimeStepAsTheConverterWritesIt) {
  // x[:, -1, :] on [B=2, T=3, F=2].
  Values y = slice({2, 3, 2}, {0, -1, 0}, {0, 0, 0}, {1, 1, 1}, Masks::of(5, 5, 0, 0, 2));
  EXPECT_EQ(y.shape, (Dims{2, 2}));
  EXPECT_EQ(y.floats(), (Floats{4, 5, 10, 11}));
}

TEST(StridedSliceTest, FewerSpecsThanDimsTakeTheRestWhole) {
  Values y = slice({3, 4}, {1}, {2}, {1});  // x[1:2]
  EXPECT_EQ(y.shape, (Dims{1, 4}));
  EXPECT_EQ(y.floats(), (Floats{4, 5, 6, 7}));
}

TEST(StridedSliceTest, EllipsisExpandsToTheMissingDims) {
  // x[..., 1:3] on [2,3,4]: shape [2,3,2], x[i,j,k] = 12i + 4j + k.
  Values y = slice({2, 3, 4}, {0, 1}, {0, 3}, {1, 1}, Masks::of(0, 0, 1));
  EXPECT_EQ(y.shape, (Dims{2, 3, 2}));
  Floats expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 1; k < 3; ++k) expected.push_back(static_cast<float>(12 * i + 4 * j + k));
    }
  }
  EXPECT_EQ(y.floats(), expected);
  // x[1, ..., 2]: shrink on both ends, the ellipsis in the middle.
  y = slice({2, 3, 4}, {1, 0, 2}, {2, 0, 3}, {1, 1, 1}, Masks::of(0, 0, 2, 0, 5));
  EXPECT_EQ(y.shape, (Dims{3}));
  EXPECT_EQ(y.floats(), (Floats{14, 18, 22}));
  // An ellipsis covering nothing: x[0:2, ..., 0:3:2, 2] on [2,3,4] has 3 real specs.
  y = slice({2, 3, 4}, {0, 0, 0, 2}, {2, 0, 3, 3}, {1, 1, 2, 1}, Masks::of(0, 0, 2, 0, 8));
  EXPECT_EQ(y.shape, (Dims{2, 2}));
  EXPECT_EQ(y.floats(), (Floats{2, 10, 14, 22}));
}

TEST(StridedSliceTest, NewAxisInsertsADimensionOfOne) {
  // x[:, newaxis, 1] on [3,4].
  Values y = slice({3, 4}, {0, 0, 1}, {0, 0, 2}, {1, 1, 1}, Masks::of(1, 1, 0, 2, 4));
  EXPECT_EQ(y.shape, (Dims{3, 1}));
  EXPECT_EQ(y.floats(), (Floats{1, 5, 9}));
  // x[newaxis, ...]
  y = slice({3, 4}, {0, 0}, {0, 0}, {1, 1}, Masks::of(0, 0, 2, 1));
  EXPECT_EQ(y.shape, (Dims{1, 3, 4}));
  EXPECT_EQ(y.floats(), iota_floats(12));
  // x[..., newaxis]: new axis after an ellipsis that takes every dim.
  y = slice({2, 2}, {0, 0}, {0, 0}, {1, 1}, Masks::of(0, 0, 1, 2));
  EXPECT_EQ(y.shape, (Dims{2, 2, 1}));
  // Ellipsis and new_axis on the same spec: the ellipsis wins.
  y = slice({2, 2}, {0}, {0}, {1}, Masks::of(0, 0, 1, 1));
  EXPECT_EQ(y.shape, (Dims{2, 2}));
}

TEST(StridedSliceTest, OffsetMakesEndRelativeToBegin) {
  Values y =
      slice({3, 4}, {1, 1}, {2, 2}, {1, 1}, Masks::of(0, 0, 0, 0, 0, true));  // x[1:1+2, 1:1+2]
  EXPECT_EQ(y.shape, (Dims{2, 2}));
  EXPECT_EQ(y.floats(), (Floats{5, 6, 9, 10}));
  y = slice({5}, {-2}, {5}, {1},
            Masks::of(0, 0, 0, 0, 0, true));  // begin -2 -> 3, end 3 + 5 clamped to 5
  EXPECT_EQ(y.floats(), (Floats{3, 4}));
}

TEST(StridedSliceTest, Int32DataWithInt64IndexTensors) {
  OpModelBuilder b;
  int x = b.input("x", {6}, TensorType::INT32);
  int bt = b.constant_i64("begin", {1}, {5});
  int et = b.constant_i64("end", {1}, {0});
  int st = b.constant_i64("strides", {1}, {-2});
  int y = b.output("y", {}, TensorType::INT32);
  b.op(BuiltinOperator::STRIDED_SLICE, {x, bt, et, st}, {y}, options_for({}));
  auto out = run(b, {Values::i32({6}, {10, 11, 12, 13, 14, 15})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, TensorType::INT32);
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{15, 13, 11}));
}

// x[t] with t computed at run time: the shape is fixed by the shrink mask.
OpModelBuilder runtime_begin_model(const Masks& masks) {
  OpModelBuilder b;
  int x = b.input("x", {3, 4});
  int bt = b.input("begin", {2}, TensorType::INT32);
  int et = b.constant_i32("end", {2}, {0, 0});
  int st = b.constant_i32("strides", {2}, {1, 1});
  int y = b.output("y");
  b.op(BuiltinOperator::STRIDED_SLICE, {x, bt, et, st}, {y}, options_for(masks));
  return b;
}

TEST(StridedSliceTest, RunTimeBeginOnShrunkAxes) {
  OpModelBuilder b = runtime_begin_model(Masks::of(2, 2, 0, 0, 1));  // x[t, :]
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  runner.set_input(0, Values::f32({3, 4}, iota_floats(12)));
  for (int32_t t : {2, 0, -2}) {
    runner.set_input(1, Values::i32({2}, {t, 7}));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    Values y = runner.output(0);
    EXPECT_EQ(y.shape, (Dims{4}));
    float row = static_cast<float>(t < 0 ? t + 3 : t);
    EXPECT_EQ(y.floats(), (Floats{4 * row, 4 * row + 1, 4 * row + 2, 4 * row + 3})) << t;
  }
  runner.set_input(1, Values::i32({2}, {3, 0}));
  EXPECT_FALSE(runner.invoke());
  EXPECT_NE(runner.error().find("index 3 in 'begin' is out of range for dimension 0 of 'x' [3,4]"),
            std::string::npos)
      << runner.error();
}

TEST(StridedSliceTest, RunTimeBeginThatDecidesASizeIsRejected) {
  std::string error = prepare_error(runtime_begin_model(Masks::of(0, 2, 0, 0, 2)));  // x[t:, 0]
  EXPECT_NE(error.find("begin 'begin' is computed at run time"), std::string::npos) << error;
  EXPECT_NE(error.find("dimension 0"), std::string::npos) << error;
}

TEST(StridedSliceTest, RejectsZeroStrideTwoEllipsesAndMismatchedVectors) {
  OpModelBuilder b;
  int x = b.input("x", {3, 4});
  int bt = b.constant_i32("begin", {2}, {0, 0});
  int et = b.constant_i32("end", {2}, {1, 1});
  int st = b.constant_i32("strides", {2}, {1, 0});
  int y = b.output("y");
  b.op(BuiltinOperator::STRIDED_SLICE, {x, bt, et, st}, {y}, options_for({}));
  EXPECT_NE(prepare_error(b).find("stride 1 in 'strides' is 0"), std::string::npos)
      << prepare_error(b);

  OpModelBuilder b2;
  x = b2.input("x", {3, 4});
  bt = b2.constant_i32("begin", {2}, {0, 0});
  et = b2.constant_i32("end", {2}, {1, 1});
  st = b2.constant_i32("strides", {2}, {1, 1});
  y = b2.output("y");
  b2.op(BuiltinOperator::STRIDED_SLICE, {x, bt, et, st}, {y}, options_for(Masks::of(0, 0, 3)));
  EXPECT_NE(prepare_error(b2).find("more than one bit"), std::string::npos) << prepare_error(b2);

  OpModelBuilder b3;
  x = b3.input("x", {3, 4});
  bt = b3.constant_i32("begin", {2}, {0, 0});
  et = b3.constant_i32("end", {1}, {1});
  st = b3.constant_i32("strides", {2}, {1, 1});
  y = b3.output("y");
  b3.op(BuiltinOperator::STRIDED_SLICE, {x, bt, et, st}, {y}, options_for({}));
  EXPECT_NE(prepare_error(b3).find("end 'end' has shape [1], expected [2]"), std::string::npos)
      << prepare_error(b3);

  OpModelBuilder b4;  // three real specs on a 2-D input
  x = b4.input("x", {3, 4});
  bt = b4.constant_i32("begin", {3}, {0, 0, 0});
  et = b4.constant_i32("end", {3}, {1, 1, 1});
  st = b4.constant_i32("strides", {3}, {1, 1, 1});
  y = b4.output("y");
  b4.op(BuiltinOperator::STRIDED_SLICE, {x, bt, et, st}, {y}, options_for({}));
  EXPECT_NE(prepare_error(b4).find("3 slice indices for input 'x' [3,4] of rank 2"),
            std::string::npos)
      << prepare_error(b4);
}

// Training: every mask, negative strides and a run-time begin (the WHILE
// body's x[t]) against finite differences.
TEST(StridedSliceBackward, AllMasksMatchFiniteDifferences) {
  struct Case {
    std::vector<int32_t> begin, end, strides;
    int begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask;
    size_t outputs;
  };
  const Case cases[] = {
      {{0, 1, 0}, {3, 4, 4}, {2, 1, 2}, 0, 0, 0, 0, 0, 2 * 3 * 2},
      {{2, 0, 3}, {0, 4, 0}, {-1, 1, -2}, 0, 0, 0, 0, 0, 2 * 4 * 2},
      {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 7, 7, 0, 0, 0, 48},
      {{1, 0, 0}, {2, 0, 0}, {1, 1, 1}, 6, 6, 0, 0, 1, 16},
      {{0, 2}, {0, 3}, {1, 1}, 0, 0, 1, 0, 2, 12},
      {{0, 0, 1}, {0, 0, 3}, {1, 1, 1}, 1, 1, 0, 2, 0, 3 * 4 * 2},
  };
  int n = 0;
  for (const Case& c : cases) {
    OpModelBuilder b;
    int x = b.input("x", {3, 4, 4});
    const int32_t specs = static_cast<int32_t>(c.begin.size());
    int begin = b.constant_i32("begin", {specs}, c.begin);
    int end = b.constant_i32("end", {specs}, c.end);
    int strides = b.constant_i32("strides", {specs}, c.strides);
    int y = b.output("y");
    fb::StridedSliceOptionsT options;
    options.begin_mask = c.begin_mask;
    options.end_mask = c.end_mask;
    options.ellipsis_mask = c.ellipsis_mask;
    options.new_axis_mask = c.new_axis_mask;
    options.shrink_axis_mask = c.shrink_mask;
    b.op(BuiltinOperator::STRIDED_SLICE, {x, begin, end, strides}, {y}, options);
    check_input_gradients(b, {random_floats(48, 1.f, 4)}, c.outputs,
                          "STRIDED_SLICE case " + std::to_string(n++));
  }
}

TEST(StridedSliceBackward, RunTimeBeginShrinksOneStep) {
  OpModelBuilder b;
  int x = b.input("x", {5, 3});
  int t = b.input("t", {1}, TensorType::INT32);
  int end = b.constant_i32("end", {1}, {0});
  int strides = b.constant_i32("strides", {1}, {1});
  int y = b.output("y");
  fb::StridedSliceOptionsT options;
  options.shrink_axis_mask = 1;
  b.op(BuiltinOperator::STRIDED_SLICE, {x, t, end, strides}, {y}, options);
  Session s;
  ASSERT_TRUE(s.prepare(b, mse_config()));
  s.trainer.input(1)->i32()[0] = 3;
  std::vector<float> values = random_floats(15, 1.f, 5);
  memcpy(s.trainer.input(0)->data, values.data(), values.size() * sizeof(float));
  std::vector<float> labels = random_floats(3, 1.f, 6);
  memcpy(s.trainer.label(), labels.data(), labels.size() * sizeof(float));
  ASSERT_TRUE(s.trainer.accumulate(nullptr).ok());
  const Tensor* g = s.trainer.interpreter().gradient(0, s.trainer.input(0));
  ASSERT_NE(g, nullptr);
  for (int i = 0; i < 15; ++i) {
    // MSE over 3 outputs: 2/3 (x - y) on row 3, nothing elsewhere.
    const float expected = i / 3 == 3 ? 2.f / 3.f * (values[i] - labels[i % 3]) : 0.f;
    EXPECT_NEAR(g->f32()[i], expected, 1e-6) << i;
  }
}

}  // namespace
}  // namespace gruwb::test
