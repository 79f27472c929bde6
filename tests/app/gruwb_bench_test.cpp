// `gruwb bench` as a user runs it on the bundled gesture models: every figure
// present and consistent (speed itself is never asserted: it depends on the
// machine), the arena the same as `gruwb run --arena`, training memory that
// follows the scope, and one-line errors for bad files and options.

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>

#include "tests/app/cli_test_util.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::expect_one_error_line;
using gruwb::test::model;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;

QString sample(const char* file) {
  return QString(GRUWB_SOURCE_DIR) + "/resources/samples/" + QString::fromUtf8(file);
}

// Short and few repetitions: the tests check the figures, not the speed.
CliResult bench(const QString& path, QStringList extra = {}) {
  QStringList args = {"bench", path, "--repetitions", "2", "--min-time", "0.002"};
  args += extra;
  return run_gruwb(args);
}

void expect_ordered_positive(const QJsonObject& object, const QString& unit) {
  const double median = object["median_" + unit].toDouble();
  const double min = object["min_" + unit].toDouble();
  const double max = object["max_" + unit].toDouble();
  EXPECT_GT(min, 0.0) << unit.toStdString();
  EXPECT_LE(min, median) << unit.toStdString();
  EXPECT_LE(median, max) << unit.toStdString();
}

TEST(GruwbBenchTest, ArenaIsTheOneGruwbRunPlans) {
  const QString path = sample("gesture_gru_fused.tflite");
  const CliResult run = run_gruwb({"run", path, "--arena", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const CliResult timed = bench(path, {"--json"});
  ASSERT_EQ(timed.exit_code, 0) << timed.err.toStdString();
  const qint64 arena = parse_json(timed.out)["arena_bytes"].toInteger();
  EXPECT_GT(arena, 0);
  EXPECT_EQ(arena, parse_json(run.out)["arena_bytes"].toInteger());
}

TEST(GruwbBenchTest, JsonHasEveryFigureWithOrderedTimes) {
  const QString path = sample("gesture_gru_fused.tflite");
  const CliResult run = bench(path, {"--train", "all", "--batch", "4", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.err.isEmpty()) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  EXPECT_EQ(report["model"].toString(), path);
  EXPECT_EQ(report["model_bytes"].toInteger(), QFileInfo(path).size());
  EXPECT_GT(report["op_count"].toInt(), 0);
  EXPECT_EQ(report["repetitions"].toInt(), 2);
  EXPECT_DOUBLE_EQ(report["min_time_s"].toDouble(), 0.002);

  const QJsonObject inference = report["inference"].toObject();
  expect_ordered_positive(inference, "us");
  EXPECT_GE(inference["invokes_per_repetition"].toInteger(), 1);

  const QJsonObject training = report["training"].toObject();
  EXPECT_EQ(training["scope"].toString(), "all");
  EXPECT_EQ(training["batch"].toInt(), 4);
  EXPECT_EQ(training["optimizer"].toString(), "adam");
  EXPECT_FLOAT_EQ(static_cast<float>(training["learning_rate"].toDouble()), 1e-3f);
  EXPECT_GT(training["trainable_parameters"].toInteger(), 0);
  expect_ordered_positive(training, "samples_per_s");
  EXPECT_EQ(training["samples_per_repetition"].toInteger() % 4, 0);  // whole batches
  const QJsonObject memory = training["memory"].toObject();
  qint64 parts = 0;
  for (const char* part : {"weights", "gradients", "optimizer", "activations", "other"}) {
    ASSERT_TRUE(memory.contains(part)) << part;
    parts += memory[part].toInteger();
  }
  EXPECT_GT(memory["gradients"].toInteger(), 0);
  EXPECT_EQ(parts, memory["total"].toInteger());
}

TEST(GruwbBenchTest, BothLayoutsOfTheBundledModelRunAndTrain) {
  for (const char* file : {"gesture_gru_fused.tflite", "gesture_gru_while.tflite"}) {
    const CliResult run = bench(sample(file), {"--train", "all"});
    ASSERT_EQ(run.exit_code, 0) << file << ": " << run.err.toStdString();
    EXPECT_TRUE(run.out.contains("inference µs/sequence")) << run.out.toStdString();
    EXPECT_TRUE(run.out.contains("training samples/s")) << run.out.toStdString();
    EXPECT_TRUE(run.out.contains("total")) << run.out.toStdString();
  }
}

// The per-op table covers every op that ran once (the samples run all of
// theirs: main, the loop's cond and body), its shares add up to the whole,
// and the fused model's time is its GRU op's.
TEST(GruwbBenchTest, OpSharesCoverEveryOpAndAddUp) {
  for (const char* file : {"gesture_gru_fused.tflite", "gesture_gru_while.tflite"}) {
    const CliResult run = bench(sample(file), {"--json", "--as-written"});
    ASSERT_EQ(run.exit_code, 0) << file << ": " << run.err.toStdString();
    const QJsonObject report = parse_json(run.out);
    EXPECT_EQ(report["plan"].toObject()["form"].toString(), "as written") << file;
    const QJsonArray ops = report["inference"].toObject()["ops"].toArray();
    ASSERT_FALSE(ops.isEmpty()) << file;
    int instances = 0;
    double shares = 0.0, previous = 1.0;
    QStringList names;
    for (const QJsonValue& v : ops) {
      const QJsonObject op = v.toObject();
      names << op["op"].toString();
      instances += op["instances"].toInt();
      const double share = op["share"].toDouble();
      EXPECT_GE(share, 0.0) << file;
      EXPECT_LE(share, previous) << file << ": largest share first";
      previous = share;
      shares += share;
      EXPECT_GE(op["self_us"].toDouble(), 0.0) << file;
    }
    EXPECT_EQ(instances, report["op_count"].toInt()) << file;
    EXPECT_NEAR(shares, 1.0, 1e-9) << file;
    if (QString(file).contains("fused")) {
      EXPECT_EQ(names.first(), "GRUWB_GRU");
    } else {
      EXPECT_TRUE(names.contains("WHILE") && names.contains("FULLY_CONNECTED")) << file;
    }
  }
  const CliResult text = bench(sample("gesture_gru_while.tflite"), {"--as-written"});
  EXPECT_TRUE(text.out.contains("Inference by op")) << text.out.toStdString();
  EXPECT_FALSE(text.out.contains("Form")) << text.out.toStdString();
}

// The WHILE sample is timed and trained in its fused form by default (app/core/loop_plan.h),
// and says so in one line; its ops are then the fused model's.
TEST(GruwbBenchTest, TheWhileSampleIsTimedInItsFusedForm) {
  const CliResult run = bench(sample("gesture_gru_while.tflite"), {"--json", "--train", "all"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject report = parse_json(run.out);
  const QJsonObject plan = report["plan"].toObject();
  EXPECT_EQ(plan["form"].toString(), "fused");
  EXPECT_EQ(plan["fused_loops"].toInt(), 1);
  EXPECT_LE(plan["difference"].toDouble(), 1e-5);
  EXPECT_EQ(report["op_count"].toInt(), 3);
  EXPECT_EQ(report["inference"].toObject()["ops"].toArray()[0].toObject()["op"].toString(),
            "GRUWB_GRU");
  EXPECT_EQ(report["training"].toObject()["form"].toString(), "fused");
  const CliResult text = bench(sample("gesture_gru_while.tflite"));
  ASSERT_EQ(text.exit_code, 0) << text.err.toStdString();
  // "equal" or "agree within <difference>": the loop and its fused op may round alike.
  EXPECT_TRUE(
      text.out.contains("Form     running the fused form of 1 WHILE loop (outputs equal)") ||
      text.out.contains("Form     running the fused form of 1 WHILE loop (outputs agree "
                        "within "))
      << text.out.toStdString();
  EXPECT_TRUE(text.out.contains("--as-written runs the file as written")) << text.out.toStdString();
}

TEST(GruwbBenchTest, InferenceOnlyHasNoTrainingFigures) {
  const CliResult run = bench(sample("gesture_gru_while.tflite"), {"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_FALSE(parse_json(run.out).contains("training"));
}

TEST(GruwbBenchTest, TrainingOnlyTheDenseLayerNeedsFewerGradientBytes) {
  const QString path = sample("gesture_gru_fused.tflite");
  qint64 gradients[2] = {};
  const char* scopes[2] = {"fc", "all"};
  for (int i = 0; i < 2; ++i) {
    const CliResult run = bench(path, {"--train", scopes[i], "--json"});
    ASSERT_EQ(run.exit_code, 0) << scopes[i] << ": " << run.err.toStdString();
    const QJsonObject training = parse_json(run.out)["training"].toObject();
    gradients[i] = training["memory"].toObject()["gradients"].toInteger();
  }
  EXPECT_GT(gradients[0], 0);
  EXPECT_LT(gradients[0], gradients[1]);
}

// A batch trains in one pass of B rows by default; --single-sample-passes trains it as a board
// does, in the arena of batch 1, which a B-row tape outgrows.
TEST(GruwbBenchTest, SingleSamplePassesTrainInTheMemoryOfBatchOne) {
  const QString path = sample("gesture_gru_fused.tflite");
  const auto training = [&](QStringList extra) {
    const CliResult run = bench(path, QStringList{"--train", "all", "--json"} + extra);
    EXPECT_EQ(run.exit_code, 0) << extra.join(' ').toStdString() << ": " << run.err.toStdString();
    return parse_json(run.out)["training"].toObject();
  };
  const QJsonObject one = training({"--batch", "1"});
  const QJsonObject batched = training({"--batch", "8"});
  const QJsonObject single = training({"--batch", "8", "--single-sample-passes"});
  EXPECT_EQ(batched["rows_per_pass"].toInt(), 8);
  EXPECT_EQ(single["rows_per_pass"].toInt(), 1);
  EXPECT_EQ(single["batch"].toInt(), 8);
  const auto total = [](const QJsonObject& t) {
    return t["memory"].toObject()["total"].toInteger();
  };
  EXPECT_EQ(total(single), total(one));
  EXPECT_GT(total(batched), total(single));
  const CliResult text = bench(path, {"--train", "all", "--batch", "8", "--single-sample-passes"});
  EXPECT_TRUE(text.out.contains("batch 8 (single-sample passes)")) << text.out.toStdString();
}

TEST(GruwbBenchTest, CorruptFileExitsTwoNamingIt) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  QFile original(sample("gesture_gru_fused.tflite"));
  ASSERT_TRUE(original.open(QIODevice::ReadOnly));
  const QString truncated = dir.filePath("truncated.tflite");
  QFile out(truncated);
  ASSERT_TRUE(out.open(QIODevice::WriteOnly));
  out.write(original.readAll().left(1000));
  out.close();
  expect_one_error_line(bench(truncated), truncated, "corrupt model");
  const QString missing = dir.filePath("no_such_model.tflite");
  expect_one_error_line(bench(missing), missing, "No such file");
}

TEST(GruwbBenchTest, FullIntegerLstmModelIsTimed) {
  const QString path = model("tflm_mnist_fused_lstm_int8.tflite");
  const CliResult run = bench(path);
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("inference µs/sequence")) << run.out.toStdString();
}

TEST(GruwbBenchTest, UnknownOpAndUntrainableModelGiveTheEnginesMessage) {
  const QString unknown_op = model("one_vscode_while_000.circle");
  expect_one_error_line(bench(unknown_op), unknown_op, "no kernel for 1 op: BatchMatMulV2");
  const QString projection = model("litert_unidirectional_sequence_lstm_24inputs.tflite");
  expect_one_error_line(bench(projection, {"--train", "all"}), projection,
                        "training through an LSTM with a projection");
}

// A census mutant of the gesture GRU whose input has a zero-length dimension: the bench copies
// no input bytes (it once passed memcpy a null source, which UBSan reports) and still times it.
TEST(GruwbBenchTest, InputWithZeroElementsIsTimedWithoutCopying) {
  const QString path =
      QString(GRUWB_SOURCE_DIR) + "/tests/fuzz/regressions/bench-input-with-zero-elements.tflite";
  const CliResult run = bench(path, {"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_FALSE(run.err.contains("runtime error")) << run.err.toStdString();
  EXPECT_GT(parse_json(run.out)["inference"].toObject()["median_us"].toDouble(), 0.0);
}

TEST(GruwbBenchTest, BadOptionValuesExitTwoNamingTheOption) {
  const QString path = sample("gesture_gru_fused.tflite");
  const struct {
    QStringList args;
    const char* problem;
  } cases[] = {
      {{"bench", path, "--repetitions", "0"}, "--repetitions '0'"},
      {{"bench", path, "--repetitions", "five"}, "--repetitions 'five'"},
      {{"bench", path, "--min-time", "-1"}, "--min-time '-1'"},
      {{"bench", path, "--train", "all", "--batch", "0"}, "--batch '0'"},
      {{"bench", path, "--batch", "8"}, "--batch applies to training"},
      {{"bench", path, "--single-sample-passes"}, "--single-sample-passes applies to training"},
      {{"bench", path, "--train", "last:x"}, "last:N needs a whole number"},
  };
  for (const auto& c : cases) {
    const CliResult run = run_gruwb(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args.join(' ').toStdString();
    EXPECT_TRUE(run.out.isEmpty()) << run.out.toStdString();
    EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
    EXPECT_TRUE(run.err.contains(QString::fromUtf8(c.problem))) << run.err.toStdString();
  }
}

}  // namespace
