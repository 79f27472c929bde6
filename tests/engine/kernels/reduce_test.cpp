// SUM and MEAN: one axis, several axes, negative and repeated axes,
// keep_dims, all axes to a scalar, int32 SUM folded, errors; backward by
// finite differences.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

Values reduce(BuiltinOperator code, const Values& x, const std::vector<int32_t>& axes,
              bool keep_dims) {
  OpModelBuilder m;
  int xi = m.input("x", x.shape, x.type);
  int a = m.constant_i32("axes", {static_cast<int32_t>(axes.size())}, axes);
  int y = m.output("y", {}, x.type);
  fb::ReducerOptionsT options;
  options.keep_dims = keep_dims;
  m.op(code, {xi, a}, {y}, options);
  auto out = run(m, {x});
  return out.empty() ? Values{} : out[0];
}

// x = iota [2,3,2]: x[i][j][k] = 6i + 2j + k.
const Values kX = Values::f32({2, 3, 2}, iota_floats(12));

TEST(ReduceTest, SumOverAxes) {
  Values y = reduce(BuiltinOperator::SUM, kX, {1}, false);
  EXPECT_EQ(y.shape, (Dims{2, 2}));
  EXPECT_EQ(y.floats(), (Floats{6, 9, 24, 27}));
  y = reduce(BuiltinOperator::SUM, kX, {1}, true);
  EXPECT_EQ(y.shape, (Dims{2, 1, 2}));
  y = reduce(BuiltinOperator::SUM, kX, {0, -1}, false);
  EXPECT_EQ(y.shape, (Dims{3}));
  EXPECT_EQ(y.floats(), (Floats{14, 22, 30}));
  y = reduce(BuiltinOperator::SUM, kX, {2, 2}, false);  // repeated axis counts once
  EXPECT_EQ(y.floats(), (Floats{1, 5, 9, 13, 17, 21}));
  y = reduce(BuiltinOperator::SUM, kX, {0, 1, 2}, false);
  EXPECT_EQ(y.shape, (Dims{}));
  EXPECT_EQ(y.floats(), (Floats{66}));
  y = reduce(BuiltinOperator::SUM, kX, {}, false);  // no axes: unchanged
  EXPECT_EQ(y.shape, (Dims{2, 3, 2}));
  EXPECT_EQ(y.floats(), iota_floats(12));
}

TEST(ReduceTest, MeanOverAxes) {
  Values y = reduce(BuiltinOperator::MEAN, kX, {1, 2}, true);
  EXPECT_EQ(y.shape, (Dims{2, 1, 1}));
  EXPECT_EQ(y.floats(), (Floats{2.5f, 8.5f}));
  y = reduce(BuiltinOperator::MEAN, kX, {0}, false);
  EXPECT_EQ(y.floats(), (Floats{3, 4, 5, 6, 7, 8}));
}

TEST(ReduceTest, Int32SumIsFolded) {
  OpModelBuilder m;
  int x = m.constant_i32("x", {2, 2}, {1, 2, 3, 4});
  int a = m.constant_i32("axes", {}, {0});
  int y = m.output("y", {}, TensorType::INT32);
  m.op(BuiltinOperator::SUM, {x, a}, {y}, fb::ReducerOptionsT());
  OpRunner runner(m);
  ASSERT_TRUE(runner.ok()) << runner.error();
  EXPECT_EQ(runner.interpreter().output(0)->kind, TensorKind::kConstant);
  EXPECT_EQ(runner.output(0).ints(), (std::vector<int32_t>{4, 6}));
}

TEST(ReduceTest, Errors) {
  {
    OpModelBuilder m;
    int x = m.input("x", {2, 3});
    int a = m.input("axes", {1}, TensorType::INT32);
    int y = m.output("y");
    m.op(BuiltinOperator::MEAN, {x, a}, {y}, fb::ReducerOptionsT());
    std::string error = prepare_error(m);
    EXPECT_NE(error.find("axes 'axes' is computed at run time"), std::string::npos) << error;
  }
  {
    OpModelBuilder m;
    int x = m.input("x", {2, 3});
    int a = m.constant_i32("axes", {1}, {2});
    int y = m.output("y");
    m.op(BuiltinOperator::SUM, {x, a}, {y}, fb::ReducerOptionsT());
    std::string error = prepare_error(m);
    EXPECT_NE(error.find("axis 2 is out of range for 'x' [2,3]"), std::string::npos) << error;
  }
}

TEST(ReduceBackward, MatchesFiniteDifferences) {
  for (BuiltinOperator code : {BuiltinOperator::SUM, BuiltinOperator::MEAN}) {
    for (bool keep_dims : {false, true}) {
      OpModelBuilder b;
      int x = b.input("x", {2, 3, 2});
      int a = b.constant_i32("axes", {2}, {0, 2});
      int r = b.tensor("r");
      fb::ReducerOptionsT options;
      options.keep_dims = keep_dims;
      b.op(code, {x, a}, {r}, options);
      int w = b.constant("w", keep_dims ? Dims{1, 3, 1} : Dims{3}, {1.f, -2.f, 0.5f});
      int y = b.output("y");
      b.op(BuiltinOperator::MUL, {r, w}, {y}, fb::MulOptionsT());
      check_input_gradients(b, {random_floats(12, 1.f, 7)}, 3, fb::EnumNameBuiltinOperator(code));
    }
  }
}

}  // namespace
}  // namespace gruwb::test
