#pragma once
// The host-simulated board: the firmware's Device on a Linux pseudo-terminal.
// `gruwb board-sim` runs it; the host connects to the /dev/pts/N it prints
// exactly as it would to a USB serial port. Host-only (POSIX, std library).

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "serial/firmware/board_support.h"
#include "serial/firmware/boards/host_pty/line_noise.h"

namespace gruwb::serial {

struct HostBoardOptions {
  size_t ram_bytes = 512 * 1024;  // the RAM pool of the mimicked MCU
  // Emulated UART byte rate in each direction (e.g. 11520 for 115200 8N1);
  // 0 = as fast as the pty goes.
  uint32_t byte_rate = 0;
  std::string link;  // also create this symlink to the pty (stable name)
  // Faults on the line, both directions (each its own seeded stream).
  LineNoiseOptions noise;
  // Unplug: close the pty and stop after receiving this many bytes (0 = never).
  uint64_t disconnect_after_bytes = 0;
};

class HostPtyBoard : public BoardSupport {
 public:
  explicit HostPtyBoard(const HostBoardOptions& options);
  ~HostPtyBoard();
  // Opens the pty; *pty_path is its /dev/pts/N.
  bool open(std::string* pty_path, std::string* error);
  // Runs the firmware main loop until *stop becomes true, or until the
  // simulated unplug (disconnect_after_bytes); true when it was unplugged.
  bool run(const std::atomic<bool>* stop);
  // Faults injected so far, both directions.
  uint64_t faults(LineFault fault) const { return rx_noise_.count(fault) + tx_noise_.count(fault); }

  size_t uart_read(uint8_t* data, size_t capacity) override;
  void uart_write(const uint8_t* data, size_t size) override;
  uint64_t clock_us() override;
  uint32_t clock_hz() override { return 0; }  // a host has no fixed clock
  uint8_t reset_reason() override { return reset_count_ > 0 ? 1 : 0; }
  uint32_t entropy() override;
  void reset() override { reset_pending_ = true; }
  void idle() override;

 private:
  void throttle(uint64_t* next_free_us, size_t bytes);

  HostBoardOptions options_;
  int master_ = -1;
  int slave_ = -1;  // held open so the master never sees a hang-up
  std::vector<uint8_t> pool_;
  bool reset_pending_ = false;
  int reset_count_ = 0;
  uint64_t next_rx_us_ = 0, next_tx_us_ = 0;
  LineNoise rx_noise_, tx_noise_;
  std::vector<uint8_t> rx_queue_;  // received bytes after the noise, not yet read
  std::vector<uint8_t> noisy_;     // scratch for what the line delivers
  uint64_t received_ = 0;
};

}  // namespace gruwb::serial
