#include "engine/tools/arena_figures.h"

#include <algorithm>
#include <vector>

#include "engine/tools/arena_buffer.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/memory_budget.h"
#include "engine/tools/model_runner.h"

namespace gruwb::tools {
namespace {

TrainingArena plan_training(const Model& model, const char* scope) {
  TrainingArena result;
  result.scope = scope;
  TrainingConfig config;
  parse_trainable_scope(scope, &config);
  ArenaBuffer storage;
  Trainer trainer;
  result.ok = prepare_trainer(model, config, &storage, &trainer, &result.error);
  if (result.ok) {
    result.memory = trainer.memory();
    result.weight_tensors = trainer.weight_count();
  }
  return result;
}

}  // namespace

// Trainer::prepare reports the exact size after a too-small attempt; a
// second attempt with that size must succeed.
bool prepare_trainer(const Model& model, const TrainingConfig& config, ArenaBuffer* storage,
                     Trainer* trainer, std::string* error) {
  size_t size = 64 * 1024;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (!storage->allocate(size)) {
      *error = "out of memory: cannot allocate " + std::to_string(size) + " bytes of arena";
      return false;
    }
    const Status status = trainer->prepare(model, config, storage->data(), size);
    if (status.ok()) return true;
    if (status.code() != StatusCode::kOutOfMemory) {
      *error = status.message();
      return false;
    }
    size = std::max(trainer->arena_bytes_needed(), size * 4);
    if (!within_memory_budget(size, trainer->interpreter().arena_usage(), error)) return false;
  }
  *error = "training arena could not be sized";
  return false;
}

ArenaFigures measure_arenas(const Model& model) {
  ArenaFigures figures;
  tools::ModelRunner runner;
  std::string error;
  figures.inference_ok = runner.prepare(model, &error);
  if (figures.inference_ok) {
    figures.inference = runner.arena_usage();
    figures.inference_bytes = runner.arena_bytes();
  } else {
    figures.inference_error = error;
  }
  figures.training_fc = plan_training(model, "fc");
  figures.training_all = plan_training(model, "all");
  return figures;
}

std::vector<ArenaRow> arena_rows(const ArenaFigures& figures) {
  std::vector<ArenaRow> rows;
  const auto part = [&rows](const char* key, const char* label, size_t bytes) {
    rows.push_back({1, key, label, true, bytes, ""});
  };
  if (figures.inference_ok) {
    rows.push_back({0, "inference", "Inference", true, figures.inference_bytes, ""});
    part("tables", "tables", figures.inference.metadata_bytes);
    part("persistent", "persistent (state, kernels)", figures.inference.persistent_bytes);
    part("activations", "activations (shared)", figures.inference.activation_bytes);
  } else {
    rows.push_back({0, "inference", "Inference", false, 0, figures.inference_error});
  }
  for (const TrainingArena* t : {&figures.training_fc, &figures.training_all}) {
    ArenaRow top{0, "training_" + t->scope, "Training, scope " + t->scope, t->ok, 0, t->error};
    if (!t->ok) {
      rows.push_back(top);
      continue;
    }
    const TrainingMemory& m = t->memory;
    top.bytes = m.total;
    top.note = std::to_string(t->weight_tensors) +
               (t->weight_tensors == 1 ? " weight tensor" : " weight tensors");
    rows.push_back(top);
    part("weights", "trainable weight copies", m.weight_bytes);
    part("gradients", "gradient accumulators", m.gradient_bytes);
    part("optimizer", "optimizer state (Adam m, v)", m.optimizer_bytes);
    part("activations", "activations, gradients, tapes", m.activation_bytes);
    part("other", "tables, labels", m.other_bytes);
  }
  return rows;
}

std::string arena_rows_to_text(const std::vector<ArenaRow>& rows) {
  size_t width = 0;
  for (const ArenaRow& r : rows) width = std::max(width, 2 * r.depth + r.label.size());
  std::string text = "Arena (RAM, bytes, from the engine's planner):\n";
  for (const ArenaRow& r : rows) {
    std::string line(2 + 2 * static_cast<size_t>(r.depth), ' ');
    line += r.label;
    line.resize(2 + width + 2, ' ');
    if (r.ok) {
      const std::string number = std::to_string(r.bytes);
      line += std::string(number.size() < 12 ? 12 - number.size() : 0, ' ') + number;
      if (!r.note.empty()) line += "  " + r.note;
    } else {
      line += "   not planned: " + r.note;
    }
    text += line + "\n";
  }
  return text;
}

void write_arena_json(const std::vector<ArenaRow>& rows, JsonWriter* json) {
  json->begin_object();
  bool open = false;
  for (const ArenaRow& r : rows) {
    if (r.depth == 0) {
      if (open) json->end_object();
      json->key(r.key).begin_object();
      open = true;
      json->key("ok").value(r.ok);
      if (r.ok) {
        json->key("bytes").value(r.bytes);
      } else {
        json->key("error").value(r.note);
      }
    } else {
      json->key(r.key).value(r.bytes);
    }
  }
  if (open) json->end_object();
  json->end_object();
}

}  // namespace gruwb::tools
