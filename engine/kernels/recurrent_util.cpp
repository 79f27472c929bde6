#include "engine/kernels/recurrent_util.h"

#include <cstdio>

#include "engine/model/checked_size.h"
#include "engine/runtime/interpreter.h"

namespace gruwb {

DenseWeights dense_weights(const Tensor* tensor) {
  DenseWeights w;
  if (!tensor) return w;
  w.rows = tensor->shape.rank > 0 ? tensor->shape.dims[0] : 0;
  w.cols = tensor->shape.rank > 1 ? tensor->shape.dims[1] : 1;
  if (tensor->type == TensorType::INT8) {
    w.i8 = reinterpret_cast<const int8_t*>(tensor->data);
    w.scales = tensor->quantization->scale()->data();
    w.per_row_scale = tensor->quantization->scale()->size() > 1;
  } else {
    w.f32 = tensor->f32();
  }
  return w;
}

Status expect_input_count(const OpContext& ctx, int min_count, int max_count) {
  int n = ctx.input_count();
  if (n < min_count || n > max_count) {
    return Status::error(StatusCode::kInvalidModel, "has %d inputs, expected %d..%d", n, min_count,
                         max_count);
  }
  if (!ctx.input(0)) return Status::error(StatusCode::kInvalidModel, "input 0 is omitted");
  return Status();
}

Status shape_error(const Tensor* tensor, const char* role, const char* expected) {
  char shape[48];
  format_shape(tensor->shape, shape, sizeof shape);
  return Status::error(StatusCode::kInvalidModel, "%s '%s' has shape %s, expected %s", role,
                       tensor->name, shape, expected);
}

Status check_dense_weights(const Tensor* tensor, int32_t rows, int32_t cols, const char* role) {
  if (!tensor) return Status::error(StatusCode::kInvalidModel, "%s is missing", role);
  if (tensor->shape.rank != 2 || tensor->shape.dims[0] != rows || tensor->shape.dims[1] != cols) {
    char expected[32];
    snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(rows), static_cast<int>(cols));
    return shape_error(tensor, role, expected);
  }
  if (tensor->type == TensorType::FLOAT32) return Status();
  if (tensor->type != TensorType::INT8) {
    return Status::error(StatusCode::kUnsupported,
                         "%s '%s' is %s; recurrent weights must be float32 or int8", role,
                         tensor->name, tensor_type_name(tensor->type));
  }
  const fb::QuantizationParameters* q = tensor->quantization;
  if (!q || !q->scale() ||
      (q->scale()->size() != 1 && q->scale()->size() != static_cast<uint32_t>(rows))) {
    return Status::error(StatusCode::kInvalidModel, "int8 %s '%s' needs 1 or %d scales", role,
                         tensor->name, static_cast<int>(rows));
  }
  for (uint32_t i = 0; i < zero_point_count(q); ++i) {
    const int64_t zp = zero_point_at(q, i);
    if (zp != 0) {
      return Status::error(StatusCode::kUnsupported,
                           "int8 %s '%s' has zero point %lld; hybrid recurrent weights must "
                           "be symmetric (zero point 0)",
                           role, tensor->name, static_cast<long long>(zp));
    }
  }
  return Status();
}

Status check_float_vector(const Tensor* tensor, int32_t size, const char* role) {
  if (!tensor) return Status::error(StatusCode::kInvalidModel, "%s is missing", role);
  GRUWB_RETURN_IF_ERROR(expect_float(tensor, role));
  if (tensor->shape.rank != 1 || tensor->shape.dims[0] != size) {
    char expected[24];
    snprintf(expected, sizeof expected, "[%d]", static_cast<int>(size));
    return shape_error(tensor, role, expected);
  }
  return Status();
}

Status float_bytes(int64_t floats, const char* what, size_t* out) {
  if (floats < 0 || static_cast<uint64_t>(floats) > SIZE_MAX / sizeof(float)) {
    return Status::error(StatusCode::kOutOfMemory, "%s: %lld floats do not fit in memory", what,
                         static_cast<long long>(floats));
  }
  *out = sizeof(float) * static_cast<size_t>(floats);
  return Status();
}

