#include "engine/kernels/gru_cell.h"

#include <cstring>

#include "engine/model/checked_size.h"

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

Status gru_arena_bytes(int32_t input_size, int32_t units, int32_t batch, int32_t time, bool hybrid,
                       bool batched, GruArenaBytes* out) {
  int64_t scratch = gru_scratch_floats(input_size, units, hybrid);
  int64_t backward = gru_backward_scratch_floats(units);
#if GRUWB_BATCHED_KERNELS
  if (batched) {
    scratch = gru_batch_scratch_floats(input_size, units, batch);
    backward = gru_batch_backward_scratch_floats(units, batch);
  }
#else
  (void)batched;
#endif
  size_t steps = 0, tape = 0;
  if (!checked_mul(scratch, sizeof(float), &out->scratch) || !checked_mul(batch, time, &steps) ||
      !checked_mul(steps, gru_tape_floats(units), &tape) ||
      !checked_mul(tape, sizeof(float), &out->tape) ||
      !checked_mul(backward + time, sizeof(float), &out->backward_scratch)) {
    return Status::error(StatusCode::kOutOfMemory, "GRU: the arena it needs does not fit");
  }
  return Status();
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
Status prepare_gru_packed_kernels(OpContext& ctx, const Tensor* input_kernel,
                                  const Tensor* recurrent_kernel, int32_t input_size, int32_t units,
                                  bool reset_after, bool batched, GruPackedKernels* out) {
  *out = GruPackedKernels();
  if (batched) return Status();
  GRUWB_RETURN_IF_ERROR(
      prepare_column_major(ctx, input_kernel, 3 * units, input_size, &out->input));
  if (!reset_after) return Status();
  return prepare_column_major(ctx, recurrent_kernel, 3 * units, units, &out->recurrent);
}
#endif

namespace {

// The element-wise parts of a step, in fixed blocks of 8: GCC's -O2 cost
// model vectorizes only those (in gru_sequence's AVX2 clone: one register).
// a[i] += b[i].
GRUWB_ALWAYS_INLINE void add_to(float* __restrict a, const float* __restrict b, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int32_t j = 0; j < 8; ++j) a[i + j] += b[i + j];
  }
  for (; i < n; ++i) a[i] += b[i];
}

// a[i] += b[i] * c[i].
GRUWB_ALWAYS_INLINE void add_product_to(float* __restrict a, const float* __restrict b,
                                        const float* __restrict c, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int32_t j = 0; j < 8; ++j) a[i + j] += b[i + j] * c[i + j];
  }
  for (; i < n; ++i) a[i] += b[i] * c[i];
}

// h_next = z * h_prev + (1 - z) * candidate; h_next may alias h_prev (each
// block is read whole before it is written).
GRUWB_ALWAYS_INLINE void blend_state(const float* z, const float* h_prev, const float* candidate,
                                     float* h_next, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float v[8];
    for (int32_t j = 0; j < 8; ++j) {
      v[j] = z[i + j] * h_prev[i + j] + (1.f - z[i + j]) * candidate[i + j];
    }
    for (int32_t j = 0; j < 8; ++j) h_next[i + j] = v[j];
  }
  for (; i < n; ++i) h_next[i] = z[i] * h_prev[i] + (1.f - z[i]) * candidate[i];
}

