#include "serial/protocol/frame.h"

#include <cstring>

#include "serial/protocol/crc32.h"

namespace gruwb::serial {

size_t encode_frame(uint8_t type, uint16_t sequence, const uint8_t* payload, size_t length,
                    uint8_t* out, size_t out_capacity) {
  if (length > kMaxPayload) return 0;
  uint8_t raw[kMaxRawFrame];
  raw[0] = kProtocolVersion;
  raw[1] = type;
  raw[2] = static_cast<uint8_t>(sequence);
  raw[3] = static_cast<uint8_t>(sequence >> 8);
  raw[4] = static_cast<uint8_t>(length);
  raw[5] = static_cast<uint8_t>(length >> 8);
  if (length > 0) memcpy(raw + kHeaderBytes, payload, length);
  const uint32_t crc = crc32(raw, kHeaderBytes + length);
  for (int i = 0; i < 4; ++i) raw[kHeaderBytes + length + i] = static_cast<uint8_t>(crc >> (8 * i));
  const size_t raw_bytes = kHeaderBytes + length + kCrcBytes;
  if (out_capacity < cobs_max_encoded_size(raw_bytes) + 1) return 0;
  const size_t encoded = cobs_encode(raw, raw_bytes, out, out_capacity - 1);
  if (encoded == 0) return 0;
  out[encoded] = 0;
  return encoded + 1;
}

bool FrameDecoder::push(uint8_t byte) {
  if (byte != 0) {
    if (encoded_bytes_ < sizeof encoded_) {
      encoded_[encoded_bytes_++] = byte;
    } else {
      if (!overflow_) ++stats_.oversized;
      overflow_ = true;
      ++stats_.garbage_bytes;
    }
    return false;
  }
  const bool ok = finish();
  encoded_bytes_ = 0;
  overflow_ = false;
  return ok;
}

bool FrameDecoder::finish() {
  if (overflow_) {
    stats_.garbage_bytes += static_cast<uint32_t>(encoded_bytes_);
    return false;
  }
  if (encoded_bytes_ == 0) return false;  // back-to-back delimiters: idle line
  const long raw_bytes = cobs_decode(encoded_, encoded_bytes_, raw_, sizeof raw_);
  const auto reject = [&](uint32_t* counter) {
    ++*counter;
    stats_.garbage_bytes += static_cast<uint32_t>(encoded_bytes_);
    return false;
  };
  if (raw_bytes < static_cast<long>(kHeaderBytes + kCrcBytes)) return reject(&stats_.malformed);
  const size_t length = raw_[4] | static_cast<size_t>(raw_[5]) << 8;
  if (kHeaderBytes + length + kCrcBytes != static_cast<size_t>(raw_bytes)) {
    return reject(&stats_.malformed);
  }
  uint32_t crc = 0;
  for (int i = 0; i < 4; ++i)
    crc |= static_cast<uint32_t>(raw_[kHeaderBytes + length + i]) << (8 * i);
  if (crc != crc32(raw_, kHeaderBytes + length)) return reject(&stats_.crc_errors);
  if (raw_[0] != kProtocolVersion) return reject(&stats_.bad_version);
  frame_.version = raw_[0];
  frame_.type = raw_[1];
  frame_.sequence = static_cast<uint16_t>(raw_[2] | raw_[3] << 8);
  frame_.length = static_cast<uint16_t>(length);
  frame_.payload = raw_ + kHeaderBytes;
  ++stats_.frames;
  return true;
}

}  // namespace gruwb::serial
