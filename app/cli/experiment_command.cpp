// gruwb experiment (--model M | --build SPEC | --spec EXP.json) --data PATH [options]
// gruwb experiment --result RESULT.json [--report FILE]...: reports without training.
// gruwb data PATH: what a dataset holds.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "app/cli/command.h"
#include "app/core/dataset.h"
#include "app/core/experiment.h"
#include "app/core/inspect.h"
#include "app/core/report.h"
#include "app/core/text_table.h"
#include "engine/tools/model_file.h"

namespace gruwb::cli {
namespace {

std::atomic<bool> g_cancel{false};

// The first Ctrl-C cancels (the results so far are saved); a second one kills.
void on_interrupt(int) {
  if (g_cancel.exchange(true)) std::_Exit(130);
}

// A one-line progress bar on a terminal; nothing otherwise.
class Progress {
 public:
  Progress() : tty_(isatty(fileno(stderr)) != 0) {}
  void operator()(const app::ExperimentEvent& event) {
    if (!tty_) return;
    using Kind = app::ExperimentEvent::Kind;
    if (event.kind == Kind::kRunStarted) label_ = event.message;
    const auto now = std::chrono::steady_clock::now();
    if (event.kind == Kind::kTraining && event.training.kind == app::TrainingEvent::Kind::kStep &&
        now - last_ < std::chrono::milliseconds(100)) {
      return;
    }
    last_ = now;
    const int filled = static_cast<int>(event.progress * 30);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(30, '.');
    std::string detail;
    if (event.kind == Kind::kTraining && event.training.epochs > 0) {
      char text[96];
      std::snprintf(text, sizeof text, " epoch %d/%d loss %.3f", event.training.epoch,
                    event.training.epochs, event.training.running_loss);
      detail = text;
    }
    std::fprintf(stderr, "\r[%s] %3d%% run %d/%d %s%s\033[K", bar.c_str(),
                 static_cast<int>(event.progress * 100), event.run + 1, event.runs, label_.c_str(),
                 detail.c_str());
    if (event.kind == Kind::kFinished) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  bool tty_;
  std::string label_;
  std::chrono::steady_clock::time_point last_{};
};

std::vector<std::string> report_paths(const ParsedArgs& parsed) {
  return parsed.has("--report") ? parsed.options.at("--report") : std::vector<std::string>();
}

// Before any training: a typo in a report name must not cost the run.
bool check_report_names(const std::vector<std::string>& reports, std::string* message) {
  for (const std::string& report : reports) {
    static const char* kExtensions[] = {".html", ".htm", ".md", ".csv", ".json", ".pdf"};
    bool known = false;
    for (const char* ext : kExtensions) {
      const std::string e(ext);
      known |=
          report.size() > e.size() && report.compare(report.size() - e.size(), e.size(), e) == 0;
    }
    if (!known) {
      *message = "experiment: --report '" + report + "' (use .html, .pdf, .md, .csv or .json)";
      return false;
    }
  }
  return true;
}

bool write_reports(const app::ExperimentResult& result, const std::vector<std::string>& reports,
                   std::string* error) {
  for (const std::string& report : reports) {
    if (!app::write_report(report, result, error)) return false;
  }
  return true;
}

// What stdout shows of a result: its status, data notes, the headline (and
// cell) table and where the reports went.
std::string result_text(const app::ExperimentResult& result,
                        const std::vector<std::string>& reports) {
  std::string out = result.spec.name + " (" + app::experiment_status_name(result.status) + ", " +
                    std::to_string(static_cast<int>(result.seconds + 0.5)) + " s)\n";
  for (const std::string& note : result.data_notes) out += "  " + note + "\n";
  out += "\n" + app::plain_table(app::headline_header(result), app::headline_table(result));
  const auto quantization_rows = app::quantization_table(result);
  if (!quantization_rows.empty()) {
    out += "\n" + app::plain_table(app::quantization_header(result), quantization_rows);
  }
  if (!result.cells.empty()) {
    out += "\n" + app::plain_table(app::cells_header(), app::cells_table(result));
  }
  for (const std::string& report : reports) out += "report: " + report + "\n";
  return out;
}

// --result R.json: the reports of a finished (or cancelled) experiment from
// its result JSON, without training again.
int rerender(const ParsedArgs& parsed) {
  for (const auto& option : parsed.options) {
    if (option.first != "--result" && option.first != "--report") {
      return usage_error("experiment: --result takes only --report, not " + option.first,
                         &kExperimentCommand);
    }
  }
  const std::vector<std::string> reports = report_paths(parsed);
  std::string error;
  if (!check_report_names(reports, &error)) return usage_error(error, &kExperimentCommand);
  const std::string path = parsed.value("--result");
  std::vector<uint8_t> bytes;
  app::ExperimentResult result;
  if (!tools::read_file_bytes(path, &bytes, &error) ||
      !app::parse_experiment_result(std::string(bytes.begin(), bytes.end()), path, &result,
                                    &error)) {
    return finish(app::kExitBadInput, "", error);
  }
  if (!write_reports(result, reports, &error)) return finish(app::kExitFailure, "", error);
  return finish(app::kExitOk, result_text(result, reports), "");
}

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> options = {{"--model", true},
                                           {"--build", true},
                                           {"--spec", true},
                                           {"--data", true},
                                           {"--stages", true},
                                           {"--epochs", true},
                                           {"--seeds", true},
                                           {"--seed", true},
                                           {"--lr", true},
                                           {"--batch", true},
                                           {"--optimizer", true},
                                           {"--patience", true},
                                           {"--clip", true},
                                           {"--validation", true},
                                           {"--timesteps", true},
                                           {"--length", true},
                                           {"--normalize", true},
                                           {"--compare-cells", true},
                                           {"--name", true},
                                           {"--report", true},
                                           {"--json", true},
                                           {"--save-spec", true},
                                           {"--result", true},
                                           {"--output", true},
                                           {"--compare-models", true},
                                           {"--board-port", true},
                                           {"--as-written", false},
                                           {"--single-sample-passes", false}};
  if (!parse_args(kExperimentCommand, args, options, &parsed, &exit_code)) return exit_code;
  if (!parsed.positional.empty()) {
    return usage_error("experiment: unexpected argument '" + parsed.positional[0] + "'",
                       &kExperimentCommand);
  }
  if (parsed.has("--result")) return rerender(parsed);
  app::ExperimentSpec spec;
  std::string message, err;
  if (parsed.has("--spec")) {
    if (!app::load_experiment_spec(parsed.value("--spec"), &spec, &err)) {
      return finish(app::kExitBadInput, "", err);
    }
  } else {
    app::StageSpec defaults;
    defaults.learning_rate = 0.005f;
    defaults.batch_size = 8;
    defaults.epochs = 20;
    spec.stages.clear();
    std::string stages = parsed.value("--stages", "init,fc,all");
    double lr = defaults.learning_rate, clip = 0;
    if (!parsed.integer("--epochs", 0, 100000, &defaults.epochs, &message) ||
        !parsed.integer("--batch", 1, 100000, &defaults.batch_size, &message) ||
        !parsed.integer("--patience", 0, 100000, &defaults.patience, &message) ||
        !parsed.number("--lr", 1e-9, 100, &lr, &message) ||
        !parsed.number("--clip", 0, 1e9, &clip, &message)) {
      return usage_error(message, &kExperimentCommand);
    }
    defaults.learning_rate = static_cast<float>(lr);
    defaults.clip_norm = static_cast<float>(clip);
    const std::string optimizer = parsed.value("--optimizer", "adam");
    if (optimizer != "adam" && optimizer != "sgd") {
      return usage_error("experiment: --optimizer '" + optimizer + "' (expected adam or sgd)",
                         &kExperimentCommand);
    }
    defaults.optimizer = optimizer == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
    if (!app::parse_stages(stages, defaults, &spec.stages, &message)) {
      return usage_error("experiment: --stages: " + message, &kExperimentCommand);
    }
    spec.model_path = parsed.value("--model");
    spec.build = parsed.value("--build");
    spec.normalize = "auto";
  }
  // Options given next to --spec override the file.
  if (parsed.has("--data")) spec.data_path = parsed.value("--data");
  if (parsed.has("--name")) spec.name = parsed.value("--name");
  if (parsed.has("--output")) {
    spec.loss_output = parsed.value("--output");
    if (spec.loss_output.empty()) {
      return usage_error("experiment: --output needs an output tensor NAME", &kExperimentCommand);
    }
  }
  if (parsed.has("--normalize")) spec.normalize = parsed.value("--normalize");
  double validation = spec.validation_fraction;
  if (!parsed.integer("--seeds", 1, 1000, &spec.seeds, &message) ||
      !parsed.integer("--seed", 0, 1 << 30, &spec.first_seed, &message) ||
      !parsed.integer("--timesteps", 1, 1 << 20, &spec.timesteps, &message) ||
      !parsed.number("--validation", 0, 0.9, &validation, &message)) {
    return usage_error(message, &kExperimentCommand);
  }
  spec.validation_fraction = validation;
  if (parsed.has("--length") &&
      !app::parse_length_policy(parsed.value("--length"), &spec.length_policy)) {
    return usage_error("experiment: --length '" + parsed.value("--length") +
                           "' (expected exact, crop, pad or resample)",
                       &kExperimentCommand);
  }
  if (parsed.has("--compare-cells")) {
    spec.compare_cells = comma_list(parsed.value("--compare-cells"));
  }
  if (parsed.has("--board-port")) spec.board_port = parsed.value("--board-port");
  if (parsed.has("--as-written")) spec.as_written = true;
  if (parsed.has("--single-sample-passes")) spec.batched_passes = false;
  if (parsed.has("--compare-models")) {
    spec.compare_models = comma_list(parsed.value("--compare-models"));
  }
  if (spec.name == "experiment" && !spec.data_path.empty()) {
    std::string data = spec.data_path;
    while (data.size() > 1 && data.back() == '/') data.pop_back();
    spec.name = "Experiment on " + data.substr(data.find_last_of('/') + 1);
  }
  if (!app::check_experiment_spec(spec, &message)) {
    return usage_error("experiment: " + message, &kExperimentCommand);
  }
  const std::vector<std::string> reports = report_paths(parsed);
  if (!check_report_names(reports, &message)) return usage_error(message, &kExperimentCommand);
  if (parsed.has("--save-spec") &&
      !app::save_text_atomically(parsed.value("--save-spec"), app::experiment_spec_json(spec),
                                 &err)) {
    return finish(app::kExitFailure, "", err);
  }
  std::signal(SIGINT, on_interrupt);
  Progress progress;
  const std::string json_path = parsed.value("--json");
  const app::ExperimentResult result = app::run_experiment(
      spec, [&](const app::ExperimentEvent& e) { progress(e); }, &g_cancel, json_path);
  std::signal(SIGINT, SIG_DFL);
  if (result.status == app::ExperimentStatus::kFailed && result.runs.empty()) {
    return finish(app::kExitBadInput, "", result.error);  // nothing ran: the input is bad
  }
  if (!write_reports(result, reports, &err)) return finish(app::kExitFailure, "", err);
  std::string out = result_text(result, reports);
  if (!json_path.empty()) out += "json: " + json_path + "\n";
  if (result.status == app::ExperimentStatus::kCompleted) return finish(app::kExitOk, out, "");
  std::fputs(out.c_str(), stdout);
  return finish(app::kExitFailure, "",
                result.status == app::ExperimentStatus::kCancelled
                    ? "experiment cancelled; the runs that finished are in the results"
                    : result.error);
}

int run_data(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  if (!parse_args(kDataCommand, args, {}, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.size() != 1) {
    return usage_error("data: give one dataset PATH", &kDataCommand);
  }
  app::DatasetFiles files;
  std::string err;
  if (!app::load_dataset(parsed.positional[0], &files, &err)) {
    return finish(app::kExitBadInput, "", err);
  }
  return finish(app::kExitOk, app::dataset_summary(files), "");
}

}  // namespace

const Command kExperimentCommand = {
    "experiment", "Train stages (init, fc, all...) from the same weights over seeds; report",
    "Usage: gruwb experiment (--model M | --build SPEC | --spec EXP.json) --data PATH\n"
    "                        [--stages init,fc,all] [--epochs E] [--seeds K]\n"
    "                        [--report out.html|out.pdf|out.md|out.csv|out.json]...\n"
    "                        [--json out.json] [options]\n"
    "       gruwb experiment --result RESULT.json [--report FILE]...\n"
    "\n"
    "Trains the stages one after another, each from the SAME initial weights, for\n"
    "K seeds, evaluates each on the test split and prints the headline table\n"
    "(test accuracy and cross entropy as mean ± std over seeds, change vs the\n"
    "previous stage, trainable parameters, training memory). A quantization stage\n"
    "(int8, int16x8, dynamic) quantizes the model the previous stage trained,\n"
    "calibrated on the training split, and adds a table of accuracy, bytes, arena\n"
    "and latency before and after.\n"
    "\n"
    "Model:\n"
    "  --model M            A .tflite/.circle classifier with input [1,T,F]\n"
    "  --build SPEC         A fresh model per seed: cell={cells},units=H\n"
    "                       [,dense=N/N][,layout=fused|while][,reset_after=true|false]\n"
    "                       [,bias_init=keras|zeros|uniform][,format=tflite|circle];\n"
    "                       T, F and classes come from the data\n"
    "  --spec EXP.json      Re-run a saved experiment (a --save-spec or --json file);\n"
    "                       options given with it override the file\n"
    "  --output NAME        With --model: the output the loss goes on (tensor name,\n"
    "                       or its position 0, 1, ...). Default: the only output;\n"
    "                       else the one fed by SOFTMAX/LOGISTIC; else the only\n"
    "                       float output with the data's classes; else an error\n"
    "Data (docs/datasets.md):\n"
    "  --data PATH          UEA folder or NAME_TRAIN.ts/.arff (+ _TEST), .csv, .npz,\n"
    "                       X.npy,y.npy or a folder with X_train.npy/y_train.npy\n"
    "  --timesteps T        Steps per window (default: the model's, else the data's)\n"
    "  --length P           exact, crop, pad or resample (default) to T steps\n"
    "  --validation F       Fraction of the training split held out (default 0)\n"
    "  --normalize N        auto (default: baked into a built model; data for a file),\n"
    "                       model, data or none. Statistics from the training split\n"
    "Stages:\n"
    "  --stages LIST        init (evaluate only), fc (last Dense), all, last:N,\n"
    "                       names:TENSOR;TENSOR (default init,fc,all); int8,\n"
    "                       int16x8, dynamic: post-training quantization of the\n"
    "                       previous stage's model (e.g. init,fc,all,int8)\n"
    "  --epochs E           Epochs per training stage (default 20)\n"
    "  --optimizer O        adam (default) or sgd\n"
    "  --lr LR              Learning rate (default 0.005)\n"
    "  --batch B            Batch size (default 8)\n"
    "  --patience P         Early stopping on val (else train) loss; 0 = off\n"
    "  --clip C             Clip gradients to global norm C (0 = off)\n"
    "  --seeds K            Seeds (default 1); --seed S the first one (default 1)\n"
    "  --compare-cells L    Same data and stages through each cell, e.g. {cell_list}\n"
    "                       built from --build: accuracy, size fused/WHILE, latency;\n"
    "                       with --model too, that model is a row beside them\n"
    "  --compare-models L   Model files as rows beside the cells (with --build or\n"
    "                       --model), e.g. a.tflite,b.circle: same stages, seeds and\n"
    "                       data (fitted to each file's T); its bytes in the column\n"
    "                       of its form, the fuser's output as fused bytes when it\n"
    "                       fuses. A file that does not fit the data: an error in\n"
    "                       its row, the others go on\n"
    "  --board-port PORT    Also time each row's deployed model on the board at PORT\n"
    "                       (`gruwb board bench`: 20 inferences, median): the board\n"
    "                       latency (us) and cycles columns; a model the board cannot\n"
    "                       run gets a note in its row\n"
    "  --as-written         Train WHILE-loop or unrolled RNN models as written, not\n"
    "                       in their fused form (used for stages all and fc when its\n"
    "                       outputs agree with the file's, relative 1e-5)\n"
    "  --single-sample-passes\n"
    "                       Train each batch as B passes of one sample, as a board\n"
    "                       does (\"batched_passes\": false in a spec): the memory of\n"
    "                       batch 1 and a board run's weights (bit for bit on\n"
    "                       gruwb board-sim); slower.\n"
    "                       Default: one pass of B rows through the batched kernels\n"
    "Output:\n"
    "  --report FILE        .html (self-contained, SVG plots), .pdf, .md, .csv (every\n"
    "                       curve), .json (everything); repeatable\n"
    "  --json FILE          Everything as JSON, rewritten after every run (results\n"
    "                       survive a cancel or a failure)\n"
    "  --save-spec FILE     Save the experiment itself (re-run with --spec)\n"
    "  --result FILE        No training: print the table of a finished experiment's\n"
    "                       --json file and write its --report files again (takes\n"
    "                       no other option)\n"
    "  --name NAME          Title of the reports\n"
    "  -h, --help           Show this help\n"
    "\n"
    "A progress bar shows on a terminal; Ctrl-C cancels and keeps finished runs.\n"
    "Exit status: 0 done; 2 bad options or data (one line 'gruwb: ...'); 1 a run\n"
    "failed or was cancelled.\n"
    "\n"
    "Example:\n"
    "  gruwb experiment --build \"cell=gru,units=60\" --data ../shared/data/datasets/Epilepsy \\\n"
    "      --stages init,fc,all --seeds 3 --report r.html --json r.json\n"
    "  gruwb experiment --build cell=gru,units=60 --compare-cells gru,lstm \\\n"
    "      --compare-models mine.tflite,mine_while.tflite --data DIR --report r.html\n"
    "  gruwb experiment --result r.json --report r.pdf --report r.md\n",
    run};

const Command kDataCommand = {
    "data", "Show what a dataset file holds (splits, shapes, classes)",
    "Usage: gruwb data PATH\n"
    "\n"
    "Loads a dataset as `gruwb experiment --data` does and prints its splits,\n"
    "channels, lengths, missing values and class counts. PATH: a UEA folder,\n"
    "NAME_TRAIN.ts/.arff, .csv, .npz or X.npy,y.npy (docs/datasets.md), or a\n"
    "format a plugin reads (gruwb plugins), e.g. NAME_TRAIN.tsv (tsv_reader).\n"
    "\n"
    "Exit status: 0 ok; 2 the file is unreadable (one line naming file:line:column).\n",
    run_data};

}  // namespace gruwb::cli
