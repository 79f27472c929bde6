// SOFTMAX over the last dimension with beta; large logits stay finite.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

using Floats = std::vector<float>;

Floats reference_softmax(const Floats& x, int depth, float beta) {
  Floats y;
  for (size_t row = 0; row < x.size() / static_cast<size_t>(depth); ++row) {
    double sum = 0;
    for (int i = 0; i < depth; ++i) sum += std::exp(static_cast<double>(beta) * x[row * depth + i]);
    for (int i = 0; i < depth; ++i) {
      y.push_back(
          static_cast<float>(std::exp(static_cast<double>(beta) * x[row * depth + i]) / sum));
    }
  }
  return y;
}

Values softmax(const std::vector<int32_t>& shape, const Floats& x, float beta) {
  OpModelBuilder b;
  int in = b.input("logits", shape);
  int y = b.output("probabilities");
  fb::SoftmaxOptionsT options;
  options.beta = beta;
  b.op(BuiltinOperator::SOFTMAX, {in}, {y}, options);
  auto out = run(b, {Values::f32(shape, x)});
  return out.empty() ? Values{} : out[0];
}

TEST(SoftmaxTest, RowsWithBeta) {
  const Floats x = {1.f, 2.f, 3.f, 0.5f, -1.f, 0.f, 4.f, 4.f};
  for (float beta : {1.f, 0.5f, 2.f}) {
    Values y = softmax({2, 4}, x, beta);
    EXPECT_EQ(y.shape, (std::vector<int32_t>{2, 4}));
    EXPECT_TRUE(floats_near(reference_softmax(x, 4, beta), y.floats(), 1e-6f)) << beta;
  }
}

TEST(SoftmaxTest, HigherRankUsesTheLastDimension) {
  const Floats x = iota_floats(12, 0.3f, -2.f);
  Values y = softmax({2, 2, 3}, x, 1.f);
  EXPECT_EQ(y.shape, (std::vector<int32_t>{2, 2, 3}));
  EXPECT_TRUE(floats_near(reference_softmax(x, 3, 1.f), y.floats(), 1e-6f));
}

TEST(SoftmaxTest, LargeLogitsDoNotOverflow) {
  Values y = softmax({1, 3}, {1000.f, 1001.f, 1002.f}, 1.f);
  // Same as softmax(0, 1, 2).
  EXPECT_TRUE(floats_near(reference_softmax({0.f, 1.f, 2.f}, 3, 1.f), y.floats(), 1e-6f));
}

}  // namespace
}  // namespace gruwb::test
