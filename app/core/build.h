#pragma once
// `build`: a fresh recurrent classifier in the fused, WHILE or unrolled layout
// (engine/tools/model_builder.h), written atomically, with a size report and,
// on request, the three layouts side by side. The CLI (`gruwb build`) and the
// GUI share it.

#include <string>
#include <vector>

#include "engine/tools/model_builder.h"

namespace gruwb::app {

struct BuildRequest {
  tools::BuildSpec spec;  // spec.mean/variance filled by the caller or from normalize_from
  std::string output_path;
  std::string normalize_from;  // a dataset .npy [N,T,F]; "" = none
  bool compare_layouts = false;
  bool json = false;
};

// "m1,m2,...;v1,v2,..." -> means and variances (one per feature).
bool parse_normalization(const std::string& text, std::vector<float>* mean,
                         std::vector<float>* variance, std::string* error);

// Per-feature mean and population variance (Keras Normalization.adapt) over
// every sample and time step of a float32/float64 .npy of shape [N,T,F].
bool normalization_from_dataset(const std::string& path, int timesteps, int features,
                                std::vector<float>* mean, std::vector<float>* variance,
                                std::string* error);

// Builds, writes and reports. Returns kExitOk, kExitBadInput (bad spec or
// dataset, one line in `err`) or kExitFailure (the file could not be written).
int run_build(const BuildRequest& request, std::string* out, std::string* err);

// The report text/JSON for figures already measured (tests and the GUI).
std::string build_report_text(const BuildRequest& request, const tools::BuildFigures& built,
                              const std::vector<tools::BuildFigures>& layouts);
std::string build_report_json(const BuildRequest& request, const tools::BuildFigures& built,
                              const std::vector<tools::BuildFigures>& layouts);

}  // namespace gruwb::app
