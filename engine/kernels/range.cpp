// RANGE(start, limit, delta): [start, start + delta, ...) up to limit, INT32,
// INT64 or FLOAT32 scalars in, a vector of the same type out. Its length
// decides the output shape, so the three inputs must be known at prepare
// (constants, or folded, e.g. RANGE(0, RANK(x), 1)); an integer result is
// then folded into a constant itself.

#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

template <typename T>
T scalar(const Tensor* tensor) {
  return reinterpret_cast<const T*>(tensor->data)[0];
}

// The element count as TFLite computes it: ceil(|limit - start| / |delta|).
template <typename T>
Status range_size(const Tensor* start_tensor, const Tensor* limit_tensor,
                  const Tensor* delta_tensor, int64_t* size) {
  const T start = scalar<T>(start_tensor);
  const T limit = scalar<T>(limit_tensor);
  const T delta = scalar<T>(delta_tensor);
  if (delta == 0 || (start > limit && delta > 0) || (start < limit && delta < 0)) {
    return Status::error(StatusCode::kInvalidModel,
                         "RANGE from '%s' to '%s' by '%s' (%g, %g, %g) never reaches its limit",
                         start_tensor->name, limit_tensor->name, delta_tensor->name,
                         static_cast<double>(start), static_cast<double>(limit),
                         static_cast<double>(delta));
  }
  double n = 0;
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::llabs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::llabs(static_cast<int64_t>(delta));
    n = static_cast<double>((span + step - 1) / step);
  } else {
    n = std::ceil(std::fabs((limit - start) / delta));
  }
  if (!(n <= static_cast<double>(kMaxDimension))) {
    return Status::error(StatusCode::kInvalidModel, "RANGE of %g elements is too long", n);
  }
  *size = static_cast<int64_t>(n);
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 3, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* start = ctx.input(0);
  const Tensor* limit = ctx.input(1);
  const Tensor* delta = ctx.input(2);
  const TensorType type = start->type;
  if (type != TensorType::INT32 && type != TensorType::INT64 && type != TensorType::FLOAT32) {
    return Status::error(StatusCode::kUnsupported,
                         "start '%s' is %s, expected INT32, INT64 or FLOAT32", start->name,
                         tensor_type_name(type));
  }
  GRUWB_RETURN_IF_ERROR(expect_type(limit, type, "limit"));
  GRUWB_RETURN_IF_ERROR(expect_type(delta, type, "delta"));
  const Tensor* inputs[3] = {start, limit, delta};
  const char* roles[3] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    if (inputs[i]->elements() != 1) {
      return Status::error(StatusCode::kInvalidModel, "%s '%s' has shape %s, expected a scalar",
                           roles[i], inputs[i]->name, ShapeText(inputs[i]->shape).text);
    }
    if (!is_constant(inputs[i])) {
      return Status::error(StatusCode::kUnsupported,
                           "%s '%s' is computed at run time; the output shape depends on it, so "
                           "it must be a constant",
                           roles[i], inputs[i]->name);
    }
  }
  int64_t size = 0;
  if (type == TensorType::INT32) {
    GRUWB_RETURN_IF_ERROR(range_size<int32_t>(start, limit, delta, &size));
  } else if (type == TensorType::INT64) {
    GRUWB_RETURN_IF_ERROR(range_size<int64_t>(start, limit, delta, &size));
  } else {
    GRUWB_RETURN_IF_ERROR(range_size<float>(start, limit, delta, &size));
  }
  Tensor* output = ctx.output(0);
  output->type = type;
  set_output_shape(output, make_shape({static_cast<int32_t>(size)}));
  return Status();
}

template <typename T>
void fill_range(OpContext& ctx) {
  const T start = scalar<T>(ctx.input(0));
  const T delta = scalar<T>(ctx.input(2));
  Tensor* output = ctx.output(0);
  T* out = reinterpret_cast<T*>(output->data);
  const int64_t n = output->elements();
  // Accumulated, as TFLite does (for floats the last bits differ from start + i * delta).
  T value = start;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = value;
    value = static_cast<T>(value + delta);
  }
}

Status eval(OpContext& ctx) {
  switch (ctx.output(0)->type) {
    case TensorType::INT32: fill_range<int32_t>(ctx); break;
    case TensorType::INT64: fill_range<int64_t>(ctx); break;
    default: fill_range<float>(ctx); break;
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kRangeKernel = {static_cast<int32_t>(BuiltinOperator::RANGE),
                                                nullptr, prepare_then_fold<prepare, eval>, eval};

}  // namespace gruwb
