#pragma once
// SHA-256 (FIPS 180-4), incremental: the board hashes an upload chunk by chunk
// as it arrives, so a resumed upload needs no second pass over RAM.

#include <cstddef>
#include <cstdint>

namespace gruwb::serial {

struct Sha256 {
  uint32_t state[8];
  uint64_t total_bytes;
  uint8_t block[64];
  uint32_t block_bytes;

  Sha256() { reset(); }
  void reset();
  void update(const uint8_t* data, size_t size);
  void finish(uint8_t digest[32]);  // the context must be reset() before reuse
};

void sha256(const uint8_t* data, size_t size, uint8_t digest[32]);

// 64 lowercase hex characters plus the terminating zero.
void sha256_hex(const uint8_t digest[32], char out[65]);

}  // namespace gruwb::serial
