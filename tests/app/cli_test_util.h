#pragma once
// Runs the built `gruwb` binary as a user would and checks its streams.

#include <gtest/gtest.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <string>

#include "tests/engine/test_models.h"

namespace gruwb::test {

struct CliResult {
  int exit_code = -1;
  QString out;
  QString err;
};

inline CliResult run_gruwb(const QStringList& args) {
  QProcess process;
  process.start(QStringLiteral(GRUWB_CLI), args);
  CliResult run;
  if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit) {
    ADD_FAILURE() << "gruwb did not finish normally: " << GRUWB_CLI << " "
                  << args.join(' ').toStdString();
    process.kill();
    return run;
  }
  run.exit_code = process.exitCode();
  run.out = QString::fromUtf8(process.readAllStandardOutput());
  run.err = QString::fromUtf8(process.readAllStandardError());
  return run;
}

inline QString model(const char* file) {
  const std::string path = gruwb::test::model_path(file);
  EXPECT_FALSE(path.empty()) << file;
  return QString::fromStdString(path);
}

// Bad input must give exactly one line "gruwb: <file>: <problem>" on stderr.
inline void expect_one_error_line(const CliResult& run, const QString& file, const char* problem) {
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.out.isEmpty()) << run.out.toStdString();
  ASSERT_TRUE(run.err.endsWith('\n')) << run.err.toStdString();
  EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
  EXPECT_TRUE(run.err.startsWith("gruwb: " + file + ": ")) << run.err.toStdString();
  EXPECT_TRUE(run.err.contains(QString::fromUtf8(problem))) << run.err.toStdString();
}

inline QJsonObject parse_json(const QString& text) {
  QJsonParseError error{};
  const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &error);
  EXPECT_EQ(error.error, QJsonParseError::NoError)
      << error.errorString().toStdString() << " at offset " << error.offset;
  EXPECT_TRUE(doc.isObject());
  return doc.object();
}

}  // namespace gruwb::test
