// The application's training layer (app/core/training_session.h): one epoch
// of one sample reproduces PyTorch's Adam step in the saved model, events
// arrive in order, cancellation keeps the finished epochs, metrics add up,
// class ids and one-hot rows train identically, bad data is named.

#include "app/core/training_session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>

#include "app/core/dataset.h"
#include "app/core/inference_eval.h"
#include "app/core/train.h"
#include "engine/tools/initializers.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"
#include "tests/fixtures/train_fixtures.h"

namespace gruwb::app {
namespace {

using test::gru_dense_spec;
using test::gru_dense_weights;
using test::load_train_fixture;
using test::load_train_floats;

// The PyTorch golden model (GRU reset_after T=5 F=3 H=4, Dense 3, softmax) as
// the builder writes it, from the fixture's weights.
std::vector<uint8_t> golden_model_bytes(ModelFormat format = ModelFormat::kTflite) {
  const tools::RnnWeights w = gru_dense_weights();
  tools::BuildSpec spec = gru_dense_spec();
  spec.format = format;
  spec.weights = &w;
  tools::ModelDef def;
  std::string error;
  EXPECT_TRUE(tools::build_model(spec, &def, &error)) << error;
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(tools::write_model(def, format, &bytes, &error)) << error;
  return bytes;
}

TrainingData golden_data() {
  TrainingData d;
  d.sample_shape = {5, 3};
  d.inputs = load_train_floats("gru_dense_x");
  d.targets = load_train_floats("gru_dense_y");
  d.target_width = 3;
  return d;
}

// N random samples of [5,3] with labels = the sign pattern of a feature sum.
TrainingData toy_data(int n, uint64_t seed) {
  tools::Rng rng(seed);
  TrainingData d;
  d.sample_shape = {5, 3};
  for (int i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int k = 0; k < 15; ++k) {
      const float v = static_cast<float>(rng.uniform(-1.0, 1.0));
      d.inputs.push_back(v);
      if (k % 3 == 0) sum += v;
    }
    d.labels.push_back(sum < -0.5 ? 0 : (sum < 0.5 ? 1 : 2));
  }
  return d;
}

std::vector<float> weights_of(const std::vector<uint8_t>& bytes, const std::string& name) {
  tools::LoadedModel loaded;
  std::string error;
  EXPECT_TRUE(tools::load_model_bytes(bytes, "trained", &loaded, &error)) << error;
  SubgraphView sg = loaded.model.subgraph(0);
  for (int t = 0; t < sg.tensor_count; ++t) {
    TensorView view = sg.tensor(t);
    if (name == view.name) {
      std::vector<float> v(view.data.size / 4);
      std::memcpy(v.data(), view.data.data, view.data.size);
      return v;
    }
  }
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

TEST(TrainingSessionTest, OneStepSavesPyTorchsAdamWeights) {
  TrainingRunSpec spec;
  spec.model_bytes = golden_model_bytes();
  spec.config.learning_rate = 0.01f;
  spec.config.epsilon = 1e-8f;
  spec.config.torch_epsilon = true;
  spec.epochs = 1;
  spec.evaluate_initial = true;
  TrainingData data = golden_data();
  TrainingSession session;
  std::string error;
  ASSERT_TRUE(session.prepare(spec, data, nullptr, &error)) << error;
  ASSERT_EQ(session.trainable_weights().size(), 5u);
  const TrainingResult result = session.run();
  ASSERT_EQ(result.outcome, TrainingOutcome::kCompleted) << result.error;
  ASSERT_EQ(result.epochs.size(), 2u);
  EXPECT_NEAR(result.epochs[0].train_loss, load_train_fixture("gru_dense_loss")[0], 1e-5);
  EXPECT_NEAR(result.epochs[1].train_loss, load_train_fixture("gru_dense_loss")[0],
              1e-5);  // loss before the update
  EXPECT_EQ(result.steps, 1);

  std::vector<uint8_t> trained;
  ASSERT_TRUE(session.trained_model(ModelFormat::kTflite, &trained, &error)) << error;
  // Tensor by tensor: the saved weights are PyTorch's after one Adam step.
  const std::vector<std::pair<std::string, std::string>> weights = {
      {session.trainable_weights()[0].name, "gru_dense_adam_wx"},
      {session.trainable_weights()[1].name, "gru_dense_adam_wh"},
      {session.trainable_weights()[2].name, "gru_dense_adam_bias"},
      {session.trainable_weights()[3].name, "gru_dense_adam_fcw"},
      {session.trainable_weights()[4].name, "gru_dense_adam_fcb"}};
  for (const auto& [name, fixture] : weights) {
    const std::vector<float> saved = weights_of(trained, name);
    const std::vector<double> expected = load_train_fixture(fixture);
    ASSERT_EQ(saved.size(), expected.size()) << name;
    for (size_t i = 0; i < saved.size(); ++i) {
      EXPECT_NEAR(saved[i], expected[i], 2e-6) << name << " " << i;
    }
  }
  // The saved model runs, and its output is the session's forward pass.
  tools::LoadedModel loaded;
  ASSERT_TRUE(tools::load_model_bytes(trained, "trained", &loaded, &error)) << error;
  tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;
  std::memcpy(runner.interpreter().input(0)->data, data.inputs.data(), 15 * sizeof(float));
  ASSERT_TRUE(runner.invoke(&error)) << error;
  double loss = 0.0;
  ClassMetrics classes;
  ASSERT_TRUE(session.evaluate(data, &loss, &classes, &error)) << error;
  const float* p = runner.interpreter().output(0)->f32();
  EXPECT_NEAR(loss, -std::log(p[1]), 1e-5);  // label: class 1
}

TEST(TrainingSessionTest, CircleModelSavesAsCircleAndAsTflite) {
  TrainingRunSpec spec;
  spec.model_bytes = golden_model_bytes(ModelFormat::kCircle);
  spec.epochs = 2;
  TrainingData data = golden_data();
  TrainingSession session;
  std::string error;
  ASSERT_TRUE(session.prepare(spec, data, nullptr, &error)) << error;
  ASSERT_EQ(session.run().outcome, TrainingOutcome::kCompleted);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(session.trained_model(ModelFormat::kCircle, &bytes, &error)) << error;
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()) + 4, 4), "CIR0");
  // Circle's GRU op has no TFLite counterpart: the error says so instead of a broken file.
  EXPECT_FALSE(session.trained_model(ModelFormat::kTflite, &bytes, &error));
  EXPECT_FALSE(error.empty());
}

