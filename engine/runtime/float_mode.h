#pragma once
// Flush denormals to zero while the engine computes. Back-propagated
// gradients of long sequences decay into denormal floats, and Intel cores take
// a microcode assist of ~100 cycles per denormal operand or result: training
// a GRU at T=200 ran 10x slower. The engine's entry points, Interpreter::
// invoke and the training step (Trainer::accumulate: forward, loss and
// backward; Trainer::apply_update), run inside with_flushed_denormals, so the
// caller's own floating-point mode is left as it was
// (docs/training-design.md, "Denormals"):
//   x86: MXCSR FTZ (bit 15, results) and DAZ (bit 6, operands);
//   AArch64: FPCR FZ (bit 24); 32-bit Arm with an FPU (Cortex-M4F/M7/M33):
//   FPSCR FZ (bit 24); elsewhere (no FPU) nothing.
// The control register is per thread: each thread that runs the engine gets
// its own pair.

#include <cstdint>

#include "engine/model/status.h"

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
#include <xmmintrin.h>
#define GRUWB_FLOAT_MODE_X86 1
#elif defined(__aarch64__)
#define GRUWB_FLOAT_MODE_AARCH64 1
#elif defined(__arm__) && defined(__ARM_FP)
#define GRUWB_FLOAT_MODE_ARM_VFP 1
#endif

namespace gruwb {

#if defined(GRUWB_FLOAT_MODE_AARCH64)
using FloatMode = uint64_t;
#else
using FloatMode = uint32_t;
#endif

// The control register's flush bits (0 where there are none).
#if defined(GRUWB_FLOAT_MODE_X86)
constexpr FloatMode kFlushDenormalBits = (1u << 15) | (1u << 6);
#elif defined(GRUWB_FLOAT_MODE_AARCH64) || defined(GRUWB_FLOAT_MODE_ARM_VFP)
constexpr FloatMode kFlushDenormalBits = 1u << 24;
#else
constexpr FloatMode kFlushDenormalBits = 0;
#endif

// The current control register (tests compare it before and after).
inline FloatMode float_mode() {
#if defined(GRUWB_FLOAT_MODE_X86)
  return _mm_getcsr();
#elif defined(GRUWB_FLOAT_MODE_AARCH64)
  uint64_t v;
  __asm__ volatile("mrs %0, fpcr" : "=r"(v));
  return v;
#elif defined(GRUWB_FLOAT_MODE_ARM_VFP)
  uint32_t v;
  __asm__ volatile("vmrs %0, fpscr" : "=r"(v));
  return v;
#else
  return 0;
#endif
}

inline void set_float_mode(FloatMode mode) {
#if defined(GRUWB_FLOAT_MODE_X86)
  _mm_setcsr(mode);
#elif defined(GRUWB_FLOAT_MODE_AARCH64)
  __asm__ volatile("msr fpcr, %0" : : "r"(mode) : "memory");
#elif defined(GRUWB_FLOAT_MODE_ARM_VFP)
  __asm__ volatile("vmsr fpscr, %0" : : "r"(mode) : "memory");
#else
  (void)mode;
#endif
}

// Sets flush-to-zero; returns the mode to hand to flush_denormals_end.
// Out of line (float_mode.cpp): one copy on a board whose flash is tight.
FloatMode flush_denormals_begin();

// Restores the flush bits flush_denormals_begin returned (nothing to do when
// the caller had flushing on already, as in nested entry points); exception
// flags raised meanwhile stay raised.
void flush_denormals_end(FloatMode saved);

// run() between the two. One named Status returned on the only path, so the
// compiler builds it in the caller's slot (Status is 257 bytes: a copy of it
// costs a memcpy call, flash on the board).
template <typename Run>
Status with_flushed_denormals(Run run) {
#if !defined(GRUWB_FLOAT_MODE_X86) && !defined(GRUWB_FLOAT_MODE_AARCH64) && \
    !defined(GRUWB_FLOAT_MODE_ARM_VFP)
  return run();  // no FPU: nothing to set
#endif
  const FloatMode mode = flush_denormals_begin();
  Status status = run();
  flush_denormals_end(mode);
  return status;
}

}  // namespace gruwb
