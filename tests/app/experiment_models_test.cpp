// Model files as rows of a comparison ("bring your own model", --compare-models):
// the bundled gesture models (fused op and the converter's WHILE loop) beside a
// built cell on BasicMotionsAcc60, a converter-style WHILE model no matcher fuses
// (a masked LSTM, tests/tools/converter_variants.h), and a model whose input does
// not fit the data. Each row trains through the same stages and seeds; the file's
// own bytes land in the column of its form; the bad row has an error and the
// others complete.

#include <gtest/gtest.h>

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "app/core/experiment.h"
#include "app/core/hparams.h"
#include "app/core/report.h"
#include "engine/tools/model_file.h"
#include "tests/tools/converter_variants.h"

namespace gruwb::app {
namespace {

const std::string kSamples = std::string(GRUWB_SOURCE_DIR) + "/resources/samples/";
const std::string kFused = kSamples + "gesture_gru_fused.tflite";
const std::string kWhile = kSamples + "gesture_gru_while.tflite";
const std::string kBad = kSamples + "gru_float.circle";  // input [1,1,6]: 6 channels
// The gesture models: GRU 60 (reset_after: 3H(F+H+2)) on 3 channels, Dense 4.
constexpr uint64_t kGestureParameters = 3 * 60 * (3 + 60 + 2) + 60 * 4 + 4;

uint64_t file_size(const std::string& path) {
  return static_cast<uint64_t>(QFileInfo(QString::fromStdString(path)).size());
}

// A masked LSTM WHILE loop (Keras mask_zero): reported not fused by every matcher.
std::string write_unfused_while(const QTemporaryDir& dir) {
  for (test::ConverterVariant v : test::converter_variants()) {
    if (v.name != "lstm_masked") continue;
    v.timesteps = 12;  // the data (60 steps) are resampled to its input
    v.features = 3;
    v.classes = 4;
    std::vector<uint8_t> bytes;
    std::string error;
    EXPECT_TRUE(test::write_variant(v, &bytes, &error)) << error;
    const std::string path = dir.path().toStdString() + "/masked lstm.tflite";
    EXPECT_TRUE(tools::write_file_atomically(path, bytes, &error)) << error;
    return path;
  }
  ADD_FAILURE() << "no lstm_masked converter variant";
  return "";
}

const CellSummary* row_of(const ExperimentResult& result, const std::string& label) {
  for (const CellSummary& c : result.cells) {
    if (c.cell == label) return &c;
  }
  return nullptr;
}

const StageRun* run_of(const ExperimentResult& result, const std::string& label,
                       const std::string& stage) {
  for (const StageRun& r : result.runs) {
    if (r.cell == label && r.stage == stage) return &r;
  }
  return nullptr;
}

ExperimentSpec models_spec() {
  ExperimentSpec spec;
  spec.build = "cell=gru,units=8";
  spec.data_path = kSamples + "BasicMotionsAcc60_TRAIN.ts";
  StageSpec defaults;
  defaults.epochs = 1;
  defaults.batch_size = 8;
  defaults.learning_rate = 0.01f;
  std::string error;
  EXPECT_TRUE(parse_stages("init,all", defaults, &spec.stages, &error)) << error;
  return spec;
}

TEST(ExperimentModels, FilesAreRowsBesideTheCellsAndABadOneDoesNotStopThem) {
  QTemporaryDir dir;
  const std::string unfused = write_unfused_while(dir);
  ExperimentSpec spec = models_spec();
  spec.compare_models = {kFused, kWhile, kBad, unfused};
  const ExperimentResult result = run_experiment(spec, nullptr, nullptr);

  // The bad row fails the experiment (as a failing run does), after the others ran.
  EXPECT_EQ(result.status, ExperimentStatus::kFailed);
  EXPECT_NE(result.error.find(kBad), std::string::npos) << result.error;
  ASSERT_EQ(result.cells.size(), 5u);
  EXPECT_EQ(result.cells[0].cell, "gru");
  EXPECT_TRUE(result.cells[0].model_path.empty());
  EXPECT_EQ(result.cells[1].cell, "gesture_gru_fused.tflite");  // in the order given
  EXPECT_EQ(result.cells[4].cell, "masked lstm.tflite");
  // Two stages for each of the four rows that run; none for the bad one.
  EXPECT_EQ(result.runs.size(), 8u);
  for (const StageRun& run : result.runs) {
    EXPECT_TRUE(run.error.empty()) << run.cell << " " << run.stage << ": " << run.error;
    EXPECT_TRUE(run.evaluated) << run.cell << " " << run.stage;
    EXPECT_EQ(run.test_classes.samples, 40) << run.cell;
  }

  const CellSummary* fused = row_of(result, "gesture_gru_fused.tflite");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->model_path, kFused);
  EXPECT_TRUE(fused->error.empty()) << fused->error;
  EXPECT_EQ(fused->fused_bytes, file_size(kFused));
  EXPECT_EQ(fused->while_bytes, 0u);
  EXPECT_EQ(fused->unrolled_bytes, 0u);
  EXPECT_EQ(fused->parameters, kGestureParameters);
  EXPECT_EQ(fused->accuracy.count, 1);
  EXPECT_GT(fused->arena_bytes, 0u);
  EXPECT_GT(fused->latency_us, 0.0);
  EXPECT_EQ(fused->board_latency_us, 0.0);  // no board_port
  const StageRun* fused_all = run_of(result, "gesture_gru_fused.tflite", "all");
  ASSERT_NE(fused_all, nullptr);
  EXPECT_EQ(static_cast<uint64_t>(fused_all->training.trainable_parameters), kGestureParameters);

