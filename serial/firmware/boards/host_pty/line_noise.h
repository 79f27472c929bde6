#pragma once
// A noisy serial line for the simulated board (`gruwb board-sim --noise`):
// each byte that passes meets a fault with probability `rate`, the kind drawn
// evenly from the enabled ones: dropped, one bit flipped, sent twice, swapped
// with the byte after it, or the line stalls before it. Seeded, so a run can
// be repeated. Host-only.

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gruwb::serial {

enum class LineFault { kDrop, kCorrupt, kDuplicate, kReorder, kStall };
constexpr int kLineFaultKinds = 5;
const char* line_fault_name(LineFault fault);

struct LineNoiseOptions {
  double rate = 0;  // faults per byte, 0..1
  bool enabled[kLineFaultKinds] = {true, true, true, true, true};
  int stall_ms = 50;  // how long a stall holds the line
  uint32_t seed = 1;
};

// "drop,corrupt,stall" -> enabled kinds; false with *error naming the word.
bool parse_line_faults(const std::string& list, LineNoiseOptions* options, std::string* error);

class LineNoise {
 public:
  explicit LineNoise(const LineNoiseOptions& options) : options_(options), rng_(options.seed) {}
  // Appends what the line delivers for `size` bytes to *out; *stall_ms = how
  // long the line stalled on the way (the caller waits it out).
  void pass(const uint8_t* data, size_t size, std::vector<uint8_t>* out, int* stall_ms);
  // Faults injected so far, by LineFault.
  uint64_t count(LineFault fault) const { return counts_[static_cast<int>(fault)]; }
  uint64_t bytes() const { return bytes_; }

 private:
  LineNoiseOptions options_;
  std::mt19937 rng_;
  uint64_t counts_[kLineFaultKinds] = {};
  uint64_t bytes_ = 0;
};

}  // namespace gruwb::serial
