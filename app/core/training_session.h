#pragma once
// The application's training layer: epochs of the engine Trainer over a data
// set, with the figures a user reads (loss, accuracy, per-class precision and
// recall, confusion matrix, gradient statistics, time, samples/s), progress
// events, cancellation and the trained model written back as .tflite/.circle.
// `gruwb train`, `gruwb grad`, the experiment runner and the GUI's worker
// threads all call this; none of them re-implements a training loop.
//
//   TrainingData train;
//   load_training_data("x.npy", "y.npy", &train, &error);
//   TrainingRunSpec spec;
//   spec.model_bytes = ...; spec.config.scope = TrainableScope::kFc; spec.epochs = 20;
//   TrainingSession session;
//   if (!session.prepare(spec, train, nullptr, &error)) ...
//   TrainingResult result = session.run(on_event, &cancel);   // blocking
//   session.trained_model(ModelFormat::kTflite, &bytes, &error);
//
// Plain C++ (no Qt): a TrainingSession belongs to one thread at a time; the
// callback runs on that thread and gets plain values the GUI can copy into a
// queued signal. Only `cancel` may be touched from another thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/core/loop_plan.h"
#include "engine/model/model.h"
#include "engine/tools/model_file.h"
#include "engine/train/trainer.h"
#include "engine/train/training_config.h"

namespace gruwb::tools {
class JsonWriter;
}

namespace gruwb::app {

// Samples for training or validation. A sample is one model input without
// its leading batch dimension of 1 (model input [1,T,F] -> sample [T,F]).
// Targets are either class ids (`labels`) or rows of `target_width` floats
// (`targets`: one-hot/soft class rows, or regression targets for MSE/MAE).
struct TrainingData {
  std::vector<int64_t> sample_shape;  // e.g. {60, 3}
  std::vector<float> inputs;          // count() * sample_elements(), C order
  std::vector<int32_t> labels;        // class ids [N]; empty when `targets` is used
  std::vector<float> targets;         // [N, target_width]; empty when `labels` is used
  int64_t target_width = 0;
  std::vector<std::string> class_names;  // optional, for reports
  std::string inputs_label = "inputs";   // names the data in errors (a file path)
  std::string labels_label = "labels";

