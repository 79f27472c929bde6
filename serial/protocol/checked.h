#pragma once
// Overflow-checked size arithmetic for the board side, where size_t has 32
// bits: a hostile header or upload size must fail a check, not wrap into a
// small number that passes it. Freestanding (compiler builtins, GCC and Clang).

#include <cstddef>

namespace gruwb::serial {

// *out = a + b (or a * b); false on overflow, and then *out means nothing.
inline bool checked_add(size_t a, size_t b, size_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
inline bool checked_mul(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
// a rounded up to a multiple of `align` (a power of two).
inline bool checked_align_up(size_t a, size_t align, size_t* out) {
  if (!checked_add(a, align - 1, out)) return false;
  *out &= ~(align - 1);
  return true;
}

}  // namespace gruwb::serial