// One step; `input_part` holds W_x x + b_x (3H, blocks z | r | h) and is
// overwritten. h_next may alias h_prev.
// `hq` has room for `units` quantized values (hybrid kernels only).
GRUWB_ALWAYS_INLINE void gru_step(const GruCell& cell, float* input_part, const float* h_prev,
                                  float* h_next, float* recurrent_part, QuantizedRow& hq,
                                  float* tape) {
  const bool hybrid = cell.recurrent_kernel.i8 != nullptr;
  const int32_t units = cell.units;
  const size_t unit_bytes = sizeof(float) * static_cast<size_t>(units);
  if (tape) memcpy(tape, h_prev, unit_bytes);  // before h_next may overwrite it
  float* z = input_part;
  float* r = input_part + units;
  float* candidate = input_part + 2 * units;
  if (hybrid) quantize_row(h_prev, units, cell.asymmetric_inputs, &hq);
  if (cell.reset_after) {
#if defined(GRUWB_CLONED_HOT_LOOPS)
    if (cell.packed.recurrent.data) {
      matvec_columns_avx512(cell.packed.recurrent, h_prev, cell.recurrent_bias, false,
                            recurrent_part);
      // Keras' GRU in inference: the whole gate math in one 16-lane pass.
      if (!tape && cell.activation == GruActivation::kTanh &&
          cell.recurrent_activation == GruGateActivation::kSigmoid) {
        gru_default_gates_avx512(input_part, recurrent_part, h_prev, h_next, units);
        return;
      }
    } else
#endif
      matvec_assign(cell.recurrent_kernel, 0, 3 * units, h_prev, hq, cell.recurrent_bias,
                    recurrent_part);
    add_to(z, recurrent_part, 2 * units);  // z and r blocks
    gate_activation(cell.recurrent_activation, z, 2 * units);
    const float* recurrent_candidate = recurrent_part + 2 * units;
    if (tape) memcpy(tape + 4 * units, recurrent_candidate, unit_bytes);
    add_product_to(candidate, r, recurrent_candidate, units);
  } else {
    matvec_assign(cell.recurrent_kernel, 0, 2 * units, h_prev, hq, nullptr, recurrent_part);
    add_to(z, recurrent_part, 2 * units);
    gate_activation(cell.recurrent_activation, z, 2 * units);
    float* reset_state = recurrent_part;  // r * h, reusing the consumed z|r products
    for (int32_t i = 0; i < units; ++i) reset_state[i] = r[i] * h_prev[i];
    // A converter's loop quantizes r * h anew for its own FC.
    if (hybrid) quantize_row(reset_state, units, cell.asymmetric_inputs, &hq);
    matvec_accumulate(cell.recurrent_kernel, 2 * units, units, reset_state, hq, candidate);
  }
  candidate_activation(cell.activation, candidate, units);
  if (tape) memcpy(tape + units, z, 3 * unit_bytes);  // z | r | h~
  blend_state(z, h_prev, candidate, h_next, units);
}

}  // namespace

GRUWB_HOT_LOOP
void gru_sequence(const GruCell& cell, const float* x, int64_t x_stride, int32_t steps,
                  const float* h0, float* out, int64_t out_stride, float* scratch, float* tape) {
  const int32_t units = cell.units;
  const int32_t gates = 3 * units;
  float* projected = scratch;                                                 // [kTimeBlock, 3H]
  float* transposed = projected + kTimeBlock * gates;                         // [I, kTimeBlock]
  float* recurrent_part = transposed + kTimeBlock * cell.input_size + gates;  // [3H]
  float* zeros = recurrent_part + gates;                                      // [H]
  if (!h0) {
    for (int32_t i = 0; i < units; ++i) zeros[i] = 0.f;
    h0 = zeros;
  }
  // Hybrid: quantized x (input_size values) and h (units) after the floats.
  QuantizedRow xq, hq;
  xq.values = reinterpret_cast<int8_t*>(zeros + units);
  hq.values = xq.values + cell.input_size;
  const float* h_prev = h0;
  for (int32_t t0 = 0; t0 < steps; t0 += kTimeBlock) {
    const int32_t block = steps - t0 < kTimeBlock ? steps - t0 : kTimeBlock;
    if (cell.input_kernel.i8) {
      // As a hybrid FULLY_CONNECTED on x: each step's x quantized on its own.
      for (int32_t s = 0; s < block; ++s) {
        quantize_row(x + (t0 + s) * x_stride, cell.input_size, cell.asymmetric_inputs, &xq);
        matvec_assign(cell.input_kernel, 0, gates, nullptr, xq, cell.input_bias,
                      projected + s * gates);
      }
    } else {
#if defined(GRUWB_CLONED_HOT_LOOPS)
      if (cell.packed.input.data) {  // a whole block of steps costs less than one transpose
        for (int32_t s = 0; s < block; ++s) {
          matvec_columns_avx512(cell.packed.input, x + (t0 + s) * x_stride, cell.input_bias, false,
                                projected + s * gates);
        }
      } else
#endif
        project_steps(cell.input_kernel, x + t0 * x_stride, x_stride, block, cell.input_bias,
                      transposed, projected);
    }
    for (int32_t s = 0; s < block; ++s) {
      float* h_next = out + (t0 + s) * out_stride;
      gru_step(cell, projected + s * gates, h_prev, h_next, recurrent_part, hq,
               tape ? tape + static_cast<int64_t>(t0 + s) * gru_tape_floats(units) : nullptr);
      h_prev = h_next;
    }
  }
  if (steps == 0 && out_stride == 0) {
    for (int32_t i = 0; i < units; ++i) out[i] = h0[i];
  }
}