  int64_t sample_elements() const;
  int64_t count() const;
  // The class of sample i: its label, or the arg-max of its target row
  // (-1 when there are neither).
  int32_t class_of(int64_t i) const;
};

// Reads X [N, ...] (float32/float64) and labels: int class ids [N] (or [N,1])
// or float rows [N, C] (one-hot). Errors name the file and both shapes.
bool load_training_data(const std::string& inputs_path, const std::string& labels_path,
                        TrainingData* out, std::string* error);

// Checks `data` against the model's input 0 [1, ...] (further inputs must be
// float: a streaming model's states, held at zero) and output `output`
// (index into subgraph 0's outputs, the one the loss is on) [1, C] for
// `loss`; the error names the data's label and both shapes.
bool check_training_data(const TrainingData& data, const Model& model, Loss loss,
                         std::string* error, int32_t output = 0);

// The output the loss goes on for `data`: `name` ("" = automatic; else a
// tensor name or a position) through choose_loss_output with what the
// labels fill. The error is one line naming the candidates.
bool choose_training_output(const Model& model, const std::string& name, const TrainingData& data,
                            int32_t* output, std::string* error);

// Every output of subgraph 0: its name, shape, whether it is float and
// whether SOFTMAX/LOGISTIC feeds it (the GUI's "Loss on output" choice).
struct ModelOutputInfo {
  std::string name;
  std::vector<int32_t> shape;
  bool is_float = false;
  bool activation_fed = false;  // SOFTMAX/LOGISTIC (through reshapes)
};
std::vector<ModelOutputInfo> model_outputs(const Model& model);

// "ce", "sparse_ce", "mse", "mae" (also the Keras names
// "categorical_crossentropy", "sparse_categorical_crossentropy").
bool parse_loss(const std::string& text, Loss* out);
const char* loss_name(Loss loss);  // "ce", "sparse_ce", "mse", "mae"

struct TrainingRunSpec;
// "fc", "all", "last:N" or a comma-separated list of weight tensor names.
bool set_trainable_scope(const std::string& text, TrainingRunSpec* spec, std::string* error);
std::string trainable_scope_text(const TrainingRunSpec& spec);
// How a batch trains, for reports: "" at batch 1, else " (one pass of B rows)" or
// " (single-sample passes)" (Trainer::batch_rows: the rows one pass takes).
std::string batch_passes_text(int batch_size, int rows_per_pass);

struct EarlyStopping {
  int patience = 0;              // epochs without improvement before stopping; 0 = off
  bool monitor_val_loss = true;  // val loss if there are validation data, else train loss
  double min_delta = 0.0;
  bool restore_best_weights = true;
};

struct TrainingRunSpec {
  std::vector<uint8_t> model_bytes;   // .tflite or .circle
  std::string model_label = "model";  // names the model in errors (its path)
  // A WHILE-loop or unrolled RNN model trains in its fused form when it agrees with the file
  // (loop_plan.h) and the scope means the same in both forms ("all", "fc"); true: as written.
  // The trained model is then the fused form: trained_model() writes what was trained.
  bool as_written = false;
  // Everything the engine needs; config.names is filled from
  // `trainable_names` by prepare() when config.scope == kNames.
  TrainingConfig config;
  std::vector<std::string> trainable_names;
  // The output the loss goes on: a tensor name (or position) among the
  // model's outputs; "" = automatic (choose_loss_output with the labels'
  // sizes). prepare() resolves it into config.loss_output.
  std::string loss_output;
  int epochs = 10;
  // Sample order per epoch: engine/train/epoch_loop.h, as on a board (PCG32, the
  // same on every machine).
  uint64_t seed = 1;
  bool shuffle = true;
  bool evaluate_initial = true;  // epoch 0: loss/accuracy before any update
  bool gradient_statistics = true;
  EarlyStopping early_stopping;
  std::string checkpoint_path;  // "" = none; written after every epoch when set
  bool resume = false;          // continue from checkpoint_path
  // Optional engine observer (not owned; must outlive the session): per-step
  // loss, per-weight gradient statistics and ||dL/dh_t|| of recurrent ops,
  // called on the thread that runs the session.
  TrainingObserver* observer = nullptr;
  // Batch > 1: train (and evaluate) each batch in one pass of B rows through
  // the batched kernels (TrainingConfig::one_pass_batches), several times
  // faster than B single-sample passes and equal to them within float
  // rounding; models whose shapes do not take a batch dimension (WHILE loops)
  // fall back to single samples. false: single-sample passes, as a board runs.
  bool batched_passes = true;
};

// Gradient figures of one weight tensor over an epoch (the mean gradient of
// each optimizer step, before clipping).
struct EpochGradientStats {
  std::string name;
  int32_t tensor = -1;
  double mean_norm = 0.0;  // mean over the epoch's steps
  double last_norm = 0.0;  // the epoch's last step
  double max_norm = 0.0;
  float min = 0.f;  // over the epoch's steps
  float max = 0.f;
};

// Per-class figures from a confusion matrix (rows: true class, columns:
// predicted). Precision/recall of a class with no predicted/true samples is 0.
struct ClassMetrics {
  std::vector<std::vector<int64_t>> confusion;
  std::vector<double> precision;
  std::vector<double> recall;
  double accuracy = 0.0;
  int64_t samples = 0;
};
ClassMetrics class_metrics(const std::vector<std::vector<int64_t>>& confusion);

// "gradients": [{name, mean_norm, last_norm, max_norm, min, max}, ...], the
// one JSON form of an epoch's gradient figures (train metrics, experiments).
void write_gradient_stats(tools::JsonWriter& json,
                          const std::vector<EpochGradientStats>& gradients);
// {total, weights, gradients, optimizer, activations, other}: the one JSON
// form of a TrainingMemory (experiments, `gruwb bench`).
void write_training_memory(tools::JsonWriter& json, const TrainingMemory& memory);

struct EpochMetrics {
  int epoch = 0;      // 0 = before training (evaluate_initial)
  int64_t steps = 0;  // optimizer steps so far
  // Means over the epoch's samples as they were trained (Keras; a board's METRIC is
  // the same, engine/train/epoch_loop.h). Epoch 0: the initial weights evaluated.
  double train_loss = 0.0;
  double train_accuracy = 0.0;
  bool has_val = false;
  double val_loss = 0.0;
  double val_accuracy = 0.0;
  bool has_accuracy = false;   // classification targets
  ClassMetrics train_classes;  // the predictions of the training passes (epoch 0: evaluated)
  ClassMetrics val_classes;
  std::vector<EpochGradientStats> gradients;  // trainable weights in model order
  double seconds = 0.0;                       // wall time of the epoch
  double samples_per_second = 0.0;            // training samples (forward + backward + update)
};

enum class TrainingOutcome { kNotRun, kCompleted, kEarlyStopped, kCancelled, kFailed };
const char* training_outcome_name(TrainingOutcome outcome);

struct TrainingEvent {
  enum class Kind { kStep, kEpoch, kFinished };
  Kind kind = Kind::kStep;
  int epoch = 0;  // 1-based during training
  int epochs = 0;
  int64_t step = 0;  // optimizer steps so far
  int64_t epoch_samples_done = 0;
  int64_t epoch_samples = 0;
  double step_loss = 0.0;                              // mean loss of the step's batch
  double running_loss = 0.0;                           // mean loss of the epoch so far
  EpochMetrics metrics;                                // kEpoch: the finished epoch
  TrainingOutcome outcome = TrainingOutcome::kNotRun;  // kFinished
  std::string error;                                   // kFinished after a failure
};
using TrainingCallback = std::function<void(const TrainingEvent&)>;

struct WeightInfo {
  std::string name;
  int32_t tensor = -1;
  std::vector<int32_t> shape;
  int64_t elements = 0;
};

// The mean gradient of one trainable weight over a data set, in the
// tensor's own layout.
struct WeightGradient {
  WeightInfo weight;
  std::vector<float> values;
  double norm = 0.0;
  float min = 0.f;
  float max = 0.f;
};

struct TrainingResult {
  TrainingOutcome outcome = TrainingOutcome::kNotRun;
  std::string error;                 // kFailed: one line naming the culprit
  std::vector<EpochMetrics> epochs;  // epoch 0 first when evaluate_initial; kept on cancel/failure
  int best_epoch = -1;               // early stopping's best (restored when asked)
  int64_t steps = 0;
  int64_t samples = 0;  // training samples processed
  double seconds = 0.0;
  TrainingMemory memory;
  std::vector<WeightInfo> trainable;
  int64_t trainable_parameters = 0;
};

class TrainingSession {
 public:
  TrainingSession();
  ~TrainingSession();
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  // Loads the model, sizes the training arena exactly, checks and copies
  // the data (val may be null) and, with spec.resume, restores the checkpoint.
  bool prepare(const TrainingRunSpec& spec, const TrainingData& train, const TrainingData* val,
               std::string* error);

