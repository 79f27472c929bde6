#pragma once
// `quantize`: post-training quantization of a model with representative data
// from a dataset (engine/tools/quantizer.h): calibrates on the samples,
// rewrites the model (int8, int16x8 or dynamic range), writes it atomically
// and reports the quantized ops, the ops kept float and why, sizes and arena
// before/after and the largest output difference float vs quantized. The CLI
// (`gruwb quantize`) and the experiments call it.

#include <cstdint>
#include <string>
#include <vector>

#include "app/core/dataset.h"
#include "engine/tools/quantizer.h"

namespace gruwb::app {

struct DatasetQuantizeOptions {
  tools::QuantizeOptions quantize;
  // Representative samples taken from the split, evenly spaced over it (every class gets
  // its share); 0 = all of them.
  int max_samples = 200;
};

// The samples quantize_for_dataset uses: `count` (0 = all) of the split's N samples, evenly
// spaced. Each sample is x[i] (T*F floats) for the model's one input.
std::vector<tools::RepresentativeSample> representative_samples(const PreparedSplit& split,
                                                                int count);

// Quantizes `model_bytes` (one input [1, T, F]) with `representative.x` ([N, T, F]) as the
// calibration data. False with one line in `error` when the model or the data do not fit.
bool quantize_for_dataset(const std::vector<uint8_t>& model_bytes,
                          const PreparedSplit& representative,
                          const DatasetQuantizeOptions& options, tools::QuantizeResult* out,
                          std::string* error);

struct QuantizeRequest {
  std::string model_path;
  std::string data_path;    // a .npy of inputs (N, ...) or any dataset load_dataset reads
  std::string output_path;  // its extension (.tflite/.circle) picks the format
  DatasetQuantizeOptions options;
  bool normalize = true;  // datasets (not .npy): normalise with the training statistics
  // Datasets: how series of another length reach the model's T (calibration data only).
  LengthPolicy length_policy = LengthPolicy::kResample;
  bool json = false;
};

// kExitOk, kExitBadInput (unreadable model or data, one line in `err`) or kExitFailure (the
// output cannot be written).
int run_quantize(const QuantizeRequest& request, std::string* out, std::string* err);

std::string quantize_report_text(const QuantizeRequest& request,
                                 const tools::QuantizeResult& result);
std::string quantize_report_json(const QuantizeRequest& request,
                                 const tools::QuantizeResult& result);

}  // namespace gruwb::app
