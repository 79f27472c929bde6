#pragma once
// `grad`: the loss and the mean gradient of every trainable weight tensor of
// a model over NumPy samples, by tensor name in the tensor's own layout (for
// checking the engine against PyTorch and for looking at gradient flow).
// The CLI (`gruwb grad`) and the GUI share it; the numbers come from
// TrainingSession::gradients.

#include <string>

#include "engine/train/training_config.h"

namespace gruwb::app {

struct GradRequest {
  std::string model_path;
  std::string input_path;   // X [N, ...] float32/float64
  std::string labels_path;  // class ids [N] or rows [N, C]
  Loss loss = Loss::kCategoricalCrossEntropy;
  std::string scope = "all";  // fc | all | last:N | comma-separated weight names
  std::string loss_output;    // output the loss goes on ("" = automatic)
  bool json = false;
};

// Returns an exit code (kExitOk / kExitBadInput / kExitFailure); `out` gets
// the report (text: name, shape, norm, min, max; JSON: also every value),
// `err` one line naming the problem.
int grad_model(const GradRequest& request, std::string* out, std::string* err);

}  // namespace gruwb::app
