// gruwb quantize MODEL --data DATASET -o OUT [--mode int8|int16x8|dynamic] [--samples N]
//                [--float-io | --integer-io] [--raw] [--length POLICY] [--per-tensor] [--json]

#include "app/cli/command.h"
#include "app/core/inspect.h"
#include "app/core/quantize.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> spec = {
      {"-o", true},        {"--output", true},      {"--data", true},        {"--mode", true},
      {"--samples", true}, {"--float-io", false},   {"--integer-io", false}, {"--raw", false},
      {"--length", true},  {"--per-tensor", false}, {"--json", false}};
  if (!parse_args(kQuantizeCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.size() != 1) {
    return usage_error(
        parsed.positional.empty() ? "quantize: missing MODEL" : "quantize: one MODEL expected",
        &kQuantizeCommand);
  }
  app::QuantizeRequest request;
  request.model_path = parsed.positional[0];
  request.output_path = parsed.value("-o", parsed.value("--output"));
  if (request.output_path.empty()) {
    return usage_error("quantize: missing -o OUT", &kQuantizeCommand);
  }
  request.data_path = parsed.value("--data");
  if (request.data_path.empty()) {
    return usage_error("quantize: missing --data DATASET", &kQuantizeCommand);
  }
  const std::string mode = parsed.value("--mode", "int8");
  if (!tools::parse_quantize_mode(mode, &request.options.quantize.mode)) {
    return usage_error("quantize: --mode '" + mode + "' must be int8, int16x8 or dynamic",
                       &kQuantizeCommand);
  }
  if (parsed.has("--float-io") && parsed.has("--integer-io")) {
    return usage_error("quantize: --float-io and --integer-io exclude each other",
                       &kQuantizeCommand);
  }
  request.options.quantize.integer_io = parsed.has("--integer-io");
  if (request.options.quantize.integer_io &&
      request.options.quantize.mode == tools::QuantizeMode::kDynamic) {
    return usage_error("quantize: --integer-io needs --mode int8 or int16x8", &kQuantizeCommand);
  }
  std::string message;
  if (!parsed.integer("--samples", 1, 1000000, &request.options.max_samples, &message)) {
    return usage_error(message, &kQuantizeCommand);
  }
  request.normalize = !parsed.has("--raw");
  request.options.quantize.per_channel = !parsed.has("--per-tensor");
  const std::string length = parsed.value("--length", "resample");
  if (!app::parse_length_policy(length, &request.length_policy)) {
    return usage_error("quantize: --length '" + length + "' must be exact, crop, pad or resample",
                       &kQuantizeCommand);
  }
  request.json = parsed.has("--json");
  std::string out, err;
  return finish(app::run_quantize(request, &out, &err), out, err);
}

}  // namespace

const Command kQuantizeCommand = {
    "quantize",
    "Post-training quantization (int8, int16x8 or dynamic range) with representative data",
    "Usage: gruwb quantize MODEL --data DATASET -o OUT [--mode int8|int16x8|dynamic]\n"
    "                      [--samples N] [--float-io | --integer-io] [--raw]\n"
    "                      [--length exact|crop|pad|resample] [--per-tensor] [--json]\n"
    "\n"
    "Quantizes a float model as TensorFlow Lite's converter does with a\n"
    "representative dataset. The engine runs MODEL on the samples and records\n"
    "min/max of every activation (inside WHILE bodies too) and the largest LSTM\n"
    "cell state; then, in int8 mode:\n"
    "  FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D  int8 weights, symmetric, one scale\n"
    "             per output channel; int32 biases at input scale x weight scale\n"
    "  UNIDIRECTIONAL_SEQUENCE_LSTM  TFLite's 8x8->16 form: per-tensor int8 weights,\n"
    "             int16 cell state at a power-of-two scale, the 5 intermediates\n"
    "  SOFTMAX, LOGISTIC (scale 1/256, zero point -128), TANH (1/128, 0)\n"
    "  ADD, SUB, MUL  their own output scale\n"
    "  data movement, pools, CONCATENATION, WHILE loop values: the input's scale\n"
    "Activations are asymmetric int8. Ops without an integer form stay float\n"
    "with DEQUANTIZE before and QUANTIZE after them. GRUWB_GRU becomes the\n"
    "integer GRU (int8 x and weights, int16 state); the Circle GRU stays float.\n"
    "int16x8: int16 activations (symmetric), int8 weights, int64 FC/conv biases;\n"
    "the GRU outputs its int16 state, the LSTM stays float. dynamic: int8\n"
    "weights (per channel for FC, per tensor for LSTM/RNN), float activations\n"
    "(hybrid kernels).\n"
    "\n"
    "Options:\n"
    "  --data DATASET     Representative inputs: a .npy (N, ...) of model inputs, or\n"
    "                     a dataset (docs/datasets.md): its training split brought\n"
    "                     to the model's T (--length) and normalised with its\n"
    "                     statistics\n"
    "  -o, --output OUT   The model to write; .circle or .tflite picks the format\n"
    "  --mode MODE        int8 (default), int16x8 or dynamic\n"
    "  --samples N        Representative samples, evenly spaced over the data\n"
    "                     (default 200)\n"
    "  --float-io         Float inputs and outputs with QUANTIZE / DEQUANTIZE at\n"
    "                     the edges (default, TFLite's inference_input_type float)\n"
    "  --integer-io       int8 (int16) model inputs and outputs\n"
    "  --raw              Do not normalise a dataset's values\n"
    "  --length POLICY    A dataset's series of another length than T: exact, crop,\n"
    "                     pad or resample (default resample)\n"
    "  --per-tensor       One weight scale per FC/conv weight tensor instead of one\n"
    "                     per output channel: older TFLite builds' hybrid (dynamic)\n"
    "                     FULLY_CONNECTED reads only the first scale\n"
    "  --json             Print the report as JSON\n"
    "  -h, --help         Show this help\n"
    "\n"
    "The report lists the quantized ops, the ops kept float and why, ops this\n"
    "engine cannot run integer yet (real TFLite can), weight bytes, model bytes\n"
    "and arena before and after, and the largest |float - quantized| output\n"
    "difference over the samples (on this engine, when it runs the result).\n"
    "\n"
    "Exit status: 0 when OUT was written; 2 for bad options, an unreadable model\n"
    "or dataset (one line 'gruwb: ...'); 1 when OUT cannot be written.\n"
    "\n"
    "Example:\n"
    "  gruwb quantize lstm_classifier.tflite --data BasicMotions -o lstm_int8.tflite\n",
    run};

}  // namespace gruwb::cli
