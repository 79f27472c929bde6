// gruwb fuse IN -o OUT [--json] [--tolerance X] [--builtin-only] [--stateful]

#include "app/cli/command.h"
#include "app/core/fuse.h"
#include "app/core/inspect.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> spec = {
      {"-o", true},          {"--output", true},        {"--json", false},
      {"--tolerance", true}, {"--builtin-only", false}, {"--stateful", false}};
  if (!parse_args(kFuseCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.size() != 1) {
    return usage_error(parsed.positional.empty() ? "fuse: missing IN" : "fuse: one IN expected",
                       &kFuseCommand);
  }
  app::FuseRequest request;
  request.input_path = parsed.positional[0];
  request.output_path = parsed.value("-o", parsed.value("--output"));
  if (request.output_path.empty()) return usage_error("fuse: missing -o OUT", &kFuseCommand);
  request.json = parsed.has("--json");
  request.builtin_only = parsed.has("--builtin-only");
  request.stateful = parsed.has("--stateful");
  std::string message;
  if (!parsed.number("--tolerance", 0, 1, &request.tolerance, &message)) {
    return usage_error(message, &kFuseCommand);
  }
  std::string out, err;
  return finish(app::run_fuse(request, &out, &err), out, err);
}

}  // namespace

const Command kFuseCommand = {
    "fuse", "Fuse WHILE-loop / unrolled recurrent cells into one op each",
    "Usage: gruwb fuse IN -o OUT [--json] [--tolerance X] [--builtin-only] [--stateful]\n"
    "\n"
    "Finds the recurrent cells TensorFlow's converter spells out op by op (a WHILE\n"
    "loop with cond/body subgraphs, or T unrolled copies) by the roles of their\n"
    "values: the sequence GATHERed by the loop counter, the state going in and\n"
    "out, the FCs on x and on h, the gate nonlinearities. Each is rewritten into\n"
    "one fused op, tried against every registered cell type:\n"
    "{cell_table}"
    "Per-gate FCs become the op's two products (one on x, one on h); unused\n"
    "subgraphs, tensors, buffers and op codes are dropped and signature defs fixed.\n"
    "A rewrite is kept only when the new model computes the same outputs as the\n"
    "input on random inputs (max |diff| <= tolerance); otherwise that cell stays\n"
    "as it was and the report says why. WHILE loops that are not RNNs are left\n"
    "alone and reported with the reason. OUT is always written (atomically).\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT   The model to write; .circle or .tflite picks the format\n"
    "  --json             Print the report as JSON\n"
    "  --tolerance X      Largest accepted output difference (default 1e-5)\n"
    "  --builtin-only     Also rewrite the Flex TensorList ops no fused cell absorbed\n"
    "                     (Reserve/FromTensor/SetItem/GetItem/Stack) as builtin ops,\n"
    "                     so stock TFLite and TFLite Micro run OUT without the Flex\n"
    "                     delegate; list sizes and a dynamic batch are fixed at the\n"
    "                     sizes the engine plans (batch 1). Kept only when OUT\n"
    "                     computes what IN computes\n"
    "  --stateful         Streaming models whose LSTM/RNN state comes in as a model\n"
    "                     input and goes out as an output: the fused op keeps the\n"
    "                     state in its variable tensors from one invoke to the next\n"
    "                     (as TensorFlow Lite Micro's streaming models do), the state\n"
    "                     input is dropped and the state output reads the variables.\n"
    "                     Kept when several invokes of OUT equal IN fed back its own\n"
    "                     state output, from a zero state\n"
    "  -h, --help         Show this help\n"
    "\n"
    "The report lists every cell (kind, units, steps, where, fused op or why not)\n"
    "and the sizes before and after: bytes, data bytes, subgraphs, ops, tensors\n"
    "and planned arena bytes.\n"
    "\n"
    "Exit status: 0 when OUT was written (also if nothing could be fused); 2 for\n"
    "bad options or an unreadable model (one line 'gruwb: ...'); 1 when OUT\n"
    "cannot be written.\n"
    "\n"
    "Example:\n"
    "  gruwb fuse gesture_gru_while.tflite -o gesture_gru_fused.tflite\n",
    run};

}  // namespace gruwb::cli
