// `gruwb` as a user runs it: the binary, real model files, exit codes and the
// exact stream each message goes to.

#include <gtest/gtest.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <string>

#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "tests/app/cli_test_util.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::expect_one_error_line;
using gruwb::test::model;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;

TEST(GruwbCliTest, InspectPrintsTheAnalyzerFigures) {
  const CliResult run = run_gruwb({"inspect", model("tflm_hello_world_float.tflite")});
  EXPECT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.err.isEmpty()) << run.err.toStdString();
  // README "Size breakdown": 3164 | 1780 (56.26%) | 1384 (43.74%) | 1284 | 0.
  for (const char* line :
       {"Model size: 3164 bytes\n", "Non-data buffer size: 1780 bytes (56.26%)\n",
        "Total data buffer size: 1384 bytes (43.74%)\n", "(Zero value buffers): 0 bytes (0.00%)\n",
        "\nSubgraph#0 main(T#0) -> [T#9]\n",
        "\n  Op#0 FULLY_CONNECTED(T#0, T#4[...], T#3[...]) -> [T#7]\n", "MACs: 288 "}) {
    EXPECT_TRUE(run.out.contains(QString::fromUtf8(line))) << line << "\n" << run.out.toStdString();
  }
  // One subgraph: no per-subgraph lines (Analyzer rule).
  EXPECT_FALSE(run.out.contains("- Subgraph#0:"));
}

TEST(GruwbCliTest, InspectListsDataPerSubgraphWhenThereAreSeveral) {
  const CliResult run = run_gruwb({"inspect", model("litert_multi_subgraphs_while.tflite")});
  EXPECT_EQ(run.exit_code, 0) << run.err.toStdString();
  // README: 4/4/8.
  EXPECT_TRUE(run.out.contains("- Subgraph#0: 4 bytes (")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("- Subgraph#1: 4 bytes ("));
  EXPECT_TRUE(run.out.contains("- Subgraph#2: 8 bytes ("));
  EXPECT_TRUE(run.out.contains("(Zero value buffers): 4 bytes ("));
}

TEST(GruwbCliTest, InspectJsonParsesAndHasTheFigures) {
  // --json may come before or after MODEL.
  for (const QStringList& args :
       {QStringList{"inspect", "--json", model("tflm_hello_world_float.tflite")},
        QStringList{"inspect", model("tflm_hello_world_float.tflite"), "--json"}}) {
    const CliResult run = run_gruwb(args);
    ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
    const QJsonObject root = parse_json(run.out);
    EXPECT_EQ(root["schema"].toString(), "gruwb-inspect/1");
    EXPECT_EQ(root["format"].toString(), "tflite");
    EXPECT_EQ(root["model_bytes"].toInteger(), 3164);
    EXPECT_EQ(root["non_data_bytes"].toInteger(), 1780);
    EXPECT_NEAR(root["non_data_percent"].toDouble(), 56.26, 0.005);
    EXPECT_EQ(root["data_bytes"].toInteger(), 1384);
    EXPECT_EQ(root["subgraph_data_bytes"].toArray(), QJsonArray({1284}));
    EXPECT_EQ(root["zero_value_buffers"].toInteger(), 0);
    EXPECT_EQ(root["macs"].toInteger(), 288);
    const QJsonArray subgraphs = root["subgraphs"].toArray();
    ASSERT_EQ(subgraphs.size(), 1);
    const QJsonObject main = subgraphs[0].toObject();
    EXPECT_EQ(main["name"].toString(), "main");
    EXPECT_EQ(main["tensor_count"].toInteger(), 10);
    const QJsonArray ops = main["ops"].toArray();
    ASSERT_EQ(ops.size(), 3);
    const QJsonObject fc = ops[1].toObject();
    EXPECT_EQ(fc["name"].toString(), "FULLY_CONNECTED");
    EXPECT_EQ(fc["macs"].toInteger(), 256);
    EXPECT_EQ(fc["option_values"].toObject()["fused_activation_function"].toString(), "RELU");
    EXPECT_EQ(fc["option_values"].toObject()["keep_num_dims"].toBool(true), false);
    EXPECT_EQ(main["tensors"].toArray()[0].toObject()["name"].toString(),
              "serving_default_dense_input:0");
  }
}

