// `gruwb train` as a user runs it, on real data: BasicMotions (UEA, 40
// train / 40 test recordings of 6 IMU channels x 100 steps, 4 classes) from
// resources/samples, parsed here (only the few lines the test needs). From
// the same initial model, `--train fc` and `--train all` both lower the loss
// and all ends above fc in accuracy. Plus the JSONL metrics, the saved model
// and bad input.

#include <QFile>
#include <QJsonArray>
#include <QMap>
#include <QStringList>
#include <QTemporaryDir>
#include <QTextStream>
#include <cmath>
#include <cstring>

#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"
#include "tests/app/cli_test_util.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::expect_one_error_line;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;
namespace tools = gruwb::tools;

constexpr int kSteps = 100, kChannels = 6, kClasses = 4;

struct Samples {
  std::vector<float> x;  // [N, 100, 6]
  std::vector<int32_t> y;
  int count = 0;
};

// A .ts data line: 6 dimensions separated by ':', each 100 comma-separated
// values, then the class name; classes in the header's order.
Samples read_basic_motions(const char* file) {
  Samples s;
  QFile f(QString(GRUWB_SOURCE_DIR) + "/resources/samples/" + file);
  EXPECT_TRUE(f.open(QIODevice::ReadOnly | QIODevice::Text)) << file;
  QTextStream in(&f);
  QStringList classes;
  bool data = false;
  while (!in.atEnd()) {
    const QString line = in.readLine().trimmed();
    if (line.isEmpty() || line.startsWith('#')) continue;
    if (line.startsWith("@classLabel")) classes = line.split(' ').mid(2);
    if (line == "@data") {
      data = true;
      continue;
    }
    if (!data) continue;
    const QStringList dims = line.split(':');
    EXPECT_EQ(dims.size(), kChannels + 1) << file;
    if (dims.size() != kChannels + 1) break;
    std::vector<float> sample(kSteps * kChannels);
    for (int c = 0; c < kChannels; ++c) {
      const QStringList values = dims[c].split(',');
      EXPECT_EQ(values.size(), kSteps);
      for (int t = 0; t < kSteps && t < values.size(); ++t) {
        sample[static_cast<size_t>(t * kChannels + c)] = values[t].toFloat();
      }
    }
    s.x.insert(s.x.end(), sample.begin(), sample.end());
    s.y.push_back(static_cast<int32_t>(classes.indexOf(dims.back())));
    ++s.count;
  }
  EXPECT_EQ(classes.size(), kClasses);
  return s;
}

QString write_x(const QTemporaryDir& dir, const QString& name, const Samples& s) {
  tools::NpyArray a;
  a.dtype = "<f4";
  a.shape = {s.count, kSteps, kChannels};
  a.data.resize(s.x.size() * 4);
  std::memcpy(a.data.data(), s.x.data(), a.data.size());
  std::string error;
  EXPECT_TRUE(tools::write_npy(dir.filePath(name).toStdString(), a, &error)) << error;
  return dir.filePath(name);
}

QString write_y(const QTemporaryDir& dir, const QString& name, const Samples& s) {
  tools::NpyArray a;
  a.dtype = "<i4";
  a.shape = {s.count};
  a.data.resize(s.y.size() * 4);
  std::memcpy(a.data.data(), s.y.data(), a.data.size());
  std::string error;
  EXPECT_TRUE(tools::write_npy(dir.filePath(name).toStdString(), a, &error)) << error;
  return dir.filePath(name);
}

// The initial model: GRU(16) with the training data's per-channel
// normalisation (Keras Normalization), Dense 4, softmax; builder seed 5.
QString initial_model(const QTemporaryDir& dir, const Samples& train) {
  tools::BuildSpec spec;
  spec.timesteps = kSteps;
  spec.features = kChannels;
  spec.units = 16;
  spec.classes = kClasses;
  spec.seed = 5;
  spec.mean.assign(kChannels, 0.f);
  spec.variance.assign(kChannels, 0.f);
  const double n = static_cast<double>(train.count) * kSteps;
  for (size_t i = 0; i < train.x.size(); ++i) spec.mean[i % kChannels] += train.x[i] / n;
  for (size_t i = 0; i < train.x.size(); ++i) {
    const double d = train.x[i] - spec.mean[i % kChannels];
    spec.variance[i % kChannels] += static_cast<float>(d * d / n);
  }
  tools::ModelDef def;
  std::string error;
  EXPECT_TRUE(tools::build_model(spec, &def, &error)) << error;
  const QString path = dir.filePath("initial.tflite");
  EXPECT_TRUE(tools::save_model(def, spec.format, path.toStdString(), &error)) << error;
  return path;
}

