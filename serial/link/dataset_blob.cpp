#include "serial/link/dataset_blob.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "serial/protocol/messages.h"

namespace gruwb::serial {

bool read_ts_file(const std::string& path, TimeSeriesDataset* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  *out = TimeSeriesDataset();
  std::string line;
  bool in_data = false;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(line_number) + ": ";
    if (!in_data) {
      std::istringstream words(line);
      std::string key;
      words >> key;
      for (char& c : key) c = static_cast<char>(tolower(c));
      if (key == "@classlabel") {
        std::string flag, label;
        words >> flag;
        while (words >> label) out->class_labels.push_back(label);
      } else if (key == "@data") {
        in_data = true;
      }
      continue;
    }
    // dim0 values : dim1 values : ... : class label
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t colon; (colon = line.find(':', start)) != std::string::npos; start = colon + 1) {
      parts.push_back(line.substr(start, colon - start));
    }
    parts.push_back(line.substr(start));
    if (parts.size() < 2) {
      *error = where + "expected 'values:...:label'";
      return false;
    }
    const int dimensions = static_cast<int>(parts.size()) - 1;
    std::vector<float> values;
    int length = -1;
    for (int d = 0; d < dimensions; ++d) {
      std::istringstream items(parts[d]);
      std::string item;
      int count = 0;
      while (std::getline(items, item, ',')) {
        char* end = nullptr;
        const float v = std::strtof(item.c_str(), &end);
        if (end == item.c_str() || item == "?") {
          *error = where + "dimension " + std::to_string(d) + ": '" + item + "' is not a number";
          return false;
        }
        values.push_back(v);
        ++count;
      }
      if (length >= 0 && count != length) {
        *error = where + "dimension " + std::to_string(d) + " has " + std::to_string(count) +
                 " values, dimension 0 has " + std::to_string(length) +
                 " (unequal lengths unsupported)";
        return false;
      }
      length = count;
    }
    if (out->samples.empty()) {
      out->dimensions = dimensions;
      out->length = length;
    } else if (dimensions != out->dimensions || length != out->length) {
      *error = where + "shape " + std::to_string(dimensions) + "x" + std::to_string(length) +
               " differs from the first sample's " + std::to_string(out->dimensions) + "x" +
               std::to_string(out->length);
      return false;
    }
    const std::string label = parts.back();
    size_t index = 0;
    while (index < out->class_labels.size() && out->class_labels[index] != label) ++index;
    if (index == out->class_labels.size()) {
      *error = where + "class '" + label + "' is not in @classLabel";
      return false;
    }
    out->samples.push_back(std::move(values));
    out->labels.push_back(static_cast<uint32_t>(index));
  }
  if (out->samples.empty()) {
    *error = path + ": no samples (missing @data?)";
    return false;
  }
  return true;
}

bool make_dataset_blob(const TimeSeriesDataset& data, int timesteps, int features,
                       uint32_t sample_limit, std::vector<uint8_t>* blob, std::string* error) {
  if (timesteps > data.length || features > data.dimensions || timesteps <= 0 || features <= 0) {
    *error = "dataset has " + std::to_string(data.length) + " steps x " +
             std::to_string(data.dimensions) + " channels, the model needs " +
             std::to_string(timesteps) + " x " + std::to_string(features);
    return false;
  }
  uint32_t count = static_cast<uint32_t>(data.samples.size());
  if (sample_limit > 0 && sample_limit < count) count = sample_limit;
  DatasetHeader header;
  header.sample_count = count;
  header.input_elements = static_cast<uint32_t>(timesteps * features);
  header.classes = static_cast<uint32_t>(data.class_labels.size());
  blob->assign(kDatasetHeaderBytes + header.sample_bytes() * count, 0);
  WireWriter w(blob->data(), blob->size());
  w.u32(kDatasetMagic);
  w.u32(header.version);
  w.u32(header.sample_count);
  w.u32(header.input_elements);
  w.u32(header.classes);
  for (uint32_t i = 0; i < count; ++i) {
    for (int t = 0; t < timesteps; ++t) {
      for (int f = 0; f < features; ++f) w.f32(data.samples[i][f * data.length + t]);
    }
    w.u32(data.labels[i]);
  }
  return w.ok;
}

}  // namespace gruwb::serial
