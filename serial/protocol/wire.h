#pragma once
// Little-endian field writer/reader over a fixed buffer. A write past the end
// or a read past the payload sets `ok = false` instead of touching memory, so
// a truncated or hostile message is rejected by checking one flag.

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gruwb::serial {

class WireWriter {
 public:
  WireWriter(uint8_t* data, size_t capacity) : data_(data), capacity_(capacity) {}
  void u8(uint8_t v) { bytes(&v, 1); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void i16(int16_t v) { le(static_cast<uint16_t>(v), 2); }
  void i32(int32_t v) { le(static_cast<uint32_t>(v), 4); }
  void f32(float v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    le(bits, 4);
  }
  void bytes(const void* src, size_t n) {
    if (!ok || n > capacity_ - size_) {
      ok = false;
      return;
    }
    if (n > 0) memcpy(data_ + size_, src, n);
    size_ += n;
  }
  // A string as u8 length + characters (truncated to `max` characters).
  void text(const char* s, size_t max = 255) {
    size_t n = s ? strlen(s) : 0;
    if (n > max) n = max;
    u8(static_cast<uint8_t>(n));
    bytes(s, n);
  }
  size_t size() const { return size_; }
  bool ok = true;

 private:
  void le(uint32_t v, int n) {
    uint8_t b[4];
    for (int i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    bytes(b, static_cast<size_t>(n));
  }
  uint8_t* data_;
  size_t capacity_;
  size_t size_ = 0;
};

class WireReader {
 public:
  WireReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return le(4); }
  int16_t i16() { return static_cast<int16_t>(le(2)); }
  int32_t i32() { return static_cast<int32_t>(le(4)); }
  float f32() {
    const uint32_t bits = le(4);
    float v;
    memcpy(&v, &bits, 4);
    return v;
  }
  void bytes(void* dst, size_t n) {
    if (!ok || n > size_ - at_) {
      ok = false;
      memset(dst, 0, n);
      return;
    }
    memcpy(dst, data_ + at_, n);
    at_ += n;
  }
  // Reads a u8-length string into `out` (always zero-terminated).
  void text(char* out, size_t capacity) {
    const size_t n = u8();
    if (!ok || n > size_ - at_ || n + 1 > capacity) {
      ok = false;
      out[0] = 0;
      return;
    }
    memcpy(out, data_ + at_, n);
    out[n] = 0;
    at_ += n;
  }
  const uint8_t* rest() const { return data_ + at_; }
  size_t remaining() const { return size_ - at_; }
  bool ok = true;

 private:
  uint32_t le(int n) {
    uint8_t b[4] = {};
    bytes(b, static_cast<size_t>(n));
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint32_t>(b[i]) << (8 * i);
    return v;
  }
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace gruwb::serial
