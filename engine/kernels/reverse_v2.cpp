// REVERSE_V2(input, axis): the input with the listed axes reversed (the
// backward direction of a bidirectional layer reverses the time axis). The
// backward pass is the same reversal of the output gradient.

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

// A strided view of the input that reads it reversed along the axes:
// start at the last element of each reversed axis, step backwards.
struct ReversedView {
  int64_t base = 0;
  int32_t count[kMaxRank] = {};
  int64_t step[kMaxRank] = {};
};

ReversedView reversed_view(const Tensor* input, const Tensor* axes) {
  const Shape& shape = input->shape;
  bool reversed[kMaxRank] = {};
  for (int64_t i = 0; i < axes->elements(); ++i) {
    int64_t axis = index_at(axes, i);
    reversed[axis < 0 ? axis + shape.rank : axis] = true;
  }
  ReversedView view;
  int64_t stride = 1;
  for (int32_t d = shape.rank - 1; d >= 0; --d) {
    view.count[d] = shape.dims[d];
    view.step[d] = reversed[d] ? -stride : stride;
    if (reversed[d] && shape.dims[d] > 0) view.base += (shape.dims[d] - 1) * stride;
    stride *= shape.dims[d];
  }
  return view;
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* axes = ctx.input(1);
  GRUWB_RETURN_IF_ERROR(expect_index_type(axes, "axis"));
  if (axes->shape.rank > 1) {
    return Status::error(StatusCode::kInvalidModel, "axis '%s' has shape %s, expected 1-D",
                         axes->name, ShapeText(axes->shape).text);
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(input, "input", &element_bytes));
  if (is_constant(axes)) {
    for (int64_t i = 0; i < axes->elements(); ++i) {
      int32_t axis = 0;
      GRUWB_RETURN_IF_ERROR(normalize_axis(index_at(axes, i), input->shape.rank, input, &axis));
    }
  }
  Tensor* output = ctx.output(0);
  output->type = input->type;
  set_output_shape(output, input->shape);
  return Status();
}

Status check_axes(const Tensor* input, const Tensor* axes) {
  for (int64_t i = 0; i < axes->elements(); ++i) {
    int64_t axis = index_at(axes, i);
    if (axis < -input->shape.rank || axis >= input->shape.rank) {
      return Status::error(StatusCode::kInvalidArgument, "axis %lld is out of range for '%s' %s",
                           static_cast<long long>(axis), input->name, ShapeText(input->shape).text);
    }
  }
  return Status();
}

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* axes = ctx.input(1);
  if (!is_constant(axes)) GRUWB_RETURN_IF_ERROR(check_axes(input, axes));
  const ReversedView view = reversed_view(input, axes);
  strided_copy(input->data, ctx.output(0)->data, element_bytes_of(input->type), view.base,
               view.count, view.step, input->shape.rank);
  return Status();
}

Status backward(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(input);
  if (!dy || !dx) return Status();
  // Output element o came from input element view(o): its gradient goes there.
  const ReversedView view = reversed_view(input, ctx.input(1));
  strided_add_back(dy->f32(), dx->f32(), view.base, view.count, view.step, input->shape.rank);
  return Status();
}

}  // namespace

extern const KernelRegistration kReverseV2Kernel = {
    static_cast<int32_t>(BuiltinOperator::REVERSE_V2), nullptr, prepare_then_fold<prepare, eval>,
    eval, GRUWB_BACKWARD(backward)};

}  // namespace gruwb
