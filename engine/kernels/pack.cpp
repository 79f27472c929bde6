// PACK (N tensors of one shape -> one tensor with a new axis of size N) and
// UNPACK (the inverse). The converter packs scalars into shape vectors
// ([batch, units] for FILL) and unpacks sequences along time.

#include <cstring>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

int32_t pack_axis(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::PackOptions>();
  int32_t axis = options ? options->axis() : 0;
  return axis < 0 ? axis + ctx.input(0)->shape.rank + 1 : axis;
}

Status prepare_pack(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1 << 16));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* first = ctx.input(0);
  const int n = ctx.input_count();
  const auto* options = ctx.op().options<fb::PackOptions>();
  if (options && options->values_count() != n) {
    return Status::error(StatusCode::kInvalidModel, "values_count %d but %d inputs",
                         static_cast<int>(options->values_count()), n);
  }
  const int32_t raw_axis = options ? options->axis() : 0;
  const int32_t axis = pack_axis(ctx);
  if (axis < 0 || axis > first->shape.rank || first->shape.rank >= kMaxRank) {
    return Status::error(StatusCode::kInvalidModel, "axis %d is out of range for packing '%s' %s",
                         static_cast<int>(raw_axis), first->name, ShapeText(first->shape).text);
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(first, "input", &element_bytes));
  for (int i = 1; i < n; ++i) {
    const Tensor* input = ctx.input(i);
    if (!input) return Status::error(StatusCode::kInvalidModel, "input %d is omitted", i);
    GRUWB_RETURN_IF_ERROR(expect_type(input, first->type, "input"));
    if (input->shape != first->shape) {
      return Status::error(StatusCode::kInvalidModel,
                           "input %d '%s' %s differs from input 0 '%s' %s", i, input->name,
                           ShapeText(input->shape).text, first->name, ShapeText(first->shape).text);
    }
  }
  Shape shape;
  shape.rank = first->shape.rank + 1;
  for (int32_t d = 0, s = 0; d < shape.rank; ++d) {
    shape.dims[d] = d == axis ? n : first->shape.dims[s++];
  }
  Tensor* output = ctx.output(0);
  output->type = first->type;
  set_output_shape(output, shape);
  return Status();
}

Status eval_pack(OpContext& ctx) {
  const Tensor* first = ctx.input(0);
  const int32_t axis = pack_axis(ctx);
  const size_t element_bytes = element_bytes_of(first->type);
  const int64_t outer = dims_product(first->shape, 0, axis);
  const size_t chunk =
      static_cast<size_t>(dims_product(first->shape, axis, first->shape.rank)) * element_bytes;
  const int n = ctx.input_count();
  uint8_t* out = ctx.output(0)->data;
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < n; ++i) {
      memcpy(out, ctx.input(i)->data + static_cast<size_t>(o) * chunk, chunk);
      out += chunk;
    }
  }
  return Status();
}

// The adjoint of eval_pack: input i gets every n-th chunk of the gradient.
Status backward_pack(OpContext& ctx) {
  const Tensor* first = ctx.input(0);
  const Tensor* dy = ctx.gradient(ctx.output(0));
  if (!dy) return Status();
  const int32_t axis = pack_axis(ctx);
  const int64_t outer = dims_product(first->shape, 0, axis);
  const int64_t chunk = dims_product(first->shape, axis, first->shape.rank);
  const int n = ctx.input_count();
  const float* g = dy->f32();
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < n; ++i) {
      Tensor* dx = ctx.gradient(ctx.input(i));
      if (dx) add_floats(dx->f32() + o * chunk, g, chunk);
      g += chunk;
    }
  }
  return Status();
}

int32_t unpack_axis(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::UnpackOptions>();
  int32_t axis = options ? options->axis() : 0;
  return axis < 0 ? axis + ctx.input(0)->shape.rank : axis;
}

Status prepare_unpack(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  const Tensor* input = ctx.input(0);
  const auto* options = ctx.op().options<fb::UnpackOptions>();
  int32_t axis = 0;
  GRUWB_RETURN_IF_ERROR(
      normalize_axis(options ? options->axis() : 0, input->shape.rank, input, &axis));
  const int32_t dim = input->shape.dims[axis];
  const int n = ctx.output_count();
  if (dim != n || (options && options->num() != 0 && options->num() != n)) {
    return Status::error(StatusCode::kInvalidModel,
                         "'%s' %s has %d values along axis %d, but num is %d and there are %d "
                         "outputs",
                         input->name, ShapeText(input->shape).text, static_cast<int>(dim),
                         static_cast<int>(axis), options ? static_cast<int>(options->num()) : 0, n);
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(input, "input", &element_bytes));
  Shape shape;
  for (int32_t d = 0; d < input->shape.rank; ++d) {
    if (d != axis) shape.dims[shape.rank++] = input->shape.dims[d];
  }
  for (int i = 0; i < n; ++i) {
    Tensor* output = ctx.output(i);
    if (!output) return Status::error(StatusCode::kInvalidModel, "output %d is omitted", i);
    output->type = input->type;
    set_output_shape(output, shape);
  }
  return Status();
}

Status eval_unpack(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const int32_t axis = unpack_axis(ctx);
  const size_t element_bytes = element_bytes_of(input->type);
  const int64_t outer = dims_product(input->shape, 0, axis);
  const size_t chunk =
      static_cast<size_t>(dims_product(input->shape, axis + 1, input->shape.rank)) * element_bytes;
  const int n = ctx.output_count();
  const uint8_t* in = input->data;
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < n; ++i) {
      memcpy(ctx.output(i)->data + static_cast<size_t>(o) * chunk, in, chunk);
      in += chunk;
    }
  }
  return Status();
}

// The adjoint of eval_unpack.
Status backward_unpack(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* dx = ctx.gradient(input);
  if (!dx) return Status();
  const int32_t axis = unpack_axis(ctx);
  const int64_t outer = dims_product(input->shape, 0, axis);
  const int64_t chunk = dims_product(input->shape, axis + 1, input->shape.rank);
  const int n = ctx.output_count();
  float* to = dx->f32();
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < n; ++i) {
      const Tensor* dy = ctx.gradient(ctx.output(i));
      if (dy) add_floats(to, dy->f32() + o * chunk, chunk);
      to += chunk;
    }
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kPackKernel = {static_cast<int32_t>(BuiltinOperator::PACK),
                                               nullptr,
                                               prepare_then_fold<prepare_pack, eval_pack>,
                                               eval_pack,
                                               GRUWB_BACKWARD(backward_pack),
                                               /*cost=*/nullptr,
                                               /*weight_inputs=*/0,
                                               /*dynamic_inputs=*/false,
                                               /*integer_activations=*/true};
extern const KernelRegistration kUnpackKernel = {static_cast<int32_t>(BuiltinOperator::UNPACK),
                                                 nullptr,
                                                 prepare_then_fold<prepare_unpack, eval_unpack>,
                                                 eval_unpack,
                                                 GRUWB_BACKWARD(backward_unpack),
                                                 /*cost=*/nullptr,
                                                 /*weight_inputs=*/0,
                                                 /*dynamic_inputs=*/false,
                                                 /*integer_activations=*/true};

}  // namespace gruwb
