#pragma once
// The RAM a model's arena needs on a board, for inference and for training
// (scope "fc": only the last Dense layer; scope "all": every weight), from
// the engine's own planner (Interpreter / Trainer arena_bytes_needed), so
// they are what a board has to provide, not estimates. The size view shows
// them (views/size_view.h).

#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/interpreter.h"
#include "engine/train/trainer.h"

namespace gruwb::tools {

struct TrainingArena {
  std::string scope;  // "fc", "all"
  bool ok = false;
  std::string error;  // why training cannot be planned (unsupported op, ...)
  int weight_tensors = 0;
  TrainingMemory memory;
};

struct ArenaFigures {
  bool inference_ok = false;
  std::string inference_error;
  ArenaUsage inference;
  size_t inference_bytes = 0;
  TrainingArena training_fc;
  TrainingArena training_all;
};

class ArenaBuffer;

// Prepares `trainer` for `config` in `storage` (allocated here), within the host's memory budget
// (memory_budget.h); false with one line in `error` otherwise.
bool prepare_trainer(const Model& model, const TrainingConfig& config, ArenaBuffer* storage,
                     Trainer* trainer, std::string* error);

// Plans the model for inference and for training (Adam, cross entropy) and
// reports the exact arena sizes.
ArenaFigures measure_arenas(const Model& model);

// The figures as the Size panel and `gruwb inspect --arena` show them: a row per arena
// (depth 0: inference, training scope fc, training scope all) followed by its parts (depth 1).
// A row whose arena cannot be planned has ok = false and the reason in `note`.
struct ArenaRow {
  int depth = 0;
  std::string key;    // JSON name: "inference", "training_fc", "tables", "optimizer", ...
  std::string label;  // "Inference", "Training, scope fc", "optimizer state (Adam m, v)", ...
  bool ok = true;
  size_t bytes = 0;
  std::string note;  // "3 weight tensors"; the error when !ok
};
std::vector<ArenaRow> arena_rows(const ArenaFigures& figures);
// The rows as an aligned text table (`gruwb inspect --arena`).
std::string arena_rows_to_text(const std::vector<ArenaRow>& rows);
class JsonWriter;
// {"inference": {"ok": true, "bytes": N, "tables": N, ...}, "training_fc": {...}, ...}
void write_arena_json(const std::vector<ArenaRow>& rows, JsonWriter* json);

}  // namespace gruwb::tools
