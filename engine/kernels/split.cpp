// SPLIT (axis, value -> num_splits equal parts) and SPLIT_V (value,
// size_splits, axis -> parts of the given sizes; one size may be -1 for the
// rest). The converter's GRU and LSTM cells split their gate pre-activations
// this way. The axis and the sizes decide output shapes, so they must be
// constants.

#include <cstring>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

Status read_axis(const Tensor* axis_tensor, const Tensor* value, int32_t* axis) {
  GRUWB_RETURN_IF_ERROR(expect_constant_index(axis_tensor, "axis"));
  if (axis_tensor->elements() != 1) {
    return Status::error(StatusCode::kInvalidModel, "axis '%s' has shape %s, expected one value",
                         axis_tensor->name, ShapeText(axis_tensor->shape).text);
  }
  return normalize_axis(index_at(axis_tensor, 0), value->shape.rank, value, axis);
}

Status set_output(OpContext& ctx, int i, const Tensor* value, int32_t axis, int64_t size) {
  Tensor* output = ctx.output(i);
  if (!output) return Status::error(StatusCode::kInvalidModel, "output %d is omitted", i);
  Shape shape = value->shape;
  shape.dims[axis] = static_cast<int32_t>(size);
  output->type = value->type;
  set_output_shape(output, shape);
  return Status();
}

// Every output takes its slab of each outer block in turn.
void split(OpContext& ctx, const Tensor* value, int32_t axis) {
  const size_t element_bytes = element_bytes_of(value->type);
  const int64_t outer = dims_product(value->shape, 0, axis);
  const int64_t inner = dims_product(value->shape, axis + 1, value->shape.rank);
  const uint8_t* in = value->data;
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < ctx.output_count(); ++i) {
      Tensor* output = ctx.output(i);
      const size_t chunk = static_cast<size_t>(output->shape.dims[axis] * inner) * element_bytes;
      memcpy(output->data + static_cast<size_t>(o) * chunk, in, chunk);
      in += chunk;
    }
  }
}

// The adjoint of split(): each output's gradient goes back into its slab.
void split_backward(OpContext& ctx, const Tensor* value, int32_t axis) {
  Tensor* dx = ctx.gradient(value);
  if (!dx) return;
  const int64_t outer = dims_product(value->shape, 0, axis);
  const int64_t inner = dims_product(value->shape, axis + 1, value->shape.rank);
  float* to = dx->f32();
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < ctx.output_count(); ++i) {
      const Tensor* output = ctx.output(i);
      const int64_t chunk = output->shape.dims[axis] * inner;
      const Tensor* dy = ctx.gradient(output);
      if (dy) add_floats(to, dy->f32() + o * chunk, chunk);
      to += chunk;
    }
  }
}

int32_t axis_of(const Tensor* axis_tensor, const Tensor* value) {
  int64_t axis = index_at(axis_tensor, 0);
  return static_cast<int32_t>(axis < 0 ? axis + value->shape.rank : axis);
}

Status prepare_split(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  const Tensor* value = ctx.input(1);
  int32_t axis = 0;
  GRUWB_RETURN_IF_ERROR(read_axis(ctx.input(0), value, &axis));
  const auto* options = ctx.op().options<fb::SplitOptions>();
  const int parts = ctx.output_count();
  if (parts < 1 || (options && options->num_splits() != parts)) {
    return Status::error(StatusCode::kInvalidModel, "num_splits %d but %d outputs",
                         options ? static_cast<int>(options->num_splits()) : 0, parts);
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(value, "input", &element_bytes));
  const int32_t dim = value->shape.dims[axis];
  if (dim % parts != 0) {
    return Status::error(StatusCode::kInvalidModel,
                         "dimension %d of '%s' %s does not split into %d equal parts",
                         static_cast<int>(axis), value->name, ShapeText(value->shape).text, parts);
  }
  for (int i = 0; i < parts; ++i) {
    GRUWB_RETURN_IF_ERROR(set_output(ctx, i, value, axis, dim / parts));
  }
  return Status();
}

