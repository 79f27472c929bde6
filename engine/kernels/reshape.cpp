// Ops that only change the shape: RESHAPE, EXPAND_DIMS, SQUEEZE. The data is
// copied unchanged (the planner never aliases an op's input and output).

#include <cstring>

#include "engine/kernels/kernel_util.h"

namespace gruwb {
namespace {

// Reads a constant or computed int32 tensor of dims (empty if absent).
Status read_int_list(const Tensor* tensor, const int32_t** values, int32_t* count) {
  *values = nullptr;
  *count = 0;
  if (!tensor) return Status();
  if (tensor->type != TensorType::INT32) {
    return Status::error(StatusCode::kUnsupported, "shape tensor '%s' is %s, expected INT32",
                         tensor->name, tensor_type_name(tensor->type));
  }
  if (tensor->kind != TensorKind::kConstant) {
    return Status::error(StatusCode::kUnsupported,
                         "shape tensor '%s' is computed at run time; only constant shapes are "
                         "supported",
                         tensor->name);
  }
  *values = tensor->i32();
  *count = static_cast<int32_t>(tensor->elements());
  return Status();
}

Status resolve_shape(const Tensor* input, const int32_t* dims, int32_t rank, Shape* out) {
  if (rank > kMaxRank) {
    return Status::error(StatusCode::kUnsupported, "rank %d exceeds %d", static_cast<int>(rank),
                         kMaxRank);
  }
  Shape shape;
  shape.rank = rank;
  int64_t known = 1;
  int32_t unknown = -1;
  for (int32_t i = 0; i < rank; ++i) {
    shape.dims[i] = dims[i];
    if (dims[i] == -1) {
      if (unknown >= 0) return Status::error(StatusCode::kInvalidModel, "two -1 dimensions");
      unknown = i;
    } else {
      known *= dims[i];
    }
  }
  if (unknown >= 0)
    shape.dims[unknown] = known ? static_cast<int32_t>(input->elements() / known) : 0;
  if (shape.elements() != input->elements()) {
    char from[48], to[48];
    format_shape(input->shape, from, sizeof from);
    format_shape(shape, to, sizeof to);
    return Status::error(StatusCode::kInvalidModel, "cannot reshape '%s' %s to %s", input->name,
                         from, to);
  }
  *out = shape;
  return Status();
}

Status finish(OpContext& ctx, const Shape& shape) {
  Tensor* output = ctx.output(0);
  output->type = ctx.input(0)->type;
  set_output_shape(output, shape);
  return Status();
}

Status prepare_reshape(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const int32_t* dims = nullptr;
  int32_t rank = 0;
  GRUWB_RETURN_IF_ERROR(read_int_list(ctx.input(1), &dims, &rank));
  // A 1-D shape tensor holding [] or no tensor: fall back to the options.
  const auto* options = ctx.op().options<fb::ReshapeOptions>();
  if (!dims && options && options->new_shape()) {
    dims = options->new_shape()->data();
    rank = static_cast<int32_t>(options->new_shape()->size());
  }
  if (!dims) {
    const Tensor* output = ctx.output(0);  // last resort: the file's output shape
    dims = output->shape.dims;
    rank = output->shape.rank;
  }
  Shape shape;
  GRUWB_RETURN_IF_ERROR(resolve_shape(input, dims, rank, &shape));
  return finish(ctx, shape);
}

Status prepare_expand_dims(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const int32_t* axis_value = nullptr;
  int32_t count = 0;
  GRUWB_RETURN_IF_ERROR(read_int_list(ctx.input(1), &axis_value, &count));
  if (count != 1) return Status::error(StatusCode::kInvalidModel, "axis must be one value");
  int32_t axis = axis_value[0] < 0 ? axis_value[0] + input->shape.rank + 1 : axis_value[0];
  if (axis < 0 || axis > input->shape.rank || input->shape.rank >= kMaxRank) {
    return Status::error(StatusCode::kInvalidModel, "axis %d out of range for rank %d",
                         static_cast<int>(axis_value[0]), static_cast<int>(input->shape.rank));
  }
  Shape shape;
  shape.rank = input->shape.rank + 1;
  for (int32_t i = 0, j = 0; i < shape.rank; ++i)
    shape.dims[i] = i == axis ? 1 : input->shape.dims[j++];
  return finish(ctx, shape);
}

Status prepare_squeeze(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const auto* options = ctx.op().options<fb::SqueezeOptions>();
  bool squeeze[kMaxRank] = {};
  if (options && options->squeeze_dims() && options->squeeze_dims()->size() > 0) {
    for (int32_t d : *options->squeeze_dims()) {
      int32_t axis = d < 0 ? d + input->shape.rank : d;
      if (axis < 0 || axis >= input->shape.rank || input->shape.dims[axis] != 1) {
        return Status::error(StatusCode::kInvalidModel, "cannot squeeze dimension %d",
                             static_cast<int>(d));
      }
      squeeze[axis] = true;
    }
  } else {
    for (int32_t i = 0; i < input->shape.rank; ++i) squeeze[i] = input->shape.dims[i] == 1;
  }
  Shape shape;
  for (int32_t i = 0; i < input->shape.rank; ++i) {
    if (!squeeze[i]) shape.dims[shape.rank++] = input->shape.dims[i];
  }
  return finish(ctx, shape);
}

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  if (output->data != input->data) memcpy(output->data, input->data, output->bytes);
  return Status();
}

// Same elements in the same order: the gradient passes through unchanged.
Status backward(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(ctx.input(0));
  if (!dy || !dx) return Status();
  const int64_t n = dx->elements();
  for (int64_t i = 0; i < n; ++i) dx->f32()[i] += dy->f32()[i];
  return Status();
}

}  // namespace

extern const KernelRegistration kReshapeKernel = {static_cast<int32_t>(BuiltinOperator::RESHAPE),
                                                  nullptr, prepare_reshape, eval,
                                                  GRUWB_BACKWARD(backward)};
extern const KernelRegistration kExpandDimsKernel = {
    static_cast<int32_t>(BuiltinOperator::EXPAND_DIMS), nullptr, prepare_expand_dims, eval,
    GRUWB_BACKWARD(backward)};
extern const KernelRegistration kSqueezeKernel = {static_cast<int32_t>(BuiltinOperator::SQUEEZE),
                                                  nullptr, prepare_squeeze, eval,
                                                  GRUWB_BACKWARD(backward)};

}  // namespace gruwb