  // The converter's loop: its bytes as WHILE, the fuser's output as fused.
  const CellSummary* loop = row_of(result, "gesture_gru_while.tflite");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->while_bytes, file_size(kWhile));
  EXPECT_GT(loop->fused_bytes, 0u);
  EXPECT_LT(loop->fused_bytes, loop->while_bytes);
  EXPECT_TRUE(loop->fuse_note.empty()) << loop->fuse_note;
  EXPECT_EQ(loop->parameters, kGestureParameters);
  // The same weights as the fused file: the same untrained accuracy.
  EXPECT_DOUBLE_EQ(run_of(result, "gesture_gru_while.tflite", "init")->test_accuracy,
                   run_of(result, "gesture_gru_fused.tflite", "init")->test_accuracy);

  // A loop no matcher fuses still gets its row, and trains through the loop.
  const CellSummary* masked = row_of(result, "masked lstm.tflite");
  ASSERT_NE(masked, nullptr);
  EXPECT_TRUE(masked->error.empty()) << masked->error;
  EXPECT_EQ(masked->while_bytes, file_size(unfused));
  EXPECT_EQ(masked->fused_bytes, 0u);
  EXPECT_NE(masked->fuse_note.find("masked"), std::string::npos) << masked->fuse_note;
  EXPECT_GT(masked->latency_us, 0.0);
  const StageRun* masked_all = run_of(result, "masked lstm.tflite", "all");
  ASSERT_NE(masked_all, nullptr);
  EXPECT_GT(masked_all->training.trainable_parameters, 4 * 4 + 4);  // more than the head
  EXPECT_EQ(masked->parameters, static_cast<uint64_t>(masked_all->training.trainable_parameters));
  bool fitted_note = false;
  for (const std::string& note : result.data_notes) {
    fitted_note |= note.find("masked lstm.tflite: data fitted to its input (12 steps") == 0;
  }
  EXPECT_TRUE(fitted_note);

  const CellSummary* bad = row_of(result, "gru_float.circle");
  ASSERT_NE(bad, nullptr);
  EXPECT_NE(bad->error.find("6"), std::string::npos) << bad->error;
  EXPECT_EQ(bad->error.find('\n'), std::string::npos) << bad->error;
  EXPECT_EQ(bad->accuracy.count, 0);

  // The table: the form's column, "-" where a file has no such form, the error in its row.
  const auto table = cells_table(result);
  const auto header = cells_header();
  ASSERT_EQ(table.size(), 5u);
  ASSERT_EQ(header.size(), table[1].size());
  EXPECT_EQ(header[8], "board latency (µs)");
  EXPECT_EQ(table[1][3], std::to_string(file_size(kFused)));
  EXPECT_EQ(table[1][4], "-");
  EXPECT_EQ(table[1][8], "-");
  EXPECT_EQ(table[4][3], "-");
  EXPECT_EQ(header[9], "board cycles");
  EXPECT_EQ(table[3][10].rfind("error: ", 0), 0u) << table[3][10];
  EXPECT_NE(report_html(result).find("gesture_gru_while.tflite"), std::string::npos);

  // The result JSON keeps the rows (path, note, error, board latency) and reads back.
  const std::string json = experiment_result_json(result);
  ExperimentResult parsed;
  std::string error;
  ASSERT_TRUE(parse_experiment_result(json, "r.json", &parsed, &error)) << error;
  ASSERT_EQ(parsed.cells.size(), 5u);
  EXPECT_EQ(parsed.spec.compare_models, spec.compare_models);
  EXPECT_EQ(parsed.cells[2].model_path, kWhile);
  EXPECT_EQ(parsed.cells[2].fused_bytes, loop->fused_bytes);
  EXPECT_EQ(parsed.cells[4].fuse_note, masked->fuse_note);
  EXPECT_EQ(parsed.cells[3].error, bad->error);
  EXPECT_EQ(cells_table(parsed), table);
  const QJsonObject saved = QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
  EXPECT_TRUE(saved["cells"].toArray()[1].toObject().contains("board_latency_us"));
}