namespace {

// Derivatives from the activation's output (the tape keeps outputs only).
inline float gate_derivative(GruGateActivation activation, float y) {
  if (activation == GruGateActivation::kSigmoid) return y * (1.f - y);
  return y > 0.f && y < 1.f ? 0.2f : 0.f;  // Keras 2 hard sigmoid: 0.2 x + 0.5, clipped
}

inline float candidate_derivative(GruActivation activation, float y) {
  switch (activation) {
    case GruActivation::kTanh: return 1.f - y * y;
    case GruActivation::kRelu: return y > 0.f ? 1.f : 0.f;
    case GruActivation::kLinear: return 1.f;
  }
  return 1.f;
}

}  // namespace

void gru_sequence_backward(const GruCell& cell, const float* x, int64_t x_stride, int32_t steps,
                           const float* tape, const float* dout, int64_t dout_stride, float* dx,
                           float* dh0, const GruGradients& grads, float* scratch,
                           float* state_gradient_squares) {
  const int32_t units = cell.units;
  const int32_t gates = 3 * units;
  const int32_t in = cell.input_size;
  const int32_t tape_floats = gru_tape_floats(units);
  const float* wx = cell.input_kernel.f32;
  const float* wh = cell.recurrent_kernel.f32;
  float* dh = scratch;                                           // dL/dh_t
  float* dh_prev = dh + units;                                   // dL/dh_{t-1}
  float* d_reset_state = dh_prev + units;                        // [H] U_n^T dn (reset_after false)
  float* d_input = d_reset_state + units;                        // [block][3H] grad of W_x x + b_x
  float* d_recurrent = d_input + kGruGradientBlock * gates;      // [block][3H] grad of U h (+ b_h)
  float* reset_state = d_recurrent + kGruGradientBlock * gates;  // [block][H] r * h_prev
  for (int32_t i = 0; i < units; ++i) dh[i] = 0.f;
  if (steps > 0 && dout_stride == 0) {
    for (int32_t i = 0; i < units; ++i) dh[i] = dout[i];
  }
  const bool want_recurrent = grads.recurrent_kernel || grads.recurrent_bias;
  for (int32_t hi = steps - 1; hi >= 0; hi -= kGruGradientBlock) {
    const int32_t lo = hi - kGruGradientBlock + 1 > 0 ? hi - kGruGradientBlock + 1 : 0;
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
      const float* step = tape + static_cast<int64_t>(t) * tape_floats;
      const float* h_prev = step;
      const float* z = step + units;
      const float* r = z + units;
      const float* n = r + units;
      const float* recurrent_candidate = n + units;  // reset_after only
      float* di = d_input + (t - lo) * gates;
      float* dg = d_recurrent + (t - lo) * gates;
      float* dz = di;
      float* dr = di + units;
      float* dn = di + 2 * units;
      for (int32_t i = 0; i < units; ++i) {
        dz[i] = dh[i] * (h_prev[i] - n[i]) * gate_derivative(cell.recurrent_activation, z[i]);
        dn[i] = dh[i] * (1.f - z[i]) * candidate_derivative(cell.activation, n[i]);
        dh_prev[i] = dh[i] * z[i];
      }
      if (cell.reset_after) {
        for (int32_t i = 0; i < units; ++i) {
          dr[i] = dn[i] * recurrent_candidate[i] * gate_derivative(cell.recurrent_activation, r[i]);
          dg[2 * units + i] = dn[i] * r[i];
        }
        for (int32_t i = 0; i < 2 * units; ++i) dg[i] = di[i];
        add_transposed_product(wh, gates, units, dg, dh_prev);
      } else {
        // candidate = W_n x + b_n + U_n (r * h_prev)
        for (int32_t i = 0; i < units; ++i) d_reset_state[i] = 0.f;
        add_transposed_product(wh + static_cast<int64_t>(2 * units) * units, units, units, dn,
                               d_reset_state);
        float* rh = reset_state + (t - lo) * units;
        for (int32_t i = 0; i < units; ++i) {
          dr[i] = d_reset_state[i] * h_prev[i] * gate_derivative(cell.recurrent_activation, r[i]);
          dh_prev[i] += d_reset_state[i] * r[i];
          rh[i] = r[i] * h_prev[i];
        }
        add_transposed_product(wh, 2 * units, units, di, dh_prev);
      }
      if (dx) add_transposed_product(wx, gates, in, di, dx + t * x_stride);
      for (int32_t i = 0; i < units; ++i) dh[i] = dh_prev[i];
    }
    // Weight gradients of steps lo..hi at once: slot s holds step lo + s.
    const int32_t block = hi - lo + 1;
    const float* h_prevs = tape + static_cast<int64_t>(lo) * tape_floats;
    if (grads.input_kernel) {
      add_outer_steps(grads.input_kernel, gates, in, d_input, gates, x + lo * x_stride, x_stride,
                      block);
    }
    if (grads.input_bias) add_rows(grads.input_bias, gates, d_input, gates, block);
    if (!want_recurrent) continue;
    if (cell.reset_after) {
      if (grads.recurrent_kernel) {
        add_outer_steps(grads.recurrent_kernel, gates, units, d_recurrent, gates, h_prevs,
                        tape_floats, block);
      }
      if (grads.recurrent_bias) add_rows(grads.recurrent_bias, gates, d_recurrent, gates, block);
    } else if (grads.recurrent_kernel) {
      // Without reset_after the recurrent gradients are the input ones: z and
      // r rows see h_prev, the candidate rows r * h_prev.
      add_outer_steps(grads.recurrent_kernel, 2 * units, units, d_input, gates, h_prevs,
                      tape_floats, block);
      add_outer_steps(grads.recurrent_kernel + static_cast<int64_t>(2 * units) * units, units,
                      units, d_input + 2 * units, gates, reset_state, units, block);
    }
  }
  if (dh0) {
    for (int32_t i = 0; i < units; ++i) dh0[i] += dh[i];
  }
}

