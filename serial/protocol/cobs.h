#pragma once
// Consistent Overhead Byte Stuffing (Cheshire & Baker 1999): removes every
// 0x00 from a frame so 0x00 can delimit frames on the wire. A receiver that
// joins mid-stream or sees garbage resynchronises at the next 0x00.

#include <cstddef>
#include <cstdint>

namespace gruwb::serial {

// Worst-case encoded size of `size` raw bytes (without the 0x00 delimiter).
constexpr size_t cobs_max_encoded_size(size_t size) { return size + size / 254 + 1; }

// Encodes `size` bytes into `out` (capacity `out_capacity`). Returns the
// encoded length, or 0 when `out` is too small.
size_t cobs_encode(const uint8_t* data, size_t size, uint8_t* out, size_t out_capacity);

// Decodes one frame (no delimiter). Returns the decoded length, or -1 when
// the input is not valid COBS (a 0x00 inside, a code running past the end)
// or does not fit `out`.
long cobs_decode(const uint8_t* data, size_t size, uint8_t* out, size_t out_capacity);

}  // namespace gruwb::serial