  // Runs the remaining epochs; blocking. `cancel` (may be null) is polled
  // between samples. Results gathered so far are always returned.
  TrainingResult run(const TrainingCallback& callback = nullptr,
                     const std::atomic<bool>* cancel = nullptr);

  // Loss/accuracy/confusion of `data` with the current weights (forward only).
  bool evaluate(const TrainingData& data, double* loss, ClassMetrics* classes, std::string* error);

  // Mean loss and mean gradient of every trainable weight over `data` (as
  // one batch: what PyTorch's mean loss gives) with the current weights; no
  // update. `gruwb grad` and the gradient view use it.
  bool gradients(const TrainingData& data, double* loss, std::vector<WeightGradient>* out,
                 std::string* error);

  // The model with the current weights, written through the model writer
  // (valid for `gruwb run`). Fails naming the reason (e.g. a Circle-only op
  // asked for as .tflite).
  bool trained_model(ModelFormat format, std::vector<uint8_t>* out, std::string* error) const;
  bool save_trained_model(const std::string& path, std::string* error) const;  // atomic

  const TrainingResult& result() const { return result_; }
  const std::vector<WeightInfo>& trainable_weights() const { return result_.trainable; }
  TrainingMemory memory() const;
  const Model& model() const;
  ModelFormat model_format() const;
  Trainer& trainer();
  int classes() const { return classes_; }
  // Which form trains: the fused form of the file's loops, or the file as written (bytes
  // cleared). fused_note(): the line the CLI shows for it ("" when the file trains as written).
  const LoopPlan& loop_plan() const { return loop_plan_; }
  std::string fused_note() const;
  // A hybrid model's INT8 weight tensors train as float32 copies (the trained model keeps them
  // as float32); how many were turned, and the line the CLI and GUI show for it ("" if none).
  // Hybrid INT8 weights trained as float32 copies, or a full-integer model's
  // float form (tools::float_training_model); "" for a float model.
  std::string dequantized_note() const;
  // The output the loss is on: its index and tensor name.
  int32_t loss_output() const;
  std::string loss_output_name() const;

 private:
  struct State;
  // Writes sample i into row `row` of the trainer's input and label.
  bool fill_sample(const TrainingData& data, int64_t i, std::string* error, int32_t row = 0);
  bool run_epoch(int epoch, const TrainingCallback& callback, const std::atomic<bool>* cancel,
                 EpochMetrics* metrics, bool* cancelled);
  bool save_checkpoint(int epoch, std::string* error);
  bool load_checkpoint(std::string* error);
  void snapshot_weights(std::vector<std::vector<float>>* out);
  void restore_weights(const std::vector<std::vector<float>>& weights);

  std::unique_ptr<State> state_;
  TrainingRunSpec spec_;
  TrainingData train_;  // copies: the caller's data may go away while a worker trains
  TrainingData val_;
  bool has_val_ = false;
  TrainingResult result_;
  int classes_ = 0;
  int next_epoch_ = 1;
  int dequantized_weights_ = 0;
  int integer_tensors_ = 0;
  LoopPlan loop_plan_;
};

}  // namespace gruwb::app
