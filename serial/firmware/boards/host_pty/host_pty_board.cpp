#include "serial/firmware/boards/host_pty/host_pty_board.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "serial/firmware/device.h"

namespace gruwb::serial {

namespace {

LineNoiseOptions with_seed(LineNoiseOptions options, uint32_t stream) {
  options.seed = options.seed * 2654435761u + stream;
  return options;
}

void sleep_ms(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace

HostPtyBoard::HostPtyBoard(const HostBoardOptions& options)
    : options_(options),
      rx_noise_(with_seed(options.noise, 1)),
      tx_noise_(with_seed(options.noise, 2)) {
  pool_.resize(options_.ram_bytes + 16);
  const uintptr_t base = reinterpret_cast<uintptr_t>(pool_.data());
  ram = pool_.data() + ((16 - (base & 15)) & 15);
  ram_bytes = options_.ram_bytes;
  name = "host-sim";
}

HostPtyBoard::~HostPtyBoard() {
  if (!options_.link.empty()) unlink(options_.link.c_str());
  if (slave_ >= 0) close(slave_);
  if (master_ >= 0) close(master_);
}

bool HostPtyBoard::open(std::string* pty_path, std::string* error) {
  master_ = posix_openpt(O_RDWR | O_NOCTTY);
  if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) {
    *error = std::string("cannot create a pseudo-terminal: ") + strerror(errno);
    return false;
  }
  const char* name = ptsname(master_);
  if (!name) {
    *error = std::string("ptsname: ") + strerror(errno);
    return false;
  }
  *pty_path = name;
  slave_ = ::open(name, O_RDWR | O_NOCTTY);
  if (slave_ < 0) {
    *error = std::string("cannot open ") + name + ": " + strerror(errno);
    return false;
  }
  // Raw both ways: the protocol is binary, so no echo, no line editing, no
  // CR/LF translation, whoever opens the port.
  termios tio{};
  tcgetattr(slave_, &tio);
  cfmakeraw(&tio);
  tcsetattr(slave_, TCSANOW, &tio);
  fcntl(master_, F_SETFL, fcntl(master_, F_GETFL) | O_NONBLOCK);
  if (!options_.link.empty()) {
    unlink(options_.link.c_str());
    if (symlink(name, options_.link.c_str()) != 0) {
      *error = "cannot create the link " + options_.link + ": " + strerror(errno);
      return false;
    }
  }
  return true;
}

uint64_t HostPtyBoard::clock_us() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count());
}

uint32_t HostPtyBoard::entropy() {
  uint32_t value = 0;
  if (getrandom(&value, sizeof value, 0) != sizeof value) value = static_cast<uint32_t>(clock_us());
  return value;
}

// A UART moves one byte per 1/byte_rate s: wait until the line is free.
void HostPtyBoard::throttle(uint64_t* next_free_us, size_t bytes) {
  if (options_.byte_rate == 0 || bytes == 0) return;
  const uint64_t now = clock_us();
  // The line only forgets its schedule after a real idle gap: time lost to an
  // oversleep on a busy host is caught up by not sleeping for the next bytes.
  if (*next_free_us + 20000 < now) *next_free_us = now;
  *next_free_us += bytes * 1000000ull / options_.byte_rate;
  if (*next_free_us > now)
    std::this_thread::sleep_for(std::chrono::microseconds(*next_free_us - now));
}

size_t HostPtyBoard::uart_read(uint8_t* data, size_t capacity) {
  if (rx_queue_.empty()) {
    // At a limited byte rate take small bites, as a UART delivers byte by byte.
    uint8_t bytes[256];
    const size_t want = options_.byte_rate > 0 ? 16 : sizeof bytes;
    const ssize_t n = read(master_, bytes, want);
    if (n <= 0) return 0;
    received_ += static_cast<uint64_t>(n);
    throttle(&next_rx_us_, static_cast<size_t>(n));
    int stall_ms = 0;
    rx_noise_.pass(bytes, static_cast<size_t>(n), &rx_queue_, &stall_ms);
    sleep_ms(stall_ms);
  }
  const size_t n = std::min(capacity, rx_queue_.size());
  std::copy(rx_queue_.begin(), rx_queue_.begin() + static_cast<std::ptrdiff_t>(n), data);
  rx_queue_.erase(rx_queue_.begin(), rx_queue_.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

void HostPtyBoard::uart_write(const uint8_t* clean, size_t clean_size) {
  noisy_.clear();
  int stall_ms = 0;
  tx_noise_.pass(clean, clean_size, &noisy_, &stall_ms);
  sleep_ms(stall_ms);
  const uint8_t* data = noisy_.data();
  const size_t size = noisy_.size();
  throttle(&next_tx_us_, size);
  // Like a UART with nobody listening: when the pty buffer is full for a
  // while (no host reads), the bytes are lost rather than stalling the board.
  size_t sent = 0;
  int stalls = 0;
  while (sent < size && stalls < 200) {
    const ssize_t n = write(master_, data + sent, size - sent);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      stalls = 0;
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return;
    pollfd p{master_, POLLOUT, 0};
    poll(&p, 1, 5);
    ++stalls;
  }
}

void HostPtyBoard::idle() {
  pollfd p{master_, POLLIN, 0};
  poll(&p, 1, 20);
}

bool HostPtyBoard::run(const std::atomic<bool>* stop) {
  // On the heap: the Device holds frame buffers, the model view and the
  // trainer (a board keeps it in static storage).
  auto device = std::make_unique<Device>(*this);
  device->boot();
  while (!stop->load()) {
    if (options_.disconnect_after_bytes > 0 && received_ >= options_.disconnect_after_bytes) {
      // The cable is pulled: the host's next read or write fails.
      close(slave_);
      close(master_);
      slave_ = master_ = -1;
      return true;
    }
    device->poll();
    if (reset_pending_) {
      reset_pending_ = false;
      ++reset_count_;
      // Let the RESET reply leave before the "reboot".
      tcdrain(master_);
      device->boot();
    }
  }
  return false;
}

}  // namespace gruwb::serial
