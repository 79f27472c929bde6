#include "app/core/corpus.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "app/core/inspect.h"
#include "app/core/loop_plan.h"
#include "engine/tools/arena_buffer.h"
#include "engine/tools/dequantize.h"
#include "engine/tools/fuser.h"
#include "engine/tools/golden.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/train/loss_output.h"
#include "engine/train/trainer.h"

namespace gruwb::app {
namespace {

namespace fs = std::filesystem;

// `runner`: the model, prepared. `golden` gets "" (no golden files), "equal", "differs by <x>"
// or the error.
void check_golden(tools::ModelRunner& runner, const fs::path& dir, std::string* golden_text,
                  double* golden_error) {
  tools::GoldenResult golden;
  std::string error;
  if (!tools::compare_with_golden(runner, dir.string(), &golden, &error)) {
    *golden_text = error;
    return;
  }
  if (!golden.found) return;
  *golden_error = golden.worst;
  char text[64];
  std::snprintf(text, sizeof text, "differs by %.3g", golden.worst);
  *golden_text = golden.equal ? "equal" : text;
}

// The fused form `gruwb run` would run instead of the file, as it runs it (packed weights),
// against the same golden files.
void check_fused_golden(const std::vector<uint8_t>& file, const fs::path& dir, CorpusRow* row) {
  const LoopPlan plan = plan_loops(file);
  if (!plan.fused) return;
  row->runs_fused = true;
  Model model;
  tools::ModelRunner runner;
  runner.set_packed_weights(true);
  if (!Model::load(plan.bytes.data(), plan.bytes.size(), &model).ok() ||
      !runner.prepare(model, &row->fused_golden)) {
    if (row->fused_golden.empty()) row->fused_golden = "the fused form does not load";
    return;
  }
  check_golden(runner, dir, &row->fused_golden, &row->fused_golden_error);
}

// One MSE step towards 0.5 from zero inputs: a finite loss and finite gradients. A hybrid
// model trains float32 copies of its INT8 weights, a full-integer model its float form, as
// `gruwb train` does.
void check_training(const std::vector<uint8_t>& file_bytes, CorpusRow* row) {
  std::vector<uint8_t> bytes;
  tools::DequantizeResult dequantized;
  std::string error;
  if (!tools::float_training_model(file_bytes, &bytes, &dequantized, &error)) {
    row->train_error = error;
    return;
  }
  row->dequantized_weights = dequantized.tensors;
  row->integer_tensors = dequantized.integer_tensors;
  Model model;
  if (!Model::load(bytes.data(), bytes.size(), &model).ok()) {
    row->train_error = "the dequantized model does not load";
    return;
  }
  TrainingConfig config;
  config.loss = Loss::kMeanSquaredError;
  int32_t output = -1;
  Status s = choose_loss_output(model, LossOutputRequest(), &output);
  if (!s.ok()) {
    row->train_error = s.message();
    return;
  }
  config.loss_output = output;
  tools::ArenaBuffer arena;
  Trainer trainer;
  for (size_t bytes = 1u << 20; bytes <= (256u << 20); bytes *= 4) {
    if (!arena.allocate(bytes)) {
      row->train_error =
          "out of memory: cannot allocate " + std::to_string(bytes) + " bytes of arena";
      return;
    }
    s = trainer.prepare(model, config, arena.data(), arena.size());
    if (s.code() != StatusCode::kOutOfMemory) break;
  }
  if (!s.ok()) {
    row->train_error = s.message();
    return;
  }
  std::fill(trainer.label(), trainer.label() + trainer.label_count(), 0.5f);
  float loss = 0;
  s = trainer.accumulate(&loss);
  if (!s.ok()) {
    row->train_error = s.message();
    return;
  }
  bool finite = std::isfinite(loss);
  for (int w = 0; w < trainer.weight_count(); ++w) {
    const Tensor* g = trainer.weight_gradient(w);
    for (int64_t i = 0; finite && i < g->elements(); ++i) finite = std::isfinite(g->f32()[i]);
  }
  row->trained_weights = trainer.weight_count();
  row->trains = finite && trainer.weight_count() > 0;
  if (!row->trains)
    row->train_error = finite ? "no trainable float weights" : "non-finite gradients";
}

CorpusRow check_model(const fs::path& file, const fs::path& golden_root) {
  CorpusRow row;
  row.file = file.filename().string();
  std::vector<uint8_t> bytes;
  std::string error;
  if (!tools::read_file_bytes(file.string(), &bytes, &error)) {
    row.run_error = error;
    return row;
  }
  row.bytes_before = row.bytes_after = bytes.size();
  Model model;
  Status s = Model::load(bytes.data(), bytes.size(), &model);
  if (!s.ok()) {
    row.run_error = s.message();
    return row;
  }
  tools::ModelRunner runner;
  row.runs = runner.prepare(model, &row.run_error);
  if (row.runs) row.run_error.clear();
  if (row.runs) {
    check_golden(runner, golden_root / file.stem(), &row.golden, &row.golden_error);
    check_fused_golden(bytes, golden_root / file.stem(), &row);
  }
  tools::FuseResult fused;
  if (tools::fuse_model(bytes, tools::FuseOptions(), &fused, &error)) {
    row.cells_found = static_cast<int>(fused.cells.size());
    row.cells_fused = fused.fused_count();
    row.bytes_after = fused.after.bytes;
    for (const tools::CellOutcome& c : fused.cells) {
      if (!c.fused && row.fuse_note.empty()) row.fuse_note = c.reason;
    }
    // A loop that is not a recognised cell says why, e.g. masking no fused op expresses.
    if (row.fuse_note.empty() && !fused.other_loops.empty()) {
      row.fuse_note = "loop left alone: " + fused.other_loops[0].reason;
    }
  }
  // Streaming models: what `gruwb fuse --stateful` does with the cells left.
  tools::FuseOptions stateful;
  stateful.stateful = true;
  if (row.cells_fused < row.cells_found && tools::fuse_model(bytes, stateful, &fused, &error)) {
    row.stateful_fused = fused.fused_count();
  }
  if (row.runs) check_training(bytes, &row);
  return row;
}

std::string row_text(const CorpusRow& r) {
  char line[512];
  std::snprintf(line, sizeof line, "%-58s %-4s %-20s fused %d/%d  %9llu -> %-9llu %s",
                r.file.c_str(), r.runs ? "runs" : "no",
                r.golden.empty() ? "no golden" : r.golden.c_str(), r.cells_fused, r.cells_found,
                r.bytes_before, r.bytes_after, r.trains ? "trains" : "no training");
  std::string text = line;
  if (!r.runs) text += "\n    does not run: " + r.run_error;
  if (!r.fuse_note.empty()) text += "\n    not fused: " + r.fuse_note;
  if (r.runs_fused) {
    text += "\n    runs fused (gruwb run, bench, train)" +
            (r.fused_golden.empty() ? std::string() : ": golden " + r.fused_golden);
  }
  if (r.stateful_fused > r.cells_fused) {
    text += "\n    gruwb fuse --stateful fuses " + std::to_string(r.stateful_fused) + " of " +
            std::to_string(r.cells_found) + " (the state stays inside the fused ops)";
  }
  if (r.runs && !r.trains) text += "\n    does not train: " + r.train_error;
  if (r.trains && r.integer_tensors > 0) {
    text += "\n    trains its float form (full-integer: " + std::to_string(r.integer_tensors) +
            " quantized tensors as float32)";
  } else if (r.trains && r.dequantized_weights > 0) {
    text += "\n    trains float32 copies of " + std::to_string(r.dequantized_weights) +
            " INT8 weight tensor(s) (hybrid)";
  }
  return text + "\n";
}

}  // namespace

bool corpus_rows(const CorpusRequest& request, std::vector<CorpusRow>* rows, std::string* error) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(request.folder, ec)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".tflite" || ext == ".circle"))
      files.push_back(entry.path());
  }
  if (ec) {
    *error = request.folder + ": " + ec.message();
    return false;
  }
  std::sort(files.begin(), files.end());
  const fs::path golden = request.golden_folder.empty() ? fs::path(request.folder) / "golden"
                                                        : fs::path(request.golden_folder);
  rows->clear();
  for (const fs::path& file : files) rows->push_back(check_model(file, golden));
  return true;
}