Status sequence_layout(const Tensor* input, bool time_major, SequenceLayout* out) {
  if (input->shape.rank != 3) {
    return shape_error(input, "input",
                       time_major ? "[time,batch,features]" : "[batch,time,features]");
  }
  out->time_major = time_major;
  out->batch = input->shape.dims[time_major ? 1 : 0];
  out->time = input->shape.dims[time_major ? 0 : 1];
  return Status();
}

Shape sequence_shape(const SequenceLayout& layout, int32_t features) {
  return layout.time_major ? make_shape({layout.time, layout.batch, features})
                           : make_shape({layout.batch, layout.time, features});
}

// The portable product (target_clones gives it its AVX2 clone on x86-64
// Linux). A hand-written AVX2 version with 8 rows and a hadd reduction
// measured slower (1.06 us vs 0.71 us for 180x60, BM_Matvec180x60); the
// AVX-512 one (matvec_avx512.cpp) is faster, and matvec_rows picks it when
// the CPU has it.
GRUWB_HOT_LOOP
void matvec_rows_portable(const float* w, int32_t rows, int32_t cols, const float* x,
                          const float* bias, bool accumulate, float* out) {
  const int32_t full = cols - cols % 8;
  int32_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* w0 = w + static_cast<int64_t>(r) * cols;
    const float* w1 = w0 + cols;
    const float* w2 = w1 + cols;
    const float* w3 = w2 + cols;
    float a0[8] = {}, a1[8] = {}, a2[8] = {}, a3[8] = {};
    for (int32_t i = 0; i < full; i += 8) {
      for (int32_t j = 0; j < 8; ++j) {
        const float xv = x[i + j];
        a0[j] += w0[i + j] * xv;
        a1[j] += w1[i + j] * xv;
        a2[j] += w2[i + j] * xv;
        a3[j] += w3[i + j] * xv;
      }
    }
    int32_t i = full;
    if (cols - i >= 4) {  // a half block still fits 4 lanes: cheaper than 4 scalar steps
      for (int32_t j = 0; j < 4; ++j) {
        const float xv = x[i + j];
        a0[j] += w0[i + j] * xv;
        a1[j] += w1[i + j] * xv;
        a2[j] += w2[i + j] * xv;
        a3[j] += w3[i + j] * xv;
      }
      i += 4;
    }
    // Sum the four rows' partials together (halves, then pairs) instead of one
    // row at a time: the compiler keeps this in vector registers.
    float h[4][4];
    for (int32_t j = 0; j < 4; ++j) {
      h[0][j] = a0[j] + a0[j + 4];
      h[1][j] = a1[j] + a1[j + 4];
      h[2][j] = a2[j] + a2[j + 4];
      h[3][j] = a3[j] + a3[j + 4];
    }
    float p[4] = {h[0][0] + h[0][2], h[1][0] + h[1][2], h[2][0] + h[2][2], h[3][0] + h[3][2]};
    float q[4] = {h[0][1] + h[0][3], h[1][1] + h[1][3], h[2][1] + h[2][3], h[3][1] + h[3][3]};
    float s[4];
    for (int32_t k = 0; k < 4; ++k) s[k] = p[k] + q[k];
    for (; i < cols; ++i) {
      s[0] += w0[i] * x[i];
      s[1] += w1[i] * x[i];
      s[2] += w2[i] * x[i];
      s[3] += w3[i] * x[i];
    }
    for (int32_t k = 0; k < 4; ++k) {
      float base = accumulate ? out[r + k] : (bias ? bias[r + k] : 0.f);
      out[r + k] = base + s[k];
    }
  }
  for (; r < rows; ++r) {
    float base = accumulate ? out[r] : (bias ? bias[r] : 0.f);
    out[r] = base + dot(w + static_cast<int64_t>(r) * cols, x, cols);
  }
}

