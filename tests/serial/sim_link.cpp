#include "tests/serial/sim_link.h"

#include <chrono>
#include <thread>

namespace gruwb::serial::test {

void FaultyPipe::emit(const std::vector<uint8_t>& frame, std::deque<uint8_t>* out) {
  out->insert(out->end(), frame.begin(), frame.end());
}

void FaultyPipe::push(const uint8_t* data, size_t size, std::deque<uint8_t>* out) {
  for (size_t i = 0; i < size; ++i) {
    partial_.push_back(data[i]);
    if (data[i] != 0) continue;
    std::vector<uint8_t> frame;
    frame.swap(partial_);
    if (roll(faults_.garbage)) {
      ++garbage;
      std::uniform_int_distribution<int> byte(1, 255);
      for (int k = 0; k < 7; ++k) out->push_back(static_cast<uint8_t>(byte(rng_)));
      out->push_back(0);
    }
    if (roll(faults_.drop)) {
      ++dropped;
      continue;
    }
    if (roll(faults_.corrupt) && frame.size() > 2) {
      ++corrupted;
      std::uniform_int_distribution<size_t> at(0, frame.size() - 2);
      frame[at(rng_)] ^= 0x10;
    }
    if (!held_.empty()) {
      emit(frame, out);  // the held frame goes after this one: swapped order
      emit(held_, out);
      held_.clear();
      continue;
    }
    if (roll(faults_.reorder)) {
      ++reordered;
      held_ = frame;
      continue;
    }
    emit(frame, out);
    if (roll(faults_.duplicate)) {
      ++duplicated;
      emit(frame, out);
    }
  }
}

void FaultyPipe::flush(std::deque<uint8_t>* out) {
  if (held_.empty()) return;
  emit(held_, out);
  held_.clear();
}

bool SimTransport::write(const uint8_t* data, size_t size, int, std::string* error) {
  if (disconnected) {
    *error = "port gone (simulated unplug)";
    return false;
  }
  written += size;
  if (noise) {
    std::vector<uint8_t> noisy;
    int stall_ms = 0;  // a stall delays nothing in-process: the device runs inside read()
    noise->pass(data, size, &noisy, &stall_ms);
    pipe_.push(noisy.data(), noisy.size(), &board_->to_board);
  } else {
    pipe_.push(data, size, &board_->to_board);
  }
  if (disconnect_after_bytes > 0 && written >= disconnect_after_bytes) disconnected = true;
  return true;
}

long SimTransport::read(uint8_t* data, size_t capacity, int timeout_ms, std::string* error) {
  if (disconnected) {
    *error = "port gone (simulated unplug)";
    return -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int turn = 0;; ++turn) {
    if (board_->to_host.empty()) {
      device_->poll();
      if (board_->reset_pending) {
        board_->reset_pending = false;
        device_->boot();
      }
    }
    if (!board_->to_host.empty()) break;
    // A reordered frame waits for the next one; release it when the line goes quiet.
    if (turn == 4) {
      pipe_.flush(&board_->to_board);
      board_->to_host_pipe.flush(&board_->to_host);
    }
    if (turn > 8 && std::chrono::steady_clock::now() >= deadline) return 0;
    if (turn > 8) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  size_t n = 0;
  while (n < capacity && !board_->to_host.empty()) {
    data[n++] = board_->to_host.front();
    board_->to_host.pop_front();
  }
  return static_cast<long>(n);
}

}  // namespace gruwb::serial::test
