// `gruwb run` as a user runs it: .npy in, outputs out, arena figures, errors
// that name the input and both shapes.

#include <QDir>
#include <QJsonArray>
#include <QTemporaryDir>

#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"
#include "tests/app/cli_test_util.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::expect_one_error_line;
using gruwb::test::model;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;
using gruwb::tools::NpyArray;

QString save_floats(const QTemporaryDir& dir, const char* name, std::vector<int64_t> shape,
                    const std::vector<float>& values, const char* dtype = "<f4") {
  NpyArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(float));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  const QString path = dir.filePath(name);
  std::string error;
  EXPECT_TRUE(gruwb::tools::write_npy(path.toStdString(), array, &error)) << error;
  return path;
}

// onert-micro's reference vector for gru_float.circle (README of the model folder).
const std::vector<float> kGruInput = {7.899295f,   -4.584313f,  -2.9251342f,
                                      -2.1820352f, -10.649105f, 1.3530581f};
const std::vector<float> kGruExpected = {-0.9979859f, -0.90550894f, 0.025957875f, -0.39570245f,
                                         -0.8868108f};

TEST(GruwbRunTest, CircleGruMatchesTheOnertMicroReferenceAndWritesNpy) {
  QTemporaryDir dir;
  const QString input = save_floats(dir, "x.npy", {1, 1, 6}, kGruInput);
  const CliResult run = run_gruwb(
      {"run", model("gru_float.circle"), "--input", input, "--json", "--output-dir", dir.path()});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  const QJsonArray outputs = report["outputs"].toArray();
  ASSERT_EQ(outputs.size(), 1);
  const QJsonArray data = outputs[0].toObject()["data"].toArray();
  ASSERT_EQ(data.size(), 5);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(data[i].toDouble(), kGruExpected[i], 1e-5) << i;

  // The .npy written beside it holds the same numbers.
  NpyArray written;
  std::string error;
  ASSERT_TRUE(gruwb::tools::read_npy(outputs[0].toObject()["file"].toString().toStdString(),
                                     &written, &error))
      << error;
  EXPECT_EQ(written.dtype, "<f4");
  EXPECT_EQ(written.shape, (std::vector<int64_t>{1, 5}));
  const float* values = reinterpret_cast<const float*>(written.data.data());
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(values[i], kGruExpected[i], 1e-5) << i;
}

TEST(GruwbRunTest, ArenaFigureIsTheOneTheEnginePlans) {
  gruwb::tools::LoadedModel loaded;
  std::string error;
  const QString path = model("tflm_hello_world_float.tflite");
  ASSERT_TRUE(gruwb::tools::load_model_file(path.toStdString(), &loaded, &error)) << error;
  gruwb::tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;

  const CliResult run = run_gruwb({"run", path, "--arena"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.startsWith(QString("Arena: %1 bytes (").arg(runner.arena_bytes())))
      << run.out.toStdString();
}

// Inputs run with the recurrent weights packed (on AVX-512 hosts, a larger arena); the arena
// reported stays the one a board plans.
TEST(GruwbRunTest, ArenaFigureStaysTheBoardsWhenInputsRun) {
  const QString path = QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite";
  gruwb::tools::LoadedModel loaded;
  std::string error;
  ASSERT_TRUE(gruwb::tools::load_model_file(path.toStdString(), &loaded, &error)) << error;
  gruwb::tools::ModelRunner board;
  ASSERT_TRUE(board.prepare(loaded.model, &error)) << error;

  QTemporaryDir dir;
  const QString input = save_floats(dir, "x.npy", {1, 60, 3}, std::vector<float>(180, 0.25f));
  const CliResult run = run_gruwb({"run", path, "--input", input, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_EQ(parse_json(run.out)["arena_bytes"].toInteger(),
            static_cast<qint64>(board.arena_bytes()));
}

TEST(GruwbRunTest, ShapeMismatchNamesTheInputAndBothShapes) {
  QTemporaryDir dir;
  const QString input = save_floats(dir, "wrong.npy", {1, 2}, {0.f, 1.f});
  const CliResult run =
      run_gruwb({"run", model("tflm_hello_world_float.tflite"), "--input", input});
  expect_one_error_line(run, input, "input 0 'serving_default_dense_input:0' has shape (1, 1)");
  EXPECT_TRUE(run.err.contains("the array has (1, 2)")) << run.err.toStdString();
}

TEST(GruwbRunTest, WrongInputCountListsTheModelInputs) {
  const CliResult run = run_gruwb({"run", model("tflm_hello_world_float.tflite"), "--arena",
                                   "--input", "a.npy", "--input", "b.npy"});
  expect_one_error_line(run, model("tflm_hello_world_float.tflite"), "got 2 --input file(s)");
}

// The full-integer LSTM prepares (its outputs against real TFLite: golden_models_test) and
// reports its arena.
TEST(GruwbRunTest, FullIntegerLstmModelPrepares) {
  const CliResult run =
      run_gruwb({"run", model("tflm_mnist_fused_lstm_int8.tflite"), "--arena", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_GT(parse_json(run.out)["arena_bytes"].toInteger(), 0);
}

TEST(GruwbRunTest, NotAnNpyFileIsNamed) {
  QTemporaryDir dir;
  QFile file(dir.filePath("x.npy"));
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  file.write("hello");
  file.close();
  const CliResult run =
      run_gruwb({"run", model("tflm_hello_world_float.tflite"), "--input", file.fileName()});
  expect_one_error_line(run, file.fileName(), "not a NumPy .npy file");
}

// The WHILE sample runs in its fused form (one line says so) and --as-written runs the loop;
// both give the same probabilities to float rounding.
TEST(GruwbRunTest, TheWhileSampleRunsFusedUnlessAsWritten) {
  QTemporaryDir dir;
  std::vector<float> window(60 * 3);
  for (size_t i = 0; i < window.size(); ++i) window[i] = static_cast<float>(i % 11) / 11.f - 0.5f;
  const QString input = save_floats(dir, "x.npy", {1, 60, 3}, window);
  const QString path = QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_while.tflite";
  const CliResult fused = run_gruwb({"run", path, "--input", input, "--json"});
  const CliResult written = run_gruwb({"run", path, "--input", input, "--json", "--as-written"});
  ASSERT_EQ(fused.exit_code, 0) << fused.err.toStdString();
  ASSERT_EQ(written.exit_code, 0) << written.err.toStdString();
  const QJsonObject a = parse_json(fused.out), b = parse_json(written.out);
  EXPECT_EQ(a["plan"].toObject()["form"].toString(), "fused");
  EXPECT_EQ(b["plan"].toObject()["form"].toString(), "as written");
  EXPECT_LT(a["arena_bytes"].toInteger(), b["arena_bytes"].toInteger());
  const QJsonArray pa = a["outputs"].toArray()[0].toObject()["data"].toArray();
  const QJsonArray pb = b["outputs"].toArray()[0].toObject()["data"].toArray();
  ASSERT_EQ(pa.size(), 4);
  ASSERT_EQ(pb.size(), 4);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(pa[k].toDouble(), pb[k].toDouble(), 1e-6) << k;

  const CliResult text = run_gruwb({"run", path, "--input", input});
  ASSERT_EQ(text.exit_code, 0) << text.err.toStdString();
  EXPECT_TRUE(text.out.startsWith("running the fused form of 1 WHILE loop"))
      << text.out.toStdString();
  const CliResult loop = run_gruwb({"run", path, "--input", input, "--as-written"});
  EXPECT_TRUE(loop.out.startsWith("output 0")) << loop.out.toStdString();
}

}  // namespace