TEST(TrainingSessionTest, EventsMetricsAndLossFalls) {
  TrainingRunSpec spec;
  spec.model_bytes = golden_model_bytes();
  spec.config.learning_rate = 0.02f;
  spec.config.batch_size = 8;
  spec.epochs = 6;
  TrainingData train = toy_data(60, 3), val = toy_data(30, 4);
  TrainingSession session;
  std::string error;
  ASSERT_TRUE(session.prepare(spec, train, &val, &error)) << error;
  std::vector<TrainingEvent> events;
  const TrainingResult result = session.run([&](const TrainingEvent& e) { events.push_back(e); });
  ASSERT_EQ(result.outcome, TrainingOutcome::kCompleted) << result.error;
  ASSERT_EQ(result.epochs.size(), 7u);  // initial + 6
  // 60 samples in batches of 8: 8 updates per epoch (the last one of 4).
  EXPECT_EQ(result.steps, 48);
  EXPECT_EQ(result.samples, 360);
  int steps = 0, epochs = 0;
  for (const TrainingEvent& e : events) {
    steps += e.kind == TrainingEvent::Kind::kStep;
    epochs += e.kind == TrainingEvent::Kind::kEpoch;
  }
  EXPECT_EQ(steps, 48);
  EXPECT_EQ(epochs, 7);
  EXPECT_EQ(events.back().kind, TrainingEvent::Kind::kFinished);
  EXPECT_EQ(events.back().outcome, TrainingOutcome::kCompleted);
  const TrainingEvent& last_step = events[events.size() - 3];  // step, epoch, finished
  EXPECT_EQ(last_step.kind, TrainingEvent::Kind::kStep);
  EXPECT_EQ(last_step.epoch_samples_done, 60);

  const EpochMetrics& first = result.epochs.front();
  const EpochMetrics& last = result.epochs.back();
  EXPECT_LT(last.val_loss, first.val_loss);
  EXPECT_LT(last.train_loss, first.train_loss);
  // The figures come from the confusion matrices.
  for (const EpochMetrics* m : {&first, &last}) {
    EXPECT_EQ(m->val_classes.samples, 30);
    EXPECT_EQ(m->train_classes.samples, 60);
    int64_t diagonal = 0;
    for (int k = 0; k < 3; ++k) diagonal += m->val_classes.confusion[k][k];
    EXPECT_DOUBLE_EQ(m->val_accuracy, diagonal / 30.0);
  }
  // The session's own evaluation agrees with the last epoch's validation.
  double loss = 0.0;
  ClassMetrics classes;
  ASSERT_TRUE(session.evaluate(val, &loss, &classes, &error)) << error;
  EXPECT_DOUBLE_EQ(loss, last.val_loss);
  EXPECT_EQ(classes.confusion, last.val_classes.confusion);
  // Gradient statistics for every trainable weight, sane figures.
  ASSERT_EQ(last.gradients.size(), 5u);
  for (const EpochGradientStats& g : last.gradients) {
    EXPECT_GT(g.mean_norm, 0.0) << g.name;
    EXPECT_LE(g.mean_norm, g.max_norm) << g.name;
    EXPECT_LE(g.min, g.max) << g.name;
  }
  EXPECT_GT(last.samples_per_second, 0.0);
  // JSONL line carries the same figures.
  const std::string json = epoch_metrics_json(last);
  EXPECT_NE(json.find("\"epoch\":6"), std::string::npos) << json;
  EXPECT_EQ(json.find('\n'), std::string::npos);
}

