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
  // and with a larger arena than a board's. No effect on other hosts. What
  // runs inference for a user on the host asks for it (gruwb run, bench,
  // evaluation); what reports a board's memory does not.
  void set_packed_weights(bool packed);
  bool prepare(const Model& model, std::string* error);
  // This runner's arena (with packed copies when asked for).
  size_t arena_bytes() const { return interpreter_.arena_bytes_needed(); }
  const ArenaUsage& arena_usage() const { return interpreter_.arena_usage(); }
  // After prepare: the arena a board plans for the model (the default op
  // table, no packed copies); arena_usage() when the weights are not packed.
  bool board_arena_usage(ArenaUsage* usage, std::string* error) const;
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
  bool packed_ = false;
  ArenaBuffer storage_;
  Interpreter interpreter_;
};

// NumPy dtype for a tensor type ("" if none).
std::string npy_dtype_for(TensorType type);

}  // namespace gruwb::tools
