// FULLY_CONNECTED: float weights with and without bias, fused activation,
// keep_num_dims, batches from higher-rank inputs, INT8 hybrid weights with
// per-tensor and per-channel scales, and shape errors. Expected values are
// plain double-precision loops over the same numbers.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/kernels/recurrent_util.h"
#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

// y[n][u] = act(sum_i x[n][i] * w[u][i] + b[u]).
Floats reference_fc(const Floats& x, const Floats& w, const Floats& bias, int units, int depth,
                    bool relu = false) {
  const size_t batches = x.size() / static_cast<size_t>(depth);
  Floats y;
  for (size_t n = 0; n < batches; ++n) {
    for (int u = 0; u < units; ++u) {
      double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(u)];
      for (int i = 0; i < depth; ++i) {
        acc += static_cast<double>(x[n * depth + i]) * w[static_cast<size_t>(u * depth + i)];
      }
      y.push_back(static_cast<float>(relu && acc < 0 ? 0.0 : acc));
    }
  }
  return y;
}

fb::FullyConnectedOptionsT fc_options(
    bool keep_num_dims = false,
    fb::ActivationFunctionType activation = fb::ActivationFunctionType::NONE) {
  fb::FullyConnectedOptionsT o;
  o.keep_num_dims = keep_num_dims;
  o.fused_activation_function = activation;
  return o;
}

const Floats kWeights = {0.5f,  -1.f,  2.f,     // unit 0
                         1.5f,  0.25f, -3.f,    // unit 1
                         -0.5f, 2.f,   1.f,     // unit 2
                         0.f,   1.f,   0.75f};  // unit 3
const Floats kBias = {0.1f, -0.2f, 0.3f, -4.f};

TEST(FullyConnectedTest, FloatWithBiasAndRelu) {
  const Floats x = {1.f, 2.f, 3.f, -1.f, 0.5f, -2.f};
  for (bool relu : {false, true}) {
    OpModelBuilder b;
    int in = b.input("x", {2, 3});
    int w = b.constant("w", {4, 3}, kWeights);
    int bias = b.constant("b", {4}, kBias);
    int y = b.output("y");
    b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, bias}, {y},
         fc_options(false,
                    relu ? fb::ActivationFunctionType::RELU : fb::ActivationFunctionType::NONE));
    auto out = run(b, {Values::f32({2, 3}, x)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (Dims{2, 4}));
    EXPECT_TRUE(floats_near(reference_fc(x, kWeights, kBias, 4, 3, relu), out[0].floats(), 1e-5f));
  }
}

