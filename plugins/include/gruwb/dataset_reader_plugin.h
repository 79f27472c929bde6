#pragma once
// Dataset formats from a plugin: the file name endings it reads and a loader that fills one
// split (app/core/dataset.h). load_dataset() uses it for a file whose ending no built-in
// loader knows, a NAME_TRAIN<ext> file's NAME_TEST<ext> sibling included, and for a folder
// holding NAME_TRAIN<ext>; every command and the GUI's dataset loader go through there.

#include <QStringList>
#include <string>

#include "app/core/dataset.h"
#include "gruwb/plugin.h"

namespace gruwb::sdk {

class DatasetReaderPlugin {
 public:
  virtual ~DatasetReaderPlugin() = default;
  // File name endings with the dot, lower case: {".tsv"}.
  virtual QStringList extensions() const = 0;
  // Reads one file into *out (name, source, channels, class_names, series, lengths,
  // labels). False with a one-line *error naming the file (and line) on bad input; never
  // throws or aborts.
  virtual bool load(const std::string& path, app::Dataset* out, std::string* error) const = 0;
};

}  // namespace gruwb::sdk

Q_DECLARE_INTERFACE(
    gruwb::sdk::DatasetReaderPlugin,
    "org.gruwb.DatasetReaderPlugin/" GRUWB_PLUGIN_STRINGIFY(GRUWB_PLUGIN_SDK_VERSION))
