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
  const int64_t elements = shape.elements();
  uint64_t n = 0;
  if (elements < 0 || !tensor_storage_bytes(type, static_cast<uint64_t>(elements), &n))
    return false;
  // On a 32-bit board a size past SIZE_MAX must fail, not truncate.
  if (static_cast<uint64_t>(static_cast<size_t>(n)) != n) return false;
  *bytes = static_cast<size_t>(n);
  return true;
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