TEST(TrainingSessionTest, ClassIdsAndOneHotRowsTrainIdentically) {
  TrainingData ids = toy_data(20, 7);
  TrainingData rows = ids;
  rows.labels.clear();
  rows.target_width = 3;
  for (int32_t label : ids.labels) {
    for (int k = 0; k < 3; ++k) rows.targets.push_back(k == label ? 1.f : 0.f);
  }
  std::vector<std::vector<uint8_t>> trained;
  for (const TrainingData* data : {&ids, &rows}) {
    TrainingRunSpec spec;
    spec.model_bytes = golden_model_bytes();
    spec.config.batch_size = 4;
    spec.epochs = 2;
    spec.seed = 11;
    TrainingSession session;
    std::string error;
    ASSERT_TRUE(session.prepare(spec, *data, nullptr, &error)) << error;
    ASSERT_EQ(session.run().outcome, TrainingOutcome::kCompleted);
    trained.emplace_back();
    ASSERT_TRUE(session.trained_model(ModelFormat::kTflite, &trained.back(), &error)) << error;
  }
  EXPECT_EQ(trained[0], trained[1]);
}

TEST(TrainingSessionTest, CancelKeepsFinishedEpochsAndFrozenWeightsStay) {
  TrainingRunSpec spec;
  spec.model_bytes = golden_model_bytes();
  spec.config.scope = TrainableScope::kFc;
  spec.config.batch_size = 5;
  spec.epochs = 50;
  TrainingData train = toy_data(20, 5);
  TrainingSession session;
  std::string error;
  ASSERT_TRUE(session.prepare(spec, train, nullptr, &error)) << error;
  ASSERT_EQ(session.trainable_weights().size(), 2u);  // dense kernel + bias
  std::atomic<bool> cancel{false};
  TrainingOutcome finished = TrainingOutcome::kNotRun;
  const TrainingResult result = session.run(
      [&](const TrainingEvent& e) {
        if (e.kind == TrainingEvent::Kind::kEpoch && e.epoch == 3) cancel = true;
        if (e.kind == TrainingEvent::Kind::kFinished) finished = e.outcome;
      },
      &cancel);
  EXPECT_EQ(result.outcome, TrainingOutcome::kCancelled);
  EXPECT_EQ(finished, TrainingOutcome::kCancelled);
  ASSERT_EQ(result.epochs.size(), 4u);  // initial + 3 finished epochs
  EXPECT_EQ(result.steps, 12);
  std::vector<uint8_t> trained;
  ASSERT_TRUE(session.trained_model(ModelFormat::kTflite, &trained, &error)) << error;
  EXPECT_EQ(weights_of(trained, session.trainable_weights()[0].name).size(), 12u);
  // Scope fc: the GRU weights are the original ones, the dense kernel moved.
  const std::vector<uint8_t> original = golden_model_bytes();
  tools::LoadedModel loaded;
  ASSERT_TRUE(tools::load_model_bytes(original, "original", &loaded, &error)) << error;
  SubgraphView sg = loaded.model.subgraph(0);
  int changed = 0, constants = 0;
  for (int t = 0; t < sg.tensor_count; ++t) {
    TensorView view = sg.tensor(t);
    if (!view.is_constant() || view.type != TensorType::FLOAT32) continue;
    ++constants;
    std::vector<float> before(view.data.size / 4);
    std::memcpy(before.data(), view.data.data, view.data.size);
    changed += weights_of(trained, view.name) != before;
  }
  EXPECT_GE(constants, 5);
  EXPECT_EQ(changed, 2);
}

