#pragma once
// Runs a loaded Model in one caller-provided arena.
//
//   Interpreter interpreter;
//   Status s = interpreter.prepare(model, arena, sizeof arena);
//   // s fails with kOutOfMemory when the arena is too small; then
//   // interpreter.arena_bytes_needed() tells the exact size to provide.
//   memcpy(interpreter.input(0)->data, x, interpreter.input(0)->bytes);
//   interpreter.invoke();
//
// prepare() checks every op is supported, infers shapes, plans tensor
// lifetimes across all subgraphs (a callee's tensors live inside its call
// site's time span, so WHILE bodies share memory with dead caller tensors) and
// places everything in the arena. invoke() allocates nothing.

#include <cstddef>
#include <cstdint>

#include "engine/model/model.h"
#include "engine/runtime/kernel.h"
#include "engine/runtime/memory_planner.h"
#include "engine/runtime/op_resolver.h"
#include "engine/runtime/tensor.h"

namespace gruwb {

struct OpNode {
  OperatorView op;  // cached: building views per invoke costs time in WHILE bodies
  const KernelRegistration* kernel = nullptr;
  void* user_data = nullptr;
  int32_t scratch_buffer[kMaxScratchPerOp] = {-1, -1, -1, -1};  // planned buffer ids
  uint32_t start_time = 0;  // global timeline (see arena planning)
  uint32_t end_time = 0;
};

struct SubgraphState {
  Tensor* tensors = nullptr;
  OpNode* nodes = nullptr;
  int tensor_count = 0;
  int op_count = 0;
  int32_t first_buffer = 0;  // planned buffer id of tensor 0
  int32_t first_tensor = 0;  // global index of tensor 0 (all subgraphs' tensors in a row)
  int32_t first_op = 0;      // global index of op 0
  // Training: the on-path WHILE (global op index) whose backward runs this
  // body, or -1.
  int32_t owner_op = -1;
  uint32_t start_time = 0;
  uint32_t end_time = 0;
  uint16_t call_sites = 0;
  bool prepared = false;
  bool preparing = false;
};

// A TFLite resource variable (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE),
// shared across subgraphs by (container, shared_name).
struct ResourceVariable {
  const char* container = "";
  const char* shared_name = "";
  TensorType type = TensorType::FLOAT32;
  Shape shape;
  uint8_t* data = nullptr;  // persistent; allocated by the first ASSIGN_VARIABLE's prepare
  size_t bytes = 0;
};

class Interpreter;

// The training steps the runtime calls but does not own: engine/train
// provides them (training_steps(), engine/train/training_plan.h), so the
// runtime links no training code.
struct TrainingSteps {
  // prepare(), before the kernels': trainable weights, the gradient path.
  Status (*init_training)(Interpreter& interpreter);
  // prepare(), before placement: training lifetimes and gradient buffers.
  void (*plan_lifetimes)(Interpreter& interpreter, uint32_t end_of_time);
  Status (*backward)(Interpreter& interpreter);
  Status (*backward_subgraph)(Interpreter& interpreter, int index);
  void (*zero_activation_gradients)(Interpreter& interpreter, int index);
  void (*zero_weight_gradients)(Interpreter& interpreter);
};

// Training mode (engine/train): what the trainer asks the planner for.
struct TrainingOptions {
  // The training plan and backprop (engine/train: training_steps());
  // prepare() fails without them.
  const TrainingSteps* steps = nullptr;
  // One flag per tensor of every subgraph, by global tensor index (subgraph
  // 0's tensors first, then subgraph 1's, ...): 1 = a constant float weight
  // to train (WHILE bodies' weights included). Trainable weights are copied
  // into persistent arena memory (the model stays read-only: flash on a
  // board) and their tensors point there.
  const uint8_t* trainable = nullptr;
  // Float arrays of optimizer state per trainable weight (SGD 0, momentum 1,
  // Adam 2), persistent and zero-filled.
  int optimizer_slots = 0;
  // Also plan gradients for the float model inputs (gradient checks, saliency).
  bool input_gradients = false;
  // An op of subgraph 0 whose backward the caller does itself while
  // computing the loss (SOFTMAX fused with cross entropy): backward() skips
  // it, and its inputs' gradients are planned from the loss on.
  int loss_op = -1;
  // > 0: model inputs of subgraph 0 whose first dimension is 1 get this
  // batch dimension instead (shapes propagate through the kernels'
  // prepare), and so do its state variables [1, ...] (LSTM, RNN: every row
  // starts from the file's value); the trainer's one-pass batches.
  int32_t input_batch = 0;
};

// Per tensor (global index over all subgraphs), training mode only.
struct TensorTraining {
  Tensor gradient;                       // data == nullptr: no gradient
  float* state[2] = {nullptr, nullptr};  // optimizer state (trainable weights)
  int32_t grad_buffer = -1;              // planned buffer id (activation gradients)
  int32_t first_backward_op = -1;        // zeroed right before this op's backward
  int32_t producer = -1;                 // the on-path op writing it (activations)
  bool trainable = false;
  bool requires_grad = false;
  bool needed = false;  // read by an op whose backward runs (or a model output)
  bool taped = false;   // WHILE body value kept per iteration on the loop's tape
};

// Per op (global index over all subgraphs), training mode only.
struct OpTraining {
  int32_t tape_buffer = -1;
  int32_t backward_scratch[2] = {-1, -1};
  uint32_t backward_time = 0;
  bool on_path = false;  // runs a backward step
};

struct TrainingUsage {
  size_t weight_bytes = 0;               // persistent copies of trainable weights
  size_t weight_gradient_bytes = 0;      // persistent per-weight accumulators
  size_t optimizer_bytes = 0;            // persistent optimizer state
  size_t activation_gradient_bytes = 0;  // sum of planned activation gradients
  size_t tape_bytes = 0;                 // sum of planned tapes
};

struct ArenaUsage {
  size_t metadata_bytes = 0;    // tensor/op tables
  size_t persistent_bytes = 0;  // variables + kernel state
  size_t activation_bytes = 0;  // planned, shared activations + scratch
  // The largest planned tensor, named by a host whose memory budget the plan exceeds.
  const char* largest_tensor = "";
  int largest_tensor_subgraph = -1;
  int largest_tensor_index = -1;
  size_t largest_tensor_bytes = 0;
  size_t total() const {
    return saturating_add(saturating_add(metadata_bytes, persistent_bytes), activation_bytes);
  }
};

class StateGradientObserver;  // engine/runtime/state_gradient_observer.h
class OpProfiler;             // engine/runtime/op_profiler.h

class Interpreter {
 public:
  static constexpr size_t kAlignment = 16;

