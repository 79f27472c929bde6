#include "engine/tools/golden.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "engine/tools/npy.h"

namespace gruwb::tools {
namespace {

namespace fs = std::filesystem;

bool read_arrays(const fs::path& dir, const char* kind, std::vector<NpyArray>* arrays,
                 std::string* error) {
  for (int i = 0;; ++i) {
    const fs::path path = dir / (kind + std::to_string(i) + ".npy");
    std::error_code ec;
    if (!fs::exists(path, ec)) return true;
    NpyArray a;
    if (!read_npy(path.string(), &a, error)) return false;
    arrays->push_back(std::move(a));
  }
}

}  // namespace

bool compare_with_golden(ModelRunner& runner, const std::string& dir, GoldenResult* result,
                         std::string* error) {
  *result = GoldenResult();
  std::vector<NpyArray> inputs, outputs;
  if (!read_arrays(dir, "input", &inputs, error) || !read_arrays(dir, "output", &outputs, error)) {
    return false;
  }
  if (inputs.empty() || outputs.empty()) return true;
  result->found = true;
  if (inputs.size() != static_cast<size_t>(runner.input_count()) ||
      outputs.size() != static_cast<size_t>(runner.output_count())) {
    *error = dir + ": golden files do not match the model's inputs/outputs";
    return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!runner.set_input(static_cast<int>(i), inputs[i], error)) return false;
  }
  if (!runner.invoke(error)) return false;
  result->equal = true;
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::vector<double> ours, reference;
    if (!npy_values(runner.output(static_cast<int>(k)), "output", &ours, error) ||
        !npy_values(outputs[k], "golden", &reference, error)) {
      return false;
    }
    if (ours.size() != reference.size()) {
      *error = "output " + std::to_string(k) + " has " + std::to_string(ours.size()) +
               " values, golden " + std::to_string(reference.size());
      return false;
    }
    const bool integer = outputs[k].dtype.find('f') == std::string::npos;
    double worst = 0;
    for (size_t e = 0; e < ours.size(); ++e) {
      const double diff = std::fabs(ours[e] - reference[e]);
      worst = std::max(worst, integer ? diff : diff / std::max(1.0, std::fabs(reference[e])));
    }
    result->worst = std::max(result->worst, worst);
    result->equal &= worst <= (integer ? 1.0 : 1e-5);
  }
  return true;
}

}  // namespace gruwb::tools
