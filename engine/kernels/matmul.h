#pragma once
// The one inner loop every dense op shares: out[r] += dot(w[r, :], x).
// Eight independent partial sums let the compiler vectorize without
// -ffast-math (a float reduction cannot otherwise be reordered).

#include <cstdint>

namespace gruwb {

inline float dot(const float* a, const float* b, int32_t n) {
  float partial[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int32_t j = 0; j < 8; ++j) partial[j] += a[i + j] * b[i + j];
  }
  float sum = ((partial[0] + partial[4]) + (partial[1] + partial[5])) +
              ((partial[2] + partial[6]) + (partial[3] + partial[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// out[r] = (accumulate ? out[r] : bias ? bias[r] : 0) + W[r, :] . x for a
// float [rows, cols] matrix. The one matrix-vector product of every dense op
// (FULLY_CONNECTED, the recurrent kernels): it works on 4 rows at once (x is
// loaded once for all four) with 8 partial sums per row (a 4-column remainder
// joins the first 4). On x86-64 Linux hosts an AVX2 clone is picked at load
// time; the compiler fuses its multiply-adds (FMA), so its last bits can
// differ from the SSE2 build's. Defined in recurrent_util.cpp.
void matvec_rows(const float* w, int32_t rows, int32_t cols, const float* x, const float* bias,
                 bool accumulate, float* out);

// out[r] = (bias ? bias[r] : 0) + dot(w + r * cols, x, cols) for r < rows.
inline void matvec(const float* w, int32_t rows, int32_t cols, const float* x, const float* bias,
                   float* out) {
  matvec_rows(w, rows, cols, x, bias, false, out);
}

}  // namespace gruwb
