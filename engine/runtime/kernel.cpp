#include "engine/runtime/kernel.h"

namespace gruwb {

Status expect_type(const Tensor* tensor, TensorType type, const char* role) {
  if (!tensor) return Status::error(StatusCode::kInvalidModel, "%s is missing", role);
  if (tensor->type != type) {
    return Status::error(StatusCode::kUnsupported, "%s '%s' is %s, expected %s", role,
                         tensor->name, tensor_type_name(tensor->type), tensor_type_name(type));
  }
  return Status();
}

Status expect_float(const Tensor* tensor, const char* role) {
  return expect_type(tensor, TensorType::FLOAT32, role);
}

Status expect_inputs(const OpContext& ctx, int min_count, int max_count) {
  int n = ctx.input_count();
  if (n < min_count || n > max_count) {
    if (min_count == max_count) {
      return Status::error(StatusCode::kInvalidModel, "has %d inputs, expected %d", n, min_count);
    }
    return Status::error(StatusCode::kInvalidModel, "has %d inputs, expected %d..%d", n,
                         min_count, max_count);
  }
  for (int i = 0; i < min_count; ++i) {
    if (!ctx.input(i)) {
      return Status::error(StatusCode::kInvalidModel, "required input %d is omitted", i);
    }
  }
  return Status();
}

Status expect_outputs(const OpContext& ctx, int count) {
  if (ctx.output_count() != count) {
    return Status::error(StatusCode::kInvalidModel, "has %d outputs, expected %d",
                         ctx.output_count(), count);
  }
  for (int i = 0; i < count; ++i) {
    if (!ctx.output(i)) {
      return Status::error(StatusCode::kInvalidModel, "output %d is omitted", i);
    }
  }
  return Status();
}

}  // namespace gruwb
