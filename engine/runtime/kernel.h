#pragma once
// The contract between the interpreter and one op kernel. Each kernel file
// (engine/kernels/<op>.cpp) provides a prepare step (check types and shapes
// once, set output shapes, ask for memory) and an eval step (compute; no
// allocation, no checks prepare already did), registered in one table.

#include <cstddef>
#include <cstdint>

#include "engine/model/model.h"
#include "engine/runtime/subgraph_runner.h"
#include "engine/runtime/tensor.h"

namespace gruwb {

class Interpreter;
struct OpNode;
struct OpResolver;

constexpr int kMaxScratchPerOp = 4;

class OpContext {
 public:
  OpContext(Interpreter* interpreter, int subgraph, int op_index, Tensor* tensors, OpNode* node);

  const OperatorView& op() const { return op_; }
  int subgraph_index() const { return subgraph_; }
  int input_count() const { return static_cast<int>(op_.inputs.size); }
  int output_count() const { return static_cast<int>(op_.outputs.size); }
  // nullptr when the input is omitted (-1) or beyond the op's input list.
  Tensor* input(int i) const;
  Tensor* output(int i) const;
  // The op's `intermediates` (quantization carriers of TFLite's integer LSTM);
  // nullptr when absent or omitted.
  Tensor* intermediate(int i) const;
  int intermediate_count() const { return static_cast<int>(op_.intermediates.size); }
  Interpreter& interpreter() const { return *interpreter_; }
  // Control-flow kernels: the subgraphs an op calls (engine/runtime/subgraph_runner.h).
  SubgraphRunner subgraphs() const { return SubgraphRunner(interpreter_); }

  // prepare only: memory that lives as long as the interpreter (e.g. state
  // a kernel precomputes once). Zero-filled.
  Status allocate_persistent(size_t bytes, void** out);
  // prepare only: a scratch buffer alive during this op's eval only, planned
  // into the arena like an activation. Returns its slot in *slot.
  Status request_scratch(size_t bytes, int* slot);
  // eval only.
  void* scratch(int slot) const;
  void* user_data() const;
  void set_user_data(void* data);

  // ---- Training (engine/train; docs/training-design.md) ----
  // True when the interpreter was prepared for training and this op runs a
  // backward step (it lies between a trainable weight and the loss).
  bool training() const;
  // The gradient buffer of `tensor` (same shape, float32), or nullptr when the
  // tensor needs none (frozen constants, tensors off the gradient path, ops
  // inside called subgraphs). Backward kernels ACCUMULATE (+=) into every
  // gradient they write: the runtime zeroes activation gradients before the
  // first backward op that writes them, and weight gradients sum over a batch.
  Tensor* gradient(const Tensor* tensor) const;
  // prepare only: a buffer written by the training forward pass and read by
  // this op's backward (per-step gates and states of a recurrent op). Does
  // nothing (tape() stays nullptr) when the op runs no backward.
  Status request_tape(size_t bytes);
  // eval and backward: the tape, or nullptr when none was planned.
  void* tape() const;
  // prepare only: temporary memory alive during this op's backward only.
  // Does nothing when the op runs no backward.
  Status request_backward_scratch(size_t bytes, int* slot);
  void* backward_scratch(int slot) const;
  // Backward of a recurrent op: true when an observer wants per-time-step
  // state gradients, so a kernel computes the norms only then.
  bool wants_state_gradients() const;
  // Reports ||dL/dh|| at time step `step` (0 = first step) to the observer;
  // a null check and nothing else when no observer is set.
  void report_state_gradient(int32_t step, float norm) const;

  // An error prefixed with nothing: the interpreter adds subgraph/op context.
  template <typename... Args>
  static Status fail(const char* format, Args... args) {
    return Status::error(StatusCode::kInvalidModel, format, args...);
  }

