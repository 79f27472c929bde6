// UNIDIRECTIONAL_SEQUENCE_RNN (Keras SimpleRNN fused): per step
// h = act(W x + R h + b).
//   0 x [B,T,I] ([T,B,I] with time_major), 1 W [U,I], 2 R [U,U], 3 b [U],
//   4 hidden state [B,U]: a variable tensor that keeps the last state
//     between invokes (reset_variables() zeroes it).
// Output [B,T,U] ([T,B,U]). Weights float or INT8 (hybrid). INT8 weights
// follow TFLite's hybrid RNN (kernel_utils' RnnBatchStep): every step x and h
// of each batch row are quantized to int8 (symmetric, or asymmetric with a
// zero point when asymmetric_quantize_inputs is set; hybrid_util.h) and
// h' = act(b + int32(W q_x) * (s_x * s_W) + int32(R q_h) * (s_h * s_R)).
// TFLite reads one scale per weight tensor; per-row scales are our extension.
// Training (BPTT over all steps, float weights): the tape keeps h_0..h_T of
// each batch row; as for the LSTM, a training forward starts every sequence
// from the state variable and does not write its final state back (Keras'
// stateful=False: training windows are independent samples). On hosts
// (GRUWB_BATCHED_KERNELS) B > 1 float rows run each step as matrix products,
// as the batched GRU and LSTM do.

#include <cstdio>
#include <cstring>
#include <new>

#include "engine/kernels/op_cost.h"
#include "engine/kernels/recurrent_util.h"

