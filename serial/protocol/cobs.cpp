#include "serial/protocol/cobs.h"

namespace gruwb::serial {

size_t cobs_encode(const uint8_t* data, size_t size, uint8_t* out, size_t out_capacity) {
  if (out_capacity < cobs_max_encoded_size(size)) return 0;
  size_t code_at = 0;  // where the current block's code byte goes
  size_t o = 1;
  uint8_t code = 1;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != 0) {
      out[o++] = data[i];
      ++code;
    }
    if (data[i] == 0 || code == 0xFF) {
      out[code_at] = code;
      code_at = o++;
      code = 1;
    }
  }
  out[code_at] = code;
  return o;
}

long cobs_decode(const uint8_t* data, size_t size, uint8_t* out, size_t out_capacity) {
  size_t i = 0, o = 0;
  while (i < size) {
    const uint8_t code = data[i++];
    if (code == 0) return -1;
    for (uint8_t k = 1; k < code; ++k) {
      if (i >= size || data[i] == 0 || o >= out_capacity) return -1;
      out[o++] = data[i++];
    }
    // A block shorter than 0xFF stands for "data then a zero", except at the end.
    if (code != 0xFF && i < size) {
      if (o >= out_capacity) return -1;
      out[o++] = 0;
    }
  }
  return static_cast<long>(o);
}

}  // namespace gruwb::serial
