// The dense products of the recurrent kernels for Cortex-M cores with a
// single-precision FPU that fuses multiply-adds (M4F, M7, M33; recurrent_util.h
// GRUWB_CORTEX_M_FP_KERNELS). Other builds compile this file empty.
//
// Why hand-written: compiled at -Os, the portable 4-row matvec_rows keeps its
// 32 partial sums on the stack (a Cortex-M has 32 single-precision registers
// in all) and costs 6 instructions per multiply-add. Here the partial sums stay
// in registers and each VLDM loads 8 floats in one instruction: 21 instructions
// per 16 multiply-adds (the backward pass: 13 per 8 in the transposed product,
// 86 per 64 in the weight gradients' outer products, which add the 8 steps of
// a pass one after another instead of as a tree: the last bits differ from the
// portable build's there). Every row is summed in exactly the order of
// matvec_rows_portable (8 fused partial sums per row, then the same 4-column
// half block, reduction tree and tail), so results are bit-identical to it.

#include "engine/kernels/recurrent_util.h"

#if defined(GRUWB_CORTEX_M_FP_KERNELS)

namespace gruwb {
namespace {

const float kZeros[16] = {};

// acc0[j] = sum over blocks b of w0[8b + j] * x[8b + j] (fused, in b order),
// acc1 likewise for w1; blocks >= 1.
void two_row_partials(const float* w0, const float* w1, const float* x, int32_t blocks, float* acc0,
                      float* acc1) {
  asm volatile(
      "vldmia %[zeros], {s0-s15}\n"
      "1:\n"
      "vldmia %[x]!, {s16-s23}\n"
      "vldmia %[w0]!, {s24-s31}\n"
      "vfma.f32 s0, s24, s16\n"
      "vfma.f32 s1, s25, s17\n"
      "vfma.f32 s2, s26, s18\n"
      "vfma.f32 s3, s27, s19\n"
      "vfma.f32 s4, s28, s20\n"
      "vfma.f32 s5, s29, s21\n"
      "vfma.f32 s6, s30, s22\n"
      "vfma.f32 s7, s31, s23\n"
      "vldmia %[w1]!, {s24-s31}\n"
      "vfma.f32 s8, s24, s16\n"
      "vfma.f32 s9, s25, s17\n"
      "vfma.f32 s10, s26, s18\n"
      "vfma.f32 s11, s27, s19\n"
      "vfma.f32 s12, s28, s20\n"
      "vfma.f32 s13, s29, s21\n"
      "vfma.f32 s14, s30, s22\n"
      "vfma.f32 s15, s31, s23\n"
      "subs %[blocks], %[blocks], #1\n"
      "bne 1b\n"
      "vstmia %[acc0], {s0-s7}\n"
      "vstmia %[acc1], {s8-s15}\n"
      : [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [blocks] "+r"(blocks)
      : [zeros] "r"(kZeros), [acc0] "r"(acc0), [acc1] "r"(acc1)
      : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13",
        "s14", "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26",
        "s27", "s28", "s29", "s30", "s31", "cc", "memory");
}

// One row of matvec_rows_portable's 4-row path from its 8 partial sums: the
// 4-column half block, the reduction tree, the scalar tail.
float finish_row(float* a, const float* w, const float* x, int32_t full, int32_t cols) {
  int32_t i = full;
  if (cols - i >= 4) {
    for (int32_t j = 0; j < 4; ++j) a[j] += w[i + j] * x[i + j];
    i += 4;
  }
  const float h0 = a[0] + a[4], h1 = a[1] + a[5], h2 = a[2] + a[6], h3 = a[3] + a[7];
  float s = (h0 + h2) + (h1 + h3);
  for (; i < cols; ++i) s += w[i] * x[i];
  return s;
}

}  // namespace

void matvec_rows_cortex_m(const float* w, int32_t rows, int32_t cols, const float* x,
                          const float* bias, bool accumulate, float* out) {
  const int32_t full = cols - cols % 8;
  // Rows in groups of 4 take the 4-row path's order, the last rows % 4 dot()'s,
  // as in matvec_rows_portable.
  const int32_t grouped = rows - rows % 4;
  for (int32_t r = 0; r < grouped; r += 2) {
    const float* w0 = w + static_cast<int64_t>(r) * cols;
    const float* w1 = w0 + cols;
    float a0[8] = {}, a1[8] = {};
    if (full > 0) two_row_partials(w0, w1, x, full / 8, a0, a1);
    const float s0 = finish_row(a0, w0, x, full, cols);
    const float s1 = finish_row(a1, w1, x, full, cols);
    const float base0 = accumulate ? out[r] : (bias ? bias[r] : 0.f);
    const float base1 = accumulate ? out[r + 1] : (bias ? bias[r + 1] : 0.f);
    out[r] = base0 + s0;
    out[r + 1] = base1 + s1;
  }
  for (int32_t r = grouped; r < rows; ++r) {
    const float base = accumulate ? out[r] : (bias ? bias[r] : 0.f);
    out[r] = base + dot(w + static_cast<int64_t>(r) * cols, x, cols);
  }
}

void column_block_sums_cortex_m(const float* w, int32_t rows, int64_t stride, const float* g,
                                float* acc) {
  const int32_t stride_bytes = static_cast<int32_t>(stride * 4);
  asm volatile(
      "vldmia %[zeros], {s0-s7}\n"
      "1:\n"
      "vldmia %[g]!, {s8}\n"
      "vldmia %[w], {s16-s23}\n"
      "add %[w], %[w], %[stride]\n"
      "vfma.f32 s0, s8, s16\n"
      "vfma.f32 s1, s8, s17\n"
      "vfma.f32 s2, s8, s18\n"
      "vfma.f32 s3, s8, s19\n"
      "vfma.f32 s4, s8, s20\n"
      "vfma.f32 s5, s8, s21\n"
      "vfma.f32 s6, s8, s22\n"
      "vfma.f32 s7, s8, s23\n"
      "subs %[rows], %[rows], #1\n"
      "bne 1b\n"
      "vstmia %[acc], {s0-s7}\n"
      : [w] "+r"(w), [g] "+r"(g), [rows] "+r"(rows)
      : [zeros] "r"(kZeros), [stride] "r"(stride_bytes), [acc] "r"(acc)
      : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s16", "s17", "s18", "s19", "s20",
        "s21", "s22", "s23", "cc", "memory");
}

void add_outer8_blocks_cortex_m(float* row, const float* v, int64_t v_stride, const float* gs,
                                int32_t blocks) {
  const int32_t stride_bytes = static_cast<int32_t>(v_stride * 4);
  const float* step = v;
#define GRUWB_OUTER_STEP(g)           \
  "vldmia %[step], {s16-s23}\n"       \
  "add %[step], %[step], %[stride]\n" \
  "vfma.f32 s0, " g                   \
  ", s16\n"                           \
  "vfma.f32 s1, " g                   \
  ", s17\n"                           \
  "vfma.f32 s2, " g                   \
  ", s18\n"                           \
  "vfma.f32 s3, " g                   \
  ", s19\n"                           \
  "vfma.f32 s4, " g                   \
  ", s20\n"                           \
  "vfma.f32 s5, " g                   \
  ", s21\n"                           \
  "vfma.f32 s6, " g                   \
  ", s22\n"                           \
  "vfma.f32 s7, " g ", s23\n"
  asm volatile(
    "vldmia %[gs], {s8-s15}\n"
    "1:\n"
    "vldmia %[row], {s0-s7}\n"
    "mov %[step], %[v]\n"
    GRUWB_OUTER_STEP("s8") GRUWB_OUTER_STEP("s9") GRUWB_OUTER_STEP("s10") GRUWB_OUTER_STEP("s11")
    GRUWB_OUTER_STEP("s12") GRUWB_OUTER_STEP("s13") GRUWB_OUTER_STEP("s14")
    GRUWB_OUTER_STEP("s15")
    "vstmia %[row]!, {s0-s7}\n"
    "add %[v], %[v], #32\n"
    "subs %[blocks], %[blocks], #1\n"
    "bne 1b\n"
    : [row] "+r"(row), [v] "+r"(v), [step] "+r"(step), [blocks] "+r"(blocks)
    : [gs] "r"(gs), [stride] "r"(stride_bytes)
    : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14",
      "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "cc", "memory");
#undef GRUWB_OUTER_STEP
}

}  // namespace gruwb

#endif  // GRUWB_CORTEX_M_FP_KERNELS
