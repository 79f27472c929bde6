#include "serial/link/host_reference.h"

#include <cmath>
#include <cstring>
#include <memory>

#include "engine/model/model.h"
#include "engine/train/trainer.h"
#include "serial/firmware/training_run.h"

namespace gruwb::serial {
namespace {

struct WeightEntry {
  uint32_t tensor = 0;
  uint32_t bytes = 0;
  const uint8_t* data = nullptr;
};

bool parse_weight_blob(const std::vector<uint8_t>& blob, std::vector<WeightEntry>* out,
                       std::string* error) {
  WireReader r(blob.data(), blob.size());
  if (r.u32() != kWeightsMagic) {
    *error = "weights blob: bad magic";
    return false;
  }
  const uint32_t count = r.u32();
  out->clear();
  for (uint32_t i = 0; i < count && r.ok; ++i) {
    WeightEntry e;
    e.tensor = r.u32();
    e.bytes = r.u32();
    if (!r.ok || e.bytes > r.remaining()) {
      *error = "weights blob: entry " + std::to_string(i) + " runs past the end";
      return false;
    }
    e.data = r.rest();
    std::vector<uint8_t> skip(e.bytes);
    r.bytes(skip.data(), e.bytes);
    out->push_back(e);
  }
  if (!r.ok || r.remaining() != 0) {
    *error = "weights blob: truncated or trailing bytes";
    return false;
  }
  return true;
}

}  // namespace

bool run_on_host(const std::vector<uint8_t>& model_bytes, const std::vector<uint8_t>& dataset,
                 const TrainingSettings& settings, ReferenceRun* out, std::string* error) {
  // 16-byte aligned copies, as on the board.
  std::vector<uint8_t> storage(model_bytes.size() + 16);
  uint8_t* model_data =
      storage.data() + ((16 - (reinterpret_cast<uintptr_t>(storage.data()) & 15)) & 15);
  memcpy(model_data, model_bytes.data(), model_bytes.size());
  Model model;
  Status s = Model::load(model_data, model_bytes.size(), &model);
  if (!s.ok()) {
    *error = std::string("model: ") + s.message();
    return false;
  }
  auto trainer = std::make_unique<Trainer>();
  std::vector<uint8_t> arena(64u << 20);
  uint8_t* arena_data =
      arena.data() + ((16 - (reinterpret_cast<uintptr_t>(arena.data()) & 15)) & 15);
  s = trainer->prepare(model, settings.config, arena_data, arena.size() - 16);
  if (!s.ok()) {
    *error = std::string("host training: ") + s.message();
    return false;
  }
  DatasetHeader header;
  if (!read_dataset_header(dataset.data(), dataset.size(), &header)) {
    *error = "dataset blob: bad header";
    return false;
  }
  std::vector<uint32_t> order(header.sample_count);
  TrainingRun run;
  s = run.begin(trainer.get(), settings, dataset.data(), dataset.size(), order.data(),
                static_cast<uint32_t>(order.size()));
  if (!s.ok()) {
    *error = s.message();
    return false;
  }
  out->metrics.clear();
  uint64_t clock = 0;
  while (!run.done()) {
    Metric metric;
    bool due = false;
    s = run.step(clock += 1000, &metric, &due);
    if (!s.ok()) {
      *error = std::string("host training: ") + s.message();
      return false;
    }
    if (due) out->metrics.push_back(metric);
  }
  out->weights.resize(weights_blob_bytes(*trainer));
  read_weights_blob(*trainer, 0, out->weights.data(), out->weights.size());
  const TrainingMemory m = trainer->memory();
  out->arena_bytes = trainer->arena_bytes_needed();
  out->tape_bytes = m.tape_bytes;
  out->weight_bytes = m.weight_bytes;
  out->gradient_bytes = m.gradient_bytes;
  out->optimizer_bytes = m.optimizer_bytes;
  return true;
}

bool compare_weight_blobs(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                          double* max_relative, std::string* error, float floor) {
  std::vector<WeightEntry> ea, eb;
  if (!parse_weight_blob(a, &ea, error) || !parse_weight_blob(b, &eb, error)) return false;
  if (ea.size() != eb.size()) {
    *error =
        "weights: " + std::to_string(ea.size()) + " vs " + std::to_string(eb.size()) + " tensors";
    return false;
  }
  *max_relative = 0;
  for (size_t i = 0; i < ea.size(); ++i) {
    if (ea[i].tensor != eb[i].tensor || ea[i].bytes != eb[i].bytes) {
      *error = "weights: entry " + std::to_string(i) + " differs in tensor or size";
      return false;
    }
    const size_t n = ea[i].bytes / 4;
    for (size_t k = 0; k < n; ++k) {
      float x, y;
      memcpy(&x, ea[i].data + 4 * k, 4);
      memcpy(&y, eb[i].data + 4 * k, 4);
      const double scale = std::max({std::fabs(x), std::fabs(y), floor});
      *max_relative = std::max(*max_relative, std::fabs(static_cast<double>(x) - y) / scale);
    }
  }
  return true;
}

bool apply_weight_blob(const std::vector<uint8_t>& model_bytes, const std::vector<uint8_t>& weights,
                       std::vector<uint8_t>* out, std::string* error) {
  std::vector<WeightEntry> entries;
  if (!parse_weight_blob(weights, &entries, error)) return false;
  *out = model_bytes;
  Model model;
  const Status s = Model::load(out->data(), out->size(), &model);
  if (!s.ok()) {
    *error = std::string("model: ") + s.message();
    return false;
  }
  const SubgraphView main = model.main_subgraph();
  for (const WeightEntry& e : entries) {
    if (static_cast<int>(e.tensor) >= main.tensor_count) {
      *error = "weights: tensor " + std::to_string(e.tensor) + " is not in the model";
      return false;
    }
    const TensorView t = main.tensor(static_cast<int>(e.tensor));
    if (t.data.size != e.bytes) {
      *error = "weights: tensor " + std::to_string(e.tensor) + " '" + t.name + "' has " +
               std::to_string(t.data.size) + " bytes in the model, " + std::to_string(e.bytes) +
               " from the board";
      return false;
    }
    const size_t at = static_cast<size_t>(t.data.data - out->data());
    memcpy(out->data() + at, e.data, e.bytes);
  }
  return true;
}

}  // namespace gruwb::serial