struct Data {
  QTemporaryDir dir;
  Samples train = read_basic_motions("BasicMotions_TRAIN.ts");
  Samples test = read_basic_motions("BasicMotions_TEST.ts");
  QString x, y, val_x, val_y, model;
  Data() {
    x = write_x(dir, "x.npy", train);
    y = write_y(dir, "y.npy", train);
    val_x = write_x(dir, "val_x.npy", test);
    val_y = write_y(dir, "val_y.npy", test);
    model = initial_model(dir, train);
  }
};

QList<QJsonObject> read_jsonl(const QString& path) {
  QList<QJsonObject> lines;
  QFile f(path);
  EXPECT_TRUE(f.open(QIODevice::ReadOnly)) << path.toStdString();
  for (const QByteArray& line : f.readAll().split('\n')) {
    if (!line.isEmpty()) lines.push_back(parse_json(QString::fromUtf8(line)));
  }
  return lines;
}

QStringList train_args(const Data& d, const QString& scope, const QString& metrics,
                       const QString& out) {
  return {"train", d.model,        "--inputs", d.x,       "--labels", d.y,           "--val-inputs",
          d.val_x, "--val-labels", d.val_y,    "--train", scope,      "--optimizer", "adam",
          "--lr",  "0.01",         "--batch",  "4",       "--epochs", "12",          "--seed",
          "3",     "--metrics",    metrics,    "-o",      out};
}

TEST(GruwbTrainTest, BasicMotionsFcAndAllLowerTheLossAndAllEndsAboveFc) {
  Data d;
  ASSERT_EQ(d.train.count, 40);
  ASSERT_EQ(d.test.count, 40);
  std::map<QString, QList<QJsonObject>> metrics;
  for (const QString scope : {"fc", "all"}) {
    const QString jsonl = d.dir.filePath(scope + ".jsonl");
    const QString out = d.dir.filePath(scope + ".tflite");
    const CliResult run = run_gruwb(train_args(d, scope, jsonl, out));
    ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
    EXPECT_TRUE(run.out.contains("\nepoch 12/12 ")) << run.out.toStdString();
    EXPECT_TRUE(run.out.contains(" samples/s\n")) << run.out.toStdString();
    EXPECT_TRUE(run.out.contains("Saved " + out)) << run.out.toStdString();
    metrics[scope] = read_jsonl(jsonl);
    ASSERT_EQ(metrics[scope].size(), 13) << scope.toStdString();  // initial + 12 epochs
    // The saved model runs with `gruwb run`.
    const CliResult check = run_gruwb({"run", out, "--arena"});
    EXPECT_EQ(check.exit_code, 0) << check.err.toStdString();
  }
  const QJsonObject fc0 = metrics["fc"].front(), all0 = metrics["all"].front();
  const QJsonObject fc = metrics["fc"].back(), all = metrics["all"].back();
  // The same initial model: the same initial figures.
  EXPECT_EQ(fc0["loss"].toDouble(), all0["loss"].toDouble());
  EXPECT_EQ(fc0["val_accuracy"].toDouble(), all0["val_accuracy"].toDouble());
  std::printf("BasicMotions: initial val acc %.3f / loss %.3f; fc %.3f / %.3f; all %.3f / %.3f\n",
              fc0["val_accuracy"].toDouble(), fc0["val_loss"].toDouble(),
              fc["val_accuracy"].toDouble(), fc["val_loss"].toDouble(),
              all["val_accuracy"].toDouble(), all["val_loss"].toDouble());
  EXPECT_LT(fc["loss"].toDouble(), fc0["loss"].toDouble());
  EXPECT_LT(all["loss"].toDouble(), all0["loss"].toDouble());
  EXPECT_LT(fc["val_loss"].toDouble(), fc0["val_loss"].toDouble());
  EXPECT_LT(all["val_loss"].toDouble(), all0["val_loss"].toDouble());
  EXPECT_GT(all["val_accuracy"].toDouble(), fc["val_accuracy"].toDouble());
  EXPECT_GT(all["accuracy"].toDouble(), fc["accuracy"].toDouble());
  // Gradient statistics: fc trains 2 tensors, all 5 (+ the GRU's).
  EXPECT_EQ(fc["gradients"].toArray().size(), 2);
  EXPECT_EQ(all["gradients"].toArray().size(), 5);
  // Confusion matrix of the validation data: 4x4, 40 samples.
  const QJsonArray confusion = all["val_confusion"].toArray();
  ASSERT_EQ(confusion.size(), kClasses);
  int total = 0, diagonal = 0;
  for (int r = 0; r < kClasses; ++r) {
    for (int c = 0; c < kClasses; ++c) {
      total += confusion[r].toArray()[c].toInt();
      if (r == c) diagonal += confusion[r].toArray()[c].toInt();
    }
  }
  EXPECT_EQ(total, 40);
  EXPECT_DOUBLE_EQ(all["val_accuracy"].toDouble(), diagonal / 40.0);
}