void matvec_rows(const float* w, int32_t rows, int32_t cols, const float* x, const float* bias,
                 bool accumulate, float* out) {
#if defined(GRUWB_CLONED_HOT_LOOPS)
  const bool avx512 = avx512_available();
  if (avx512 && cols <= kAvx512MaxCols) {
    matvec_rows_avx512(w, rows, cols, x, bias, accumulate, out);
    return;
  }
#endif
#if defined(GRUWB_CORTEX_M_FP_KERNELS)
  matvec_rows_cortex_m(w, rows, cols, x, bias, accumulate, out);
#else
  matvec_rows_portable(w, rows, cols, x, bias, accumulate, out);
#endif
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
Status column_major_bytes(int32_t rows, int32_t cols, size_t* out) {
  const int64_t padded_rows = (int64_t{rows} + 15) / 16 * 16;
  size_t floats = 0, bytes = 0;
  if (rows < 0 || cols < 0 || padded_rows > INT32_MAX || !checked_mul(padded_rows, cols, &floats) ||
      !checked_mul(floats, sizeof(float), &bytes) || !checked_add(bytes, size_t{64}, out)) {
    return Status::error(StatusCode::kOutOfMemory,
                         "a packed copy of a [%d,%d] weight matrix does not fit",
                         static_cast<int>(rows), static_cast<int>(cols));
  }
  return Status();
}

namespace {

// Vectors per pass for a matrix of `vectors` 16-row vectors and `cols` columns: equal passes
// (H = 128 LSTM, 32 vectors: 16 + 16, not 24 + 8).
int32_t column_pass_vectors(int32_t vectors, int32_t cols) {
  // A matrix a little larger than L1 (48 KB on Zen 5), up to twice it, in passes of at most
  // 20 KB: products alternate the pass order, so two of three passes of the last step are still
  // in L1 (LSTM H60, 57.6 KB in 3 passes: 38.5 -> 34.9 us). One that fits L1 keeps its fewest
  // passes (the most accumulators: the reference GRU's 46 KB is slower in 3), and so do larger
  // ones, which stream from L2 whatever the order (GRU H128's 196 KB: no gain).
  constexpr int64_t kL1Bytes = 48 * 1024, kPassBytes = 20 * 1024;
  const int64_t vector_bytes = int64_t{64} * (cols > 0 ? cols : 1);
  const int64_t matrix_bytes = vector_bytes * vectors;
  int32_t most = kMaxColumnVectors;
  if (matrix_bytes > kL1Bytes && matrix_bytes <= 2 * kL1Bytes) {
    const int64_t fit = kPassBytes / vector_bytes;
    most = fit < 4 ? 4 : (fit > most ? most : static_cast<int32_t>(fit));
  }
  const int32_t passes = (vectors + most - 1) / most;
  return passes == 0 ? 0 : (vectors + passes - 1) / passes;
}

// Lays out the pass-major copy (recurrent_util.h) of the [rows, cols] matrix
// whose (r, j) value `at(r, j)` returns, in `memory` (column_major_bytes).
template <typename At>
ColumnMajorWeights pack_columns(int32_t rows, int32_t cols, At at, void* memory) {
  ColumnMajorWeights out;
  out.rows = rows;
  out.cols = cols;
  out.padded_rows = (rows + 15) / 16 * 16;
  float* packed = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(memory) + 63) &
                                           ~static_cast<uintptr_t>(63));
  const int32_t vectors = out.padded_rows / 16;
  const int32_t per_pass = column_pass_vectors(vectors, cols);
  out.pass_vectors = per_pass;
  float* next = packed;
  for (int32_t v0 = 0; v0 < vectors; v0 += per_pass) {
    const int32_t pass_rows = 16 * (vectors - v0 < per_pass ? vectors - v0 : per_pass);
    for (int32_t j = 0; j < cols; ++j) {
      for (int32_t r = 16 * v0; r < 16 * v0 + pass_rows; ++r) *next++ = r < rows ? at(r, j) : 0.f;
    }
  }
  out.data = packed;
  return out;
}

}  // namespace

ColumnMajorWeights pack_column_major(const float* w, int32_t rows, int32_t cols, float* packed) {
  return pack_columns(
      rows, cols, [&](int32_t r, int32_t j) { return w[static_cast<int64_t>(r) * cols + j]; },
      packed);
}

