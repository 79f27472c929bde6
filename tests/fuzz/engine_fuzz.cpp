// libFuzzer targets for the engine past the reader, one per GRUWB_FUZZ_STAGE
// (tests/fuzz/CMakeLists.txt):
//   1 model_invoke_fuzz  load + prepare + invoke (twice: variables and loop state carried over)
//   2 model_train_fuzz   load + training prepare (scope all, Adam) + one training step
//   3 model_fuse_fuzz    the RNN detector and fuser (engine/tools) on the loaded model, and the
//                        float form training makes of a quantized one (engine/tools/dequantize.h)
// Inputs are model files; the custom mutator (tests/fuzz/model_mutator.h) makes structural edits
// that pass the flatbuffers Verifier, half the time, and libFuzzer's byte mutations the other half.
// A prepare or step that fails with a Status is fine; a crash, an ASan/UBSan report, an empty
// error message or an allocation over the arena cap is a finding.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/interpreter.h"
#include "engine/runtime/op_profiler.h"
#include "engine/train/trainer.h"
#include "tests/fuzz/model_mutator.h"
#if GRUWB_FUZZ_STAGE == 3
#include "engine/tools/dequantize.h"
#include "engine/tools/fuser.h"
#endif

namespace {

void check_message(const gruwb::Status& status) {
  if (!status.ok() && status.message()[0] == '\0') __builtin_trap();  // errors must say what
}

// The model bytes, 16-byte aligned as a file loader gives them, exact-size for ASan's redzone.
struct AlignedBytes {
  explicit AlignedBytes(const uint8_t* data, size_t size)
      : size(size),
        bytes(static_cast<uint8_t*>(::operator new (size ? size : 1, std::align_val_t{16}))) {
    if (size) std::memcpy(bytes, data, size);
  }
  ~AlignedBytes() { ::operator delete (bytes, std::align_val_t{16}); }
  size_t size;
  uint8_t* bytes;
};

#if GRUWB_FUZZ_STAGE != 3
// Arenas above this are not tried: the planner reports the size it needs, and a model that needs
// more is rejected like a host over its memory budget would.
constexpr size_t kArenaCap = size_t{64} << 20;

struct Arena {
  explicit Arena(size_t size)
      : size(size),
        bytes(static_cast<uint8_t*>(::operator new (size ? size : 1, std::align_val_t{16}))) {}
  ~Arena() { ::operator delete (bytes, std::align_val_t{16}); }
  size_t size;
  uint8_t* bytes;
};

// Deterministic, finite input values in [-1, 1] (int tensors: small non-negative numbers).
void fill(gruwb::Tensor* tensor) {
  if (!tensor || !tensor->data || tensor->kind == gruwb::TensorKind::kConstant) return;
  for (size_t i = 0; i < tensor->bytes; ++i) {
    tensor->data[i] = static_cast<uint8_t>((i * 37) % 3);
  }
  if (tensor->type == gruwb::TensorType::FLOAT32) {
    for (size_t i = 0; i < tensor->bytes / 4; ++i)
      tensor->f32()[i] = static_cast<float>(i % 7) / 3.5f - 1.f;
  }
}

// Prepare is fuzzed whatever the size; a run is skipped when the inputs pass 256 KB: a mutated
// sequence length (an int8 LSTM over 2 x 327,933 steps) is legitimate work that takes over
// libFuzzer's 30 s under ASan, and finds nothing a short sequence does not.
constexpr size_t kInputBytesCap = 256 * 1024;
template <typename Runner>
bool inputs_too_large(Runner& runner) {
  size_t total = 0;
  for (int i = 0; i < runner.input_count(); ++i) {
    if (runner.input(i)) total += runner.input(i)->bytes;
  }
  return total > kInputBytesCap;
}

// Stops a run once its ops have touched kWorkBytesCap bytes (every op's inputs and outputs, each
// time it runs): a loop of 65,536 trips over a 46,341-float MUL is legitimate work of minutes
// under ASan that finds nothing a short loop does not. The stop goes through the engine's own
// path (OpProfiler::begin_op returning false), which is fuzzed with it.
constexpr uint64_t kWorkBytesCap = uint64_t{512} << 20;
class WorkBudget final : public gruwb::OpProfiler {
 public:
  explicit WorkBudget(gruwb::Interpreter* interpreter) : interpreter_(interpreter) {}
  bool begin_op(int32_t subgraph, int32_t op) override {
    const gruwb::SubgraphState& state = interpreter_->subgraph_state(subgraph);
    const gruwb::OperatorView& view = state.nodes[op].op;
    add(state, view.inputs);
    add(state, view.outputs);
    return touched_ <= kWorkBytesCap;
  }
  void end_op(int32_t, int32_t, const char*) override {}

