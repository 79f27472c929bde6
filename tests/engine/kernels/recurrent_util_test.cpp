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

#if defined(GRUWB_CLONED_HOT_LOOPS)
// The column-major product fused GRUs use for inference on AVX-512 hosts
// against the row product (matvec_rows_portable) and double sums: rows that
// are not a multiple of 16, more than one pass of 16 vectors (rows > 256),
// more than 128 columns, with and without bias, assigning and accumulating.
TEST(RecurrentUtilTest, PackedColumnProductMatchesRowProduct) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512 on this machine";
  const Shape2 shapes[] = {{180, 60},  {1, 1},    {15, 3},  {17, 200}, {384, 128},
                           {390, 130}, {240, 60}, {513, 7}, {31, 129}};
  uint32_t seed = 40;
  for (const Shape2& shape : shapes) {
    const int32_t rows = shape.rows, cols = shape.cols;
    const std::vector<float> w = random_values(static_cast<size_t>(rows) * cols, ++seed);
    const std::vector<float> x = random_values(static_cast<size_t>(cols), ++seed);
    const std::vector<float> bias = random_values(static_cast<size_t>(rows), ++seed);
    const std::vector<float> start = random_values(static_cast<size_t>(rows), ++seed);
    size_t bytes = 0;
    ASSERT_TRUE(column_major_bytes(rows, cols, &bytes).ok());
    ASSERT_EQ(bytes, sizeof(float) * static_cast<size_t>((rows + 15) / 16 * 16) * cols + 64);
    // One float past the copy, to see that nothing writes there.
    std::vector<float> packed(bytes / sizeof(float) + 1, 7.f);
    const ColumnMajorWeights columns = pack_column_major(w.data(), rows, cols, packed.data());
    EXPECT_EQ(packed.back(), 7.f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(columns.data) % 64, 0u);
    for (int mode = 0; mode < 3; ++mode) {  // no bias, bias, accumulate into `start`
      const float* b = mode == 1 ? bias.data() : nullptr;
      const bool accumulate = mode == 2;
      std::vector<float> by_rows = start, by_columns = start;
      by_columns.push_back(5.f);  // guard past the output
      matvec_rows_portable(w.data(), rows, cols, x.data(), b, accumulate, by_rows.data());
      matvec_columns_avx512(columns, x.data(), b, accumulate, by_columns.data());
      EXPECT_EQ(by_columns.back(), 5.f) << rows << "x" << cols << " wrote past the output";
      by_columns.pop_back();
      std::vector<double> want(static_cast<size_t>(rows));
      for (int32_t r = 0; r < rows; ++r) {
        double sum = accumulate ? start[r] : (b ? b[r] : 0.0);
        for (int32_t c = 0; c < cols; ++c) {
          sum += static_cast<double>(w[static_cast<size_t>(r) * cols + c]) * x[c];
        }
        want[r] = sum;
      }
      expect_near_all(by_columns, want, 1e-5, "packed columns");
      for (int32_t r = 0; r < rows; ++r) {
        ASSERT_NEAR(by_columns[r], by_rows[r], 1e-5 * (1.0 + std::fabs(want[r])))
            << rows << "x" << cols << " mode " << mode << " row " << r;
      }
    }
  }
}

// vector_sigmoid/vector_tanh take a 16-lane version on AVX-512 hosts: it
// agrees with the scalar fast_sigmoid/fast_tanh within rounding over the
// whole range, the clamps, a masked tail and NaN.
TEST(RecurrentUtilTest, SixteenLaneActivationsMatchTheScalarOnes) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512 on this machine";
  std::vector<float> x;
  for (float v = -100.f; v <= 100.f; v += 0.037f) x.push_back(v);
  for (float v : {0.f, -0.f, 1e-30f, -1e-30f, 87.5f, -87.5f, 1e30f, -1e30f, INFINITY, -INFINITY}) {
    x.push_back(v);
  }
  x.push_back(NAN);  // 5417 values: the last 16-lane block is masked
  std::vector<float> sigmoid = x, tanh_values = x;
  vector_sigmoid_avx512(sigmoid.data(), static_cast<int32_t>(x.size()));
  vector_tanh_avx512(tanh_values.data(), static_cast<int32_t>(x.size()));
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    ASSERT_NEAR(sigmoid[i], fast_sigmoid(x[i]), 1e-6f * std::fabs(fast_sigmoid(x[i])) + 1e-30f)
        << "sigmoid(" << x[i] << ")";
    ASSERT_NEAR(tanh_values[i], fast_tanh(x[i]), 1e-6f * std::fabs(fast_tanh(x[i])) + 1e-30f)
        << "tanh(" << x[i] << ")";
    ASSERT_NEAR(tanh_values[i], std::tanh(static_cast<double>(x[i])), 1e-6) << x[i];
  }
  EXPECT_TRUE(std::isnan(sigmoid.back()));
  EXPECT_TRUE(std::isnan(tanh_values.back()));
}

// The Keras-default GRU step on 16 lanes against the same step in double
// precision (H = 60: a masked last block), in place as well.
TEST(RecurrentUtilTest, GruDefaultGatesMatchTheStepDoneInDouble) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512 on this machine";
  const int32_t units = 60;
  const std::vector<float> input_part = random_values(3 * units, 11);
  const std::vector<float> recurrent_part = random_values(3 * units, 12);
  const std::vector<float> h_prev = random_values(units, 13);
  std::vector<double> want(units);
  for (int32_t i = 0; i < units; ++i) {
    const auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    const double z = sigmoid(double{input_part[i]} + recurrent_part[i]);
    const double r = sigmoid(double{input_part[units + i]} + recurrent_part[units + i]);
    const double n = std::tanh(input_part[2 * units + i] + r * recurrent_part[2 * units + i]);
    want[i] = z * h_prev[i] + (1.0 - z) * n;
  }
  std::vector<float> h_next(units + 1, 5.f);  // a guard past the state
  gru_default_gates_avx512(input_part.data(), recurrent_part.data(), h_prev.data(), h_next.data(),
                           units);
  EXPECT_EQ(h_next.back(), 5.f);
  h_next.pop_back();
  expect_near_all(h_next, want, 1e-6, "gate math");
  std::vector<float> in_place = h_prev;
  gru_default_gates_avx512(input_part.data(), recurrent_part.data(), in_place.data(),
                           in_place.data(), units);
  EXPECT_EQ(in_place, h_next);
}

TEST(RecurrentUtilTest, PackedCopySizeRefusesOverflow) {
  size_t bytes = 0;
  EXPECT_FALSE(column_major_bytes(INT32_MAX, INT32_MAX, &bytes).ok());
  EXPECT_FALSE(column_major_bytes(INT32_MAX - 3, 1, &bytes).ok());  // padding past int32
  EXPECT_FALSE(column_major_bytes(-1, 4, &bytes).ok());
  ASSERT_TRUE(column_major_bytes(180, 60, &bytes).ok());
  EXPECT_EQ(bytes, 192u * 60u * sizeof(float) + 64u);  // + room to align to 64 bytes
}
#endif

}  // namespace
}  // namespace gruwb
