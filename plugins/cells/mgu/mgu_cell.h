#pragma once
// The minimal gated unit (Zhou, Wu, Zhang and Zhou, 2016): a GRU whose one
// forget gate f serves as both reset and update gate,
//   f  = sigmoid(W_f x + U_f h + b_f)
//   h~ = tanh(W_h x + U_h (f * h) + b_h)
//   h' = (1 - f) h + f h~
// Weight rows are gate blocks f | h (each H rows, FULLY_CONNECTED layout
// [out, in]), one bias per row. Float32 only. The op around it: mgu_op.cpp;
// the specification: README.md here.

#include <cstdint>

#include "engine/kernels/recurrent_util.h"

namespace gruwb {

struct MguCell {
  int32_t input_size = 0;
  int32_t units = 0;
  const float* input_kernel = nullptr;      // W [2H, I]
  const float* recurrent_kernel = nullptr;  // U [2H, H]
  const float* bias = nullptr;              // [2H] or null (zeros)
};

// Floats of scratch mgu_sequence needs: W x + b of a block of kTimeBlock
// steps, that block's inputs transposed, f * h and zeros for a missing h0.
inline int64_t mgu_scratch_floats(int32_t input_size, int32_t units) {
  return static_cast<int64_t>(kTimeBlock) * (2 * static_cast<int64_t>(units) + input_size) +
         2 * static_cast<int64_t>(units);
}

// Runs one batch row through `steps` steps. Step s reads x + s * x_stride and
// writes its state to out + s * out_stride; out_stride 0 keeps only the last
// state (each step overwrites the previous one in place). h0 == nullptr
// starts from zeros. `tape` (training, may be nullptr) receives
// mgu_tape_floats(units) floats per step: h_prev, f, h~.
void mgu_sequence(const MguCell& cell, const float* x, int64_t x_stride, int32_t steps,
                  const float* h0, float* out, int64_t out_stride, float* scratch,
                  float* tape = nullptr);

inline int64_t mgu_tape_floats(int32_t units) { return 3 * static_cast<int64_t>(units); }
// Weight gradients are summed over blocks of this many steps.
constexpr int32_t kMguGradientBlock = 8;
inline int64_t mgu_backward_scratch_floats(int32_t units) {
  return (3 + 3 * static_cast<int64_t>(kMguGradientBlock)) * units;
}

// Where mgu_sequence_backward ACCUMULATES gradients (nullptr: frozen).
struct MguGradients {
  float* input_kernel = nullptr;      // [2H, I]
  float* recurrent_kernel = nullptr;  // [2H, H]
  float* bias = nullptr;              // [2H]
};

// Backpropagation through time over one batch row. `dout` holds dL/dh_t at
// dout + t * dout_stride, or (dout_stride 0) dL/dh_T of the last step only.
// Accumulates into dx (step t at dx + t * x_stride), dh0 and `grads`; each
// may be nullptr. `scratch`: mgu_backward_scratch_floats(units).
// `state_gradient_squares` (observers only, may be nullptr) gets
// ||dL/dh_t||^2 added at index t.
void mgu_sequence_backward(const MguCell& cell, const float* x, int64_t x_stride, int32_t steps,
                           const float* tape, const float* dout, int64_t dout_stride, float* dx,
                           float* dh0, const MguGradients& grads, float* scratch,
                           float* state_gradient_squares = nullptr);

}  // namespace gruwb