 private:
  template <typename Indices>
  void add(const gruwb::SubgraphState& state, const Indices& indices) {
    for (int32_t t : indices) {
      if (t >= 0 && t < state.tensor_count) touched_ += state.tensors[t].bytes;
    }
  }
  gruwb::Interpreter* interpreter_;
  uint64_t touched_ = 0;
};

#endif

#if GRUWB_FUZZ_STAGE == 1
void run_inference(const gruwb::Model& model) {
  gruwb::Interpreter interpreter;
  size_t size = 64 * 1024;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Arena arena(size);
    const gruwb::Status status =
        interpreter.prepare(model, arena.bytes, arena.size);  // the default op table
    check_message(status);
    if (status.code() == gruwb::StatusCode::kOutOfMemory) {
      size = interpreter.arena_bytes_needed();
      if (size <= arena.size || size > kArenaCap) return;
      continue;
    }
    if (!status.ok() || inputs_too_large(interpreter)) return;
    for (int i = 0; i < interpreter.input_count(); ++i) fill(interpreter.input(i));
    WorkBudget budget(&interpreter);
    interpreter.set_profiler(&budget);
    for (int run = 0; run < 2; ++run) {
      const gruwb::Status invoked = interpreter.invoke();
      check_message(invoked);
      if (!invoked.ok()) return;
    }
    for (int i = 0; i < interpreter.output_count(); ++i) {
      const gruwb::Tensor* out = interpreter.output(i);
      volatile uint8_t sink = 0;
      for (size_t b = 0; out->data && b < out->bytes; ++b) sink = sink + out->data[b];
    }
    return;
  }
}
#endif

#if GRUWB_FUZZ_STAGE == 2
void run_training_step(const gruwb::Model& model) {
  gruwb::TrainingConfig config;
  config.loss = gruwb::Loss::kMeanSquaredError;  // any float output can take it
  config.scope = gruwb::TrainableScope::kAll;
  config.batch_size = 1;
  size_t size = 256 * 1024;
  for (int attempt = 0; attempt < 3; ++attempt) {
    gruwb::Trainer trainer;
    Arena arena(size);
    const gruwb::Status status = trainer.prepare(model, config, arena.bytes, arena.size);
    check_message(status);
    if (status.code() == gruwb::StatusCode::kOutOfMemory) {
      size = trainer.arena_bytes_needed();
      if (size <= arena.size || size > kArenaCap) return;
      continue;
    }
    if (!status.ok() || inputs_too_large(trainer)) return;
    for (int i = 0; i < trainer.input_count(); ++i) fill(trainer.input(i));
    for (int64_t i = 0; i < trainer.label_count(); ++i) trainer.label()[i] = (i % 2) ? 1.f : 0.f;
    WorkBudget budget(&trainer.interpreter());
    trainer.interpreter().set_profiler(&budget);
    float loss = 0;
    const gruwb::Status step = trainer.train_sample(&loss);
    check_message(step);
    return;
  }
}
#endif

#if GRUWB_FUZZ_STAGE == 3
// The fuser plans and runs the model through the host tools, which hold plans to the memory
// budget: the same 64 MiB cap as the other stages (the 2 GiB default lets a 1 KB model with a
// [4194305, 7, 6, 3] input spend 30 s zeroing and running 1.5 GB).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("GRUWB_MEMORY_BUDGET_MB", "64", 1);
  return 0;
}

void run_fuser(const uint8_t* data, size_t size) {
  gruwb::tools::FuseOptions options;
  options.trials = 1;
  gruwb::tools::FuseResult result;
  std::string error;
  const std::vector<uint8_t> bytes(data, data + size);
  if (!gruwb::tools::fuse_model(bytes, options, &result, &error) && error.empty()) __builtin_trap();
  // The float form of a loadable model loads (or the conversion says why not).
  std::vector<uint8_t> float_form;
  gruwb::tools::DequantizeResult dequantized;
  error.clear();
  if (!gruwb::tools::float_training_model(bytes, &float_form, &dequantized, &error)) {
    if (error.empty()) __builtin_trap();
    return;
  }
  gruwb::Model model;
  if (!gruwb::Model::load(float_form.data(), float_form.size(), &model).ok()) __builtin_trap();
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  AlignedBytes bytes(data, size);
  gruwb::Model model;
  const gruwb::Status status = gruwb::Model::load(bytes.bytes, bytes.size, &model);
  check_message(status);
  if (!status.ok()) return 0;
#if GRUWB_FUZZ_STAGE == 1
  run_inference(model);
#elif GRUWB_FUZZ_STAGE == 2
  run_training_step(model);
#else
  run_fuser(bytes.bytes, bytes.size);
#endif
  return 0;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  if (seed % 2 == 0) {
    gruwb::fuzz::Mutant mutant;
    if (gruwb::fuzz::mutate_model(data, size, seed, &mutant) && mutant.bytes.size() <= max_size) {
      std::memcpy(data, mutant.bytes.data(), mutant.bytes.size());
      return mutant.bytes.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
