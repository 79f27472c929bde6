#pragma once
// Shared pieces of the recurrent kernels (UNIDIRECTIONAL_SEQUENCE_LSTM/RNN,
// the Circle GRU and our GRUWB_GRU custom op): weight matrices that are float
// or INT8 with scales (hybrid models), sequence layouts, and the gate
// nonlinearities.
//
// The nonlinearities run once per unit per time step, so with 60 units and
// 60 steps they cost as much as the matrix products when taken from libm
// (glibc's tanhf is ~15 ns). vector_sigmoid/vector_tanh use our own exp
// (range reduction + degree-6 Taylor polynomial): max error ~2e-7 absolute,
// far below the 1e-5 our golden tests allow, branch-free so the compiler can
// vectorize it, and the same code on the host and on a Cortex-M4F.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "engine/kernels/hybrid_util.h"
#include "engine/kernels/kernel_util.h"
#include "engine/kernels/matmul.h"

// Hot loops get AVX-512 (x86-64-v4) and AVX2 (x86-64-v3) clones on x86-64
// Linux (chosen once at load time by an ifunc resolver); everywhere else,
// including the Cortex-M4F build, one plain version. The v4 clone's wider
// backward products made training batch 32 8% faster (9,300 -> 10,100
// samples/s). GCC contracts a*b+c into FMA in both clones, so they may differ
// from the plain build in the last bit (far below the kernels' 1e-5 tests).
// -DGRUWB_PORTABLE_KERNELS builds the plain version alone on such a host too:
// what a CPU without AVX2 runs, for tests and fuzzing.
#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute) && \
    !defined(GRUWB_PORTABLE_KERNELS)
#if __has_attribute(target_clones)
#define GRUWB_HOT_LOOP __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define GRUWB_CLONED_HOT_LOOPS 1
#endif
#endif
#ifndef GRUWB_HOT_LOOP
#define GRUWB_HOT_LOOP
#endif

// Cortex-M cores whose FPU fuses single-precision multiply-adds (M4F, M7,
// M33) get hand-scheduled dense products (matvec_cortex_m.cpp).
#if defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__ARM_FEATURE_FMA) && \
    !defined(__ARM_NEON)
#define GRUWB_CORTEX_M_FP_KERNELS 1
#endif

// Helpers of a cloned hot loop must be inlined into it: compiled on their
// own they get the default target (SSE2) in every clone.
#if defined(__GNUC__) || defined(__clang__)
#define GRUWB_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define GRUWB_ALWAYS_INLINE inline
#endif

namespace gruwb {

// Loops in fixed blocks of 8 let a host's compiler vectorize them (-O2's cost
// model vectorizes only fixed trip counts). A Cortex-M has no SIMD: there each
// such loop is the plain loop after it alone, the same operations per element
// in less flash.
#if defined(GRUWB_CORTEX_M_FP_KERNELS)
constexpr bool kVectorBlocks = false;
#else
constexpr bool kVectorBlocks = true;
#endif

// A [rows, cols] weight matrix: float, or INT8 with one scale per tensor or
// per row (zero point 0: TFLite's hybrid weights are symmetric). TFLite's
// hybrid LSTM and RNN read one scale per tensor only; per-row scales are ours
// (what a fused op gets from a loop of per-channel hybrid FULLY_CONNECTEDs).
struct DenseWeights {
  const float* f32 = nullptr;
  const int8_t* i8 = nullptr;
  const float* scales = nullptr;
  bool per_row_scale = false;
  int32_t rows = 0;
  int32_t cols = 0;