namespace gruwb {
namespace {

enum Input { kX = 0, kInputWeights, kRecurrentWeights, kBias, kHiddenState };

bool rnn_is_hybrid(OpContext& ctx) {
  return ctx.input(kInputWeights)->type == TensorType::INT8 ||
         ctx.input(kRecurrentWeights)->type == TensorType::INT8;
}

// B > 1 float rows run as matrix products.
bool rnn_runs_batched(OpContext& ctx, const SequenceLayout& layout) {
  return GRUWB_BATCHED_KERNELS && layout.batch > 1 && !rnn_is_hybrid(ctx);
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
// Inference on AVX-512 hosts: W and R packed column-major (recurrent_util.h).
struct RnnPacked {
  ColumnMajorWeights input;
  ColumnMajorWeights recurrent;
};

Status prepare_rnn_packed(OpContext& ctx, int32_t units, int32_t input_size) {
  ctx.set_user_data(nullptr);
  RnnPacked packed;
  GRUWB_RETURN_IF_ERROR(
      prepare_column_major(ctx, ctx.input(kRecurrentWeights), units, units, &packed.recurrent));
  if (!packed.recurrent.data) return Status();
  GRUWB_RETURN_IF_ERROR(
      prepare_column_major(ctx, ctx.input(kInputWeights), units, input_size, &packed.input));
  if (!packed.input.data) return Status();
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(whole_alignment_units(sizeof(RnnPacked)), &memory));
  ctx.set_user_data(new (memory) RnnPacked(packed));
  return Status();
}
#endif

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 5, 5));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* x = ctx.input(kX);
  const Tensor* recurrent = ctx.input(kRecurrentWeights);
  const Tensor* state = ctx.input(kHiddenState);
  GRUWB_RETURN_IF_ERROR(expect_float(x, "input"));
  const auto* options = ctx.op().options<fb::SequenceRNNOptions>();
  bool time_major = options && options->time_major();
  Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  GRUWB_RETURN_IF_ERROR(check_activation(activation));
  SequenceLayout layout;
  GRUWB_RETURN_IF_ERROR(sequence_layout(x, time_major, &layout));
  if (!recurrent || recurrent->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "input 2 (recurrent weights) must be a [units,units] matrix");
  }
  const int32_t units = recurrent->shape.dims[0];
  GRUWB_RETURN_IF_ERROR(
      check_dense_weights(recurrent, units, units, "recurrent weights (input 2)"));
  GRUWB_RETURN_IF_ERROR(check_dense_weights(ctx.input(kInputWeights), units, x->shape.dims[2],
                                            "input weights (input 1)"));
  GRUWB_RETURN_IF_ERROR(check_float_vector(ctx.input(kBias), units, "bias (input 3)"));
  if (!state) return Status::error(StatusCode::kInvalidModel, "input 4 (hidden state) is missing");
  GRUWB_RETURN_IF_ERROR(expect_float(state, "hidden state"));
  if (state->kind != TensorKind::kVariable) {
    return Status::error(StatusCode::kInvalidModel,
                         "hidden state '%s' (input 4) must be a variable tensor", state->name);
  }
  if (state->elements() != static_cast<int64_t>(layout.batch) * units) {
    char expected[32];
    snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(layout.batch),
             static_cast<int>(units));
    return shape_error(state, "hidden state (input 4)", expected);
  }
  Tensor* output = ctx.output(0);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, sequence_shape(layout, units));
  int slot = 0;
  const int32_t input_size = x->shape.dims[2];
  // The running state; batched: W^T, R^T and the B rows' states (sizes fit:
  // checked weights and states).
  int64_t scratch_floats = units;
  if (rnn_runs_batched(ctx, layout)) {
    scratch_floats = int64_t{units} * (input_size + units) + int64_t{layout.batch} * units;
  }
  GRUWB_RETURN_IF_ERROR(
      ctx.request_scratch(sizeof(float) * static_cast<size_t>(scratch_floats), &slot));
  if (rnn_is_hybrid(ctx)) {
    // Quantized rows of x and h.
    GRUWB_RETURN_IF_ERROR(ctx.request_scratch(static_cast<size_t>(input_size + units), &slot));
  }
  if (!ctx.training()) return Status();
  if (recurrent->type != TensorType::FLOAT32 ||
      ctx.input(kInputWeights)->type != TensorType::FLOAT32) {
    return Status::error(StatusCode::kUnsupported,
                         "training through UNIDIRECTIONAL_SEQUENCE_RNN needs float32 weights");
  }
  GRUWB_RETURN_IF_ERROR(ctx.request_tape(sizeof(float) * static_cast<size_t>(layout.batch) *
                                         static_cast<size_t>(layout.time + 1) *
                                         static_cast<size_t>(units)));
  // dh, dpre, dh_prev (of each row when batched); then state gradient norms.
  const size_t rows = rnn_runs_batched(ctx, layout) ? static_cast<size_t>(layout.batch) : 1;
  return ctx.request_backward_scratch(
      sizeof(float) * (3 * rows * static_cast<size_t>(units) + static_cast<size_t>(layout.time)),
      &slot);
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
// packed_inference_ops(): prepare, then W and R packed for eval.
Status prepare_packing(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(prepare(ctx));
  const auto* options = ctx.op().options<fb::SequenceRNNOptions>();
  SequenceLayout layout;
  sequence_layout(ctx.input(kX), options && options->time_major(), &layout);
  if (rnn_runs_batched(ctx, layout)) {  // products over the B rows: no packed copy
    ctx.set_user_data(nullptr);
    return Status();
  }
  return prepare_rnn_packed(ctx, ctx.input(kRecurrentWeights)->shape.dims[0],
                            ctx.input(kX)->shape.dims[2]);
}
#endif

