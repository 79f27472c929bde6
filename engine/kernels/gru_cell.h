#pragma once
// One GRU time step, shared by the Circle GRU op (gru.cpp) and our GRUWB_GRU
// custom op (gru_custom.cpp). Keras conventions: weight rows are gate blocks
// z | r | h (each `units` rows, FC layout [out, in]), h' = z*h + (1-z)*h~.
//   reset_after = true:  h~ = act(Wh x + bx_h + r * (Uh h + bh_h))   (Keras 2/3
//                        default, PyTorch, ONNX linear_before_reset=1, onert-micro)
//   reset_after = false: h~ = act(Wh x + bx_h + Uh (r * h))            (no
//                        recurrent bias: Keras keeps a single [3H] bias)
// z and r use the recurrent activation on (W x + bx) + (U h + bh).
//
// Hybrid (INT8 kernels with per-tensor or per-row scales): each product is a
// hybrid FULLY_CONNECTED of TFLite (hybrid_util.h): per step, x is quantized
// once for W x, h once for U h (reset_after: all 3H rows; else the z|r rows)
// and, for reset_after = false, r * h once for U_h (r * h). Each product is
// bias + int32 dot * (row scale * weight scale), so the fused op equals a
// converter's GRU loop of hybrid FCs with the same weights
// (docs/fused-gru-op.md, "Hybrid models").

#include <cstdint>

#include "engine/kernels/quant_util.h"
#include "engine/kernels/recurrent_util.h"