  // `training` == nullptr: inference (no training tables, same figures as
  // before training existed).
  Status prepare(const Model& model, uint8_t* arena, size_t arena_bytes,
                 const TrainingOptions* training = nullptr) {
    // The default table is the kernels' (engine/kernels): named here, in the
    // caller's code, so the runtime itself links no kernel.
    return prepare_with(op_resolver_ ? *op_resolver_ : default_op_resolver(), model, arena,
                        arena_bytes, training);
  }
  // Exact arena size this model needs (also after prepare failed with
  // kOutOfMemory, as long as the tables themselves fitted).
  size_t arena_bytes_needed() const { return usage_.total(); }
  const ArenaUsage& arena_usage() const { return usage_; }

  int input_count() const;
  int output_count() const;
  // Write every input before every invoke(): as in TensorFlow Lite Micro, the
  // planner gives an input's memory to later tensors once its last reader
  // has run, so after invoke() the inputs may hold anything (RAM matters more
  // on a board than keeping inputs). Outputs stay valid until the next invoke.
  Tensor* input(int i);
  Tensor* output(int i);
  Status invoke();
  // Zeroes (or restores from the file) every variable tensor.
  void reset_variables();

  // ---- Training mode ----
  bool training() const { return training_; }
  // After invoke(): runs the backward steps of subgraph 0 in reverse op order.
  // The caller has written the gradient of each model output (or of the
  // loss op's inputs: TrainingOptions::loss_op).
  Status backward();
  // By global index (subgraph 0's tensors/ops come first, so for subgraph 0
  // the global index is the model's); nullptr unless training.
  TensorTraining* tensor_training(int index);
  OpTraining* op_training(int index);
  int global_tensor_index(int subgraph, int tensor) const {
    return subgraphs_[subgraph].first_tensor + tensor;
  }
  int total_tensor_count() const { return total_tensors_; }
  // Control-flow backward (WHILE): runs the on-path ops of a body in reverse
  // order, and zeroes all activation gradients of a body.
  Status backward_subgraph(int index);
  void zero_activation_gradients(int index);
  Tensor* gradient(int subgraph, const Tensor* tensor);
  const TrainingUsage& training_usage() const { return training_usage_; }
  void zero_weight_gradients();
  // Optional (nullptr: none); kept across prepare(). Receives per-time-step
  // state gradients from recurrent backward kernels (OpContext).
  void set_observer(StateGradientObserver* observer) { observer_ = observer; }
  StateGradientObserver* observer() const { return observer_; }
  // Optional (nullptr: none); kept across prepare(). Hears every op invoke
  // runs (engine/runtime/op_profiler.h).
  void set_profiler(OpProfiler* profiler) { profiler_ = profiler; }
  OpProfiler* profiler() const { return profiler_; }
  // The kernels prepare() may use; nullptr (the default): this build's
  // default_op_resolver(). Kept across prepare().
  void set_op_resolver(const OpResolver* ops) { op_resolver_ = ops; }
  const OpResolver* op_resolver() const { return op_resolver_; }
  // Index of an op over all subgraphs (subgraph 0's ops first).
  int global_op_index(const OpNode* node) const {
    return static_cast<int>(node - subgraphs_[0].nodes);
  }

