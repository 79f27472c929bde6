#pragma once
// Host-side convenience around the engine's Interpreter: sizes the arena
// exactly (prepare, read arena_bytes_needed(), prepare again), moves NumPy
// arrays in and out with shape/type checks that name the input.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/runtime/interpreter.h"
#include "engine/tools/arena_buffer.h"
#include "engine/tools/npy.h"

namespace gruwb::tools {

class ModelRunner {
 public:
  ModelRunner() = default;
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  // `model` must outlive the runner.
  // Before prepare: inference with the recurrent kernels' weights packed for
  // AVX-512 (packed_inference_ops(), engine/kernels/recurrent_util.h), faster
  // and with a larger arena than a board's. No effect on other hosts.
  void set_packed_weights(bool packed);
  bool prepare(const Model& model, std::string* error);
  size_t arena_bytes() const { return interpreter_.arena_bytes_needed(); }
  const ArenaUsage& arena_usage() const { return interpreter_.arena_usage(); }
  Interpreter& interpreter() { return interpreter_; }

  int input_count() const { return interpreter_.input_count(); }
  int output_count() const { return interpreter_.output_count(); }
  // Fails naming the input and both shapes/types on a mismatch.
  bool set_input(int index, const NpyArray& array, std::string* error);
  bool invoke(std::string* error);
  NpyArray output(int index);

 private:
  bool prepare_in(size_t bytes, std::string* error);

  const Model* model_ = nullptr;
  ArenaBuffer storage_;
  Interpreter interpreter_;
};

// NumPy dtype for a tensor type ("" if none).
std::string npy_dtype_for(TensorType type);

}  // namespace gruwb::tools
