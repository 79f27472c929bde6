#pragma once
// The GRU Workbench plugin SDK: what every plugin implements. A plugin is a Qt plugin
// (QPluginLoader) whose object derives from QObject, gruwb::sdk::Plugin and any of the
// capability interfaces beside this file:
//   cell_plugin.h            recurrent cell types (descriptor + fused-op kernel)
//   dataset_reader_plugin.h  dataset formats
//   transport_plugin.h       board transports ("tcp://host:port")
// The SDK is these headers and the engine/app/serial headers they include; a plugin compiles
// against them and nothing else, and leaves its engine symbols to the program that loads it
// (gruwb and gru-workbench export theirs). plugins/README.md shows a whole plugin.
//
//   class MyReader : public QObject, public gruwb::sdk::Plugin,
//                    public gruwb::sdk::DatasetReaderPlugin {
//     Q_OBJECT
//     Q_PLUGIN_METADATA(IID GRUWB_PLUGIN_IID FILE "my_reader.json")  // {"sdk": 1}
//     Q_INTERFACES(gruwb::sdk::Plugin gruwb::sdk::DatasetReaderPlugin)
//     ...
//   };

#include <QJsonObject>
#include <QString>
#include <QtPlugin>

// The SDK version a plugin is built against. A plugin's metadata JSON says it as
// {"sdk": N}; a program refuses a plugin built for another version. Raised whenever an
// interface or a type a plugin sees changes.
#define GRUWB_PLUGIN_SDK_VERSION 1
#define GRUWB_PLUGIN_STRINGIFY2(x) #x
#define GRUWB_PLUGIN_STRINGIFY(x) GRUWB_PLUGIN_STRINGIFY2(x)
// The IID of Q_PLUGIN_METADATA, naming the SDK version: "org.gruwb.Plugin/1".
#define GRUWB_PLUGIN_IID "org.gruwb.Plugin/" GRUWB_PLUGIN_STRINGIFY(GRUWB_PLUGIN_SDK_VERSION)

namespace gruwb::sdk {

// What every plugin says about itself, and its state, which the workbench keeps in project
// files (a .gruwb project's "plugins" section, under the plugin's name).
class Plugin {
 public:
  virtual ~Plugin() = default;
  // A short unique name, "tsv_reader": listings, project files, messages.
  virtual QString name() const = 0;
  virtual QString version() const = 0;      // "1.0"
  virtual QString description() const = 0;  // one line
  // The settings a user changed, for the project file ({} when none), and back.
  virtual QJsonObject saveState() const { return {}; }
  virtual void restoreState(const QJsonObject& state) { (void)state; }
};

}  // namespace gruwb::sdk

Q_DECLARE_INTERFACE(gruwb::sdk::Plugin, GRUWB_PLUGIN_IID)