TEST(TrainingSessionTest, EarlyStoppingRestoresTheBestWeights) {
  TrainingRunSpec spec;
  spec.model_bytes = golden_model_bytes();
  spec.config.learning_rate = 0.5f;  // too large on purpose: the validation loss gets worse
  spec.config.batch_size = 1;
  spec.epochs = 40;
  spec.early_stopping.patience = 2;
  TrainingData train = toy_data(20, 8), val = toy_data(20, 9);
  TrainingSession session;
  std::string error;
  ASSERT_TRUE(session.prepare(spec, train, &val, &error)) << error;
  const TrainingResult result = session.run();
  ASSERT_EQ(result.outcome, TrainingOutcome::kEarlyStopped) << result.error;
  ASSERT_GE(result.best_epoch, 1);
  const int last = result.epochs.back().epoch;
  EXPECT_EQ(last, result.best_epoch + 2);
  double loss = 0.0;
  ASSERT_TRUE(session.evaluate(val, &loss, nullptr, &error)) << error;
  EXPECT_DOUBLE_EQ(loss, result.epochs[static_cast<size_t>(result.best_epoch)].val_loss);
}

TEST(TrainingSessionTest, ResumedFromACheckpointEqualsUninterruptedTraining) {
  const std::string checkpoint = ::testing::TempDir() + "gruwb_training_session.ckpt";
  TrainingData train = toy_data(20, 12);
  auto make_spec = [&](int epochs) {
    TrainingRunSpec spec;
    spec.model_bytes = golden_model_bytes();
    spec.config.batch_size = 3;  // 20 samples: a short last batch every epoch
    spec.epochs = epochs;
    spec.seed = 6;
    return spec;
  };
  std::string error;
  std::vector<uint8_t> uninterrupted, resumed;
  {
    TrainingSession session;
    ASSERT_TRUE(session.prepare(make_spec(4), train, nullptr, &error)) << error;
    ASSERT_EQ(session.run().outcome, TrainingOutcome::kCompleted);
    ASSERT_TRUE(session.trained_model(ModelFormat::kTflite, &uninterrupted, &error)) << error;
  }
  {
    TrainingRunSpec spec = make_spec(2);
    spec.checkpoint_path = checkpoint;
    TrainingSession session;
    ASSERT_TRUE(session.prepare(spec, train, nullptr, &error)) << error;
    ASSERT_EQ(session.run().outcome, TrainingOutcome::kCompleted);
  }
  {
    TrainingRunSpec spec = make_spec(4);
    spec.checkpoint_path = checkpoint;
    spec.resume = true;
    TrainingSession session;
    ASSERT_TRUE(session.prepare(spec, train, nullptr, &error)) << error;
    const TrainingResult result = session.run();
    ASSERT_EQ(result.outcome, TrainingOutcome::kCompleted) << result.error;
    ASSERT_EQ(result.epochs.size(), 2u);  // epochs 3 and 4
    EXPECT_EQ(result.epochs.front().epoch, 3);
    EXPECT_EQ(result.steps, 4 * 7);
    ASSERT_TRUE(session.trained_model(ModelFormat::kTflite, &resumed, &error)) << error;
  }
  EXPECT_EQ(uninterrupted, resumed);
  // Another seed would see another sample order: refused, named.
  TrainingRunSpec spec = make_spec(4);
  spec.checkpoint_path = checkpoint;
  spec.resume = true;
  spec.seed = 7;
  TrainingSession session;
  EXPECT_FALSE(session.prepare(spec, train, nullptr, &error));
  EXPECT_NE(error.find("saved with seed 6"), std::string::npos) << error;
}

