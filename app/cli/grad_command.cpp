// gruwb grad MODEL --input X.npy --labels Y.npy [--loss ce|sparse_ce|mse|mae] [--train SCOPE]
// [--json]

#include "app/cli/command.h"
#include "app/core/grad.h"
#include "app/core/inspect.h"
#include "app/core/training_session.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> spec = {{"--input", true}, {"--inputs", true}, {"--labels", true},
                                        {"--loss", true},  {"--train", true},  {"--json", false},
                                        {"--output", true}};
  if (!parse_args(kGradCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.size() != 1) {
    return usage_error(
        parsed.positional.empty() ? "grad: missing MODEL" : "grad: one MODEL expected",
        &kGradCommand);
  }
  app::GradRequest request;
  request.model_path = parsed.positional[0];
  request.input_path = parsed.value("--input", parsed.value("--inputs"));
  request.labels_path = parsed.value("--labels");
  if (request.input_path.empty() || request.labels_path.empty()) {
    return usage_error("grad: give --input X.npy and --labels Y.npy", &kGradCommand);
  }
  const std::string loss = parsed.value("--loss", "ce");
  if (!app::parse_loss(loss, &request.loss)) {
    return usage_error("grad: unknown --loss '" + loss + "' (ce, sparse_ce, mse, mae)",
                       &kGradCommand);
  }
  request.scope = parsed.value("--train", "all");
  request.loss_output = parsed.value("--output");
  if (parsed.has("--output") && request.loss_output.empty()) {
    return usage_error("grad: --output needs an output tensor NAME", &kGradCommand);
  }
  request.json = parsed.has("--json");
  std::string out, err;
  return finish(app::grad_model(request, &out, &err), out, err);
}

}  // namespace

const Command kGradCommand = {
    "grad", "Print the loss and the gradient of every trainable weight",
    "Usage: gruwb grad MODEL --input X.npy --labels Y.npy [--loss LOSS] [--train SCOPE]\n"
    "                  [--output NAME] [--json]\n"
    "\n"
    "Runs the engine's forward and backward pass (BPTT through recurrent ops) over\n"
    "the samples in X and prints the mean loss and the mean gradient of every\n"
    "trainable weight tensor, by tensor name, in the tensor's own layout - the same\n"
    "numbers `gruwb train` steps with. Nothing is updated or written.\n"
    "\n"
    "X holds N samples: shape (N, ...) where one sample is the model input without\n"
    "its leading batch dimension of 1 (model [1,60,3] -> X (N, 60, 3)), float32 or\n"
    "float64. Y holds int class ids (N,) or float label rows (N, C) (one-hot, soft,\n"
    "or regression targets for mse/mae).\n"
    "\n"
    "Options:\n"
    "  --input FILE    Samples X (.npy)\n"
    "  --labels FILE   Labels Y (.npy)\n"
    "  --loss LOSS     ce (default), sparse_ce, mse or mae\n"
    "  --train SCOPE   Which weights: all (default), fc (the last FULLY_CONNECTED),\n"
    "                  last:N (the last N layers) or comma-separated tensor names\n"
    "  --output NAME   The model output the loss goes on (tensor name, or its\n"
    "                  position 0, 1, ...). Default: the only output; else the one\n"
    "                  fed by SOFTMAX/LOGISTIC; else the only float output that\n"
    "                  fits the labels; else an error naming the candidates\n"
    "  --json          Print JSON: loss, and per weight name, tensor, shape, norm,\n"
    "                  min, max and every value\n"
    "  -h, --help      Show this help\n"
    "\n"
    "Text output: the loss (and which output it is on, for a model with several),\n"
    "then per weight its name, shape, norm, min and max.\n"
    "\n"
    "Exit status: 0 on success; 2 for an unusable model, data file or option (one\n"
    "line 'gruwb: FILE: problem' naming the file and both shapes on a mismatch);\n"
    "1 when the engine fails while running.\n"
    "\n"
    "Example:\n"
    "  gruwb grad gesture_gru.tflite --input x.npy --labels y.npy --json\n",
    run};

}  // namespace gruwb::cli
