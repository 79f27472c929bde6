// gruwb run MODEL --input X.npy [--input Y.npy ...] [--output-dir D] [--json] [--arena]
//   [--as-written]

#include "app/cli/command.h"
#include "app/core/inspect.h"
#include "app/core/run.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> spec = {{"--input", true},
                                        {"--output-dir", true},
                                        {"--json", false},
                                        {"--arena", false},
                                        {"--as-written", false}};
  if (!parse_args(kRunCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.size() != 1) {
    return usage_error(parsed.positional.empty() ? "run: missing MODEL" : "run: one MODEL expected",
                       &kRunCommand);
  }
  app::RunRequest request;
  request.model_path = parsed.positional[0];
  if (parsed.has("--input")) request.input_paths = parsed.options.at("--input");
  request.output_dir = parsed.value("--output-dir");
  request.json = parsed.has("--json");
  request.arena_only = parsed.has("--arena");
  request.as_written = parsed.has("--as-written");
  if (request.input_paths.empty() && !request.arena_only) {
    return usage_error("run: give an --input .npy per model input (or --arena alone)",
                       &kRunCommand);
  }
  std::string out, err;
  int code = app::run_model(request, &out, &err);
  return finish(code, out, err);
}

}  // namespace

const Command kRunCommand = {
    "run", "Run a model once on NumPy inputs with the portable engine",
    "Usage: gruwb run MODEL --input X.npy [--input Y.npy ...] [--output-dir DIR] [--json]\n"
    "                [--as-written]\n"
    "       gruwb run MODEL --arena\n"
    "\n"
    "Runs one inference of a .tflite/.circle model with GRU Workbench's engine (the\n"
    "same code that runs in the board firmware), in an arena of exactly the planned\n"
    "size. Inputs are NumPy .npy files (float32 or int32, C order), one per model\n"
    "input in order; their shapes and types must match the model's.\n"
    "\n"
    "Options:\n"
    "  --input FILE       A .npy array for the next model input (repeat per input)\n"
    "  --output-dir DIR   Also write every output as DIR/output_<k>_<name>.npy\n"
    "  --json             Print outputs and arena figures as JSON\n"
    "  --arena            Print the planned arena bytes (tables, persistent,\n"
    "                     activations); with no --input, only that\n"
    "  --as-written       Run a WHILE-loop or unrolled RNN model as written. By\n"
    "                     default its fused form runs (`gruwb fuse`: one op per\n"
    "                     cell) when its outputs agree with the file's on a check\n"
    "                     input (relative 1e-5); the first line says so\n"
    "  -h, --help         Show this help\n"
    "\n"
    "Exit status: 0 on success; 2 for an unusable model or input (one line\n"
    "'gruwb: FILE: problem' naming the input and both shapes on a mismatch);\n"
    "1 when the engine fails while running.\n"
    "\n"
    "Example:\n"
    "  gruwb run gesture_gru.tflite --input window.npy --arena\n",
    run};

}  // namespace gruwb::cli