#if GRUWB_BATCHED_KERNELS
GRUWB_HOT_LOOP
void gru_sequence_batch(const GruCell& cell, const GruBatchLayout& layout, const float* x,
                        const float* h0, float* out, float* scratch, float* tape) {
  const int32_t units = cell.units;
  const int32_t gates = 3 * units;
  const int32_t in = cell.input_size;
  const int32_t batch = layout.batch;
  const int64_t tape_floats = gru_tape_floats(units);
  const int64_t tape_row = layout.time * tape_floats;
  const size_t unit_bytes = sizeof(float) * static_cast<size_t>(units);
  float* wxt = scratch;                                                      // [I, 3H]
  float* wht = wxt + static_cast<int64_t>(in) * gates;                       // [H, 3H]
  float* input_part = wht + static_cast<int64_t>(units) * gates;             // [B, 3H] W_x x + b_x
  float* recurrent_part = input_part + static_cast<int64_t>(batch) * gates;  // [B, 3H]
  float* h = recurrent_part + static_cast<int64_t>(batch) * gates;           // [B, H] state
  transpose_matrix(cell.input_kernel.f32, gates, in, wxt, gates);
  transpose_matrix(cell.recurrent_kernel.f32, gates, units, wht, gates);
  for (int32_t b = 0; b < batch; ++b) {
    float* hb = h + static_cast<int64_t>(b) * units;
    if (h0) {
      memcpy(hb, h0 + static_cast<int64_t>(b) * units, unit_bytes);
    } else {
      for (int32_t i = 0; i < units; ++i) hb[i] = 0.f;
    }
  }
  // Rows [B, width] of `part` (ldc 3H) set to `bias` or zeros.
  auto set_rows = [&](float* part, const float* bias, int32_t width) {
    for (int32_t b = 0; b < batch; ++b) {
      float* row = part + static_cast<int64_t>(b) * gates;
      if (bias) {
        memcpy(row, bias, sizeof(float) * static_cast<size_t>(width));
      } else {
        memset(row, 0, sizeof(float) * static_cast<size_t>(width));
      }
    }
  };
  const int32_t recurrent_rows = cell.reset_after ? gates : 2 * units;
  for (int32_t t = 0; t < layout.time; ++t) {
    set_rows(input_part, cell.input_bias, gates);
    gemm_accumulate(batch, gates, in, x + t * layout.x_step, layout.x_row, 1, wxt, gates,
                    input_part, gates);
    set_rows(recurrent_part, cell.reset_after ? cell.recurrent_bias : nullptr, recurrent_rows);
    gemm_accumulate(batch, recurrent_rows, units, h, units, 1, wht, gates, recurrent_part, gates);
    for (int32_t b = 0; b < batch; ++b) {
      float* step_tape = tape ? tape + b * tape_row + t * tape_floats : nullptr;
      const float* hb = h + static_cast<int64_t>(b) * units;
      float* z = input_part + static_cast<int64_t>(b) * gates;
      float* r = z + units;
      float* candidate = r + units;
      float* rec = recurrent_part + static_cast<int64_t>(b) * gates;
      if (step_tape) memcpy(step_tape, hb, unit_bytes);
      add_to(z, rec, 2 * units);
      gate_activation(cell.recurrent_activation, z, 2 * units);
      if (cell.reset_after) {
        const float* recurrent_candidate = rec + 2 * units;
        if (step_tape) memcpy(step_tape + 4 * units, recurrent_candidate, unit_bytes);
        add_product_to(candidate, r, recurrent_candidate, units);
      } else {
        for (int32_t i = 0; i < units; ++i) rec[i] = r[i] * hb[i];  // r * h, over consumed z
      }
    }
    if (!cell.reset_after) {  // candidate += U_h (r * h) for all rows
      gemm_accumulate(batch, units, units, recurrent_part, gates, 1, wht + 2 * units, gates,
                      input_part + 2 * units, gates);
    }
    for (int32_t b = 0; b < batch; ++b) {
      float* hb = h + static_cast<int64_t>(b) * units;
      float* z = input_part + static_cast<int64_t>(b) * gates;
      float* candidate = z + 2 * units;
      candidate_activation(cell.activation, candidate, units);
      if (tape) memcpy(tape + b * tape_row + t * tape_floats + units, z, 3 * unit_bytes);
      blend_state(z, hb, candidate, hb, units);
      if (layout.out_step != 0) {
        memcpy(out + b * layout.out_row + t * layout.out_step, hb, unit_bytes);
      }
    }
  }
  if (layout.out_step == 0) {
    for (int32_t b = 0; b < batch; ++b) {
      memcpy(out + b * layout.out_row, h + static_cast<int64_t>(b) * units, unit_bytes);
    }
  }
}

