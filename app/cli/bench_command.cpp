// gruwb bench MODEL [--repetitions K] [--min-time S] [--train SCOPE] [--batch B]
//   [--single-sample-passes] [--output NAME] [--as-written] [--json]

#include "app/cli/command.h"
#include "app/core/bench.h"
#include "app/core/inspect.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> spec = {{"--repetitions", true}, {"--min-time", true},
                                        {"--train", true},       {"--batch", true},
                                        {"--output", true},      {"--json", false},
                                        {"--as-written", false}, {"--single-sample-passes", false}};
  if (!parse_args(kBenchCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.size() != 1) {
    return usage_error(
        parsed.positional.empty() ? "bench: missing MODEL" : "bench: one MODEL expected",
        &kBenchCommand);
  }
  app::BenchRequest request;
  request.model_path = parsed.positional[0];
  request.train_scope = parsed.value("--train");
  request.as_written = parsed.has("--as-written");
  request.batched_passes = !parsed.has("--single-sample-passes");
  std::string err;
  if (!parsed.integer("--repetitions", 1, 1000, &request.repetitions, &err) ||
      !parsed.number("--min-time", 0.0001, 60, &request.min_seconds, &err) ||
      !parsed.integer("--batch", 1, 4096, &request.batch_size, &err)) {
    return finish(app::kExitBadInput, "", err);
  }
  if (parsed.has("--train") && request.train_scope.empty()) {
    return finish(app::kExitBadInput, "", "bench: --train needs a scope (fc, all, last:N)");
  }
  request.loss_output = parsed.value("--output");
  if (parsed.has("--output") && request.train_scope.empty()) {
    return finish(app::kExitBadInput, "",
                  "bench: --output (the output the loss goes on) applies to training: add "
                  "--train SCOPE");
  }
  if (parsed.has("--output") && request.loss_output.empty()) {
    return finish(app::kExitBadInput, "", "bench: --output needs an output tensor NAME");
  }
  if (parsed.has("--batch") && request.train_scope.empty()) {
    return finish(app::kExitBadInput, "", "bench: --batch applies to training: add --train SCOPE");
  }
  if (!request.batched_passes && request.train_scope.empty()) {
    return finish(app::kExitBadInput, "",
                  "bench: --single-sample-passes applies to training: add --train SCOPE");
  }
  app::BenchResult result;
  const int code = app::bench_model(request, &result, &err);
  return finish(code, code == app::kExitOk ? app::bench_report(result, parsed.has("--json")) : "",
                err);
}

}  // namespace

const Command kBenchCommand = {
    "bench", "Time a model's inference (and training) on this host",
    "Usage: gruwb bench MODEL [--repetitions K] [--min-time S] [--train SCOPE]\n"
    "                   [--batch B] [--single-sample-passes] [--output NAME]\n"
    "                   [--as-written] [--json]\n"
    "\n"
    "Times a .tflite/.circle model with GRU Workbench's engine (the code that runs\n"
    "on the board), to compare cells and layouts (fused op, WHILE loop, unrolled:\n"
    "see `gruwb build --layout` and `gruwb fuse`) on this machine. Inference runs\n"
    "in an arena of exactly the planned size on fixed pseudo-random inputs (float\n"
    "uniform in [-1, 1], int32 zero), variables reset before every invoke\n"
    "(independent windows). After a warm-up that calibrates the count once, each\n"
    "of K repetitions times enough invokes to last about S seconds. With --train,\n"
    "the same is done for training with Adam (lr 0.001) on random samples and\n"
    "one-hot labels. Figures depend on the machine and its load: compare models\n"
    "in one session, and prefer the min on a busy machine.\n"
    "\n"
    "Options:\n"
    "  --repetitions K   Timed repetitions (default 5, 1..1000)\n"
    "  --min-time S      Seconds each repetition lasts at least (default 0.1)\n"
    "  --train SCOPE     Also time training: all, fc (the last FULLY_CONNECTED),\n"
    "                    last:N (the last N layers) or comma-separated weight names\n"
    "  --batch B         Samples per update when training (default 1); a batch is\n"
    "                    one pass of B rows through the batched kernels\n"
    "  --single-sample-passes\n"
    "                    Train a batch as B passes of one sample each, as a board\n"
    "                    does: the memory of batch 1, slower\n"
    "  --output NAME     Training: the output the loss goes on (tensor name, or its\n"
    "                    position 0, 1, ...). Default: the only output; else the\n"
    "                    one fed by SOFTMAX/LOGISTIC; else an error naming them\n"
    "  --as-written      Time a WHILE-loop or unrolled RNN model as written. By\n"
    "                    default its fused form is timed and trained (`gruwb fuse`:\n"
    "                    one op per cell) when its outputs agree with the file's on\n"
    "                    a check input (relative 1e-5); the Form line says so\n"
    "  --json            Print the figures as one JSON object\n"
    "  -h, --help        Show this help\n"
    "\n"
    "Figures (JSON field names):\n"
    "  model_bytes, op_count   file size; operators of the form timed\n"
    "  plan                    form (\"fused\" or \"as written\"), fused_loops,\n"
    "                          fused_chains, difference (of the check), note\n"
    "  arena_bytes             planned inference arena (= gruwb run --arena)\n"
    "  inference               median_us, min_us, max_us: time of one sequence\n"
    "                          over the repetitions; invokes_per_repetition;\n"
    "                          ops: per op kind (op, instances) its share of\n"
    "                          self time (a WHILE without its cond/body ops) in\n"
    "                          one more repetition with a profiler, and self_us\n"
    "                          = share x median_us; largest share first\n"
    "  training (--train)      scope, loss_output, batch, rows_per_pass (1: single-\n"
    "                          sample passes), optimizer, learning_rate,\n"
    "                          trainable_parameters, form; median_samples_per_s,\n"
    "                          min_samples_per_s, max_samples_per_s;\n"
    "                          samples_per_repetition; memory: weights,\n"
    "                          gradients, optimizer (Adam m, v), activations\n"
    "                          (with their gradients and BPTT tapes), other,\n"
    "                          total = the training arena in bytes\n"
    "  repetitions, min_time_s the settings used\n"
    "\n"
    "Exit status: 0 on success; 2 for an unusable model or option (one line\n"
    "'gruwb: FILE: problem': a corrupt file, an op the engine lacks, a full-integer\n"
    "int8 model, a model that cannot train in SCOPE); 1 when the engine fails\n"
    "while running.\n"
    "\n"
    "Example:\n"
    "  gruwb bench gesture_gru_fused.tflite --train all --json\n",
    run};

}  // namespace gruwb::cli
