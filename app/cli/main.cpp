// gruwb: GRU Workbench on the command line.
//
// Plain argv parsing rather than QCommandLineParser: the exit codes are part of
// the contract (0 ok, 2 for bad input or usage) and QCommandLineParser exits
// with 1 on unknown options. Errors go to stderr as ONE line "gruwb: ...".

#include <QCoreApplication>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "app/core/inspect.h"
#include "app/core/plugin_manager.h"

namespace gruwb::cli {

const Command* const kCommands[] = {
    &kInspectCommand, &kRunCommand,    &kBenchCommand,      &kBuildCommand,
    &kGradCommand,    &kTrainCommand,  &kFuseCommand,       &kQuantizeCommand,
    &kCorpusCommand,  &kExportCommand, &kExperimentCommand, &kSweepCommand,
    &kDataCommand,    &kBoardCommand,  &kBoardSimCommand,   &kPluginsCommand};

const Command* find_command(const std::string& name) {
  for (const Command* command : kCommands) {
    if (name == command->name) return command;
  }
  return nullptr;
}

void print_usage(FILE* stream) {
  std::fprintf(stream,
               "Usage: gruwb COMMAND [OPTIONS] [ARGS]\n"
               "       gruwb help [COMMAND]\n"
               "\n"
               "GRU Workbench on the command line: inspect, run, train and deploy small\n"
               "recurrent networks (GRU/LSTM) for microcontrollers.\n"
               "\n"
               "Commands:\n");
  for (const Command* command : kCommands) {
    std::fprintf(stream, "  %-10s %s\n", command->name, command->summary);
  }
  std::fprintf(stream,
               "\n"
               "Options:\n"
               "  -h, --help     Show this help ('gruwb COMMAND --help' for a command)\n"
               "  --version      Show the version\n");
}

}  // namespace gruwb::cli

int main(int argc, char** argv) {
  using namespace gruwb::cli;
  using gruwb::app::kExitOk;
  // Plugins first, so every command (and its help) sees their cells, formats and
  // transports; the user's plugin folder is the GUI's (same application names).
  QCoreApplication::setOrganizationName("GRU Workbench");
  QCoreApplication::setApplicationName("gru-workbench");
  for (const QString& problem : gruwb::app::load_plugins("gruwb")) {
    std::fprintf(stderr, "gruwb: %s\n", qPrintable(problem));
  }
  if (argc < 2) return usage_error("missing COMMAND", nullptr);
  const std::string first = argv[1];
  const std::vector<std::string> rest(argv + 2, argv + argc);

  if (first == "-h" || first == "--help") {
    print_usage(stdout);
    return kExitOk;
  }
  if (first == "--version") {
    std::printf("gruwb %s\n", GRUWB_VERSION);
    return kExitOk;
  }
  if (first == "help") {
    if (rest.empty()) {
      print_usage(stdout);
      return kExitOk;
    }
    const Command* command = find_command(rest[0]);
    if (!command) return usage_error("help: unknown command '" + rest[0] + "'", nullptr);
    std::fputs(help_text(*command).c_str(), stdout);
    return kExitOk;
  }
  if (first.size() > 1 && first[0] == '-') {
    return usage_error("unknown option '" + first + "'", nullptr);
  }
  const Command* command = find_command(first);
  if (!command) return usage_error("unknown command '" + first + "'", nullptr);
  // Sizes are checked against the memory budget (engine/tools/memory_budget.h) before anything
  // large is allocated; a machine short of memory still gets one line, not an abort.
  try {
    return command->run(rest);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gruwb: %s: out of memory\n", command->name);
  } catch (const std::length_error& e) {
    std::fprintf(stderr, "gruwb: %s: out of memory (%s)\n", command->name, e.what());
  }
  return gruwb::app::kExitBadInput;
}