// Batched passes (each batch one pass of B rows through the batched GRU and FC
// kernels) train the reference model on real data like single-sample passes
// accumulated over the batch: the same per-epoch loss, accuracy and validation
// figures and the same weights, within float rounding (docs/training-design.md,
// "Batched training"). 40 samples in batches of 16: two full batches and a
// short one of 8 per epoch.
TEST(TrainingSessionTest, BatchedPassesTrainLikeSingleSamples) {
  const std::string samples = std::string(GRUWB_SOURCE_DIR) + "/resources/samples/";
  Dataset ds;
  std::string error;
  ASSERT_TRUE(load_ts(samples + "BasicMotionsAcc60_TRAIN.ts", &ds, &error)) << error;
  ASSERT_EQ(ds.size(), 40);
  TrainingData data;
  data.sample_shape = {60, 3};
  for (int i = 0; i < ds.size(); ++i) {
    ASSERT_EQ(ds.lengths[static_cast<size_t>(i)], 60);
    const std::vector<float>& series = ds.series[static_cast<size_t>(i)];
    data.inputs.insert(data.inputs.end(), series.begin(), series.end());
    data.labels.push_back(ds.labels[static_cast<size_t>(i)]);
  }
  std::vector<uint8_t> model;
  ASSERT_TRUE(tools::read_file_bytes(samples + "gesture_gru_fused.tflite", &model, &error))
      << error;
  struct Run {
    TrainingSession session;
    TrainingResult result;
  };
  Run runs[2];
  for (int batched = 0; batched < 2; ++batched) {
    TrainingRunSpec spec;
    spec.model_bytes = model;
    spec.config.loss = Loss::kSparseCategoricalCrossEntropy;
    spec.config.optimizer = Optimizer::kAdam;
    spec.config.learning_rate = 3e-3f;
    spec.config.batch_size = 16;
    spec.epochs = 3;
    spec.seed = 5;
    spec.batched_passes = batched == 1;
    Run& run = runs[batched];
    ASSERT_TRUE(run.session.prepare(spec, data, &data, &error)) << error;
    EXPECT_EQ(run.session.trainer().batch_rows(), batched ? 16 : 1);
    run.result = run.session.run();
    ASSERT_EQ(run.result.outcome, TrainingOutcome::kCompleted) << run.result.error;
  }
  const TrainingResult& one = runs[0].result;
  const TrainingResult& many = runs[1].result;
  ASSERT_EQ(one.epochs.size(), many.epochs.size());
  EXPECT_EQ(one.steps, 9);
  EXPECT_EQ(many.steps, one.steps);
  for (size_t e = 0; e < one.epochs.size(); ++e) {
    const EpochMetrics& a = one.epochs[e];
    const EpochMetrics& b = many.epochs[e];
    EXPECT_NEAR(b.train_loss, a.train_loss, 1e-5 * a.train_loss) << "epoch " << e;
    EXPECT_NEAR(b.val_loss, a.val_loss, 1e-5 * a.val_loss) << "epoch " << e;
    EXPECT_EQ(b.train_accuracy, a.train_accuracy) << "epoch " << e;
    EXPECT_EQ(b.val_accuracy, a.val_accuracy) << "epoch " << e;
  }
  EXPECT_LT(one.epochs.back().train_loss, one.epochs.front().train_loss);
  Trainer& a = runs[0].session.trainer();
  Trainer& b = runs[1].session.trainer();
  ASSERT_EQ(a.weight_count(), b.weight_count());
  for (int w = 0; w < a.weight_count(); ++w) {
    const Tensor* x = a.weight(w);
    const Tensor* y = b.weight(w);
    float largest = 0.f;
    for (int64_t i = 0; i < x->elements(); ++i) largest = std::max(largest, std::fabs(x->f32()[i]));
    for (int64_t i = 0; i < x->elements(); ++i) {
      ASSERT_NEAR(y->f32()[i], x->f32()[i], 1e-5f * largest) << x->name << " element " << i;
    }
  }
}

