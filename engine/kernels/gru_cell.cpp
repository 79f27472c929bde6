#include "engine/kernels/gru_cell.h"

namespace gruwb {
namespace {

void gate_activation(GruGateActivation activation, float* x, int32_t n) {
  if (activation == GruGateActivation::kSigmoid) {
    vector_sigmoid(x, n);
  } else {
    vector_hard_sigmoid(x, n);
  }
}

void candidate_activation(GruActivation activation, float* x, int32_t n) {
  switch (activation) {
    case GruActivation::kTanh: vector_tanh(x, n); break;
    case GruActivation::kRelu:
      for (int32_t i = 0; i < n; ++i) x[i] = x[i] < 0.f ? 0.f : x[i];
      break;
    case GruActivation::kLinear: break;
  }
}

}  // namespace

namespace {

// One step; `input_part` holds W_x x + b_x (3H, blocks z | r | h) and is
// overwritten. h_next may alias h_prev.
void gru_step(const GruCell& cell, float* input_part, const float* h_prev, float* h_next,
              float* recurrent_part) {
  const int32_t units = cell.units;
  float* z = input_part;
  float* r = input_part + units;
  float* candidate = input_part + 2 * units;
  if (cell.reset_after) {
    matvec_assign(cell.recurrent_kernel, 0, 3 * units, h_prev, cell.recurrent_bias, recurrent_part);
    for (int32_t i = 0; i < 2 * units; ++i) z[i] += recurrent_part[i];  // z and r blocks
    gate_activation(cell.recurrent_activation, z, 2 * units);
    const float* recurrent_candidate = recurrent_part + 2 * units;
    for (int32_t i = 0; i < units; ++i) candidate[i] += r[i] * recurrent_candidate[i];
  } else {
    matvec_assign(cell.recurrent_kernel, 0, 2 * units, h_prev, nullptr, recurrent_part);
    for (int32_t i = 0; i < 2 * units; ++i) z[i] += recurrent_part[i];
    gate_activation(cell.recurrent_activation, z, 2 * units);
    float* reset_state = recurrent_part;  // r * h, reusing the consumed z|r products
    for (int32_t i = 0; i < units; ++i) reset_state[i] = r[i] * h_prev[i];
    matvec_accumulate(cell.recurrent_kernel, 2 * units, units, reset_state, candidate);
  }
  candidate_activation(cell.activation, candidate, units);
  for (int32_t i = 0; i < units; ++i) {
    h_next[i] = z[i] * h_prev[i] + (1.f - z[i]) * candidate[i];
  }
}

}  // namespace

void gru_sequence(const GruCell& cell, const float* x, int64_t x_stride, int32_t steps,
                  const float* h0, float* out, int64_t out_stride, float* scratch) {
  const int32_t units = cell.units;
  const int32_t gates = 3 * units;
  float* projected = scratch;                                     // [3H, kTimeBlock]
  float* transposed = projected + kTimeBlock * gates;             // [I, kTimeBlock]
  float* input_part = transposed + kTimeBlock * cell.input_size;  // [3H]
  float* recurrent_part = input_part + gates;                     // [3H]
  float* zeros = recurrent_part + gates;                          // [H]
  if (!h0) {
    for (int32_t i = 0; i < units; ++i) zeros[i] = 0.f;
    h0 = zeros;
  }
  const float* h_prev = h0;
  for (int32_t t0 = 0; t0 < steps; t0 += kTimeBlock) {
    const int32_t block = steps - t0 < kTimeBlock ? steps - t0 : kTimeBlock;
    project_steps(cell.input_kernel, x + t0 * x_stride, x_stride, block, cell.input_bias,
                  transposed, projected);
    for (int32_t s = 0; s < block; ++s) {
      for (int32_t i = 0; i < gates; ++i) input_part[i] = projected[i * kTimeBlock + s];
      float* h_next = out + (t0 + s) * out_stride;
      gru_step(cell, input_part, h_prev, h_next, recurrent_part);
      h_prev = h_next;
    }
  }
  if (steps == 0 && out_stride == 0) {
    for (int32_t i = 0; i < units; ++i) out[i] = h0[i];
  }
}

}  // namespace gruwb
