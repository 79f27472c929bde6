#pragma once
// The float LSTM's training tape (unidirectional_sequence_lstm.cpp) and its
// batched kernels.
//
// Batched (GRUWB_BATCHED_KERNELS: hosts), as gru_cell.h's batched GRU: all B
// batch rows through each time step together. Per step the four gates' input
// and recurrent products of the B rows are one [B, I] x [I, 4H] and one
// [B, H] x [H, 4H] product (over stacked, transposed copies of the weights
// made once per pass); in backward dL/dh_{t-1}, dL/dx_t and each weight
// gradient are products over the B rows. For the plain LSTM
// (lstm_batch_fits: no CIFG, peepholes, layer norm or projection; float
// weights; cell clip allowed). Results equal the row-by-row kernel's within
// float rounding, and the tape has its layout.

#include <cstdint>

#include "engine/kernels/recurrent_util.h"

namespace gruwb {

// Per step of one batch row (row b's step t at (b * time + t) *
// lstm_tape_floats): h_prev, c_prev, the gates i | f | g | o after their
// activations, the new cell state c (after clipping) and act(c).
enum LstmTapeSlot { kTapeH = 0, kTapeC, kTapeGates, kTapeCell = kTapeGates + 4, kTapeCellOutput };
inline int32_t lstm_tape_floats(int32_t units) { return (kTapeCellOutput + 1) * units; }

#if GRUWB_BATCHED_KERNELS
struct LstmBatch {
  SequenceLayout layout;
  int32_t input_size = 0;
  int32_t units = 0;
  const float* input_weights[4] = {};      // [H, I] per gate i, f, g, o
  const float* recurrent_weights[4] = {};  // [H, H]
  const float* bias[4] = {};               // [H] or null
  Activation activation = Activation::TANH;
  float cell_clip = 0.f;
};

inline int64_t lstm_batch_scratch_floats(int32_t input_size, int32_t units, int32_t batch) {
  const int64_t gates = 4 * int64_t{units};
  return gates * (input_size + units) + int64_t{batch} * (gates + 2 * units) + units;
}
// h and c ([B, H] each) hold the state before the first step and get the
// last one. out: y of row b's step t at out + layout.offset(b, t, H). `tape`
// may be nullptr (inference).
void lstm_sequence_batch(const LstmBatch& lstm, const float* x, float* h, float* c, float* out,
                         float* scratch, float* tape);

inline int64_t lstm_batch_backward_scratch_floats(int32_t units, int32_t batch) {
  return int64_t{batch} * 8 * units;
}
// Gradients accumulate; each may be nullptr. dx has x's layout, dh0 and dc0
// [B, H]. state_gradient_squares (observers, may be nullptr) gets
// ||dL/dh_t||^2 of every row added at index t.
struct LstmBatchGradients {
  float* input_weights[4] = {};
  float* recurrent_weights[4] = {};
  float* bias[4] = {};
  float* dx = nullptr;
  float* dh0 = nullptr;
  float* dc0 = nullptr;
};
void lstm_sequence_batch_backward(const LstmBatch& lstm, const float* x, const float* tape,
                                  const float* dout, const LstmBatchGradients& grads,
                                  float* scratch, float* state_gradient_squares);
#endif

}  // namespace gruwb
