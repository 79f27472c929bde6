// FILL: a tensor of shape `dims` holding `value` everywhere (zero initial
// states, dropout masks of 1.0). dims must be known at prepare time: a
// constant, or folded from SHAPE/STRIDED_SLICE/PACK.

#include <cstring>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* dims = ctx.input(0);
  const Tensor* value = ctx.input(1);
  GRUWB_RETURN_IF_ERROR(expect_constant_index(dims, "dims"));
  if (dims->shape.rank != 1 || dims->shape.dims[0] > kMaxRank) {
    return Status::error(StatusCode::kInvalidModel,
                         "dims '%s' has shape %s, expected 1-D with at most %d values", dims->name,
                         ShapeText(dims->shape).text, kMaxRank);
  }
  if (value->elements() != 1) {
    return Status::error(StatusCode::kInvalidModel, "value '%s' has shape %s, expected a scalar",
                         value->name, ShapeText(value->shape).text);
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(value, "value", &element_bytes));
  Shape shape;
  shape.rank = dims->shape.dims[0];
  for (int32_t d = 0; d < shape.rank; ++d) {
    int64_t size = index_at(dims, d);
    if (size < 0 || size > kMaxDimension) {
      return Status::error(StatusCode::kInvalidModel, "dims '%s' holds a bad size %lld at %d",
                           dims->name, static_cast<long long>(size), static_cast<int>(d));
    }
    shape.dims[d] = static_cast<int32_t>(size);
  }
  Tensor* output = ctx.output(0);
  output->type = value->type;
  set_output_shape(output, shape);
  return Status();
}

Status eval(OpContext& ctx) {
  const Tensor* value = ctx.input(1);
  Tensor* output = ctx.output(0);
  const int64_t n = output->elements();
  switch (element_bytes_of(value->type)) {
    case 4: {  // FLOAT32, INT32: the common case, one word store per element
      uint32_t word;
      memcpy(&word, value->data, 4);
      uint32_t* out = reinterpret_cast<uint32_t*>(output->data);
      for (int64_t i = 0; i < n; ++i) out[i] = word;
      break;
    }
    case 1: memset(output->data, value->data[0], static_cast<size_t>(n)); break;
    default: {
      const size_t size = element_bytes_of(value->type);
      for (int64_t i = 0; i < n; ++i) {
        memcpy(output->data + static_cast<size_t>(i) * size, value->data, size);
      }
    }
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kFillKernel = {static_cast<int32_t>(BuiltinOperator::FILL), nullptr,
                                               prepare_then_fold<prepare, eval>, eval};

}  // namespace gruwb