TEST(FullyConnectedTest, OmittedBias) {
  const Floats x = {1.f, 2.f, 3.f};
  OpModelBuilder b;
  int in = b.input("x", {1, 3});
  int w = b.constant("w", {4, 3}, kWeights);
  int y = b.output("y");
  b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, -1}, {y}, fc_options());
  auto out = run(b, {Values::f32({1, 3}, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(floats_near(reference_fc(x, kWeights, {}, 4, 3), out[0].floats(), 1e-5f));
}

TEST(FullyConnectedTest, KeepNumDimsKeepsLeadingDims) {
  const Floats x = iota_floats(12, 0.25f, -1.f);  // [2,2,3]
  for (bool keep : {true, false}) {
    OpModelBuilder b;
    int in = b.input("x", {2, 2, 3});
    int w = b.constant("w", {4, 3}, kWeights);
    int bias = b.constant("b", {4}, kBias);
    int y = b.output("y");
    b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, bias}, {y}, fc_options(keep));
    auto out = run(b, {Values::f32({2, 2, 3}, x)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, keep ? (Dims{2, 2, 4}) : (Dims{4, 4}));
    EXPECT_TRUE(floats_near(reference_fc(x, kWeights, kBias, 4, 3), out[0].floats(), 1e-5f));
  }
}

TEST(FullyConnectedTest, LongRowsUseEveryPartialSum) {
  // depth 37: eight partial sums plus a tail of five.
  const int depth = 37, units = 3;
  Floats w, x = iota_floats(depth, 0.1f, -1.5f);
  for (int i = 0; i < units * depth; ++i) w.push_back(std::sin(static_cast<float>(i)));
  OpModelBuilder b;
  int in = b.input("x", {1, depth});
  int wt = b.constant("w", {units, depth}, w);
  int y = b.output("y");
  b.op(BuiltinOperator::FULLY_CONNECTED, {in, wt, -1}, {y}, fc_options());
  auto out = run(b, {Values::f32({1, depth}, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(floats_near(reference_fc(x, w, {}, units, depth), out[0].floats(), 1e-5f));
}

// matvec_rows (the product every dense and recurrent op shares) dispatches on
// x86-64 hosts to the AVX-512 version (up to 128 columns) or the AVX2 clone:
// every row/column remainder they handle (8- and 4-row blocks, single rows,
// 16-column blocks with a masked tail, the portable form past 128 columns)
// against a double-precision loop, in both assign-with-bias and accumulate
// modes, and against the portable version the Cortex-M runs.
TEST(FullyConnectedTest, MatvecRowsEveryBlockAndTailMatchesReference) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (int rows : {1, 3, 4, 7, 8, 9, 12, 15, 16, 180}) {
    for (int cols : {1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 60, 61, 64, 127, 128, 129}) {
      Floats w(static_cast<size_t>(rows * cols)), x(static_cast<size_t>(cols)),
          bias(static_cast<size_t>(rows)), start(static_cast<size_t>(rows));
      for (float& v : w) v = d(rng);
      for (float& v : x) v = d(rng);
      for (float& v : bias) v = d(rng);
      for (float& v : start) v = d(rng);
      for (bool accumulate : {false, true}) {
        Floats out = start, portable = start;
        matvec_rows(w.data(), rows, cols, x.data(), bias.data(), accumulate, out.data());
        matvec_rows_portable(w.data(), rows, cols, x.data(), bias.data(), accumulate,
                             portable.data());
        for (int r = 0; r < rows; ++r) {
          double expected =
              accumulate ? start[static_cast<size_t>(r)] : bias[static_cast<size_t>(r)];
          for (int c = 0; c < cols; ++c) {
            expected += static_cast<double>(w[static_cast<size_t>(r * cols + c)]) *
                        x[static_cast<size_t>(c)];
          }
          EXPECT_NEAR(out[static_cast<size_t>(r)], expected, 1e-5)
              << rows << "x" << cols << (accumulate ? " accumulate" : " assign") << " row " << r;
          EXPECT_NEAR(portable[static_cast<size_t>(r)], out[static_cast<size_t>(r)], 1e-5);
        }
      }
    }
  }
}

// TFLite's hybrid FULLY_CONNECTED, written out for one case: each input row is quantized
// symmetrically to int8 with scale max|x| / 127 (round half away from zero), the int8 products
// accumulate in int32, and row r comes back as bias[r] + acc * input_scale * weight_scale[r].
Floats reference_hybrid_fc(const Floats& x, const std::vector<int8_t>& q, const Floats& scales,
                           const Floats& bias, int units, int depth) {
  Floats out;
  for (size_t n = 0; n * static_cast<size_t>(depth) < x.size(); ++n) {
    const float* row = x.data() + n * static_cast<size_t>(depth);
    float range = 0.f;
    for (int i = 0; i < depth; ++i) range = std::max(range, std::fabs(row[i]));
    std::vector<int32_t> xq(static_cast<size_t>(depth));
    for (int i = 0; i < depth; ++i) {
      xq[static_cast<size_t>(i)] =
          std::clamp(static_cast<int32_t>(std::round(row[i] * (127.f / range))), -127, 127);
    }
    for (int r = 0; r < units; ++r) {
      int32_t acc = 0;
      for (int i = 0; i < depth; ++i)
        acc += q[static_cast<size_t>(r * depth + i)] * xq[static_cast<size_t>(i)];
      const float scale = (range / 127.f) * scales[scales.size() == 1 ? 0 : static_cast<size_t>(r)];
      out.push_back(bias[static_cast<size_t>(r)] + static_cast<float>(acc) * scale);
    }
  }
  return out;
}

// INT8 weights q with scale s (per tensor or per row), hybrid: activations quantized at run
// time as TFLite does (the outputs differ from s * q float weights by up to ~1e-2).
TEST(FullyConnectedTest, HybridInt8WeightsPerTensor) {
  const std::vector<int8_t> q = {10, -20, 127, -128, 0, 64, 5, 5, -5, 100, -100, 1};
  const float scale = 0.02f;
  Floats dequantized;
  for (int8_t v : q) dequantized.push_back(scale * static_cast<float>(v));
  const Floats x = {0.5f, -1.f, 2.f, 1.f, 1.f, -3.f};
  OpModelBuilder b;
  int in = b.input("x", {2, 3});
  int w = b.constant_int8("w", {4, 3}, q, {scale});
  int bias = b.constant("b", {4}, kBias);
  int y = b.output("y");
  b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, bias}, {y}, fc_options());
  auto out = run(b, {Values::f32({2, 3}, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, TensorType::FLOAT32);
  EXPECT_TRUE(floats_near(reference_hybrid_fc(x, q, {scale}, kBias, 4, 3), out[0].floats(), 1e-6f));
  // Close to, but not, the float product of the dequantized weights.
  EXPECT_TRUE(floats_near(reference_fc(x, dequantized, kBias, 4, 3), out[0].floats(), 5e-2f));
}

TEST(FullyConnectedTest, HybridInt8WeightsPerChannel) {
  const std::vector<int8_t> q = {10, -20, 127, -128, 0, 64, 5, 5, -5, 100, -100, 1};
  const Floats scales = {0.01f, 0.5f, 0.003f, 0.2f};
  Floats dequantized;
  for (size_t i = 0; i < q.size(); ++i) dequantized.push_back(scales[i / 3] * q[i]);
  const Floats x = {0.5f, -1.f, 2.f};
  OpModelBuilder b;
  int in = b.input("x", {1, 3});
  int w = b.constant_int8("w", {4, 3}, q, scales);
  int bias = b.constant("b", {4}, kBias);
  int y = b.output("y");
  b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, bias}, {y}, fc_options());
  auto out = run(b, {Values::f32({1, 3}, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(floats_near(reference_hybrid_fc(x, q, scales, kBias, 4, 3), out[0].floats(), 1e-6f));
  EXPECT_TRUE(floats_near(reference_fc(x, dequantized, kBias, 4, 3), out[0].floats(), 0.5f));
}

TEST(FullyConnectedTest, RejectsBadShapesAndScaleCounts) {
  {
    OpModelBuilder b;
    int in = b.input("x", {2, 5});
    int w = b.constant("w", {4, 3}, kWeights);
    int y = b.output("y");
    b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, -1}, {y}, fc_options());
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("input 'x' [2,5] is not rows of 3 features"), std::string::npos) << error;
  }
  {
    OpModelBuilder b;
    int in = b.input("x", {1, 3});
    int w = b.constant("w", {4, 3}, kWeights);
    int bias = b.constant("b", {3}, {1, 2, 3});
    int y = b.output("y");
    b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, bias}, {y}, fc_options());
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("bias 'b' has 3 values, expected 4"), std::string::npos) << error;
  }
  {
    OpModelBuilder b;
    int in = b.input("x", {1, 3});
    int w = b.constant_int8("w", {4, 3}, std::vector<int8_t>(12, 1), {0.1f, 0.2f});
    int y = b.output("y");
    b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, -1}, {y}, fc_options());
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("INT8 weights 'w' need 1 or 4 scales"), std::string::npos) << error;
  }
  {  // A weight zero point beyond int8 overflowed the int32 offset arithmetic (fuzz finding).
    OpModelBuilder b;
    int in = b.input("x", {1, 3});
    int w = b.constant_int8("w", {4, 3}, std::vector<int8_t>(12, 1), {0.1f}, {268435457});
    int y = b.output("y");
    b.op(BuiltinOperator::FULLY_CONNECTED, {in, w, -1}, {y}, fc_options());
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("INT8 weights 'w': zero point 268435457 is outside INT8's [-128, 127]"),
              std::string::npos)
        << error;
  }
}

}  // namespace
}  // namespace gruwb::test