Status prepare_column_major(OpContext& ctx, const Tensor* const* tensors, int count,
                            int32_t rows_each, int32_t cols, ColumnMajorWeights* out) {
  *out = ColumnMajorWeights();
  const bool avx512 = avx512_available();
  // Training copies the weights and changes them after prepare; a variable or computed matrix
  // changes between invokes: only a file's constant matrices can be packed once.
  if (!avx512 || ctx.interpreter().training() || count <= 0 || rows_each <= 0 || cols <= 0) {
    return Status();
  }
  for (int i = 0; i < count; ++i) {
    const Tensor* t = tensors[i];
    if (!t || t->type != TensorType::FLOAT32 || t->kind != TensorKind::kConstant || !t->data) {
      return Status();
    }
  }
  int32_t rows = 0;
  size_t bytes = 0;
  if (!checked_mul(rows_each, count, &rows)) return column_major_bytes(-1, cols, &bytes);
  GRUWB_RETURN_IF_ERROR(column_major_bytes(rows, cols, &bytes));
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(bytes, &memory));
  // Tensor i's rows at i * rows_each.
  *out = pack_columns(
      rows, cols,
      [&](int32_t r, int32_t j) {
        return tensors[r / rows_each]->f32()[static_cast<int64_t>(r % rows_each) * cols + j];
      },
      memory);
  return Status();
}
#endif

#if GRUWB_BATCHED_KERNELS
// The portable product (cloned for AVX2 on x86-64 Linux): one C row at a time, each A value
// broadcast over a row of B in blocks of 8 (GCC's -O2 vectorizes only fixed-count blocks).
GRUWB_HOT_LOOP
void gemm_accumulate_portable(int32_t rows, int32_t cols, int32_t depth, const float* a,
                              int64_t a_row, int64_t a_col, const float* b, int64_t ldb, float* c,
                              int64_t ldc) {
  const int32_t full = cols - cols % 8;
  for (int32_t i = 0; i < rows; ++i) {
    float* __restrict row = c + i * ldc;
    for (int32_t k = 0; k < depth; ++k) {
      const float ak = a[i * a_row + k * a_col];
      const float* __restrict bk = b + k * ldb;
      for (int32_t n = 0; n < full; n += 8) {
        for (int32_t j = 0; j < 8; ++j) row[n + j] += ak * bk[n + j];
      }
      for (int32_t n = full; n < cols; ++n) row[n] += ak * bk[n];
    }
  }
}

void gemm_accumulate(int32_t rows, int32_t cols, int32_t depth, const float* a, int64_t a_row,
                     int64_t a_col, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (rows <= 0 || cols <= 0 || depth <= 0) return;
#if defined(GRUWB_CLONED_HOT_LOOPS)
  const bool avx512 = avx512_available();
  if (avx512) {
    gemm_accumulate_avx512(rows, cols, depth, a, a_row, a_col, b, ldb, c, ldc);
    return;
  }
#endif
  gemm_accumulate_portable(rows, cols, depth, a, a_row, a_col, b, ldb, c, ldc);
}

void transpose_matrix(const float* src, int32_t rows, int32_t cols, float* dst,
                      int64_t dst_stride) {
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t k = 0; k < cols; ++k) {
      dst[k * dst_stride + r] = src[static_cast<int64_t>(r) * cols + k];
    }
  }
}
#endif

