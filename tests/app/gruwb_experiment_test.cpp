// `gruwb experiment` and `gruwb data` as a user runs them: the learning run
// on RacketSports (averaged over seeds, test accuracy init < fc < all),
// reports written and re-rendered from the result JSON, bad input as one
// line with exit status 2.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>

#include "tests/app/cli_test_util.h"

namespace gruwb::test {
namespace {

const QString kDatasets = QStringLiteral(GRUWB_SHARED_DIR "/data/datasets/");

QByteArray read(const QString& path) {
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
  return file.readAll();
}

TEST(GruwbExperiment, FcBeatsInitAndAllBeatsFcOnRacketSports) {
  QTemporaryDir dir;
  const QString json = dir.filePath("r.json"), md = dir.filePath("r.md");
  const CliResult run = run_gruwb(
      {"experiment", "--build", "cell=gru,units=16", "--data", kDatasets + "RacketSports",
       "--stages", "init,fc,all", "--epochs", "8", "--seeds", "2", "--json", json, "--report", md});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.err.isEmpty()) << run.err.toStdString();  // no progress bar off a terminal
  EXPECT_TRUE(run.out.contains("test accuracy")) << run.out.toStdString();
  QFile file(json);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QJsonObject result = parse_json(QString::fromUtf8(file.readAll()));
  EXPECT_EQ(result.value("status").toString(), "completed");
  const QJsonArray summary = result.value("summary").toArray();
  ASSERT_EQ(summary.size(), 3);
  double accuracy[3];
  for (int i = 0; i < 3; ++i) {
    const QJsonObject row = summary[i].toObject();
    accuracy[i] = row.value("test_accuracy").toObject().value("mean").toDouble();
    EXPECT_EQ(row.value("test_accuracy").toObject().value("count").toInt(), 2);
  }
  EXPECT_LT(accuracy[0], accuracy[1]) << run.out.toStdString();
  EXPECT_LT(accuracy[1], accuracy[2]) << run.out.toStdString();
  EXPECT_EQ(result.value("runs").toArray().size(), 6);
  EXPECT_TRUE(QFile::exists(md));
}

TEST(GruwbExperiment, SavedSpecReruns) {
  QTemporaryDir dir;
  const QString spec = dir.filePath("exp.json"), out = dir.filePath("out.json");
  CliResult run = run_gruwb({"experiment", "--build", "cell=rnn,units=4", "--data",
                             kDatasets + "BasicMotions", "--timesteps", "10", "--stages", "init",
                             "--save-spec", spec, "--name", "saved", "--single-sample-passes"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  run = run_gruwb({"experiment", "--spec", spec, "--json", out});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.startsWith("saved (completed")) << run.out.toStdString();
  QFile file(out);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QJsonObject result = parse_json(QString::fromUtf8(file.readAll()));
  EXPECT_EQ(result.value("spec").toObject().value("build").toString(), "cell=rnn,units=4");
  // Saved only when off (batched passes are the default), and read back.
  EXPECT_EQ(result.value("spec").toObject().value("batched_passes"), QJsonValue(false));
  EXPECT_EQ(result.value("data").toObject().value("timesteps").toInt(), 10);
}

// A full-integer model (the reference GRU through `gruwb quantize`) in an experiment: its stages
// train its float form, the notes say so, and `all` ends above `init`.
TEST(GruwbExperiment, FullIntegerModelStagesTrainItsFloatForm) {
  QTemporaryDir dir;
  const QString samples = QStringLiteral(GRUWB_SOURCE_DIR "/resources/samples/");
  const QString int8 = dir.filePath("int8.tflite"), json = dir.filePath("r.json");
  CliResult run = run_gruwb({"quantize", samples + "gesture_gru_fused.tflite", "--data",
                             samples + "BasicMotionsAcc60_TRAIN.ts", "-o", int8});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  run = run_gruwb({"experiment", "--model", int8, "--data", samples + "BasicMotionsAcc60_TRAIN.ts",
                   "--stages", "init,all", "--epochs", "6", "--json", json});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("full-integer: its stages train its float form"))
      << run.out.toStdString();
  const QJsonObject result = parse_json(QString::fromUtf8(read(json)));
  EXPECT_EQ(result.value("status").toString(), "completed");
  const QJsonArray summary = result.value("summary").toArray();
  ASSERT_EQ(summary.size(), 2);
  const auto accuracy = [&](int i) {
    return summary[i].toObject().value("test_accuracy").toObject().value("mean").toDouble();
  };
  EXPECT_LT(accuracy(0), accuracy(1)) << run.out.toStdString();
}

// --result: yesterday's --json file gives the same reports and table again,
// without training.
TEST(GruwbExperiment, ResultRerendersReports) {
  QTemporaryDir dir;
  const QString json = dir.filePath("r.json");
  CliResult run =
      run_gruwb({"experiment", "--build", "cell=gru,units=4", "--data", kDatasets + "BasicMotions",
                 "--timesteps", "10", "--stages", "init,fc", "--epochs", "1", "--json", json,
                 "--report", dir.filePath("r.html"), "--report", dir.filePath("r.md")});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  const CliResult again =
      run_gruwb({"experiment", "--result", json, "--report", dir.filePath("again.html"), "--report",
                 dir.filePath("again.md"), "--report", dir.filePath("again.json")});
  ASSERT_EQ(again.exit_code, 0) << again.err.toStdString();
  EXPECT_TRUE(again.err.isEmpty()) << again.err.toStdString();
  EXPECT_EQ(read(dir.filePath("again.html")), read(dir.filePath("r.html")));
  EXPECT_EQ(read(dir.filePath("again.md")), read(dir.filePath("r.md")));
  EXPECT_EQ(read(dir.filePath("again.json")), read(json));
  // The same table on stdout, before the lines naming the files.
  EXPECT_EQ(again.out.section("report: ", 0, 0), run.out.section("report: ", 0, 0));
  EXPECT_TRUE(again.out.contains("report: " + dir.filePath("again.md"))) << again.out.toStdString();

  // A result cut short names the file and what is missing.
  const QString cut = dir.filePath("cut.json");
  QFile file(cut);
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  QByteArray text = read(json);
  file.write(text.left(text.indexOf("\"runs\"")) + "\"ran\": []}");
  file.close();
  CliResult bad = run_gruwb({"experiment", "--result", cut, "--report", dir.filePath("x.html")});
  expect_one_error_line(bad, cut, "member 'runs' is missing");
  EXPECT_FALSE(QFile::exists(dir.filePath("x.html")));

  bad = run_gruwb({"experiment", "--result", dir.filePath("none.json")});
  expect_one_error_line(bad, dir.filePath("none.json"), "No such file");
  bad = run_gruwb({"experiment", "--result", json, "--epochs", "3"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(bad.err.startsWith("gruwb: experiment: --result takes only --report, not --epochs"))
      << bad.err.toStdString();
}

// --compare-models: model files as rows of the cell table beside the built
// cell; one whose input does not fit the data has an error in its row, the
// others complete, and the exit status says a row failed.
TEST(GruwbExperiment, ComparesModelFilesBesideTheCell) {
  QTemporaryDir dir;
  const QString json = dir.filePath("r.json");
  const QString samples = QStringLiteral(GRUWB_SOURCE_DIR "/resources/samples/");
  const QString fused = samples + "gesture_gru_fused.tflite", bad = samples + "gru_float.circle";
  const CliResult run =
      run_gruwb({"experiment", "--build", "cell=gru,units=4", "--compare-models", fused + "," + bad,
                 "--data", samples + "BasicMotionsAcc60_TRAIN.ts", "--stages", "init,fc",
                 "--epochs", "1", "--json", json});
  EXPECT_EQ(run.exit_code, 1) << run.err.toStdString();
  EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
  EXPECT_TRUE(run.err.contains("gru_float.circle")) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("board latency")) << run.out.toStdString();
  const QStringList lines = run.out.split('\n');
  const auto has_line = [&](const QString& start, const QString& part) {
    for (const QString& line : lines) {
      if (line.startsWith(start) && line.contains(part)) return true;
    }
    return false;
  };
  // The cell table's rows: the cell, the file (fused bytes = its size), the error.
  const QString size = QString::number(QFileInfo(fused).size());
  EXPECT_TRUE(has_line("gesture_gru_fused.tflite ", " " + size + " ")) << run.out.toStdString();
  EXPECT_TRUE(has_line("gru_float.circle ", "error: ")) << run.out.toStdString();
  const QJsonObject result = parse_json(QString::fromUtf8(read(json)));
  const QJsonArray cells = result.value("cells").toArray();
  ASSERT_EQ(cells.size(), 3);
  EXPECT_EQ(cells[1].toObject().value("model_path").toString(), fused);
  EXPECT_EQ(cells[1].toObject().value("fused_bytes").toInteger(), QFileInfo(fused).size());
  EXPECT_FALSE(cells[2].toObject().value("error").toString().isEmpty());
  EXPECT_EQ(result.value("runs").toArray().size(), 4);  // 2 rows x 2 stages

  // The saved result prints the same rows again.
  const CliResult again = run_gruwb({"experiment", "--result", json});
  EXPECT_EQ(again.exit_code, 0) << again.err.toStdString();
  EXPECT_EQ(again.out, run.out.left(run.out.indexOf("json: ")));
}

TEST(GruwbExperiment, BadInputIsOneLine) {
  const QString bad = QStringLiteral(GRUWB_SOURCE_DIR "/tests/app/dataset_test.cpp");
  CliResult run = run_gruwb({"experiment", "--build", "cell=gru,units=4", "--data", bad});
  expect_one_error_line(run, bad, "unknown dataset format");

  run = run_gruwb({"experiment", "--data", kDatasets + "Epilepsy"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.startsWith("gruwb: experiment: give a model file or a build spec"))
      << run.err.toStdString();

  run = run_gruwb({"experiment", "--build", "cell=gru,units=4", "--data", kDatasets + "Epilepsy",
                   "--stages", "init,half"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.contains("stage 'half'")) << run.err.toStdString();

  run = run_gruwb({"experiment", "--build", "cell=gru,units=4", "--data", kDatasets + "Epilepsy",
                   "--report", "r.docx"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.contains("--report 'r.docx'")) << run.err.toStdString();
}

TEST(GruwbData, SummaryAndBrokenFile) {
  CliResult run = run_gruwb({"data", kDatasets + "RacketSports"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("train: 151 cases, 6 channels, length 30")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("test: 152 cases")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("Badminton_Clear 43")) << run.out.toStdString();

  QTemporaryDir dir;
  const QString path = dir.filePath("broken.ts");
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  file.write("@problemName X\n@classLabel true a b\n@data\n1,2,3:a\n1,2,oops:b\n");
  file.close();
  run = run_gruwb({"data", path});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "gruwb: " + path + ":5:5: not a number: 'oops'\n");
}

}  // namespace
}  // namespace gruwb::test
