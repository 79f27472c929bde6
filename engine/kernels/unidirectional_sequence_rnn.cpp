// UNIDIRECTIONAL_SEQUENCE_RNN (Keras SimpleRNN fused): per step
// h = act(W x + R h + b).
//   0 x [B,T,I] ([T,B,I] with time_major), 1 W [U,I], 2 R [U,U], 3 b [U],
//   4 hidden state [B,U]: a variable tensor that keeps the last state
//     between invokes (reset_variables() zeroes it).
// Output [B,T,U] ([T,B,U]). Weights float or INT8 (hybrid), float compute.

#include <cstdio>
#include <cstring>

#include "engine/kernels/recurrent_util.h"

namespace gruwb {
namespace {

enum Input { kX = 0, kInputWeights, kRecurrentWeights, kBias, kHiddenState };

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
  return Status();
}

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
  float* out = ctx.output(0)->f32();
  for (int32_t b = 0; b < layout.batch; ++b) {
    float* h = state->f32() + static_cast<int64_t>(b) * units;
    for (int32_t t = 0; t < layout.time; ++t) {
      // The new state goes to the output slot first: h is still needed by R h.
      float* h_next = out + layout.offset(b, t, units);
      matvec_assign(input_weights, 0, units, x->f32() + layout.offset(b, t, input_size), bias,
                    h_next);
      matvec_accumulate(recurrent, 0, units, h, h_next);
      vector_activation(activation, h_next, units);
      memcpy(h, h_next, sizeof(float) * static_cast<size_t>(units));
    }
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kUnidirectionalSequenceRnnKernel = {
    static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN), nullptr, prepare, eval};

}  // namespace gruwb
