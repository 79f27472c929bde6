// One data path and one training loop: a stage trained through the desktop's Experiments path
// (run_experiment) and the same stage trained on the simulated board (`gruwb board-sim` on a pty,
// the dataset packed by board_dataset_blob) give the same curve and the same weights, judged by
// the one board-vs-host rule (serial::compare_runs): losses within 1e-4 relative, accuracies
// equal, weights within 1e-4 relative.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "app/core/board.h"
#include "app/core/experiment.h"
#include "engine/model/model.h"
#include "engine/tools/model_file.h"
#include "engine/train/trainer.h"
#include "serial/firmware/training_run.h"
#include "serial/link/board_run.h"
#include "serial/link/host_reference.h"
#include "tests/serial/child_server.h"

namespace gruwb::serial::test {
namespace {

const std::string kSamples = std::string(GRUWB_SOURCE_DIR) + "/resources/samples/";
const std::string kModel = kSamples + "gesture_gru_fused.tflite";
const std::string kData = kSamples + "BasicMotionsAcc60_TRAIN.ts";

// The GWWT blob (the board's DOWNLOAD layout) of `model`'s weights in `config`'s scope.
std::vector<uint8_t> weights_blob(const std::vector<uint8_t>& model, const TrainingConfig& config) {
  std::vector<uint8_t> storage(model.size() + 16), arena((8u << 20) + 16);
  const auto aligned = [](std::vector<uint8_t>& v) {
    return v.data() + ((16 - (reinterpret_cast<uintptr_t>(v.data()) & 15)) & 15);
  };
  uint8_t* bytes = aligned(storage);
  std::memcpy(bytes, model.data(), model.size());
  Model view;
  EXPECT_TRUE(Model::load(bytes, model.size(), &view).ok());
  auto trainer = std::make_unique<Trainer>();
  const Status s = trainer->prepare(view, config, aligned(arena), arena.size() - 16);
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<uint8_t> blob(weights_blob_bytes(*trainer));
  read_weights_blob(*trainer, 0, blob.data(), blob.size());
  return blob;
}

TEST(ExperimentVersusBoard, TheSameStageGivesTheSameCurveAndWeights) {
  app::StageSpec stage;
  stage.name = "all";
  stage.scope = "all";
  stage.optimizer = Optimizer::kAdam;
  stage.learning_rate = 0.002f;
  stage.batch_size = 4;
  stage.epochs = 3;
  app::ExperimentSpec spec;
  spec.model_path = kModel;
  spec.data_path = kData;
  spec.normalize = "data";          // what `gruwb experiment` does to a model file's data (auto)
  spec.validation_fraction = 0.25;  // a seeded split both sides must draw alike
  spec.first_seed = 5;
  spec.stages = {stage};
  // Single-sample passes, as the board trains: the same weights bit for bit. (The batched
  // Experiments default is checked against the board at the end.)
  spec.batched_passes = false;
  const app::ExperimentResult experiment = app::run_experiment(spec, nullptr, nullptr);
  ASSERT_EQ(experiment.status, app::ExperimentStatus::kCompleted) << experiment.error;
  ASSERT_EQ(experiment.runs.size(), 1u);
  const app::StageRun& desktop = experiment.runs[0];
  ASSERT_EQ(desktop.training.epochs.size(), 4u);  // epoch 0 (initial) and 3 trained
  ASSERT_FALSE(desktop.trained_model.empty());

  // The same stage on the board: same model file, data, scope, optimizer, seed, epochs, batch.
  std::string pty, error, note;
  Server sim;
  ASSERT_TRUE(
      sim.start({GRUWB_CLI, "board-sim"}, std::regex("serving on (/dev/pts/[0-9]+)"), &pty));
  app::BoardConnection connection;
  connection.port = pty;
  std::unique_ptr<BoardClient> client = app::open_board(connection, &note, &error);
  ASSERT_TRUE(client) << error;
  std::vector<uint8_t> model, blob;
  ASSERT_TRUE(tools::read_file_bytes(kModel, &model, &error)) << error;
  app::BoardData data;
  data.path = kData;
  data.validation_fraction = spec.validation_fraction;
  data.seed = spec.first_seed;
  ASSERT_TRUE(app::board_dataset_blob(data, model, &blob, &note, &error)) << error;
  TrainingSettings settings;
  settings.config.optimizer = stage.optimizer;
  settings.config.learning_rate = stage.learning_rate;
  settings.config.batch_size = stage.batch_size;
  ASSERT_TRUE(parse_trainable_scope(stage.scope.c_str(), &settings.config));
  settings.epochs = static_cast<uint32_t>(stage.epochs);
  settings.seed = static_cast<uint32_t>(spec.first_seed);
  ASSERT_TRUE(client->upload(UploadKind::kModel, model, nullptr, nullptr, &error)) << error;
  ASSERT_TRUE(client->upload(UploadKind::kDataset, blob, nullptr, nullptr, &error)) << error;
  BoardRunResult board;
  ASSERT_TRUE(run_board_training(*client, model, blob, settings, BoardRunOptions(),
                                 BoardRunCallbacks(), &board, &error))
      << error;

  // The Experiments curve as the METRICs a board sends at its epoch ends.
  const auto reference_of = [&](const app::ExperimentResult& run) {
    ReferenceRun reference;
    for (const app::EpochMetrics& e : run.runs[0].training.epochs) {
      if (e.epoch == 0) continue;
      Metric m;
      m.epoch = static_cast<uint32_t>(e.epoch - 1);
      m.samples = m.epoch_samples = static_cast<uint32_t>(run.train_count);
      m.step = static_cast<uint32_t>(e.steps);
      m.loss = static_cast<float>(e.train_loss);
      m.accuracy = static_cast<float>(e.train_accuracy);
      m.flags = kMetricEpochEnd;
      reference.metrics.push_back(m);
    }
    reference.weights = weights_blob(run.runs[0].trained_model, settings.config);
    return reference;
  };
  const ReferenceRun reference = reference_of(experiment);
  RunAgreement agreement;
  ASSERT_TRUE(compare_runs(board.metrics, board.weights, reference, &agreement, &error)) << error;
  std::printf("Experiments stage vs board, %d samples x %d epochs: %s\n", experiment.train_count,
              stage.epochs, agreement.summary().c_str());
  for (const Metric& m : board.metrics) {
    std::printf("  board epoch %u: loss %.6f accuracy %.4f\n", m.epoch + 1, m.loss, m.accuracy);
  }
  EXPECT_EQ(experiment.train_count, 28);  // 40 less the validation (3 a class, stratified)
  EXPECT_EQ(agreement.epoch_ends, 3u);
  EXPECT_EQ(agreement.epoch_ends_matched, 3u);
  EXPECT_LE(agreement.loss, kRunTolerance);
  EXPECT_EQ(agreement.accuracy_samples, 0);
  EXPECT_LE(agreement.weights, kRunTolerance);
  EXPECT_TRUE(agreement.agree) << agreement.summary();
  // Same updates: the steps of each epoch end agree too (3 epochs of 7 batches of 4).
  ASSERT_EQ(board.metrics.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(board.metrics[i].step, reference.metrics[i].step);
  EXPECT_EQ(board.metrics.back().step, 21u);
  // The run learnt something (a test that cannot fail is no test): the loss fell.
  EXPECT_LT(board.metrics.back().loss, board.metrics.front().loss);

  // The Experiments default, one batched pass per batch of 4: the same curve within rounding
  // (losses within 1e-4 relative, accuracies equal). The weights agree less closely: Adam divides
  // each gradient by its running RMS, so elements whose gradient is rounding noise step by up to
  // the learning rate either way (docs/training-design.md, "Batched training"); measured 0.0074
  // relative after 21 steps at lr 0.002.
  spec.batched_passes = true;
  const app::ExperimentResult batched = app::run_experiment(spec, nullptr, nullptr);
  ASSERT_EQ(batched.status, app::ExperimentStatus::kCompleted) << batched.error;
  RunAgreement rounding;
  ASSERT_TRUE(compare_runs(board.metrics, board.weights, reference_of(batched), &rounding, &error))
      << error;
  std::printf("batched Experiments stage vs board: %s\n", rounding.summary().c_str());
  EXPECT_EQ(rounding.epoch_ends_matched, 3u);
  EXPECT_LE(rounding.loss, kRunTolerance);
  EXPECT_EQ(rounding.accuracy_samples, 0);
  EXPECT_LE(rounding.weights, 0.02);
}

}  // namespace
}  // namespace gruwb::serial::test