  bool present() const { return f32 || i8; }
};

// No checks: prepare ran check_dense_weights on the same tensor.
DenseWeights dense_weights(const Tensor* tensor);

// prepare: `tensor` is float or INT8 (scales as above) with shape
// [rows, cols]. Names the role, the tensor and both shapes when it fails.
Status check_dense_weights(const Tensor* tensor, int32_t rows, int32_t cols, const char* role);
// prepare: a float vector of `size` values (biases, peepholes, layer norm).
Status check_float_vector(const Tensor* tensor, int32_t size, const char* role);
// prepare: the op lists between min_count and max_count inputs, any of which
// may be omitted (-1); each kernel checks the ones it needs.
Status expect_input_count(const OpContext& ctx, int min_count, int max_count);
// prepare: an error naming the tensor, what was expected and what it has.
Status shape_error(const Tensor* tensor, const char* role, const char* expected);
// prepare: the bytes of `floats` float32 values (scratch, tapes), failing with
// `what` named rather than wrapping around.
Status float_bytes(int64_t floats, const char* what, size_t* out);

// matvec_rows (matmul.h) is the float product; matvec_rows_portable is the
// plain version it calls (benchmarks compare candidates against it).
void matvec_rows_portable(const float* w, int32_t rows, int32_t cols, const float* x,
                          const float* bias, bool accumulate, float* out);
#if defined(GRUWB_CLONED_HOT_LOOPS)
// x86-64 Linux hosts: the AVX-512 version (matvec_avx512.cpp), for at most
// kAvx512MaxCols columns (more would not fit x in registers); matvec_rows
// takes it when avx512_available().
constexpr int32_t kAvx512MaxCols = 128;
bool cpu_has_avx512();  // asks the CPU
// cpu_has_avx512(), asked once: what the kernels branch on in their loops.
inline bool avx512_available() {
  static const bool available = cpu_has_avx512();
  return available;
}
void matvec_rows_avx512(const float* w, int32_t rows, int32_t cols, const float* x,
                        const float* bias, bool accumulate, float* out);

// Inference on AVX-512 hosts: a constant float [rows, cols] matrix packed once
// at prepare as its transpose, rows padded to 16. Its product needs no
// horizontal sums: per column, broadcast x[j] and multiply-add it into up to
// kMaxColumnVectors zmm accumulators (16 rows each). Rows are cut into passes
// of at most that many vectors, and each pass is stored whole, column after
// column ([pass][cols][16 * vectors of the pass], zeros below `rows`), so a
// pass reads one contiguous stream (384x128: 1.18 us against 1.94 us with
// passes interleaved per column). Never in training, where the weights change
// after prepare; never on the board.
struct ColumnMajorWeights {
  const float* data = nullptr;  // nullptr: not packed, use matvec_rows; 64-byte aligned
  int32_t rows = 0;
  int32_t cols = 0;
  int32_t padded_rows = 0;
  int32_t pass_vectors = 0;  // 16-row vectors per pass (the last pass may have fewer)
  // Each product reads the passes in the other order than the one before, so
  // the passes it reads first are the ones still in L1 from the last step.
  mutable bool passes_backward = false;
};
constexpr int32_t kMaxColumnVectors = 24;  // + 1 broadcast register of 32 zmm
// `bytes` rounded up to the arena's 16-byte alignment: persistent requests of
// whole units keep the next one's padding out of the sizing (an arena probe
// that fails while planning activations counts persistent bytes without it).
inline size_t whole_alignment_units(size_t bytes) { return (bytes + 15) / 16 * 16; }
// The default op table with GRU, GRUWB_GRU, UNIDIRECTIONAL_SEQUENCE_LSTM and
// _RNN replaced by versions whose prepare also packs their weights (the
// packed copies cost arena bytes a board never needs, so only host runners
// that time or run inference ask for it: ModelRunner::set_packed_weights).
const OpResolver& packed_inference_ops();
// Bytes of the packed copy (with 64 bytes of room to align it), with
// overflow checks.
Status column_major_bytes(int32_t rows, int32_t cols, size_t* out);
// Writes the packed copy of w into `packed` (column_major_bytes long, any
// alignment: the copy starts at the first 64-byte boundary).
ColumnMajorWeights pack_column_major(const float* w, int32_t rows, int32_t cols, float* packed);
// prepare: packs `count` tensors ([rows_each, cols] each, stacked: LSTM gate
// matrices become one [4H, H]) into persistent arena memory when it pays and
// is safe (AVX-512, float32 constants, interpreter not training); leaves
// *out empty otherwise.
Status prepare_column_major(OpContext& ctx, const Tensor* const* tensors, int count,
                            int32_t rows_each, int32_t cols, ColumnMajorWeights* out);
inline Status prepare_column_major(OpContext& ctx, const Tensor* tensor, int32_t rows, int32_t cols,
                                   ColumnMajorWeights* out) {
  return prepare_column_major(ctx, &tensor, 1, rows, cols, out);
}
// out[r] = (accumulate ? out[r] : bias ? bias[r] : 0) + W[r, :] . x, as
// matvec_rows (multiply-adds in column order: equal to it within rounding).
void matvec_columns_avx512(const ColumnMajorWeights& w, const float* x, const float* bias,
                           bool accumulate, float* out);
// vector_sigmoid/vector_tanh on 16 lanes (they call these when
// avx512_available()): fast_sigmoid/fast_tanh operation for operation.
void vector_sigmoid_avx512(float* x, int32_t n);
void vector_tanh_avx512(float* x, int32_t n);
// One LSTM step's gate math with the Keras defaults (sigmoid gates, tanh cell
// activation; no peepholes, layer norm, clip or projection) in one pass over
// 16 lanes, from the pre-activation gates i, f, g, o stacked `units` apart:
// c = sigmoid(f) c + sigmoid(i) tanh(g), h = sigmoid(o) tanh(c).
void lstm_default_gates_avx512(const float* gates, float* c, float* h, int32_t units);
// One GRU step's gate math with the Keras defaults (reset_after, sigmoid gates,
// tanh candidate) in one pass over 16 lanes, from the step's input part
// W_x x + b_x and recurrent part U h + b_h (gate blocks z | r | n, `units`
// apart): h_next = z h_prev + (1 - z) tanh(x_n + r u_n). h_next may alias
// h_prev.
void gru_default_gates_avx512(const float* input_part, const float* recurrent_part,
                              const float* h_prev, float* h_next, int32_t units);
// One batch row's step of the GRU's backward with the Keras defaults (reset_after, sigmoid
// gates, tanh candidate) on 16 lanes: from dL/dh_t `d` and the step's tape (h_prev, z, r,
// candidate n, recurrent candidate part rc), for i < units:
//   dz = d (h_prev - n) z (1 - z)    dn = d (1 - z) (1 - n^2)    dh_prev = d z
//   dr = dn rc r (1 - r)             d_recurrent_candidate = dn r
// (gru_sequence_batch_backward's scalar loop compiles to one lane at a time: its outputs
// share an array, so GCC's -O2 will not vectorize it without alias checks.)
struct GruGateGradients16 {
  const float* d;
  const float* h_prev;
  const float* z;
  const float* r;
  const float* n;
  const float* rc;
  float* dz;
  float* dr;
  float* dn;
  float* dh_prev;
  float* d_recurrent_candidate;
};
void gru_default_gate_gradients_avx512(const GruGateGradients16& g, int32_t units);
#endif

// matvec_rows for GRUWB_CORTEX_M_FP_KERNELS builds, bit-identical to
// matvec_rows_portable (matvec_cortex_m.cpp).
void matvec_rows_cortex_m(const float* w, int32_t rows, int32_t cols, const float* x,
                          const float* bias, bool accumulate, float* out);
// acc[j] = sum over r < rows (0: zeros) of g[r] * w[r * stride + j] for j < 8, in r
// order: add_transposed_product's column block on those builds, and
// project_steps' 8 steps of one row (w = x transposed, g = the row).
void column_block_sums_cortex_m(const float* w, int32_t rows, int64_t stride, const float* g,
                                float* acc);
// row[j] += gs[0] * v[j] + ... + gs[7] * v[7 * v_stride + j] (one step after
// another) for j < 8 * blocks + (half ? 4 : 0): add_outer_steps' 8-step pass
// there.
void add_outer8_blocks_cortex_m(float* row, const float* v, int64_t v_stride, const float* gs,
                                int32_t blocks, bool half);

// out[r] += W[first_row + r, :] . x for r < rows. Float weights multiply x;
// INT8 weights (hybrid models) multiply `xq`, x quantized at run time by the
// caller (quantize_row, once per vector however many matrices use it), in
// int32 as TFLite's hybrid kernels do (hybrid_util.h). Callers with float
// weights only may pass an empty QuantizedRow.
inline void matvec_accumulate(const DenseWeights& w, int32_t first_row, int32_t rows,
                              const float* x, const QuantizedRow& xq, float* out) {
  const int32_t cols = w.cols;
  if (w.f32) {
    matvec_rows(w.f32 + static_cast<int64_t>(first_row) * cols, rows, cols, x, nullptr, true, out);
    return;
  }
  hybrid_matvec_accumulate(w.i8 + static_cast<int64_t>(first_row) * cols, rows, cols,
                           w.scales + (w.per_row_scale ? first_row : 0), w.per_row_scale, xq, out);
}

// out[r] = (bias ? bias[r] : 0) + W[first_row + r, :] . x (as above: INT8
// weights use xq; the bias comes first and the product is added to it).
inline void matvec_assign(const DenseWeights& w, int32_t first_row, int32_t rows, const float* x,
                          const QuantizedRow& xq, const float* bias, float* out) {
  if (w.f32) {
    matvec_rows(w.f32 + static_cast<int64_t>(first_row) * w.cols, rows, w.cols, x, bias, false,
                out);
    return;
  }
  for (int32_t r = 0; r < rows; ++r) out[r] = bias ? bias[r] : 0.f;
  matvec_accumulate(w, first_row, rows, x, xq, out);
}

// Training (backward kernels). w [rows, cols]: out[c] += sum_r w[r, c] * g[r],
// the transposed product that carries a gradient from a layer's outputs to
// its inputs.
void add_transposed_product(const float* w, int32_t rows, int32_t cols, const float* g, float* out);
// grad [rows, cols] += g (rows) outer v (cols): a weight gradient.
void add_outer(float* grad, int32_t rows, int32_t cols, const float* g, const float* v);
// The same summed over `steps` pairs (g + s * g_stride, v + s * v_stride):
// each gradient row is read and written once for all steps.
void add_outer_steps(float* grad, int32_t rows, int32_t cols, const float* g, int64_t g_stride,
                     const float* v, int64_t v_stride, int32_t steps);
// out[r] += sum over s < steps of g[s * g_stride + r] (bias gradients).
void add_rows(float* out, int32_t rows, const float* g, int64_t g_stride, int32_t steps);

// The input-side products of up to kTimeBlock consecutive steps at once
// (float weights; hybrid kernels quantize each step's x instead):
// out[s * rows + r] = (bias ? bias[r] : 0) + W[r, :] . x_s for s < kTimeBlock
// (steps past `steps` see x_s = 0),
// where x_s = x + s * x_stride. With few input features (3 for the
// reference model) a per-step dot product is mostly loop overhead; across
// 8 steps each weight multiplies a vector of 8 inputs. `xt` is scratch for
// cols * kTimeBlock floats.
constexpr int32_t kTimeBlock = 8;
void project_steps(const DenseWeights& w, const float* x, int64_t x_stride, int32_t steps,
                   const float* bias, float* xt, float* out);

// Batched recurrent kernels (CMake GRUWB_BATCHED, ON on hosts, OFF in firmware): B > 1 batch
// rows run each time step as matrix-matrix products instead of B matrix-vector products.
#ifndef GRUWB_BATCHED_KERNELS
#define GRUWB_BATCHED_KERNELS 0
#endif
#if GRUWB_BATCHED_KERNELS
// C[i, n] += sum over k < depth of A(i, k) * B[k * ldb + n] for i < rows, n < cols, with
// A(i, k) = a[i * a_row + k * a_col] (a strided A is a transposed one: weight gradients) and C's
// rows ldc apart. Register-tiled: a tile of C rows x 64 columns stays in registers over all k.
void gemm_accumulate(int32_t rows, int32_t cols, int32_t depth, const float* a, int64_t a_row,
                     int64_t a_col, const float* b, int64_t ldb, float* c, int64_t ldc);
void gemm_accumulate_portable(int32_t rows, int32_t cols, int32_t depth, const float* a,
                              int64_t a_row, int64_t a_col, const float* b, int64_t ldb, float* c,
                              int64_t ldc);
#if defined(GRUWB_CLONED_HOT_LOOPS)
void gemm_accumulate_avx512(int32_t rows, int32_t cols, int32_t depth, const float* a,
                            int64_t a_row, int64_t a_col, const float* b, int64_t ldb, float* c,
                            int64_t ldc);
#endif
// dst [cols, rows] = src [rows, cols] transposed; dst's rows are dst_stride
// floats apart (rows for a plain transpose, more to stack matrices side by side).
void transpose_matrix(const float* src, int32_t rows, int32_t cols, float* dst, int64_t dst_stride);
#endif

// Where step t of batch row b starts in a [B,T,F] (batch-major) or [T,B,F]
// (time-major) sequence.
struct SequenceLayout {
  int32_t batch = 0;
  int32_t time = 0;
  bool time_major = false;

