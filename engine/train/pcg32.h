#pragma once
// PCG32 (O'Neill, pcg-random.org, pcg_basic's pcg32_srandom_r/pcg32_random_r):
// tiny, and the same sequence on every CPU. The one generator of the house: the
// epoch order of every training loop (epoch_loop.h), the board's bench inputs
// and, through tools::Rng, the builder's initial weights.

#include <cstdint>

namespace gruwb {

struct Pcg32 {
  uint64_t state = 0, increment = 0;
  Pcg32(uint64_t seed, uint64_t stream) {
    increment = (stream << 1u) | 1u;
    next();
    state += seed;
    next();
  }
  uint32_t next() {
    const uint64_t old = state;
    state = old * 6364136223846793005ULL + increment;
    const uint32_t xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
    const uint32_t rot = static_cast<uint32_t>(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
  }
  // Unbiased value in [0, bound) (Lemire's rejection of the low range).
  uint32_t below(uint32_t bound) {
    const uint32_t threshold = (0u - bound) % bound;
    for (;;) {
      const uint32_t r = next();
      if (r >= threshold) return r % bound;
    }
  }
};

}  // namespace gruwb
