// `gruwb sweep` as a user runs it: a 2 x 2 sweep on BasicMotions (20 steps,
// 1 epoch) with two worker processes, resumed without running anything again,
// collected into JSON/CSV; a run that fails is reported with its log and
// retried on request; --slurm without Slurm and bad specs fail with one line.
// The Slurm cluster itself: tests/app/sweep_slurm_test.sh (CI stage "slurm").

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QProcessEnvironment>
#include <QTemporaryDir>

#include "tests/app/cli_test_util.h"

namespace gruwb::test {
namespace {

const QString kData = QStringLiteral(GRUWB_SOURCE_DIR "/resources/samples/BasicMotions_TRAIN.ts");

QString write_spec(const QTemporaryDir& dir, const QString& grid,
                   const QString& name = "cells.json") {
  const QString path = dir.filePath(name);
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::WriteOnly));
  file.write(QStringLiteral("{\"format\": \"gruwb-sweep-1\", \"name\": \"cells\", \"experiment\": "
                            "{\"build\": \"cell=gru,units=8\", \"data\": \"%1\", \"timesteps\": "
                            "20, \"stages\": \"all\"}, \"fixed\": {\"epochs\": 1}, \"grid\": %2}")
                 .arg(kData, grid)
                 .toUtf8());
  return path;
}

QString read(const QString& path) {
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
  return QString::fromUtf8(file.readAll());
}

TEST(GruwbSweep, RunsWithWorkersResumesAndCollects) {
  QTemporaryDir tmp;
  const QString spec = write_spec(tmp, "[{\"cell\": [\"gru\", \"rnn\"]}, {\"units\": [4, 8]}]");
  const QString dir = tmp.filePath("cells.sweep");  // the default folder
  CliResult run = run_gruwb({"sweep", spec, "--jobs", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.err.isEmpty()) << run.err.toStdString();  // no progress bar off a terminal
  EXPECT_TRUE(run.out.startsWith("ran 4 runs with 2 worker processes in "))
      << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("cells: 4 runs, 4 finished, 0 failed, 0 pending"));
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(QFile::exists(dir + QStringLiteral("/runs/run-%1.json").arg(i, 4, 10, QChar('0'))));
  }
  EXPECT_TRUE(
      read(dir + "/logs/run-0002.log").startsWith("gruwb sweep run 2: r2 cell=rnn units=4\n"));
  const QJsonObject result = parse_json(read(dir + "/sweep-result.json"));
  EXPECT_EQ(result.value("format").toString(), "gruwb-sweep-result-1");
  const QJsonArray runs = result.value("runs").toArray();
  ASSERT_EQ(runs.size(), 4);
  // A run's figures are its own result's: accuracy of the last stage, fused bytes.
  const QJsonObject run3 = parse_json(read(dir + "/runs/run-0003.json"));
  EXPECT_EQ(runs[3].toObject().value("test_accuracy").toDouble(), run3.value("summary")
                                                                      .toArray()
                                                                      .last()
                                                                      .toObject()
                                                                      .value("test_accuracy")
                                                                      .toObject()
                                                                      .value("mean")
                                                                      .toDouble());
  EXPECT_EQ(runs[3].toObject().value("model_bytes").toInt(),
            run3.value("cells").toArray()[0].toObject().value("fused_bytes").toInt());
  EXPECT_LT(runs[2].toObject().value("model_bytes").toInt(),
            runs[3].toObject().value("model_bytes").toInt());
  EXPECT_EQ(read(dir + "/sweep-result.csv").count('\n'), 5);

  // Again: every run has its result, nothing runs.
  const QString before = read(dir + "/runs/run-0001.json");
  run = run_gruwb({"sweep", spec, "--jobs", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.startsWith("ran 0 runs")) << run.out.toStdString();
  EXPECT_EQ(read(dir + "/runs/run-0001.json"), before);

  run = run_gruwb({"sweep", "--status", dir});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("4 runs, 4 finished, 0 failed, 0 queued or running, 0 pending"))
      << run.out.toStdString();
  run = run_gruwb({"sweep", "--collect", dir, "--report", tmp.filePath("r.md")});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(read(tmp.filePath("r.md")).contains("## Best runs"));
}

TEST(GruwbSweep, AFailedRunIsNamedWithItsLogAndRetriedOnRequest) {
  QTemporaryDir tmp;
  const QString spec = write_spec(
      tmp, QStringLiteral("{\"data\": [\"%1\", \"%2\"]}").arg(kData, tmp.filePath("gone.ts")));
  const QString dir = tmp.filePath("s");
  CliResult run = run_gruwb({"sweep", spec, "--dir", dir});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(run.out.contains("2 runs, 1 finished, 1 failed, 0 pending")) << run.out.toStdString();
  EXPECT_TRUE(
      run.err.contains("gruwb: sweep run 1 (r1 data=" + tmp.filePath("gone.ts") + ") failed: "))
      << run.err.toStdString();
  EXPECT_TRUE(run.err.contains("(log: " + dir + "/logs/run-0001.log)")) << run.err.toStdString();
  EXPECT_TRUE(run.err.endsWith("gruwb: sweep: 1 runs failed, 0 did not run (gruwb sweep --status " +
                               dir + ")\n"))
      << run.err.toStdString();

  run = run_gruwb({"sweep", "--status", dir});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(run.out.contains("run 1 (r1 data=")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("(log " + dir + "/logs/run-0001.log: gruwb: sweep run 1: "))
      << run.out.toStdString();

  // Without --retry-failed the failed run stays; with it, it runs (and fails) again.
  run = run_gruwb({"sweep", spec, "--dir", dir, "--dry-run"});
  EXPECT_TRUE(run.out.contains("2 runs in " + dir + ", 0 to run")) << run.out.toStdString();
  run = run_gruwb({"sweep", spec, "--dir", dir, "--dry-run", "--retry-failed"});
  EXPECT_TRUE(run.out.contains(", 1 to run\nr1 data=")) << run.out.toStdString();
  run = run_gruwb({"sweep", spec, "--dir", dir, "--retry-failed"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(run.out.startsWith("ran 1 runs")) << run.out.toStdString();
}

TEST(GruwbSweep, SlurmWithoutSbatchAndBadSpecsFailWithOneLine) {
  QTemporaryDir tmp;
  const QString spec = write_spec(tmp, "{\"units\": [4]}");
  QProcess process;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("PATH", tmp.path());  // no sbatch there
  process.setProcessEnvironment(env);
  process.start(QStringLiteral(GRUWB_CLI), {"sweep", spec, "--slurm", "--dir", tmp.filePath("d")});
  ASSERT_TRUE(process.waitForFinished(60000));
  EXPECT_EQ(process.exitCode(), 2);
  EXPECT_EQ(QString::fromUtf8(process.readAllStandardError()),
            "gruwb: sweep: sbatch is not on PATH: --slurm needs a Slurm login node (or run here "
            "with --jobs N)\n");

  const QString bad = write_spec(tmp, "{\"colour\": [1]}", "bad.json");
  CliResult run = run_gruwb({"sweep", bad});
  expect_one_error_line(run, bad, "unknown setting 'colour'");
  run = run_gruwb({"sweep", "--collect", tmp.filePath("nothing")});
  expect_one_error_line(run, tmp.filePath("nothing") + "/sweep.json", "No such file");
  run = run_gruwb({"sweep", spec, "--report", tmp.filePath("r.pdf")});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.startsWith("gruwb: sweep: --report '" + tmp.filePath("r.pdf") +
                                 "' (use .json, .html, .md or .csv)\n"))
      << run.err.toStdString();
}

}  // namespace
}  // namespace gruwb::test
