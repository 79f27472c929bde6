// matvec_rows for x86-64 hosts with AVX-512 (matmul.h; picked at run time by
// matvec_rows in recurrent_util.cpp). The Cortex-M4F and other hosts build
// this file empty.
//
// Why a hand-written version: the reference GRU's recurrent product
// (180x60, 43 KB, more than L1) is bound by loads. Holding all of x in
// registers (up to 8 zmm for 128 columns) halves the loads per row against
// the portable 4-row form, and 16-lane rows need no 4-column remainder:
// BM_Matvec180x60 0.40 us against 0.65 us for the AVX2 clone.

#include "engine/kernels/recurrent_util.h"

#if defined(GRUWB_CLONED_HOT_LOOPS)
#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*,
// which -Wmaybe-uninitialized flags inside the headers (Clang has no such
// warning).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define GRUWB_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,fma")))

namespace gruwb {
namespace {

// The 8 horizontal sums of acc[0..7], in order.
GRUWB_AVX512 inline __m256 horizontal_sums8(const __m512* acc) {
  __m256 halves[8];
  for (int k = 0; k < 8; ++k) {
    halves[k] =
        _mm256_add_ps(_mm512_castps512_ps256(acc[k]),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[k]), 1)));
  }
  const __m256 pairs01 = _mm256_hadd_ps(halves[0], halves[1]);
  const __m256 pairs23 = _mm256_hadd_ps(halves[2], halves[3]);
  const __m256 pairs45 = _mm256_hadd_ps(halves[4], halves[5]);
  const __m256 pairs67 = _mm256_hadd_ps(halves[6], halves[7]);
  const __m256 quads0123 = _mm256_hadd_ps(pairs01, pairs23);  // rows 0-3 in each 128-bit lane
  const __m256 quads4567 = _mm256_hadd_ps(pairs45, pairs67);  // rows 4-7 in each 128-bit lane
  return _mm256_add_ps(_mm256_permute2f128_ps(quads0123, quads4567, 0x20),
                       _mm256_permute2f128_ps(quads0123, quads4567, 0x31));
}

// kBlocks 16-column blocks cover cols (the last one masked to its width).
template <int kBlocks>
GRUWB_AVX512 void matvec_blocks(const float* w, int32_t rows, int32_t cols, const float* x,
                                const float* bias, bool accumulate, float* out) {
  const __mmask16 tail = static_cast<__mmask16>((1u << (cols - (kBlocks - 1) * 16)) - 1u);
  __m512 xv[kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    xv[b] =
        b == kBlocks - 1 ? _mm512_maskz_loadu_ps(tail, x + 16 * b) : _mm512_loadu_ps(x + 16 * b);
  }
  auto row_product = [&](const float* row) GRUWB_AVX512 {
    __m512 sum = _mm512_setzero_ps();
    for (int b = 0; b < kBlocks; ++b) {
      const __m512 wv = b == kBlocks - 1 ? _mm512_maskz_loadu_ps(tail, row + 16 * b)
                                         : _mm512_loadu_ps(row + 16 * b);
      sum = _mm512_fmadd_ps(wv, xv[b], sum);
    }
    return sum;
  };
  int32_t r = 0;
  for (; r + 8 <= rows; r += 8) {
    __m512 acc[8];
    for (int k = 0; k < 8; ++k) acc[k] = row_product(w + static_cast<int64_t>(r + k) * cols);
    const __m256 base = accumulate ? _mm256_loadu_ps(out + r)
                                   : (bias ? _mm256_loadu_ps(bias + r) : _mm256_setzero_ps());
    _mm256_storeu_ps(out + r, _mm256_add_ps(base, horizontal_sums8(acc)));
  }
  for (; r < rows; ++r) {
    const float base = accumulate ? out[r] : (bias ? bias[r] : 0.f);
    out[r] = base + _mm512_reduce_add_ps(row_product(w + static_cast<int64_t>(r) * cols));
  }
}

}  // namespace

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
}

GRUWB_AVX512 void matvec_rows_avx512(const float* w, int32_t rows, int32_t cols, const float* x,
                                     const float* bias, bool accumulate, float* out) {
  switch ((cols + 15) / 16) {
    case 1: matvec_blocks<1>(w, rows, cols, x, bias, accumulate, out); break;
    case 2: matvec_blocks<2>(w, rows, cols, x, bias, accumulate, out); break;
    case 3: matvec_blocks<3>(w, rows, cols, x, bias, accumulate, out); break;
    case 4: matvec_blocks<4>(w, rows, cols, x, bias, accumulate, out); break;
    case 5: matvec_blocks<5>(w, rows, cols, x, bias, accumulate, out); break;
    case 6: matvec_blocks<6>(w, rows, cols, x, bias, accumulate, out); break;
    case 7: matvec_blocks<7>(w, rows, cols, x, bias, accumulate, out); break;
    case 8: matvec_blocks<8>(w, rows, cols, x, bias, accumulate, out); break;
    default: matvec_rows_portable(w, rows, cols, x, bias, accumulate, out); break;
  }
}

}  // namespace gruwb
#endif
