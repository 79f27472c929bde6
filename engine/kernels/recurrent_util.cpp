#include "engine/kernels/recurrent_util.h"

#include <cstdio>

namespace gruwb {

DenseWeights dense_weights(const Tensor* tensor) {
  DenseWeights w;
  if (!tensor) return w;
  w.rows = tensor->shape.rank > 0 ? tensor->shape.dims[0] : 0;
  w.cols = tensor->shape.rank > 1 ? tensor->shape.dims[1] : 1;
  if (tensor->type == TensorType::INT8) {
    w.i8 = reinterpret_cast<const int8_t*>(tensor->data);
    w.scales = tensor->quantization->scale()->data();
    w.per_row_scale = tensor->quantization->scale()->size() > 1;
  } else {
    w.f32 = tensor->f32();
  }
  return w;
}

Status expect_input_count(const OpContext& ctx, int min_count, int max_count) {
  int n = ctx.input_count();
  if (n < min_count || n > max_count) {
    return Status::error(StatusCode::kInvalidModel, "has %d inputs, expected %d..%d", n, min_count,
                         max_count);
  }
  if (!ctx.input(0)) return Status::error(StatusCode::kInvalidModel, "input 0 is omitted");
  return Status();
}

Status shape_error(const Tensor* tensor, const char* role, const char* expected) {
  char shape[48];
  format_shape(tensor->shape, shape, sizeof shape);
  return Status::error(StatusCode::kInvalidModel, "%s '%s' has shape %s, expected %s", role,
                       tensor->name, shape, expected);
}

Status check_dense_weights(const Tensor* tensor, int32_t rows, int32_t cols, const char* role) {
  if (!tensor) return Status::error(StatusCode::kInvalidModel, "%s is missing", role);
  if (tensor->shape.rank != 2 || tensor->shape.dims[0] != rows || tensor->shape.dims[1] != cols) {
    char expected[32];
    snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(rows), static_cast<int>(cols));
    return shape_error(tensor, role, expected);
  }
  if (tensor->type == TensorType::FLOAT32) return Status();
  if (tensor->type != TensorType::INT8) {
    return Status::error(StatusCode::kUnsupported,
                         "%s '%s' is %s; recurrent weights must be float32 or int8", role,
                         tensor->name, tensor_type_name(tensor->type));
  }
  const fb::QuantizationParameters* q = tensor->quantization;
  if (!q || !q->scale() ||
      (q->scale()->size() != 1 && q->scale()->size() != static_cast<uint32_t>(rows))) {
    return Status::error(StatusCode::kInvalidModel, "int8 %s '%s' needs 1 or %d scales", role,
                         tensor->name, static_cast<int>(rows));
  }
  if (q->zero_point()) {
    for (int64_t zp : *q->zero_point()) {
      if (zp != 0) {
        return Status::error(StatusCode::kUnsupported,
                             "int8 %s '%s' has zero point %lld; hybrid recurrent weights must "
                             "be symmetric (zero point 0)",
                             role, tensor->name, static_cast<long long>(zp));
      }
    }
  }
  return Status();
}

Status check_float_vector(const Tensor* tensor, int32_t size, const char* role) {
  if (!tensor) return Status::error(StatusCode::kInvalidModel, "%s is missing", role);
  GRUWB_RETURN_IF_ERROR(expect_float(tensor, role));
  if (tensor->shape.rank != 1 || tensor->shape.dims[0] != size) {
    char expected[24];
    snprintf(expected, sizeof expected, "[%d]", static_cast<int>(size));
    return shape_error(tensor, role, expected);
  }
  return Status();
}

Status sequence_layout(const Tensor* input, bool time_major, SequenceLayout* out) {
  if (input->shape.rank != 3) {
    return shape_error(input, "input",
                       time_major ? "[time,batch,features]" : "[batch,time,features]");
  }
  out->time_major = time_major;
  out->batch = input->shape.dims[time_major ? 1 : 0];
  out->time = input->shape.dims[time_major ? 0 : 1];
  return Status();
}

Shape sequence_shape(const SequenceLayout& layout, int32_t features) {
  return layout.time_major ? make_shape({layout.time, layout.batch, features})
                           : make_shape({layout.batch, layout.time, features});
}

void vector_sigmoid(float* x, int32_t n) {
  for (int32_t i = 0; i < n; ++i) x[i] = fast_sigmoid(x[i]);
}

void vector_tanh(float* x, int32_t n) {
  for (int32_t i = 0; i < n; ++i) x[i] = fast_tanh(x[i]);
}

void vector_hard_sigmoid(float* x, int32_t n) {
  for (int32_t i = 0; i < n; ++i) x[i] = hard_sigmoid(x[i]);
}

void vector_activation(Activation activation, float* x, int32_t n) {
  if (activation == Activation::TANH) {
    vector_tanh(x, n);
  } else {
    apply_activation(activation, x, n);
  }
}

}  // namespace gruwb
