// gruwb build --timesteps T --features F --units H --classes C -o OUT [options]

#include <cctype>
#include <climits>
#include <cstdlib>

#include "app/cli/command.h"
#include "app/core/build.h"
#include "app/core/inspect.h"

namespace gruwb::cli {
namespace {

using tools::BuildSpec;

bool dense_option(const std::string& text, std::vector<int>* out, std::string* message) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    long long value = 0;
    if (!parse_integer(text.substr(start, end - start), 1, 100000, &value)) {
      *message = "build: --dense '" + text + "' must be sizes like 32 or 32,16";
      return false;
    }
    out->push_back(static_cast<int>(value));
    start = end + 1;
  }
  return true;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  if (text.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[text.size() - suffix.size() + i])) !=
        suffix[i]) {
      return false;
    }
  }
  return true;
}

// Named choices (--cell, --layout, ...): the parse function of the builder.
template <typename T>
bool choice_option(const ParsedArgs& parsed, const char* name,
                   bool (*parse)(const std::string&, T*), const char* choices, T* out,
                   std::string* message) {
  if (!parsed.has(name) || parse(parsed.value(name), out)) return true;
  *message =
      std::string("build: ") + name + " '" + parsed.value(name) + "' (expected " + choices + ")";
  return false;
}

bool parse_bool(const std::string& text, bool* out) {
  if (text == "true" || text == "false") return *out = text == "true", true;
  return false;
}

bool parse_format(const std::string& text, ModelFormat* out) {
  if (text == "tflite") return *out = ModelFormat::kTflite, true;
  if (text == "circle") return *out = ModelFormat::kCircle, true;
  return false;
}

// The format: --format if given (it must agree with a .tflite/.circle
// extension), else the extension's.
bool output_format(const ParsedArgs& parsed, const std::string& path, ModelFormat* out,
                   std::string* message) {
  *out = tools::format_for_path(path);
  if (!parsed.has("--format")) return true;
  if (!choice_option(parsed, "--format", parse_format, "tflite or circle", out, message)) {
    return false;
  }
  const bool clash = (*out == ModelFormat::kTflite && ends_with(path, ".circle")) ||
                     (*out == ModelFormat::kCircle && ends_with(path, ".tflite"));
  if (clash) *message = "build: --format " + parsed.value("--format") + " but OUT is " + path;
  return !clash;
}

bool fill_spec(const ParsedArgs& parsed, app::BuildRequest* r, std::string* message) {
  BuildSpec& s = r->spec;
  s.reset_after = true;
  if (!choice_option(parsed, "--cell", tools::parse_cell, tools::cell_names_text().c_str(), &s.cell,
                     message) ||
      !choice_option(parsed, "--layout", tools::parse_rnn_layout, "fused, while or unrolled",
                     &s.layout, message) ||
      !choice_option(parsed, "--gru-variant", tools::parse_gru_variant, "modern or legacy",
                     &s.gru_variant, message) ||
      !choice_option(parsed, "--bias-init", tools::parse_bias_init, "keras, zeros or uniform",
                     &s.bias_init, message)) {
    return false;
  }
  // The legacy variant only exists as reset_after=false.
  if (s.gru_variant == tools::GruVariant::kLegacy) s.reset_after = false;
  if (!choice_option(parsed, "--reset-after", parse_bool, "true or false", &s.reset_after,
                     message) ||
      !parsed.integer("--timesteps", 1, 100000, &s.timesteps, message) ||
      !parsed.integer("--features", 1, 100000, &s.features, message) ||
      !parsed.integer("--units", 1, 100000, &s.units, message) ||
      !parsed.integer("--classes", 1, 100000, &s.classes, message) ||
      (parsed.has("--dense") && !dense_option(parsed.value("--dense"), &s.dense, message))) {
    return false;
  }
  s.seed = 1;
  if (!parsed.integer("--seed", 0, LLONG_MAX, &s.seed, message)) return false;
  s.unrolled_shared_weights = parsed.has("--unrolled-shared-weights");
  return output_format(parsed, r->output_path, &s.format, message);
}

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> spec = {{"--cell", true},
                                        {"--layout", true},
                                        {"--timesteps", true},
                                        {"--features", true},
                                        {"--units", true},
                                        {"--classes", true},
                                        {"--dense", true},
                                        {"--normalize", true},
                                        {"--normalize-from", true},
                                        {"--reset-after", true},
                                        {"--gru-variant", true},
                                        {"--bias-init", true},
                                        {"--seed", true},
                                        {"--format", true},
                                        {"-o", true},
                                        {"--output", true},
                                        {"--compare-layouts", false},
                                        {"--json", false},
                                        {"--unrolled-shared-weights", false}};
  if (!parse_args(kBuildCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (!parsed.positional.empty()) {
    return usage_error("build: unexpected argument '" + parsed.positional[0] + "'", &kBuildCommand);
  }
  for (const char* required : {"--timesteps", "--features", "--units", "--classes"}) {
    if (!parsed.has(required)) {
      return usage_error(std::string("build: missing ") + required, &kBuildCommand);
    }
  }
  app::BuildRequest request;
  request.output_path = parsed.value("-o", parsed.value("--output"));
  if (request.output_path.empty()) return usage_error("build: missing -o OUT", &kBuildCommand);
  std::string message;
  if (!fill_spec(parsed, &request, &message)) return usage_error(message, &kBuildCommand);
  if (parsed.has("--normalize") && parsed.has("--normalize-from")) {
    return usage_error("build: give --normalize or --normalize-from, not both", &kBuildCommand);
  }
  std::string out, err;
  if (parsed.has("--normalize") &&
      !app::parse_normalization(parsed.value("--normalize"), &request.spec.mean,
                                &request.spec.variance, &err)) {
    return finish(app::kExitBadInput, out, err);
  }
  request.normalize_from = parsed.value("--normalize-from");
  request.compare_layouts = parsed.has("--compare-layouts");
  request.json = parsed.has("--json");
  return finish(app::run_build(request, &out, &err), out, err);
}

}  // namespace

