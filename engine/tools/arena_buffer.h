#pragma once
// The host's arena memory: zeroed, aligned for the interpreter, from calloc so that a large plan
// costs only the pages the engine touches (a vector's fill would write every byte of a 1.5 GB
// plan just to read its shapes). Allocation failure is a false return, never an exception.

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "engine/runtime/interpreter.h"

namespace gruwb::tools {

class ArenaBuffer {
 public:
  // Replaces the buffer by `bytes` zeroed bytes; false (and empty) when the memory is not there.
  bool allocate(size_t bytes) {
    storage_.reset();
    size_ = 0;
    if (bytes > SIZE_MAX - Interpreter::kAlignment) return false;
    storage_.reset(static_cast<uint8_t*>(std::calloc(bytes + Interpreter::kAlignment, 1)));
    if (!storage_) return false;
    size_ = bytes;
    return true;
  }
  uint8_t* data() const {
    const uintptr_t raw = reinterpret_cast<uintptr_t>(storage_.get());
    return reinterpret_cast<uint8_t*>((raw + Interpreter::kAlignment - 1) &
                                      ~uintptr_t{Interpreter::kAlignment - 1});
  }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> storage_;
  size_t size_ = 0;
};

}  // namespace gruwb::tools
