#pragma once
// Golden outputs of a real runtime kept as .npy files beside a model (DIR/input<i>.npy,
// DIR/output<i>.npy, as ../shared/data/models/real/golden/<stem>/ holds them): run the
// model on the inputs and measure how far its outputs are from the reference. One
// comparison for `gruwb corpus` and the real-model tests.

#include <string>

#include "engine/tools/model_runner.h"

namespace gruwb::tools {

struct GoldenResult {
  bool found = false;  // DIR holds input and output files
  // Largest difference: relative to max(1, |ref|) for float outputs, in steps for integers.
  double worst = 0;
  bool equal = false;  // float within 1e-5, integer within one step
};

// `runner` is the model, prepared. False with *error when the files cannot be read or do
// not fit the model, or the engine fails running it.
bool compare_with_golden(ModelRunner& runner, const std::string& dir, GoldenResult* result,
                         std::string* error);

}  // namespace gruwb::tools
