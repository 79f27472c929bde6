#pragma once
// `run`: one inference of a model on NumPy inputs, the engine sized with an
// exact arena. The CLI (`gruwb run`) and the GUI share it.

#include <string>
#include <vector>

#include "engine/tools/npy.h"

namespace gruwb::app {

struct RunRequest {
  std::string model_path;
  std::vector<std::string> input_paths;  // one .npy per model input, in order
  std::string output_dir;                // write output_<k>.npy files there ("" = no files)
  bool json = false;
  bool arena_only = false;  // report the planned arena; run only if inputs are given
  bool as_written = false;  // run a WHILE/unrolled RNN model as written, not fused (loop_plan.h)
};

// Returns an exit code (kExitOk / kExitBadInput / kExitFailure); `out` gets
// the report (text or JSON; the text starts with the plan's note when the model runs in its
// fused form, the JSON has it as "plan"), `err` one line naming the problem.
int run_model(const RunRequest& request, std::string* out, std::string* err);

}  // namespace gruwb::app
