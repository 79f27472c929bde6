#pragma once
// Experiments: one model (a file or a build spec) + one dataset + stages that
// all start from the SAME initial weights ("init" evaluates only, "fc" trains
// the last Dense, "all" everything, "last:N", explicit tensor sets), repeated
// over K seeds (mean ± std), or the same data through several registered cells
// (GRU, LSTM, SimpleRNN, ...) with size and latency. Training goes through
// TrainingSession (training_session.h); this layer only arranges runs, keeps
// every result and saves them. docs/experiments.md.
//
//   ExperimentSpec spec;  // or load_experiment_spec("exp.json", ...)
//   ExperimentResult result = run_experiment(spec, on_event, &cancel);
//
// Plain C++ (no Qt): the callback runs on the thread that runs the
// experiment; ExperimentWorker runs it on its own std::thread.

#include <QJsonObject>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "app/core/dataset.h"
#include "app/core/training_session.h"

namespace gruwb::app {

struct StageSpec {
  std::string name;   // shown in tables: "init", "fc", "all", "last:2", "custom"
  std::string scope;  // "init" (evaluate only), "fc", "all", "last:N" or "names:a;b"
  Optimizer optimizer = Optimizer::kAdam;
  float learning_rate = 1e-3f;
  int batch_size = 16;
  int epochs = 20;
  int patience = 0;  // early stopping on validation (or training) loss; 0 = off
  float clip_norm = 0.f;
};

struct ExperimentSpec {
  std::string name = "experiment";
  // Model: a file, or a build spec "cell=gru,units=60[,dense=32][,layout=fused|while]
  // [,reset_after=true][,bias_init=keras]" (T, F and classes come from the data).
  std::string model_path;
  std::string build;
  // The model output the loss goes on (a tensor name or position); "" =
  // automatic (choose_loss_output). Model files only: built models have one.
  std::string loss_output;
  std::string data_path;
  // Batch > 1: one batched pass per batch (TrainingRunSpec::batched_passes), equal to single
  // samples within float rounding; false: single-sample passes as a board trains, so that a board
  // run of the same stage gives the same weights bit for bit.
  bool batched_passes = true;
  // Data preparation (dataset.h). timesteps 0: the model's T (file) or the
  // data's length (build spec).
  int timesteps = 0;
  LengthPolicy length_policy = LengthPolicy::kResample;
  double validation_fraction = 0.0;
  // "model": bake the training statistics into a built model (SUB/MUL),
  // "data": normalise the arrays, "none".
  std::string normalize = "model";
  std::vector<StageSpec> stages;
  int seeds = 1;
  uint64_t first_seed = 1;
  // Cell comparison: the same data and stages through each cell, built from
  // `build`; empty = just the build spec's cell. With a model file too (both
  // `model_path` and `build` set), the file is a row beside the built cells
  // (their T comes from the file).
  std::vector<std::string> compare_cells;
  // Model comparison ("bring your own model"): each file is a row beside the
  // built cells (or beside `model_path`), trained through the same stages and
  // seeds on the same data (resampled to the file's T, normalised as a file's
  // data is). A file whose input does not fit the data gets an error in its
  // row; the other rows go on.
  std::vector<std::string> compare_models;
  // A board (serial port or pty) the comparison also times each row's deployed model on
  // (BENCH: uploaded, then inferences timed in the board's cycles); "" = host figures only.
  std::string board_port;
  // Train and score WHILE-loop/unrolled RNN models as written instead of in their fused form
  // (loop_plan.h; training_session.h's TrainingRunSpec::as_written).
  bool as_written = false;
};

// "adam" or "sgd", as specs and tables name it.
const char* optimizer_name(Optimizer o);

// Whether a stage scope quantizes rather than trains (int8, int16x8, dynamic).
bool is_quantization_scope(const std::string& scope);

// "init,fc,all,int8" with shared training settings -> stages.
bool parse_stages(const std::string& text, const StageSpec& defaults, std::vector<StageSpec>* out,
                  std::string* error);
// Checks names, numbers and that one of model_path/build is set (both only
// for a cell comparison beside the model file).
bool check_experiment_spec(const ExperimentSpec& spec, std::string* error);

// What opening a dataset checks before it replaces the previous one: the files
// read (load_dataset), and for a model file with a [1, T, F] input, the data
// prepared to its T with its channels and classes matching (the same checks an
// experiment makes). `summary` gets dataset_summary() and, when the model could
// not be checked against, why. False with one line naming the file in `error`.
bool check_dataset_for_model(const std::string& data_path, const std::string& model_path,
                             std::string* summary, std::string* error);

// The first recurrent cell of a model: a registered cell's fused op (its units from the op's
// output), else a cell the detector finds spelled out (a WHILE loop or unrolled steps). False
// when the model has none.
bool model_recurrent_cell(const Model& model, std::string* cell, int* units);

// What a model costs on a board: file, weights, inference arena, host latency.
struct DeployFigures {
  uint64_t model_bytes = 0;
  uint64_t weight_bytes = 0;  // constant buffers
  uint64_t arena_bytes = 0;   // inference
  double latency_us = 0.0;    // one inference on this machine, median (bench.h)
};

// A quantization stage (scope int8, int16x8 or dynamic) quantizes the model
// the previous training stage of the same cell and seed ended with (or the
// initial model), calibrated on the training split, and scores it on the test
// split like any stage; these are the before/after figures.
struct QuantizationFigures {
  std::string mode;          // "int8", "int16x8", "dynamic"
  std::string source_stage;  // the stage whose model was quantized ("initial" if none)
  bool source_evaluated = false;
  double source_accuracy = 0.0;  // that model's test accuracy
  DeployFigures source, quantized;
  std::vector<std::string> kept_float;  // ops left in float, with why
};

// One stage of one seed (and cell).
struct StageRun {
  std::string stage;
  std::string cell;  // a registered cell's name (tools/cells/cell_registry.h) or "model"
  uint64_t seed = 0;
  // The recurrent cell of the model the stage trained: a registered cell's name (from the build
  // spec, or found in the model file: model_recurrent_cell) and its units; "" and 0 when the
  // file has none we know. Results saved before these existed read as unknown.
  std::string cell_type;
  int units = 0;
  // Bytes of the model the stage ended with (the quantized one after a quantization stage);
  // 0 when it ended with none (failed, stopped).
  uint64_t model_bytes = 0;
  TrainingResult training;  // epochs (curves), memory, trainable parameters, outcome
  bool evaluated = false;   // test figures below are valid
  double test_loss = 0.0;
  double test_accuracy = 0.0;
  ClassMetrics test_classes;
  bool quantized = false;  // a quantization stage: `quantization` is valid
  QuantizationFigures quantization;
  // The model the stage ended with (a training stage; not in the JSON): what a board run of
  // the same stage is compared with (tests/serial/experiment_board_test.cpp).
  std::vector<uint8_t> trained_model;
  double seconds = 0.0;
  std::string error;  // this run failed (the others go on)
};

struct Figure {  // mean ± population std over seeds
  double mean = 0.0, std = 0.0;
  int count = 0;
};

// The headline table: one row per (cell, stage).
struct StageSummary {
  std::string cell, stage;
  Figure accuracy, loss;  // test split
  bool has_delta = false;
  double delta_accuracy = 0.0, delta_loss = 0.0;  // vs the previous stage of the same cell
  int64_t trainable_parameters = 0;
  uint64_t training_memory_bytes = 0;  // TrainingMemory::total
  TrainingMemory memory;
  int epochs_run = 0;  // mean epochs actually trained (early stopping)
  // Quantization stages: the first seed's figures (sizes do not depend on
  // the seed), with the source's accuracy as the mean over seeds.
  bool quantized = false;
  QuantizationFigures quantization;
  Figure source_accuracy;
};

// Cell comparison: figures of each cell's model (same weights in every layout),
// and of each compared model file (model_summary()). A size of 0 is "-": not
// measured, or a model file that has no such form.
struct CellSummary {
  std::string cell;        // a registered cell's name, or a model row's label (its file name)
  std::string model_path;  // model rows: the file as given; "" for a built cell
  // Which model the row trained: "built cell=lstm,units=60, input [1,60,3]" or the file.
  std::string model;
  Figure accuracy;  // the last stage's test accuracy
  uint64_t fused_bytes = 0, while_bytes = 0;
  uint64_t unrolled_bytes = 0;  // 0 in results saved before it was measured
  uint64_t parameters = 0;      // trainable float weights (what the "all" scope trains)
  uint64_t arena_bytes = 0;     // fused inference arena (a model row: the fused form if it fuses)
  double latency_us = 0.0;      // fused, one inference: median of bench_inference (bench.h)
  // One inference on spec.board_port (median of BENCH, app/core/board.h); 0 = not measured.
  double board_latency_us = 0.0;
  uint64_t board_cycles = 0;  // the same in the board's cycles (0: a simulated board)
  std::string board;          // its HELLO name
  std::string board_note;     // why the board figure is missing (e.g. the arena does not fit)
  std::string fuse_note;      // model rows: why the fused column is empty ("" when it is not)
  std::string error;          // this row could not run (e.g. its input does not fit the data)
};

// The figures of one model file as a comparison row: its own bytes in the
// column of its form (a WHILE loop, unrolled steps, else fused), the fuser's
// output in the fused column when it fuses (fuse_note says why not), trainable
// parameters, arena and host latency of the fused form (else of the file).
// `train` is data the model takes (to count what training "all" updates).
// `deployed` (optional) gets the bytes the figures are of (the fused form when it fuses).
bool model_summary(const std::string& path, const std::vector<uint8_t>& bytes,
                   const TrainingData& train, CellSummary* out, std::string* error,
                   std::vector<uint8_t>* deployed = nullptr);

enum class ExperimentStatus { kNotRun, kCompleted, kCancelled, kFailed };
const char* experiment_status_name(ExperimentStatus status);

struct ExperimentResult {
  ExperimentSpec spec;
  ExperimentStatus status = ExperimentStatus::kNotRun;
  std::string error;
  std::string started;  // ISO 8601 UTC
  double seconds = 0.0;
  // The data as prepared (for the report).
  std::string data_name;
  int timesteps = 0, features = 0;
  std::vector<std::string> class_names;
  int train_count = 0, validation_count = 0, test_count = 0;
  std::vector<std::string> data_notes;
  std::vector<StageRun> runs;
  std::vector<StageSummary> summary;
  std::vector<CellSummary> cells;
};

// `text` as a JSON object; false with "<label>: not a JSON object (<why> at offset N)".
bool parse_json_object(const std::string& text, const std::string& label, QJsonObject* out,
                       std::string* error);

// Recomputes result->summary (and cell accuracies) from result->runs.
void summarize(ExperimentResult* result);

struct ExperimentEvent {
  enum class Kind { kMessage, kRunStarted, kTraining, kRunFinished, kFinished };
  Kind kind = Kind::kMessage;
  std::string message;
  int run = 0, runs = 0;   // 0-based index of the current run, total
  double progress = 0.0;   // 0..1 over the whole experiment
  TrainingEvent training;  // kTraining
  // kRunFinished: the run just recorded (valid during the callback only), so a caller can show
  // it before the experiment ends (the GUI's HParams rows).
  const StageRun* stage_run = nullptr;
};
using ExperimentCallback = std::function<void(const ExperimentEvent&)>;

// Runs everything (blocking). Results gathered so far are always returned;
// with `autosave_path` the JSON of the result is written atomically after
// every run, so a cancel or crash loses at most the run in progress.
ExperimentResult run_experiment(const ExperimentSpec& spec, const ExperimentCallback& callback,
                                const std::atomic<bool>* cancel,
                                const std::string& autosave_path = "",
                                TrainingObserver* observer = nullptr);

// The experiment on its own thread. Events arrive on that thread: GUI code
// forwards them with QMetaObject::invokeMethod(..., Qt::QueuedConnection).
class ExperimentWorker {
 public:
  ~ExperimentWorker();
  void start(const ExperimentSpec& spec, ExperimentCallback callback,
             const std::string& autosave_path = "");
  void cancel() { cancel_ = true; }
  // Blocks until the run ends; the result is valid afterwards.
  const ExperimentResult& wait();
  bool running() const { return running_; }

 private:
  std::thread thread_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> running_{false};
  ExperimentResult result_;
};

// JSON: the spec alone (reopen and re-run) or everything (spec + results).
std::string experiment_spec_json(const ExperimentSpec& spec);
std::string experiment_result_json(const ExperimentResult& result);
// Reads what experiment_result_json writes (reports of a saved result are
// re-rendered without training); errors name `label` and the member.
bool parse_experiment_result(const std::string& text, const std::string& label,
                             ExperimentResult* out, std::string* error);
bool parse_experiment_spec(const std::string& json, const std::string& label, ExperimentSpec* out,
                           std::string* error);
// Reads a spec file or a result file (its "spec" member).
bool load_experiment_spec(const std::string& path, ExperimentSpec* out, std::string* error);
bool save_text_atomically(const std::string& path, const std::string& text, std::string* error);

}  // namespace gruwb::app