 private:
  Interpreter* interpreter_;
  int subgraph_;
  int op_index_;
  const OperatorView& op_;
  Tensor* tensors_;
  OpNode* node_;
};

// Multiply-accumulates of one run of an op, from the file's static shapes
// (host tools: the analyzer, docs/inspect-json.md). `formula` says how it was
// counted, each "{}" standing for the next of `terms`, e.g.
// "batch {} x out {} x in {}"; the engine never formats it.
struct OpCost {
  static constexpr int kMaxTerms = 8;
  uint64_t macs = 0;
  const char* formula = "";
  int64_t terms[kMaxTerms] = {};
  int term_count = 0;
};

// What a cost function sees: the op in its subgraph, and the op table, for
// control-flow ops that add up the ops of the subgraphs they call.
struct OpCostQuery {
  const SubgraphView& subgraph;
  const OperatorView& op;
  const OpResolver& ops;
  // A prepared interpreter of the model, or nullptr: its folded constants
  // (a trip count computed from SHAPE) count where the file has none.
  const Interpreter* prepared = nullptr;
};

// Training in this build: CMake's GRUWB_TRAINING (default ON). With it OFF
// every registration's backward is nullptr (each kernel file writes
// GRUWB_BACKWARD(backward)), so an inference-only firmware links no backward
// code (--gc-sections); preparing for training then fails naming the first op
// on the gradient path.
#ifndef GRUWB_TRAINING
#define GRUWB_TRAINING 1
#endif
#if GRUWB_TRAINING
#define GRUWB_BACKWARD(...) (__VA_ARGS__)  // variadic: template arguments hold commas
#else
#define GRUWB_BACKWARD(...) nullptr
#endif

// Integer kernels in this build, per kernel: GRUWB_INTEGER_FORM(FULLY_CONNECTED)
// is 1 when CMake's GRUWB_INTEGER is ON (the host default) or GRUWB_FW_OPS lists
// the op as FULLY_CONNECTED:int8 (engine/op_table.cmake writes the generated
// header). A kernel without its integer form links only its float form and
// registers integer_activations = false, so full-integer models are refused by
// op name (docs/integer-kernels.md, docs/firmware.md).
#if __has_include("engine/kernels/integer_forms.h")
#include "engine/kernels/integer_forms.h"
#define GRUWB_INTEGER_FORM(name) GRUWB_INTEGER_##name
#else  // a build outside CMake: every integer form
#define GRUWB_INTEGER_FORM(name) 1
#endif

struct KernelRegistration {
  int32_t op_code;
  const char* custom_code;  // CUSTOM ops only, else nullptr
  Status (*prepare)(OpContext& ctx);
  Status (*eval)(OpContext& ctx);
  // Training: reads the op's inputs/outputs (and its tape), the gradients of
  // its outputs, and adds to the gradients of its inputs (ctx.gradient()).
  // After eval so that the 4-field registrations of inference-only ops still compile.
  Status (*backward)(OpContext& ctx) = nullptr;
  // MACs of one run (engine/kernels/op_cost.h); nullptr: the op costs 0 MACs
  // (elementwise, data movement). New fields go at the end, with a default.
  OpCost (*cost)(const OpCostQuery& query) = nullptr;
  // Bit i set: input i is one of the op's weights (the rest: data, states),
  // trainable when the file holds it as a constant float32 tensor. The
  // trainer's scope, the analyzer and the GUI's weight tick boxes read this.
  uint32_t weight_inputs = 0;
  // Reads inputs whose shape changes at run time (Tensor::dynamic) and sets
  // its outputs' shapes in eval; the interpreter refuses dynamic inputs to
  // every other kernel at prepare, naming the op and the tensor.
  bool dynamic_inputs = false;
  // Runs int8/uint8/int16 activations (full-integer models) with TFLite's
  // integer semantics, or moves their bytes unchanged (data-movement ops).
  // The interpreter refuses, naming the op, an op that reads or writes such
  // an activation without this.
  bool integer_activations = false;
};

// weight_inputs masks: input_bits(1, 2) = inputs 1 and 2;
// input_range(1, 4) = inputs 1 to 4.
template <typename... Inputs>
constexpr uint32_t input_bits(Inputs... inputs) {
  return ((uint32_t{1} << inputs) | ... | 0u);  // not "slots": a Qt keyword macro
}
constexpr uint32_t input_range(int first, int last) {
  return first > last ? 0u : (uint32_t{1} << first) | input_range(first + 1, last);
}
// Whether input `input` of an op run by `kernel` is a weight (false without a kernel).
inline bool is_weight_input(const KernelRegistration* kernel, int input) {
  return kernel && input >= 0 && input < 32 && ((kernel->weight_inputs >> input) & 1u) != 0;
}

// In this build's default op table (engine/runtime/op_resolver.h): every
// kernel on the host, the GRUWB_FW_OPS choice on a board. nullptr when the
// table has no kernel for the op.
const KernelRegistration* find_kernel(int32_t op_code, const char* custom_code);

// Shared prepare checks, to keep kernels short.
Status expect_type(const Tensor* tensor, TensorType type, const char* role);
Status expect_float(const Tensor* tensor, const char* role);
Status expect_inputs(const OpContext& ctx, int min_count, int max_count);
Status expect_outputs(const OpContext& ctx, int count);
// Inferred shapes win over the file's (as in TFLite): the file may hold [] or
// placeholder 1s for dynamic dimensions.
inline void set_output_shape(Tensor* output, const Shape& shape) { output->shape = shape; }

}  // namespace gruwb
