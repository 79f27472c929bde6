// SLICE: out = input[begin : begin + size] per dimension; size -1 means "to
// the end". begin and size may be computed at run time (the converter's
// TensorListSetItem accumulator: SLICE(acc, 0, [t,-1,-1]) and
// SLICE(acc, [t+1,0,0], -1)); when the output's shape then depends on them it
// is bounded-dynamic (Tensor::dynamic), planned at the input's size.

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

Status check_vector(const Tensor* tensor, const char* role, const Tensor* input) {
  GRUWB_RETURN_IF_ERROR(expect_index_type(tensor, role));
  if (tensor->shape.rank != 1 || tensor->shape.dims[0] != input->shape.rank) {
    return Status::error(StatusCode::kInvalidModel,
                         "%s '%s' has shape %s, expected [%d] for '%s' %s", role, tensor->name,
                         ShapeText(tensor->shape).text, static_cast<int>(input->shape.rank),
                         input->name, ShapeText(input->shape).text);
  }
  return Status();
}

// Start and count of dimension d, or an error naming the offending values.
Status resolve(const Tensor* input, const Tensor* begin, const Tensor* size, int32_t d,
               int64_t* start, int64_t* count) {
  const int64_t dim = input->shape.dims[d];
  *start = index_at(begin, d);
  *count = index_at(size, d);
  if (*count == -1) *count = dim - *start;
  if (*start < 0 || *count < 0 || *start + *count > dim) {
    return Status::error(StatusCode::kInvalidArgument,
                         "begin %lld size %lld is out of range for dimension %d of '%s' %s",
                         static_cast<long long>(index_at(begin, d)),
                         static_cast<long long>(index_at(size, d)), static_cast<int>(d),
                         input->name, ShapeText(input->shape).text);
  }
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 3, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* begin = ctx.input(1);
  const Tensor* size = ctx.input(2);
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(input, "input", &element_bytes));
  GRUWB_RETURN_IF_ERROR(check_vector(begin, "begin", input));
  GRUWB_RETURN_IF_ERROR(check_vector(size, "size", input));
  Tensor* output = ctx.output(0);
  output->type = input->type;
  Shape shape;
  shape.rank = input->shape.rank;
  if (is_constant(size) && is_constant(begin) && !input->dynamic) {
    for (int32_t d = 0; d < shape.rank; ++d) {
      int64_t start = 0, count = 0;
      GRUWB_RETURN_IF_ERROR(resolve(input, begin, size, d, &start, &count));
      shape.dims[d] = static_cast<int32_t>(count);
    }
    set_output_shape(output, shape);
    return Status();
  }
  // The output's shape depends on values computed at run time (a size taken
  // from the loop counter): plan it at its largest, the input's bound, with
  // constant sizes where they are known, and set the real shape in eval.
  bool dynamic = input->dynamic;
  for (int32_t d = 0; d < shape.rank; ++d) {
    const int64_t count = is_constant(size) ? index_at(size, d) : -1;
    if (count > input->shape.dims[d]) {
      return Status::error(StatusCode::kInvalidModel, "size %lld exceeds dimension %d of '%s' %s",
                           static_cast<long long>(count), static_cast<int>(d), input->name,
                           ShapeText(input->shape).text);
    }
    if (count >= 0) {
      shape.dims[d] = static_cast<int32_t>(count);
      continue;
    }
    // "To the end" from a known begin is static unless the input is dynamic.
    const int64_t start = is_constant(begin) ? index_at(begin, d) : 0;
    if (start < 0 || start > input->shape.dims[d]) {
      return Status::error(StatusCode::kInvalidModel, "begin %lld is out of range for '%s' %s",
                           static_cast<long long>(start), input->name,
                           ShapeText(input->shape).text);
    }
    if (!is_constant(size) || !is_constant(begin)) dynamic = true;
    shape.dims[d] = static_cast<int32_t>(input->shape.dims[d] - start);
  }
  output->dynamic = dynamic;
  set_output_shape(output, shape);
  return Status();
}

// The input elements the output takes: base + sum(i_d * step_d).
Status walk(const OpContext& ctx, int64_t* base, int32_t* count, int64_t* step) {
  const Tensor* input = ctx.input(0);
  const Tensor* begin = ctx.input(1);
  const Tensor* size = ctx.input(2);
  *base = 0;
  int64_t stride = 1;
  for (int32_t d = input->shape.rank - 1; d >= 0; --d) {
    int64_t start = 0, n = 0;
    GRUWB_RETURN_IF_ERROR(resolve(input, begin, size, d, &start, &n));  // begin may be data
    *base += start * stride;
    step[d] = stride;
    count[d] = static_cast<int32_t>(n);
    stride *= input->shape.dims[d];
  }
  return Status();
}

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  int32_t count[kMaxRank];
  int64_t step[kMaxRank];
  int64_t base = 0;
  GRUWB_RETURN_IF_ERROR(walk(ctx, &base, count, step));
  if (output->dynamic) {
    Shape shape;
    shape.rank = input->shape.rank;
    for (int32_t d = 0; d < shape.rank; ++d) shape.dims[d] = count[d];
    GRUWB_RETURN_IF_ERROR(set_dynamic_shape(output, shape));
  } else {
    // Static output, run-time begin: the counts must still be the planned ones.
    for (int32_t d = 0; d < input->shape.rank; ++d) {
      if (count[d] != output->shape.dims[d]) {
        return Status::error(StatusCode::kInvalidArgument,
                             "slice of '%s' %s has %d elements in dimension %d, planned %d",
                             input->name, ShapeText(input->shape).text, static_cast<int>(count[d]),
                             static_cast<int>(d), static_cast<int>(output->shape.dims[d]));
      }
    }
  }
  strided_copy(input->data, output->data, element_bytes_of(input->type), base, count, step,
               input->shape.rank);
  return Status();
}

// The sliced elements get the output's gradient; the others none.
Status backward(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(ctx.input(0));
  if (!dy || !dx) return Status();
  int32_t count[kMaxRank];
  int64_t step[kMaxRank];
  int64_t base = 0;
  GRUWB_RETURN_IF_ERROR(walk(ctx, &base, count, step));
  strided_add_back(dy->f32(), dx->f32(), base, count, step, ctx.input(0)->shape.rank);
  return Status();
}

}  // namespace

extern const KernelRegistration kSliceKernel = {static_cast<int32_t>(BuiltinOperator::SLICE),
                                                nullptr,
                                                prepare_then_fold<prepare, eval>,
                                                eval,
                                                GRUWB_BACKWARD(backward),
                                                /*cost=*/nullptr,
                                                /*weight_inputs=*/0,
                                                /*dynamic_inputs=*/true,
                                                /*integer_activations=*/true};

}  // namespace gruwb
