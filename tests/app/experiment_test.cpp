// The experiment runner on real data (BasicMotions, small models, few
// epochs): stages start from the same weights, seeds, cancellation with the
// results kept, autosave, spec JSON round trip, bad input and bad result JSON.

#include "app/core/experiment.h"

#include <gtest/gtest.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

namespace gruwb::app {
namespace {

const std::string kBasicMotions = std::string(GRUWB_SHARED_DIR) + "/data/datasets/BasicMotions";

ExperimentSpec small_spec(const std::string& stages) {
  ExperimentSpec spec;
  spec.build = "cell=gru,units=8";
  spec.data_path = kBasicMotions;
  spec.timesteps = 20;  // resampled from 100: fast
  StageSpec defaults;
  defaults.epochs = 2;
  defaults.batch_size = 8;
  defaults.learning_rate = 0.01f;
  std::string error;
  EXPECT_TRUE(parse_stages(stages, defaults, &spec.stages, &error)) << error;
  return spec;
}

TEST(Experiment, StagesStartFromTheSameWeights) {
  ExperimentSpec spec = small_spec("init,fc,all");
  spec.seeds = 2;
  int started = 0, finished = 0;
  double last_progress = 0;
  bool monotonic = true;
  const ExperimentResult result = run_experiment(
      spec,
      [&](const ExperimentEvent& e) {
        started += e.kind == ExperimentEvent::Kind::kRunStarted;
        finished += e.kind == ExperimentEvent::Kind::kRunFinished;
        monotonic &= e.progress + 1e-12 >= last_progress;
        last_progress = e.progress;
      },
      nullptr);
  ASSERT_EQ(result.status, ExperimentStatus::kCompleted) << result.error;
  EXPECT_EQ(started, 6);
  EXPECT_EQ(finished, 6);
  EXPECT_TRUE(monotonic);
  EXPECT_DOUBLE_EQ(last_progress, 1.0);
  ASSERT_EQ(result.runs.size(), 6u);
  EXPECT_EQ(result.timesteps, 20);
  EXPECT_EQ(result.features, 6);
  EXPECT_EQ(result.test_count, 40);
  for (int seed = 0; seed < 2; ++seed) {
    const StageRun& init = result.runs[static_cast<size_t>(seed * 3)];
    const StageRun& fc = result.runs[static_cast<size_t>(seed * 3 + 1)];
    const StageRun& all = result.runs[static_cast<size_t>(seed * 3 + 2)];
    EXPECT_EQ(init.stage, "init");
    EXPECT_EQ(all.seed, static_cast<uint64_t>(seed + 1));
    // Epoch 0 (before any update) is the same model in every stage.
    ASSERT_FALSE(fc.training.epochs.empty());
    ASSERT_FALSE(all.training.epochs.empty());
    EXPECT_EQ(fc.training.epochs[0].train_loss, all.training.epochs[0].train_loss);
    EXPECT_EQ(init.training.epochs[0].train_loss, fc.training.epochs[0].train_loss);
    EXPECT_EQ(fc.training.epochs.size(), 3u);  // epoch 0 + 2
    EXPECT_EQ(init.training.epochs.size(), 1u);
    // fc trains the Dense layer only: fewer parameters and less memory.
    EXPECT_EQ(fc.training.trainable_parameters, 8 * 4 + 4);
    EXPECT_GT(all.training.trainable_parameters, fc.training.trainable_parameters);
    EXPECT_GT(all.training.memory.total, fc.training.memory.total);
    EXPECT_TRUE(all.evaluated);
    EXPECT_EQ(all.test_classes.samples, 40);
  }
  // The two seeds build different initial models.
  EXPECT_NE(result.runs[0].training.epochs[0].train_loss,
            result.runs[3].training.epochs[0].train_loss);
  ASSERT_EQ(result.summary.size(), 3u);
  EXPECT_EQ(result.summary[1].stage, "fc");
  EXPECT_EQ(result.summary[1].accuracy.count, 2);
  EXPECT_TRUE(result.summary[1].has_delta);
  EXPECT_FALSE(result.summary[0].has_delta);
  const double mean = (result.runs[1].test_accuracy + result.runs[4].test_accuracy) / 2;
  EXPECT_DOUBLE_EQ(result.summary[1].accuracy.mean, mean);
  EXPECT_NEAR(result.summary[1].delta_accuracy, mean - result.summary[0].accuracy.mean, 1e-12);
  ASSERT_EQ(result.cells.size(), 1u);
  EXPECT_EQ(result.cells[0].cell, "gru");
  EXPECT_GT(result.cells[0].while_bytes, result.cells[0].fused_bytes);
  EXPECT_GT(result.cells[0].latency_us, 0.0);
}

TEST(Experiment, CancelKeepsFinishedRunsAndAutosaves) {
  QTemporaryDir dir;
  const std::string autosave = dir.path().toStdString() + "/partial.json";
  ExperimentSpec spec = small_spec("init,fc,all");
  std::atomic<bool> cancel{false};
  const ExperimentResult result = run_experiment(
      spec,
      [&](const ExperimentEvent& e) {
        if (e.kind == ExperimentEvent::Kind::kRunFinished && e.run == 1) cancel = true;
      },
      &cancel, autosave);
  EXPECT_EQ(result.status, ExperimentStatus::kCancelled);
  ASSERT_EQ(result.runs.size(), 2u);
  EXPECT_TRUE(result.runs[1].evaluated);
  QFile file(QString::fromStdString(autosave));
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QJsonObject saved = QJsonDocument::fromJson(file.readAll()).object();
  EXPECT_EQ(saved.value("status").toString(), "cancelled");
  EXPECT_EQ(saved.value("runs").toArray().size(), 2);
  EXPECT_EQ(saved.value("summary").toArray().size(), 2);
  // The saved file reopens as the same experiment.
  ExperimentSpec reopened;
  std::string error;
  ASSERT_TRUE(load_experiment_spec(autosave, &reopened, &error)) << error;
  EXPECT_EQ(experiment_spec_json(reopened), experiment_spec_json(spec));
}

TEST(Experiment, CellComparison) {
  ExperimentSpec spec = small_spec("all");
  spec.stages[0].epochs = 1;
  spec.compare_cells = {"gru", "lstm", "rnn", "fastgrnn", "mgu"};  // the plugin cells too
  const ExperimentResult result = run_experiment(spec, nullptr, nullptr);
  ASSERT_EQ(result.status, ExperimentStatus::kCompleted) << result.error;
  ASSERT_EQ(result.cells.size(), 5u);
  EXPECT_EQ(result.cells[1].cell, "lstm");
  EXPECT_EQ(result.cells[3].cell, "fastgrnn");
  // Parameters of one layer: G*H*(F+H) + biases; LSTM has 4 gate blocks,
  // GRU 3 (+ recurrent bias), MGU 2, SimpleRNN 1; FastGRNN is SimpleRNN's products
  // with a second bias (H = 8) and zeta, nu.
  EXPECT_GT(result.cells[1].parameters, result.cells[0].parameters);
  EXPECT_GT(result.cells[0].parameters, result.cells[4].parameters);
  EXPECT_GT(result.cells[4].parameters, result.cells[3].parameters);
  EXPECT_EQ(result.cells[3].parameters, result.cells[2].parameters + 8 + 2);
  for (const CellSummary& c : result.cells) {
    EXPECT_GT(c.fused_bytes, 0u) << c.cell;
    EXPECT_GT(c.while_bytes, c.fused_bytes) << c.cell;
    EXPECT_GT(c.unrolled_bytes, c.while_bytes) << c.cell;  // one weight copy per step
    EXPECT_EQ(c.accuracy.count, 1) << c.cell;
  }
  for (const StageRun& run : result.runs) EXPECT_TRUE(run.error.empty()) << run.error;
}

// The plugin cells train on the host in the converter's WHILE form as in the fused op.
TEST(Experiment, PluginCellsTrainThroughTheirWhileLoops) {
  for (const char* cell : {"fastgrnn", "mgu"}) {
    ExperimentSpec spec = small_spec("init,all");
    spec.build = std::string("cell=") + cell + ",units=8,layout=while";
    spec.as_written = true;  // through the loop itself, not its fused form (loop_plan.h)
    spec.stages[1].epochs = 5;
    const ExperimentResult result = run_experiment(spec, nullptr, nullptr);
    ASSERT_EQ(result.status, ExperimentStatus::kCompleted) << cell << ": " << result.error;
    ASSERT_EQ(result.runs.size(), 2u) << cell;
    const StageRun& all = result.runs[1];
    // The cell's weights train too, not only the head's.
    EXPECT_GT(all.training.trainable_parameters, 8 * (8 + 6)) << cell;
    ASSERT_FALSE(all.training.epochs.empty()) << cell;
    EXPECT_LT(all.training.epochs.back().train_loss, all.training.epochs.front().train_loss)
        << cell;
  }
}

TEST(Experiment, BadInputFailsBeforeAnyRun) {
  ExperimentSpec spec = small_spec("init");
  spec.data_path = "/nonexistent/data";
  ExperimentResult result = run_experiment(spec, nullptr, nullptr);
  EXPECT_EQ(result.status, ExperimentStatus::kFailed);
  EXPECT_TRUE(result.runs.empty());
  EXPECT_NE(result.error.find("/nonexistent/data: no such file"), std::string::npos)
      << result.error;

  spec = small_spec("init");
  spec.build = "cell=gru,units=8,colour=red";
  result = run_experiment(spec, nullptr, nullptr);
  EXPECT_NE(result.error.find("unknown key 'colour'"), std::string::npos) << result.error;

  // A model file whose input does not fit the data's channels.
  spec = small_spec("init");
  spec.build.clear();
  spec.model_path = std::string(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite";
  result = run_experiment(spec, nullptr, nullptr);
  EXPECT_NE(result.error.find("6 channels, model"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("takes 3"), std::string::npos) << result.error;

  std::vector<StageSpec> stages;
  std::string error;
  EXPECT_FALSE(parse_stages("init,fc,everything", StageSpec(), &stages, &error));
  EXPECT_NE(error.find("stage 'everything'"), std::string::npos) << error;
  ExperimentSpec parsed;
  EXPECT_FALSE(parse_experiment_spec("{\"format\":\"other\"}", "x.json", &parsed, &error));
  EXPECT_NE(error.find("x.json: not a GRU Workbench experiment"), std::string::npos) << error;
  EXPECT_FALSE(parse_experiment_spec("{oops", "x.json", &parsed, &error));
  EXPECT_NE(error.find("x.json: not a JSON object"), std::string::npos) << error;
}

// A result file that is not what experiment_result_json writes fails with
// the file's label and the member's path, never a crash.
TEST(Experiment, CorruptResultJsonNamesTheMember) {
  ExperimentResult result;
  result.spec = small_spec("fc");
  result.status = ExperimentStatus::kCompleted;
  result.runs.resize(1);
  result.runs[0].training.epochs.resize(2);
  const QJsonObject good =
      QJsonDocument::fromJson(QByteArray::fromStdString(experiment_result_json(result))).object();
  const auto parse = [](const QJsonObject& o) {
    ExperimentResult parsed;
    std::string error;
    EXPECT_FALSE(parse_experiment_result(QJsonDocument(o).toJson().toStdString(), "old.json",
                                         &parsed, &error));
    return error;
  };
  ExperimentResult parsed;
  std::string error;
  ASSERT_TRUE(parse_experiment_result(experiment_result_json(result), "ok.json", &parsed, &error))
      << error;

  QJsonObject o = good;
  QJsonArray runs = o["runs"].toArray();
  QJsonObject run = runs[0].toObject();
  QJsonArray epochs = run["epochs"].toArray();
  QJsonObject epoch = epochs[1].toObject();
  epoch.remove("train_loss");
  epochs[1] = epoch;
  run["epochs"] = epochs;
  runs[0] = run;
  o["runs"] = runs;
  EXPECT_EQ(parse(o), "old.json: member 'runs[0].epochs[1].train_loss' is missing");

  run = good["runs"].toArray()[0].toObject();
  run["seed"] = "one";
  o = good;
  o["runs"] = QJsonArray{run};
  EXPECT_EQ(parse(o), "old.json: member 'runs[0].seed' is not an integer in range");

  o = good;
  o["status"] = "exploded";
  EXPECT_EQ(parse(o), "old.json: member 'status' is 'exploded', not a known state");
  o = good;
  o["data"] = QJsonArray();
  EXPECT_EQ(parse(o), "old.json: member 'data' is not an object");
  o = good;
  o.remove("spec");
  EXPECT_EQ(parse(o), "old.json: member 'spec' is missing");

  EXPECT_FALSE(parse_experiment_result("{\"spec\": ", "old.json", &parsed, &error));
  EXPECT_NE(error.find("old.json: not a JSON object"), std::string::npos) << error;
  EXPECT_FALSE(parse_experiment_result("[]", "old.json", &parsed, &error));
  EXPECT_NE(error.find("old.json: not a JSON object"), std::string::npos) << error;
}

TEST(Experiment, ModelFileWithItsOwnTimesteps) {
  // The reference gesture model takes [1,60,3]: Epilepsy is 206 x 3,
  // resampled to the model's 60 steps.
  ExperimentSpec spec = small_spec("init");
  spec.build.clear();
  spec.timesteps = 0;
  spec.model_path = std::string(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite";
  spec.data_path = std::string(GRUWB_SHARED_DIR) + "/data/datasets/Epilepsy";
  const ExperimentResult result = run_experiment(spec, nullptr, nullptr);
  ASSERT_EQ(result.status, ExperimentStatus::kCompleted) << result.error;
  EXPECT_EQ(result.timesteps, 60);
  EXPECT_EQ(result.runs[0].cell, "model");
  EXPECT_EQ(result.runs[0].test_classes.samples, 138);
  bool noted = false;
  for (const std::string& note : result.data_notes)
    noted |= note == "length: resample 206 -> 60 steps";
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace gruwb::app

namespace gruwb::app {
namespace {

// A quantization stage quantizes the model the stage before it trained
// (calibrated on the training split) and scores it by plain inference: the
// int8 model's weights are about 4x smaller and it predicts nearly what the
// float model predicts. The inference-only scoring is checked against the
// trainer's own evaluation on the float model.
TEST(Experiment, Int8StageQuantizesThePreviousStagesModel) {
  ExperimentSpec spec = small_spec("all,int8");
  spec.build = "cell=lstm,units=16";
  spec.stages[0].epochs = 3;
  const ExperimentResult result = run_experiment(spec, nullptr, nullptr);
  ASSERT_EQ(result.status, ExperimentStatus::kCompleted) << result.error;
  ASSERT_EQ(result.runs.size(), 2u);
  const StageRun& trained = result.runs[0];
  const StageRun& int8 = result.runs[1];
  ASSERT_TRUE(int8.quantized);
  EXPECT_FALSE(trained.quantized);
  const QuantizationFigures& q = int8.quantization;
  EXPECT_EQ(q.mode, "int8");
  EXPECT_EQ(q.source_stage, "all");
  ASSERT_TRUE(q.source_evaluated);
  EXPECT_EQ(q.source_accuracy, trained.test_accuracy);
  EXPECT_LT(q.quantized.model_bytes, q.source.model_bytes);
  // int8 weights (4x smaller) plus per-channel scales and int32 biases.
  EXPECT_LT(q.quantized.weight_bytes * 10, q.source.weight_bytes * 4) << q.quantized.weight_bytes;
  EXPECT_GT(q.quantized.latency_us, 0.0);
  EXPECT_GT(q.quantized.arena_bytes, 0u);
  ASSERT_TRUE(int8.evaluated) << int8.error;
  EXPECT_EQ(int8.test_classes.samples, 40);
  EXPECT_NEAR(int8.test_accuracy, trained.test_accuracy, 0.1);
  EXPECT_EQ(int8.training.epochs.size(), 0u);

  ASSERT_EQ(result.summary.size(), 2u);
  const StageSummary& row = result.summary[1];
  EXPECT_TRUE(row.quantized);
  EXPECT_TRUE(row.has_delta);
  EXPECT_NEAR(row.delta_accuracy, int8.test_accuracy - trained.test_accuracy, 1e-12);
  EXPECT_EQ(row.source_accuracy.count, 1);

  // The figures survive the result JSON.
  ExperimentResult parsed;
  std::string error;
  ASSERT_TRUE(parse_experiment_result(experiment_result_json(result), "r.json", &parsed, &error))
      << error;
  ASSERT_TRUE(parsed.runs[1].quantized);
  EXPECT_EQ(parsed.runs[1].quantization.quantized.model_bytes, q.quantized.model_bytes);
  EXPECT_EQ(parsed.runs[1].quantization.source_stage, "all");
  ASSERT_TRUE(parsed.summary[1].quantized);
  EXPECT_EQ(parsed.summary[1].quantization.source.weight_bytes, q.source.weight_bytes);
}

TEST(Experiment, QuantizationStageNamesAreStages) {
  std::vector<StageSpec> stages;
  std::string error;
  ASSERT_TRUE(parse_stages("init,fc,int8,all,dynamic,int16x8", StageSpec(), &stages, &error))
      << error;
  EXPECT_EQ(stages[2].scope, "int8");
  EXPECT_TRUE(is_quantization_scope(stages[4].scope));
  EXPECT_FALSE(is_quantization_scope(stages[3].scope));
  EXPECT_FALSE(parse_stages("all,int4", StageSpec(), &stages, &error));
  EXPECT_NE(error.find("int8, int16x8 or dynamic"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb::app
