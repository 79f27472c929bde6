// CAST between FLOAT32, INT32, INT64 and BOOL. The target type is the output
// tensor's type in the file (as in TFLite; CastOptions are optional).
// Float -> integer truncates toward zero and saturates (NaN gives 0), so no
// input makes the conversion undefined behaviour.

#include <cstdint>
#include <type_traits>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

bool castable(TensorType type) {
  return type == TensorType::FLOAT32 || type == TensorType::INT32 || type == TensorType::INT64 ||
         type == TensorType::BOOL;
}

template <typename To>
To from_float(float x) {
  if constexpr (sizeof(To) == 1) {  // bool
    return x != 0.f;
  } else {
    constexpr float kMin = static_cast<float>(sizeof(To) == 4 ? INT32_MIN : INT64_MIN);
    constexpr float kLimit = -kMin;  // 2^31 or 2^63, exactly representable
    if (!(x == x)) return 0;
    if (x <= kMin) return static_cast<To>(sizeof(To) == 4 ? INT32_MIN : INT64_MIN);
    if (x >= kLimit) return static_cast<To>(sizeof(To) == 4 ? INT32_MAX : INT64_MAX);
    return static_cast<To>(x);
  }
}

template <typename From, typename To>
void convert(const From* in, To* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<From, float> && !std::is_same_v<To, float>) {
      out[i] = from_float<To>(in[i]);
    } else if constexpr (std::is_same_v<To, bool>) {
      out[i] = in[i] != 0;
    } else {
      out[i] = static_cast<To>(in[i]);
    }
  }
}

template <typename From>
void convert_from(const Tensor* input, Tensor* output) {
  const From* in = reinterpret_cast<const From*>(input->data);
  const int64_t n = output->elements();
  switch (output->type) {
    case TensorType::FLOAT32: convert(in, output->f32(), n); break;
    case TensorType::INT32: convert(in, output->i32(), n); break;
    case TensorType::INT64: convert(in, reinterpret_cast<int64_t*>(output->data), n); break;
    case TensorType::BOOL: convert(in, reinterpret_cast<bool*>(output->data), n); break;
    default: break;  // prepare admits only the types above
  }
}

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  if (output->dynamic) GRUWB_RETURN_IF_ERROR(set_dynamic_shape(output, input->shape));
  switch (input->type) {
    case TensorType::FLOAT32: convert_from<float>(input, output); break;
    case TensorType::INT32: convert_from<int32_t>(input, output); break;
    case TensorType::INT64: convert_from<int64_t>(input, output); break;
    case TensorType::BOOL: convert_from<bool>(input, output); break;
    default: break;
  }
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  if (!castable(input->type) || !castable(output->type)) {
    return Status::error(StatusCode::kUnsupported,
                         "cast from '%s' %s to '%s' %s (supported: FLOAT32, INT32, INT64, BOOL)",
                         input->name, tensor_type_name(input->type), output->name,
                         tensor_type_name(output->type));
  }
  output->dynamic = input->dynamic;
  set_output_shape(output, input->shape);
  return fold_if_constant(ctx, eval);
}

// FLOAT32 -> FLOAT32 (the converter's CAST after a loop's output
// accumulator) passes the gradient through; casts from integers carry none.
Status backward(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(ctx.input(0));
  if (!dy || !dx || ctx.input(0)->type != TensorType::FLOAT32 ||
      ctx.output(0)->type != TensorType::FLOAT32) {
    return Status();
  }
  add_floats(dx->f32(), dy->f32(), ctx.input(0)->elements());
  return Status();
}

}  // namespace

extern const KernelRegistration kCastKernel = {static_cast<int32_t>(BuiltinOperator::CAST),
                                               nullptr,
                                               prepare,
                                               eval,
                                               GRUWB_BACKWARD(backward),
                                               /*cost=*/nullptr,
                                               /*weight_inputs=*/0,
                                               /*dynamic_inputs=*/true};

}  // namespace gruwb
