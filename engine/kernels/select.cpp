// SELECT and SELECT_V2: out = condition ? x : y, element-wise. SELECT (v1)
// takes x and y of one shape and a condition of that shape, a scalar, or a
// vector over the first dimension (choosing whole rows); SELECT_V2
// broadcasts all three (Keras masking: mask_zero, the Masking layer). The
// backward pass routes each output gradient to the branch that was chosen.

#include <cstring>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"

namespace gruwb {
namespace {

// The condition's shape as seen by the output: SELECT's vector condition
// becomes [n, 1, ..., 1].
Shape condition_view(const Tensor* condition, const Shape& out, bool version_one) {
  if (!version_one || condition->shape.rank != 1 || out.rank <= 1) return condition->shape;
  Shape view;
  view.rank = out.rank;
  for (int32_t d = 0; d < out.rank; ++d) view.dims[d] = 1;
  view.dims[0] = condition->shape.dims[0];
  return view;
}

// Calls f(out_index, condition_index, x_index, y_index) over a broadcast
// output; shapes are right-aligned and dims of 1 repeat.
template <typename F>
void for_each_select(const Shape& out, const Shape& c, const Shape& x, const Shape& y, F f) {
  const int32_t rank = out.rank;
  const Shape* shapes[3] = {&c, &x, &y};
  int64_t stride[3][kMaxRank] = {};
  for (int s = 0; s < 3; ++s) {
    int64_t size = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
      const int32_t sd = d - (rank - shapes[s]->rank);
      const int32_t dim = sd >= 0 ? shapes[s]->dims[sd] : 1;
      stride[s][d] = dim == 1 ? 0 : size;
      size *= dim;
    }
  }
  int32_t index[kMaxRank] = {};
  int64_t at[3] = {0, 0, 0};
  const int64_t total = out.elements();
  for (int64_t o = 0; o < total; ++o) {
    f(o, at[0], at[1], at[2]);
    for (int32_t d = rank - 1; d >= 0; --d) {
      ++index[d];
      for (int s = 0; s < 3; ++s) at[s] += stride[s][d];
      if (index[d] < out.dims[d]) break;
      for (int s = 0; s < 3; ++s) at[s] -= stride[s][d] * out.dims[d];
      index[d] = 0;
    }
  }
}

template <bool kVersionOne>
Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 3, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* condition = ctx.input(0);
  const Tensor* x = ctx.input(1);
  const Tensor* y = ctx.input(2);
  GRUWB_RETURN_IF_ERROR(expect_type(condition, TensorType::BOOL, "condition"));
  GRUWB_RETURN_IF_ERROR(expect_type(y, x->type, "y"));
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(x, "x", &element_bytes));
  if (element_bytes > 8) {
    return Status::error(StatusCode::kUnsupported, "x '%s' is %s", x->name,
                         tensor_type_name(x->type));
  }
  Shape shape;
  if (kVersionOne) {
    const bool scalar = condition->shape.rank == 0;
    const bool rows = condition->shape.rank == 1 && x->shape.rank >= 1 &&
                      condition->shape.dims[0] == x->shape.dims[0];
    if (x->shape != y->shape || !(condition->shape == x->shape || scalar || rows)) {
      return Status::error(StatusCode::kInvalidModel,
                           "condition '%s' %s, x %s and y %s: SELECT needs x and y of one shape "
                           "and a condition of that shape, a scalar or one value per row",
                           condition->name, ShapeText(condition->shape).text,
                           ShapeText(x->shape).text, ShapeText(y->shape).text);
    }
    shape = x->shape;
  } else {
    Shape xy;
    GRUWB_RETURN_IF_ERROR(broadcast_shapes(x->shape, y->shape, &xy));
    GRUWB_RETURN_IF_ERROR(broadcast_shapes(condition->shape, xy, &shape));
  }
  Tensor* out = ctx.output(0);
  out->type = x->type;
  set_output_shape(out, shape);
  return Status();
}

template <typename T>
void select_elements(const Tensor* condition, const Shape& c_shape, const Tensor* x,
                     const Tensor* y, Tensor* out) {
  const uint8_t* c = condition->data;
  const T* a = reinterpret_cast<const T*>(x->data);
  const T* b = reinterpret_cast<const T*>(y->data);
  T* z = reinterpret_cast<T*>(out->data);
  if (c_shape == out->shape && x->shape == out->shape && y->shape == out->shape) {
    for (int64_t i = 0; i < out->elements(); ++i) z[i] = c[i] ? a[i] : b[i];
    return;
  }
  for_each_select(
      out->shape, c_shape, x->shape, y->shape,
      [&](int64_t o, int64_t ci, int64_t xi, int64_t yi) { z[o] = c[ci] ? a[xi] : b[yi]; });
}

template <bool kVersionOne>
Status eval(OpContext& ctx) {
  const Tensor* condition = ctx.input(0);
  const Tensor* x = ctx.input(1);
  const Tensor* y = ctx.input(2);
  Tensor* out = ctx.output(0);
  const Shape c_shape = condition_view(condition, out->shape, kVersionOne);
  switch (element_bytes_of(x->type)) {
    case 1: select_elements<uint8_t>(condition, c_shape, x, y, out); break;
    case 2: select_elements<uint16_t>(condition, c_shape, x, y, out); break;
    case 4: select_elements<uint32_t>(condition, c_shape, x, y, out); break;
    default: select_elements<uint64_t>(condition, c_shape, x, y, out); break;
  }
  return Status();
}

// dx += condition ? dz : 0; dy += condition ? 0 : dz (summed where x or y
// were broadcast).
template <bool kVersionOne>
Status backward(OpContext& ctx) {
  const Tensor* condition = ctx.input(0);
  const Tensor* x = ctx.input(1);
  const Tensor* y = ctx.input(2);
  const Tensor* out = ctx.output(0);
  const Tensor* dz = ctx.gradient(out);
  Tensor* dx = ctx.gradient(x);
  Tensor* dy = ctx.gradient(y);
  if (!dz || (!dx && !dy)) return Status();
  const uint8_t* c = condition->data;
  const float* g = dz->f32();
  float* gx = dx ? dx->f32() : nullptr;
  float* gy = dy ? dy->f32() : nullptr;
  for_each_select(out->shape, condition_view(condition, out->shape, kVersionOne), x->shape,
                  y->shape, [&](int64_t o, int64_t ci, int64_t xi, int64_t yi) {
                    if (c[ci]) {
                      if (gx) gx[xi] += g[o];
                    } else if (gy) {
                      gy[yi] += g[o];
                    }
                  });
  return Status();
}

}  // namespace

extern const KernelRegistration kSelectKernel = {
    static_cast<int32_t>(BuiltinOperator::SELECT), nullptr,
    prepare_then_fold<prepare<true>, eval<true>>, eval<true>, GRUWB_BACKWARD(backward<true>)};
extern const KernelRegistration kSelectV2Kernel = {
    static_cast<int32_t>(BuiltinOperator::SELECT_V2), nullptr,
    prepare_then_fold<prepare<false>, eval<false>>, eval<false>, GRUWB_BACKWARD(backward<false>)};

}  // namespace gruwb
