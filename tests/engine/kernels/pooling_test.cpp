// MAX_POOL_2D and AVERAGE_POOL_2D: hand-computed VALID and SAME windows
// (padding never counts in the average), channels kept apart, fused
// activation; backward by finite differences.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

fb::Pool2DOptionsT pool_options(fb::Padding padding, int filter, int stride,
                                fb::ActivationFunctionType act = fb::ActivationFunctionType::NONE) {
  fb::Pool2DOptionsT o;
  o.padding = padding;
  o.filter_height = filter;
  o.filter_width = filter;
  o.stride_h = stride;
  o.stride_w = stride;
  o.fused_activation_function = act;
  return o;
}

Values pool(BuiltinOperator code, const Values& x, const fb::Pool2DOptionsT& options) {
  OpModelBuilder m;
  int xi = m.input("x", x.shape);
  int y = m.output("y");
  m.op(code, {xi}, {y}, options);
  auto out = run(m, {x});
  return out.empty() ? Values{} : out[0];
}

// 1..16 in a 4x4 image.
const Values k4x4 = Values::f32({1, 4, 4, 1}, iota_floats(16, 1.f, 1.f));

TEST(PoolingTest, ValidTwoByTwo) {
  Values y = pool(BuiltinOperator::MAX_POOL_2D, k4x4, pool_options(fb::Padding::VALID, 2, 2));
  EXPECT_EQ(y.shape, (Dims{1, 2, 2, 1}));
  EXPECT_EQ(y.floats(), (Floats{6, 8, 14, 16}));
  y = pool(BuiltinOperator::AVERAGE_POOL_2D, k4x4, pool_options(fb::Padding::VALID, 2, 2));
  EXPECT_EQ(y.floats(), (Floats{3.5f, 5.5f, 11.5f, 13.5f}));
}

TEST(PoolingTest, SameCountsOnlyInBoundsValues) {
  // 3x3 windows, stride 2: rows/cols {0,1,2} and {2,3} (one padding after).
  Values y = pool(BuiltinOperator::MAX_POOL_2D, k4x4, pool_options(fb::Padding::SAME, 3, 2));
  EXPECT_EQ(y.shape, (Dims{1, 2, 2, 1}));
  EXPECT_EQ(y.floats(), (Floats{11, 12, 15, 16}));
  y = pool(BuiltinOperator::AVERAGE_POOL_2D, k4x4, pool_options(fb::Padding::SAME, 3, 2));
  EXPECT_EQ(y.floats(), (Floats{6, 7.5f, 12, 13.5f}));
}

TEST(PoolingTest, ChannelsAndActivation) {
  // Two channels: c0 = v, c1 = -v.
  Floats x;
  for (float v : iota_floats(16, 1.f, 1.f)) {
    x.push_back(v);
    x.push_back(-v);
  }
  Values y = pool(BuiltinOperator::MAX_POOL_2D, Values::f32({1, 4, 4, 2}, x),
                  pool_options(fb::Padding::VALID, 2, 2));
  EXPECT_EQ(y.shape, (Dims{1, 2, 2, 2}));
  EXPECT_EQ(y.floats(), (Floats{6, -1, 8, -3, 14, -9, 16, -11}));
  y = pool(BuiltinOperator::AVERAGE_POOL_2D, Values::f32({1, 4, 4, 2}, x),
           pool_options(fb::Padding::VALID, 2, 2, fb::ActivationFunctionType::RELU6));
  EXPECT_EQ(y.floats(), (Floats{3.5f, 0, 5.5f, 0, 6, 0, 6, 0}));
}

TEST(PoolingTest, RejectsNon4dInput) {
  OpModelBuilder m;
  int x = m.input("x", {4, 4});
  int y = m.output("y");
  m.op(BuiltinOperator::MAX_POOL_2D, {x}, {y}, pool_options(fb::Padding::VALID, 2, 2));
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("input 'x' [4,4] must be 4-D"), std::string::npos) << error;
}

TEST(PoolingBackward, MatchFiniteDifferences) {
  for (BuiltinOperator code : {BuiltinOperator::MAX_POOL_2D, BuiltinOperator::AVERAGE_POOL_2D}) {
    for (fb::Padding padding : {fb::Padding::SAME, fb::Padding::VALID}) {
      OpModelBuilder b;
      int x = b.input("x", {1, 5, 5, 2});
      int y = b.output("y");
      b.op(code, {x}, {y}, pool_options(padding, 3, 2));
      const size_t outputs = padding == fb::Padding::SAME ? 3 * 3 * 2 : 2 * 2 * 2;
      // Distinct values (no ties inside a window) for the max pool.
      check_input_gradients(b, {random_floats(50, 1.f, 61)}, outputs,
                            fb::EnumNameBuiltinOperator(code));
    }
  }
}

}  // namespace
}  // namespace gruwb::test
