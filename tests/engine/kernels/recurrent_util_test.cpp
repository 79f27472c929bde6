// The shared products of the recurrent kernels (recurrent_util) against plain
// double-precision loops, at the reference model's sizes and at edge shapes
// (widths that are not a multiple of the register block, rows whose block
// would run past the matrix end).

#include "engine/kernels/recurrent_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace gruwb {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(rng);
  return v;
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want,
                     double tolerance, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tolerance * (1.0 + std::fabs(want[i]))) << what << " at " << i;
  }
}

struct Shape2 {
  int32_t rows;
  int32_t cols;
};

// Includes the reference GRU's W_h (180x60) and its transpose (60x180),
// widths around the 64-float block and matrices narrower than one block.
const Shape2 kShapes[] = {{1, 1},   {3, 180}, {60, 180}, {180, 60}, {180, 3}, {7, 65},
                          {5, 130}, {2, 64},  {70, 128}, {1, 200},  {9, 7},   {64, 1}};

TEST(RecurrentUtilTest, TransposedProductMatchesPlainSums) {
  uint32_t seed = 1;
  for (const Shape2& s : kShapes) {
    const std::vector<float> w = random_values(static_cast<size_t>(s.rows) * s.cols, seed++);
    const std::vector<float> g = random_values(static_cast<size_t>(s.rows), seed++);
    std::vector<float> out = random_values(static_cast<size_t>(s.cols), seed++);
    std::vector<double> want(out.begin(), out.end());
    for (int32_t r = 0; r < s.rows; ++r) {
      for (int32_t c = 0; c < s.cols; ++c) want[c] += static_cast<double>(w[r * s.cols + c]) * g[r];
    }
    add_transposed_product(w.data(), s.rows, s.cols, g.data(), out.data());
    SCOPED_TRACE(testing::Message() << s.rows << "x" << s.cols);
    expect_near_all(out, want, 1e-5, "out");
  }
}

TEST(RecurrentUtilTest, TransposedProductReadsNothingPastTheMatrix) {
  // The matrix ends at the end of its allocation: a block read past it would
  // show up under ASan, and the lanes past `cols` must not reach `out`.
  const int32_t rows = 5, cols = 70;
  std::vector<float> w = random_values(static_cast<size_t>(rows) * cols, 9);
  const std::vector<float> g = random_values(rows, 10);
  std::vector<float> out(cols + 8, 0.f);
  add_transposed_product(w.data(), rows, cols, g.data(), out.data());
  for (int32_t c = cols; c < cols + 8; ++c) EXPECT_EQ(out[c], 0.f) << "lane " << c;
}

TEST(RecurrentUtilTest, OuterStepsMatchPlainSums) {
  struct Case {
    int32_t rows, cols, steps;
  };
  const Case cases[] = {{180, 60, 8}, {180, 60, 3}, {12, 4, 5}, {180, 3, 8},
                        {7, 65, 1},   {9, 13, 12},  {9, 14, 13}};
  uint32_t seed = 100;
  for (const Case& k : cases) {
    // Strided like the GRU's tape: step s at g + s * g_stride.
    const int64_t g_stride = k.rows + 3, v_stride = k.cols + 5;
    const std::vector<float> g = random_values(static_cast<size_t>(g_stride * k.steps), seed++);
    const std::vector<float> v = random_values(static_cast<size_t>(v_stride * k.steps), seed++);
    std::vector<float> grad = random_values(static_cast<size_t>(k.rows) * k.cols, seed++);
    std::vector<double> want(grad.begin(), grad.end());
    for (int32_t s = 0; s < k.steps; ++s) {
      for (int32_t r = 0; r < k.rows; ++r) {
        for (int32_t c = 0; c < k.cols; ++c) {
          want[r * k.cols + c] += static_cast<double>(g[s * g_stride + r]) * v[s * v_stride + c];
        }
      }
    }
    add_outer_steps(grad.data(), k.rows, k.cols, g.data(), g_stride, v.data(), v_stride, k.steps);
    SCOPED_TRACE(testing::Message() << k.rows << "x" << k.cols << " over " << k.steps);
    expect_near_all(grad, want, 1e-5, "grad");
  }
}

}  // namespace
}  // namespace gruwb
