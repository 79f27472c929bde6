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

#if GRUWB_BATCHED_KERNELS
// One tile of gemm_accumulate: kRows rows of C x kVectors 16-lane vectors (the last masked to
// `tail`), accumulated in registers over all of k: per k, kVectors loads of B's row, kRows
// broadcasts of A and kRows x kVectors FMAs.
template <int kRows, int kVectors>
GRUWB_AVX512 void gemm_tile(int32_t depth, const float* a, int64_t a_row, int64_t a_col,
                            const float* b, int64_t ldb, float* c, int64_t ldc, __mmask16 tail) {
  __m512 acc[kRows][kVectors];
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_setzero_ps();
  }
  for (int32_t k = 0; k < depth; ++k) {
    const float* bk = b + k * ldb;
    __m512 bv[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      bv[v] = v == kVectors - 1 ? _mm512_maskz_loadu_ps(tail, bk + 16 * v)
                                : _mm512_loadu_ps(bk + 16 * v);
    }
    const float* ak = a + k * a_col;
#pragma GCC unroll 8
    for (int i = 0; i < kRows; ++i) {
      const __m512 ai = _mm512_set1_ps(ak[i * a_row]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i) {
    float* ci = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      const __mmask16 m = v == kVectors - 1 ? tail : static_cast<__mmask16>(0xffff);
      const __m512 old = _mm512_maskz_loadu_ps(m, ci + 16 * v);
      _mm512_mask_storeu_ps(ci + 16 * v, m, _mm512_add_ps(old, acc[i][v]));
    }
  }
}

using GemmTile = void (*)(int32_t, const float*, int64_t, int64_t, const float*, int64_t, float*,
                          int64_t, __mmask16);

// Rows per tile: 6 x 4 vectors = 24 accumulators (of 32 zmm registers), 8 for narrower tiles.
constexpr int kTileRows = 6;

template <int kVectors>
GemmTile gemm_tile_for(int rows) {
  switch (rows) {
    case 1: return gemm_tile<1, kVectors>;
    case 2: return gemm_tile<2, kVectors>;
    case 3: return gemm_tile<3, kVectors>;
    case 4: return gemm_tile<4, kVectors>;
    case 5: return gemm_tile<5, kVectors>;
    default: return gemm_tile<6, kVectors>;
  }
}
#endif

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

#if GRUWB_BATCHED_KERNELS
GRUWB_AVX512 void gemm_accumulate_avx512(int32_t rows, int32_t cols, int32_t depth, const float* a,
                                         int64_t a_row, int64_t a_col, const float* b, int64_t ldb,
                                         float* c, int64_t ldc) {
  for (int32_t n0 = 0; n0 < cols; n0 += 64) {
    const int32_t width = cols - n0 < 64 ? cols - n0 : 64;
    const int vectors = (width + 15) / 16;
    const __mmask16 tail = static_cast<__mmask16>((1u << (width - 16 * (vectors - 1))) - 1u);
    for (int32_t i0 = 0; i0 < rows; i0 += kTileRows) {
      const int tile_rows = rows - i0 < kTileRows ? rows - i0 : kTileRows;
      GemmTile tile = vectors == 1   ? gemm_tile_for<1>(tile_rows)
                      : vectors == 2 ? gemm_tile_for<2>(tile_rows)
                      : vectors == 3 ? gemm_tile_for<3>(tile_rows)
                                     : gemm_tile_for<4>(tile_rows);
      tile(depth, a + i0 * a_row, a_row, a_col, b + n0, ldb, c + i0 * ldc + n0, ldc, tail);
    }
  }
}
#endif

}  // namespace gruwb
#endif
