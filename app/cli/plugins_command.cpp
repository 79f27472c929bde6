// gruwb plugins [--json]

#include <QJsonDocument>

#include "app/cli/command.h"
#include "app/core/inspect.h"
#include "app/core/plugin_manager.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  if (!parse_args(kPluginsCommand, args, {{"--json", false}}, &parsed, &exit_code)) {
    return exit_code;
  }
  if (!parsed.positional.empty()) {
    return usage_error("plugins: unexpected argument '" + parsed.positional[0] + "'",
                       &kPluginsCommand);
  }
  // main() loaded them before any command ran; this lists what it found.
  const QStringList folders = app::plugin_folders();
  const app::PluginManager& manager = app::plugin_manager();
  const std::string out =
      parsed.has("--json")
          ? QJsonDocument(app::plugins_json(manager, folders)).toJson().toStdString()
          : app::plugins_text(manager, folders);
  return finish(app::kExitOk, out, "");
}

}  // namespace

const Command kPluginsCommand = {
    "plugins", "List the plugins found: cells, dataset formats, board transports",
    "Usage: gruwb plugins [--json]\n"
    "\n"
    "Lists the folders searched for plugins, in order, and every plugin found there:\n"
    "its name, version, SDK version, file, and what it provides (cell types with their\n"
    "ops, dataset file endings, board transports as scheme://), or why it was refused\n"
    "(built for another SDK version, not a plugin, cannot load). Folders:\n"
    "  1. GRUWB_PLUGIN_PATH (folders separated by ':')\n"
    "  2. the user's: ~/.local/share/GRU Workbench/gru-workbench/plugins\n"
    "  3. the system's: <prefix>/lib/gru-workbench/plugins, and\n"
    "     <folder of gruwb>/../lib/gru-workbench/plugins\n"
    "  4. a gruwb run from its build tree: the build's lib/gru-workbench/plugins\n"
    "A plugin whose name is already loaded is skipped (the first found wins). Every\n"
    "command loads the plugins first and prints one line per refused plugin.\n"
    "\n"
    "Options:\n"
    "  --json      One JSON object: sdk, folders, plugins[] (name, path, loaded, sdk,\n"
    "              version, description, cells, dataset_formats, transports,\n"
    "              warnings; or problem)\n"
    "  -h, --help  Show this help\n"
    "\n"
    "Example:\n"
    "  GRUWB_PLUGIN_PATH=~/my-plugins gruwb plugins\n",
    run};

}  // namespace gruwb::cli