int run_corpus(const CorpusRequest& request, std::string* out, std::string* err) {
  std::vector<CorpusRow> rows;
  if (!corpus_rows(request, &rows, err)) return kExitBadInput;
  int runs = 0, equal = 0, golden = 0, fused = 0, with_cells = 0, trains = 0;
  int runs_fused = 0, fused_golden = 0, fused_equal = 0;
  for (const CorpusRow& r : rows) {
    runs += r.runs;
    golden += !r.golden.empty();
    equal += r.golden == "equal";
    with_cells += r.cells_found > 0;
    fused += r.cells_found > 0 && std::max(r.cells_fused, r.stateful_fused) == r.cells_found;
    trains += r.trains;
    runs_fused += r.runs_fused;
    fused_golden += !r.fused_golden.empty();
    fused_equal += r.fused_golden == "equal";
  }
  if (request.json) {
    tools::JsonWriter json;
    json.begin_object().key("folder").value(request.folder).key("models").begin_array();
    for (const CorpusRow& r : rows) {
      json.begin_object();
      json.key("file").value(r.file).key("runs").value(r.runs).key("run_error").value(r.run_error);
      json.key("golden").value(r.golden).key("golden_error").value(r.golden_error);
      json.key("runs_fused").value(r.runs_fused);
      if (r.runs_fused) {
        json.key("fused_golden").value(r.fused_golden);
        json.key("fused_golden_error").value(r.fused_golden_error);
      }
      json.key("cells_found").value(r.cells_found).key("cells_fused").value(r.cells_fused);
      json.key("stateful_fused").value(r.stateful_fused);
      json.key("fuse_note").value(r.fuse_note);
      json.key("bytes_before").value(static_cast<uint64_t>(r.bytes_before));
      json.key("bytes_after").value(static_cast<uint64_t>(r.bytes_after));
      json.key("trains").value(r.trains).key("trained_weights").value(r.trained_weights);
      json.key("dequantized_weights").value(r.dequantized_weights);
      json.key("integer_tensors").value(r.integer_tensors);
      json.key("train_error").value(r.train_error).end_object();
    }
    json.end_array().end_object();
    *out = json.take() + "\n";
    return kExitOk;
  }
  out->clear();
  for (const CorpusRow& r : rows) *out += row_text(r);
  char summary[320];
  std::snprintf(summary, sizeof summary,
                "%zu models: %d run, %d of %d with golden outputs equal, %d of %d with cells fully "
                "fused (with --stateful where the state streams), %d train; %d run fused (%d of "
                "%d with golden outputs equal)\n",
                rows.size(), runs, equal, golden, fused, with_cells, trains, runs_fused,
                fused_equal, fused_golden);
  *out += summary;
  return kExitOk;
}

}  // namespace gruwb::app
