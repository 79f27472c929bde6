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

// kVectors 16-row vectors of out (the last masked to `tail`) over all columns
// of a column-major block (column j at w + j * stride): x[j] broadcast, one
// multiply-add per vector, the sums added to `base` (bias, out or nothing)
// at the end as matvec_blocks does.
template <int kVectors>
GRUWB_AVX512 void column_block(const float* w, int64_t stride, int32_t cols, const float* x,
                               const float* base, float* out, __mmask16 tail) {
  __m512 acc[kVectors];
#pragma GCC unroll 24
  for (int v = 0; v < kVectors; ++v) acc[v] = _mm512_setzero_ps();
  for (int32_t j = 0; j < cols; ++j) {
    const __m512 xj = _mm512_set1_ps(x[j]);
    const float* column = w + j * stride;
#pragma GCC unroll 24
    for (int v = 0; v < kVectors; ++v) {
      acc[v] = _mm512_fmadd_ps(_mm512_loadu_ps(column + 16 * v), xj, acc[v]);
    }
  }
#pragma GCC unroll 24
  for (int v = 0; v < kVectors; ++v) {
    const __mmask16 m = v == kVectors - 1 ? tail : static_cast<__mmask16>(0xffff);
    const __m512 sum =
        base ? _mm512_add_ps(_mm512_maskz_loadu_ps(m, base + 16 * v), acc[v]) : acc[v];
    _mm512_mask_storeu_ps(out + 16 * v, m, sum);
  }
}

using ColumnBlock = void (*)(const float*, int64_t, int32_t, const float*, const float*, float*,
                             __mmask16);

ColumnBlock column_block_for(int vectors) {
  switch (vectors) {
    case 1: return column_block<1>;
    case 2: return column_block<2>;
    case 3: return column_block<3>;
    case 4: return column_block<4>;
    case 5: return column_block<5>;
    case 6: return column_block<6>;
    case 7: return column_block<7>;
    case 8: return column_block<8>;
    case 9: return column_block<9>;
    case 10: return column_block<10>;
    case 11: return column_block<11>;
    case 12: return column_block<12>;
    case 13: return column_block<13>;
    case 14: return column_block<14>;
    case 15: return column_block<15>;
    case 16: return column_block<16>;
    case 17: return column_block<17>;
    case 18: return column_block<18>;
    case 19: return column_block<19>;
    case 20: return column_block<20>;
    case 21: return column_block<21>;
    case 22: return column_block<22>;
    case 23: return column_block<23>;
    default: return column_block<24>;
  }
}

// fast_exp (recurrent_util.h) on 16 lanes, operation for operation (with the
// multiply-adds GCC contracts in the x86-64-v4 clone), NaN passed through.
GRUWB_AVX512 inline __m512 exp16(__m512 x) {
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  const __m512 clamped =
      _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.f)), _mm512_set1_ps(88.f));
  const __m512 round = _mm512_set1_ps(12582912.f);
  const __m512 k =
      _mm512_sub_ps(_mm512_fmadd_ps(clamped, _mm512_set1_ps(1.44269504f), round), round);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), clamped);
  r = _mm512_fmadd_ps(k, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.f / 720.f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 120.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 24.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 6.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  const __m512i bits =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23);
  return _mm512_mask_mov_ps(_mm512_mul_ps(p, _mm512_castsi512_ps(bits)), nan, x);
}

GRUWB_AVX512 inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.f);
  const __m512 negated =
      _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(negated)));
}

GRUWB_AVX512 inline __m512 tanh16(__m512 x) {
  const __m512i sign_bit = _mm512_set1_epi32(INT32_MIN);
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), sign_bit);
  const __m512 a = _mm512_castsi512_ps(_mm512_andnot_si512(sign_bit, _mm512_castps_si512(x)));
  const __m512 e = exp16(_mm512_mul_ps(_mm512_set1_ps(-2.f), a));
  const __m512 one = _mm512_set1_ps(1.f);
  const __m512 t = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(t), sign));
}

