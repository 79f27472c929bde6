#pragma once
// What the firmware needs from a board: a byte pipe (the UART), a clock, the
// reset reason, some entropy for the session id, a way to reboot and one RAM
// pool for model + dataset + training arena. A new board is one small file
// implementing this (boards/mps2_an386/, boards/host_pty/).

#include <cstddef>
#include <cstdint>

namespace gruwb::serial {

class BoardSupport {
 public:
  // Returns the bytes received so far (up to `capacity`) without waiting.
  virtual size_t uart_read(uint8_t* data, size_t capacity) = 0;
  // Sends all `size` bytes (may block while the line drains).
  virtual void uart_write(const uint8_t* data, size_t size) = 0;
  virtual uint64_t clock_us() = 0;
  virtual uint32_t clock_hz() = 0;
  // What BENCH and the training steps are timed in: the processor's cycles
  // (clock_hz() a second). A board without a cycle clock (clock_hz() 0: the
  // host simulation) counts microseconds.
  virtual uint64_t cycles() { return clock_us(); }
  virtual uint8_t reset_reason() = 0;
  // Anything that differs between boots (a timer at the first byte, a noise
  // source); mixed into the session id.
  virtual uint32_t entropy() = 0;
  // Reboots the board; on a host simulation it restarts the firmware state.
  virtual void reset() = 0;
  // Nothing to do: wait for input (WFI, poll with a timeout) to save power.
  virtual void idle() {}

  const char* name = "board";
  uint8_t flags = 0;       // added to Capabilities::flags (kCyclesFromDwt)
  uint8_t* ram = nullptr;  // 16-byte aligned
  size_t ram_bytes = 0;

 protected:
  // No virtual destructor: boards are never deleted through this type, and a
  // deleting destructor would pull operator delete into the firmware.
  ~BoardSupport() = default;
};

}  // namespace gruwb::serial
