#pragma once
// Keras-style weight initialisation with our own seeded random numbers, so a
// model built (or trained) from seed S has the same weights on every machine
// and compiler: no std::*_distribution (their algorithms are unspecified), no
// libm calls whose last bit differs between platforms in the uniform path.
//
// Every matrix is returned in the FULLY_CONNECTED layout [out, in], row major,
// which is the Keras kernel [in, out] transposed: that is how .tflite files
// store dense and recurrent weights.

#include <cstdint>
#include <vector>

#include "engine/train/pcg32.h"

namespace gruwb::tools {

// The engine's PCG32 (engine/train/pcg32.h) with the draws initialisation
// needs: fully specified, so the stream for a seed is fixed forever.
class Rng {
 public:
  explicit Rng(uint64_t seed, uint64_t stream = 0x5851f42d4c957f2dULL) : pcg_(seed, stream) {}

  uint32_t next_u32() { return pcg_.next(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  // Standard normal by Box-Muller (both values of a pair are used).
  double normal();

 private:
  Pcg32 pcg_;
  bool has_spare_ = false;
  double spare_ = 0;
};

// Glorot (Xavier) uniform: U(-l, l), l = sqrt(6 / (fan_in + fan_out)).
// Keras' default kernel_initializer for Dense and the RNN cells.
std::vector<float> glorot_uniform(Rng& rng, int fan_out, int fan_in);

// Keras Orthogonal(gain=1) for the Keras shape [fan_in, fan_out], returned as
// [fan_out, fan_in]: QR of a Gaussian matrix (modified Gram-Schmidt in double,
// which yields R with a positive diagonal, i.e. Keras' q * sign(diag(r))).
// The Keras default recurrent_initializer: for a GRU's [H, 3H] recurrent
// kernel the rows of the Keras matrix (our columns) are orthonormal.
std::vector<float> orthogonal(Rng& rng, int fan_out, int fan_in);

// U(-limit, limit), n values.
std::vector<float> uniform(Rng& rng, int n, float limit);

}  // namespace gruwb::tools