template <__m512 (*kFunction)(__m512)>
GRUWB_AVX512 inline void apply16(float* x, int32_t n) {
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, kFunction(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(x + i, m, kFunction(_mm512_maskz_loadu_ps(m, x + i)));
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

GRUWB_AVX512 void matvec_columns_avx512(const ColumnMajorWeights& w, const float* x,
                                        const float* bias, bool accumulate, float* out) {
  const int32_t vectors = w.padded_rows / 16;
  const int32_t per_pass = w.pass_vectors;
  const int32_t passes = per_pass == 0 ? 0 : (vectors + per_pass - 1) / per_pass;
  const bool backward = w.passes_backward;
  w.passes_backward = !backward;
  for (int32_t i = 0; i < passes; ++i) {
    const int32_t v0 = per_pass * (backward ? passes - 1 - i : i);
    const int32_t n = vectors - v0 < per_pass ? vectors - v0 : per_pass;
    const int32_t first_row = 16 * v0;
    const int32_t last_rows = w.rows - 16 * (v0 + n - 1);  // 1..16 in the last pass, else 16
    const __mmask16 tail = last_rows >= 16 ? static_cast<__mmask16>(0xffff)
                                           : static_cast<__mmask16>((1u << last_rows) - 1u);
    const float* base = accumulate ? out + first_row : (bias ? bias + first_row : nullptr);
    // Each pass whole, column after column (pack_column_major); every pass before it is full.
    const float* pass = w.data + static_cast<int64_t>(16) * v0 * w.cols;
    column_block_for(n)(pass, 16 * n, w.cols, x, base, out + first_row, tail);
  }
}

GRUWB_AVX512 void vector_sigmoid_avx512(float* x, int32_t n) { apply16<sigmoid16>(x, n); }
GRUWB_AVX512 void vector_tanh_avx512(float* x, int32_t n) { apply16<tanh16>(x, n); }

GRUWB_AVX512 void lstm_default_gates_avx512(const float* gates, float* c, float* h, int32_t units) {
  for (int32_t j = 0; j < units; j += 16) {
    const __mmask16 m = units - j >= 16 ? static_cast<__mmask16>(0xffff)
                                        : static_cast<__mmask16>((1u << (units - j)) - 1u);
    const __m512 i = sigmoid16(_mm512_maskz_loadu_ps(m, gates + j));
    const __m512 f = sigmoid16(_mm512_maskz_loadu_ps(m, gates + units + j));
    const __m512 g = tanh16(_mm512_maskz_loadu_ps(m, gates + 2 * units + j));
    const __m512 o = sigmoid16(_mm512_maskz_loadu_ps(m, gates + 3 * units + j));
    const __m512 cell = _mm512_fmadd_ps(f, _mm512_maskz_loadu_ps(m, c + j), _mm512_mul_ps(i, g));
    _mm512_mask_storeu_ps(c + j, m, cell);
    _mm512_mask_storeu_ps(h + j, m, _mm512_mul_ps(o, tanh16(cell)));
  }
}

namespace {

// 16 floats at p, whole or masked to m: a masked load does not take the value
// of the whole-vector store before it (the state's, the product's) forwarded
// but waits for it to reach L1.
template <bool kWhole>
GRUWB_AVX512 inline __m512 load16(const float* p, __mmask16 m) {
  return kWhole ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
}

template <bool kWhole>
GRUWB_AVX512 inline __m512 gru_default_gates16(const float* x, const float* u, const float* h,
                                               int32_t units, __mmask16 m) {
  const __m512 z = sigmoid16(_mm512_add_ps(load16<kWhole>(x, m), load16<kWhole>(u, m)));
  const __m512 r =
      sigmoid16(_mm512_add_ps(load16<kWhole>(x + units, m), load16<kWhole>(u + units, m)));
  const __m512 n = tanh16(
      _mm512_fmadd_ps(r, load16<kWhole>(u + 2 * units, m), load16<kWhole>(x + 2 * units, m)));
  const __m512 keep = _mm512_sub_ps(_mm512_set1_ps(1.f), z);
  return _mm512_fmadd_ps(z, load16<kWhole>(h, m), _mm512_mul_ps(keep, n));
}

}  // namespace

GRUWB_AVX512 void gru_default_gates_avx512(const float* input_part, const float* recurrent_part,
                                           const float* h_prev, float* h_next, int32_t units) {
  int32_t i = 0;
  for (; i + 16 <= units; i += 16) {
    _mm512_storeu_ps(h_next + i, gru_default_gates16<true>(input_part + i, recurrent_part + i,
                                                           h_prev + i, units, 0xffff));
  }
  if (i < units) {
    const __mmask16 m = static_cast<__mmask16>((1u << (units - i)) - 1u);
    _mm512_mask_storeu_ps(
        h_next + i, m,
        gru_default_gates16<false>(input_part + i, recurrent_part + i, h_prev + i, units, m));
  }
}

GRUWB_AVX512 void gru_default_gate_gradients_avx512(const GruGateGradients16& g, int32_t units) {
  const __m512 one = _mm512_set1_ps(1.f);
  for (int32_t i = 0; i < units; i += 16) {
    const __mmask16 m = units - i >= 16 ? static_cast<__mmask16>(0xffff)
                                        : static_cast<__mmask16>((1u << (units - i)) - 1u);
    const __m512 d = _mm512_maskz_loadu_ps(m, g.d + i);
    const __m512 h_prev = _mm512_maskz_loadu_ps(m, g.h_prev + i);
    const __m512 z = _mm512_maskz_loadu_ps(m, g.z + i);
    const __m512 r = _mm512_maskz_loadu_ps(m, g.r + i);
    const __m512 n = _mm512_maskz_loadu_ps(m, g.n + i);
    const __m512 rc = _mm512_maskz_loadu_ps(m, g.rc + i);
    const __m512 one_minus_z = _mm512_sub_ps(one, z);
    const __m512 dz =
        _mm512_mul_ps(_mm512_mul_ps(d, _mm512_sub_ps(h_prev, n)), _mm512_mul_ps(z, one_minus_z));
    const __m512 dn =
        _mm512_mul_ps(_mm512_mul_ps(d, one_minus_z), _mm512_fnmadd_ps(n, n, one));  // 1 - n^2
    const __m512 dr = _mm512_mul_ps(_mm512_mul_ps(dn, rc), _mm512_mul_ps(r, _mm512_sub_ps(one, r)));
    _mm512_mask_storeu_ps(g.dz + i, m, dz);
    _mm512_mask_storeu_ps(g.dn + i, m, dn);
    _mm512_mask_storeu_ps(g.dh_prev + i, m, _mm512_mul_ps(d, z));
    _mm512_mask_storeu_ps(g.dr + i, m, dr);
    _mm512_mask_storeu_ps(g.d_recurrent_candidate + i, m, _mm512_mul_ps(dn, r));
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