  // For control-flow kernels.
  Status prepare_subgraph(int index);
  Status invoke_subgraph(int index);
  SubgraphState& subgraph_state(int index) { return subgraphs_[index]; }
  const SubgraphState& subgraph_state(int index) const { return subgraphs_[index]; }
  const Model& model() const { return *model_; }
  bool is_prepared() const { return prepared_; }

  // Used by OpContext during prepare.
  Status allocate_persistent(size_t bytes, void** out);
  Status add_scratch(int subgraph, int op, size_t bytes, int* slot);
  Status add_tape(int subgraph, int op, size_t bytes);
  Status add_backward_scratch(int subgraph, int op, size_t bytes, int* slot);
  void* scratch_data(int32_t buffer_id) const;
  // Resource variables: the id is stored in VAR_HANDLE's RESOURCE output.
  static constexpr int kMaxResourceVariables = 16;
  Status find_or_add_resource(const char* container, const char* shared_name, int32_t* id);
  ResourceVariable& resource(int32_t id) { return resources_[id]; }

 private:
  Status prepare_with(const OpResolver& ops, const Model& model, uint8_t* arena, size_t arena_bytes,
                      const TrainingOptions* training);
  Status layout_tables(size_t* table_bytes);
  Status init_tensors(int subgraph);
  Status check_supported_ops(const OpResolver& ops);
  Status check_integer_activations(int subgraph, int op);
  Status assign_times(int subgraph, uint32_t* clock);
  Status plan_activations();

  // engine/train: the training plan and backprop fill and walk the training
  // tables below (reached through TrainingOptions::steps).
  friend struct TrainingPlan;
  friend struct Backprop;

  const Model* model_ = nullptr;
  uint8_t* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  size_t persistent_end_ = 0;  // bump pointer for persistent data (from arena start)
  SubgraphState* subgraphs_ = nullptr;
  int subgraph_count_ = 0;
  int total_tensors_ = 0;
  int total_ops_ = 0;
  // Planned buffers: one per tensor of every subgraph, then scratch buffers.
  PlannedBuffer* buffers_ = nullptr;
  int32_t buffer_count_ = 0;
  int32_t buffer_capacity_ = 0;
  size_t activations_offset_ = 0;
  ResourceVariable resources_[kMaxResourceVariables];
  int resource_count_ = 0;
  ArenaUsage usage_;
  bool prepared_ = false;
  bool training_ = false;
  TrainingOptions training_options_;
  TensorTraining* tensor_training_ = nullptr;  // every tensor, global index
  OpTraining* op_training_ = nullptr;          // every op, global index
  TrainingUsage training_usage_;
  StateGradientObserver* observer_ = nullptr;
  OpProfiler* profiler_ = nullptr;
  const OpResolver* op_resolver_ = nullptr;
};

}  // namespace gruwb