#if GRUWB_BATCHED_KERNELS
// All B rows per step: [B, I] x [I, U] and [B, U] x [U, U] products over W^T
// and R^T, transposed into scratch once per pass.
Status eval_batched(OpContext& ctx, const SequenceLayout& layout, Activation activation) {
  const float* x = ctx.input(kX)->f32();
  float* variable = ctx.input(kHiddenState)->f32();
  const float* bias = ctx.input(kBias)->f32();
  const int32_t units = ctx.input(kRecurrentWeights)->shape.dims[0];
  const int32_t in = ctx.input(kInputWeights)->shape.dims[1];
  const int32_t batch = layout.batch;
  const int64_t tape_row = int64_t{layout.time + 1} * units;
  const size_t state_bytes = sizeof(float) * static_cast<size_t>(units);
  float* wt = static_cast<float*>(ctx.scratch(0));  // [I, U]
  float* rt = wt + int64_t{in} * units;             // [U, U]
  float* h = rt + int64_t{units} * units;           // [B, U]
  float* out = ctx.output(0)->f32();
  float* tape = static_cast<float*>(ctx.tape());
  transpose_matrix(ctx.input(kInputWeights)->f32(), units, in, wt, units);
  transpose_matrix(ctx.input(kRecurrentWeights)->f32(), units, units, rt, units);
  memcpy(h, variable, state_bytes * static_cast<size_t>(batch));
  for (int32_t b = 0; b < batch && tape; ++b) {
    memcpy(tape + b * tape_row, h + int64_t{b} * units, state_bytes);
  }
  const int64_t x_row = layout.offset(1, 0, in) - layout.offset(0, 0, in);
  const int64_t out_row = layout.offset(1, 0, units) - layout.offset(0, 0, units);
  for (int32_t t = 0; t < layout.time; ++t) {
    // The new states go to the output first: h is still needed by R h.
    float* next = out + layout.offset(0, t, units);
    for (int32_t b = 0; b < batch; ++b) memcpy(next + b * out_row, bias, state_bytes);
    gemm_accumulate(batch, units, in, x + layout.offset(0, t, in), x_row, 1, wt, units, next,
                    out_row);
    gemm_accumulate(batch, units, units, h, units, 1, rt, units, next, out_row);
    for (int32_t b = 0; b < batch; ++b) {
      float* row = next + b * out_row;
      vector_activation(activation, row, units);
      memcpy(h + int64_t{b} * units, row, state_bytes);
      if (tape) memcpy(tape + b * tape_row + int64_t{t + 1} * units, row, state_bytes);
    }
  }
  if (!ctx.training()) {  // see the header
    memcpy(variable, h, state_bytes * static_cast<size_t>(batch));
  }
  return Status();
}
#endif

Status eval(OpContext& ctx) {
  const Tensor* x = ctx.input(kX);
  Tensor* state = ctx.input(kHiddenState);
  const auto* options = ctx.op().options<fb::SequenceRNNOptions>();
  bool time_major = options && options->time_major();
  Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  DenseWeights input_weights = dense_weights(ctx.input(kInputWeights));
  DenseWeights recurrent = dense_weights(ctx.input(kRecurrentWeights));
  const float* bias = ctx.input(kBias)->f32();
  const int32_t units = recurrent.rows;
  const int32_t input_size = input_weights.cols;
  SequenceLayout layout;
  sequence_layout(x, time_major, &layout);
#if GRUWB_BATCHED_KERNELS
  if (rnn_runs_batched(ctx, layout)) return eval_batched(ctx, layout, activation);
#endif
  float* out = ctx.output(0)->f32();
  float* h = static_cast<float*>(ctx.scratch(0));
  float* tape = static_cast<float*>(ctx.tape());
  const size_t state_bytes = sizeof(float) * static_cast<size_t>(units);
  const bool hybrid = rnn_is_hybrid(ctx);
  const bool asymmetric = options && options->asymmetric_quantize_inputs();
  QuantizedRow xq, hq;
  if (hybrid) {
    xq.values = static_cast<int8_t*>(ctx.scratch(1));
    hq.values = xq.values + input_size;
  }
#if defined(GRUWB_CLONED_HOT_LOOPS)
  const RnnPacked* packed = static_cast<const RnnPacked*>(ctx.user_data());
#endif
  for (int32_t b = 0; b < layout.batch; ++b) {
    float* variable = state->f32() + static_cast<int64_t>(b) * units;
    memcpy(h, variable, state_bytes);
    float* row_tape = tape ? tape + static_cast<int64_t>(b) * (layout.time + 1) * units : nullptr;
    if (row_tape) memcpy(row_tape, h, state_bytes);
    for (int32_t t = 0; t < layout.time; ++t) {
      // The new state goes to the output slot first: h is still needed by R h.
      float* h_next = out + layout.offset(b, t, units);
      const float* xt = x->f32() + layout.offset(b, t, input_size);
      if (hybrid) {
        quantize_row(xt, input_size, asymmetric, &xq);
        quantize_row(h, units, asymmetric, &hq);
      }
#if defined(GRUWB_CLONED_HOT_LOOPS)
      if (packed) {
        matvec_columns_avx512(packed->input, xt, bias, false, h_next);
        matvec_columns_avx512(packed->recurrent, h, nullptr, true, h_next);
      } else
#endif
      {
        matvec_assign(input_weights, 0, units, xt, xq, bias, h_next);
        matvec_accumulate(recurrent, 0, units, h, hq, h_next);
      }
      vector_activation(activation, h_next, units);
      memcpy(h, h_next, state_bytes);
      if (row_tape) memcpy(row_tape + static_cast<int64_t>(t + 1) * units, h, state_bytes);
    }
    if (!ctx.training()) memcpy(variable, h, state_bytes);  // see the header
  }
  return Status();
}

