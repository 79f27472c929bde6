#include "app/core/plugin_manager.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QLibrary>
#include <QPluginLoader>
#include <QStandardPaths>
#include <cstring>

#include "app/core/bundled_files.h"
#include "engine/runtime/op_resolver.h"
#include "engine/tools/cells/cell_registry.h"
#include "gruwb/cell_plugin.h"
#include "gruwb/dataset_reader_plugin.h"
#include "gruwb/plugin.h"
#include "gruwb/transport_plugin.h"

namespace gruwb::app {

namespace {

constexpr char kIidPrefix[] = "org.gruwb.Plugin/";

QString file_name(const QString& path) { return QFileInfo(path).fileName(); }

// Runs `read` with Qt's plugin loader warnings ("failed to map to memory") dropped: the
// manager reports each file's problem in its own one line.
QtMessageHandler previous_handler = nullptr;
void drop_loader_warnings(QtMsgType type, const QMessageLogContext& context, const QString& text) {
  if (context.category && std::strcmp(context.category, "qt.core.plugin.loader") == 0) return;
  if (previous_handler) previous_handler(type, context, text);
}
template <typename Read>
auto quietly(Read read) {
  previous_handler = qInstallMessageHandler(drop_loader_warnings);
  auto result = read();
  qInstallMessageHandler(previous_handler);
  return result;
}

// Qt's reason without the path it repeats: "the file is not a valid ELF object (...)".
QString metadata_problem(const QPluginLoader& loader, const QString& path) {
  if (QFileInfo(path).size() == 0) return "the file is empty";
  QString why = loader.errorString();
  why.replace("'" + path + "'", "the file");
  const qsizetype colon = why.lastIndexOf(": ");
  if (colon >= 0) why = why.mid(colon + 2);
  if (why.endsWith('.')) why.chop(1);
  return why;
}

}  // namespace

QStringList plugin_folders() {
  QStringList folders;
  const QString env = qEnvironmentVariable("GRUWB_PLUGIN_PATH");
  for (const QString& folder : env.split(':', Qt::SkipEmptyParts)) folders << folder;
  const QString user = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
  if (!user.isEmpty()) folders << user + "/plugins";
  folders << QStringLiteral(GRUWB_INSTALL_PREFIX "/lib/gru-workbench/plugins");
  // The binary's own prefix, for a tree installed elsewhere (DESTDIR, a relocated package).
  const QString binary_dir = program_folder();
  if (!binary_dir.isEmpty())
    folders << QDir::cleanPath(binary_dir + "/../lib/gru-workbench/plugins");
  if (run_from_build_tree()) folders << QStringLiteral(GRUWB_BUILD_PLUGIN_DIR);
  folders.removeDuplicates();
  return folders;
}

void PluginManager::loadFolders(const QStringList& folders) {
  for (const QString& folder : folders) {
    const QDir dir(folder);
    if (!dir.exists()) continue;
    for (const QFileInfo& file : dir.entryInfoList(QDir::Files, QDir::Name)) {
      if (QLibrary::isLibrary(file.fileName())) loadFile(file.absoluteFilePath());
    }
  }
}

const PluginRecord& PluginManager::loadFile(const QString& path) {
  records_.push_back(PluginRecord());
  PluginRecord& record = records_.back();
  record.path = path;
  record.name = file_name(path);
  QPluginLoader loader;
  const QJsonObject meta = quietly([&] {
    loader.setFileName(path);
    return loader.metaData();
  });
  if (meta.isEmpty()) {
    record.problem = path + ": cannot read plugin metadata: " + metadata_problem(loader, path);
    return record;
  }
  const QString iid = meta.value("IID").toString();
  const QJsonObject data = meta.value("MetaData").toObject();
  if (!data.value("name").toString().isEmpty()) record.name = data.value("name").toString();
  if (!iid.startsWith(kIidPrefix)) {
    record.problem = path + ": not a GRU Workbench plugin (IID '" + iid + "', expected '" +
                     GRUWB_PLUGIN_IID + "')";
    return record;
  }
  record.sdk = data.value("sdk").toInt(0);
  if (record.sdk == 0) {
    record.problem = "plugin " + record.name + " (" + path +
                     "): its metadata names no SDK version (\"sdk\": " +
                     QString::number(GRUWB_PLUGIN_SDK_VERSION) + ")";
    return record;
  }
  if (record.sdk != GRUWB_PLUGIN_SDK_VERSION || iid != GRUWB_PLUGIN_IID) {
    record.problem =
        QString("plugin %1 built for SDK %2; this %3 has SDK %4 (%5)")
            .arg(record.name)
            .arg(record.sdk != GRUWB_PLUGIN_SDK_VERSION ? record.sdk : iid.mid(17).toInt())
            .arg(program_)
            .arg(GRUWB_PLUGIN_SDK_VERSION)
            .arg(path);
    return record;
  }
  QObject* instance = loader.instance();
  if (!instance) {
    record.problem = path + ": cannot load: " + loader.errorString();
    return record;
  }
  auto* plugin = qobject_cast<sdk::Plugin*>(instance);
  if (!plugin) {
    record.problem = path + ": does not implement gruwb::sdk::Plugin";
    loader.unload();
    return record;
  }
  record.name = plugin->name();
  record.version = plugin->version();
  record.description = plugin->description();
  for (const PluginRecord& other : records_) {
    if (&other != &record && other.loaded && other.name == record.name) {
      record.problem =
          "plugin " + record.name + " (" + path + "): skipped, already loaded from " + other.path;
      return record;  // the library stays mapped (the first copy may share it); nothing registered
    }
  }
  record.loaded = true;
  record.instance = instance;
  registerCapabilities(&record);
  if (restored_.contains(record.name))
    plugin->restoreState(restored_.value(record.name).toObject());
  return record;
}

void PluginManager::registerCapabilities(PluginRecord* record) {
  const QString who = "plugin " + record->name + ": ";
  if (auto* cells = qobject_cast<sdk::CellPlugin*>(record->instance)) {
    for (const sdk::PluginCell& cell : cells->cells()) {
      if (!cell.descriptor) {
        record->warnings << who + "a cell without a descriptor";
        continue;
      }
      const QString name = QString::fromUtf8(cell.descriptor->name ? cell.descriptor->name : "");
      if (cell.kernel) {
        const KernelRegistration* present =
            default_op_resolver().find(cell.kernel->op_code, cell.kernel->custom_code);
        if (present && present != cell.kernel) {
          record->warnings << who + "cell " + name + " refused: op " + cell.op_name +
                                  " already has another kernel";
          continue;
        }
        if (!present && !add_default_op(*cell.kernel)) {
          record->warnings << who + "cell " + name + " refused: no room for op " + cell.op_name +
                                  " in the op table (" + QString::number(kMaxAddedOps) +
                                  " plugin ops at most)";
          continue;
        }
      }
      std::string error;
      if (!tools::register_cell(cell.descriptor, &error)) {
        record->warnings << who + QString::fromStdString(error);
        continue;
      }
      record->cells << name + " (op " + cell.op_name + ")";
    }
  }
  if (auto* reader = qobject_cast<sdk::DatasetReaderPlugin*>(record->instance)) {
    DatasetReader entry;
    entry.name = record->name.toStdString() + " plugin";
    for (const QString& extension : reader->extensions()) {
      entry.extensions.push_back(extension.toLower().toStdString());
    }
    entry.load = [reader](const std::string& path, Dataset* out, std::string* error) {
      return reader->load(path, out, error);
    };
    if (add_dataset_reader(entry)) {
      record->dataset_formats = reader->extensions();
    } else {
      record->warnings << who + "dataset formats " + reader->extensions().join(", ") +
                              " refused: an ending is empty, lacks its dot or is taken";
    }
  }
  if (auto* transport = qobject_cast<sdk::TransportPlugin*>(record->instance)) {
    serial::TransportScheme scheme;
    scheme.scheme = transport->scheme().toStdString();
    scheme.description = scheme.scheme + " transport (" + record->name.toStdString() + " plugin)";
    scheme.open = [transport](const std::string& address, std::string* error) {
      return transport->open(address, error);
    };
    if (serial::add_transport_scheme(scheme)) {
      record->transports << transport->scheme();
    } else {
      record->warnings << who + "transport '" + transport->scheme() +
                              "' refused: the scheme is taken or not [a-z0-9+.-]+";
    }
  }
}

QStringList PluginManager::problems() const {
  QStringList lines;
  for (const PluginRecord& record : records_) {
    if (!record.loaded) lines << record.problem;
    lines << record.warnings;
  }
  return lines;
}

QJsonObject PluginManager::saveState() const {
  QJsonObject state = restored_;
  for (const PluginRecord& record : records_) {
    if (!record.loaded) continue;
    state[record.name] = qobject_cast<sdk::Plugin*>(record.instance)->saveState();
  }
  return state;
}

void PluginManager::restoreState(const QJsonObject& state) {
  restored_ = state;
  for (const PluginRecord& record : records_) {
    // A plugin the state does not name gets {}: its defaults.
    if (record.loaded) {
      qobject_cast<sdk::Plugin*>(record.instance)
          ->restoreState(state.value(record.name).toObject());
    }
  }
}

PluginManager& plugin_manager() {
  static PluginManager manager;
  return manager;
}

QStringList load_plugins(const QString& program) {
  static bool loaded = false;
  PluginManager& manager = plugin_manager();
  if (!loaded) {
    loaded = true;
    manager = PluginManager(program);
    manager.loadFolders(plugin_folders());
  }
  return manager.problems();
}

QJsonObject plugins_json(const PluginManager& manager, const QStringList& folders) {
  QJsonArray plugins;
  for (const PluginRecord& r : manager.records()) {
    QJsonObject p;
    p["name"] = r.name;
    p["path"] = r.path;
    p["loaded"] = r.loaded;
    p["sdk"] = r.sdk;
    if (r.loaded) {
      p["version"] = r.version;
      p["description"] = r.description;
      p["cells"] = QJsonArray::fromStringList(r.cells);
      p["dataset_formats"] = QJsonArray::fromStringList(r.dataset_formats);
      p["transports"] = QJsonArray::fromStringList(r.transports);
      p["warnings"] = QJsonArray::fromStringList(r.warnings);
    } else {
      p["problem"] = r.problem;
    }
    plugins.append(p);
  }
  QJsonObject out;
  out["sdk"] = GRUWB_PLUGIN_SDK_VERSION;
  out["folders"] = QJsonArray::fromStringList(folders);
  out["plugins"] = plugins;
  return out;
}

std::string plugins_text(const PluginManager& manager, const QStringList& folders) {
  QString text =
      QString("Plugin SDK %1. Folders searched, in order:\n").arg(GRUWB_PLUGIN_SDK_VERSION);
  for (const QString& folder : folders) {
    text += "  " + folder + (QDir(folder).exists() ? "" : "  (absent)") + "\n";
  }
  int loaded = 0;
  for (const PluginRecord& r : manager.records()) loaded += r.loaded ? 1 : 0;
  text += QString("\n%1 loaded, %2 refused\n")
              .arg(loaded)
              .arg(static_cast<int>(manager.records().size()) - loaded);
  for (const PluginRecord& r : manager.records()) {
    text += "\n";
    if (!r.loaded) {
      text += r.name + "  REFUSED\n  " + r.problem + "\n";
      continue;
    }
    text += r.name + " " + r.version + " (SDK " + QString::number(r.sdk) + ")  " + r.description +
            "\n  path: " + r.path + "\n";
    if (!r.cells.isEmpty()) text += "  cells: " + r.cells.join(", ") + "\n";
    if (!r.dataset_formats.isEmpty()) {
      text += "  dataset formats: " + r.dataset_formats.join(", ") + "\n";
    }
    if (!r.transports.isEmpty()) {
      QStringList urls;
      for (const QString& t : r.transports) urls << t + "://";
      text += "  transports: " + urls.join(", ") + "\n";
    }
    for (const QString& w : r.warnings) text += "  warning: " + w + "\n";
  }
  return text.toStdString();
}

}  // namespace gruwb::app
