#pragma once
// Datasets for the board: UEA/sktime .ts files read on the host and packed
// into the GWDS blob the board trains on (messages.h). Host-only.

#include <cstdint>
#include <string>
#include <vector>

namespace gruwb::serial {

struct TimeSeriesDataset {
  std::vector<std::string> class_labels;  // @classLabel order = class index
  int dimensions = 0;
  int length = 0;
  // samples[i][d * length + t]
  std::vector<std::vector<float>> samples;
  std::vector<uint32_t> labels;
};

// Reads an equal-length .ts file; errors name the file and line.
bool read_ts_file(const std::string& path, TimeSeriesDataset* out, std::string* error);

// Packs the first `sample_limit` samples (0 = all) as windows of `timesteps`
// x `features` (time-major, as a [1, T, F] model input takes them): the
// first `timesteps` steps of the first `features` channels.
bool make_dataset_blob(const TimeSeriesDataset& data, int timesteps, int features,
                       uint32_t sample_limit, std::vector<uint8_t>* blob, std::string* error);

}  // namespace gruwb::serial
