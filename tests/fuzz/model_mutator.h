#pragma once
// A flatbuffer-aware model mutator: unpacks a valid .tflite/.circle model with the schema's object
// API, applies a few structural edits of the kinds a hostile or broken file carries, and packs it
// again, so the mutant passes the flatbuffers Verifier and reaches the validator, prepare, invoke,
// training and the fuser (byte flips mostly stop at the Verifier). Used by the engine fuzzers as
// libFuzzer's custom mutator and by the `model_mutate` tool behind tests/fuzz/mutant_census.py.
// Host test code: standard library and the object API's heap are fine here.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gruwb::fuzz {

// The kinds of edit, one per hazard listed in issue #17.
enum class Mutation : uint8_t {
  kHugeDimension,         // a dimension up to 2^31 (or negative)
  kShapeLiesAboutBuffer,  // constant shape, buffer size or buffer index changed independently
  kIndexOutOfRange,       // op/subgraph tensor index, opcode, buffer, called subgraph past the end
  kMinusOneIndex,         // -1 where an index is required (op outputs, graph inputs/outputs, ...)
  kSelfReference,         // a control-flow op calling its own subgraph (or subgraph 0)
  kSparsity,              // sparsity parameters on a tensor
  kGarbageOptions,        // option fields set to extreme values, or another op's options table
  kRewire,        // duplicated outputs, ops writing constants/graph inputs, unproduced outputs
  kTypeChange,    // a tensor's element type changed (including unnamed values)
  kQuantization,  // scales/zero points missing, zero, NaN, mismatched; bad quantized axis
  kConstantData,  // int32 constants (shapes, axes, indices) set to extreme values
  kCount
};
const char* mutation_name(Mutation mutation);

struct Mutant {
  std::vector<uint8_t> bytes;
  std::string description;  // "kHugeDimension: subgraph 0 tensor 3 dim 1 = 2147483647; ..."
};

// Applies 1..3 edits chosen by `seed` to the model in `data` (which must pass the flatbuffers
// Verifier). `only`: restrict to one kind (kCount: any). False when the input is no verifiable
// model or no edit applied.
bool mutate_model(const uint8_t* data, size_t size, uint64_t seed, Mutant* out,
                  Mutation only = Mutation::kCount);

}  // namespace gruwb::fuzz
