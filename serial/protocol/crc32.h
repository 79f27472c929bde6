#pragma once
// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, init and final XOR
// 0xFFFFFFFF): the trailer of every frame. Table-free, so the firmware spends
// no flash on a 1 KB table; frames are short and the link is the bottleneck.

#include <cstddef>
#include <cstdint>

namespace gruwb::serial {

// crc32(data) == crc32_update(crc32_update(0, a), b) for data = a + b.
uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size);
inline uint32_t crc32(const uint8_t* data, size_t size) { return crc32_update(0, data, size); }

}  // namespace gruwb::serial
