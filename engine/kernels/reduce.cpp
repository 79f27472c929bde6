// SUM and MEAN over the axes in input 1 (ReducerOptions.keep_dims keeps
// reduced dimensions as 1). Float32, and int32 SUM for shape arithmetic
// (small constant results fold). The axes decide the output shape, so they
// must be known at prepare: a constant, or folded (RANGE(0, RANK(x), 1)).

#include <cstring>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

struct Reduction {
  bool reduced[kMaxRank] = {};
  int64_t out_stride[kMaxRank] = {};  // 0 along reduced axes
  int64_t count = 1;                  // input elements per output element
};

Reduction reduction_of(const Tensor* input, const Tensor* axes) {
  Reduction r;
  const Shape& shape = input->shape;
  for (int64_t i = 0; i < axes->elements(); ++i) {
    int64_t axis = index_at(axes, i);
    r.reduced[axis < 0 ? axis + shape.rank : axis] = true;
  }
  int64_t stride = 1;
  for (int32_t d = shape.rank - 1; d >= 0; --d) {
    if (r.reduced[d]) {
      r.count *= shape.dims[d];
    } else {
      r.out_stride[d] = stride;
      stride *= shape.dims[d];
    }
  }
  return r;
}

// Calls f(input_index, output_index) for every input element.
template <typename F>
void for_each_reduced(const Shape& shape, const Reduction& r, F f) {
  int32_t index[kMaxRank] = {};
  int64_t o = 0;
  const int64_t total = shape.elements();
  for (int64_t i = 0; i < total; ++i) {
    f(i, o);
    for (int32_t d = shape.rank - 1; d >= 0; --d) {
      o += r.out_stride[d];
      if (++index[d] < shape.dims[d]) break;
      o -= r.out_stride[d] * shape.dims[d];
      index[d] = 0;
    }
  }
}

template <bool kMean>
Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* axes = ctx.input(1);
  if (!(input->type == TensorType::FLOAT32 || (!kMean && input->type == TensorType::INT32))) {
    return Status::error(StatusCode::kUnsupported, "input '%s' is %s, expected FLOAT32%s",
                         input->name, tensor_type_name(input->type), kMean ? "" : " or INT32");
  }
  GRUWB_RETURN_IF_ERROR(expect_constant_index(axes, "axes"));
  if (axes->shape.rank > 1) {
    return Status::error(StatusCode::kInvalidModel, "axes '%s' has shape %s, expected 1-D",
                         axes->name, ShapeText(axes->shape).text);
  }
  for (int64_t i = 0; i < axes->elements(); ++i) {
    int32_t axis = 0;
    GRUWB_RETURN_IF_ERROR(normalize_axis(index_at(axes, i), input->shape.rank, input, &axis));
  }
  const auto* options = ctx.op().options<fb::ReducerOptions>();
  const bool keep_dims = options && options->keep_dims();
  const Reduction r = reduction_of(input, axes);
  Shape shape;
  for (int32_t d = 0; d < input->shape.rank; ++d) {
    if (!r.reduced[d]) {
      shape.dims[shape.rank++] = input->shape.dims[d];
    } else if (keep_dims) {
      shape.dims[shape.rank++] = 1;
    }
  }
  Tensor* output = ctx.output(0);
  output->type = input->type;
  set_output_shape(output, shape);
  return Status();
}

template <typename T, bool kMean>
void reduce(const Tensor* input, const Reduction& r, Tensor* output) {
  const T* x = reinterpret_cast<const T*>(input->data);
  T* y = reinterpret_cast<T*>(output->data);
  memset(y, 0, sizeof(T) * static_cast<size_t>(output->elements()));
  for_each_reduced(input->shape, r, [&](int64_t i, int64_t o) { y[o] += x[i]; });
  if (kMean && r.count > 0) {
    const T scale = static_cast<T>(r.count);
    for (int64_t o = 0; o < output->elements(); ++o) y[o] /= scale;
  }
}

template <bool kMean>
Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Reduction r = reduction_of(input, ctx.input(1));
  if (input->type == TensorType::INT32) {
    reduce<int32_t, false>(input, r, ctx.output(0));
  } else {
    reduce<float, kMean>(input, r, ctx.output(0));
  }
  return Status();
}

// Every input element receives its output's gradient (over count for MEAN).
template <bool kMean>
Status backward(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(input);
  if (!dy || !dx) return Status();
  const Reduction r = reduction_of(input, ctx.input(1));
  const float scale = kMean && r.count > 0 ? 1.f / static_cast<float>(r.count) : 1.f;
  const float* g = dy->f32();
  float* d = dx->f32();
  for_each_reduced(input->shape, r, [&](int64_t i, int64_t o) { d[i] += g[o] * scale; });
  return Status();
}

}  // namespace

extern const KernelRegistration kSumKernel = {static_cast<int32_t>(BuiltinOperator::SUM), nullptr,
                                              prepare_then_fold<prepare<false>, eval<false>>,
                                              eval<false>, GRUWB_BACKWARD(backward<false>)};
extern const KernelRegistration kMeanKernel = {static_cast<int32_t>(BuiltinOperator::MEAN), nullptr,
                                               prepare_then_fold<prepare<true>, eval<true>>,
                                               eval<true>, GRUWB_BACKWARD(backward<true>)};

}  // namespace gruwb
