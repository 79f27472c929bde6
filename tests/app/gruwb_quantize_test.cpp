// `gruwb quantize` as a user runs it: a .npy of inputs or a dataset as the representative
// data, the report, and one-line errors for a bad dataset or model.

#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <cstring>

#include "engine/tools/npy.h"
#include "tests/app/cli_test_util.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::expect_one_error_line;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;

QString fixture(const char* name) { return QString(GRUWB_SOURCE_DIR) + "/tests/fixtures/" + name; }

// Seeded inputs in [-1, 1): n x shape.
QString save_inputs(const QTemporaryDir& dir, const char* name, std::vector<int64_t> shape) {
  gruwb::tools::NpyArray array;
  array.dtype = "<f4";
  array.shape = shape;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  array.data.resize(static_cast<size_t>(count) * 4);
  uint32_t state = 3;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    const float v = static_cast<float>(state >> 8) / 8388608.f - 1.f;
    std::memcpy(array.data.data() + 4 * i, &v, 4);
  }
  const QString path = dir.filePath(name);
  std::string error;
  EXPECT_TRUE(gruwb::tools::write_npy(path.toStdString(), array, &error)) << error;
  return path;
}

TEST(GruwbQuantizeTest, QuantizesWithNpyInputsAndReports) {
  QTemporaryDir dir;
  const QString model = fixture("quantized/quant_fc_float.tflite");
  const QString x = save_inputs(dir, "x.npy", {16, 12, 3});
  const QString out = dir.filePath("fc_int8.tflite");
  const CliResult run = run_gruwb({"quantize", model, "--data", x, "-o", out});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(QFile::exists(out));
  EXPECT_TRUE(run.out.contains("16 representative samples")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("quantized: 7 ops, kept float: 1")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("max |float - quantized| over the samples:"))
      << run.out.toStdString();
  const CliResult json =
      run_gruwb({"quantize", model, "--data", x, "-o", out, "--json", "--samples", "4"});
  ASSERT_EQ(json.exit_code, 0) << json.err.toStdString();
  const QJsonObject report = parse_json(json.out);
  EXPECT_EQ(report["mode"].toString(), "int8");
  EXPECT_EQ(report["samples"].toInt(), 4);
  EXPECT_EQ(report["ops"].toArray().size(), 8);
  EXPECT_LT(report["max_abs_diff"].toDouble(), 0.05);
  EXPECT_LT(report["weight_bytes_after"].toDouble() * 3.5,
            report["weight_bytes_before"].toDouble());
}

TEST(GruwbQuantizeTest, QuantizesWithADatasetResampledToTheModel) {
  QTemporaryDir dir;
  const QString model = dir.filePath("lstm.tflite");
  const CliResult built = run_gruwb({"build", "--cell", "lstm", "--timesteps", "20", "--features",
                                     "6", "--units", "8", "--classes", "4", "-o", model});
  ASSERT_EQ(built.exit_code, 0) << built.err.toStdString();
  const CliResult run =
      run_gruwb({"quantize", model, "--data", fixture("datasets/racket_small.npz"), "-o",
                 dir.filePath("lstm_int8.tflite"), "--mode", "dynamic"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("(dynamic, float inputs/outputs")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("UNIDIRECTIONAL_SEQUENCE_LSTM   quantized"))
      << run.out.toStdString();
}

TEST(GruwbQuantizeTest, BadDatasetOrModelGivesOneLine) {
  QTemporaryDir dir;
  const QString model = fixture("quantized/quant_fc_float.tflite");
  const QString out = dir.filePath("out.tflite");
  const QString missing = dir.filePath("missing.npy");
  expect_one_error_line(run_gruwb({"quantize", model, "--data", missing, "-o", out}), missing,
                        "No such file");
  const QString narrow = save_inputs(dir, "narrow.npy", {8, 5});
  expect_one_error_line(run_gruwb({"quantize", model, "--data", narrow, "-o", out}), model,
                        "sample 0 input 0 'x' has 5 values, shape [1,12,3] needs 36");
  const QString garbage = dir.filePath("garbage.csv");
  QFile csv(garbage);
  ASSERT_TRUE(csv.open(QIODevice::WriteOnly));
  csv.write("label,a_0\nx,not-a-number\n");
  csv.close();
  const CliResult bad_csv = run_gruwb({"quantize", model, "--data", garbage, "-o", out});
  EXPECT_EQ(bad_csv.exit_code, 2);
  EXPECT_EQ(bad_csv.err.count('\n'), 1) << bad_csv.err.toStdString();
  EXPECT_TRUE(bad_csv.err.startsWith("gruwb: " + garbage)) << bad_csv.err.toStdString();
  const QString not_model = save_inputs(dir, "not_a_model.tflite", {4});
  expect_one_error_line(run_gruwb({"quantize", not_model, "--data", narrow, "-o", out}), not_model,
                        "");
  const QString quantized = fixture("quantized/quant_fc_int8_integer_io.tflite");
  const QString x = save_inputs(dir, "x.npy", {4, 12, 3});
  expect_one_error_line(run_gruwb({"quantize", quantized, "--data", x, "-o", out}), quantized,
                        "already has integer activations");
  EXPECT_FALSE(QFile::exists(out));
  const CliResult usage = run_gruwb({"quantize", model, "-o", out});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_TRUE(usage.err.startsWith("gruwb: quantize: missing --data DATASET"))
      << usage.err.toStdString();
}

}  // namespace