// dpre = (dout_t + dh) * act'(h_t); dW += dpre x_t^T, dR += dpre h_{t-1}^T,
// db += dpre, dx_t += W^T dpre, dh = R^T dpre for step t - 1.
Status backward(OpContext& ctx) {
  const Tensor* dout = ctx.gradient(ctx.output(0));
  const float* tape = static_cast<const float*>(ctx.tape());
  if (!dout || !tape) return Status();
  const Tensor* x = ctx.input(kX);
  const auto* options = ctx.op().options<fb::SequenceRNNOptions>();
  const bool time_major = options && options->time_major();
  const Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  const float* w = ctx.input(kInputWeights)->f32();
  const float* r = ctx.input(kRecurrentWeights)->f32();
  const int32_t units = ctx.input(kRecurrentWeights)->shape.dims[0];
  const int32_t input_size = x->shape.dims[2];
  Tensor* g = ctx.gradient(ctx.input(kInputWeights));
  float* dw = g ? g->f32() : nullptr;
  g = ctx.gradient(ctx.input(kRecurrentWeights));
  float* dr = g ? g->f32() : nullptr;
  g = ctx.gradient(ctx.input(kBias));
  float* db = g ? g->f32() : nullptr;
  Tensor* dx = ctx.gradient(x);
  Tensor* dstate = ctx.gradient(ctx.input(kHiddenState));
  SequenceLayout layout;
  sequence_layout(x, time_major, &layout);
#if GRUWB_BATCHED_KERNELS
  if (rnn_runs_batched(ctx, layout)) {
    // Per step over the B rows: dL/dh_{t-1} = dP R, dx_t += dP W, dW += dP^T X_t,
    // dR += dP^T H_{t-1}, db += the rows of dP.
    const int32_t batch = layout.batch;
    const int64_t bu = int64_t{batch} * units;
    const int64_t tape_row = int64_t{layout.time + 1} * units;
    float* dh = static_cast<float*>(ctx.backward_scratch(0));  // [B, U]
    float* dpre = dh + bu;                                     // [B, U]
    float* dh_prev = dpre + bu;                                // [B, U]
    float* squares = begin_state_gradients(ctx, dh_prev + bu, layout.time);
    for (int64_t i = 0; i < bu; ++i) dh[i] = 0.f;
    const int64_t x_row = layout.offset(1, 0, input_size) - layout.offset(0, 0, input_size);
    for (int32_t t = layout.time - 1; t >= 0; --t) {
      for (int32_t b = 0; b < batch; ++b) {
        const float* h_t = tape + b * tape_row + int64_t{t + 1} * units;
        const float* g_out = dout->f32() + layout.offset(b, t, units);
        const float* d = dh + int64_t{b} * units;
        float* dp = dpre + int64_t{b} * units;
        float sum = 0.f;
        for (int32_t i = 0; i < units; ++i) {
          const float dy = d[i] + g_out[i];
          sum += dy * dy;
          dp[i] = dy * activation_derivative(activation, h_t[i]);
        }
        if (squares) squares[t] += sum;
      }
      for (int64_t i = 0; i < bu; ++i) dh_prev[i] = 0.f;
      gemm_accumulate(batch, units, units, dpre, units, 1, r, units, dh_prev, units);
      const float* xt = x->f32() + layout.offset(0, t, input_size);
      if (dx) {
        gemm_accumulate(batch, input_size, units, dpre, units, 1, w, input_size,
                        dx->f32() + layout.offset(0, t, input_size), x_row);
      }
      if (dw) gemm_accumulate(units, input_size, batch, dpre, 1, units, xt, x_row, dw, input_size);
      if (dr) {
        gemm_accumulate(units, units, batch, dpre, 1, units, tape + int64_t{t} * units, tape_row,
                        dr, units);
      }
      if (db) add_rows(db, units, dpre, units, batch);
      memcpy(dh, dh_prev, sizeof(float) * static_cast<size_t>(bu));
    }
    if (dstate) {
      for (int64_t i = 0; i < bu; ++i) dstate->f32()[i] += dh[i];
    }
    report_state_gradients(ctx, squares, layout.time);
    return Status();
  }
#endif
  float* dh = static_cast<float*>(ctx.backward_scratch(0));
  float* dpre = dh + units;
  float* dh_prev = dpre + units;
  float* squares = begin_state_gradients(ctx, dh_prev + units, layout.time);
  for (int32_t b = 0; b < layout.batch; ++b) {
    const float* row_tape = tape + static_cast<int64_t>(b) * (layout.time + 1) * units;
    for (int32_t i = 0; i < units; ++i) dh[i] = 0.f;
    for (int32_t t = layout.time - 1; t >= 0; --t) {
      const float* h_t = row_tape + static_cast<int64_t>(t + 1) * units;
      const float* h_prev = h_t - units;
      const float* g_out = dout->f32() + layout.offset(b, t, units);
      if (squares) {
        float sum = 0.f;
        for (int32_t i = 0; i < units; ++i) sum += (dh[i] + g_out[i]) * (dh[i] + g_out[i]);
        squares[t] += sum;
      }
      for (int32_t i = 0; i < units; ++i) {
        dpre[i] = (dh[i] + g_out[i]) * activation_derivative(activation, h_t[i]);
        dh_prev[i] = 0.f;
      }
      add_transposed_product(r, units, units, dpre, dh_prev);
      if (dx) {
        add_transposed_product(w, units, input_size, dpre,
                               dx->f32() + layout.offset(b, t, input_size));
      }
      if (dw) add_outer(dw, units, input_size, dpre, x->f32() + layout.offset(b, t, input_size));
      if (dr) add_outer(dr, units, units, dpre, h_prev);
      if (db) {
        for (int32_t i = 0; i < units; ++i) db[i] += dpre[i];
      }
      memcpy(dh, dh_prev, sizeof(float) * static_cast<size_t>(units));
    }
    if (dstate) {
      float* d = dstate->f32() + static_cast<int64_t>(b) * units;
      for (int32_t i = 0; i < units; ++i) d[i] += dh[i];
    }
  }
  report_state_gradients(ctx, squares, layout.time);
  return Status();
}

OpCost cost(const OpCostQuery& q) { return rnn_cost(q.subgraph, q.op, true); }

}  // namespace

#if defined(GRUWB_CLONED_HOT_LOOPS)
extern const KernelRegistration kUnidirectionalSequenceRnnPackedKernel = {
    static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN),
    nullptr,
    prepare_packing,
    eval,
    GRUWB_BACKWARD(backward),
    cost,
    input_range(1, 3)};
#endif

extern const KernelRegistration kUnidirectionalSequenceRnnKernel = {
    static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN),
    nullptr,
    prepare,
    eval,
    GRUWB_BACKWARD(backward),
    cost,
    input_range(1, 3)};

}  // namespace gruwb
