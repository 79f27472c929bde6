#include "engine/runtime/tensor.h"

#include <cstdio>

namespace gruwb {

bool Shape::operator==(const Shape& other) const {
  if (rank != other.rank) return false;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] != other.dims[i]) return false;
  }
  return true;
}

Shape make_shape(Span<int32_t> dims) {
  Shape shape;
  shape.rank = static_cast<int32_t>(dims.size);  // the reader capped rank at kMaxRank
  for (size_t i = 0; i < dims.size; ++i) shape.dims[i] = dims[i];
  return shape;
}

Shape make_shape(std::initializer_list<int32_t> dims) {
  return make_shape(Span<int32_t>{dims.begin(), dims.size()});
}

void format_shape(const Shape& shape, char* out, size_t capacity) {
  size_t used = static_cast<size_t>(snprintf(out, capacity, "["));
  for (int32_t i = 0; i < shape.rank && used < capacity; ++i) {
    used += static_cast<size_t>(
        snprintf(out + used, capacity - used, i ? ",%d" : "%d", static_cast<int>(shape.dims[i])));
  }
  if (used < capacity) snprintf(out + used, capacity - used, "]");
}

bool tensor_bytes(TensorType type, const Shape& shape, size_t* bytes) {
  uint64_t elements = 0;
  uint64_t n = 0;
  if (!shape.valid_size(&elements) || !tensor_storage_bytes(type, elements, &n)) return false;
  return fits_size_t(n, bytes);
}

Status tensor_bytes_or_error(const Tensor& tensor, size_t* bytes) {
  if (tensor_bytes(tensor.type, tensor.shape, bytes)) return Status();
  char text[96];
  format_shape(tensor.shape, text, sizeof text);
  uint64_t unit = 0;
  if (!tensor_storage_bytes(tensor.type, 1, &unit)) {
    return Status::error(StatusCode::kUnsupported, "tensor '%.96s': %s tensors have no fixed size",
                         tensor.name, tensor_type_name(tensor.type));
  }
  if (!tensor.shape.valid_size()) {
    return Status::error(StatusCode::kInvalidModel,
                         "tensor '%.96s': shape %s %s has a negative dimension or more than %llu "
                         "elements",
                         tensor.name, text, tensor_type_name(tensor.type),
                         static_cast<unsigned long long>(kMaxTensorElements));
  }
  return Status::error(StatusCode::kOutOfMemory,
                       "tensor '%.96s': shape %s %s needs more bytes than this target can address",
                       tensor.name, text, tensor_type_name(tensor.type));
}

Status set_dynamic_shape(Tensor* tensor, const Shape& shape) {
  size_t bytes = 0;
  if (!tensor_bytes(tensor->type, shape, &bytes) || bytes > tensor->bytes) {
    char text[48];
    format_shape(shape, text, sizeof text);
    return Status::error(StatusCode::kInvalidArgument,
                         "tensor '%s' would have shape %s (%llu bytes) at run time, more than "
                         "the %llu bytes planned for it",
                         tensor->name, text, static_cast<unsigned long long>(bytes),
                         static_cast<unsigned long long>(tensor->bytes));
  }
  tensor->shape = shape;
  return Status();
}

}  // namespace gruwb