// A result saved before model rows (no model_path, board latency, note or
// error in its cells, no compare_models in its spec) still loads.
TEST(ExperimentModels, ResultsSavedBeforeModelRowsLoad) {
  ExperimentResult result;
  result.spec = models_spec();
  result.status = ExperimentStatus::kCompleted;
  result.cells.resize(1);
  result.cells[0].cell = "gru";
  result.cells[0].fused_bytes = 1234;
  QJsonObject o =
      QJsonDocument::fromJson(QByteArray::fromStdString(experiment_result_json(result))).object();
  QJsonArray cells = o["cells"].toArray();
  QJsonObject cell = cells[0].toObject();
  ASSERT_TRUE(cell.contains("board_latency_us"));
  cell.remove("board_latency_us");
  cells[0] = cell;
  o["cells"] = cells;
  ExperimentResult parsed;
  std::string error;
  ASSERT_TRUE(
      parse_experiment_result(QJsonDocument(o).toJson().toStdString(), "old.json", &parsed, &error))
      << error;
  ASSERT_EQ(parsed.cells.size(), 1u);
  EXPECT_EQ(parsed.cells[0].fused_bytes, 1234u);
  EXPECT_TRUE(parsed.cells[0].model_path.empty());
  EXPECT_EQ(parsed.cells[0].board_latency_us, 0.0);
  EXPECT_TRUE(parsed.spec.compare_models.empty());
  // A wrong type in a new member is still named.
  cell["board_latency_us"] = "fast";
  cells[0] = cell;
  o["cells"] = cells;
  EXPECT_FALSE(parse_experiment_result(QJsonDocument(o).toJson().toStdString(), "old.json", &parsed,
                                       &error));
  EXPECT_NE(error.find("cells[0].board_latency_us"), std::string::npos) << error;
}

// With --model the file itself is a row too, labelled by its name.
TEST(ExperimentModels, ModelFileAndComparedFiles) {
  ExperimentSpec spec = models_spec();
  spec.build.clear();
  spec.model_path = kFused;
  spec.compare_models = {kWhile};
  spec.stages.resize(1);  // init
  const ExperimentResult result = run_experiment(spec, nullptr, nullptr);
  ASSERT_EQ(result.status, ExperimentStatus::kCompleted) << result.error;
  ASSERT_EQ(result.cells.size(), 2u);
  EXPECT_EQ(result.cells[0].cell, "gesture_gru_fused.tflite");
  EXPECT_EQ(result.cells[0].fused_bytes, file_size(kFused));
  EXPECT_EQ(result.cells[1].while_bytes, file_size(kWhile));
  ASSERT_EQ(result.runs.size(), 2u);
  EXPECT_EQ(result.runs[1].cell, "gesture_gru_while.tflite");
  // Each run knows the cell it trained, found in the file (a fused op, a WHILE loop), and
  // the bytes of the model it ended with; the JSON keeps them (a reopened project's HParams).
  ExperimentResult parsed;
  std::string error;
  ASSERT_TRUE(parse_experiment_result(experiment_result_json(result), "r", &parsed, &error))
      << error;
  for (const ExperimentResult* r : {&result, static_cast<const ExperimentResult*>(&parsed)}) {
    for (const StageRun& run : r->runs) {
      EXPECT_EQ(run.cell_type, "gru") << run.cell;
      EXPECT_EQ(run.units, 60) << run.cell;
      EXPECT_GT(run.model_bytes, uint64_t{60 * 3 * 65 * 4}) << run.cell;
    }
  }
  const std::vector<HparamsRow> rows = hparams_rows(parsed);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].run, spec.name + " / init gesture_gru_while.tflite");
  EXPECT_EQ(rows[1].model, "gesture_gru_while.tflite");
  EXPECT_EQ(rows[1].cell, "GRU");
  EXPECT_EQ(rows[1].units, 60);
  EXPECT_EQ(rows[1].epochs, 0);  // init evaluates only
  EXPECT_EQ(rows[1].model_bytes, result.runs[1].model_bytes);
  EXPECT_DOUBLE_EQ(rows[1].accuracy, result.runs[1].test_accuracy);
  // A model without a recurrent cell: none found.
  tools::LoadedModel hello;
  ASSERT_TRUE(tools::load_model_file(kSamples + "tflm_hello_world_float.tflite", &hello, &error))
      << error;
  std::string cell = "unchanged";
  int units = -1;
  EXPECT_FALSE(model_recurrent_cell(hello.model, &cell, &units));
  // Without compared files a model file experiment stays as it was: no comparison.
  spec.compare_models.clear();
  const ExperimentResult alone = run_experiment(spec, nullptr, nullptr);
  ASSERT_EQ(alone.status, ExperimentStatus::kCompleted) << alone.error;
  EXPECT_TRUE(alone.cells.empty());
  EXPECT_EQ(alone.runs[0].cell, "model");
  EXPECT_EQ(hparams_rows(alone)[0].model, "gesture_gru_fused.tflite");
  EXPECT_EQ(hparams_rows(alone)[0].run, spec.name + " / init");
}

}  // namespace
}  // namespace gruwb::app
