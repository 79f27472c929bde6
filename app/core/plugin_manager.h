#pragma once
// Plugins (plugins/include/gruwb/, plugins/README.md): found in known folders, checked
// against this program's SDK version, loaded with QPluginLoader, and what they provide
// registered where every command finds it: cell types in the cell registry and their
// kernels in the default op table, dataset readers in load_dataset(), transports in
// open_transport(). gruwb and gru-workbench load them at start-up, before any command runs;
// `gruwb plugins` and Help > Plugins list the same records.

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <vector>

class QObject;

namespace gruwb::app {

struct PluginRecord {
  QString path;  // the library file
  QString name;  // the plugin's name (metadata "name" or the file name when refused early)
  QString version, description;
  int sdk = 0;           // the SDK version its metadata names (0: none)
  bool loaded = false;   // false: refused, see problem
  QString problem;       // why it was refused; one line
  QStringList warnings;  // loaded, but a capability was refused (name taken, op table full)
  // What it provides, as registered.
  QStringList cells;            // "gru_plugin_test (op GRUWB_GRU_PLUGIN_TEST)"
  QStringList dataset_formats;  // ".tsv"
  QStringList transports;       // "tcp"
  QObject* instance = nullptr;  // loaded plugins: the plugin object (owned by Qt's loader)
};

// The folders searched, in order: GRUWB_PLUGIN_PATH (colon-separated), the user's
// (QStandardPaths::AppDataLocation + "/plugins"), the system's (<prefix>/lib/gru-workbench/
// plugins and <dir of the binary>/../lib/gru-workbench/plugins) and, for a binary run from
// its build tree, the build's plugin folder. Folders that do not exist are kept (listed).
QStringList plugin_folders();

class PluginManager {
 public:
  // `program` names this program in messages ("this gruwb has SDK 1").
  explicit PluginManager(QString program = "gruwb") : program_(std::move(program)) {}

  // Loads every library file in `folders`, in order (files by name within a folder). A
  // plugin whose name is loaded already is refused (the first one found wins).
  void loadFolders(const QStringList& folders);
  // Loads one file; returns its record (also kept in records()).
  const PluginRecord& loadFile(const QString& path);

  const std::vector<PluginRecord>& records() const { return records_; }
  // One line per refused plugin and per warning: what start-up prints.
  QStringList problems() const;

  // Project files: {name: the plugin's saveState()} for loaded plugins, plus the states of
  // plugins that were restored but are not loaded now (so saving does not lose them).
  // restoreState gives every loaded plugin its entry ({}, its defaults, when absent).
  QJsonObject saveState() const;
  void restoreState(const QJsonObject& state);

 private:
  void registerCapabilities(PluginRecord* record);

  QString program_;
  std::vector<PluginRecord> records_;
  QJsonObject restored_;
};

// The program's plugins: gruwb's and gru-workbench's main() call load_plugins() first.
PluginManager& plugin_manager();
// Loads from plugin_folders() once into plugin_manager(); returns the problem lines.
QStringList load_plugins(const QString& program);

// The listing `gruwb plugins` prints and Help > Plugins shows: folders, then each plugin.
QJsonObject plugins_json(const PluginManager& manager, const QStringList& folders);
std::string plugins_text(const PluginManager& manager, const QStringList& folders);

}  // namespace gruwb::app
