// `gruwb board fit` on the manifests of real firmware builds (tests/fixtures/firmware: the
// `all` images of mps2_an386 and nucleo_f446re as the firmware build wrote them, with what the
// link measured): the reference GRU(60) trains all weights on the 478 KB pool of the MPS2 but
// not on the NUCLEO's 102 KB (its run needs about 335 KB: docs/firmware.md), where only the
// last Dense layer fits; the figures are the engine planner's, and errors are one line.

#include <QFile>
#include <QJsonArray>

#include "tests/app/cli_test_util.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::parse_json;
using gruwb::test::run_gruwb;

const QString kFixtures = QStringLiteral(GRUWB_SOURCE_DIR "/tests/fixtures/firmware");
const QString kModel =
    QStringLiteral(GRUWB_SOURCE_DIR "/resources/samples/gesture_gru_fused.tflite");

class BoardFitTest : public ::testing::Test {
 protected:
  void SetUp() override { qputenv("GRUWB_FIRMWARE_DIR", kFixtures.toUtf8()); }
  void TearDown() override { qunsetenv("GRUWB_FIRMWARE_DIR"); }
};

QJsonObject need(const QJsonObject& board, const char* list, const QString& what) {
  for (const QJsonValue& n : board[list].toArray()) {
    if (n.toObject()["what"].toString() == what) return n.toObject();
  }
  ADD_FAILURE() << "no " << what.toStdString() << " in " << list;
  return {};
}

TEST_F(BoardFitTest, ReferenceModelTrainsAllWeightsOnMps2OnlyTheDenseLayerOnNucleo) {
  const CliResult run = run_gruwb({"board", "fit", kModel, "--samples", "16", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const QJsonObject fit = parse_json(run.out);
  const qint64 model_bytes = QFile(kModel).size();
  EXPECT_EQ(fit["model_bytes"].toInteger(), model_bytes);
  // 16 samples of 60 x 3 floats and a class each, after the 20-byte header.
  EXPECT_EQ(fit["dataset_bytes"].toInteger(), 20 + 16 * (180 * 4 + 4));
  // The inference arena is the one `gruwb bench` plans for the same model.
  const CliResult bench =
      run_gruwb({"bench", kModel, "--json", "--repetitions", "1", "--min-time", "0.01"});
  ASSERT_EQ(bench.exit_code, 0) << bench.err.toStdString();
  const qint64 arena = parse_json(bench.out)["arena_bytes"].toInteger();
  ASSERT_GT(arena, 0);

  const QJsonArray boards = fit["boards"].toArray();
  ASSERT_EQ(boards.size(), 2);
  for (const QJsonValue& value : boards) {
    const QJsonObject board = value.toObject();
    const QString name = board["board"].toString();
    QFile manifest(kFixtures + "/" + name + "/gruwb_fw_" + name + ".json");
    ASSERT_TRUE(manifest.open(QIODevice::ReadOnly));
    const QJsonObject memory = parse_json(manifest.readAll())["memory"].toObject();
    const QJsonObject inference = need(board, "ram", "inference");
    EXPECT_EQ(inference["available"].toInteger(), memory["pool_bytes"].toInteger())
        << name.toStdString();
    EXPECT_EQ(inference["needed"].toInteger(), (model_bytes + 15) / 16 * 16 + arena);
    EXPECT_TRUE(inference["fits"].toBool());
    EXPECT_TRUE(need(board, "ram", "train fc")["fits"].toBool()) << name.toStdString();
    // Flash: the image as linked, and an image with only the model's three ops, which is
    // smaller but keeps everything besides the kernels.
    const QJsonObject image = need(board, "flash", "flash, image (all ops)");
    EXPECT_EQ(image["needed"].toInteger(), memory["flash_used"].toInteger());
    const QJsonObject own = need(board, "flash", "flash, this model's ops");
    qint64 kernels = 0;
    for (const QJsonValue& bytes : memory["kernel_objects"].toObject())
      kernels += bytes.toInteger();
    EXPECT_LT(own["needed"].toInteger(), image["needed"].toInteger());
    EXPECT_GT(own["needed"].toInteger(), image["needed"].toInteger() - kernels);
    const bool all_fits = need(board, "ram", "train all")["fits"].toBool();
    if (name == "mps2_an386") {
      EXPECT_TRUE(all_fits);
      EXPECT_EQ(board["advice"].toString(), "fits: inference and training all weights");
    } else {
      EXPECT_FALSE(all_fits);
      EXPECT_TRUE(board["advice"].toString().startsWith("training all weights needs "));
      EXPECT_TRUE(board["advice"].toString().endsWith(" KB more: try scope fc"));
    }
  }

  // The text form: one row per board with the same verdicts.
  const CliResult text = run_gruwb({"board", "fit", kModel, "--board", "nucleo_f446re"});
  ASSERT_EQ(text.exit_code, 0) << text.err.toStdString();
  EXPECT_TRUE(text.out.contains("nucleo_f446re")) << text.out.toStdString();
  EXPECT_FALSE(text.out.contains("mps2_an386")) << text.out.toStdString();
  EXPECT_TRUE(text.out.contains("try scope fc")) << text.out.toStdString();
  EXPECT_TRUE(text.out.contains("no dataset counted (--samples N)")) << text.out.toStdString();
}

TEST_F(BoardFitTest, ErrorsAreOneLine) {
  const CliResult unknown = run_gruwb({"board", "fit", kModel, "--board", "nrf5340dk"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.count('\n'), 1) << unknown.err.toStdString();
  EXPECT_TRUE(unknown.err.contains("no firmware image for board 'nrf5340dk'"))
      << unknown.err.toStdString();

  qputenv("GRUWB_FIRMWARE_DIR", GRUWB_SOURCE_DIR "/tests/fixtures/datasets");
  const CliResult none = run_gruwb({"board", "fit", kModel});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err.count('\n'), 1) << none.err.toStdString();
  EXPECT_TRUE(none.err.contains("no firmware images found")) << none.err.toStdString();

  const CliResult bad =
      run_gruwb({"board", "fit", kFixtures + "/mps2_an386/gruwb_fw_mps2_an386.json"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.count('\n'), 1) << bad.err.toStdString();
  const CliResult usage = run_gruwb({"board", "fit"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_TRUE(usage.err.contains("board fit: give one MODEL")) << usage.err.toStdString();
}

}  // namespace