namespace gruwb {

enum class GruActivation : uint8_t { kTanh, kLinear, kRelu };
enum class GruGateActivation : uint8_t { kSigmoid, kHardSigmoid };

#if defined(GRUWB_CLONED_HOT_LOOPS)
struct GruPackedKernels {
  ColumnMajorWeights input;      // W_x [3H, I]
  ColumnMajorWeights recurrent;  // W_h [3H, H]
};
#endif

struct GruCell {
  int32_t input_size = 0;
  int32_t units = 0;
  bool reset_after = true;
  GruActivation activation = GruActivation::kTanh;
  GruGateActivation recurrent_activation = GruGateActivation::kSigmoid;
  DenseWeights input_kernel;              // [3H, I]
  DenseWeights recurrent_kernel;          // [3H, H]
  const float* input_bias = nullptr;      // [3H] or null
  const float* recurrent_bias = nullptr;  // [3H] or null (reset_after only)
  // Hybrid only: quantize x, h and r * h asymmetrically (TFLite's
  // asymmetric_quantize_inputs); false: symmetric.
  bool asymmetric_inputs = false;
#if defined(GRUWB_CLONED_HOT_LOOPS)
  // Inference on AVX-512 hosts (float, one batch row at a time): W_x and
  // (reset_after) W_h packed at prepare by prepare_gru_packed_kernels, used
  // by gru_sequence instead of input_kernel/recurrent_kernel when set.
  GruPackedKernels packed;
#endif
};

// Floats of scratch gru_sequence needs; `hybrid` (INT8 kernels) adds room for
// the quantized x and h, one byte per value.
inline int64_t gru_scratch_floats(int32_t input_size, int32_t units, bool hybrid) {
  const int64_t quantized_rows = hybrid ? (int64_t{input_size} + units + 3) / 4 : 0;
  return kTimeBlock * (3 * int64_t{units} + input_size) + 7 * int64_t{units} + quantized_rows;
}

// Runs one batch row through `steps` steps. Step s reads x + s * x_stride and
// writes its state to out + s * out_stride; out_stride 0 keeps only the last
// state (each step overwrites the previous one in place). h0 == nullptr
// starts from zeros. `scratch` holds gru_scratch_floats(input_size, units,
// hybrid).
// `tape` (training, may be nullptr) receives gru_tape_floats(units) floats per
// step: h_prev, z, r, the candidate h~ and (reset_after) U_h h + b_h of the
// candidate block; gru_sequence_backward reads them back.
void gru_sequence(const GruCell& cell, const float* x, int64_t x_stride, int32_t steps,
                  const float* h0, float* out, int64_t out_stride, float* scratch,
                  float* tape = nullptr);

inline int32_t gru_tape_floats(int32_t units) { return 5 * units; }
// Weight gradients are summed over blocks of kGruGradientBlock steps (one
// pass over each gradient row per block instead of one per step).
constexpr int32_t kGruGradientBlock = 8;
inline int32_t gru_backward_scratch_floats(int32_t units) {
  return 3 * units + kGruGradientBlock * 7 * units;  // units <= 26,754: [3H, H] has <= 2^31
}

// Where gru_sequence_backward ACCUMULATES weight gradients (nullptr: frozen).
struct GruGradients {
  float* input_kernel = nullptr;      // [3H, I]
  float* recurrent_kernel = nullptr;  // [3H, H]
  float* input_bias = nullptr;        // [3H]
  float* recurrent_bias = nullptr;    // [3H] (reset_after only)
};

// Backpropagation through time over one batch row, float weights only.
// `dout` holds dL/dh_t at out + t * dout_stride, or (dout_stride 0) dL/dh_T of
// the last step only. Accumulates into dx (step t at dx + t * x_stride), dh0
// and `grads`; each may be nullptr. `scratch`: gru_backward_scratch_floats.
// `state_gradient_squares` (observers only, may be nullptr) gets
// ||dL/dh_t||^2 added at index t, so a kernel can sum it over batch rows.
void gru_sequence_backward(const GruCell& cell, const float* x, int64_t x_stride, int32_t steps,
                           const float* tape, const float* dout, int64_t dout_stride, float* dx,
                           float* dh0, const GruGradients& grads, float* scratch,
                           float* state_gradient_squares = nullptr);

#if GRUWB_BATCHED_KERNELS
// ---- Batched GRU (GRUWB_BATCHED: hosts) ----
// All B batch rows through each time step together: the step's input products of the B rows
// are one [B, I] x [I, 3H] product, the recurrent ones one [B, H] x [H, 3H] product (over
// transposed copies of W_x and W_h in scratch, made once per pass), and in backward dL/dh_{t-1}
// is one [B, 3H] x [3H, H] product and each weight gradient one product over the B rows per
// step. Float weights only. Results equal B calls of gru_sequence/gru_sequence_backward within
// float rounding; the tape has their layout (row b's step t at (b * time + t) * 5H).
struct GruBatchLayout {
  int32_t batch = 0;
  int32_t time = 0;
  int64_t x_row = 0, x_step = 0;      // floats between batch rows / time steps of x (and dx)
  int64_t out_row = 0, out_step = 0;  // of the output (and its gradient); out_step 0: the
                                      // last state only, row b at out + b * out_row
};

inline int64_t gru_batch_scratch_floats(int32_t input_size, int32_t units, int32_t batch) {
  return 3 * static_cast<int64_t>(units) * (input_size + units) +
         static_cast<int64_t>(batch) * 7 * units;
}
// h0 == nullptr: zeros; else row b at h0 + b * units.
void gru_sequence_batch(const GruCell& cell, const GruBatchLayout& layout, const float* x,
                        const float* h0, float* out, float* scratch, float* tape);

inline int64_t gru_batch_backward_scratch_floats(int32_t units, int32_t batch) {
  return static_cast<int64_t>(batch) * 10 * units;
}
// dx (layout of x), dh0 (row b at dh0 + b * units) and grads accumulate; each may be nullptr.
void gru_sequence_batch_backward(const GruCell& cell, const GruBatchLayout& layout, const float* x,
                                 const float* tape, const float* dout, float* dx, float* dh0,
                                 const GruGradients& grads, float* scratch,
                                 float* state_gradient_squares = nullptr);
#endif

// What one fused GRU op (Circle GRU or GRUWB_GRU) asks of the arena, in bytes: the forward
// scratch and, for training, the tape and the backward scratch (with one float per step for the
// state-gradient observer). `batched`: the batched kernels' sizes (hosts only). Computed with
// overflow checks, so a hostile shape gets an error instead of a wrapped size.
struct GruArenaBytes {
  size_t scratch = 0;
  size_t tape = 0;
  size_t backward_scratch = 0;
};
Status gru_arena_bytes(int32_t input_size, int32_t units, int32_t batch, int32_t time, bool hybrid,
                       bool batched, GruArenaBytes* out);

#if defined(GRUWB_CLONED_HOT_LOOPS)
// prepare of a fused GRU op: packs W_x [3H, I] and (reset_after) W_h [3H, H]
// (prepare_column_major) for the unbatched float path; *out stays empty when
// batched or where prepare_column_major declines.
Status prepare_gru_packed_kernels(OpContext& ctx, const Tensor* input_kernel,
                                  const Tensor* recurrent_kernel, int32_t input_size, int32_t units,
                                  bool reset_after, bool batched, GruPackedKernels* out);
#endif

// ---- Integer GRU (full-integer models; docs/fused-gru-op.md "Integer GRU") ----
// reset_after = true, sigmoid gates, tanh candidate. x int8 (zero point),
// weights int8 symmetric with one scale per row, int32 biases, state h int16
// Q0.15 (scale 2^-15); gate pre-activations int16 Q3.12 (scale 2^-12, [-8, 8)),
// gates and candidate int16 Q0.15 through fixed_point.h. Products accumulate
// in int32 and are rescaled to Q3.12 per row with a quantized multiplier.
struct GruIntegerCell {
  int32_t input_size = 0;
  int32_t units = 0;
  const int8_t* input_kernel = nullptr;      // [3H, I]
  const int8_t* recurrent_kernel = nullptr;  // [3H, H]
  // b_x - zp_x * (row sums of W_x): the zero point folded in at prepare [3H].
  const int32_t* input_bias = nullptr;
  const int32_t* recurrent_bias = nullptr;  // [3H] or null
  // s_x * s_wx[r] / 2^-12 and s_wh[r] * 2^-15 / 2^-12, per row [3H].
  const QuantizedMultiplier* input_multipliers = nullptr;
  const QuantizedMultiplier* recurrent_multipliers = nullptr;
};

// int16 values of scratch gru_sequence_integer needs.
inline int32_t gru_integer_scratch_values(int32_t units) { return 7 * units; }

// Runs one batch row through `steps` steps from h (int16 Q0.15 [H], updated
// in place to the last state). Step s reads x + s * x_stride and calls
// write_output(context, s, h) with the new state.
void gru_sequence_integer(const GruIntegerCell& cell, const int8_t* x, int64_t x_stride,
                          int32_t steps, int16_t* h, int16_t* scratch,
                          void (*write_output)(void* context, int32_t step, const int16_t* h),
                          void* context);

}  // namespace gruwb
