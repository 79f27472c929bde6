// gruwb: GRU Workbench on the command line.
//
//   gruwb inspect MODEL [--json]
//
// Plain argv parsing rather than QCommandLineParser: the exit codes are part of
// the contract (0 ok, 2 for bad input or usage) and QCommandLineParser exits
// with 1 on unknown options. Errors go to stderr as ONE line "gruwb: ...".

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/core/inspect.h"

namespace {

using gruwb::app::kExitBadInput;
using gruwb::app::kExitFailure;
using gruwb::app::kExitOk;

struct Command {
  const char* name;
  const char* summary;
  const char* help;  // full help: usage line, description, options
  int (*run)(const std::vector<std::string>& args);
};

int run_inspect_command(const std::vector<std::string>& args);

const Command kCommands[] = {
    {"inspect", "Print a model's analyzer report: sizes, subgraphs, ops, tensors, MACs",
     "Usage: gruwb inspect MODEL [--json]\n"
     "\n"
     "Prints the analyzer report of a .tflite (TFL3) or .circle (CIR0) model:\n"
     "the figures of TensorFlow Lite's Analyzer (model size, non-data bytes, data\n"
     "bytes, data bytes per subgraph when there are several, zero-value buffers),\n"
     "each subgraph as 'Op#k NAME(T#..) -> [T#..]' with decoded builtin options and\n"
     "MACs, the tensors with shapes and types, the parameter count, and which ops\n"
     "the GRU Workbench engine cannot run yet.\n"
     "\n"
     "Options:\n"
     "  --json       Print the report as JSON (schema: docs/inspect-json.md)\n"
     "  -h, --help   Show this help\n"
     "\n"
     "Exit status: 0 on success; 2 when MODEL is missing, unreadable, corrupt or\n"
     "invalid (one line 'gruwb: MODEL: problem' on stderr) or the usage is wrong.\n"
     "\n"
     "Example:\n"
     "  gruwb inspect tflm_hello_world_float.tflite\n",
     run_inspect_command},
};

const Command* find_command(const std::string& name) {
  for (const Command& command : kCommands) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

void print_usage(FILE* stream) {
  std::fprintf(stream,
               "Usage: gruwb COMMAND [OPTIONS] [ARGS]\n"
               "       gruwb help [COMMAND]\n"
               "\n"
               "GRU Workbench on the command line: inspect, train and deploy small\n"
               "recurrent networks (GRU/LSTM) for microcontrollers.\n"
               "\n"
               "Commands:\n");
  for (const Command& command : kCommands) {
    std::fprintf(stream, "  %-10s %s\n", command.name, command.summary);
  }
  std::fprintf(stream,
               "\n"
               "Options:\n"
               "  -h, --help     Show this help ('gruwb COMMAND --help' for a command)\n"
               "  --version      Show the version\n");
}

// Usage errors: one line naming the problem, then the usage, exit 2.
int usage_error(const std::string& message, const Command* command) {
  std::fprintf(stderr, "gruwb: %s\n\n", message.c_str());
  if (command) {
    std::fputs(command->help, stderr);
  } else {
    print_usage(stderr);
  }
  return kExitBadInput;
}

bool write_all(const std::string& text, FILE* stream) {
  return std::fwrite(text.data(), 1, text.size(), stream) == text.size() &&
         std::fflush(stream) == 0;
}

int run_inspect_command(const std::vector<std::string>& args) {
  const Command* self = find_command("inspect");
  bool json = false;
  bool options_done = false;
  std::vector<std::string> models;
  for (const std::string& arg : args) {
    if (!options_done && arg == "--") {
      options_done = true;
    } else if (!options_done && (arg == "-h" || arg == "--help")) {
      std::fputs(self->help, stdout);
      return kExitOk;
    } else if (!options_done && arg == "--json") {
      json = true;
    } else if (!options_done && arg.size() > 1 && arg[0] == '-') {
      return usage_error("inspect: unknown option '" + arg + "'", self);
    } else {
      models.push_back(arg);
    }
  }
  if (models.empty()) return usage_error("inspect: missing MODEL", self);
  if (models.size() > 1) {
    return usage_error("inspect: one MODEL expected, got " + std::to_string(models.size()), self);
  }

  std::string out, err;
  const int code = gruwb::app::run_inspect(models[0], json, &out, &err);
  if (code != kExitOk) {
    std::fprintf(stderr, "gruwb: %s\n", err.c_str());
    return code;
  }
  if (!write_all(out, stdout)) {
    std::fprintf(stderr, "gruwb: cannot write to standard output: %s\n", std::strerror(errno));
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error("missing COMMAND", nullptr);
  const std::string first = argv[1];
  const std::vector<std::string> rest(argv + 2, argv + argc);

  if (first == "-h" || first == "--help") {
    print_usage(stdout);
    return kExitOk;
  }
  if (first == "--version") {
    std::printf("gruwb %s\n", PROJECT_VERSION);
    return kExitOk;
  }
  if (first == "help") {
    if (rest.empty()) {
      print_usage(stdout);
      return kExitOk;
    }
    const Command* command = find_command(rest[0]);
    if (!command) return usage_error("help: unknown command '" + rest[0] + "'", nullptr);
    std::fputs(command->help, stdout);
    return kExitOk;
  }
  if (first.size() > 1 && first[0] == '-') {
    return usage_error("unknown option '" + first + "'", nullptr);
  }
  const Command* command = find_command(first);
  if (!command) return usage_error("unknown command '" + first + "'", nullptr);
  return command->run(rest);
}
