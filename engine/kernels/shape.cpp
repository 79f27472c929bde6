// SHAPE: the input's dimensions as an INT32 or INT64 vector. Shapes are
// static after prepare, so the result is computed once and becomes a
// constant (see fold_if_constant): ops downstream of it, such as the FILL of
// a zero initial state, get constant dims.

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  for (int32_t d = 0; d < input->shape.rank; ++d) {
    if (output->type == TensorType::INT64) {
      reinterpret_cast<int64_t*>(output->data)[d] = input->shape.dims[d];
    } else {
      output->i32()[d] = input->shape.dims[d];
    }
  }
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  const auto* options = ctx.op().options<fb::ShapeOptions>();
  // out_type's schema default is FLOAT32 (0), which is what a writer that
  // left the field out produces; then the output tensor's own type decides.
  TensorType type = options ? options->out_type() : TensorType::FLOAT32;
  if (type == TensorType::FLOAT32) {
    type = output->type == TensorType::INT64 ? TensorType::INT64 : TensorType::INT32;
  }
  if (type != TensorType::INT32 && type != TensorType::INT64) {
    return Status::error(StatusCode::kUnsupported, "out_type %s, expected INT32 or INT64",
                         tensor_type_name(type));
  }
  output->type = type;
  set_output_shape(output, make_shape({input->shape.rank}));
  GRUWB_RETURN_IF_ERROR(make_output_constant(ctx, output));
  return eval(ctx);
}

}  // namespace

extern const KernelRegistration kShapeKernel = {static_cast<int32_t>(BuiltinOperator::SHAPE),
                                                nullptr,
                                                prepare,
                                                eval,
                                                /*backward=*/nullptr,
                                                /*cost=*/nullptr,
                                                /*weight_inputs=*/0,
                                                /*dynamic_inputs=*/false,
                                                /*integer_activations=*/true};

}  // namespace gruwb
