// `gruwb fuse` as a user runs it: converter-style WHILE models become one
// fused op that `gruwb run` runs and that agrees with the real TFLite runtime
// on the WHILE model (golden fixture); the report; non-RNN loops left alone.

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>
#include <cstring>

#include "engine/tools/npy.h"
#include "tests/app/cli_test_util.h"
#include "tests/engine/test_models.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;

QString golden_path(const char* name) {
  return QString(GRUWB_SOURCE_DIR) + "/tests/fixtures/golden/" + name;
}

QJsonObject read_json(const QString& path) {
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
  return parse_json(QString::fromUtf8(file.readAll()));
}

QString save_input(const QTemporaryDir& dir, const QJsonObject& tensor) {
  gruwb::tools::NpyArray array;
  array.dtype = "<f4";
  for (const QJsonValue& d : tensor["shape"].toArray()) array.shape.push_back(d.toInt());
  const QJsonArray data = tensor["data"].toArray();
  array.data.resize(static_cast<size_t>(data.size()) * 4);
  for (int i = 0; i < data.size(); ++i) {
    const float v = static_cast<float>(data[i].toDouble());
    std::memcpy(array.data.data() + 4 * i, &v, 4);
  }
  const QString path = dir.filePath("input.npy");
  std::string error;
  EXPECT_TRUE(gruwb::tools::write_npy(path.toStdString(), array, &error)) << error;
  return path;
}

struct GoldenModel {
  const char* fixture;
  QStringList build_args;
  const char* fused_op;
};

// Built WHILE models whose outputs the real TFLite runtime computed
// (tests/fixtures/gen/tflite_golden.mjs with GOLDEN_MODELS_DIR, see
// docs/fuser.md): the fused model must give the same outputs.
TEST(GruwbFuseTest, FusedWhileModelsMatchTheTfliteRuntime) {
  const QStringList common = {"--layout",    "while",   "--timesteps", "16",        "--features",
                              "3",           "--units", "8",           "--classes", "4",
                              "--bias-init", "uniform", "--seed",      "5"};
  const GoldenModel models[] = {
      {"fuser_gru_while.json", QStringList{"--cell", "gru"} + common, "GRUWB_GRU"},
      {"fuser_gru_legacy_while.json",
       QStringList{"--cell", "gru", "--gru-variant", "legacy"} + common, "GRUWB_GRU"},
      {"fuser_lstm_while.json", QStringList{"--cell", "lstm"} + common,
       "UNIDIRECTIONAL_SEQUENCE_LSTM"},
  };
  for (const GoldenModel& m : models) {
    SCOPED_TRACE(m.fixture);
    QTemporaryDir dir;
    const QString loop = dir.filePath("while.tflite");
    const QString fused = dir.filePath("fused.tflite");
    CliResult built = run_gruwb(QStringList{"build"} + m.build_args + QStringList{"-o", loop});
    ASSERT_EQ(built.exit_code, 0) << built.err.toStdString();
    CliResult run = run_gruwb({"fuse", loop, "-o", fused, "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
    const QJsonObject report = parse_json(run.out);
    ASSERT_EQ(report["fused"].toInt(), 1) << run.out.toStdString();
    EXPECT_EQ(report["cells"].toArray()[0].toObject()["fused_op"].toString(), m.fused_op);
    EXPECT_EQ(report["after"].toObject()["subgraphs"].toInt(), 1);

    const QJsonObject golden = read_json(golden_path(m.fixture));
    const QJsonArray cases = golden["cases"].toArray();
    ASSERT_EQ(cases.size(), 3);
    for (const QJsonValue& c : cases) {
      const QJsonObject input = c.toObject()["inputs"].toArray()[0].toObject();
      const QJsonArray expected = c.toObject()["outputs"].toArray()[0].toObject()["data"].toArray();
      CliResult out = run_gruwb({"run", fused, "--input", save_input(dir, input), "--json"});
      ASSERT_EQ(out.exit_code, 0) << out.err.toStdString();
      const QJsonArray got =
          parse_json(out.out)["outputs"].toArray()[0].toObject()["data"].toArray();
      ASSERT_EQ(got.size(), expected.size());
      for (int i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i].toDouble(), expected[i].toDouble(), 1e-5) << "value " << i;
      }
    }
  }
}

