#include "app/core/hparams.h"

#include <cstdio>
#include <cstdlib>

#include "app/core/text_table.h"
#include "engine/tools/cells/cell_registry.h"

namespace gruwb::app {
namespace {

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "units=N" of a build spec (results saved before runs kept their units); 0 when absent.
int build_units(const std::string& build) {
  const size_t at = build.find("units=");
  if (at == std::string::npos || (at > 0 && build[at - 1] != ',')) return 0;
  return std::atoi(build.c_str() + at + 6);
}

std::string run_state(const StageRun& run) {
  if (!run.error.empty()) return "failed: " + run.error;
  if (run.training.outcome == TrainingOutcome::kCancelled || !run.evaluated) return "stopped";
  if (run.training.outcome == TrainingOutcome::kEarlyStopped) return "early stopped";
  return "finished";
}

std::string fixed(const char* format, double v) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

}  // namespace

std::string hparams_run_name(const ExperimentSpec& spec, const std::string& cell,
                             const std::string& stage, uint64_t seed) {
  std::string name = spec.name + " / " + stage;
  if (!spec.compare_cells.empty() || !spec.compare_models.empty()) name += " " + cell;
  if (spec.seeds > 1) name += " s" + std::to_string(seed);
  return name;
}

std::vector<HparamsRow> hparams_rows(const ExperimentResult& result) {
  const ExperimentSpec& spec = result.spec;
  std::vector<HparamsRow> rows;
  for (const StageRun& run : result.runs) {
    HparamsRow row;
    row.run = hparams_run_name(spec, run.cell, run.stage, run.seed);
    row.experiment = spec.name;
    row.stage = run.stage;
    // A built cell's row is named by the cell; a model file's by its file.
    const tools::CellDescriptor* built = tools::find_cell(run.cell);
    row.model = built ? "built" : run.cell == "model" ? file_name(spec.model_path) : run.cell;
    const tools::CellDescriptor* type =
        run.cell_type.empty() ? built : tools::find_cell(run.cell_type);
    if (type) row.cell = type->display_name;
    row.units = run.units > 0 ? run.units : built ? build_units(spec.build) : 0;
    for (const StageSpec& stage : spec.stages) {
      if (stage.name != run.stage) continue;
      row.optimizer = optimizer_name(stage.optimizer);
      row.learning_rate = stage.learning_rate;
      row.batch_size = stage.batch_size;
      const bool trains = stage.scope != "init" && !is_quantization_scope(stage.scope);
      row.epochs = trains ? stage.epochs : 0;
      break;
    }
    row.seed = run.seed;
    row.state = run_state(run);
    row.evaluated = run.evaluated;
    row.accuracy = run.test_accuracy;
    row.cross_entropy = run.test_loss;
    row.trainable_parameters = run.training.trainable_parameters;
    row.model_bytes = run.model_bytes;
    row.training_memory_bytes = row.epochs > 0 ? run.training.memory.total : 0;
    row.seconds = run.seconds;
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::string> hparams_table_header(bool csv) {
  // clang-format off
  if (csv) {
    return {"run", "experiment", "stage", "model", "cell", "units", "optimizer", "learning_rate",
            "batch_size", "epochs", "seed", "state", "test_accuracy", "test_cross_entropy",
            "trainable_parameters", "model_bytes", "training_memory_bytes", "seconds"};
  }
  // Short titles: the table fits a window 1366 pixels wide.
  return {"run", "experiment", "stage", "model", "cell", "units", "optimizer", "lr", "batch",
          "epochs", "seed", "state", "accuracy", "CE", "params", "model bytes", "train memory",
          "seconds"};
  // clang-format on
}

std::vector<std::string> hparams_table_row(const HparamsRow& row, bool plain_numbers) {
  const std::string missing = plain_numbers ? "" : "-";
  const auto count = [&](uint64_t v) { return v > 0 ? std::to_string(v) : missing; };
  const auto figure = [&](const char* format, double v) {
    if (!row.evaluated) return missing;
    return plain_numbers ? shortest_text(v) : fixed(format, v);
  };
  return {row.run,
          row.experiment,
          row.stage,
          row.model,
          row.cell.empty() ? missing : row.cell,
          count(row.units > 0 ? uint64_t(row.units) : 0),
          row.optimizer,
          shortest_text(row.learning_rate),
          std::to_string(row.batch_size),
          std::to_string(row.epochs),
          std::to_string(row.seed),
          row.state,
          figure("%.4f", row.accuracy),
          figure("%.4f", row.cross_entropy),
          std::to_string(row.trainable_parameters),
          count(row.model_bytes),
          count(row.training_memory_bytes),
          plain_numbers ? shortest_text(row.seconds) : fixed("%.2f", row.seconds)};
}

std::string hparams_csv(const std::vector<HparamsRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const HparamsRow& row : rows) cells.push_back(hparams_table_row(row, true));
  return csv_table(hparams_table_header(true), cells);
}

}  // namespace gruwb::app
