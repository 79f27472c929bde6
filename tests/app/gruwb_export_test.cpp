// `gruwb export` as a user runs it: the C array pair, format conversion that
// `gruwb run` accepts, the weight .npy files with their manifest, and
// one-line errors.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>

#include "engine/tools/npy.h"
#include "tests/app/cli_test_util.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;

QString sample(const char* file) {
  return QString(GRUWB_SOURCE_DIR) + "/resources/samples/" + file;
}

TEST(GruwbExportTest, CArrayWritesHeaderAndSource) {
  QTemporaryDir dir;
  const QString source = dir.filePath("model_data.cc");
  CliResult run = run_gruwb(
      {"export", sample("gesture_gru_fused.tflite"), "--to", "c-array", "-o", source, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonArray files = parse_json(run.out)["files"].toArray();
  ASSERT_EQ(files.size(), 2);
  EXPECT_EQ(files[0].toObject()["path"].toString(), dir.filePath("model_data.h"));
  QFile header(dir.filePath("model_data.h")), body(source);
  ASSERT_TRUE(header.open(QIODevice::ReadOnly) && body.open(QIODevice::ReadOnly));
  const QString h = QString::fromUtf8(header.readAll()), s = QString::fromUtf8(body.readAll());
  EXPECT_TRUE(h.contains("extern const unsigned char gesture_gru_fused_tflite[];"));
  EXPECT_TRUE(s.contains("#include \"model_data.h\""));
  EXPECT_TRUE(s.contains("alignas(16) const unsigned char gesture_gru_fused_tflite[] = {"));
  EXPECT_TRUE(s.contains(QString("gesture_gru_fused_tflite_len = %1;")
                             .arg(QFileInfo(sample("gesture_gru_fused.tflite")).size())));
}

TEST(GruwbExportTest, CircleGruModelRunsAsTflite) {
  QTemporaryDir dir;
  const QString out = dir.filePath("gesture.tflite");
  CliResult run = run_gruwb({"export", sample("gesture_gru.circle"), "--to", "tflite", "-o", out});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("note: 1 Circle GRU op(s) became the GRUWB_GRU custom op"))
      << run.out.toStdString();
  CliResult inspect = run_gruwb({"inspect", out, "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err.toStdString();
  EXPECT_TRUE(inspect.out.contains("GRUWB_GRU"));
  CliResult arena = run_gruwb({"run", out, "--arena"});
  EXPECT_EQ(arena.exit_code, 0) << arena.err.toStdString();
}

TEST(GruwbExportTest, NpyWritesEveryWeightAndAManifest) {
  QTemporaryDir dir;
  const QString out = dir.filePath("weights");
  CliResult run =
      run_gruwb({"export", sample("gesture_gru_fused.tflite"), "--to", "npy", "-o", out});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  QFile manifest_file(out + "/manifest.json");
  ASSERT_TRUE(manifest_file.open(QIODevice::ReadOnly));
  const QJsonObject manifest = parse_json(QString::fromUtf8(manifest_file.readAll()));
  const QJsonArray arrays = manifest["arrays"].toArray();
  ASSERT_EQ(arrays.size(), 5);  // kernel, recurrent kernel, bias, Dense kernel and bias
  for (const QJsonValue& v : arrays) {
    const QJsonObject a = v.toObject();
    gruwb::tools::NpyArray array;
    std::string error;
    ASSERT_TRUE(
        gruwb::tools::read_npy((out + "/" + a["file"].toString()).toStdString(), &array, &error))
        << error;
    EXPECT_EQ(QString::fromStdString(array.dtype), a["dtype"].toString());
    EXPECT_EQ(static_cast<int>(array.shape.size()), a["shape"].toArray().size());
  }
}

TEST(GruwbExportTest, ErrorsAreOneLine) {
  QTemporaryDir dir;
  CliResult clash = run_gruwb({"export", sample("gesture_gru_fused.tflite"), "--to", "tflite", "-o",
                               dir.filePath("x.circle")});
  EXPECT_EQ(clash.exit_code, 2);
  EXPECT_EQ(clash.err.count('\n'), 1) << clash.err.toStdString();
  EXPECT_TRUE(clash.err.contains("writes a .tflite file")) << clash.err.toStdString();
  CliResult target = run_gruwb({"export", sample("gesture_gru_fused.tflite"), "--to", "onnx"});
  EXPECT_EQ(target.exit_code, 2);
  EXPECT_TRUE(target.err.startsWith("gruwb: export: --to 'onnx'")) << target.err.toStdString();
  const QString missing = dir.filePath("missing.tflite");
  CliResult bad = run_gruwb({"export", missing, "--to", "npy", "-o", dir.filePath("w")});
  gruwb::test::expect_one_error_line(bad, missing, "");
}

}  // namespace
