#pragma once
// Runtime tensors: shape, type and where the data lives. They sit in the arena
// (the interpreter places one per model tensor during prepare).

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "engine/model/model.h"

namespace gruwb {

struct Shape {
  int32_t rank = 0;
  int32_t dims[kMaxRank] = {};

  // Product of the dimensions (1 for a scalar); 0 for a shape that is not valid_size() (then
  // tensor_bytes() refuses it and prepare fails naming the tensor, so no loop or copy sized by it
  // runs).
  int64_t elements() const {
    uint64_t n = 0;
    return valid_size(&n) ? static_cast<int64_t>(n) : 0;
  }
  // False when a dimension is negative or the product exceeds kMaxTensorElements
  // (engine/model/checked_size.h): a shape computed at prepare cannot wrap.
  bool valid_size(uint64_t* elements = nullptr) const {
    uint64_t n = 0;
    if (!checked_element_count(dims, static_cast<size_t>(rank < 0 ? 0 : rank), kMaxTensorElements,
                               &n)) {
      return false;
    }
    if (elements) *elements = n;
    return true;
  }
  int32_t dim(int32_t i) const { return dims[i < 0 ? i + rank : i]; }
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
};

Shape make_shape(Span<int32_t> dims);
Shape make_shape(std::initializer_list<int32_t> dims);
// "[1,60,3]"
void format_shape(const Shape& shape, char* out, size_t capacity);

enum class TensorKind : uint8_t {
  kActivation,  // planned into the arena, reused once dead
  kConstant,    // points into the model's buffer
  kVariable,    // persistent state (LSTM/RNN states): survives invokes
  kOmitted,     // not used by anything
};

struct Tensor {
  TensorType type = TensorType::FLOAT32;
  TensorKind kind = TensorKind::kActivation;
  // Bounded-dynamic: the shape changes from one eval (or loop iteration) to
  // the next, e.g. the SLICE/CONCATENATION "set item" idiom of converter-written
  // loops. prepare sets `shape` to the upper bound, which the arena is planned
  // for (`bytes`); the producing kernel's eval sets the actual shape, never
  // larger than the bound (set_dynamic_shape). Only kernels registered with
  // `dynamic_inputs` may read such a tensor.
  bool dynamic = false;
  Shape shape;
  uint8_t* data = nullptr;  // constants: read-only model bytes
  size_t bytes = 0;
  const fb::QuantizationParameters* quantization = nullptr;
  const char* name = "";

  float* f32() { return reinterpret_cast<float*>(data); }
  const float* f32() const { return reinterpret_cast<const float*>(data); }
  int32_t* i32() { return reinterpret_cast<int32_t*>(data); }
  const int32_t* i32() const { return reinterpret_cast<const int32_t*>(data); }
  int64_t elements() const { return shape.elements(); }
};

// Bytes for `shape` x `type`, rounded up to whole bytes; false for types
// without a fixed size and for shapes that are not valid_size() or whose bytes do not fit size_t.
bool tensor_bytes(TensorType type, const Shape& shape, size_t* bytes);

// tensor_bytes() of a tensor as a Status that names it, its shape and type when it fails:
// "tensor 'x': shape [268435456,268435456,256] float32 has more than 2147483648 elements".
Status tensor_bytes_or_error(const Tensor& tensor, size_t* bytes);

// Eval of a kernel whose output is `dynamic`: the actual shape, checked
// against the planned bytes (a loop whose slices outgrow their bound fails
// with the tensor named instead of writing past it).
Status set_dynamic_shape(Tensor* tensor, const Shape& shape);

}  // namespace gruwb
