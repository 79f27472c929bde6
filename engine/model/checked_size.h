#pragma once
// Overflow-checked size arithmetic: element counts, byte sizes and offsets. One set of rules for
// the reader, the planner, the kernels' prepare, the host's file readers and the firmware; correct
// where size_t has 32 bits (Cortex-M), so a count that fits a host's 64-bit size_t but not the
// board's is refused instead of wrapping. Header-only, no heap.

#include <cstddef>
#include <cstdint>

namespace gruwb {

// The most elements one tensor may have (a file's declared shapes and shapes computed at prepare
// alike): 2^31, so element counts times any element size fit 64 bits with room to spare.
constexpr uint64_t kMaxTensorElements = uint64_t{1} << 31;

// a * b and a + b into *out; false (and *out untouched) when the exact result does not fit T.
// The operands may have other integer types (the builtins compute the exact result first).
template <typename T, typename A, typename B>
[[nodiscard]] inline bool checked_mul(A a, B b, T* out) {
  T result;
  if (__builtin_mul_overflow(a, b, &result)) return false;
  *out = result;
  return true;
}
template <typename T, typename A, typename B>
[[nodiscard]] inline bool checked_add(A a, B b, T* out) {
  T result;
  if (__builtin_add_overflow(a, b, &result)) return false;
  *out = result;
  return true;
}

// a + b, or SIZE_MAX when it does not fit: for totals that are compared against a limit next.
inline size_t saturating_add(size_t a, size_t b) {
  size_t sum;
  return __builtin_add_overflow(a, b, &sum) ? SIZE_MAX : sum;
}

// Rounds n up to a multiple of `alignment` (a power of two); false when that does not fit size_t.
[[nodiscard]] inline bool checked_align_up(size_t n, size_t alignment, size_t* out) {
  size_t padded;
  if (__builtin_add_overflow(n, alignment - 1, &padded)) return false;
  *out = padded & ~(alignment - 1);
  return true;
}

// Product of `count` dimensions (1 for none); false when a dimension is negative or the product
// exceeds `limit`.
template <typename Dim>
[[nodiscard]] inline bool checked_element_count(const Dim* dims, size_t count, uint64_t limit,
                                                uint64_t* out) {
  uint64_t n = 1;
  for (size_t i = 0; i < count; ++i) {
    if (dims[i] < 0) return false;
    if (!checked_mul(n, static_cast<uint64_t>(dims[i]), &n) || n > limit) return false;
  }
  *out = n;
  return true;
}

// A 64-bit byte count as this target's size_t; false when it does not fit (32-bit targets).
[[nodiscard]] inline bool fits_size_t(uint64_t bytes, size_t* out) {
  if (bytes > static_cast<uint64_t>(SIZE_MAX)) return false;
  *out = static_cast<size_t>(bytes);
  return true;
}

}  // namespace gruwb