TEST(TrainingSessionTest, ClassMetricsFromAConfusionMatrix) {
  // rows: true class; columns: predicted
  const ClassMetrics m = class_metrics({{5, 1, 0}, {2, 3, 0}, {0, 0, 0}});
  EXPECT_EQ(m.samples, 11);
  EXPECT_DOUBLE_EQ(m.accuracy, 8.0 / 11.0);
  EXPECT_DOUBLE_EQ(m.precision[0], 5.0 / 7.0);
  EXPECT_DOUBLE_EQ(m.recall[0], 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.precision[1], 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(m.recall[1], 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(m.precision[2], 0.0);  // never predicted, never true
  EXPECT_DOUBLE_EQ(m.recall[2], 0.0);
}

TEST(TrainingSessionTest, BadDataAndSettingsAreNamed) {
  TrainingRunSpec spec;
  spec.model_bytes = golden_model_bytes();
  spec.model_label = "golden.tflite";
  TrainingSession session;
  std::string error;
  TrainingData data = toy_data(4, 1);
  data.sample_shape = {3, 5};
  data.inputs_label = "x.npy";
  EXPECT_FALSE(session.prepare(spec, data, nullptr, &error));
  EXPECT_EQ(error,
            "x.npy: inputs of shape (4, 3, 5) do not fit model input 'input' (1, 5, 3): expected "
            "(N, 5, 3)")
      << error;
  data = toy_data(4, 1);
  data.labels.pop_back();
  data.labels_label = "y.npy";
  EXPECT_FALSE(session.prepare(spec, data, nullptr, &error));
  EXPECT_EQ(error, "y.npy: 3 labels for 4 samples in inputs") << error;
  data = toy_data(4, 1);
  spec.config.learning_rate = -1.f;
  EXPECT_FALSE(session.prepare(spec, data, nullptr, &error));
  EXPECT_NE(error.find("golden.tflite: "), std::string::npos) << error;
  EXPECT_NE(error.find("learning rate"), std::string::npos) << error;
  spec.config.learning_rate = 1e-3f;
  spec.model_bytes = {1, 2, 3};
  EXPECT_FALSE(session.prepare(spec, data, nullptr, &error));
  EXPECT_EQ(error.rfind("golden.tflite: ", 0), 0u) << error;
  // Unprepared sessions fail politely.
  TrainingSession fresh;
  EXPECT_EQ(fresh.run().outcome, TrainingOutcome::kFailed);
}

}  // namespace
}  // namespace gruwb::app

namespace gruwb::app {
namespace {

// Scoring by plain inference (what experiments use for models the trainer
// cannot load, such as int8 ones) gives the trainer's own figures on a
// trained float model: the same confusion matrix, the same cross entropy.
TEST(TrainingSessionTest, InferenceEvaluationMatchesTheTrainers) {
  TrainingRunSpec spec;
  spec.model_bytes = golden_model_bytes();
  spec.config.learning_rate = 0.02f;
  spec.config.batch_size = 8;
  spec.epochs = 3;
  TrainingData train = toy_data(60, 3), test = toy_data(30, 4);
  TrainingSession session;
  std::string error;
  ASSERT_TRUE(session.prepare(spec, train, nullptr, &error)) << error;
  ASSERT_EQ(session.run(nullptr).outcome, TrainingOutcome::kCompleted);
  double trainer_loss = 0.0, inference_loss = 0.0;
  ClassMetrics trainer_classes, inference_classes;
  ASSERT_TRUE(session.evaluate(test, &trainer_loss, &trainer_classes, &error)) << error;
  std::vector<uint8_t> trained;
  ASSERT_TRUE(session.trained_model(ModelFormat::kTflite, &trained, &error)) << error;
  ASSERT_TRUE(evaluate_inference(trained, test, 0, &inference_loss, &inference_classes, &error))
      << error;
  EXPECT_EQ(inference_classes.confusion, trainer_classes.confusion);
  EXPECT_EQ(inference_classes.samples, 30);
  EXPECT_NEAR(inference_loss, trainer_loss, 1e-5 * std::max(1.0, trainer_loss));

  // Wrong sample size and a missing output: one line each.
  TrainingData wrong = test;
  wrong.sample_shape = {4, 3};
  wrong.inputs.resize(30 * 12);
  EXPECT_FALSE(evaluate_inference(trained, wrong, 0, &inference_loss, nullptr, &error));
  EXPECT_NE(error.find("samples of 12 values, the model's input takes 15"), std::string::npos)
      << error;
  EXPECT_FALSE(evaluate_inference(trained, test, 3, &inference_loss, nullptr, &error));
  EXPECT_EQ(error, "the model has no output 3");
}

}  // namespace
}  // namespace gruwb::app
