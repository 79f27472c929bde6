#include "engine/runtime/float_mode.h"

namespace gruwb {

FloatMode flush_denormals_begin() {
  const FloatMode saved = float_mode();
  if ((saved & kFlushDenormalBits) != kFlushDenormalBits)
    set_float_mode(saved | kFlushDenormalBits);
  return saved;
}

void flush_denormals_end(FloatMode saved) {
  if ((saved & kFlushDenormalBits) != kFlushDenormalBits) {
    set_float_mode((float_mode() & ~kFlushDenormalBits) | (saved & kFlushDenormalBits));
  }
}

}  // namespace gruwb
