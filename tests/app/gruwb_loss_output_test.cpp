// `--output NAME` and the automatic loss output, through the gruwb binary:
// a real streaming model (DTLN: a [1,1,257] LOGISTIC mask beside its
// [1,2,128,2] LSTM states) with the loss checked against `gruwb run`'s
// outputs, and built models with a state output listed before the softmax.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_writer.h"
#include "engine/tools/npy.h"
#include "tests/app/cli_test_util.h"

namespace {

using gruwb::ModelFormat;
using gruwb::test::CliResult;
using gruwb::test::expect_one_error_line;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;
namespace tools = gruwb::tools;

QString write_floats(const QTemporaryDir& dir, const QString& name, std::vector<int64_t> shape,
                     const std::vector<float>& values) {
  tools::NpyArray array;
  array.dtype = "<f4";
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(float));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  const QString path = dir.filePath(name);
  std::string error;
  EXPECT_TRUE(tools::write_npy(path.toStdString(), array, &error)) << error;
  return path;
}

QString write_ints(const QTemporaryDir& dir, const QString& name, const std::vector<int32_t>& ids) {
  tools::NpyArray array;
  array.dtype = "<i4";
  array.shape = {static_cast<int64_t>(ids.size())};
  array.data.resize(ids.size() * sizeof(int32_t));
  std::memcpy(array.data.data(), ids.data(), array.data.size());
  const QString path = dir.filePath(name);
  std::string error;
  EXPECT_TRUE(tools::write_npy(path.toStdString(), array, &error)) << error;
  return path;
}

