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

// out[0] = base[0] + w0 . x and out[1] = base[1] + w1 . x over 8 * blocks +
// rest columns (rest < 8), in matvec_rows_portable's
// order: 8 fused partial sums per row over the blocks of 8, the 4-column half
// block fused into the first 4, the tree (a0 + a4, ...) -> (h0 + h2) +
// (h1 + h3), then the tail fused one column at a time. The partial sums never
// leave the registers.
void two_rows(const float* w0, const float* w1, const float* x, int32_t blocks, int32_t rest,
              const float* base, float* out) {
  asm volatile(
      "vldmia %[zeros], {s0-s15}\n"
      "cmp %[blocks], #0\n"
      "beq 2f\n"
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
      "2:\n"
      "subs %[rest], %[rest], #4\n"
      "blt 3f\n"
      "vldmia %[x]!, {s16-s19}\n"
      "vldmia %[w0]!, {s24-s27}\n"
      "vfma.f32 s0, s24, s16\n"
      "vfma.f32 s1, s25, s17\n"
      "vfma.f32 s2, s26, s18\n"
      "vfma.f32 s3, s27, s19\n"
      "vldmia %[w1]!, {s24-s27}\n"
      "vfma.f32 s8, s24, s16\n"
      "vfma.f32 s9, s25, s17\n"
      "vfma.f32 s10, s26, s18\n"
      "vfma.f32 s11, s27, s19\n"
      "3:\n"
      "vadd.f32 s0, s0, s4\n"
      "vadd.f32 s1, s1, s5\n"
      "vadd.f32 s2, s2, s6\n"
      "vadd.f32 s3, s3, s7\n"
      "vadd.f32 s0, s0, s2\n"
      "vadd.f32 s1, s1, s3\n"
      "vadd.f32 s0, s0, s1\n"
      "vadd.f32 s8, s8, s12\n"
      "vadd.f32 s9, s9, s13\n"
      "vadd.f32 s10, s10, s14\n"
      "vadd.f32 s11, s11, s15\n"
      "vadd.f32 s8, s8, s10\n"
      "vadd.f32 s9, s9, s11\n"
      "vadd.f32 s8, s8, s9\n"
      "cmp %[rest], #0\n"
      "it lt\n"
      "addlt %[rest], %[rest], #4\n"
      "cmp %[rest], #0\n"
      "beq 5f\n"
      "4:\n"
      "vldmia %[x]!, {s16}\n"
      "vldmia %[w0]!, {s24}\n"
      "vldmia %[w1]!, {s25}\n"
      "vfma.f32 s0, s24, s16\n"
      "vfma.f32 s8, s25, s16\n"
      "subs %[rest], %[rest], #1\n"
      "bne 4b\n"
      "5:\n"
      "vldmia %[base], {s16-s17}\n"
      "vadd.f32 s0, s16, s0\n"
      "vadd.f32 s8, s17, s8\n"
      "vstr s0, [%[out]]\n"
      "vstr s8, [%[out], #4]\n"
      : [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [blocks] "+r"(blocks), [rest] "+r"(rest)
      : [zeros] "r"(kZeros), [base] "r"(base), [out] "r"(out)
      : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13",
        "s14", "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26",
        "s27", "s28", "s29", "s30", "s31", "cc", "memory");
}

}  // namespace

void matvec_rows_cortex_m(const float* w, int32_t rows, int32_t cols, const float* x,
                          const float* bias, bool accumulate, float* out) {
  // What each row's sum is added to: out, the bias, or zeros (kZeros, not advanced).
  const float* base = accumulate ? out : (bias ? bias : kZeros);
  const int32_t base_step = base == kZeros ? 0 : 1;
  // Rows in groups of 4 take the 4-row path's order, the last rows % 4 dot()'s,
  // as in matvec_rows_portable.
  const int32_t grouped = rows - rows % 4;
  int32_t r = 0;
  for (; r < grouped; r += 2) {
    const float* w0 = w + static_cast<int64_t>(r) * cols;
    two_rows(w0, w0 + cols, x, cols / 8, cols % 8, base + r * base_step, out + r);
  }
  for (; r < rows; ++r) {
    out[r] = base[r * base_step] + dot(w + static_cast<int64_t>(r) * cols, x, cols);
  }
}

