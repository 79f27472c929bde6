#pragma once
// A model file and its analyzer report, as the views get them from the main
// window; a file that does not load stops the test.

#include <QString>
#include <QtGlobal>
#include <memory>
#include <string>

#include "engine/tools/analyzer.h"
#include "engine/tools/model_file.h"

namespace gruwb::test {

struct LoadedWithReport {
  tools::LoadedModel model;
  tools::AnalyzerReport report;
};

inline std::unique_ptr<LoadedWithReport> load_with_report(const QString& path) {
  auto loaded = std::make_unique<LoadedWithReport>();
  std::string error;
  if (!tools::load_model_file(path.toStdString(), &loaded->model, &error)) {
    qFatal("cannot load %s: %s", qPrintable(path), error.c_str());
  }
  loaded->report = tools::analyze_model(loaded->model.model, loaded->model.path);
  return loaded;
}

// The analyzer report alone (it holds copies, nothing points into the file).
inline tools::AnalyzerReport analyze_file(const QString& path) {
  return load_with_report(path)->report;
}

}  // namespace gruwb::test
