// gruwb train MODEL --inputs X.npy --labels Y.npy [--val-inputs X.npy --val-labels Y.npy]
//   --train SCOPE --optimizer adam|sgd --lr LR --batch B --epochs E --seed S [--loss L]
//   [--clip-norm C] [--momentum M] [--patience P] [--metrics out.jsonl]
//   [--checkpoint FILE [--resume]] [--output NAME] -o trained.tflite|.circle

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/cli/command.h"
#include "app/core/inspect.h"
#include "app/core/train.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> spec = {{"--inputs", true},
                                        {"--input", true},
                                        {"--labels", true},
                                        {"--val-inputs", true},
                                        {"--val-labels", true},
                                        {"--train", true},
                                        {"--optimizer", true},
                                        {"--lr", true},
                                        {"--batch", true},
                                        {"--epochs", true},
                                        {"--seed", true},
                                        {"--loss", true},
                                        {"--clip-norm", true},
                                        {"--momentum", true},
                                        {"--patience", true},
                                        {"--no-shuffle", false},
                                        {"--single-sample-passes", false},
                                        {"--metrics", true},
                                        {"--checkpoint", true},
                                        {"--resume", false},
                                        {"-o", true},
                                        {"--output", true},
                                        {"--quiet", false},
                                        {"--as-written", false}};
  if (!parse_args(kTrainCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.size() != 1) {
    return usage_error(
        parsed.positional.empty() ? "train: missing MODEL" : "train: one MODEL expected",
        &kTrainCommand);
  }
  app::TrainRequest request;
  request.model_path = parsed.positional[0];
  request.inputs_path = parsed.value("--inputs", parsed.value("--input"));
  request.labels_path = parsed.value("--labels");
  if (request.inputs_path.empty() || request.labels_path.empty()) {
    return usage_error("train: give --inputs X.npy and --labels Y.npy", &kTrainCommand);
  }
  request.val_inputs_path = parsed.value("--val-inputs");
  request.val_labels_path = parsed.value("--val-labels");
  if (request.val_inputs_path.empty() != request.val_labels_path.empty()) {
    return usage_error("train: give both --val-inputs and --val-labels, or neither",
                       &kTrainCommand);
  }
  request.output_path = parsed.value("-o");
  request.spec.loss_output = parsed.value("--output");
  if (parsed.has("--output") && request.spec.loss_output.empty()) {
    return usage_error("train: --output needs an output tensor NAME", &kTrainCommand);
  }
  const std::string& name = request.spec.loss_output;
  for (const char* extension : {".tflite", ".circle"}) {
    const size_t n = std::strlen(extension);
    if (name.size() > n && name.compare(name.size() - n, n, extension) == 0) {
      return usage_error(
          "train: --output names the model output the loss goes on; save the "
          "trained model with -o " +
              name,
          &kTrainCommand);
    }
  }
  request.metrics_path = parsed.value("--metrics");
  request.scope = parsed.value("--train", "all");
  TrainingConfig& config = request.spec.config;
  const std::string optimizer = parsed.value("--optimizer", "adam");
  if (optimizer == "adam") {
    config.optimizer = Optimizer::kAdam;
  } else if (optimizer == "sgd") {
    config.optimizer = Optimizer::kSgd;
    config.learning_rate = 0.01f;  // Keras' SGD default
  } else {
    return usage_error("train: unknown --optimizer '" + optimizer + "' (adam, sgd)",
                       &kTrainCommand);
  }
  const std::string loss = parsed.value("--loss", "ce");
  if (!app::parse_loss(loss, &config.loss)) {
    return usage_error("train: unknown --loss '" + loss + "' (ce, sparse_ce, mse, mae)",
                       &kTrainCommand);
  }
  double lr = config.learning_rate, clip = 0, momentum = 0;
  config.batch_size = 32;
  request.spec.epochs = 10;
  request.spec.seed = 1;
  std::string message;
  if (!parsed.number("--lr", 1e-12, 1e6, &lr, &message) ||
      !parsed.integer("--batch", 1, 1000000000, &config.batch_size, &message) ||
      !parsed.integer("--epochs", 0, 10000000, &request.spec.epochs, &message) ||
      !parsed.integer("--seed", 0, LLONG_MAX, &request.spec.seed, &message) ||
      !parsed.number("--clip-norm", 0, 1e30, &clip, &message) ||
      !parsed.number("--momentum", 0, 0.999999, &momentum, &message) ||
      !parsed.integer("--patience", 0, 10000000, &request.spec.early_stopping.patience, &message)) {
    return usage_error(message, &kTrainCommand);
  }
  config.learning_rate = static_cast<float>(lr);
  config.clip_norm = static_cast<float>(clip);
  config.momentum = static_cast<float>(momentum);
  request.spec.shuffle = !parsed.has("--no-shuffle");
  request.spec.as_written = parsed.has("--as-written");
  request.spec.batched_passes = !parsed.has("--single-sample-passes");
  request.spec.checkpoint_path = parsed.value("--checkpoint");
  request.spec.resume = parsed.has("--resume");
  if (request.spec.resume && request.spec.checkpoint_path.empty()) {
    return usage_error("train: --resume needs --checkpoint FILE", &kTrainCommand);
  }
  const bool quiet = parsed.has("--quiet");
  auto print = [quiet](const std::string& line) {
    if (quiet) return;
    std::fprintf(stdout, "%s\n", line.c_str());
    std::fflush(stdout);
  };
  std::string out, err;
  return finish(app::train_model(request, print, &out, &err), out, err);
}

}  // namespace