GRUWB_HOT_LOOP
void project_steps(const DenseWeights& w, const float* x, int64_t x_stride, int32_t steps,
                   const float* bias, float* xt, float* out) {
  const int32_t cols = w.cols;
  for (int32_t k = 0; k < cols; ++k) {  // transpose: xt[k][s]
    for (int32_t s = 0; s < kTimeBlock; ++s)
      xt[k * kTimeBlock + s] = s < steps ? x[s * x_stride + k] : 0.f;
  }
  for (int32_t r = 0; r < w.rows; ++r) {
    const float* row = w.f32 + static_cast<int64_t>(r) * cols;
    float acc[kTimeBlock];
#if defined(GRUWB_CORTEX_M_FP_KERNELS)
    // The 8 sums in registers (on the stack: 11 instructions per multiply-add).
    static_assert(kTimeBlock == 8, "column_block_sums_cortex_m sums 8 columns");
    column_block_sums_cortex_m(xt, cols, kTimeBlock, row, acc);
#else
    for (int32_t s = 0; s < kTimeBlock; ++s) acc[s] = 0.f;
    for (int32_t k = 0; k < cols; ++k) {
      const float wk = row[k];
      for (int32_t s = 0; s < kTimeBlock; ++s) acc[s] += wk * xt[k * kTimeBlock + s];
    }
#endif
    const float b = bias ? bias[r] : 0.f;
    for (int32_t s = 0; s < kTimeBlock; ++s) out[s * w.rows + r] = b + acc[s];
  }
}

