#pragma once
// `train`: trains a model on NumPy data with a TrainingSession and saves the
// trained model atomically. `gruwb train` is a thin wrapper; the figures it
// prints come from the session's EpochMetrics.

#include <functional>
#include <string>

#include "app/core/training_session.h"

namespace gruwb::app {

struct TrainRequest {
  std::string model_path;
  std::string inputs_path, labels_path;          // training data
  std::string val_inputs_path, val_labels_path;  // optional validation data
  std::string output_path;                       // .tflite or .circle ("" = do not save)
  std::string metrics_path;                      // JSONL, one line per epoch ("" = none)
  std::string scope = "all";
  TrainingRunSpec spec;  // config (loss, optimizer, lr, batch, clipping), epochs, seed, ...
};

// One JSON object (no newline) with every figure of an epoch: the JSONL line
// of --metrics, also for the experiment runner's files.
std::string epoch_metrics_json(const EpochMetrics& metrics);

// One line of text per epoch: "epoch 3/20  loss 0.8123  acc 0.6500  val_loss ...".
std::string epoch_metrics_line(const EpochMetrics& metrics, int epochs);

// Runs the training; `print` (may be null) gets each epoch line as it ends.
// Returns an exit code; `out` gets the summary, `err` one line naming the problem.
// A cancelled or failed run still writes the metrics of the epochs it finished.
int train_model(const TrainRequest& request, const std::function<void(const std::string&)>& print,
                std::string* out, std::string* err);

}  // namespace gruwb::app
