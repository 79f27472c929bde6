#pragma once
// Helpers shared by the data-movement kernels (GATHER, STRIDED_SLICE, SLICE,
// CONCATENATION, SPLIT, PACK, TRANSPOSE, SHAPE, FILL, CAST): element sizes,
// index tensors, axes, a strided copy, and prepare-time constant folding.

#include <cstddef>
#include <cstdint>

#include "engine/runtime/kernel.h"

namespace gruwb {

// Bytes of one element; fails for sub-byte and variable-size types, which a
// byte-wise copy cannot move.
Status element_size(const Tensor* tensor, const char* role, size_t* bytes);
// The same for eval, after element_size() accepted the type in prepare.
size_t element_bytes_of(TensorType type);

// An INT32 or INT64 index tensor (begin, end, perm, dims, size_splits, ...).
Status expect_index_type(const Tensor* tensor, const char* role);
inline int64_t index_at(const Tensor* tensor, int64_t i) {
  return tensor->type == TensorType::INT64 ? reinterpret_cast<const int64_t*>(tensor->data)[i]
                                           : static_cast<int64_t>(tensor->i32()[i]);
}

// Known at prepare time: a constant from the file, or folded (see below).
inline bool is_constant(const Tensor* tensor) {
  return tensor && tensor->kind == TensorKind::kConstant;
}

// An index tensor whose values decide an output shape must be known at
// prepare time, because the arena is planned once.
Status expect_constant_index(const Tensor* tensor, const char* role);

// `axis` in [-rank, rank) -> [0, rank); fails naming the tensor and its shape.
Status normalize_axis(int64_t axis, int32_t rank, const Tensor* tensor, int32_t* out);

// "[2,3]" into a caller buffer, for messages.
struct ShapeText {
  explicit ShapeText(const Shape& shape) { format_shape(shape, text, sizeof text); }
  char text[48];
};

// Product of dims [from, to).
inline int64_t dims_product(const Shape& shape, int32_t from, int32_t to) {
  int64_t n = 1;
  for (int32_t i = from; i < to; ++i) n *= shape.dims[i];
  return n;
}

// Copies a strided view of `in` into dense `out`: for every output index
// (i0, ..., i{rank-1}) < count, the input element at
// base + sum(i_d * step_d) (in elements). rank 0 copies one element.
void strided_copy(const uint8_t* in, uint8_t* out, size_t element_bytes, int64_t base,
                  const int32_t* count, const int64_t* step, int32_t rank);

// Training: the adjoint of strided_copy for float32. For every output index,
// dx[base + sum(i_d * step_d)] += dy[o]; repeated positions (none in the
// ops using it) would sum.
void strided_add_back(const float* dy, float* dx, int64_t base, const int32_t* count,
                      const int64_t* step, int32_t rank);

// to[i] += from[i]
inline void add_floats(float* to, const float* from, int64_t n) {
  for (int64_t i = 0; i < n; ++i) to[i] += from[i];
}

// Prepare-time constant folding. Small integer tensors computed only from
// values known at prepare time (constants, or SHAPE of a tensor whose shape
// is static) are computed once into persistent memory and turned into
// constants. This gives FILL and RESHAPE constant dims in the SHAPE ->
// STRIDED_SLICE -> PACK -> FILL chain the TensorFlow converter emits for zero
// initial states. The kernel's eval still runs on every invoke and rewrites
// the same values.
constexpr int64_t kMaxFoldedElements = 64;

// Turns `output` into a constant backed by persistent arena memory.
Status make_output_constant(OpContext& ctx, Tensor* output);
// Folds when every present input is constant and every output is a small
// INT32/INT64/BOOL tensor; otherwise leaves the op to run at invoke time.
// Call at the end of prepare, after the output shapes are set.
Status fold_if_constant(OpContext& ctx, Status (*eval)(OpContext&));

// The prepare step every foldable kernel registers: its own prepare, then
// fold_if_constant with its eval.
template <Status (*Prepare)(OpContext&), Status (*Eval)(OpContext&)>
Status prepare_then_fold(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(Prepare(ctx));
  return fold_if_constant(ctx, Eval);
}

}  // namespace gruwb
