#include "serial/link/dataset_blob.h"

#include "engine/model/checked_size.h"
#include "serial/protocol/messages.h"

namespace gruwb::serial {

bool make_dataset_blob(const std::vector<float>& inputs, const std::vector<int>& labels,
                       uint32_t input_elements, uint32_t classes, std::vector<uint8_t>* blob,
                       std::string* error) {
  DatasetHeader header;
  header.input_elements = input_elements;
  header.classes = classes;
  size_t values = 0, bytes = 0;
  // The limits read_dataset_header (the board's check) applies.
  if (labels.empty() || labels.size() > (1u << 24) || input_elements == 0 ||
      input_elements > (1u << 24) || classes == 0 ||
      !checked_mul(labels.size(), size_t{input_elements}, &values) || values != inputs.size() ||
      !checked_mul(header.sample_bytes(), labels.size(), &bytes) ||
      !checked_add(bytes, kDatasetHeaderBytes, &bytes)) {
    *error = "dataset blob: " + std::to_string(labels.size()) + " samples of " +
             std::to_string(input_elements) + " values (" + std::to_string(inputs.size()) +
             " given) and " + std::to_string(classes) +
             " classes do not make a blob (1..2^24 samples and values per sample)";
    return false;
  }
  header.sample_count = static_cast<uint32_t>(labels.size());
  blob->assign(bytes, 0);
  WireWriter w(blob->data(), blob->size());
  w.u32(kDatasetMagic);
  w.u32(header.version);
  w.u32(header.sample_count);
  w.u32(header.input_elements);
  w.u32(header.classes);
  const float* x = inputs.data();
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || static_cast<uint32_t>(labels[i]) >= classes) {
      *error = "dataset blob: sample " + std::to_string(i) + " has class " +
               std::to_string(labels[i]) + ", not one of 0.." + std::to_string(classes - 1);
      return false;
    }
    for (uint32_t k = 0; k < input_elements; ++k) w.f32(*x++);
    w.u32(static_cast<uint32_t>(labels[i]));
  }
  return w.ok;
}

}  // namespace gruwb::serial
