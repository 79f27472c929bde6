// DEPTHWISE_CONV_2D: a hand-computed two-channel case, depth multiplier 2
// with strides, dilation and SAME/VALID against a reference that pads the
// input explicitly; errors; backward (input, filter, bias) by finite
// differences.

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

fb::DepthwiseConv2DOptionsT dw_options(fb::Padding padding, int sh, int sw, int multiplier,
                                       int dh = 1, int dw = 1) {
  fb::DepthwiseConv2DOptionsT o;
  o.padding = padding;
  o.stride_h = sh;
  o.stride_w = sw;
  o.depth_multiplier = multiplier;
  o.dilation_h_factor = dh;
  o.dilation_w_factor = dw;
  return o;
}

Values depthwise(const Values& x, const Dims& ws, const Floats& w, const Floats* bias,
                 const fb::DepthwiseConv2DOptionsT& options) {
  OpModelBuilder m;
  int xi = m.input("x", x.shape);
  int wi = m.constant("filter", ws, w);
  int b = bias ? m.constant("bias", {ws[3]}, *bias) : -1;
  int y = m.output("y");
  m.op(BuiltinOperator::DEPTHWISE_CONV_2D, {xi, wi, b}, {y}, options);
  auto out = run(m, {x});
  return out.empty() ? Values{} : out[0];
}

TEST(DepthwiseConv2dTest, HandComputedTwoChannels) {
  // x [1,2,2,2]: channel 0 = 1,2,3,4; channel 1 = 10,20,30,40 (interleaved).
  Values x = Values::f32({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  // filter [1,2,2,2]: channel 0 sums the window, channel 1 takes its top-left.
  Floats w = {1, 1, 1, 0, 1, 0, 1, 0};
  const Floats bias = {0.5f, -1.f};
  Values y = depthwise(x, {1, 2, 2, 2}, w, &bias, dw_options(fb::Padding::VALID, 1, 1, 1));
  EXPECT_EQ(y.shape, (Dims{1, 1, 1, 2}));
  EXPECT_EQ(y.floats(), (Floats{10.5f, 9.f}));
}

Floats reference(const Floats& x, const Dims& xs, const Floats& w, const Dims& ws,
                 const Floats& bias, int sh, int sw, int dh, int dw, bool same, Dims* out_shape) {
  const int N = xs[0], H = xs[1], W = xs[2], C = xs[3];
  const int KH = ws[1], KW = ws[2], O = ws[3], M = O / C;
  const int eh = (KH - 1) * dh + 1, ew = (KW - 1) * dw + 1;
  int OH, OW, top = 0, left = 0;
  if (same) {
    OH = (H + sh - 1) / sh;
    OW = (W + sw - 1) / sw;
    top = std::max((OH - 1) * sh + eh - H, 0) / 2;
    left = std::max((OW - 1) * sw + ew - W, 0) / 2;
  } else {
    OH = (H - eh) / sh + 1;
    OW = (W - ew) / sw + 1;
  }
  const int PH = H + 2 * eh, PW = W + 2 * ew;
  std::vector<double> padded(static_cast<size_t>(N) * PH * PW * C, 0.0);
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < W; ++j)
        for (int c = 0; c < C; ++c)
          padded[((static_cast<size_t>(n) * PH + i + top) * PW + j + left) * C + c] =
              x[((static_cast<size_t>(n) * H + i) * W + j) * C + c];
  *out_shape = {N, OH, OW, O};
  Floats out;
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < OH; ++i)
      for (int j = 0; j < OW; ++j)
        for (int c = 0; c < C; ++c)
          for (int m = 0; m < M; ++m) {
            const int o = c * M + m;
            double s = bias[o];
            for (int a = 0; a < KH; ++a)
              for (int b = 0; b < KW; ++b)
                s += padded[((static_cast<size_t>(n) * PH + i * sh + a * dh) * PW + j * sw +
                             b * dw) *
                                C +
                            c] *
                     w[(static_cast<size_t>(a) * KW + b) * O + o];
            out.push_back(static_cast<float>(s));
          }
  return out;
}

TEST(DepthwiseConv2dTest, MultiplierStridesDilationAgainstReference) {
  struct Case {
    Dims xs, ws;
    int sh, sw, dh, dw;
    bool same;
  } cases[] = {
      {{2, 5, 4, 2}, {1, 3, 2, 4}, 2, 1, 1, 1, true},
      {{1, 6, 6, 3}, {1, 2, 3, 3}, 1, 2, 2, 1, false},
      {{1, 4, 5, 2}, {1, 3, 3, 6}, 1, 1, 1, 2, true},
  };
  for (const Case& c : cases) {
    int64_t nx = 1, nw = 1;
    for (int32_t d : c.xs) nx *= d;
    for (int32_t d : c.ws) nw *= d;
    const Floats x = random_floats(static_cast<size_t>(nx), 1.f, 41);
    const Floats w = random_floats(static_cast<size_t>(nw), 1.f, 42);
    const Floats bias = random_floats(static_cast<size_t>(c.ws[3]), 1.f, 43);
    Dims shape;
    Floats expected = reference(x, c.xs, w, c.ws, bias, c.sh, c.sw, c.dh, c.dw, c.same, &shape);
    Values y = depthwise(Values::f32(c.xs, x), c.ws, w, &bias,
                         dw_options(c.same ? fb::Padding::SAME : fb::Padding::VALID, c.sh, c.sw,
                                    c.ws[3] / c.xs[3], c.dh, c.dw));
    EXPECT_EQ(y.shape, shape);
    EXPECT_TRUE(floats_near(expected, y.floats(), 1e-5f));
  }
}

TEST(DepthwiseConv2dTest, RejectsWrongMultiplier) {
  OpModelBuilder m;
  int x = m.input("x", {1, 4, 4, 2});
  int w = m.constant("filter", {1, 1, 1, 4}, Floats(4, 1.f));
  int y = m.output("y");
  m.op(BuiltinOperator::DEPTHWISE_CONV_2D, {x, w, -1}, {y}, dw_options(fb::Padding::SAME, 1, 1, 3));
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("depth_multiplier 3"), std::string::npos) << error;
}

TEST(DepthwiseConv2dBackward, InputFilterAndBiasMatchFiniteDifferences) {
  OpModelBuilder b;
  int x = b.input("x", {1, 4, 5, 2});
  int w = b.constant("filter", {1, 3, 2, 4}, random_floats(24, 0.5f, 51));
  int bias = b.constant("bias", {4}, {0.1f, -0.2f, 0.3f, 0.05f});
  int y = b.output("y");
  fb::DepthwiseConv2DOptionsT options = dw_options(fb::Padding::SAME, 2, 1, 2, 1, 2);
  options.fused_activation_function = fb::ActivationFunctionType::TANH;
  b.op(BuiltinOperator::DEPTHWISE_CONV_2D, {x, w, bias}, {y}, options);
  check_input_gradients(b, {random_floats(40, 1.f, 52)}, 2 * 5 * 4, "DEPTHWISE_CONV_2D");
}

}  // namespace
}  // namespace gruwb::test