namespace {

// Columns per register block of add_transposed_product: 64 floats are 8 AVX2
// registers of accumulators (8 independent FMA chains hide the FMA latency);
// elsewhere (Cortex-M4F: 32 single-precision registers, no SIMD) 8.
#if defined(GRUWB_CLONED_HOT_LOOPS)
constexpr int32_t kColumnBlock = 64;
#else
constexpr int32_t kColumnBlock = 8;
#endif

// out[j] += sum over r < rows of g[r] * w[r * stride + j] for j < width.
// The accumulators stay in registers for all rows (no reduction, no pass
// over `out` per row). Rows whose block would run past the end of `w`
// (`last` = w + rows * stride) take the exact loop; the others read a whole
// kColumnBlock, and the lanes past `width` (the next row's values) are
// dropped.
GRUWB_ALWAYS_INLINE void transposed_block(const float* __restrict w, int32_t rows, int64_t stride,
                                          int32_t width, const float* __restrict g,
                                          const float* last, float* __restrict out) {
  // Unrolled so that GCC keeps `acc` in registers instead of on the stack.
  float acc[kColumnBlock];
#pragma GCC unroll 64
  for (int32_t j = 0; j < kColumnBlock; ++j) acc[j] = 0.f;
  int32_t full = rows;
  while (full > 0 && w + (full - 1) * stride + kColumnBlock > last) --full;
#if defined(GRUWB_CORTEX_M_FP_KERNELS)
  static_assert(kColumnBlock == 8, "column_block_sums_cortex_m sums 8 columns");
  if (full > 0) column_block_sums_cortex_m(w, full, stride, g, acc);
#else
  for (int32_t r = 0; r < full; ++r) {
    const float gr = g[r];
    const float* __restrict row = w + r * stride;
#pragma GCC unroll 64
    for (int32_t j = 0; j < kColumnBlock; ++j) acc[j] += gr * row[j];
  }
#endif
  // (Written as one loop over the lanes: separate loops for the sums and the
  // exact rows made GCC give up the vector registers above.)
  for (int32_t j = 0; j < width; ++j) {
    float sum = acc[j];
    for (int32_t r = full; r < rows; ++r) sum += g[r] * w[r * stride + j];
    out[j] += sum;
  }
}

// sum over s < kSteps of gs[s] * vc[s * v_stride], as a tree.
template <int32_t kSteps>
GRUWB_ALWAYS_INLINE float step_sum(const float* gs, const float* vc, int64_t v_stride) {
  float sum = (gs[0] * vc[0] + gs[1] * vc[v_stride]) +
              (gs[2] * vc[2 * v_stride] + gs[3] * vc[3 * v_stride]);
  if (kSteps == 8) {
    sum += (gs[4] * vc[4 * v_stride] + gs[5] * vc[5 * v_stride]) +
           (gs[6] * vc[6 * v_stride] + gs[7] * vc[7 * v_stride]);
  }
  return sum;
}

// grad[r, c] += sum over s < kSteps of g[s * g_stride + r] * v[s * v_stride + c].
// Written straight into the gradient row (a copy through a local array made
// GCC spill it and stall on store forwarding). 8 steps per pass read and
// write each gradient row half as often as 4. A 4-column remainder takes
// half a block (the reference GRU's 60 columns), as in matvec_rows.
template <int32_t kSteps>
GRUWB_ALWAYS_INLINE void outer_steps(float* __restrict grad, int32_t rows, int32_t cols,
                                     const float* __restrict g, int64_t g_stride,
                                     const float* __restrict v, int64_t v_stride) {
  static_assert(kSteps == 4 || kSteps == 8, "a tree of 4 or 8 steps");
  for (int32_t r = 0; r < rows; ++r) {
    float gs[kSteps];
    for (int32_t s = 0; s < kSteps; ++s) gs[s] = g[s * g_stride + r];
    float* __restrict row = grad + static_cast<int64_t>(r) * cols;
    int32_t c = 0;
#if defined(GRUWB_CORTEX_M_FP_KERNELS)
    if (kSteps == 8) {  // (the portable loop below is then left out of this instance)
      add_outer8_blocks_cortex_m(row, v, v_stride, gs, cols / 8, cols % 8 >= 4);
      c = cols - cols % 4;
    } else
#endif
    {
      for (; kVectorBlocks && c + 8 <= cols; c += 8) {
        for (int32_t j = 0; j < 8; ++j) row[c + j] += step_sum<kSteps>(gs, v + c + j, v_stride);
      }
    }
    if (kVectorBlocks && cols - c >= 4) {
      for (int32_t j = 0; j < 4; ++j) row[c + j] += step_sum<kSteps>(gs, v + c + j, v_stride);
      c += 4;
    }
    for (; c < cols; ++c) row[c] += step_sum<kSteps>(gs, v + c, v_stride);
  }
}

// The same for fewer than 8 columns (a GRU's input kernel: 3 features), where
// a row holds no vector: 8 rows of one column at a time, over any number of
// steps (g is contiguous along the rows).
GRUWB_ALWAYS_INLINE void outer_steps_narrow(float* __restrict grad, int32_t rows, int32_t cols,
                                            const float* __restrict g, int64_t g_stride,
                                            const float* __restrict v, int64_t v_stride,
                                            int32_t steps) {
  for (int32_t c = 0; c < cols; ++c) {
    int32_t r = 0;
    for (; kVectorBlocks && r + 8 <= rows; r += 8) {
      float acc[8] = {};
      for (int32_t s = 0; s < steps; ++s) {
        const float vs = v[s * v_stride + c];
        for (int32_t j = 0; j < 8; ++j) acc[j] += g[s * g_stride + r + j] * vs;
      }
      for (int32_t j = 0; j < 8; ++j) grad[static_cast<int64_t>(r + j) * cols + c] += acc[j];
    }
    for (; r < rows; ++r) {
      float sum = 0.f;
      for (int32_t s = 0; s < steps; ++s) sum += g[s * g_stride + r] * v[s * v_stride + c];
      grad[static_cast<int64_t>(r) * cols + c] += sum;
    }
  }
}

GRUWB_ALWAYS_INLINE void outer_steps1(float* __restrict grad, int32_t rows, int32_t cols,
                                      const float* __restrict g, const float* __restrict v) {
  for (int32_t r = 0; r < rows; ++r) {
    const float gr = g[r];
    float* __restrict row = grad + static_cast<int64_t>(r) * cols;
    int32_t c = 0;
    for (; kVectorBlocks && c + 8 <= cols; c += 8) {
      for (int32_t j = 0; j < 8; ++j) row[c + j] += gr * v[c + j];
    }
    for (; c < cols; ++c) row[c] += gr * v[c];
  }
}

}  // namespace

GRUWB_HOT_LOOP
void add_transposed_product(const float* w, int32_t rows, int32_t cols, const float* g,
                            float* out) {
  const float* last = w + static_cast<int64_t>(rows) * cols;
  for (int32_t c = 0; c < cols; c += kColumnBlock) {
    const int32_t width = cols - c < kColumnBlock ? cols - c : kColumnBlock;
    transposed_block(w + c, rows, cols, width, g, last, out + c);
  }
}