TEST(GruwbCliTest, InspectJsonParsesForEveryModel) {
  for (const gruwb::test::TestModel& m : gruwb::test::all_test_models()) {
    SCOPED_TRACE(m.file);
    const QString path = QString::fromStdString(gruwb::test::model_path(m));
    const CliResult run = run_gruwb({"inspect", "--json", path});
    ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
    const QJsonObject root = parse_json(run.out);
    EXPECT_EQ(root["model_bytes"].toInteger(), QFile(path).size());
    EXPECT_EQ(root["non_data_bytes"].toInteger() + root["data_bytes"].toInteger(),
              root["model_bytes"].toInteger());
    EXPECT_EQ(root["format"].toString(), gruwb::test::is_circle(m) ? "circle" : "tflite");
    EXPECT_GE(root["subgraphs"].toArray().size(), 1);
  }
}

// --arena: the Size panel's figures, from the engine's planner: inference equals what
// ModelRunner plans; training scope all (GRU + Dense, Adam, the BPTT tape) needs more than scope
// fc, whose parts add up to its total; a model that cannot train says why instead of a number.
TEST(GruwbCliTest, InspectArenaPrintsThePlannersBytes) {
  const QString path =
      QStringLiteral(GRUWB_SOURCE_DIR "/resources/samples/gesture_gru_fused.tflite");
  gruwb::tools::LoadedModel loaded;
  std::string error;
  ASSERT_TRUE(gruwb::tools::load_model_file(path.toStdString(), &loaded, &error)) << error;
  gruwb::tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;

  const CliResult json_run = run_gruwb({"inspect", path, "--arena", "--json"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err.toStdString();
  const QJsonObject arena = parse_json(json_run.out)["arena"].toObject();
  const QJsonObject inference = arena["inference"].toObject();
  EXPECT_TRUE(inference["ok"].toBool());
  EXPECT_EQ(inference["bytes"].toInteger(), static_cast<qint64>(runner.arena_bytes()));
  const QJsonObject fc = arena["training_fc"].toObject();
  const QJsonObject all = arena["training_all"].toObject();
  ASSERT_TRUE(fc["ok"].toBool() && all["ok"].toBool());
  EXPECT_GT(all["bytes"].toInteger(), fc["bytes"].toInteger());
  EXPECT_GT(fc["bytes"].toInteger(), inference["bytes"].toInteger());
  qint64 parts = 0;
  for (const char* key : {"weights", "gradients", "optimizer", "activations", "other"})
    parts += fc[key].toInteger();
  EXPECT_EQ(parts, fc["bytes"].toInteger());
  EXPECT_EQ(fc["optimizer"].toInteger(), 2 * fc["weights"].toInteger());  // Adam's m and v

  const CliResult text = run_gruwb({"inspect", path, "--arena"});
  ASSERT_EQ(text.exit_code, 0) << text.err.toStdString();
  const QRegularExpression inference_line("\n  Inference +" +
                                          QString::number(runner.arena_bytes()) + "\n");
  EXPECT_TRUE(text.out.contains(inference_line)) << text.out.toStdString();
  EXPECT_TRUE(text.out.contains("  Training, scope all ")) << text.out.toStdString();
  EXPECT_FALSE(run_gruwb({"inspect", path}).out.contains("Arena (RAM"));  // only when asked

  const CliResult no_training = run_gruwb(
      {"inspect", QStringLiteral(GRUWB_SOURCE_DIR "/tests/fixtures/int8/int16_add.tflite"),
       "--arena"});
  ASSERT_EQ(no_training.exit_code, 0) << no_training.err.toStdString();
  EXPECT_TRUE(no_training.out.contains(QRegularExpression("Training, scope fc +not planned: \\S")))
      << no_training.out.toStdString();
}

TEST(GruwbCliTest, MissingFileExitsTwoWithOneLine) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString missing = dir.filePath("no_such_model.tflite");
  expect_one_error_line(run_gruwb({"inspect", missing}), missing, "No such file");
  expect_one_error_line(run_gruwb({"inspect", "--json", missing}), missing, "No such file");
}

TEST(GruwbCliTest, CorruptFilesExitTwoWithOneLine) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  QFile original(model("tflm_hello_world_float.tflite"));
  ASSERT_TRUE(original.open(QIODevice::ReadOnly));
  const QByteArray bytes = original.readAll();

  const QString truncated = dir.filePath("truncated.tflite");
  QFile out(truncated);
  ASSERT_TRUE(out.open(QIODevice::WriteOnly));
  out.write(bytes.left(1000));
  out.close();
  expect_one_error_line(run_gruwb({"inspect", truncated}), truncated, "corrupt model");

  const QString empty = dir.filePath("empty.tflite");
  QFile empty_file(empty);
  ASSERT_TRUE(empty_file.open(QIODevice::WriteOnly));
  empty_file.close();
  expect_one_error_line(run_gruwb({"inspect", empty}), empty, "not a model");

  // Not a model at all: text with a line break must still give one line.
  const QString text = dir.filePath("notes\nmodel.tflite");
  QFile text_file(text);
  ASSERT_TRUE(text_file.open(QIODevice::WriteOnly));
  text_file.write("these are not the bytes of a model\n");
  text_file.close();
  const CliResult run = run_gruwb({"inspect", text});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
  EXPECT_TRUE(run.err.contains("notes model.tflite: ")) << run.err.toStdString();
  EXPECT_TRUE(run.err.contains("not a model")) << run.err.toStdString();
  EXPECT_TRUE(run.out.isEmpty());

  const QString directory = dir.path();
  expect_one_error_line(run_gruwb({"inspect", directory}), directory, "not a regular file");
}

