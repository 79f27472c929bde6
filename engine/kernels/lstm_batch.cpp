#include "engine/kernels/lstm_batch.h"

#include <cstring>

#include "engine/kernels/kernel_util.h"

namespace gruwb {

#if GRUWB_BATCHED_KERNELS
namespace {

// The four [H, cols] gate matrices as one transposed [cols, 4H] (column g * H + r).
void stack_transposed(const float* const* gates, int32_t units, int32_t cols, float* out) {
  for (int g = 0; g < 4; ++g) transpose_matrix(gates[g], units, cols, out + g * units, 4 * units);
}

}  // namespace

GRUWB_HOT_LOOP
void lstm_sequence_batch(const LstmBatch& lstm, const float* x, float* h, float* c, float* out,
                         float* scratch, float* tape) {
  const int32_t units = lstm.units;
  const int32_t in = lstm.input_size;
  const int32_t batch = lstm.layout.batch;
  const int32_t time = lstm.layout.time;
  const int64_t gates = 4 * int64_t{units};
  const size_t unit_bytes = sizeof(float) * static_cast<size_t>(units);
  const int64_t tape_floats = lstm_tape_floats(units);
  float* wxt = scratch;                      // [I, 4H]
  float* wht = wxt + in * gates;             // [H, 4H]
  float* pre = wht + units * gates;          // [B, 4H] the step's gates
  float* cell_output = pre + batch * gates;  // [H] act(c) of one row
  stack_transposed(lstm.input_weights, units, in, wxt);
  stack_transposed(lstm.recurrent_weights, units, units, wht);
  const int64_t x_row = lstm.layout.offset(1, 0, in) - lstm.layout.offset(0, 0, in);
#if defined(GRUWB_CLONED_HOT_LOOPS)
  // Keras' LSTM in inference: its whole gate math in one pass (lstm_default_gates_avx512).
  const bool keras_default =
      !tape && avx512_available() && lstm.activation == Activation::TANH && !(lstm.cell_clip > 0.f);
#endif
  for (int32_t t = 0; t < time; ++t) {
    for (int32_t b = 0; b < batch; ++b) {
      float* row = pre + b * gates;
      for (int g = 0; g < 4; ++g) {
        if (lstm.bias[g]) {
          memcpy(row + g * units, lstm.bias[g], unit_bytes);
        } else {
          memset(row + g * units, 0, unit_bytes);
        }
      }
    }
    gemm_accumulate(batch, static_cast<int32_t>(gates), in, x + lstm.layout.offset(0, t, in), x_row,
                    1, wxt, gates, pre, gates);
    gemm_accumulate(batch, static_cast<int32_t>(gates), units, h, units, 1, wht, gates, pre, gates);
    for (int32_t b = 0; b < batch; ++b) {
      float* gate = pre + b * gates;
      float* hb = h + int64_t{b} * units;
      float* cb = c + int64_t{b} * units;
      float* y = out + lstm.layout.offset(b, t, units);
#if defined(GRUWB_CLONED_HOT_LOOPS)
      if (keras_default) {
        lstm_default_gates_avx512(gate, cb, y, units);
        memcpy(hb, y, unit_bytes);
        continue;
      }
#endif
      float* step_tape = tape ? tape + (int64_t{b} * time + t) * tape_floats : nullptr;
      if (step_tape) {
        memcpy(step_tape + kTapeH * units, hb, unit_bytes);
        memcpy(step_tape + kTapeC * units, cb, unit_bytes);
      }
      vector_sigmoid(gate, 2 * units);  // i and f
      vector_activation(lstm.activation, gate + 2 * units, units);
      vector_sigmoid(gate + 3 * units, units);
      const float* i_gate = gate;
      const float* f_gate = gate + units;
      const float* g_gate = gate + 2 * units;
      const float* o_gate = gate + 3 * units;
      for (int32_t i = 0; i < units; ++i) cb[i] = f_gate[i] * cb[i] + i_gate[i] * g_gate[i];
      if (lstm.cell_clip > 0.f) {
        const float limit = lstm.cell_clip;
        for (int32_t i = 0; i < units; ++i) {
          cb[i] = cb[i] > limit ? limit : (cb[i] < -limit ? -limit : cb[i]);
        }
      }
      memcpy(cell_output, cb, unit_bytes);
      vector_activation(lstm.activation, cell_output, units);
      if (step_tape) {
        memcpy(step_tape + kTapeGates * units, gate, 4 * unit_bytes);
        memcpy(step_tape + kTapeCell * units, cb, unit_bytes);
        memcpy(step_tape + kTapeCellOutput * units, cell_output, unit_bytes);
      }
      for (int32_t i = 0; i < units; ++i) y[i] = cell_output[i] * o_gate[i];
      memcpy(hb, y, unit_bytes);
    }
  }
}

GRUWB_HOT_LOOP
void lstm_sequence_batch_backward(const LstmBatch& lstm, const float* x, const float* tape,
                                  const float* dout, const LstmBatchGradients& grads,
                                  float* scratch, float* state_gradient_squares) {
  const int32_t units = lstm.units;
  const int32_t in = lstm.input_size;
  const int32_t batch = lstm.layout.batch;
  const int32_t time = lstm.layout.time;
  const int64_t gates = 4 * int64_t{units};
  const int64_t bh = int64_t{batch} * units;
  const int64_t tape_floats = lstm_tape_floats(units);
  const int64_t tape_row = time * tape_floats;
  const Activation activation = lstm.activation;
  const float clip = lstm.cell_clip;
  float* dh = scratch;                               // [B, H] dL/dh_t
  float* dc = dh + bh;                               // [B, H] dL/dc_t
  float* d_pre = dc + bh;                            // [B, 4H] gate pre-activations i | f | g | o
  float* dh_prev = d_pre + 4 * bh;                   // [B, H]
  float* dc_prev = dh_prev + bh;                     // [B, H]
  for (int64_t i = 0; i < 2 * bh; ++i) dh[i] = 0.f;  // dh and dc
  const int64_t x_row = lstm.layout.offset(1, 0, in) - lstm.layout.offset(0, 0, in);
  for (int32_t t = time - 1; t >= 0; --t) {
    for (int32_t b = 0; b < batch; ++b) {
      const float* step = tape + b * tape_row + t * tape_floats;
      const float* c_prev = step + kTapeC * units;
      const float* gi = step + kTapeGates * units;
      const float* gf = gi + units;
      const float* gg = gf + units;
      const float* go = gg + units;
      const float* cell = step + kTapeCell * units;
      const float* a = step + kTapeCellOutput * units;
      const float* g_out = dout + lstm.layout.offset(b, t, units);
      const float* d = dh + int64_t{b} * units;
      const float* d_cell = dc + int64_t{b} * units;
      float* di = d_pre + b * gates;
      float* df = di + units;
      float* dg = df + units;
      float* d_o = dg + units;
      float* dcp = dc_prev + int64_t{b} * units;
      float sum = 0.f;
      for (int32_t i = 0; i < units; ++i) {
        const float dy = d[i] + g_out[i];
        sum += dy * dy;
        d_o[i] = dy * a[i] * go[i] * (1.f - go[i]);
        float dcell = d_cell[i] + dy * go[i] * activation_derivative(activation, a[i]);
        if (clip > 0.f && (cell[i] >= clip || cell[i] <= -clip)) dcell = 0.f;
        dcp[i] = dcell * gf[i];
        df[i] = dcell * c_prev[i] * gf[i] * (1.f - gf[i]);
        di[i] = dcell * gg[i] * gi[i] * (1.f - gi[i]);
        dg[i] = dcell * gi[i] * activation_derivative(activation, gg[i]);
      }
      if (state_gradient_squares) state_gradient_squares[t] += sum;
    }
    for (int64_t i = 0; i < bh; ++i) dh_prev[i] = 0.f;
    const float* xt = x + lstm.layout.offset(0, t, in);
    const float* h_prevs = tape + t * tape_floats + kTapeH * units;  // row b at b * tape_row
    for (int g = 0; g < 4; ++g) {
      const float* dgate = d_pre + g * units;  // [B, H], rows 4H apart
      gemm_accumulate(batch, units, units, dgate, gates, 1, lstm.recurrent_weights[g], units,
                      dh_prev, units);
      if (grads.dx) {
        gemm_accumulate(batch, in, units, dgate, gates, 1, lstm.input_weights[g], in,
                        grads.dx + lstm.layout.offset(0, t, in), x_row);
      }
      // Weight gradients of step t over the B rows: dW += dgate^T [H, B] x inputs [B, .].
      if (grads.input_weights[g]) {
        gemm_accumulate(units, in, batch, dgate, 1, gates, xt, x_row, grads.input_weights[g], in);
      }
      if (grads.recurrent_weights[g]) {
        gemm_accumulate(units, units, batch, dgate, 1, gates, h_prevs, tape_row,
                        grads.recurrent_weights[g], units);
      }
      if (grads.bias[g]) add_rows(grads.bias[g], units, dgate, gates, batch);
    }
    memcpy(dh, dh_prev, sizeof(float) * static_cast<size_t>(2 * bh));  // dh, dc <- dh_prev, dc_prev
  }
  for (int64_t i = 0; i < bh; ++i) {
    if (grads.dh0) grads.dh0[i] += dh[i];
    if (grads.dc0) grads.dc0[i] += dc[i];
  }
}
#endif

}  // namespace gruwb
