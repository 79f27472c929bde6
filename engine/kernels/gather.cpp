// GATHER: out = params taken along `axis` at `indices` (batch_dims 0). The
// converter's TensorListGetItem becomes GATHER(sequence, time) in WHILE
// bodies, so the indices are usually computed at run time; the output shape
// depends only on their shape.

#include <cstring>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

int32_t gather_axis(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::GatherOptions>();
  return options ? options->axis() : 0;
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* params = ctx.input(0);
  const Tensor* indices = ctx.input(1);
  const auto* options = ctx.op().options<fb::GatherOptions>();
  if (options && options->batch_dims() != 0) {
    return Status::error(StatusCode::kUnsupported, "batch_dims %d is not supported (only 0)",
                         static_cast<int>(options->batch_dims()));
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(params, "params", &element_bytes));
  GRUWB_RETURN_IF_ERROR(expect_index_type(indices, "indices"));
  int32_t axis = 0;
  GRUWB_RETURN_IF_ERROR(normalize_axis(gather_axis(ctx), params->shape.rank, params, &axis));
  Shape shape;
  shape.rank = params->shape.rank - 1 + indices->shape.rank;
  if (shape.rank > kMaxRank) {
    return Status::error(StatusCode::kUnsupported,
                         "output rank %d of params '%s' %s gathered by '%s' %s exceeds %d",
                         static_cast<int>(shape.rank), params->name, ShapeText(params->shape).text,
                         indices->name, ShapeText(indices->shape).text, kMaxRank);
  }
  int32_t r = 0;
  for (int32_t i = 0; i < axis; ++i) shape.dims[r++] = params->shape.dims[i];
  for (int32_t i = 0; i < indices->shape.rank; ++i) shape.dims[r++] = indices->shape.dims[i];
  for (int32_t i = axis + 1; i < params->shape.rank; ++i) shape.dims[r++] = params->shape.dims[i];
  Tensor* output = ctx.output(0);
  output->type = params->type;
  set_output_shape(output, shape);
  return Status();
}

Status eval(OpContext& ctx) {
  const Tensor* params = ctx.input(0);
  const Tensor* indices = ctx.input(1);
  Tensor* output = ctx.output(0);
  int32_t axis = gather_axis(ctx);
  if (axis < 0) axis += params->shape.rank;
  const size_t element_bytes = element_bytes_of(params->type);
  const int64_t outer = dims_product(params->shape, 0, axis);
  const int32_t axis_size = params->shape.dims[axis];
  const size_t chunk =
      static_cast<size_t>(dims_product(params->shape, axis + 1, params->shape.rank)) *
      element_bytes;
  const int64_t count = indices->elements();
  const uint8_t* in = params->data;
  uint8_t* out = output->data;
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* block = in + static_cast<size_t>(o * axis_size) * chunk;
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = index_at(indices, i);
      // Indices are data, so only eval can check them.
      if (index < 0 || index >= axis_size) {
        return Status::error(StatusCode::kInvalidArgument,
                             "index %lld in '%s' is out of range [0, %d) for params '%s'",
                             static_cast<long long>(index), indices->name,
                             static_cast<int>(axis_size), params->name);
      }
      memcpy(out, block + static_cast<size_t>(index) * chunk, chunk);
      out += chunk;
    }
  }
  return Status();
}

// Scatter-add: a row gathered twice gets both gradients.
Status backward(OpContext& ctx) {
  const Tensor* params = ctx.input(0);
  const Tensor* indices = ctx.input(1);
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(params);
  if (!dy || !dx) return Status();
  int32_t axis = gather_axis(ctx);
  if (axis < 0) axis += params->shape.rank;
  const int64_t outer = dims_product(params->shape, 0, axis);
  const int32_t axis_size = params->shape.dims[axis];
  const int64_t chunk = dims_product(params->shape, axis + 1, params->shape.rank);
  const int64_t count = indices->elements();
  const float* g = dy->f32();
  for (int64_t o = 0; o < outer; ++o) {
    float* block = dx->f32() + o * axis_size * chunk;
    for (int64_t i = 0; i < count; ++i) {
      // eval checked the range on these same indices
      add_floats(block + index_at(indices, i) * chunk, g, chunk);
      g += chunk;
    }
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kGatherKernel = {static_cast<int32_t>(BuiltinOperator::GATHER),
                                                 nullptr,
                                                 prepare_then_fold<prepare, eval>,
                                                 eval,
                                                 GRUWB_BACKWARD(backward),
                                                 /*cost=*/nullptr,
                                                 /*weight_inputs=*/0,
                                                 /*dynamic_inputs=*/false,
                                                 /*integer_activations=*/true};

}  // namespace gruwb