GRUWB_HOT_LOOP
void add_outer_steps(float* grad, int32_t rows, int32_t cols, const float* g, int64_t g_stride,
                     const float* v, int64_t v_stride, int32_t steps) {
  if (cols < 8) {
    outer_steps_narrow(grad, rows, cols, g, g_stride, v, v_stride, steps);
    return;
  }
  int32_t s = 0;
  for (; s + 8 <= steps; s += 8) {
    outer_steps<8>(grad, rows, cols, g + s * g_stride, g_stride, v + s * v_stride, v_stride);
  }
  for (; s + 4 <= steps; s += 4) {
    outer_steps<4>(grad, rows, cols, g + s * g_stride, g_stride, v + s * v_stride, v_stride);
  }
  for (; s < steps; ++s) outer_steps1(grad, rows, cols, g + s * g_stride, v + s * v_stride);
}

void add_outer(float* grad, int32_t rows, int32_t cols, const float* g, const float* v) {
  add_outer_steps(grad, rows, cols, g, 0, v, 0, 1);
}

GRUWB_HOT_LOOP
void add_rows(float* out, int32_t rows, const float* g, int64_t g_stride, int32_t steps) {
  int32_t r = 0;
  for (; kVectorBlocks && r + 8 <= rows; r += 8) {  // 8 rows in one register over all steps
    float acc[8];
    for (int32_t j = 0; j < 8; ++j) acc[j] = out[r + j];
    for (int32_t s = 0; s < steps; ++s) {
      for (int32_t j = 0; j < 8; ++j) acc[j] += g[s * g_stride + r + j];
    }
    for (int32_t j = 0; j < 8; ++j) out[r + j] = acc[j];
  }
  for (; r < rows; ++r) {
    float sum = out[r];  // in a register, not read and written back every step
    for (int32_t s = 0; s < steps; ++s) sum += g[s * g_stride + r];
    out[r] = sum;
  }
}

// Blocks of 8 with a fixed trip count let the compiler vectorize the
// polynomial even at -O2 (its cheap cost model refuses open-ended loops). On
// a Cortex-M fast_exp is inlined (flatten), so its constants stay in registers
// (41 instructions a call at -Os otherwise).
#if defined(GRUWB_CORTEX_M_FP_KERNELS)
#define GRUWB_NONLINEARITY_LOOP __attribute__((flatten))
#else
#define GRUWB_NONLINEARITY_LOOP GRUWB_HOT_LOOP
#endif

GRUWB_NONLINEARITY_LOOP
void vector_sigmoid(float* x, int32_t n) {
#if defined(GRUWB_CLONED_HOT_LOOPS)
  const bool avx512 = avx512_available();
  if (avx512) {
    vector_sigmoid_avx512(x, n);
    return;
  }
#endif
  int32_t i = 0;
  for (; kVectorBlocks && i + 8 <= n; i += 8) {
    for (int32_t j = 0; j < 8; ++j) x[i + j] = fast_sigmoid(x[i + j]);
  }
  for (; i < n; ++i) x[i] = fast_sigmoid(x[i]);
}

GRUWB_NONLINEARITY_LOOP
void vector_tanh(float* x, int32_t n) {
#if defined(GRUWB_CLONED_HOT_LOOPS)
  const bool avx512 = avx512_available();
  if (avx512) {
    vector_tanh_avx512(x, n);
    return;
  }
#endif
  int32_t i = 0;
  for (; kVectorBlocks && i + 8 <= n; i += 8) {
    for (int32_t j = 0; j < 8; ++j) x[i + j] = fast_tanh(x[i + j]);
  }
  for (; i < n; ++i) x[i] = fast_tanh(x[i]);
}

void vector_hard_sigmoid(float* x, int32_t n) {
  for (int32_t i = 0; i < n; ++i) x[i] = hard_sigmoid(x[i]);
}

void vector_activation(Activation activation, float* x, int32_t n) {
  if (activation == Activation::TANH) {
    vector_tanh(x, n);
  } else {
    apply_activation(activation, x, n);
  }
}

}  // namespace gruwb