Status eval_split(OpContext& ctx) {
  const Tensor* value = ctx.input(1);
  split(ctx, value, axis_of(ctx.input(0), value));
  return Status();
}

Status backward_split(OpContext& ctx) {
  const Tensor* value = ctx.input(1);
  split_backward(ctx, value, axis_of(ctx.input(0), value));
  return Status();
}

Status prepare_split_v(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 3, 3));
  const Tensor* value = ctx.input(0);
  const Tensor* size_splits = ctx.input(1);
  int32_t axis = 0;
  GRUWB_RETURN_IF_ERROR(read_axis(ctx.input(2), value, &axis));
  GRUWB_RETURN_IF_ERROR(expect_constant_index(size_splits, "size_splits"));
  const int parts = ctx.output_count();
  const auto* options = ctx.op().options<fb::SplitVOptions>();
  if (size_splits->shape.rank != 1 || size_splits->elements() != parts ||
      (options && options->num_splits() != parts)) {
    return Status::error(StatusCode::kInvalidModel,
                         "size_splits '%s' %s, num_splits %d and %d outputs disagree",
                         size_splits->name, ShapeText(size_splits->shape).text,
                         options ? static_cast<int>(options->num_splits()) : 0, parts);
  }
  const int32_t dim = value->shape.dims[axis];
  int unknown = -1;
  int64_t known = 0;
  for (int i = 0; i < parts; ++i) {
    int64_t size = index_at(size_splits, i);
    if (size == -1 && unknown < 0) {
      unknown = i;
    } else if (size < 0) {
      return Status::error(StatusCode::kInvalidModel, "size_splits '%s' has a bad size %lld",
                           size_splits->name, static_cast<long long>(size));
    } else {
      known += size;
    }
  }
  if ((unknown >= 0 && known > dim) || (unknown < 0 && known != dim)) {
    return Status::error(StatusCode::kInvalidModel,
                         "size_splits '%s' add up to %lld, but dimension %d of '%s' %s is %d",
                         size_splits->name, static_cast<long long>(known), static_cast<int>(axis),
                         value->name, ShapeText(value->shape).text, static_cast<int>(dim));
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(value, "input", &element_bytes));
  for (int i = 0; i < parts; ++i) {
    int64_t size = i == unknown ? dim - known : index_at(size_splits, i);
    GRUWB_RETURN_IF_ERROR(set_output(ctx, i, value, axis, size));
  }
  return Status();
}

Status eval_split_v(OpContext& ctx) {
  const Tensor* value = ctx.input(0);
  split(ctx, value, axis_of(ctx.input(2), value));
  return Status();
}

Status backward_split_v(OpContext& ctx) {
  const Tensor* value = ctx.input(0);
  split_backward(ctx, value, axis_of(ctx.input(2), value));
  return Status();
}

}  // namespace

extern const KernelRegistration kSplitKernel = {static_cast<int32_t>(BuiltinOperator::SPLIT),
                                                nullptr,
                                                prepare_then_fold<prepare_split, eval_split>,
                                                eval_split,
                                                GRUWB_BACKWARD(backward_split),
                                                /*cost=*/nullptr,
                                                /*weight_inputs=*/0,
                                                /*dynamic_inputs=*/false,
                                                /*integer_activations=*/true};
extern const KernelRegistration kSplitVKernel = {static_cast<int32_t>(BuiltinOperator::SPLIT_V),
                                                 nullptr,
                                                 prepare_then_fold<prepare_split_v, eval_split_v>,
                                                 eval_split_v,
                                                 GRUWB_BACKWARD(backward_split_v),
                                                 /*cost=*/nullptr,
                                                 /*weight_inputs=*/0,
                                                 /*dynamic_inputs=*/false,
                                                 /*integer_activations=*/true};

}  // namespace gruwb
