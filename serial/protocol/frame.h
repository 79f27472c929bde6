#pragma once
// Frames on the wire (docs/serial-protocol.md):
//   COBS( header | payload | CRC-32 ) 0x00
//   header = version u8, type u8, sequence u16 LE, payload length u16 LE
//   CRC-32 (LE) covers header and payload.
// No heap: encoder and decoder work in fixed buffers sized by kMaxPayload.

#include <cstddef>
#include <cstdint>

#include "serial/protocol/cobs.h"

namespace gruwb::serial {

constexpr uint8_t kProtocolVersion = 2;
constexpr size_t kHeaderBytes = 6;
constexpr size_t kCrcBytes = 4;
// The largest payload either side ever sends; HELLO tells the host the board's
// own limit (which may be smaller).
constexpr size_t kMaxPayload = 1024;
constexpr size_t kMaxRawFrame = kHeaderBytes + kMaxPayload + kCrcBytes;
// Encoded bytes including the 0x00 delimiter.
constexpr size_t kMaxWireFrame = cobs_max_encoded_size(kMaxRawFrame) + 1;

struct Frame {
  uint8_t version = kProtocolVersion;
  uint8_t type = 0;
  uint16_t sequence = 0;
  uint16_t length = 0;
  const uint8_t* payload = nullptr;  // points into the decoder's buffer
};

// Writes the wire bytes of one frame (with trailing 0x00) into `out`.
// Returns the byte count, or 0 when length > kMaxPayload or `out` is short.
size_t encode_frame(uint8_t type, uint16_t sequence, const uint8_t* payload, size_t length,
                    uint8_t* out, size_t out_capacity);

// Counts of what the decoder threw away, for the link statistics and the
// raw console: nothing is dropped silently.
struct DecoderStats {
  uint32_t frames = 0;
  uint32_t crc_errors = 0;
  uint32_t malformed = 0;  // bad COBS, too short, length field wrong
  uint32_t oversized = 0;  // more bytes than kMaxWireFrame before a 0x00
  uint32_t bad_version = 0;
  uint32_t garbage_bytes = 0;  // bytes in rejected frames
};

// Byte-at-a-time decoder: feed every received byte; when push() returns true
// frame() holds a verified frame until the next push().
class FrameDecoder {
 public:
  bool push(uint8_t byte);
  const Frame& frame() const { return frame_; }
  const DecoderStats& stats() const { return stats_; }
  void reset() {
    encoded_bytes_ = 0;
    overflow_ = false;
  }

 private:
  bool finish();

  uint8_t encoded_[kMaxWireFrame];
  uint8_t raw_[kMaxRawFrame];
  size_t encoded_bytes_ = 0;
  bool overflow_ = false;
  Frame frame_;
  DecoderStats stats_;
};

}  // namespace gruwb::serial
