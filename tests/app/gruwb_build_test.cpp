// `gruwb build` as a user runs it: files that load and run, the size report,
// the layout comparison, normalisation from a dataset, and one-line errors.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>
#include <cmath>
#include <cstring>

#include "engine/tools/model_file.h"
#include "engine/tools/npy.h"
#include "tests/app/cli_test_util.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;
using gruwb::tools::NpyArray;

QStringList reference_args(const QString& out) {
  return {"build", "--timesteps", "60", "--features", "3", "--units",
          "60",    "--classes",   "4",  "-o",         out};
}

QString save_npy(const QTemporaryDir& dir, const char* name, std::vector<int64_t> shape,
                 const std::vector<float>& values) {
  NpyArray array;
  array.dtype = "<f4";
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(float));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  const QString path = dir.filePath(name);
  std::string error;
  EXPECT_TRUE(gruwb::tools::write_npy(path.toStdString(), array, &error)) << error;
  return path;
}

// A user's one-line error: exit 2, nothing on stdout, one line on stderr.
void expect_one_line(const CliResult& run, const char* text) {
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.out.isEmpty()) << run.out.toStdString();
  EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
  EXPECT_TRUE(run.err.startsWith("gruwb: ")) << run.err.toStdString();
  EXPECT_TRUE(run.err.contains(QString::fromUtf8(text))) << run.err.toStdString();
}

TEST(GruwbBuildTest, ReferenceGruFusedMeetsTheSizeGoalAndRuns) {
  QTemporaryDir dir;
  const QString out = dir.filePath("gesture_gru.tflite");
  CliResult run = run_gruwb(reference_args(out) << "--json");
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  EXPECT_EQ(report["fused_op"].toString(), "GRUWB_GRU");
  const QJsonObject f = report["figures"].toObject();
  EXPECT_EQ(f["weight_bytes"].toInt(), (11700 + 244) * 4);
  EXPECT_TRUE(f["meets_size_goal"].toBool());
  EXPECT_EQ(f["model_bytes"].toInt(), QFileInfo(out).size());
  EXPECT_LE(f["model_bytes"].toInt(), f["size_goal_bytes"].toInt());
  EXPECT_EQ(f["subgraphs"].toInt(), 1);
  EXPECT_GT(f["arena_bytes"].toInt(), 0);
  // Only the model is left in the folder (atomic write, no temporary file).
  EXPECT_EQ(QDir(dir.path()).entryList(QDir::Files), QStringList{"gesture_gru.tflite"});

  // `gruwb run` takes it: four probabilities that sum to 1.
  std::vector<float> window(180);
  for (size_t i = 0; i < window.size(); ++i) window[i] = std::sin(0.1f * static_cast<float>(i));
  const QString input = save_npy(dir, "window.npy", {1, 60, 3}, window);
  run = run_gruwb({"run", out, "--input", input, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonArray data = parse_json(run.out)["outputs"].toArray()[0].toObject()["data"].toArray();
  ASSERT_EQ(data.size(), 4);
  double sum = 0;
  for (const auto& v : data) sum += v.toDouble();
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST(GruwbBuildTest, CompareLayoutsPrintsAllThreeWithTheUnrolledRatio) {
  QTemporaryDir dir;
  const QString out = dir.filePath("g.tflite");
  CliResult run = run_gruwb(reference_args(out) << "--compare-layouts"
                                                << "--json");
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  const QJsonArray layouts = report["layouts"].toArray();
  ASSERT_EQ(layouts.size(), 3);
  EXPECT_EQ(layouts[0].toObject()["layout"].toString(), "fused");
  EXPECT_EQ(layouts[1].toObject()["layout"].toString(), "while");
  EXPECT_EQ(layouts[1].toObject()["subgraphs"].toInt(), 3);
  EXPECT_EQ(layouts[2].toObject()["layout"].toString(), "unrolled");
  const double fused = layouts[0].toObject()["model_bytes"].toDouble();
  const double unrolled = layouts[2].toObject()["model_bytes"].toDouble();
  EXPECT_DOUBLE_EQ(report["unrolled_to_fused_ratio"].toDouble(), unrolled / fused);
  // The converter's per-step weight copies: roughly T times the fused file.
  EXPECT_GT(report["unrolled_to_fused_ratio"].toDouble(), 40.0);

  run = run_gruwb(reference_args(out) << "--compare-layouts");
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("unrolled/fused size ratio: ")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("size goal")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("\n  while ")) << run.out.toStdString();
}

TEST(GruwbBuildTest, WhileLayoutAsCircleLoadsWithThreeSubgraphs) {
  QTemporaryDir dir;
  const QString out = dir.filePath("g.circle");
  CliResult run =
      run_gruwb({"build", "--cell", "lstm", "--layout", "while", "--timesteps", "8", "--features",
                 "2", "--units", "5", "--classes", "3", "--dense", "7,6", "-o", out});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("lstm, while layout, circle")) << run.out.toStdString();
  gruwb::tools::LoadedModel loaded;
  std::string error;
  ASSERT_TRUE(gruwb::tools::load_model_file(out.toStdString(), &loaded, &error)) << error;
  EXPECT_EQ(loaded.model.format(), gruwb::ModelFormat::kCircle);
  EXPECT_EQ(loaded.model.subgraph_count(), 3);
  EXPECT_STREQ(loaded.model.subgraph(2).name, "lstm_while_body");
}

TEST(GruwbBuildTest, SameSeedGivesTheSameFile) {
  QTemporaryDir dir;
  const QString a = dir.filePath("a.tflite"), b = dir.filePath("b.tflite");
  const QString c = dir.filePath("c.tflite");
  ASSERT_EQ(run_gruwb(reference_args(a) << "--seed"
                                        << "9")
                .exit_code,
            0);
  ASSERT_EQ(run_gruwb(reference_args(b) << "--seed"
                                        << "9")
                .exit_code,
            0);
  ASSERT_EQ(run_gruwb(reference_args(c) << "--seed"
                                        << "10")
                .exit_code,
            0);
  QFile fa(a), fb(b), fc(c);
  ASSERT_TRUE(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly) &&
              fc.open(QIODevice::ReadOnly));
  const QByteArray bytes_a = fa.readAll();
  EXPECT_EQ(bytes_a, fb.readAll());
  EXPECT_NE(bytes_a, fc.readAll());
}