TEST(GruwbFuseTest, TextReportShowsTheCellAndTheSizes) {
  QTemporaryDir dir;
  const QString out = dir.filePath("gesture_fused.tflite");
  const QString in = QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_while.tflite";
  CliResult run = run_gruwb({"fuse", in, "-o", out});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("1 of 1 recurrent cells fused")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("GRU(60) reset_after, sigmoid/tanh, T=60 F=3, while"))
      << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("-> GRUWB_GRU")) << run.out.toStdString();
  for (const char* row : {"bytes", "subgraphs", "ops", "tensors", "arena bytes"}) {
    EXPECT_TRUE(run.out.contains(QString("  ") + row)) << row;
  }
  EXPECT_GT(QFileInfo(out).size(), 0);
  EXPECT_LT(QFileInfo(out).size(), QFileInfo(in).size());
  CliResult inspect = run_gruwb({"inspect", out});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err.toStdString();
}

// A streaming DTLN (LSTM state in and out) as a user fuses it for a board: --stateful keeps the
// state in the fused ops; the file keeps one input and one output and runs.
TEST(GruwbFuseTest, StatefulFusesAStreamingLstm) {
  QTemporaryDir dir;
  const QString in = QString::fromStdString(gruwb::test::shared_dir()) +
                     "/data/models/real/breizhn_dtln_model_1.tflite";
  const QString out = dir.filePath("dtln_stateful.tflite");
  CliResult plain = run_gruwb({"fuse", in, "-o", dir.filePath("plain.tflite")});
  ASSERT_EQ(plain.exit_code, 0) << plain.err.toStdString();
  EXPECT_TRUE(plain.out.contains("0 of 2 recurrent cells fused")) << plain.out.toStdString();
  EXPECT_TRUE(plain.out.contains("--stateful")) << "the reason names the way out";
  CliResult run = run_gruwb({"fuse", in, "-o", out, "--stateful"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("2 of 2 recurrent cells fused")) << run.out.toStdString();
  CliResult arena = run_gruwb({"run", out, "--arena"});
  EXPECT_EQ(arena.exit_code, 0) << arena.err.toStdString();
  CliResult inspect = run_gruwb({"inspect", out});
  EXPECT_TRUE(inspect.out.contains("UNIDIRECTIONAL_SEQUENCE_LSTM")) << inspect.out.toStdString();
}

// Flex lists around cells that stay loops become builtin ops with --builtin-only.
TEST(GruwbFuseTest, BuiltinOnlyRewritesLeftoverFlexLists) {
  QTemporaryDir dir;
  const QString in = QString::fromStdString(gruwb::test::shared_dir()) +
                     "/data/models/real/"
                     "cpmpercussion_impsy_musicmdrnn_dim2_layers2_units32_mixtures5_scale10.tflite";
  const QString out = dir.filePath("builtin.tflite");
  CliResult run = run_gruwb({"fuse", in, "-o", out, "--builtin-only"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("5 Flex TensorList op(s) rewritten as builtin ops"))
      << run.out.toStdString();
  CliResult inspect = run_gruwb({"inspect", out});
  EXPECT_FALSE(inspect.out.contains("Flex")) << inspect.out.toStdString();
}

TEST(GruwbFuseTest, CircleOutputGetsTheCircleGru) {
  QTemporaryDir dir;
  const QString out = dir.filePath("gesture_fused.circle");
  CliResult run =
      run_gruwb({"fuse", QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_while.tflite",
                 "-o", out, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  EXPECT_EQ(report["format"].toString(), "circle");
  EXPECT_EQ(report["cells"].toArray()[0].toObject()["fused_op"].toString(), "GRU");
  QFile file(out);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_EQ(file.read(8).mid(4), QByteArray("CIR0"));
}

TEST(GruwbFuseTest, NonRnnLoopIsReportedAndCopied) {
  QTemporaryDir dir;
  const QString in = gruwb::test::model("litert_multi_subgraphs_while.tflite");
  const QString out = dir.filePath("same.tflite");
  CliResult run = run_gruwb({"fuse", in, "-o", out, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  EXPECT_EQ(report["fused"].toInt(), 0);
  EXPECT_TRUE(report["cells"].toArray().isEmpty());
  const QJsonArray loops = report["other_loops"].toArray();
  ASSERT_EQ(loops.size(), 1);
  EXPECT_TRUE(loops[0].toObject()["reason"].toString().contains("not an RNN"));
  QFile a(in), b(out);
  ASSERT_TRUE(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
  EXPECT_EQ(a.readAll(), b.readAll());
}

TEST(GruwbFuseTest, BadInputIsOneLine) {
  QTemporaryDir dir;
  const QString missing = dir.filePath("missing.tflite");
  CliResult run = run_gruwb({"fuse", missing, "-o", dir.filePath("out.tflite")});
  gruwb::test::expect_one_error_line(run, missing, "");
  CliResult usage = run_gruwb({"fuse", missing});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_TRUE(usage.err.startsWith("gruwb: fuse: missing -o OUT")) << usage.err.toStdString();
}

}  // namespace
