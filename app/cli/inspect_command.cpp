// gruwb inspect MODEL [--json] [--arena]

#include "app/cli/command.h"
#include "app/core/inspect.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  if (!parse_args(kInspectCommand, args, {{"--json", false}, {"--arena", false}}, &parsed,
                  &exit_code)) {
    return exit_code;
  }
  if (parsed.positional.empty()) return usage_error("inspect: missing MODEL", &kInspectCommand);
  if (parsed.positional.size() > 1) {
    return usage_error(
        "inspect: one MODEL expected, got " + std::to_string(parsed.positional.size()),
        &kInspectCommand);
  }
  std::string out, err;
  int code = app::run_inspect(parsed.positional[0], parsed.has("--json"), &out, &err,
                              parsed.has("--arena"));
  return finish(code, out, err);
}

}  // namespace

const Command kInspectCommand = {
    "inspect", "Print a model's analyzer report: sizes, subgraphs, ops, tensors, MACs",
    "Usage: gruwb inspect MODEL [--json] [--arena]\n"
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
    "  --arena      Add the RAM the engine's planner needs for inference and for\n"
    "               training (scope fc: the last Dense layer; all: every weight),\n"
    "               with their parts: the figures of the GUI's Size panel\n"
    "  -h, --help   Show this help\n"
    "\n"
    "Exit status: 0 on success; 2 when MODEL is missing, unreadable, corrupt or\n"
    "invalid (one line 'gruwb: MODEL: problem' on stderr) or the usage is wrong.\n"
    "\n"
    "Example:\n"
    "  gruwb inspect tflm_hello_world_float.tflite\n",
    run};

}  // namespace gruwb::cli
