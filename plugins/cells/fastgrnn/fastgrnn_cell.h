#pragma once
// FastGRNN (Kusupati et al., NeurIPS 2018; Microsoft EdgeML's FastGRNNCell,
// full rank): one gate and one candidate that share their products,
//   pre = W x + U h
//   z   = gate_nl(pre + b_z)
//   h~  = update_nl(pre + b_h)
//   h'  = (sigmoid(zeta) (1 - z) + sigmoid(nu)) h~ + z h
// with zeta and nu two trainable scalars. Weights use the FULLY_CONNECTED
// layout [out, in] (EdgeML's W [I, H] and U [H, H] transposed). Float32 only.
// The op around it: fastgrnn_op.cpp; the specification: README.md here.

#include <cstdint>

#include "engine/kernels/recurrent_util.h"

namespace gruwb {

// EdgeML's non-quantized choices for gate_nonlinearity / update_nonlinearity.
enum class FastGrnnNonlinearity : uint8_t { kSigmoid, kTanh, kRelu };

struct FastGrnnCell {
  int32_t input_size = 0;
  int32_t units = 0;
  const float* input_kernel = nullptr;      // W [H, I]
  const float* recurrent_kernel = nullptr;  // U [H, H]
  const float* gate_bias = nullptr;         // b_z [H] or null (zeros)
  const float* update_bias = nullptr;       // b_h [H] or null (zeros)
  float zeta = 0.f;                         // before its sigmoid, as trained
  float nu = 0.f;
  FastGrnnNonlinearity gate = FastGrnnNonlinearity::kSigmoid;
  FastGrnnNonlinearity update = FastGrnnNonlinearity::kTanh;
};

// Floats of scratch fastgrnn_sequence needs: W x of a block of kTimeBlock
// steps, that block's inputs transposed, z and zeros for a missing h0.
inline int64_t fastgrnn_scratch_floats(int32_t input_size, int32_t units) {
  return static_cast<int64_t>(kTimeBlock) * (units + input_size) + 2 * static_cast<int64_t>(units);
}

// Runs one batch row through `steps` steps. Step s reads x + s * x_stride and
// writes its state to out + s * out_stride; out_stride 0 keeps only the last
// state (each step overwrites the previous one in place). h0 == nullptr
// starts from zeros. `tape` (training, may be nullptr) receives
// fastgrnn_tape_floats(units) floats per step: h_prev, z, h~.
void fastgrnn_sequence(const FastGrnnCell& cell, const float* x, int64_t x_stride, int32_t steps,
                       const float* h0, float* out, int64_t out_stride, float* scratch,
                       float* tape = nullptr);

inline int64_t fastgrnn_tape_floats(int32_t units) { return 3 * static_cast<int64_t>(units); }
// Weight gradients are summed over blocks of this many steps (one pass over
// each gradient row per block instead of one per step).
constexpr int32_t kFastGrnnGradientBlock = 8;
inline int64_t fastgrnn_backward_scratch_floats(int32_t units) {
  return (2 + 3 * static_cast<int64_t>(kFastGrnnGradientBlock)) * units;
}

// Where fastgrnn_sequence_backward ACCUMULATES gradients (nullptr: frozen).
struct FastGrnnGradients {
  float* input_kernel = nullptr;      // [H, I]
  float* recurrent_kernel = nullptr;  // [H, H]
  float* gate_bias = nullptr;         // [H]
  float* update_bias = nullptr;       // [H]
  float* zeta = nullptr;              // [1]
  float* nu = nullptr;                // [1]
};

// Backpropagation through time over one batch row. `dout` holds dL/dh_t at
// dout + t * dout_stride, or (dout_stride 0) dL/dh_T of the last step only.
// Accumulates into dx (step t at dx + t * x_stride), dh0 and `grads`; each
// may be nullptr. `scratch`: fastgrnn_backward_scratch_floats(units).
// `state_gradient_squares` (observers only, may be nullptr) gets
// ||dL/dh_t||^2 added at index t.
void fastgrnn_sequence_backward(const FastGrnnCell& cell, const float* x, int64_t x_stride,
                                int32_t steps, const float* tape, const float* dout,
                                int64_t dout_stride, float* dx, float* dh0,
                                const FastGrnnGradients& grads, float* scratch,
                                float* state_gradient_squares = nullptr);

}  // namespace gruwb