const Command kBuildCommand = {
    "build", "Build a fresh recurrent classifier (fused, WHILE or unrolled)",
    "Usage: gruwb build --timesteps T --features F --units H --classes C -o OUT\n"
    "                   [--cell {cells}] [--layout fused|while|unrolled]\n"
    "                   [--dense N[,N...]] [--normalize MEANS;VARIANCES |\n"
    "                   --normalize-from DATASET.npy] [--reset-after true|false]\n"
    "                   [--gru-variant modern|legacy] [--bias-init keras|zeros|uniform]\n"
    "                   [--seed S] [--format tflite|circle] [--compare-layouts] [--json]\n"
    "\n"
    "Writes a classifier: input [1,T,F] -> optional normalisation (SUB mean, MUL\n"
    "1/sqrt(variance), as Keras' Normalization layer) -> the recurrent cell with H\n"
    "units -> Dense layers (ReLU) -> Dense C -> softmax, with Keras' initialisation\n"
    "(glorot-uniform kernels, orthogonal recurrent kernels, zero biases, plus what the\n"
    "cell's Keras initializer adds) from a seeded generator: the same seed gives the\n"
    "same file everywhere.\n"
    "\n"
    "Cells (--cell; the first is the default):\n"
    "{cell_table}"
    "\n"
    "Layouts compute the same function for the same seed:\n"
    "  fused     the cell's one recurrent op (above)\n"
    "  while     the WHILE loop TensorFlow's converter emits for Keras RNNs\n"
    "  unrolled  T copies of the cell, one per time step (no control flow)\n"
    "\n"
    "Options:\n"
    "  --cell C             The recurrent cell (Cells above)\n"
    "  --layout L           fused (default), while or unrolled\n"
    "  --timesteps T        Time steps per input window\n"
    "  --features F         Values per time step\n"
    "  --units H            Recurrent units\n"
    "  --classes C          Output classes (softmax)\n"
    "  --dense N[,N...]     Hidden Dense layers (ReLU) between the cell and the output\n"
    "  --normalize M;V      Per-feature means and variances, e.g. '0,1.5,2;1,4,0.5'\n"
    "  --normalize-from D   Means and variances of a dataset .npy of shape (N, T, F)\n"
    "  --reset-after B      GRU: true (Keras 2/3 default) or false\n"
    "  --gru-variant V      GRU: modern (default) or legacy (the older converter body:\n"
    "                       reset_after false, per-gate FCs, hard_sigmoid gates)\n"
    "  --bias-init B        keras (default), zeros or uniform (U(-0.1,0.1))\n"
    "  --seed S             Initialisation seed (default 1)\n"
    "  --format F           tflite or circle (default: from OUT's extension)\n"
    "  -o, --output OUT     The model file to write (atomically)\n"
    "  --compare-layouts    Also build the other two layouts in memory and compare\n"
    "  --unrolled-shared-weights  Unrolled: one weight copy for all steps instead of\n"
    "                       one per step as the converter writes them\n"
    "  --json               Print the report as JSON\n"
    "  -h, --help           Show this help\n"
    "\n"
    "The report lists model bytes, weight bytes, the size goal (fused files should\n"
    "stay within 1.05 x weight bytes + 2 KB), subgraphs, ops, tensors, parameters\n"
    "and the planned arena bytes.\n"
    "\n"
    "Exit status: 0 on success; 2 for bad options or an unusable dataset (one line\n"
    "'gruwb: ...'); 1 when the file cannot be written.\n"
    "\n"
    "Example:\n"
    "  gruwb build --cell gru --timesteps 60 --features 3 --units 60 --classes 4 \\\n"
    "      -o gesture_gru.tflite --compare-layouts\n",
    run};

}  // namespace gruwb::cli