TEST(GruwbBuildTest, NormalizeFromDatasetUsesItsMeanAndVariance) {
  QTemporaryDir dir;
  // 2 windows x 4 steps x 2 features; feature 0 = 1..8, feature 1 = 10 * (1..8).
  std::vector<float> values;
  for (int i = 1; i <= 8; ++i) {
    values.push_back(static_cast<float>(i));
    values.push_back(10.f * static_cast<float>(i));
  }
  const QString data = save_npy(dir, "train.npy", {2, 4, 2}, values);
  const QString out = dir.filePath("n.tflite");
  CliResult run = run_gruwb({"build", "--timesteps", "4", "--features", "2", "--units", "3",
                             "--classes", "2", "--normalize-from", data, "-o", out, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  // mean of 1..8 = 4.5, population variance = (64 - 1) / 12 = 5.25
  EXPECT_NEAR(report["mean"].toArray()[0].toDouble(), 4.5, 1e-6);
  EXPECT_NEAR(report["mean"].toArray()[1].toDouble(), 45.0, 1e-5);
  EXPECT_NEAR(report["variance"].toArray()[0].toDouble(), 5.25, 1e-6);
  EXPECT_NEAR(report["variance"].toArray()[1].toDouble(), 525.0, 1e-4);

  // The wrong window length is named with both shapes.
  run = run_gruwb({"build", "--timesteps", "5", "--features", "2", "--units", "3", "--classes", "2",
                   "--normalize-from", data, "-o", out});
  expect_one_line(run, "dataset has shape (2, 4, 2), expected (N, 5, 2)");
}

TEST(GruwbBuildTest, ExplicitNormalizationMustHaveOneValuePerFeature) {
  QTemporaryDir dir;
  const QString out = dir.filePath("n.tflite");
  CliResult run = run_gruwb(reference_args(out) << "--normalize"
                                                << "0,1;1,2");
  expect_one_line(run, "one mean and one variance per feature (3), got 2 means");
  run = run_gruwb(reference_args(out) << "--normalize"
                                      << "0,1,x;1,2,3");
  expect_one_line(run, "--normalize: mean value 'x' is not a number");
  EXPECT_FALSE(QFileInfo::exists(out));
}

TEST(GruwbBuildTest, BadOptionsAreUsageErrors) {
  QTemporaryDir dir;
  const QString out = dir.filePath("x.tflite");
  struct Case {
    QStringList args;
    const char* message;
  };
  const Case cases[] = {
      {{"build", "--features", "3", "--units", "6", "--classes", "2", "-o", out},
       "build: missing --timesteps"},
      {reference_args(out) << "--cell"
                           << "transformer",
       "build: --cell 'transformer' (expected gru, lstm, rnn, fastgrnn or mgu)"},
      {reference_args(out) << "--units"
                           << "0",
       "build: --units '0' must be an integer"},
      {reference_args(out) << "--format"
                           << "circle",
       "build: --format circle but OUT is"},
      {reference_args(out) << "--dense"
                           << "8,,4",
       "build: --dense '8,,4'"},
  };
  for (const Case& c : cases) {
    CliResult run = run_gruwb(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.message;
    EXPECT_TRUE(run.err.startsWith(QString("gruwb: ") + c.message)) << run.err.toStdString();
    EXPECT_TRUE(run.err.contains("Usage: gruwb build")) << c.message;
  }
  // The legacy GRU with reset_after=true is refused in one line.
  CliResult run = run_gruwb(reference_args(out) << "--gru-variant"
                                                << "legacy"
                                                << "--reset-after"
                                                << "true");
  expect_one_line(run, "legacy GRU variant is reset_after=false");
  EXPECT_FALSE(QFileInfo::exists(out));
}

TEST(GruwbBuildTest, UnwritableOutputIsReported) {
  CliResult run = run_gruwb(reference_args("/nonexistent-dir/x.tflite"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(run.err.startsWith("gruwb: /nonexistent-dir/x.tflite")) << run.err.toStdString();
}

}  // namespace
