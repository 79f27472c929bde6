#include "engine/tools/arena_figures.h"

#include <algorithm>
#include <vector>

#include "engine/tools/arena_buffer.h"
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

}  // namespace gruwb::tools