void column_block_sums_cortex_m(const float* w, int32_t rows, int64_t stride, const float* g,
                                float* acc) {
  const int32_t stride_bytes = static_cast<int32_t>(stride * 4);
  asm volatile(
      "vldmia %[zeros], {s0-s7}\n"
      "cmp %[rows], #0\n"
      "beq 2f\n"
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
      "2:\n"
      "vstmia %[acc], {s0-s7}\n"
      : [w] "+r"(w), [g] "+r"(g), [rows] "+r"(rows)
      : [zeros] "r"(kZeros), [stride] "r"(stride_bytes), [acc] "r"(acc)
      : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s16", "s17", "s18", "s19", "s20",
        "s21", "s22", "s23", "cc", "memory");
}

void add_outer8_blocks_cortex_m(float* row, const float* v, int64_t v_stride, const float* gs,
                                int32_t blocks, bool half) {
  const int32_t stride_bytes = static_cast<int32_t>(v_stride * 4);
  const int32_t halves = half ? 1 : 0;
  const float* step = v;
// s0-s3 (and s4-s7) += g * s16-s19 (s20-s23): one step's multiply-adds into a block's columns.
#define GRUWB_OUTER_FMA_LOW(g) \
  "vfma.f32 s0, " g            \
  ", s16\n"                    \
  "vfma.f32 s1, " g            \
  ", s17\n"                    \
  "vfma.f32 s2, " g            \
  ", s18\n"                    \
  "vfma.f32 s3, " g ", s19\n"
#define GRUWB_OUTER_FMA_HIGH(g) \
  "vfma.f32 s4, " g             \
  ", s20\n"                     \
  "vfma.f32 s5, " g             \
  ", s21\n"                     \
  "vfma.f32 s6, " g             \
  ", s22\n"                     \
  "vfma.f32 s7, " g ", s23\n"
#define GRUWB_OUTER_STEP(g)     \
  "vldmia %[step], {s16-s23}\n" \
  "add %[step], %[step], %[stride]\n" GRUWB_OUTER_FMA_LOW(g) GRUWB_OUTER_FMA_HIGH(g)
#define GRUWB_OUTER_HALF_STEP(g) \
  "vldmia %[step], {s16-s19}\n"  \
  "add %[step], %[step], %[stride]\n" GRUWB_OUTER_FMA_LOW(g)
  asm volatile(
    "vldmia %[gs], {s8-s15}\n"
    "cmp %[blocks], #0\n"
    "beq 2f\n"
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
    "2:\n"
    "cmp %[halves], #0\n"
    "beq 3f\n"
    "vldmia %[row], {s0-s3}\n"
    "mov %[step], %[v]\n"
    GRUWB_OUTER_HALF_STEP("s8") GRUWB_OUTER_HALF_STEP("s9") GRUWB_OUTER_HALF_STEP("s10")
    GRUWB_OUTER_HALF_STEP("s11") GRUWB_OUTER_HALF_STEP("s12") GRUWB_OUTER_HALF_STEP("s13")
    GRUWB_OUTER_HALF_STEP("s14") GRUWB_OUTER_HALF_STEP("s15")
    "vstmia %[row], {s0-s3}\n"
    "3:\n"
    : [row] "+r"(row), [v] "+r"(v), [step] "+r"(step), [blocks] "+r"(blocks)
    : [gs] "r"(gs), [stride] "r"(stride_bytes), [halves] "r"(halves)
    : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14",
      "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "cc", "memory");
#undef GRUWB_OUTER_HALF_STEP
#undef GRUWB_OUTER_STEP
#undef GRUWB_OUTER_FMA_HIGH
#undef GRUWB_OUTER_FMA_LOW
}

}  // namespace gruwb

#endif  // GRUWB_CORTEX_M_FP_KERNELS