TEST(GruwbTrainTest, SameSeedSameModelAndSavedWeightsGiveTheReportedAccuracy) {
  Data d;
  const QString a = d.dir.filePath("a.tflite"), b = d.dir.filePath("b.tflite");
  QStringList args = train_args(d, "all", d.dir.filePath("a.jsonl"), a);
  args.replace(args.indexOf("12"), "2");
  ASSERT_EQ(run_gruwb(args).exit_code, 0);
  args.replace(args.indexOf(a), b);
  ASSERT_EQ(run_gruwb(args).exit_code, 0);
  QFile fa(a), fb(b);
  ASSERT_TRUE(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
  EXPECT_EQ(fa.readAll(), fb.readAll());

  // Re-running the saved model on the validation data reproduces the last
  // epoch's val accuracy (the session evaluated exactly these weights).
  tools::LoadedModel loaded;
  std::string error;
  ASSERT_TRUE(tools::load_model_file(a.toStdString(), &loaded, &error)) << error;
  tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;
  int correct = 0;
  for (int i = 0; i < d.test.count; ++i) {
    std::memcpy(runner.interpreter().input(0)->data, d.test.x.data() + i * kSteps * kChannels,
                kSteps * kChannels * sizeof(float));
    ASSERT_TRUE(runner.invoke(&error)) << error;
    const float* p = runner.interpreter().output(0)->f32();
    const int predicted = static_cast<int>(std::max_element(p, p + kClasses) - p);
    correct += predicted == d.test.y[static_cast<size_t>(i)];
  }
  const QList<QJsonObject> metrics = read_jsonl(d.dir.filePath("a.jsonl"));
  ASSERT_EQ(metrics.size(), 3);
  EXPECT_DOUBLE_EQ(metrics.back()["val_accuracy"].toDouble(), correct / 40.0);
}

// The shipped gesture GRU as a WHILE loop and as one fused op hold the same
// weights (resources/samples/README.md): trained alike, the saved files must
// compute the same function, so the loop body's new weights reach the file.
TEST(GruwbTrainTest, WhileAndFusedSamplesTrainedAlikeSaveTheSameFunction) {
  QTemporaryDir dir;
  constexpr int kCount = 8, kT = 60, kF = 3;
  Samples s;
  s.count = kCount;
  uint32_t state = 12345;  // LCG: deterministic wrist-like values in [-1, 1)
  for (int i = 0; i < kCount * kT * kF; ++i) {
    state = state * 1664525u + 1013904223u;
    s.x.push_back(static_cast<float>(state >> 8) / 8388608.0f - 1.0f);
  }
  for (int i = 0; i < kCount; ++i) s.y.push_back(i % 4);
  tools::NpyArray x;
  x.dtype = "<f4";
  x.shape = {kCount, kT, kF};
  x.data.resize(s.x.size() * 4);
  std::memcpy(x.data.data(), s.x.data(), x.data.size());
  std::string error;
  ASSERT_TRUE(tools::write_npy(dir.filePath("x.npy").toStdString(), x, &error)) << error;
  const QString y = write_y(dir, "y.npy", s);

  const QString samples = QString(GRUWB_SOURCE_DIR) + "/resources/samples/";
  std::vector<float> outputs[2];
  const char* names[2] = {"gesture_gru_while.tflite", "gesture_gru_fused.tflite"};
  for (int m = 0; m < 2; ++m) {
    const QString out = dir.filePath(QString("trained_%1.tflite").arg(m));
    // The loop as written: this compares BPTT through the WHILE loop with the fused op's.
    const CliResult r = run_gruwb({"train",
                                   "--as-written",
                                   samples + names[m],
                                   "--inputs",
                                   dir.filePath("x.npy"),
                                   "--labels",
                                   y,
                                   "--train",
                                   "all",
                                   "--optimizer",
                                   "adam",
                                   "--lr",
                                   "0.01",
                                   "--batch",
                                   "4",
                                   "--epochs",
                                   "2",
                                   "--seed",
                                   "3",
                                   "--quiet",
                                   "-o",
                                   out});
    ASSERT_EQ(r.exit_code, 0) << names[m] << ": " << r.err.toStdString();
    tools::LoadedModel loaded;
    ASSERT_TRUE(tools::load_model_file(out.toStdString(), &loaded, &error)) << error;
    tools::ModelRunner runner;
    ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;
    for (int i = 0; i < kCount; ++i) {
      std::memcpy(runner.interpreter().input(0)->data, s.x.data() + i * kT * kF,
                  kT * kF * sizeof(float));
      ASSERT_TRUE(runner.invoke(&error)) << error;
      const float* p = runner.interpreter().output(0)->f32();
      outputs[m].insert(outputs[m].end(), p, p + 4);
    }
  }
  ASSERT_EQ(outputs[0].size(), outputs[1].size());
  for (size_t i = 0; i < outputs[0].size(); ++i) EXPECT_NEAR(outputs[0][i], outputs[1][i], 1e-4);

  // And training changed the loop model: its output differs from the shipped one.
  tools::LoadedModel original;
  ASSERT_TRUE(tools::load_model_file((samples + names[0]).toStdString(), &original, &error));
  tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(original.model, &error)) << error;
  std::memcpy(runner.interpreter().input(0)->data, s.x.data(), kT * kF * sizeof(float));
  ASSERT_TRUE(runner.invoke(&error)) << error;
  const float* p = runner.interpreter().output(0)->f32();
  float difference = 0.f;
  for (int c = 0; c < 4; ++c) difference += std::fabs(p[c] - outputs[0][static_cast<size_t>(c)]);
  EXPECT_GT(difference, 1e-3f);
}

