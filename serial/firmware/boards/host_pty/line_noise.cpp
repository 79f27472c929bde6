#include "serial/firmware/boards/host_pty/line_noise.h"

#include <sstream>

namespace gruwb::serial {

const char* line_fault_name(LineFault fault) {
  switch (fault) {
    case LineFault::kDrop: return "drop";
    case LineFault::kCorrupt: return "corrupt";
    case LineFault::kDuplicate: return "duplicate";
    case LineFault::kReorder: return "reorder";
    case LineFault::kStall: return "stall";
  }
  return "?";
}

bool parse_line_faults(const std::string& list, LineNoiseOptions* options, std::string* error) {
  bool enabled[kLineFaultKinds] = {};
  std::istringstream words(list);
  std::string word;
  bool any = false;
  while (std::getline(words, word, ',')) {
    int kind = 0;
    while (kind < kLineFaultKinds && word != line_fault_name(static_cast<LineFault>(kind))) ++kind;
    if (kind == kLineFaultKinds) {
      *error = "unknown line fault '" + word + "' (drop, corrupt, duplicate, reorder, stall)";
      return false;
    }
    enabled[kind] = any = true;
  }
  if (!any) {
    *error = "no line fault named (drop, corrupt, duplicate, reorder, stall)";
    return false;
  }
  for (int k = 0; k < kLineFaultKinds; ++k) options->enabled[k] = enabled[k];
  return true;
}

void LineNoise::pass(const uint8_t* data, size_t size, std::vector<uint8_t>* out, int* stall_ms) {
  *stall_ms = 0;
  bytes_ += size;
  int kinds[kLineFaultKinds];
  int kind_count = 0;
  for (int k = 0; k < kLineFaultKinds; ++k) {
    if (options_.enabled[k]) kinds[kind_count++] = k;
  }
  if (options_.rate <= 0 || kind_count == 0) {
    out->insert(out->end(), data, data + size);
    return;
  }
  std::uniform_real_distribution<double> chance(0, 1);
  std::uniform_int_distribution<int> pick(0, kind_count - 1);
  std::uniform_int_distribution<int> bit(0, 7);
  for (size_t i = 0; i < size; ++i) {
    if (chance(rng_) >= options_.rate) {
      out->push_back(data[i]);
      continue;
    }
    const auto fault = static_cast<LineFault>(kinds[pick(rng_)]);
    // A swap needs a byte after this one in the same write: otherwise it
    // would hold a frame's last byte until the next frame.
    if (fault == LineFault::kReorder && i + 1 == size) {
      out->push_back(data[i]);
      continue;
    }
    ++counts_[static_cast<int>(fault)];
    switch (fault) {
      case LineFault::kDrop: break;
      case LineFault::kCorrupt:
        out->push_back(static_cast<uint8_t>(data[i] ^ (1u << bit(rng_))));
        break;
      case LineFault::kDuplicate:
        out->push_back(data[i]);
        out->push_back(data[i]);
        break;
      case LineFault::kReorder:
        out->push_back(data[i + 1]);
        out->push_back(data[i]);
        ++i;
        break;
      case LineFault::kStall:
        *stall_ms += options_.stall_ms;
        out->push_back(data[i]);
        break;
    }
  }
}

}  // namespace gruwb::serial
