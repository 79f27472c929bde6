// CONV_2D: hand-computed SAME/VALID, stride and dilation cases; a
// multi-channel case with bias, RELU and strides against a reference that
// pads the input explicitly; grouped filters; errors; backward (input,
// filter, bias) by finite differences.

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

fb::Conv2DOptionsT conv_options(fb::Padding padding, int stride_h, int stride_w, int dilation_h = 1,
                                int dilation_w = 1,
                                fb::ActivationFunctionType act = fb::ActivationFunctionType::NONE) {
  fb::Conv2DOptionsT o;
  o.padding = padding;
  o.stride_h = stride_h;
  o.stride_w = stride_w;
  o.dilation_h_factor = dilation_h;
  o.dilation_w_factor = dilation_w;
  o.fused_activation_function = act;
  return o;
}

Values conv(const Values& x, const Dims& filter_shape, const Floats& filter, const Floats* bias,
            const fb::Conv2DOptionsT& options) {
  OpModelBuilder m;
  int xi = m.input("x", x.shape);
  int w = m.constant("filter", filter_shape, filter);
  int b = bias ? m.constant("bias", {filter_shape[0]}, *bias) : -1;
  int y = m.output("y");
  m.op(BuiltinOperator::CONV_2D, {xi, w, b}, {y}, options);
  auto out = run(m, {x});
  return out.empty() ? Values{} : out[0];
}

const Values k3x3 = Values::f32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
const Floats kDiagonal = {1, 0, 0, 1};  // [1,2,2,1]: x[i][j] + x[i+1][j+1]

TEST(Conv2dTest, HandComputedPaddingsStridesAndDilation) {
  Values y = conv(k3x3, {1, 2, 2, 1}, kDiagonal, nullptr, conv_options(fb::Padding::VALID, 1, 1));
  EXPECT_EQ(y.shape, (Dims{1, 2, 2, 1}));
  EXPECT_EQ(y.floats(), (Floats{6, 8, 12, 14}));
  // SAME pads one row and column after (the odd one goes after).
  y = conv(k3x3, {1, 2, 2, 1}, kDiagonal, nullptr, conv_options(fb::Padding::SAME, 1, 1));
  EXPECT_EQ(y.shape, (Dims{1, 3, 3, 1}));
  EXPECT_EQ(y.floats(), (Floats{6, 8, 3, 12, 14, 6, 7, 8, 9}));
  y = conv(k3x3, {1, 2, 2, 1}, kDiagonal, nullptr, conv_options(fb::Padding::SAME, 2, 2));
  EXPECT_EQ(y.shape, (Dims{1, 2, 2, 1}));
  EXPECT_EQ(y.floats(), (Floats{6, 3, 7, 9}));
  // Dilation 2: the taps are x[0][0] and x[2][2].
  y = conv(k3x3, {1, 2, 2, 1}, kDiagonal, nullptr, conv_options(fb::Padding::VALID, 1, 1, 2, 2));
  EXPECT_EQ(y.shape, (Dims{1, 1, 1, 1}));
  EXPECT_EQ(y.floats(), (Floats{10}));
  // SAME with a 3x3 filter pads one on each side; bias and RELU6.
  const Floats ones(9, 1.f), bias = {-20.f};
  y = conv(k3x3, {1, 3, 3, 1}, ones, &bias,
           conv_options(fb::Padding::SAME, 1, 1, 1, 1, fb::ActivationFunctionType::RELU6));
  // Window sums: corners 12 16 24 28, edges 21 27 33 39, centre 45; minus 20, clamped to [0,6].
  EXPECT_EQ(y.floats(), (Floats{0, 1, 0, 6, 6, 6, 4, 6, 6}));
}

// Reference: zero-pad the input by (top, left) explicitly, then slide.
Floats reference(const Floats& x, const Dims& xs, const Floats& w, const Dims& ws,
                 const Floats& bias, int stride_h, int stride_w, int dh, int dw, bool same,
                 int groups, Dims* out_shape) {
  const int N = xs[0], H = xs[1], W = xs[2], C = xs[3];
  const int O = ws[0], KH = ws[1], KW = ws[2], FC = ws[3];
  const int eh = (KH - 1) * dh + 1, ew = (KW - 1) * dw + 1;
  int OH, OW, top = 0, left = 0;
  if (same) {
    OH = (H + stride_h - 1) / stride_h;
    OW = (W + stride_w - 1) / stride_w;
    top = std::max((OH - 1) * stride_h + eh - H, 0) / 2;
    left = std::max((OW - 1) * stride_w + ew - W, 0) / 2;
  } else {
    OH = (H - eh) / stride_h + 1;
    OW = (W - ew) / stride_w + 1;
  }
  const int PH = H + 2 * eh, PW = W + 2 * ew;  // generous zero border
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
        for (int o = 0; o < O; ++o) {
          const int group = o / (O / groups);
          double s = bias.empty() ? 0.0 : bias[o];
          for (int a = 0; a < KH; ++a)
            for (int b = 0; b < KW; ++b)
              for (int c = 0; c < FC; ++c)
                s += padded[((static_cast<size_t>(n) * PH + i * stride_h + a * dh) * PW +
                             j * stride_w + b * dw) *
                                C +
                            group * FC + c] *
                     w[((static_cast<size_t>(o) * KH + a) * KW + b) * FC + c];
          out.push_back(static_cast<float>(s));
        }
  return out;
}

