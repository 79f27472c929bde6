#include "app/core/bundled_files.h"

#include <QDir>
#include <QFileInfo>

namespace gruwb::app {
namespace {

// `relative` under the first of: the environment override, the binary's own prefix (a
// relocated or unpacked install), the configured prefix, the source tree (build-tree binary).
QString find_folder(const char* environment, const QString& installed, const QString& source) {
  const QString env = qEnvironmentVariable(environment);
  if (!env.isEmpty()) return QDir(env).exists() ? QDir(env).absolutePath() : QString();
  QStringList candidates;
  const QString binary_dir = program_folder();
  if (!binary_dir.isEmpty()) candidates << QDir::cleanPath(binary_dir + "/../" + installed);
  candidates << QStringLiteral(GRUWB_INSTALL_PREFIX "/") + installed;
  if (run_from_build_tree()) candidates << QStringLiteral(GRUWB_SOURCE_DIR "/") + source;
  for (const QString& folder : candidates) {
    if (QDir(folder).exists()) return QDir(folder).absolutePath();
  }
  return {};
}

}  // namespace

QString program_folder() {
  const QString exe = QFileInfo("/proc/self/exe").symLinkTarget();
  return exe.isEmpty() ? QString() : QFileInfo(exe).path();
}

bool run_from_build_tree() {
  const QString binary_dir = program_folder();
  return !binary_dir.isEmpty() &&
         QDir::cleanPath(binary_dir).startsWith(QStringLiteral(GRUWB_BUILD_DIR "/"));
}

QString samples_folder() {
  return find_folder("GRUWB_SAMPLES_DIR", "share/gru-workbench/samples", "resources/samples");
}

QString docs_folder() {
  return find_folder("GRUWB_DOCS_DIR", "share/doc/gru-workbench/docs", "docs");
}

QStringList bundled_samples() {
  const QString folder = samples_folder();
  if (folder.isEmpty()) return {};
  QStringList files;
  const QStringList patterns = {"*.tflite", "*.circle", "*_TRAIN.ts"};
  for (const QFileInfo& file : QDir(folder).entryInfoList(patterns, QDir::Files, QDir::Name)) {
    files << file.absoluteFilePath();
  }
  return files;
}

QString sample_description(const QString& file_name) {
  // resources/samples/README.md says where each file comes from.
  static const struct {
    const char* name;
    const char* line;
  } kSamples[] = {
      {"gesture_gru_fused.tflite", "GRU gesture classifier, one fused GRUWB_GRU op"},
      {"gesture_gru_while.tflite",
       "the same GRU as the converter writes it: a WHILE loop (fuse it)"},
      {"gesture_gru.circle", "the same GRU in Circle form (the Circle GRU op)"},
      {"gru_float.circle", "onert-micro's Circle GRU test model"},
      {"tflm_hello_world_float.tflite", "TFLite Micro's hello world: 3 FULLY_CONNECTED, sine"},
      {"BasicMotions_TRAIN.ts", "dataset: 4 activities, 6 channels, 100 steps, 40 cases"},
      {"BasicMotionsAcc60_TRAIN.ts", "dataset: BasicMotions accelerometer, 60 steps (gesture)"},
  };
  for (const auto& sample : kSamples) {
    if (file_name == QLatin1String(sample.name)) return QString::fromUtf8(sample.line);
  }
  return {};
}

}  // namespace gruwb::app