// The arena bytes from "...; arena N bytes (...)".
qint64 arena_bytes(const QString& out) {
  const int at = out.indexOf("; arena ");
  return at < 0 ? -1 : out.mid(at + 8).section(' ', 0, 0).toLongLong();
}

// A batch trains in one pass of B rows, or with --single-sample-passes as B passes of one
// sample as a board does: the arena of batch 1, and the same training within float rounding.
TEST(GruwbTrainTest, SingleSamplePassesNeedBatchOnesArenaAndTrainAlike) {
  Data d;
  QMap<QString, QList<QJsonObject>> metrics;
  QMap<QString, CliResult> runs;
  for (const QString form : {"one-pass", "single", "batch1"}) {
    const QString jsonl = d.dir.filePath(form + ".jsonl");
    QStringList args = train_args(d, "all", jsonl, d.dir.filePath(form + ".tflite"));
    args[args.indexOf("--epochs") + 1] = "2";
    if (form == "single") args << "--single-sample-passes";
    if (form == "batch1") args[args.indexOf("--batch") + 1] = "1";
    runs[form] = run_gruwb(args);
    ASSERT_EQ(runs[form].exit_code, 0) << form.toStdString() << runs[form].err.toStdString();
    metrics[form] = read_jsonl(jsonl);
  }
  EXPECT_TRUE(runs["one-pass"].out.contains("(one pass of 4 rows)"))
      << runs["one-pass"].out.toStdString();
  EXPECT_TRUE(runs["single"].out.contains("(single-sample passes)"))
      << runs["single"].out.toStdString();
  EXPECT_EQ(arena_bytes(runs["single"].out), arena_bytes(runs["batch1"].out));
  EXPECT_GT(arena_bytes(runs["one-pass"].out), arena_bytes(runs["single"].out));
  ASSERT_EQ(metrics["one-pass"].size(), 3);
  ASSERT_EQ(metrics["single"].size(), 3);
  for (int epoch = 1; epoch <= 2; ++epoch) {
    const double a = metrics["one-pass"][epoch]["loss"].toDouble();
    const double b = metrics["single"][epoch]["loss"].toDouble();
    EXPECT_NEAR(a, b, 1e-4 * std::fabs(b)) << "epoch " << epoch;
  }
}

