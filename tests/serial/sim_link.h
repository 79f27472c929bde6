#pragma once
// An in-process board for protocol tests: the firmware's Device on a byte
// queue, reached through a Transport that injects faults frame by frame
// (drop, corrupt, duplicate, reorder, garbage) in either direction,
// deterministically from a seed, and/or byte by byte as `gruwb board-sim
// --noise` does (LineNoise). The device runs inside read(), so tests need
// no threads and no ptys.

#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "serial/firmware/boards/host_pty/line_noise.h"
#include "serial/firmware/device.h"
#include "serial/link/transport.h"

namespace gruwb::serial::test {

struct Faults {
  double drop = 0, corrupt = 0, duplicate = 0, reorder = 0, garbage = 0;
};

// Applies Faults to a byte stream at frame granularity (0x00 delimiters).
class FaultyPipe {
 public:
  FaultyPipe(Faults faults, uint32_t seed) : faults_(faults), rng_(seed) {}
  void push(const uint8_t* data, size_t size, std::deque<uint8_t>* out);
  void flush(std::deque<uint8_t>* out);  // releases a frame held for reordering
  Faults faults_;
  int dropped = 0, corrupted = 0, duplicated = 0, reordered = 0, garbage = 0;

 private:
  bool roll(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  void emit(const std::vector<uint8_t>& frame, std::deque<uint8_t>* out);
  std::mt19937 rng_;
  std::vector<uint8_t> partial_;
  std::vector<uint8_t> held_;
};

class LoopbackBoard : public BoardSupport {
 public:
  explicit LoopbackBoard(size_t ram = 512 * 1024) : pool_(ram + 16) {
    this->ram = pool_.data() + ((16 - (reinterpret_cast<uintptr_t>(pool_.data()) & 15)) & 15);
    ram_bytes = ram;
    name = "loopback";
  }
  size_t uart_read(uint8_t* data, size_t capacity) override {
    size_t n = 0;
    while (n < capacity && !to_board.empty()) {
      data[n++] = to_board.front();
      to_board.pop_front();
    }
    return n;
  }
  void uart_write(const uint8_t* data, size_t size) override {
    if (!to_host_noise) return to_host_pipe.push(data, size, &to_host);
    std::vector<uint8_t> noisy;
    int stall_ms = 0;
    to_host_noise->pass(data, size, &noisy, &stall_ms);
    to_host_pipe.push(noisy.data(), noisy.size(), &to_host);
  }
  uint64_t clock_us() override { return now_us += 100; }
  uint32_t clock_hz() override { return 1000000; }
  uint8_t reset_reason() override { return 0; }
  uint32_t entropy() override { return entropy_counter += 0x1234567; }
  void reset() override { reset_pending = true; }

  std::deque<uint8_t> to_board, to_host;
  FaultyPipe to_host_pipe{Faults{}, 1};
  std::unique_ptr<LineNoise> to_host_noise;  // per byte, before the frame faults
  bool reset_pending = false;
  uint64_t now_us = 0;
  uint32_t entropy_counter = 7;

 private:
  std::vector<uint8_t> pool_;
};

// The host end. Reads pump the device; `disconnected` makes every call fail
// as an unplugged port would.
class SimTransport : public Transport {
 public:
  SimTransport(LoopbackBoard* board, Device* device, Faults to_board_faults, uint32_t seed)
      : board_(board), device_(device), pipe_(to_board_faults, seed) {}
  bool write(const uint8_t* data, size_t size, int, std::string* error) override;
  long read(uint8_t* data, size_t capacity, int timeout_ms, std::string* error) override;
  std::string description() const override { return "in-process loopback"; }

  bool disconnected = false;
  // Disconnect after this many bytes written (0 = never).
  uint64_t disconnect_after_bytes = 0;
  uint64_t written = 0;
  std::unique_ptr<LineNoise> noise;  // per byte on the way to the board
  FaultyPipe& pipe() { return pipe_; }

 private:
  LoopbackBoard* board_;
  Device* device_;
  FaultyPipe pipe_;
};

}  // namespace gruwb::serial::test
