// libFuzzer target for the board's message handler: the firmware's Device (serial/firmware/
// device.h) on a fresh simulated board per input, fed arbitrary frames. An input is a list of
// records {type:u8, sequence:u16, length:u16, payload[length]}, each sent as a well-formed frame
// (right COBS and CRC, so the fuzzer reaches the handlers rather than the checksum); type 0x00
// sends the payload as raw line bytes instead (the frame decoder's side). After each record the
// board runs a few main-loop turns, so a START trains and a RESET reboots. Seeds (a whole upload,
// CONFIGURE, START, DOWNLOAD session) come from tests/fuzz/make_device_seeds.py.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "serial/firmware/device.h"
#include "serial/protocol/frame.h"

namespace {

using gruwb::serial::BoardSupport;
using gruwb::serial::Device;

class FuzzBoard : public BoardSupport {
 public:
  FuzzBoard() {
    ram = pool_;
    ram_bytes = sizeof pool_;
    name = "fuzz";
  }
  size_t uart_read(uint8_t* data, size_t capacity) override {
    const size_t n = line_.size() - read_at_ < capacity ? line_.size() - read_at_ : capacity;
    if (n == 0) return 0;
    memcpy(data, line_.data() + read_at_, n);
    read_at_ += n;
    return n;
  }
  void uart_write(const uint8_t* data, size_t size) override {
    // Replies are not checked here, only that producing them touches no
    // memory it must not; keep a checksum so they are not optimised away.
    for (size_t i = 0; i < size; ++i) sent_sum_ += data[i];
  }
  uint64_t clock_us() override { return now_us_ += 50; }
  uint32_t clock_hz() override { return 0; }
  uint8_t reset_reason() override { return 1; }
  uint32_t entropy() override { return 12345; }
  void reset() override { reset_pending = true; }

  void receive(const uint8_t* data, size_t size) {
    line_.assign(data, data + size);
    read_at_ = 0;
  }
  bool drained() const { return read_at_ == line_.size(); }
  bool reset_pending = false;

 private:
  alignas(16) uint8_t pool_[512 * 1024];
  std::vector<uint8_t> line_;
  size_t read_at_ = 0;
  uint64_t now_us_ = 0;
  uint64_t sent_sum_ = 0;
};

void run_turns(FuzzBoard& board, Device& device, int turns) {
  for (int i = 0; i < turns || !board.drained(); ++i) {
    device.poll();
    if (board.reset_pending) {
      board.reset_pending = false;
      device.boot();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Static storage as on a board (the Device is large); rebuilt in place per input.
  static FuzzBoard* board = new FuzzBoard;
  alignas(Device) static uint8_t storage[sizeof(Device)];
  Device* device = new (storage) Device(*board);
  device->boot();
  uint8_t wire[gruwb::serial::kMaxWireFrame];
  size_t at = 0;
  while (at + 5 <= size) {
    const uint8_t type = data[at];
    const uint16_t sequence = static_cast<uint16_t>(data[at + 1] | data[at + 2] << 8);
    size_t length = data[at + 3] | static_cast<size_t>(data[at + 4]) << 8;
    at += 5;
    if (length > size - at) length = size - at;
    if (type == 0) {
      board->receive(data + at, length);
    } else {
      if (length > gruwb::serial::kMaxPayload) length = gruwb::serial::kMaxPayload;
      const size_t n =
          gruwb::serial::encode_frame(type, sequence, data + at, length, wire, sizeof wire);
      board->receive(wire, n);
    }
    at += length;
    run_turns(*board, *device, 4);
  }
  device->~Device();
  return 0;
}