const Command kTrainCommand = {
    "train", "Train a model on NumPy data and save it (.tflite/.circle)",
    "Usage: gruwb train MODEL --inputs X.npy --labels Y.npy -o TRAINED\n"
    "                   [--val-inputs X.npy --val-labels Y.npy] [--train SCOPE]\n"
    "                   [--optimizer adam|sgd] [--lr LR] [--batch B]\n"
    "                   [--single-sample-passes] [--epochs E]\n"
    "                   [--seed S] [--loss LOSS] [--clip-norm C] [--momentum M]\n"
    "                   [--patience P] [--metrics FILE.jsonl]\n"
    "                   [--checkpoint FILE [--resume]] [--output NAME] [--as-written]\n"
    "\n"
    "Trains the weights in SCOPE with GRU Workbench's engine (the code that also\n"
    "trains on the board: BPTT through recurrent ops, one planned arena) and saves\n"
    "the model with the new weights, atomically. Prints one line per epoch: loss,\n"
    "accuracy, validation loss/accuracy and samples/s (the 'initial' line is\n"
    "before any update).\n"
    "\n"
    "X holds N samples: shape (N, ...) where one sample is the model input without\n"
    "its leading batch dimension of 1 (model [1,60,3] -> X (N, 60, 3)), float32 or\n"
    "float64. Y holds int class ids (N,) or float label rows (N, C) (one-hot, or\n"
    "regression targets for mse/mae).\n"
    "\n"
    "Quantized models train in float32: a hybrid model float32 copies of its int8\n"
    "weights, a full-integer model its float form (every quantized tensor in real\n"
    "units; X in real units too). -o then saves float32: `gruwb quantize` makes the\n"
    "trained model integer again.\n"
    "\n"
    "Options:\n"
    "  --inputs FILE        Training samples X (.npy)\n"
    "  --labels FILE        Training labels Y (.npy)\n"
    "  --val-inputs FILE    Validation samples, evaluated after every epoch\n"
    "  --val-labels FILE    Validation labels\n"
    "  -o FILE              Save the trained model (.tflite or .circle by extension)\n"
    "  --output NAME        The model output the loss goes on (tensor name, or its\n"
    "                       position 0, 1, ...). Default: the only output; else the\n"
    "                       one fed by SOFTMAX/LOGISTIC; else the only float output\n"
    "                       that fits the labels; else an error naming them\n"
    "  --train SCOPE        all (default), fc (the last FULLY_CONNECTED), last:N\n"
    "                       (the last N layers) or comma-separated weight tensor names\n"
    "  --optimizer NAME     adam (default; Keras defaults) or sgd\n"
    "  --lr LR              Learning rate (adam 0.001, sgd 0.01)\n"
    "  --batch B            Samples per update (default 32; the last batch of an\n"
    "                       epoch may be smaller), each batch one pass of B rows\n"
    "                       through the batched kernels\n"
    "  --single-sample-passes\n"
    "                       Train each batch as B passes of one sample, as a board\n"
    "                       does: the memory of batch 1 and a board run's weights\n"
    "                       (bit for bit on gruwb board-sim); slower. Batched\n"
    "                       passes agree with them within float rounding\n"
    "  --epochs E           Epochs (default 10)\n"
    "  --seed S             Seed of the sample order (default 1; same order on\n"
    "                       every machine)\n"
    "  --no-shuffle         Keep the file's sample order\n"
    "  --loss LOSS          ce (default), sparse_ce, mse or mae\n"
    "  --clip-norm C        Clip the gradients' global norm to C (default off)\n"
    "  --momentum M         SGD momentum (default 0)\n"
    "  --patience P         Stop after P epochs without a lower (validation) loss\n"
    "                       and keep the best weights (default off)\n"
    "  --metrics FILE       Write every epoch's figures as JSON lines (loss,\n"
    "                       accuracy, precision/recall, confusion, gradient norms)\n"
    "  --checkpoint FILE    Save weights + optimizer state after every epoch\n"
    "  --resume             Continue from --checkpoint FILE\n"
    "  --as-written         Train a WHILE-loop or unrolled RNN model as written. By\n"
    "                       default, with --train all or fc, its fused form trains\n"
    "                       (`gruwb fuse`: one op per cell) when its outputs agree\n"
    "                       with the file's on a check input (relative 1e-5), and\n"
    "                       -o saves that fused form with the trained weights\n"
    "  --quiet              Print only the summary\n"
    "  -h, --help           Show this help\n"
    "\n"
    "Exit status: 0 on success; 2 for an unusable model, data file or option (one\n"
    "line 'gruwb: FILE: problem' naming the file and both shapes on a mismatch);\n"
    "1 when training fails (e.g. a NaN gradient, named by weight).\n"
    "\n"
    "Example:\n"
    "  gruwb train gesture_gru.tflite --inputs x.npy --labels y.npy --train fc \\\n"
    "      --epochs 20 --lr 0.01 --metrics fc.jsonl -o gesture_fc.tflite\n",
    run};

}  // namespace gruwb::cli
