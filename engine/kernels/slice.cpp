// SLICE: out = input[begin : begin + size] per dimension; size -1 means "to
// the end". begin may be computed at run time (the converter's
// TensorListSetItem accumulator) when every size is a constant >= 0, since
// the output shape then does not depend on it.

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
  GRUWB_RETURN_IF_ERROR(expect_constant_index(size, "size"));
  Shape shape;
  shape.rank = input->shape.rank;
  for (int32_t d = 0; d < shape.rank; ++d) {
    if (is_constant(begin)) {
      int64_t start = 0, count = 0;
      GRUWB_RETURN_IF_ERROR(resolve(input, begin, size, d, &start, &count));
      shape.dims[d] = static_cast<int32_t>(count);
      continue;
    }
    int64_t count = index_at(size, d);
    if (count < 0) {
      return Status::error(StatusCode::kUnsupported,
                           "size -1 in dimension %d of '%s' needs begin '%s', which is computed "
                           "at run time",
                           static_cast<int>(d), size->name, begin->name);
    }
    if (count > input->shape.dims[d]) {
      return Status::error(StatusCode::kInvalidModel, "size %lld exceeds dimension %d of '%s' %s",
                           static_cast<long long>(count), static_cast<int>(d), input->name,
                           ShapeText(input->shape).text);
    }
    shape.dims[d] = static_cast<int32_t>(count);
  }
  Tensor* output = ctx.output(0);
  output->type = input->type;
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
  int32_t count[kMaxRank];
  int64_t step[kMaxRank];
  int64_t base = 0;
  GRUWB_RETURN_IF_ERROR(walk(ctx, &base, count, step));
  strided_copy(input->data, ctx.output(0)->data, element_bytes_of(input->type), base, count, step,
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
                                                nullptr, prepare_then_fold<prepare, eval>, eval,
                                                GRUWB_BACKWARD(backward)};

}  // namespace gruwb
