#pragma once
// Training on the engine: forward, loss, backward through every op between
// the trainable weights and the loss (BPTT through fused GRUs), an optimizer
// step, all inside one caller-provided arena (no heap, same code on a board).
//
//   Trainer trainer;
//   Status s = trainer.prepare(model, config, arena, sizeof arena);
//   // kOutOfMemory: trainer.arena_bytes_needed() is the exact size.
//   memcpy(trainer.input(0)->data, x, trainer.input(0)->bytes);
//   memcpy(trainer.label(), y, trainer.label_count() * sizeof(float));
//   float loss;
//   s = trainer.train_sample(&loss);  // updates after config.batch_size samples

#include <cstddef>
#include <cstdint>

#include "engine/runtime/interpreter.h"
#include "engine/train/observer.h"
#include "engine/train/training_config.h"

namespace gruwb {

// Arena bytes by purpose; the parts add up to `total` (= arena_bytes_needed()).
struct TrainingMemory {
  size_t weight_bytes = 0;      // RAM copies of the trainable weights
  size_t gradient_bytes = 0;    // weight-gradient accumulators
  size_t optimizer_bytes = 0;   // Adam m, v / SGD velocity
  size_t activation_bytes = 0;  // planned: activations + their gradients + tapes
  size_t other_bytes = 0;       // tables, kernel state, labels
  size_t total = 0;
  // Inside activation_bytes (sums before memory sharing, for information):
  size_t tape_bytes = 0;
  size_t activation_gradient_bytes = 0;
};

class Trainer {
 public:
  static constexpr int kMaxTrainable = 64;

  Status prepare(const Model& model, const TrainingConfig& config, uint8_t* arena,
                 size_t arena_bytes);
  size_t arena_bytes_needed() const;
  TrainingMemory memory() const;

  Tensor* input(int i) { return interpreter_.input(i); }
  int input_count() const { return interpreter_.input_count(); }
  // The output the loss is on (TrainingConfig::loss_output, or the one
  // choose_loss_output picked); its position among subgraph 0's outputs.
  Tensor* output() { return interpreter_.output(loss_output_); }
  int32_t loss_output() const { return loss_output_; }
  // The label of the next sample: label_count() floats (sparse CE: one class
  // index per output row, stored as a float).
  float* label() { return label_; }
  int64_t label_count() const { return label_count_; }

  // Forward + loss + backward; adds this sample's gradients to the
  // accumulators (no update). `loss` may be nullptr.
  Status accumulate(float* loss);
  // accumulate(), then apply_update() once batch_size samples are in.
  Status train_sample(float* loss);
  // Mean of the accumulated gradients -> clipping -> NaN/Inf guard ->
  // optimizer step; clears the accumulators. No-op without samples.
  Status apply_update();
  // Forward only: loss and the arg-max class of the first output row.
  Status evaluate(float* loss, int32_t* prediction);
  // After a forward pass: the arg-max class of output row `row` (one-pass
  // batches: row i is sample i).
  int32_t predicted_class(int64_t row);
  // Zeroes the accumulators without updating (e.g. before `gruwb grad`).
  void clear_gradients();

  // Trainable weights in model order.
  int weight_count() const { return trainable_count_; }
  // Global tensor index (subgraph 0: the model's index; WHILE body weights
  // follow, see Interpreter::global_tensor_index).
  int weight_tensor_index(int i) const { return trainable_[i]; }
  // Where weight i lives in the model file: its subgraph (0, or a WHILE
  // body) and its tensor index inside that subgraph.
  void weight_location(int i, int* subgraph, int* tensor);
  Tensor* weight(int i);
  Tensor* weight_gradient(int i);  // accumulated (summed) gradients
  int64_t step() const { return step_; }
  int pending_samples() const { return pending_; }
  bool softmax_fused() const { return fused_softmax_op_ >= 0; }

  Interpreter& interpreter() { return interpreter_; }

  // ---- One-pass batches (TrainingConfig::one_pass_batches) ----
  // Samples input(0) takes per pass: batch_size when the model was prepared
  // with a batch dimension (then input(0) and label() hold that many rows
  // and train_sample() trains a whole batch in one pass), else 1 (B single
  // samples accumulate).
  int32_t batch_rows() const { return batch_rows_; }
  bool one_pass_batches() const { return batch_rows_ > 1; }
  // One-pass mode: trains on the first `samples` rows (a short last batch;
  // the other rows add nothing) and applies the update.
  Status train_batch(int32_t samples, float* loss);
  // Batched passes as the epoch loop runs them: forward, loss and backward
  // over rows 0..rows-1 (1 <= rows <= batch_rows(); the other rows add
  // nothing), gradients added, no update; row_losses (may be nullptr) gets
  // each row's loss. Per-row losses need the batched kernels
  // (GRUWB_BATCHED_KERNELS, hosts); without them rows must be 1.
  Status accumulate_rows(int32_t rows, float* row_losses);
  // Forward and loss only over rows 0..rows-1; gradients are untouched.
  Status evaluate_rows(int32_t rows, float* row_losses);