// A deployed int8 model fine-tuned: `gruwb quantize` makes the GRU classifier full-integer,
// `gruwb train` trains its float form on the same float data (the loss falls), saves float32,
// and `gruwb quantize` makes that integer again.
TEST(GruwbTrainTest, FullIntegerModelTrainsItsFloatFormAndQuantizesAgain) {
  Data d;
  const QString int8 = d.dir.filePath("int8.tflite");
  const CliResult quantized = run_gruwb({"quantize", d.model, "--data", d.x, "-o", int8});
  ASSERT_EQ(quantized.exit_code, 0) << quantized.err.toStdString();
  d.model = int8;
  const QString jsonl = d.dir.filePath("int8.jsonl"), trained = d.dir.filePath("trained.tflite");
  QStringList args = train_args(d, "all", jsonl, trained);
  args[args.indexOf("--epochs") + 1] = "3";
  const CliResult run = run_gruwb(args);
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("full-integer model: training its float form"))
      << run.out.toStdString();
  const QList<QJsonObject> metrics = read_jsonl(jsonl);
  ASSERT_EQ(metrics.size(), 4);
  EXPECT_LT(metrics[3]["loss"].toDouble(), metrics[0]["loss"].toDouble());

  tools::LoadedModel saved;
  std::string error;
  ASSERT_TRUE(tools::load_model_file(trained.toStdString(), &saved, &error)) << error;
  tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(saved.model, &error)) << error;
  EXPECT_EQ(runner.interpreter().input(0)->type, gruwb::TensorType::FLOAT32);
  for (int t = 0; t < saved.model.subgraph(0).tensor_count; ++t) {
    const gruwb::TensorType type = saved.model.subgraph(0).tensor(t).type;
    EXPECT_NE(type, gruwb::TensorType::INT8) << "tensor " << t;
  }
  const CliResult again =
      run_gruwb({"quantize", trained, "--data", d.x, "-o", d.dir.filePath("again.tflite")});
  EXPECT_EQ(again.exit_code, 0) << again.err.toStdString();
}

TEST(GruwbTrainTest, BadInputIsNamed) {
  Data d;
  const QString out = d.dir.filePath("t.tflite");
  // Labels of the wrong count: the file and both shapes.
  Samples few = d.train;
  few.count = 39;
  few.y.pop_back();
  const QString bad_y = write_y(d.dir, "bad_y.npy", few);
  CliResult run = run_gruwb({"train", d.model, "--inputs", d.x, "--labels", bad_y, "-o", out});
  expect_one_error_line(run, bad_y, "labels of shape (39,) do not match 40 samples in ");
  // Validation data with the wrong step count.
  Samples short_test = d.test;
  short_test.x.resize(static_cast<size_t>(d.test.count) * 50 * kChannels);
  tools::NpyArray a;
  a.dtype = "<f4";
  a.shape = {40, 50, kChannels};
  a.data.resize(short_test.x.size() * 4);
  std::memcpy(a.data.data(), short_test.x.data(), a.data.size());
  std::string error;
  const QString bad_x = d.dir.filePath("bad_x.npy");
  ASSERT_TRUE(tools::write_npy(bad_x.toStdString(), a, &error)) << error;
  run = run_gruwb({"train", d.model, "--inputs", d.x, "--labels", d.y, "--val-inputs", bad_x,
                   "--val-labels", d.val_y, "-o", out});
  expect_one_error_line(run, bad_x,
                        "inputs of shape (40, 50, 6) do not fit model input 'input' (1, 100, 6): "
                        "expected (N, 100, 6)");
  // Usage errors: exit 2 with the command's help.
  run = run_gruwb({"train", d.model, "--inputs", d.x, "--labels", d.y, "--lr", "fast"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.startsWith("gruwb: train: --lr 'fast'")) << run.err.toStdString();
  run = run_gruwb({"train", d.model, "--inputs", d.x, "--labels", d.y, "--train", "last:x"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.contains("last:N needs a whole number")) << run.err.toStdString();
  run = run_gruwb({"train", d.model, "--inputs", d.x, "--labels", d.y, "--optimizer", "rmsprop"});
  EXPECT_EQ(run.exit_code, 2);
  // Nothing was written by the failed runs.
  EXPECT_FALSE(QFile::exists(out));
  // A NaN in the data is named before any training.
  d.train.x[123] = std::nanf("");
  const QString nan_x = write_x(d.dir, "nan_x.npy", d.train);
  run = run_gruwb({"train", d.model, "--inputs", nan_x, "--labels", d.y, "-o", out});
  expect_one_error_line(run, nan_x, "element 123 is not a finite number");
}

}  // namespace