TEST(GruwbCliTest, HelpListsTheSubcommands) {
  for (const QStringList& args : {QStringList{"--help"}, QStringList{"-h"}, QStringList{"help"}}) {
    const CliResult run = run_gruwb(args);
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_TRUE(run.out.contains("Usage: gruwb COMMAND")) << run.out.toStdString();
    EXPECT_TRUE(run.out.contains("Commands:\n  inspect ")) << run.out.toStdString();
    EXPECT_TRUE(run.err.isEmpty());
  }
  for (const QStringList& args : {QStringList{"help", "inspect"}, QStringList{"inspect", "--help"},
                                  QStringList{"inspect", "-h"}}) {
    const CliResult run = run_gruwb(args);
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_TRUE(run.out.startsWith("Usage: gruwb inspect MODEL [--json] [--arena]\n"))
        << run.out.toStdString();
    EXPECT_TRUE(run.out.contains("--json")) << run.out.toStdString();
    EXPECT_TRUE(run.out.contains("Exit status")) << run.out.toStdString();
  }
  const CliResult version = run_gruwb({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(version.out.startsWith("gruwb ")) << version.out.toStdString();
}

TEST(GruwbCliTest, UsageErrorsExitTwo) {
  struct Case {
    QStringList args;
    const char* message;
    const char* usage;  // which usage follows
  };
  const QString hello = model("tflm_hello_world_float.tflite");
  const Case cases[] = {
      {{}, "gruwb: missing COMMAND\n", "Commands:"},
      {{"frobnicate"}, "gruwb: unknown command 'frobnicate'\n", "Commands:"},
      {{"--bogus"}, "gruwb: unknown option '--bogus'\n", "Commands:"},
      {{"help", "frobnicate"}, "gruwb: help: unknown command 'frobnicate'\n", "Commands:"},
      {{"inspect"}, "gruwb: inspect: missing MODEL\n", "Usage: gruwb inspect"},
      {{"inspect", "--bogus", hello},
       "gruwb: inspect: unknown option '--bogus'\n",
       "Usage: gruwb inspect"},
      {{"inspect", hello, hello},
       "gruwb: inspect: one MODEL expected, got 2\n",
       "Usage: gruwb inspect"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args.join(' ').toStdString());
    const CliResult run = run_gruwb(c.args);
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_TRUE(run.out.isEmpty()) << run.out.toStdString();
    EXPECT_TRUE(run.err.startsWith(QString::fromUtf8(c.message))) << run.err.toStdString();
    EXPECT_TRUE(run.err.contains(QString::fromUtf8(c.usage))) << run.err.toStdString();
  }
}

TEST(GruwbCliTest, DoubleDashAllowsFileNamesStartingWithADash) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString dashed = dir.filePath("-model.tflite");
  ASSERT_TRUE(QFile::copy(model("tflm_hello_world_float.tflite"), dashed));
  // Relative "-model.tflite" needs "--"; run from the temp dir.
  QProcess process;
  process.setWorkingDirectory(dir.path());
  process.start(QStringLiteral(GRUWB_CLI), {"inspect", "--", "-model.tflite"});
  ASSERT_TRUE(process.waitForFinished(60000));
  EXPECT_EQ(process.exitCode(), 0) << process.readAllStandardError().toStdString();
  EXPECT_TRUE(process.readAllStandardOutput().contains("Model size: 3164 bytes"));
}

}  // namespace
