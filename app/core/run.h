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
};

// Returns an exit code (kExitOk / kExitBadInput / kExitFailure); `out` gets
// the report (text or JSON), `err` one line naming the problem.
int run_model(const RunRequest& request, std::string* out, std::string* err);

}  // namespace gruwb::app