std::vector<float> uniform(size_t n, float low, float high, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(low, high);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<double> json_numbers(const QJsonArray& array) {
  std::vector<double> v;
  for (const QJsonValue& x : array) v.push_back(x.toDouble());
  return v;
}

QString real_model(const char* file) {
  return QString::fromStdString(gruwb::test::shared_dir() + "/data/models/real/" + file);
}

// ---- a real streaming model --------------------------------------------------------

class DtlnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = real_model("breizhn_dtln_model_1.tflite");
    if (!QFile::exists(model_)) GTEST_SKIP() << "no " << model_.toStdString();
    frame_ = uniform(257, 0.f, 1.f, 1);
    x_ = write_floats(dir_, "x.npy", {1, 1, 257}, frame_);
    // What the engine computes for that frame from the zero state (the
    // state input a training sample starts from).
    const QString x0 = write_floats(dir_, "x0.npy", {1, 1, 257}, frame_);
    const QString zeros = write_floats(dir_, "zeros.npy", {1, 2, 128, 2}, std::vector<float>(512));
    CliResult run = run_gruwb({"run", model_, "--input", x0, "--input", zeros, "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
    const QJsonArray outputs = parse_json(run.out)["outputs"].toArray();
    ASSERT_EQ(outputs.size(), 2);
    mask_ = json_numbers(outputs[0].toObject()["data"].toArray());
    states_ = json_numbers(outputs[1].toObject()["data"].toArray());
    ASSERT_EQ(mask_.size(), 257u);
    ASSERT_EQ(states_.size(), 512u);
  }

  static double mse(const std::vector<double>& p, const std::vector<float>& y) {
    double sum = 0.0;
    for (size_t i = 0; i < p.size(); ++i) sum += (p[i] - y[i]) * (p[i] - y[i]);
    return sum / static_cast<double>(p.size());
  }

  QTemporaryDir dir_;
  QString model_, x_;
  std::vector<float> frame_;
  std::vector<double> mask_, states_;
};

TEST_F(DtlnTest, LossGoesOnTheLogisticMaskNotTheStates) {
  const std::vector<float> target = uniform(257, 0.f, 1.f, 2);
  const QString y = write_floats(dir_, "y.npy", {1, 257}, target);
  CliResult run =
      run_gruwb({"grad", model_, "--input", x_, "--labels", y, "--loss", "mse", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  EXPECT_EQ(report["loss_output"].toString(), "Identity");
  EXPECT_EQ(report["loss_output_index"].toInt(), 0);
  EXPECT_NEAR(report["loss"].toDouble(), mse(mask_, target), 1e-5);
  // Every gradient of the two LSTMs and the Dense layers is finite.
  const QJsonArray gradients = report["gradients"].toArray();
  EXPECT_GE(gradients.size(), 6);
  for (const QJsonValue& g : gradients) {
    EXPECT_TRUE(std::isfinite(g.toObject()["norm"].toDouble()))
        << g.toObject()["name"].toString().toStdString();
  }
  // The text report says which output it is on.
  run = run_gruwb({"grad", model_, "--input", x_, "--labels", y, "--loss", "mse"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("Loss on output 0 'Identity' of 2")) << run.out.toStdString();
}

TEST_F(DtlnTest, ExplicitOutputAndLabelsOfTheStatesSize) {
  const std::vector<float> target = uniform(512, -1.f, 1.f, 3);
  const QString y = write_floats(dir_, "y_states.npy", {1, 512}, target);
  for (const QStringList& choice :
       {QStringList{}, QStringList{"--output", "Identity_1"}, QStringList{"--output", "1"}}) {
    CliResult run = run_gruwb(QStringList{"grad", model_, "--input", x_, "--labels", y, "--loss",
                                          "mse", "--train", "last:2", "--json"} +
                              choice);
    ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
    const QJsonObject report = parse_json(run.out);
    EXPECT_EQ(report["loss_output"].toString(), "Identity_1") << choice.join(' ').toStdString();
    EXPECT_NEAR(report["loss"].toDouble(), mse(states_, target), 1e-5);
  }
  // The mask asked for explicitly: the labels do not fit it, one line.
  CliResult run = run_gruwb(
      {"grad", model_, "--input", x_, "--labels", y, "--loss", "mse", "--output", "Identity"});
  expect_one_error_line(run, y, "do not fit model output 'Identity'");
}

TEST_F(DtlnTest, UnknownOutputNamesTheCandidates) {
  const QString y = write_floats(dir_, "y.npy", {1, 257}, uniform(257, 0.f, 1.f, 2));
  for (const char* command : {"grad", "train"}) {
    QStringList args = {command, model_,   "--input", x_,         "--labels",
                        y,       "--loss", "mse",     "--output", "logits"};
    CliResult run = run_gruwb(args);
    expect_one_error_line(run, model_, "no output named 'logits'");
    EXPECT_TRUE(run.err.contains("'Identity' [1,1,257], 'Identity_1' [1,2,128,2]"))
        << run.err.toStdString();
  }
}

// ---- built models whose state comes first ------------------------------------------

// A fused GRU classifier (T=5, F=3, H units, 3 classes) and the same model
// with extra outputs in front: `extra` lists tensors by role ("state": the
// GRU's last state, "logits": the classifier before its SOFTMAX), and
// `drop_probs` removes the SOFTMAX output.
struct Built {
  QString plain, streaming;
};

Built build_models(const QTemporaryDir& dir, int units, const std::vector<std::string>& extra,
                   bool drop_probs, const QString& stem) {
  tools::BuildSpec spec;
  spec.cell = tools::find_cell("gru");
  spec.layout = tools::RnnLayout::kFused;
  spec.timesteps = 5;
  spec.features = 3;
  spec.units = units;
  spec.classes = 3;
  spec.seed = 7;
  tools::ModelDef def;
  std::string error;
  EXPECT_TRUE(tools::build_model(spec, &def, &error)) << error;
  Built built;
  built.plain = dir.filePath(stem + "_plain.tflite");
  EXPECT_TRUE(tools::save_model(def, ModelFormat::kTflite, built.plain.toStdString(), &error))
      << error;
  auto& graph = *def.subgraphs[0];
  int32_t logits = -1, state = -1;
  for (const auto& op : graph.operators) {
    const auto code = def.operator_codes[op->opcode_index]->builtin_code;
    if (static_cast<int>(code) == static_cast<int>(gruwb::BuiltinOperator::SOFTMAX)) {
      logits = op->inputs[0];
    }
  }
  for (const auto& op : graph.operators) {
    if (!op->outputs.empty() && op->outputs[0] == logits) state = op->inputs[0];
  }
  EXPECT_GE(logits, 0);
  EXPECT_GE(state, 0);
  std::vector<int32_t> outputs;
  for (const std::string& role : extra) outputs.push_back(role == "state" ? state : logits);
  if (!drop_probs) outputs.insert(outputs.end(), graph.outputs.begin(), graph.outputs.end());
  graph.outputs = outputs;
  if (!def.signature_defs.empty()) def.signature_defs.clear();  // they list the old outputs
  built.streaming = dir.filePath(stem + ".tflite");
  EXPECT_TRUE(tools::save_model(def, ModelFormat::kTflite, built.streaming.toStdString(), &error))
      << error;
  return built;
}

class BuiltTwoOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = write_floats(dir_, "x.npy", {6, 5, 3}, uniform(6 * 15, -1.f, 1.f, 4));
    y_ = write_ints(dir_, "y.npy", {0, 1, 2, 2, 1, 0});
  }
  QTemporaryDir dir_;
  QString x_, y_;
};

TEST_F(BuiltTwoOutputsTest, GradientsEqualThoseOfTheSingleOutputModel) {
  const Built built = build_models(dir_, 4, {"state"}, false, "state_first");
  CliResult plain = run_gruwb({"grad", built.plain, "--input", x_, "--labels", y_, "--json"});
  CliResult streaming =
      run_gruwb({"grad", built.streaming, "--input", x_, "--labels", y_, "--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err.toStdString();
  ASSERT_EQ(streaming.exit_code, 0) << streaming.err.toStdString();
  const QJsonObject a = parse_json(plain.out), b = parse_json(streaming.out);
  EXPECT_EQ(b["loss_output_index"].toInt(), 1);
  EXPECT_EQ(b["loss_output"].toString(), a["loss_output"].toString());
  EXPECT_DOUBLE_EQ(a["loss"].toDouble(), b["loss"].toDouble());
  const QJsonArray ga = a["gradients"].toArray(), gb = b["gradients"].toArray();
  ASSERT_EQ(ga.size(), gb.size());
  for (int w = 0; w < ga.size(); ++w) {
    const std::vector<double> va = json_numbers(ga[w].toObject()["values"].toArray());
    const std::vector<double> vb = json_numbers(gb[w].toObject()["values"].toArray());
    ASSERT_EQ(va.size(), vb.size());
    for (size_t i = 0; i < va.size(); ++i) EXPECT_DOUBLE_EQ(va[i], vb[i]) << w << " " << i;
  }
}

TEST_F(BuiltTwoOutputsTest, TrainExperimentAndBenchTakeTheOption) {
  const Built built = build_models(dir_, 4, {"state"}, false, "state_first");
  const QString trained = dir_.filePath("trained.tflite");
  CliResult run = run_gruwb({"train", built.streaming, "--inputs", x_, "--labels", y_, "--epochs",
                             "1", "--batch", "2", "--quiet", "-o", trained});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(QFile::exists(trained));
  // Output 0 (the state, one row of 4) asked for: class ids 0..2 fit it,
  // so the loss goes there, as asked.
  run = run_gruwb({"train", built.streaming, "--inputs", x_, "--labels", y_, "--epochs", "1",
                   "--quiet", "--output", "0"});
  EXPECT_EQ(run.exit_code, 0) << run.err.toStdString();
  // The old spelling of -o: one line saying so.
  run = run_gruwb({"train", built.streaming, "--inputs", x_, "--labels", y_, "--output", trained});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(
      run.err.startsWith("gruwb: train: --output names the model output the loss goes "
                         "on; save the trained model with -o"))
      << run.err.toStdString();
  // Board training checks the name before any port is opened.
  const QString data = QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotionsAcc60_TRAIN.ts";
  run = run_gruwb({"board", "train", "--port", "/dev/null", "--model", built.streaming, "--data",
                   data, "--output", "missing"});
  expect_one_error_line(run, built.streaming, "no output named 'missing'");
  // A built model has one output: --output is for model files.
  run = run_gruwb({"experiment", "--build", "cell=gru,units=4", "--data", x_, "--output", "probs"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.contains("a built model has one output")) << run.err.toStdString();
  run = run_gruwb({"bench", built.streaming, "--train", "all", "--min-time", "0.001",
                   "--repetitions", "1", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject bench = parse_json(run.out);
  EXPECT_FALSE(bench["training"].toObject()["loss_output"].toString().isEmpty());
  run = run_gruwb({"bench", built.streaming, "--train", "all", "--output", "missing"});
  expect_one_error_line(run, built.streaming, "no output named 'missing'");
  run = run_gruwb({"bench", built.streaming, "--output", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.contains("add --train SCOPE")) << run.err.toStdString();
}

TEST_F(BuiltTwoOutputsTest, AmbiguousOutputsAreOneLineNamingThem) {
  // State [1,3] and logits [1,3], no SOFTMAX output: both fit 3 classes.
  const Built built = build_models(dir_, 3, {"state", "logits"}, true, "ambiguous");
  for (const char* command : {"grad", "train"}) {
    CliResult run =
        run_gruwb({command, built.streaming, "--input", x_, "--labels", y_, "--loss", "mse"});
    // mse with class ids: one-hot rows of 3 for either output.
    expect_one_error_line(run, built.streaming, "several float outputs fit the labels");
    EXPECT_TRUE(run.err.contains("[1,3], '")) << run.err.toStdString();
    EXPECT_TRUE(run.err.contains("--output NAME")) << run.err.toStdString();
  }
  CliResult run = run_gruwb({"grad", built.streaming, "--input", x_, "--labels", y_, "--loss",
                             "mse", "--output", "1", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_EQ(parse_json(run.out)["loss_output_index"].toInt(), 1);
}

}  // namespace