TEST(Conv2dTest, MultiChannelAgainstReference) {
  struct Case {
    Dims xs, ws;
    int sh, sw, dh, dw;
    bool same;
    int groups;
  } cases[] = {
      {{2, 5, 4, 2}, {3, 3, 2, 2}, 2, 1, 1, 1, true, 1},
      {{1, 6, 6, 3}, {4, 2, 3, 3}, 1, 2, 2, 1, false, 1},
      {{1, 4, 5, 2}, {2, 3, 3, 2}, 1, 1, 1, 2, true, 1},
      {{1, 4, 4, 4}, {6, 2, 2, 2}, 1, 1, 1, 1, true, 2},  // grouped: 2 groups of 2 channels
  };
  for (const Case& c : cases) {
    int64_t nx = 1, nw = 1;
    for (int32_t d : c.xs) nx *= d;
    for (int32_t d : c.ws) nw *= d;
    const Floats x = random_floats(static_cast<size_t>(nx), 1.f, 21);
    const Floats w = random_floats(static_cast<size_t>(nw), 1.f, 22);
    const Floats bias = random_floats(static_cast<size_t>(c.ws[0]), 1.f, 23);
    Dims shape;
    Floats expected =
        reference(x, c.xs, w, c.ws, bias, c.sh, c.sw, c.dh, c.dw, c.same, c.groups, &shape);
    Values y =
        conv(Values::f32(c.xs, x), c.ws, w, &bias,
             conv_options(c.same ? fb::Padding::SAME : fb::Padding::VALID, c.sh, c.sw, c.dh, c.dw));
    EXPECT_EQ(y.shape, shape);
    EXPECT_TRUE(floats_near(expected, y.floats(), 1e-5f));
  }
}

TEST(Conv2dTest, RejectsMismatchedChannelsAndMissingOptions) {
  OpModelBuilder m;
  int x = m.input("x", {1, 4, 4, 3});
  int w = m.constant("filter", {2, 1, 1, 2}, Floats(4, 1.f));
  int y = m.output("y");
  m.op(BuiltinOperator::CONV_2D, {x, w, -1}, {y}, conv_options(fb::Padding::SAME, 1, 1));
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("does not fit input 'x' [1,4,4,3]"), std::string::npos) << error;
  OpModelBuilder n;
  x = n.input("x", {1, 4, 4, 1});
  w = n.constant("filter", {1, 1, 1, 1}, {1.f});
  y = n.output("y");
  n.op(BuiltinOperator::CONV_2D, {x, w, -1}, {y}, conv_options(fb::Padding::SAME, 0, 1));
  error = prepare_error(n);
  EXPECT_NE(error.find("stride 0x1"), std::string::npos) << error;
}

TEST(Conv2dBackward, InputFilterAndBiasMatchFiniteDifferences) {
  for (bool same : {true, false}) {
    OpModelBuilder b;
    int x = b.input("x", {1, 5, 4, 2});
    int w = b.constant("filter", {3, 3, 2, 2}, random_floats(36, 0.5f, 31));
    int bias = b.constant("bias", {3}, {0.1f, -0.2f, 0.3f});
    int y = b.output("y");
    b.op(BuiltinOperator::CONV_2D, {x, w, bias}, {y},
         conv_options(same ? fb::Padding::SAME : fb::Padding::VALID, 2, 1, 2, 1,
                      fb::ActivationFunctionType::TANH));
    // filter [3,3,2,2]: 3x2 taps; VALID with dilation 2 rows: 1 x 3 outputs.
    const int outputs = same ? 3 * 4 * 3 : 1 * 3 * 3;
    check_input_gradients(b, {random_floats(40, 1.f, 32)}, static_cast<size_t>(outputs),
                          same ? "CONV_2D SAME" : "CONV_2D VALID");
  }
}

}  // namespace
}  // namespace gruwb::test