GRUWB_HOT_LOOP
void gru_sequence_batch_backward(const GruCell& cell, const GruBatchLayout& layout, const float* x,
                                 const float* tape, const float* dout, float* dx, float* dh0,
                                 const GruGradients& grads, float* scratch,
                                 float* state_gradient_squares) {
  const int32_t units = cell.units;
  const int32_t gates = 3 * units;
  const int32_t in = cell.input_size;
  const int32_t batch = layout.batch;
  const int64_t tape_floats = gru_tape_floats(units);
  const int64_t tape_row = layout.time * tape_floats;
  const float* wx = cell.input_kernel.f32;
  const float* wh = cell.recurrent_kernel.f32;
  const int64_t bh = static_cast<int64_t>(batch) * units;
  float* dh = scratch;                          // [B, H] dL/dh_t
  float* dh_prev = dh + bh;                     // [B, H] dL/dh_{t-1}
  float* d_input = dh_prev + bh;                // [B, 3H] of W_x x + b_x
  float* d_recurrent = d_input + 3 * bh;        // [B, 3H] of U h (+ b_h)
  float* d_reset_state = d_recurrent + 3 * bh;  // [B, H] (reset_after false)
  float* reset_state = d_reset_state + bh;      // [B, H] r * h_prev
  for (int32_t b = 0; b < batch; ++b) {
    float* d = dh + static_cast<int64_t>(b) * units;
    const float* g = dout + b * layout.out_row;
    for (int32_t i = 0; i < units; ++i) d[i] = layout.out_step == 0 && layout.time > 0 ? g[i] : 0.f;
  }
  const bool want_recurrent = grads.recurrent_kernel || grads.recurrent_bias;
  const bool keras_defaults = cell.reset_after &&
                              cell.recurrent_activation == GruGateActivation::kSigmoid &&
                              cell.activation == GruActivation::kTanh;
#if defined(GRUWB_CLONED_HOT_LOOPS)
  const bool avx512 = avx512_available();
#endif
  for (int32_t t = layout.time - 1; t >= 0; --t) {
    for (int32_t b = 0; b < batch; ++b) {
      float* d = dh + static_cast<int64_t>(b) * units;
      if (layout.out_step != 0) {
        const float* g = dout + b * layout.out_row + t * layout.out_step;
        for (int32_t i = 0; i < units; ++i) d[i] += g[i];
      }
      if (state_gradient_squares) {
        float sum = 0.f;
        for (int32_t i = 0; i < units; ++i) sum += d[i] * d[i];
        state_gradient_squares[t] += sum;
      }
      const float* step = tape + b * tape_row + t * tape_floats;
      const float* h_prev = step;
      const float* z = step + units;
      const float* r = z + units;
      const float* n = r + units;
      const float* recurrent_candidate = n + units;  // reset_after only
      float* di = d_input + static_cast<int64_t>(b) * gates;
      float* dg = d_recurrent + static_cast<int64_t>(b) * gates;
      float* dp = dh_prev + static_cast<int64_t>(b) * units;
      float* dz = di;
      float* dr = di + units;
      float* dn = di + 2 * units;
      int32_t first = 0;
#if defined(GRUWB_CLONED_HOT_LOOPS)
      if (keras_defaults && avx512) {
        gru_default_gate_gradients_avx512(
            {d, h_prev, z, r, n, recurrent_candidate, dz, dr, dn, dp, dg + 2 * units}, units);
        first = units;
      }
#endif
      if (keras_defaults) {  // sigmoid gates, tanh candidate: blocks of 8
        for (; first + 8 <= units; first += 8) {
          for (int32_t j = first; j < first + 8; ++j) {
            dz[j] = d[j] * (h_prev[j] - n[j]) * (z[j] * (1.f - z[j]));
            dn[j] = d[j] * (1.f - z[j]) * (1.f - n[j] * n[j]);
            dp[j] = d[j] * z[j];
            dr[j] = dn[j] * recurrent_candidate[j] * (r[j] * (1.f - r[j]));
            dg[2 * units + j] = dn[j] * r[j];
          }
        }
      }
      for (int32_t i = first; i < units; ++i) {
        dz[i] = d[i] * (h_prev[i] - n[i]) * gate_derivative(cell.recurrent_activation, z[i]);
        dn[i] = d[i] * (1.f - z[i]) * candidate_derivative(cell.activation, n[i]);
        dp[i] = d[i] * z[i];
        if (cell.reset_after) {
          dr[i] = dn[i] * recurrent_candidate[i] * gate_derivative(cell.recurrent_activation, r[i]);
          dg[2 * units + i] = dn[i] * r[i];
        }
      }
      if (cell.reset_after) memcpy(dg, di, sizeof(float) * static_cast<size_t>(2 * units));
    }
    const float* h_prevs = tape + t * tape_floats;  // row b at b * tape_row
    if (cell.reset_after) {
      gemm_accumulate(batch, units, gates, d_recurrent, gates, 1, wh, units, dh_prev, units);
    } else {
      // candidate = W_n x + b_n + U_n (r * h_prev)
      for (int64_t i = 0; i < bh; ++i) d_reset_state[i] = 0.f;
      gemm_accumulate(batch, units, units, d_input + 2 * units, gates, 1,
                      wh + static_cast<int64_t>(2 * units) * units, units, d_reset_state, units);
      for (int32_t b = 0; b < batch; ++b) {
        const float* h_prev = h_prevs + b * tape_row;
        const float* r = h_prev + 2 * units;
        const float* drs = d_reset_state + static_cast<int64_t>(b) * units;
        float* dr = d_input + static_cast<int64_t>(b) * gates + units;
        float* dp = dh_prev + static_cast<int64_t>(b) * units;
        float* rh = reset_state + static_cast<int64_t>(b) * units;
        for (int32_t i = 0; i < units; ++i) {
          dr[i] = drs[i] * h_prev[i] * gate_derivative(cell.recurrent_activation, r[i]);
          dp[i] += drs[i] * r[i];
          rh[i] = r[i] * h_prev[i];
        }
      }
      gemm_accumulate(batch, units, 2 * units, d_input, gates, 1, wh, units, dh_prev, units);
    }
    if (dx) {
      gemm_accumulate(batch, in, gates, d_input, gates, 1, wx, in, dx + t * layout.x_step,
                      layout.x_row);
    }
    // Weight gradients of step t over the B rows: dW += dgates^T [3H, B] x inputs [B, .].
    if (grads.input_kernel) {
      gemm_accumulate(gates, in, batch, d_input, 1, gates, x + t * layout.x_step, layout.x_row,
                      grads.input_kernel, in);
    }
    if (grads.input_bias) add_rows(grads.input_bias, gates, d_input, gates, batch);
    if (want_recurrent) {
      if (cell.reset_after) {
        if (grads.recurrent_kernel) {
          gemm_accumulate(gates, units, batch, d_recurrent, 1, gates, h_prevs, tape_row,
                          grads.recurrent_kernel, units);
        }
        if (grads.recurrent_bias) add_rows(grads.recurrent_bias, gates, d_recurrent, gates, batch);
      } else if (grads.recurrent_kernel) {
        gemm_accumulate(2 * units, units, batch, d_input, 1, gates, h_prevs, tape_row,
                        grads.recurrent_kernel, units);
        gemm_accumulate(units, units, batch, d_input + 2 * units, 1, gates, reset_state, units,
                        grads.recurrent_kernel + static_cast<int64_t>(2 * units) * units, units);
      }
    }
    memcpy(dh, dh_prev, sizeof(float) * static_cast<size_t>(bh));
  }
  if (dh0) {
    for (int32_t b = 0; b < batch; ++b) {
      for (int32_t i = 0; i < units; ++i) {
        dh0[static_cast<int64_t>(b) * units + i] += dh[static_cast<int64_t>(b) * units + i];
      }
    }
  }
}
#endif

}  // namespace gruwb

