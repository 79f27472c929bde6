#include "plugins/cells/fastgrnn/fastgrnn_cell.h"

#include <cstring>

namespace gruwb {
namespace {

void apply_nonlinearity(FastGrnnNonlinearity nl, float* x, int32_t n) {
  switch (nl) {
    case FastGrnnNonlinearity::kSigmoid: vector_sigmoid(x, n); break;
    case FastGrnnNonlinearity::kTanh: vector_tanh(x, n); break;
    case FastGrnnNonlinearity::kRelu:
      for (int32_t i = 0; i < n; ++i) x[i] = x[i] < 0.f ? 0.f : x[i];
      break;
  }
}

// The derivative from the nonlinearity's output (the tape keeps outputs only).
inline float nonlinearity_derivative(FastGrnnNonlinearity nl, float y) {
  switch (nl) {
    case FastGrnnNonlinearity::kSigmoid: return y * (1.f - y);
    case FastGrnnNonlinearity::kTanh: return 1.f - y * y;
    case FastGrnnNonlinearity::kRelu: return y > 0.f ? 1.f : 0.f;
  }
  return 1.f;
}

void add_bias(float* x, const float* bias, int32_t n) {
  if (!bias) return;
  for (int32_t i = 0; i < n; ++i) x[i] += bias[i];
}

}  // namespace

void fastgrnn_sequence(const FastGrnnCell& cell, const float* x, int64_t x_stride, int32_t steps,
                       const float* h0, float* out, int64_t out_stride, float* scratch,
                       float* tape) {
  const int32_t units = cell.units;
  const size_t unit_bytes = sizeof(float) * static_cast<size_t>(units);
  float* projected = scratch;                            // [kTimeBlock, H] W x
  float* transposed = projected + kTimeBlock * units;    // [I, kTimeBlock]
  float* z = transposed + kTimeBlock * cell.input_size;  // [H]
  float* zeros = z + units;                              // [H]
  if (!h0) {
    for (int32_t i = 0; i < units; ++i) zeros[i] = 0.f;
    h0 = zeros;
  }
  DenseWeights w;
  w.f32 = cell.input_kernel;
  w.rows = units;
  w.cols = cell.input_size;
  const float zeta = fast_sigmoid(cell.zeta);
  const float nu = fast_sigmoid(cell.nu);
  const float* h_prev = h0;
  for (int32_t t0 = 0; t0 < steps; t0 += kTimeBlock) {
    const int32_t block = steps - t0 < kTimeBlock ? steps - t0 : kTimeBlock;
    project_steps(w, x + t0 * x_stride, x_stride, block, nullptr, transposed, projected);
    for (int32_t s = 0; s < block; ++s) {
      float* candidate = projected + s * units;  // pre, then h~
      float* step_tape = tape ? tape + (t0 + s) * fastgrnn_tape_floats(units) : nullptr;
      if (step_tape) memcpy(step_tape, h_prev, unit_bytes);  // before h_next may overwrite it
      matvec_rows(cell.recurrent_kernel, units, units, h_prev, nullptr, true, candidate);
      memcpy(z, candidate, unit_bytes);
      add_bias(z, cell.gate_bias, units);
      add_bias(candidate, cell.update_bias, units);
      apply_nonlinearity(cell.gate, z, units);
      apply_nonlinearity(cell.update, candidate, units);
      if (step_tape) {
        memcpy(step_tape + units, z, unit_bytes);
        memcpy(step_tape + 2 * units, candidate, unit_bytes);
      }
      // h_next may alias h_prev: element i is read before it is written.
      float* h_next = out + (t0 + s) * out_stride;
      for (int32_t i = 0; i < units; ++i) {
        h_next[i] = (zeta * (1.f - z[i]) + nu) * candidate[i] + z[i] * h_prev[i];
      }
      h_prev = h_next;
    }
  }
  if (steps == 0 && out_stride == 0) memcpy(out, h0, unit_bytes);
}

void fastgrnn_sequence_backward(const FastGrnnCell& cell, const float* x, int64_t x_stride,
                                int32_t steps, const float* tape, const float* dout,
                                int64_t dout_stride, float* dx, float* dh0,
                                const FastGrnnGradients& grads, float* scratch,
                                float* state_gradient_squares) {
  const int32_t units = cell.units;
  const int32_t in = cell.input_size;
  const int64_t tape_floats = fastgrnn_tape_floats(units);
  const int32_t block_floats = kFastGrnnGradientBlock * units;
  float* dh = scratch;                      // dL/dh_t
  float* dh_prev = dh + units;              // dL/dh_{t-1}
  float* d_gate = dh_prev + units;          // [block][H] grad of z's pre-activation
  float* d_update = d_gate + block_floats;  // [block][H] grad of h~'s pre-activation
  float* d_pre = d_update + block_floats;   // [block][H] their sum: grad of W x + U h
  const float zeta = fast_sigmoid(cell.zeta);
  const float nu = fast_sigmoid(cell.nu);
  float d_zeta = 0.f, d_nu = 0.f;  // of sigmoid(zeta) and sigmoid(nu)
  for (int32_t i = 0; i < units; ++i) dh[i] = 0.f;
  if (steps > 0 && dout_stride == 0) {
    for (int32_t i = 0; i < units; ++i) dh[i] = dout[i];
  }
  for (int32_t hi = steps - 1; hi >= 0; hi -= kFastGrnnGradientBlock) {
    const int32_t lo = hi - kFastGrnnGradientBlock + 1 > 0 ? hi - kFastGrnnGradientBlock + 1 : 0;
    for (int32_t t = hi; t >= lo; --t) {
      if (dout_stride != 0) {
        const float* g = dout + t * dout_stride;
        for (int32_t i = 0; i < units; ++i) dh[i] += g[i];
      }
      if (state_gradient_squares) {
        float sum = 0.f;
        for (int32_t i = 0; i < units; ++i) sum += dh[i] * dh[i];
        state_gradient_squares[t] += sum;
      }
      const float* h_prev = tape + t * tape_floats;
      const float* z = h_prev + units;
      const float* candidate = z + units;
      float* dg = d_gate + (t - lo) * units;
      float* du = d_update + (t - lo) * units;
      float* dp = d_pre + (t - lo) * units;
      for (int32_t i = 0; i < units; ++i) {
        // h' = (zeta (1 - z) + nu) h~ + z h
        d_zeta += dh[i] * (1.f - z[i]) * candidate[i];
        d_nu += dh[i] * candidate[i];
        dg[i] =
            dh[i] * (h_prev[i] - zeta * candidate[i]) * nonlinearity_derivative(cell.gate, z[i]);
        du[i] =
            dh[i] * (zeta * (1.f - z[i]) + nu) * nonlinearity_derivative(cell.update, candidate[i]);
        dp[i] = dg[i] + du[i];
        dh_prev[i] = dh[i] * z[i];
      }
      add_transposed_product(cell.recurrent_kernel, units, units, dp, dh_prev);
      if (dx) add_transposed_product(cell.input_kernel, units, in, dp, dx + t * x_stride);
      for (int32_t i = 0; i < units; ++i) dh[i] = dh_prev[i];
    }
    // Weight gradients of steps lo..hi at once: slot s holds step lo + s.
    const int32_t block = hi - lo + 1;
    if (grads.input_kernel) {
      add_outer_steps(grads.input_kernel, units, in, d_pre, units, x + lo * x_stride, x_stride,
                      block);
    }
    if (grads.recurrent_kernel) {
      add_outer_steps(grads.recurrent_kernel, units, units, d_pre, units, tape + lo * tape_floats,
                      tape_floats, block);
    }
    if (grads.gate_bias) add_rows(grads.gate_bias, units, d_gate, units, block);
    if (grads.update_bias) add_rows(grads.update_bias, units, d_update, units, block);
  }
  // Through the sigmoids the scalars are trained behind.
  if (grads.zeta) *grads.zeta += d_zeta * zeta * (1.f - zeta);
  if (grads.nu) *grads.nu += d_nu * nu * (1.f - nu);
  if (dh0) {
    for (int32_t i = 0; i < units; ++i) dh0[i] += dh[i];
  }
}

}  // namespace gruwb
