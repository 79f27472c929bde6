#pragma once
// `bench`: how fast a model infers (and, optionally, trains) on this host,
// timed through the engine itself. `gruwb bench`, the experiment runner's
// cell comparison and the GUI use these functions; none of them has its own
// timing loop.
//
//   BenchRequest request;
//   request.model_path = "gesture_gru_fused.tflite";
//   request.train_scope = "all";
//   BenchResult result;
//   if (bench_model(request, &result, &error) == kExitOk) text = bench_report(result, false);

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/core/loop_plan.h"
#include "engine/model/model.h"
#include "engine/tools/model_file.h"
#include "engine/train/trainer.h"

namespace gruwb::app {

// Median, min and max over the repetitions of a timing.
struct Spread {
  double median = 0.0, min = 0.0, max = 0.0;
};
Spread spread_of(std::vector<double> values);  // {} when empty

// How long one `call` takes: an untimed first call, a warm-up that doubles
// the call count until it lasts a tenth of `min_seconds` and so sets how many
// calls make one repetition (calibrated once), then `repetitions` timed runs
// of that many. Gets seconds per call of each repetition; false as soon as
// `call` fails.
struct Timing {
  std::vector<double> seconds_per_call;  // one per repetition
  int64_t calls_per_repetition = 0;
};
bool time_calls(const std::function<bool()>& call, int repetitions, double min_seconds,
                Timing* out);

// Per-sequence inference time in an arena of exactly the planned size, on
// deterministic pseudo-random inputs (float uniform in [-1, 1] from a fixed
// seed, int32 zero), variables reset before every invoke (independent
// windows, as a classifier runs).
// Where the time of one sequence goes, by op kind: self time (a WHILE's own
// time without its cond/body ops), from one extra repetition with an
// OpProfiler attached (the timing above runs without one, since the
// profiler's clock reads cost time too).
struct OpTime {
  std::string op;             // builtin name or custom code
  int instances = 0;          // ops of this kind that ran, over every subgraph
  double share = 0.0;         // of all ops' self time in the profiled repetition
  double microseconds = 0.0;  // share x the median time per sequence
};
struct InferenceBench {
  uint64_t arena_bytes = 0;
  Spread microseconds;  // per sequence
  int64_t invokes_per_repetition = 0;
  std::vector<OpTime> ops;  // largest share first
};
// Returns kExitOk, kExitBadInput (the model cannot be prepared) or
// kExitFailure (the engine failed while running); `error` names the problem.
// `per_op`: also fill `ops` (one more repetition, profiled).
int bench_inference(const Model& model, int repetitions, double min_seconds, bool per_op,
                    InferenceBench* out, std::string* error);

// Training throughput with Adam (lr 1e-3) on random inputs and one-hot
// labels; a batch accumulates `batch_size` samples before one update. The
// trainer is prepared by TrainingSession (exact arena, its checks and messages).
struct TrainingBench {
  std::string scope;        // as given: "fc", "all", "last:N" or weight names
  std::string loss_output;  // the tensor name of the output the loss is on
  int batch_size = 1;
  int64_t trainable_parameters = 0;
  TrainingMemory memory;
  Spread samples_per_second;
  int64_t samples_per_repetition = 0;
  bool fused = false;     // trained the fused form (TrainingSession's loop plan)
  int rows_per_pass = 1;  // batch rows one training pass takes (1: single samples)
};

struct BenchRequest {
  std::string model_path;
  int repetitions = 5;
  double min_seconds = 0.1;  // per repetition
  std::string train_scope;   // "" = inference only
  std::string loss_output;   // training: the output the loss goes on ("" = automatic)
  int batch_size = 1;
  bool as_written = false;  // time a WHILE/unrolled RNN model as written, not fused (loop_plan.h)
  // Training at batch > 1: one pass of B rows per batch (TrainingRunSpec::batched_passes);
  // false: B single-sample passes, as a board trains (less memory, slower).
  bool batched_passes = true;
};

// Exit codes as bench_inference (a model that cannot train: kExitBadInput).
// Errors name the model by loaded.path. `loaded` is the file: TrainingSession plans its loops
// (loop_plan.h) after dequantizing a hybrid model, unless `as_written`.
// From `request`: train_scope, loss_output (the output the loss goes on, "" = automatic, see
// engine/train/loss_output.h; the random labels are its classes), batch_size, batched_passes,
// repetitions, min_seconds, as_written.
int bench_training(const tools::LoadedModel& loaded, const BenchRequest& request,
                   TrainingBench* out, std::string* error);

struct BenchResult {
  std::string model_path;
  uint64_t model_bytes = 0;  // the file
  int op_count = 0;          // of the form timed, over every subgraph (WHILE bodies count once)
  LoopPlan plan;             // which form was timed (bytes cleared)
  int repetitions = 0;
  double min_seconds = 0.0;
  InferenceBench inference;
  bool trained = false;  // `training` is valid
  TrainingBench training;
};

// Returns kExitOk, or kExitBadInput with `error` one line naming the model
// and the problem (unreadable/corrupt file, unsupported or full-integer
// model, a model that cannot train in that scope), or kExitFailure when the
// engine fails while running. When only training fails, `out` keeps the
// inference figures (out->trained stays false).
int bench_model(const BenchRequest& request, BenchResult* out, std::string* error);

// The aligned text table, or the JSON object (fields in `gruwb bench --help`).
std::string bench_report(const BenchResult& result, bool json);

}  // namespace gruwb::app
