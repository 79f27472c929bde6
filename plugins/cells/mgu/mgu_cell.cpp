#include "plugins/cells/mgu/mgu_cell.h"

#include <cstring>

namespace gruwb {

void mgu_sequence(const MguCell& cell, const float* x, int64_t x_stride, int32_t steps,
                  const float* h0, float* out, int64_t out_stride, float* scratch, float* tape) {
  const int32_t units = cell.units;
  const int32_t gates = 2 * units;
  const size_t unit_bytes = sizeof(float) * static_cast<size_t>(units);
  float* projected = scratch;                                      // [kTimeBlock, 2H] W x + b
  float* transposed = projected + kTimeBlock * gates;              // [I, kTimeBlock]
  float* reset_state = transposed + kTimeBlock * cell.input_size;  // [H] f * h
  float* zeros = reset_state + units;                              // [H]
  if (!h0) {
    for (int32_t i = 0; i < units; ++i) zeros[i] = 0.f;
    h0 = zeros;
  }
  DenseWeights w;
  w.f32 = cell.input_kernel;
  w.rows = gates;
  w.cols = cell.input_size;
  const float* u_candidate = cell.recurrent_kernel + static_cast<int64_t>(units) * units;
  const float* h_prev = h0;
  for (int32_t t0 = 0; t0 < steps; t0 += kTimeBlock) {
    const int32_t block = steps - t0 < kTimeBlock ? steps - t0 : kTimeBlock;
    project_steps(w, x + t0 * x_stride, x_stride, block, cell.bias, transposed, projected);
    for (int32_t s = 0; s < block; ++s) {
      float* f = projected + s * gates;
      float* candidate = f + units;
      float* step_tape = tape ? tape + (t0 + s) * mgu_tape_floats(units) : nullptr;
      if (step_tape) memcpy(step_tape, h_prev, unit_bytes);  // before h_next may overwrite it
      matvec_rows(cell.recurrent_kernel, units, units, h_prev, nullptr, true, f);
      vector_sigmoid(f, units);
      for (int32_t i = 0; i < units; ++i) reset_state[i] = f[i] * h_prev[i];
      matvec_rows(u_candidate, units, units, reset_state, nullptr, true, candidate);
      vector_tanh(candidate, units);
      if (step_tape) memcpy(step_tape + units, f, 2 * unit_bytes);  // f | h~
      // h_next may alias h_prev: element i is read before it is written.
      float* h_next = out + (t0 + s) * out_stride;
      for (int32_t i = 0; i < units; ++i) {
        h_next[i] = (1.f - f[i]) * h_prev[i] + f[i] * candidate[i];
      }
      h_prev = h_next;
    }
  }
  if (steps == 0 && out_stride == 0) memcpy(out, h0, unit_bytes);
}

void mgu_sequence_backward(const MguCell& cell, const float* x, int64_t x_stride, int32_t steps,
                           const float* tape, const float* dout, int64_t dout_stride, float* dx,
                           float* dh0, const MguGradients& grads, float* scratch,
                           float* state_gradient_squares) {
  const int32_t units = cell.units;
  const int32_t gates = 2 * units;
  const int32_t in = cell.input_size;
  const int64_t tape_floats = mgu_tape_floats(units);
  const float* u_candidate = cell.recurrent_kernel + static_cast<int64_t>(units) * units;
  float* dh = scratch;                                      // dL/dh_t
  float* dh_prev = dh + units;                              // dL/dh_{t-1}
  float* d_reset_state = dh_prev + units;                   // [H] U_h^T d(candidate pre)
  float* d_pre = d_reset_state + units;                     // [block][2H] grad of W x + b + U..
  float* reset_states = d_pre + kMguGradientBlock * gates;  // [block][H] f * h_prev
  for (int32_t i = 0; i < units; ++i) dh[i] = 0.f;
  if (steps > 0 && dout_stride == 0) {
    for (int32_t i = 0; i < units; ++i) dh[i] = dout[i];
  }
  for (int32_t hi = steps - 1; hi >= 0; hi -= kMguGradientBlock) {
    const int32_t lo = hi - kMguGradientBlock + 1 > 0 ? hi - kMguGradientBlock + 1 : 0;
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
      const float* f = h_prev + units;
      const float* candidate = f + units;
      float* df = d_pre + (t - lo) * gates;  // grad of f's pre-activation
      float* dc = df + units;                // grad of h~'s pre-activation
      float* rh = reset_states + (t - lo) * units;
      for (int32_t i = 0; i < units; ++i) {
        dc[i] = dh[i] * f[i] * (1.f - candidate[i] * candidate[i]);
        d_reset_state[i] = 0.f;
        rh[i] = f[i] * h_prev[i];
      }
      add_transposed_product(u_candidate, units, units, dc, d_reset_state);
      for (int32_t i = 0; i < units; ++i) {
        // h' = (1 - f) h + f h~, and f reaches h~ through U_h (f * h).
        const float d_gate = dh[i] * (candidate[i] - h_prev[i]) + d_reset_state[i] * h_prev[i];
        df[i] = d_gate * f[i] * (1.f - f[i]);
        dh_prev[i] = dh[i] * (1.f - f[i]) + d_reset_state[i] * f[i];
      }
      add_transposed_product(cell.recurrent_kernel, units, units, df, dh_prev);
      if (dx) add_transposed_product(cell.input_kernel, gates, in, df, dx + t * x_stride);
      for (int32_t i = 0; i < units; ++i) dh[i] = dh_prev[i];
    }
    // Weight gradients of steps lo..hi at once: slot s holds step lo + s.
    const int32_t block = hi - lo + 1;
    if (grads.input_kernel) {
      add_outer_steps(grads.input_kernel, gates, in, d_pre, gates, x + lo * x_stride, x_stride,
                      block);
    }
    if (grads.bias) add_rows(grads.bias, gates, d_pre, gates, block);
    if (grads.recurrent_kernel) {
      // The f rows see h_prev, the candidate rows f * h_prev.
      add_outer_steps(grads.recurrent_kernel, units, units, d_pre, gates, tape + lo * tape_floats,
                      tape_floats, block);
      add_outer_steps(grads.recurrent_kernel + static_cast<int64_t>(units) * units, units, units,
                      d_pre + units, gates, reset_states, units, block);
    }
  }
  if (dh0) {
    for (int32_t i = 0; i < units; ++i) dh0[i] += dh[i];
  }
}

}  // namespace gruwb
