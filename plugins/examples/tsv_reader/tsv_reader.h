#pragma once
// Dataset reader plugin for the UCR time-series archive's univariate format (2018 archive,
// www.cs.ucr.edu/~eamonn/time_series_data_2018): NAME_TRAIN.tsv / NAME_TEST.tsv, one case
// per line, the class label first, then the values, tab-separated. Variable-length problems
// pad shorter series with NaN at the end; those pads are not part of the series (state
// "trim_trailing_nan", default true). A NaN inside a series is a missing value.

#include <QObject>

#include "gruwb/dataset_reader_plugin.h"
#include "gruwb/plugin.h"

namespace gruwb::plugins {

// The parser, callable without the plugin object (tests).
bool read_ucr_tsv(const std::string& path, bool trim_trailing_nan, app::Dataset* out,
                  std::string* error);

class TsvReaderPlugin : public QObject, public sdk::Plugin, public sdk::DatasetReaderPlugin {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID GRUWB_PLUGIN_IID FILE "tsv_reader.json")
  Q_INTERFACES(gruwb::sdk::Plugin gruwb::sdk::DatasetReaderPlugin)

 public:
  QString name() const override { return "tsv_reader"; }
  QString version() const override { return "1.0"; }
  QString description() const override {
    return "UCR archive univariate .tsv datasets (label, then values, tab-separated)";
  }
  QJsonObject saveState() const override;
  void restoreState(const QJsonObject& state) override;

  QStringList extensions() const override { return {".tsv"}; }
  bool load(const std::string& path, app::Dataset* out, std::string* error) const override {
    return read_ucr_tsv(path, trim_trailing_nan_, out, error);
  }

 private:
  bool trim_trailing_nan_ = true;
};

}  // namespace gruwb::plugins
