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

void gru_step(const GruCell& cell, const float* x, const float* h_prev, float* h_next,
              float* scratch) {
  const int32_t units = cell.units;
  float* input_part = scratch;                  // W x + bx, blocks z | r | h
  float* recurrent_part = scratch + 3 * units;  // U h + bh (or U (r*h) for the h block)
  matvec_assign(cell.input_kernel, 0, 3 * units, x, cell.input_bias, input_part);
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

}  // namespace gruwb
