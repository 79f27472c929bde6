// gruwb export MODEL --to c-array|tflite|circle|npy|firmware-lib [-o OUT] [--name NAME]
//              [--training SCOPE [--lr X] [--batch N]] [--json]

#include "app/cli/command.h"
#include "app/core/export.h"
#include "app/core/inspect.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> spec = {{"--to", true},    {"-o", true},         {"--output", true},
                                        {"--name", true},  {"--training", true}, {"--lr", true},
                                        {"--batch", true}, {"--json", false}};
  if (!parse_args(kExportCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.size() != 1) {
    return usage_error(
        parsed.positional.empty() ? "export: missing MODEL" : "export: one MODEL expected",
        &kExportCommand);
  }
  app::ExportRequest request;
  request.model_path = parsed.positional[0];
  if (!parsed.has("--to")) return usage_error("export: missing --to", &kExportCommand);
  if (!app::parse_export_target(parsed.value("--to"), &request.target)) {
    return usage_error("export: --to '" + parsed.value("--to") +
                           "' (expected c-array, tflite, circle, npy or firmware-lib)",
                       &kExportCommand);
  }
  request.output = parsed.value("-o", parsed.value("--output"));
  request.array_name = parsed.value("--name");
  if (!request.array_name.empty() && request.target != app::ExportTarget::kCArray) {
    return usage_error("export: --name only applies to --to c-array", &kExportCommand);
  }
  const bool firmware_lib = request.target == app::ExportTarget::kFirmwareLib;
  for (const char* option : {"--training", "--lr", "--batch"}) {
    if (parsed.has(option) && !firmware_lib) {
      return usage_error(std::string("export: ") + option + " only applies to --to firmware-lib",
                         &kExportCommand);
    }
  }
  if ((parsed.has("--lr") || parsed.has("--batch")) && !parsed.has("--training")) {
    return usage_error("export: --lr and --batch need --training", &kExportCommand);
  }
  request.training_scope = parsed.value("--training");
  if (parsed.has("--training") && request.training_scope.empty()) {
    return usage_error("export: --training needs a scope (fc, all or last:N)", &kExportCommand);
  }
  double lr = request.training.learning_rate;
  std::string message;
  if (!parsed.number("--lr", 1e-12, 1e6, &lr, &message) ||
      !parsed.integer("--batch", 1, 1000000, &request.training.batch_size, &message)) {
    return usage_error(message, &kExportCommand);
  }
  request.training.learning_rate = static_cast<float>(lr);
  request.json = parsed.has("--json");
  std::string out, err;
  return finish(app::run_export(request, &out, &err), out, err);
}

}  // namespace

const Command kExportCommand = {
    "export",
    "Export a model as a C array, .tflite, .circle, weight .npy files or a firmware library",
    "Usage: gruwb export MODEL --to c-array|tflite|circle|npy|firmware-lib [-o OUT]\n"
    "                    [--name NAME] [--training SCOPE [--lr X] [--batch N]] [--json]\n"
    "\n"
    "  c-array  a header and a source file in xxd -i style for firmware:\n"
    "           alignas(16) const unsigned char NAME[] = {...}; and NAME_len.\n"
    "           OUT is the source (.c/.cc/.cpp, the header gets .h beside it) or a\n"
    "           stem; NAME defaults to xxd's name for the model file\n"
    "           (gesture.tflite -> gesture_tflite). Compiles as C11 and C++11.\n"
    "  tflite   the model as a .tflite file. Circle GRU ops become the GRUWB_GRU\n"
    "           custom op (docs/fused-gru-op.md); other Circle-only ops or types\n"
    "           are an error naming them\n"
    "  circle   the model as a .circle file (GRUWB_GRU stays the custom op)\n"
    "  npy      every weight tensor as OUT/<tensor name>.npy (names sanitised)\n"
    "           and OUT/manifest.json (tensor, subgraph, shape, dtype,\n"
    "           quantization); OUT defaults to <model>_weights\n"
    "  firmware-lib  the folder OUT (default <model>_lib) that builds the model\n"
    "           into firmware: the engine sources its ops need (the op table\n"
    "           `gruwb inspect` prints), the model as an aligned array, a C API\n"
    "           (gruwb_model.h: init with your arena, arena size, inputs,\n"
    "           outputs, invoke), a Makefile for arm-none-eabi-gcc and a\n"
    "           CMakeLists.txt for the boards of docs/firmware.md or this\n"
    "           computer, and an example that checks one inference against this\n"
    "           host's (make run: under QEMU). Inference only unless --training\n"
    "           adds gruwb_model_train_step (Adam, cross entropy; the config is\n"
    "           gruwb_model_config.h). Runs cmake once (engine/op_table.cmake)\n"
    "\n"
    "Options:\n"
    "  --to T             c-array, tflite, circle, npy or firmware-lib\n"
    "  -o, --output OUT   Where to write (default: from the model's name, here)\n"
    "  --name NAME        c-array: the array's C name\n"
    "  --training SCOPE   firmware-lib: also train on the board: fc (the last\n"
    "                     Dense layer), all, or last:N (the last N layers)\n"
    "  --lr X, --batch N  firmware-lib training: learning rate (default 0.001)\n"
    "                     and samples per update (default 1)\n"
    "  --json             Print the list of written files as JSON\n"
    "  -h, --help         Show this help\n"
    "\n"
    "Files are written atomically. Exit status: 0 on success; 2 for bad options,\n"
    "an unreadable model or a model the target format cannot represent (one line\n"
    "'gruwb: ...'); 1 when a file cannot be written.\n"
    "\n"
    "Examples:\n"
    "  gruwb export gesture_gru_fused.tflite --to c-array -o firmware/model_data.cc\n"
    "  gruwb export gru.circle --to tflite -o gru.tflite\n"
    "  gruwb export gesture_gru_fused.tflite --to firmware-lib -o gesture_lib\n"
    "  gruwb export gesture_gru_fused.tflite --to firmware-lib --training fc -o lib\n",
    run};

}  // namespace gruwb::cli