  int64_t offset(int32_t b, int32_t t, int32_t features) const {
    int64_t row =
        time_major ? static_cast<int64_t>(t) * batch + b : static_cast<int64_t>(b) * time + t;
    return row * features;
  }
};

// prepare: reads B and T from a rank-3 sequence; fails naming the tensor.
Status sequence_layout(const Tensor* input, bool time_major, SequenceLayout* out);
// [B,T,F] or [T,B,F].
Shape sequence_shape(const SequenceLayout& layout, int32_t features);

// exp(x) for float x, clamped to [-87, 88] (no inf, no denormals):
// x = k ln2 + r with |r| <= ln2/2, exp(r) by its Taylor polynomial to r^6
// (relative error < 2e-7), 2^k written straight into the exponent bits.
inline float fast_exp(float x) {
  if (x != x) return x;  // NaN (weights or inputs from a file): no integer conversion of it
  x = x < -87.f ? -87.f : (x > 88.f ? 88.f : x);
  // Adding and removing 1.5 * 2^23 rounds to the nearest integer without a
  // libm call (valid for |value| < 2^22).
  const float kRound = 12582912.f;
  float k = (x * 1.44269504f + kRound) - kRound;
  // ln2 split in two (Cody-Waite) so k * ln2 is exact enough.
  float r = x - k * 0.693359375f;
  r = r + k * 2.12194440e-4f;
  float p = 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

inline float fast_sigmoid(float x) { return 1.f / (1.f + fast_exp(-x)); }

inline float fast_tanh(float x) {
  // tanh(|x|) = (1 - e) / (1 + e) with e = exp(-2|x|) in (0, 1]: no overflow.
  float a = x < 0.f ? -x : x;
  float e = fast_exp(-2.f * a);
  float t = (1.f - e) / (1.f + e);
  return x < 0.f ? -t : t;
}

// Keras 2's hard sigmoid (tf.keras.backend.hard_sigmoid before Keras 3).
inline float hard_sigmoid(float x) {
  float y = 0.2f * x + 0.5f;
  return y < 0.f ? 0.f : (y > 1.f ? 1.f : y);
}

// Per-time-step state gradient norms for a training observer (zero cost
// without one). A backward kernel keeps `steps` floats of backward scratch
// for them: begin_state_gradients() returns that buffer zeroed, or nullptr
// when no observer listens; the kernel adds ||dL/dh_t||^2 of every batch row
// at index t; report_state_gradients() sends the norms, last step first.
inline float* begin_state_gradients(const OpContext& ctx, float* buffer, int32_t steps) {
  if (!ctx.wants_state_gradients()) return nullptr;
  for (int32_t t = 0; t < steps; ++t) buffer[t] = 0.f;
  return buffer;
}
inline void report_state_gradients(const OpContext& ctx, const float* squares, int32_t steps) {
  if (!squares) return;
  for (int32_t t = steps - 1; t >= 0; --t) ctx.report_state_gradient(t, std::sqrt(squares[t]));
}

void vector_sigmoid(float* x, int32_t n);
void vector_tanh(float* x, int32_t n);
void vector_hard_sigmoid(float* x, int32_t n);
// A fused activation over a vector (TANH through fast_tanh).
void vector_activation(Activation activation, float* x, int32_t n);

}  // namespace gruwb