  // ---- Observer (engine/train/observer.h) ----
  // nullptr = none (zero cost). Kept across prepare(). Gets on_step and
  // on_weight_gradient from apply_update(), on_state_gradient from the
  // recurrent backward kernels and WHILE loops.
  void set_observer(TrainingObserver* observer);

  // ---- Checkpoints ----
  // Weights, gradient accumulators (a batch in progress), optimizer state,
  // step: training resumed from a checkpoint is bit-identical to training
  // that never stopped. Load into a trainer prepared the same way.
  size_t checkpoint_bytes() const;
  Status save_checkpoint(uint8_t* out, size_t capacity, size_t* written);
  Status load_checkpoint(const uint8_t* data, size_t bytes);
  // The same bytes in chunks, with no buffer beyond the caller's chunk (a
  // board streams a checkpoint that would not fit its free RAM):
  // read_checkpoint serialises [offset, offset + bytes) from the live state.
  Status read_checkpoint(size_t offset, uint8_t* out, size_t bytes);
  // write_checkpoint takes chunks in order, the header first (offset 0 starts
  // over); weights and optimizer state are written into the live tensors as
  // they arrive, so after a failed or abandoned write the training is half
  // restored until a whole checkpoint is written. finish_checkpoint_write()
  // checks all bytes arrived and applies the step and counters.
  Status write_checkpoint(size_t offset, const uint8_t* data, size_t bytes);
  Status finish_checkpoint_write();

 private:
  Status resolve_scope(const Model& model, uint8_t* flags);
  Status compute_loss(float* loss);
  // accumulate and apply_update without the denormal flushing around them.
  Status accumulate_pass(float* loss);
  Status run_rows(int32_t rows, float* row_losses, bool train);
  Status update_weights();
  int64_t count_hits() const;
  void report_gradients(float scale);
  // The observer's work, reached only through these pointers (set by
  // set_observer), so a build that never observes (a board) links none of it.
  static void observe_sample(Trainer& t);
  static void observe_step(Trainer& t, double norm2, bool clipped, float mean);
  int optimizer_slots() const;
  size_t checkpoint_prefix_bytes() const;
  uint8_t* checkpoint_array(size_t offset, size_t* run);

  Interpreter interpreter_;
  TrainingConfig config_;
  float* label_ = nullptr;
  int64_t label_count_ = 0;
  size_t head_bytes_ = 0;   // trainable flags at the arena start
  size_t label_bytes_ = 0;  // labels after the interpreter's memory
  int32_t trainable_[kMaxTrainable] = {};
  int trainable_count_ = 0;
  int fused_softmax_op_ = -1;  // SOFTMAX producing the output, fused with CE
  int32_t loss_output_ = 0;    // index into subgraph 0's outputs
  int32_t classes_ = 0;        // last dim of the output
  int64_t rows_ = 0;
  int pending_ = 0;  // samples in the gradient accumulators
  int passes_ = 0;   // forward/backward passes behind them
  int64_t step_ = 0;
  // A checkpoint being written: the next byte expected, the header staged
  // until finish, the element count being received.
  size_t checkpoint_next_ = 0;
  uint8_t checkpoint_header_[56] = {};
  uint8_t checkpoint_count_[4] = {};
  int32_t batch_rows_ = 1;
  int64_t active_rows_ = 0;  // output rows the loss uses (all but a short batch's tail)
#if GRUWB_BATCHED_KERNELS
  float* row_losses_ = nullptr;  // accumulate_rows/evaluate_rows: each sample's loss
#endif
  double loss_sum_ = 0.0;  // over pending samples, for StepMetrics
  int64_t hits_ = 0;
  int64_t metric_rows_ = 0;
  TrainingObserver* observer_ = nullptr;
  void (*observe_sample_)(Trainer&) = nullptr;
  void (*observe_step_)(Trainer&, double, bool, float) = nullptr;
};

}  // namespace gruwb