// ---- Integer GRU ----

#include "engine/kernels/fixed_point.h"

namespace gruwb {
namespace {

inline int16_t saturate_int16(int32_t v) {
  return static_cast<int16_t>(v > INT16_MAX ? INT16_MAX : (v < INT16_MIN ? INT16_MIN : v));
}

// a (Q0.15) times b (any Q format), rounded, in b's format.
inline int32_t multiply_q0_15(int32_t a, int32_t b) { return rounding_divide_by_pot(a * b, 15); }

// out[r] = Q3.12 of (bias[r] + sum_i w[r, i] v[i]) for `rows` rows.
template <typename Value>
void integer_gate_products(const int8_t* w, int32_t rows, int32_t cols, const Value* v,
                           const int32_t* bias, const QuantizedMultiplier* multipliers,
                           int16_t* out) {
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* row = w + static_cast<int64_t>(r) * cols;
    int32_t acc = bias ? bias[r] : 0;
    for (int32_t i = 0; i < cols; ++i) acc += static_cast<int32_t>(row[i]) * v[i];
    out[r] = saturate_int16(multiply_by_quantized_multiplier(acc, multipliers[r]));
  }
}

}  // namespace

void gru_sequence_integer(const GruIntegerCell& cell, const int8_t* x, int64_t x_stride,
                          int32_t steps, int16_t* h, int16_t* scratch,
                          void (*write_output)(void* context, int32_t step, const int16_t* h),
                          void* context) {
  const int32_t units = cell.units;
  const int32_t gates = 3 * units;
  int16_t* input_part = scratch;                // [3H] Q3.12: W_x x + b_x
  int16_t* recurrent_part = scratch + gates;    // [3H] Q3.12: W_h h + b_h
  int16_t* candidate = recurrent_part + gates;  // [H] Q0.15
  for (int32_t s = 0; s < steps; ++s) {
    // x - zp_x is folded into the bias, so the raw int8 values multiply.
    integer_gate_products(cell.input_kernel, gates, cell.input_size, x + s * x_stride,
                          cell.input_bias, cell.input_multipliers, input_part);
    integer_gate_products(cell.recurrent_kernel, gates, units, h, cell.recurrent_bias,
                          cell.recurrent_multipliers, recurrent_part);
    int16_t* z = input_part;          // becomes the gate, Q0.15
    int16_t* r = input_part + units;  // likewise
    for (int32_t i = 0; i < 2 * units; ++i) {
      z[i] = fixed16::logistic(saturate_int16(z[i] + recurrent_part[i]), 3);
    }
    for (int32_t i = 0; i < units; ++i) {
      const int32_t reset = multiply_q0_15(r[i], recurrent_part[2 * units + i]);  // Q3.12
      candidate[i] = fixed16::tanh(saturate_int16(input_part[2 * units + i] + reset), 3);
    }
    // h' = z h + (1 - z) h~ = h~ + z (h - h~): one product, |h - h~| < 2.
    for (int32_t i = 0; i < units; ++i) {
      h[i] = saturate_int16(candidate[i] + multiply_q0_15(z[i], h[i] - candidate[i]));
    }
    write_output(context, s, h);
  }
}

}  // namespace gruwb
