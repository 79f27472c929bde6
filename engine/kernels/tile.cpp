// TILE(input, multiples): the input repeated multiples[d] times along each
// dimension d. The multiples decide the output shape, so they must be known
// at prepare. Backward: each input element sums the gradients of its copies.

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* multiples = ctx.input(1);
  GRUWB_RETURN_IF_ERROR(expect_constant_index(multiples, "multiples"));
  if (multiples->shape.rank != 1 || multiples->elements() != input->shape.rank) {
    return Status::error(StatusCode::kInvalidModel,
                         "multiples '%s' has shape %s, expected one value per dimension of "
                         "'%s' %s",
                         multiples->name, ShapeText(multiples->shape).text, input->name,
                         ShapeText(input->shape).text);
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(input, "input", &element_bytes));
  Shape shape = input->shape;
  for (int32_t d = 0; d < shape.rank; ++d) {
    const int64_t m = index_at(multiples, d);
    const int64_t size = m * shape.dims[d];
    if (m < 0 || size > kMaxDimension) {
      return Status::error(StatusCode::kInvalidModel, "multiples '%s' holds a bad value %lld at %d",
                           multiples->name, static_cast<long long>(m), static_cast<int>(d));
    }
    shape.dims[d] = static_cast<int32_t>(size);
  }
  Tensor* output = ctx.output(0);
  output->type = input->type;
  set_output_shape(output, shape);
  return Status();
}

// Calls f(output_index, input_index): output index i_d maps to i_d mod dim_d.
template <typename F>
void for_each_tiled(const Shape& in, const Shape& out, F f) {
  int64_t stride[kMaxRank] = {};
  int64_t s = 1;
  for (int32_t d = in.rank - 1; d >= 0; --d) {
    stride[d] = s;
    s *= in.dims[d];
  }
  int32_t out_index[kMaxRank] = {};
  int32_t in_index[kMaxRank] = {};
  int64_t i = 0;
  const int64_t total = out.elements();
  for (int64_t o = 0; o < total; ++o) {
    f(o, i);
    for (int32_t d = out.rank - 1; d >= 0; --d) {
      ++out_index[d];
      if (++in_index[d] < in.dims[d]) {
        i += stride[d];
      } else {
        i -= stride[d] * (in.dims[d] - 1);
        in_index[d] = 0;
      }
      if (out_index[d] < out.dims[d]) break;
      out_index[d] = 0;
      // The wrap above already brought in_index[d] back: out.dims[d] is a
      // multiple of in.dims[d].
    }
  }
}

template <typename T>
void tile(const Tensor* input, Tensor* output) {
  const T* x = reinterpret_cast<const T*>(input->data);
  T* y = reinterpret_cast<T*>(output->data);
  for_each_tiled(input->shape, output->shape, [&](int64_t o, int64_t i) { y[o] = x[i]; });
}

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  switch (element_bytes_of(input->type)) {
    case 1: tile<uint8_t>(input, output); break;
    case 2: tile<uint16_t>(input, output); break;
    case 4: tile<uint32_t>(input, output); break;
    default: tile<uint64_t>(input, output); break;
  }
  return Status();
}

Status backward(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  Tensor* dx = ctx.gradient(input);
  if (!dy || !dx) return Status();
  const float* g = dy->f32();
  float* d = dx->f32();
  for_each_tiled(input->shape, output->shape, [&](int64_t o, int64_t i) { d[i] += g[o]; });
  return Status();
}

}  // namespace

extern const KernelRegistration kTileKernel = {static_cast<int32_t>(BuiltinOperator::TILE), nullptr,
                                               prepare_then_fold<prepare, eval>, eval,
                                               GRUWB_BACKWARD(backward)};

}  // namespace gruwb
