// ARG_MAX and ARG_MIN along one axis (input 1, a constant scalar): the index
// of the first largest / smallest value, as INT32 or INT64 (options'
// output_type). Float32 or int32 input. The outputs are integers, so these
// ops never sit on a gradient path.

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

int32_t axis_of(const Tensor* axis_tensor, const Tensor* input) {
  const int64_t axis = index_at(axis_tensor, 0);
  return static_cast<int32_t>(axis < 0 ? axis + input->shape.rank : axis);
}

template <bool kMax>
Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* axis_tensor = ctx.input(1);
  if (input->type != TensorType::FLOAT32 && input->type != TensorType::INT32) {
    return Status::error(StatusCode::kUnsupported, "input '%s' is %s, expected FLOAT32 or INT32",
                         input->name, tensor_type_name(input->type));
  }
  GRUWB_RETURN_IF_ERROR(expect_constant_index(axis_tensor, "axis"));
  if (axis_tensor->elements() != 1) {
    return Status::error(StatusCode::kInvalidModel, "axis '%s' has shape %s, expected one value",
                         axis_tensor->name, ShapeText(axis_tensor->shape).text);
  }
  int32_t axis = 0;
  GRUWB_RETURN_IF_ERROR(normalize_axis(index_at(axis_tensor, 0), input->shape.rank, input, &axis));
  TensorType type = TensorType::INT64;  // the schema default (0) means "unset"
  if (kMax) {
    const auto* options = ctx.op().options<fb::ArgMaxOptions>();
    if (options) type = options->output_type();
  } else {
    const auto* options = ctx.op().options<fb::ArgMinOptions>();
    if (options) type = options->output_type();
  }
  Tensor* output = ctx.output(0);
  if (type != TensorType::INT32 && type != TensorType::INT64) {
    type = output->type == TensorType::INT32 ? TensorType::INT32 : TensorType::INT64;
  }
  Shape shape;
  for (int32_t d = 0; d < input->shape.rank; ++d) {
    if (d != axis) shape.dims[shape.rank++] = input->shape.dims[d];
  }
  output->type = type;
  set_output_shape(output, shape);
  return Status();
}

template <typename T, bool kMax>
void arg(const Tensor* input, int32_t axis, Tensor* output) {
  const T* x = reinterpret_cast<const T*>(input->data);
  const int64_t outer = dims_product(input->shape, 0, axis);
  const int64_t inner = dims_product(input->shape, axis + 1, input->shape.rank);
  const int32_t n = input->shape.dims[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* row = x + o * n * inner + i;
      int32_t best = 0;
      for (int32_t k = 1; k < n; ++k) {
        const T v = row[k * inner];
        if (kMax ? v > row[best * inner] : v < row[best * inner]) best = k;
      }
      const int64_t at = o * inner + i;
      if (output->type == TensorType::INT64) {
        reinterpret_cast<int64_t*>(output->data)[at] = best;
      } else {
        output->i32()[at] = best;
      }
    }
  }
}

template <bool kMax>
Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const int32_t axis = axis_of(ctx.input(1), input);
  if (input->type == TensorType::INT32) {
    arg<int32_t, kMax>(input, axis, ctx.output(0));
  } else {
    arg<float, kMax>(input, axis, ctx.output(0));
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kArgMaxKernel = {
    static_cast<int32_t>(BuiltinOperator::ARG_MAX), nullptr,
    prepare_then_fold<prepare<true>, eval<true>>, eval<true>};
extern const KernelRegistration kArgMinKernel = {
    static_cast<int32_t>(BuiltinOperator::ARG_MIN), nullptr,
    prepare_then_fold<prepare<false>, eval<false>>, eval<false>};

}  // namespace gruwb
