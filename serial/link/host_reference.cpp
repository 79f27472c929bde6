#include "serial/link/host_reference.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "engine/model/model.h"
#include "engine/train/trainer.h"
#include "serial/firmware/inference_bench.h"
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

bool compare_runs(const std::vector<Metric>& board, const std::vector<uint8_t>& board_weights,
                  const ReferenceRun& host, RunAgreement* out, std::string* error) {
  *out = RunAgreement();
  const auto same_point = [](const Metric& a, const Metric& b) {
    return a.epoch == b.epoch && a.samples == b.samples;
  };
  for (const Metric& h : host.metrics) {
    if (h.flags & kMetricEpochEnd) ++out->epoch_ends;
  }
  for (const Metric& b : board) {
    for (const Metric& h : host.metrics) {
      if (!same_point(b, h)) continue;
      ++out->matched;
      if (h.flags & kMetricEpochEnd) ++out->epoch_ends_matched;
      const double scale = std::max({std::fabs(b.loss), std::fabs(h.loss), 1e-6f});
      out->loss = std::max(out->loss, std::fabs(static_cast<double>(b.loss) - h.loss) / scale);
      const double apart = std::fabs(static_cast<double>(b.accuracy) - h.accuracy) * b.samples;
      out->accuracy_samples = std::max(out->accuracy_samples, static_cast<int>(std::lround(apart)));
      break;
    }
  }
  if (!compare_weight_blobs(board_weights, host.weights, &out->weights, error)) return false;
  out->agree = out->epoch_ends_matched == out->epoch_ends && out->loss <= kRunTolerance &&
               out->accuracy_samples <= 1 && out->weights <= kRunTolerance;
  return true;
}

std::string RunAgreement::summary() const {
  char text[256];
  std::snprintf(text, sizeof text,
                "largest relative difference of losses %.3g, of weights %.3g; accuracies %d "
                "samples apart over %zu metrics, %zu of %zu epoch ends (%s)",
                loss, weights, accuracy_samples, matched, epoch_ends_matched, epoch_ends,
                agree ? "agree to 1e-4" : "DISAGREE: limit 1e-4");
  return text;
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

bool bench_on_host(const std::vector<uint8_t>& model, const BenchRequest& request, BenchReply* out,
                   std::string* error) {
  Model view;
  Status s = Model::load(model.data(), model.size(), &view);
  if (!s.ok()) {
    *error = std::string("model: ") + s.message();
    return false;
  }
  BenchClock clock;
  clock.now = [](void*) {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  };
  // As much RAM as the board's pool at most; the host has it to spare.
  std::vector<uint8_t> ram(static_cast<size_t>(request.runs) * 4 + (16u << 20) + 16);
  uint8_t* aligned = ram.data() + ((16 - (reinterpret_cast<uintptr_t>(ram.data()) & 15)) & 15);
  auto interpreter = std::make_unique<Interpreter>();
  s = run_inference_bench(view, request, aligned, ram.size() - 16, clock, interpreter.get(), out);
  if (!s.ok()) {
    *error = s.message();
    return false;
  }
  return true;
}

bool compare_bench_outputs(const BenchReply& board, const BenchReply& host, double* max_difference,
                           bool* identical, std::string* error) {
  if (board.output_type != host.output_type || board.output_bytes != host.output_bytes ||
      board.output_count != host.output_count) {
    *error = "the board's output 0 (type " + std::to_string(board.output_type) + ", " +
             std::to_string(board.output_bytes) + " bytes) is not the host's (type " +
             std::to_string(host.output_type) + ", " + std::to_string(host.output_bytes) +
             " bytes): another model?";
    return false;
  }
  *identical = board.output_crc32 == host.output_crc32;
  *max_difference = 0;
  const bool is_float = board.output_type == static_cast<uint8_t>(TensorType::FLOAT32);
  const size_t step = is_float ? 4 : 1;
  for (size_t at = 0; at + step <= board.output_count; at += step) {
    double a, b;
    if (is_float) {
      float fa, fb;
      memcpy(&fa, board.output + at, 4);
      memcpy(&fb, host.output + at, 4);
      a = fa;
      b = fb;
    } else if (board.output_type == static_cast<uint8_t>(TensorType::INT8)) {
      a = static_cast<int8_t>(board.output[at]);
      b = static_cast<int8_t>(host.output[at]);
    } else {
      a = board.output[at];
      b = host.output[at];
    }
    const double d = std::fabs(a - b);
    if (!(d <= *max_difference)) *max_difference = d;  // NaN sticks
  }
  return true;
}

}  // namespace gruwb::serial
