#include "app/core/experiment.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <type_traits>

#include "app/core/bench.h"
#include "app/core/board.h"
#include "app/core/inference_eval.h"
#include "app/core/inspect.h"
#include "app/core/quantize.h"
#include "engine/tools/cells/cell_registry.h"
#include "engine/tools/dequantize.h"
#include "engine/tools/fuser.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/train/loss_output.h"
#include "serial/link/board_client.h"

namespace gruwb::app {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool parse_positive(const std::string& text, int* out) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > 1000000) return false;
  *out = static_cast<int>(value);
  return true;
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// "cell=gru,units=60,dense=32/16,layout=fused" -> BuildSpec fields (T, F,
// classes, seed and normalisation are the experiment's to fill).
bool parse_build(const std::string& text, tools::BuildSpec* spec, std::string* error) {
  *spec = tools::BuildSpec();
  for (const std::string& item : split(text, ',')) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    bool ok = eq != std::string::npos;
    if (!ok) {
    } else if (key == "cell") {
      ok = tools::parse_cell(value, &spec->cell);
    } else if (key == "units") {
      ok = parse_positive(value, &spec->units);
    } else if (key == "layout") {
      ok = tools::parse_rnn_layout(value, &spec->layout);
    } else if (key == "dense") {
      for (const std::string& size : split(value, '/')) {
        int units = 0;
        ok = ok && parse_positive(size, &units);
        spec->dense.push_back(units);
      }
    } else if (key == "reset_after") {
      ok = value == "true" || value == "false";
      spec->reset_after = value == "true";
    } else if (key == "bias_init") {
      ok = tools::parse_bias_init(value, &spec->bias_init);
    } else if (key == "format") {
      ok = value == "tflite" || value == "circle";
      spec->format = value == "circle" ? ModelFormat::kCircle : ModelFormat::kTflite;
    } else {
      *error = "build spec '" + text + "': unknown key '" + key +
               "' (cell, units, dense, layout, reset_after, bias_init, format)";
      return false;
    }
    if (!ok && eq == std::string::npos &&
        (ends_with(item, ".tflite") || ends_with(item, ".circle"))) {
      *error = "build spec '" + text + "': '" + item +
               "' is a model file, not a key=value item: train it as the model (a cell "
               "comparison then builds the cells beside it) or compare it as a model file";
      return false;
    }
    if (!ok) {
      *error = "build spec '" + text + "': bad item '" + item + "'";
      return false;
    }
  }
  return true;
}

const char kStageScopes[] =
    "expected init, fc, all, last:N, names:TENSOR;TENSOR, int8, int16x8 or dynamic";

bool stage_scope_ok(const std::string& scope) {
  if (scope == "init" || scope == "fc" || scope == "all") return true;
  if (is_quantization_scope(scope)) return true;
  int n = 0;
  if (scope.rfind("last:", 0) == 0) return parse_positive(scope.substr(5), &n);
  return scope.rfind("names:", 0) == 0 && scope.size() > 6;
}

TrainingData training_data(const PreparedSplit& split, const PreparedData& data,
                           const std::string& label) {
  TrainingData out;
  out.sample_shape = {data.timesteps, data.features};
  out.inputs = split.x;
  out.labels.assign(split.labels.begin(), split.labels.end());
  out.class_names = data.class_names;
  out.inputs_label = label;
  out.labels_label = label;
  return out;
}

// Median per-sequence inference time of the model (app/core/bench.h), with
// a short budget: the comparison table wants an order of magnitude, not a benchmark.
bool measure_latency(const std::vector<uint8_t>& bytes, double* us, uint64_t* arena,
                     std::string* error) {
  tools::LoadedModel loaded;
  if (!tools::load_model_bytes(bytes, "built model", &loaded, error)) return false;
  InferenceBench bench;
  if (bench_inference(loaded.model, 3, 0.01, /*per_op=*/false, &bench, error) != kExitOk) {
    return false;
  }
  *us = bench.microseconds.median;
  *arena = bench.arena_bytes;
  return true;
}

// The quantizer measured both files (bytes, constant data, arena); only the
// host latency is left to measure.
bool deploy_figures(const std::vector<uint8_t>& bytes, const tools::ModelSizeFigures& size,
                    DeployFigures* out, std::string* error) {
  out->model_bytes = size.bytes;
  out->weight_bytes = size.data_bytes;
  out->arena_bytes = size.arena_bytes;
  uint64_t bench_arena = 0;
  return measure_latency(bytes, &out->latency_us, &bench_arena, error);
}

// A quantization stage: `source` (the model a previous stage ended with)
// calibrated on the training split, quantized, scored on the test split.
bool quantization_stage(const std::string& mode, const std::vector<uint8_t>& source,
                        const PreparedSplit& representative, const TrainingData& test,
                        int32_t output, StageRun* run, std::string* error) {
  DatasetQuantizeOptions options;
  if (!tools::parse_quantize_mode(mode, &options.quantize.mode)) {
    *error = "quantization mode '" + mode + "': expected int8, int16x8 or dynamic";
    return false;
  }
  tools::QuantizeResult quantized;
  if (!quantize_for_dataset(source, representative, options, &quantized, error)) {
    *error = "quantize (" + mode + "): " + *error;
    return false;
  }
  QuantizationFigures& q = run->quantization;
  q.mode = mode;
  // Each (op, reason) once: a loop body repeats the same ops.
  for (const tools::QuantizedOpOutcome& op : quantized.ops) {
    const std::string kept = op.name + ": " + op.reason;
    if (!op.quantized &&
        std::find(q.kept_float.begin(), q.kept_float.end(), kept) == q.kept_float.end()) {
      q.kept_float.push_back(kept);
    }
  }
  if (!deploy_figures(source, quantized.before, &q.source, error) ||
      !deploy_figures(quantized.bytes, quantized.after, &q.quantized, error)) {
    return false;
  }
  run->quantized = true;
  run->evaluated =
      evaluate_inference(quantized.bytes, test, output, &run->test_loss, &run->test_classes, error);
  run->test_accuracy = run->test_classes.accuracy;
  return run->evaluated;
}

// One row of the comparison: a built cell, or a model file with the data
// prepared for its input.
struct ExperimentRow {
  std::string label;       // the cell's name, or the file's name
  std::string model_path;  // "" for a built cell
  bool built = false;
  bool summarize = false;  // a model file in a comparison: gets a CellSummary
  std::vector<uint8_t> bytes;
  std::string cell_type;  // StageRun::cell_type, units of the row's model
  int units = 0;
  int32_t loss_output = -1;  // built models: their one output
  const PreparedData* data = nullptr;
  std::string error;  // the row cannot run (shown in its CellSummary)
};

ExperimentRow make_row(const std::string& label, const std::string& model_path, bool built) {
  ExperimentRow row;
  row.label = label;
  row.model_path = model_path;
  row.built = built;
  return row;
}

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (int i = 0; i < shape.rank; ++i) {
    text += (i ? "," : "") + std::to_string(shape.dims[i]);
  }
  return text + "]";
}

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Loads a model file and reads its input [1, T, F].
bool open_model(const std::string& path, tools::LoadedModel* loaded, tools::ModelRunner* runner,
                int* timesteps, std::string* error) {
  if (!tools::load_model_file(path, loaded, error)) return false;
  if (!runner->prepare(loaded->model, error)) {
    *error = path + ": " + *error;
    return false;
  }
  const Tensor* in = runner->interpreter().input(0);
  if (in->shape.rank != 3 || in->shape.dims[0] != 1) {
    *error = path + ": input " + shape_text(in->shape) +
             " must be [1, T, F] for sequence classification";
    return false;
  }
  *timesteps = in->shape.dims[1];
  return true;
}

// Chooses the output the loss goes on and checks the data's channels and
// classes fit the model.
bool fit_model(const Model& model, tools::ModelRunner& runner, const std::string& path,
               const std::string& loss_output_name, const PreparedData& data,
               const std::string& data_path, int32_t* loss_output, std::string* error) {
  LossOutputRequest request;
  request.name = loss_output_name.c_str();
  request.class_count = static_cast<int64_t>(data.class_names.size());
  const Status chosen = choose_loss_output(model, request, loss_output);
  if (!chosen.ok()) {
    *error = path + ": " + chosen.message();
    return false;
  }
  const int model_f = runner.interpreter().input(0)->shape.dims[2];
  const Tensor* out = runner.interpreter().output(*loss_output);
  const int model_classes = out->shape.rank > 0 ? out->shape.dims[out->shape.rank - 1] : 1;
  if (data.features != model_f) {
    *error = data_path + ": " + std::to_string(data.features) + " channels, model " + path +
             " takes " + std::to_string(model_f);
    return false;
  }
  if (static_cast<int>(data.class_names.size()) != model_classes) {
    *error = data_path + ": " + std::to_string(data.class_names.size()) + " classes, model " +
             path + " outputs " + std::to_string(model_classes);
    return false;
  }
  return true;
}

// "built cell=lstm,units=60, input [1,60,3]": the spec with the row's cell.
std::string built_model_text(const std::string& build, const std::string& cell,
                             const PreparedData& data) {
  std::string text = "built cell=" + cell;
  for (const std::string& item : split(build, ',')) {
    if (item.rfind("cell=", 0) != 0) text += "," + item;
  }
  return text + ", input [1," + std::to_string(data.timesteps) + "," +
         std::to_string(data.features) + "]";
}

Figure figure(const std::vector<double>& values) {
  Figure f;
  f.count = static_cast<int>(values.size());
  if (values.empty()) return f;
  for (double v : values) f.mean += v;
  f.mean /= static_cast<double>(values.size());
  for (double v : values) f.std += (v - f.mean) * (v - f.mean);
  f.std = std::sqrt(f.std / static_cast<double>(values.size()));
  return f;
}

}  // namespace

const char* optimizer_name(Optimizer o) { return o == Optimizer::kSgd ? "sgd" : "adam"; }

bool is_quantization_scope(const std::string& scope) {
  return scope == "int8" || scope == "int16x8" || scope == "dynamic";
}

bool model_recurrent_cell(const Model& model, std::string* cell, int* units) {
  // A fused op: its name under every variant the registered cells write.
  for (int sg = 0; sg < model.subgraph_count(); ++sg) {
    const SubgraphView subgraph = model.subgraph(sg);
    for (int i = 0; i < subgraph.operator_count; ++i) {
      const OperatorView op = subgraph.op(i);
      const std::string name = op.name();
      for (const tools::CellDescriptor* type : tools::registered_cells()) {
        bool match = false;
        for (bool reset_after : {true, false}) {
          for (ModelFormat format : {ModelFormat::kTflite, ModelFormat::kCircle}) {
            for (bool hybrid : {false, true}) {
              tools::CellConfig config;
              config.reset_after = reset_after;
              match = match || name == type->fused_op(config, format, hybrid);
            }
          }
        }
        if (!match) continue;
        *cell = type->name;
        *units = 0;
        if (!op.outputs.empty() && op.outputs[0] >= 0 && op.outputs[0] < subgraph.tensor_count) {
          const TensorView out = subgraph.tensor(op.outputs[0]);
          if (!out.shape.empty()) *units = out.shape[out.shape.size - 1];
        }
        return true;
      }
    }
  }
  tools::ModelDef def;
  std::string error;
  if (!tools::unpack_model(model, &def, &error)) return false;
  const tools::DetectionReport found = tools::detect_rnn_cells(def);
  if (found.cells.empty() || !found.cells[0].type) return false;
  *cell = found.cells[0].type->name;
  *units = found.cells[0].units;
  return true;
}

bool model_summary(const std::string& path, const std::vector<uint8_t>& bytes,
                   const TrainingData& train, CellSummary* out, std::string* error,
                   std::vector<uint8_t>* deployed_out) {
  CellSummary row;
  row.cell = file_name(path);
  row.model_path = path;
  // Its own form: a WHILE loop, unrolled steps, or already one op per cell.
  tools::FuseOptions options;
  options.format = tools::format_for_path(path);
  tools::FuseResult fused;
  std::string fuse_error;
  const bool fuser_ran = tools::fuse_model(bytes, options, &fused, &fuse_error);
  bool loop = false, unrolled = false;
  if (fuser_ran) {
    loop = !fused.other_loops.empty();
    for (const tools::CellOutcome& c : fused.cells) {
      (c.cell.form == tools::CellForm::kWhile ? loop : unrolled) = true;
    }
  }
  (loop ? row.while_bytes : unrolled ? row.unrolled_bytes : row.fused_bytes) = bytes.size();
  std::vector<uint8_t> deployed = bytes;  // what the arena and latency are of
  if (fuser_ran && fused.fused_count() > 0 && (loop || unrolled)) {
    row.fused_bytes = fused.bytes.size();
    deployed = fused.bytes;
  } else if (loop || unrolled) {
    row.fuse_note = !fuser_ran                   ? "not fused: " + fuse_error
                    : !fused.cells.empty()       ? "not fused: " + fused.cells[0].reason
                    : !fused.other_loops.empty() ? "not fused: " + fused.other_loops[0].reason
                                                 : "not fused";
  }
  // What training "all" updates: the trainer's own count.
  TrainingRunSpec spec;
  spec.model_bytes = bytes;
  spec.model_label = path;
  spec.epochs = 0;
  spec.as_written = true;  // the file's own parameters
  spec.config.loss = Loss::kCategoricalCrossEntropy;
  TrainingSession session;
  if (!set_trainable_scope("all", &spec, error) || !session.prepare(spec, train, nullptr, error)) {
    return false;
  }
  for (const WeightInfo& w : session.trainable_weights()) {
    row.parameters += static_cast<uint64_t>(w.elements);
  }
  if (!measure_latency(deployed, &row.latency_us, &row.arena_bytes, error)) return false;
  *out = row;
  if (deployed_out) *deployed_out = std::move(deployed);
  return true;
}

const char* experiment_status_name(ExperimentStatus status) {
  switch (status) {
    case ExperimentStatus::kNotRun: return "not run";
    case ExperimentStatus::kCompleted: return "completed";
    case ExperimentStatus::kCancelled: return "cancelled";
    case ExperimentStatus::kFailed: return "failed";
  }
  return "?";
}

bool parse_stages(const std::string& text, const StageSpec& defaults, std::vector<StageSpec>* out,
                  std::string* error) {
  out->clear();
  for (const std::string& name : split(text, ',')) {
    if (!stage_scope_ok(name)) {
      *error = "stage '" + name + "': " + kStageScopes;
      return false;
    }
    StageSpec stage = defaults;
    stage.name = name.rfind("names:", 0) == 0 ? "custom" : name;
    stage.scope = name;
    out->push_back(stage);
  }
  return true;
}

bool check_dataset_for_model(const std::string& data_path, const std::string& model_path,
                             std::string* summary, std::string* error) {
  DatasetFiles files;
  if (!load_dataset(data_path, &files, error)) return false;
  *summary = dataset_summary(files);
  if (model_path.empty()) return true;
  tools::LoadedModel loaded;
  tools::ModelRunner runner;
  int model_t = 0;
  std::string why;
  if (!open_model(model_path, &loaded, &runner, &model_t, &why)) {
    // Not a sequence classifier (or not runnable): nothing to fit the data to.
    *summary += "\nnot checked against the model: " + why;
    return true;
  }
  PrepareOptions options;
  options.timesteps = model_t;
  options.length_policy = ExperimentSpec().length_policy;  // what an experiment would do
  PreparedData data;
  if (!prepare_dataset(files, options, &data, error)) return false;
  int32_t output = -1;
  return fit_model(loaded.model, runner, model_path, "", data, data_path, &output, error);
}

bool check_experiment_spec(const ExperimentSpec& spec, std::string* error) {
  if (spec.model_path.empty() && spec.build.empty()) {
    *error = "give a model file or a build spec";
    return false;
  }
  if (!spec.model_path.empty() && !spec.build.empty() && spec.compare_cells.empty()) {
    *error =
        "give a model file or a build spec, not both (both only to compare cells beside "
        "the model file)";
    return false;
  }
  if (spec.model_path.empty() && !spec.loss_output.empty()) {
    *error = "loss output '" + spec.loss_output +
             "': a built model has one output (the choice applies to model files)";
    return false;
  }
  if (spec.data_path.empty()) {
    *error = "no dataset";
    return false;
  }
  if (spec.stages.empty()) {
    *error = "no stages";
    return false;
  }
  if (spec.seeds < 1 || spec.seeds > 1000) {
    *error = "seeds must be in 1..1000, got " + std::to_string(spec.seeds);
    return false;
  }
  if (spec.normalize != "auto" && spec.normalize != "model" && spec.normalize != "data" &&
      spec.normalize != "none") {
    *error = "normalize '" + spec.normalize + "': expected auto, model, data or none";
    return false;
  }
  if (!spec.compare_cells.empty() && spec.build.empty()) {
    *error = "cell comparison needs a build spec for the cells (beside the model file)";
    return false;
  }
  for (const std::string& path : spec.compare_models) {
    if (path.empty()) {
      *error = "model comparison: an empty model file name";
      return false;
    }
  }
  for (const std::string& cell : spec.compare_cells) {
    if (!tools::find_cell(cell)) {
      *error = "cell '" + cell + "': expected " + tools::cell_names_text();
      return false;
    }
  }
  for (const StageSpec& s : spec.stages) {
    if (!stage_scope_ok(s.scope)) {
      *error = "stage '" + s.scope + "': " + kStageScopes;
      return false;
    }
    if (s.epochs < 0 || s.batch_size < 1 || !(s.learning_rate > 0) || s.patience < 0) {
      *error = "stage '" + s.name + "': epochs >= 0, batch >= 1, lr > 0 and patience >= 0 needed";
      return false;
    }
  }
  tools::BuildSpec build;
  if (!spec.build.empty() && !parse_build(spec.build, &build, error)) return false;
  if (spec.validation_fraction < 0 || spec.validation_fraction >= 1) {
    *error = "validation fraction must be in [0, 1)";
    return false;
  }
  return true;
}

void summarize(ExperimentResult* result) {
  result->summary.clear();
  std::vector<std::pair<std::string, std::string>> keys;  // (cell, stage) in run order
  for (const StageRun& run : result->runs) {
    const auto key = std::make_pair(run.cell, run.stage);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  for (const auto& key : keys) {
    StageSummary row;
    row.cell = key.first;
    row.stage = key.second;
    std::vector<double> accuracy, loss, source_accuracy;
    double epochs = 0;
    int runs = 0;
    for (const StageRun& run : result->runs) {
      if (run.cell != key.first || run.stage != key.second) continue;
      if (run.evaluated) accuracy.push_back(run.test_accuracy), loss.push_back(run.test_loss);
      if (run.quantized) {
        if (!row.quantized) row.quantization = run.quantization;
        row.quantized = true;
        if (run.quantization.source_evaluated) {
          source_accuracy.push_back(run.quantization.source_accuracy);
        }
        ++runs;
        continue;
      }
      if (row.stage != "init") {
        row.trainable_parameters = run.training.trainable_parameters;
        row.memory = run.training.memory;
        row.training_memory_bytes = run.training.memory.total;
      }
      for (const EpochMetrics& e : run.training.epochs) epochs += e.epoch > 0;
      ++runs;
    }
    row.accuracy = figure(accuracy);
    row.loss = figure(loss);
    row.source_accuracy = figure(source_accuracy);
    row.epochs_run = runs ? static_cast<int>(std::lround(epochs / runs)) : 0;
    for (auto it = result->summary.rbegin(); it != result->summary.rend(); ++it) {
      if (it->cell == row.cell && it->accuracy.count > 0 && row.accuracy.count > 0) {
        row.has_delta = true;
        row.delta_accuracy = row.accuracy.mean - it->accuracy.mean;
        row.delta_loss = row.loss.mean - it->loss.mean;
        break;
      }
    }
    result->summary.push_back(row);
  }
  for (CellSummary& cell : result->cells) {
    for (const StageSummary& row : result->summary) {
      if (row.cell == cell.cell) cell.accuracy = row.accuracy;  // the last stage wins
    }
  }
}

namespace {

// A row's deployed model on the comparison's board: uploaded, then BENCH (the CLI's and the
// Board dock's bench_on_board, which also checks the board computes the host's outputs). A
// model the board cannot run (its arena does not fit, an op the firmware lacks) leaves a note,
// not a failed experiment.
void bench_row_on_board(serial::BoardClient& board, const std::vector<uint8_t>& model,
                        CellSummary* row) {
  std::string error;
  BoardBenchResult bench;
  if (!board.upload(serial::UploadKind::kModel, model, nullptr, nullptr, &error) ||
      !bench_on_board(board, model, row->cell, 20, &bench, &error)) {
    row->board_note = error;
    return;
  }
  row->board = bench.board;
  row->board_latency_us = board_microseconds(bench.reply.median_cycles, bench.clock_hz);
  row->board_cycles = bench.clock_hz ? bench.reply.median_cycles : 0;
}

}  // namespace

ExperimentResult run_experiment(const ExperimentSpec& spec, const ExperimentCallback& callback,
                                const std::atomic<bool>* cancel, const std::string& autosave_path,
                                TrainingObserver* observer) {
  ExperimentResult result;
  result.spec = spec;
  result.started = utc_now();
  const auto start = Clock::now();
  double progress = 0.0;  // events never go backwards (a run's last step vs its end)
  const auto notify = [&](ExperimentEvent event) {
    progress = event.progress = std::max(progress, event.progress);
    if (callback) callback(event);
  };
  const auto save = [&]() {
    result.seconds = seconds_since(start);
    summarize(&result);
    std::string ignored;
    if (!autosave_path.empty()) {
      save_text_atomically(autosave_path, experiment_result_json(result), &ignored);
    }
  };
  const auto fail = [&](const std::string& error) {
    result.status = ExperimentStatus::kFailed;
    result.error = error;
    save();
    ExperimentEvent event;
    event.kind = ExperimentEvent::Kind::kFinished;
    event.message = error;
    notify(event);
    return result;
  };
  std::string error;
  if (!check_experiment_spec(spec, &error)) return fail(error);
  // The board answers first, before any training: a wrong port fails at once.
  std::unique_ptr<serial::BoardClient> board;
  if (!spec.board_port.empty()) {
    BoardConnection connection;
    connection.port = spec.board_port;
    std::string note;
    board = open_board(connection, &note, &error);
    if (!board) return fail("board: " + error);
  }

  // The model's T/F (file) or the data's (build spec).
  tools::BuildSpec build;
  tools::LoadedModel loaded;
  tools::ModelRunner runner;
  int model_t = 0;
  if (!spec.build.empty()) parse_build(spec.build, &build, &error);
  if (!spec.model_path.empty() &&
      !open_model(spec.model_path, &loaded, &runner, &model_t, &error)) {
    return fail(error);
  }
  DatasetFiles files;
  if (!load_dataset(spec.data_path, &files, &error)) return fail(error);
  const bool bake = spec.normalize == "model" || (spec.normalize == "auto" && !spec.build.empty());
  // A model file's data: normalised as arrays unless asked otherwise.
  const bool file_normalize = spec.normalize == "data" || spec.normalize == "auto";
  PrepareOptions options;
  options.timesteps = spec.timesteps > 0 ? spec.timesteps : model_t;
  options.length_policy = spec.length_policy;
  options.validation_fraction = spec.validation_fraction;
  options.seed = spec.first_seed;
  options.normalize_data =
      spec.normalize == "data" || (spec.normalize == "auto" && spec.build.empty());
  PreparedData data;
  if (!prepare_dataset(files, options, &data, &error)) return fail(error);

  // The rows: the built cells, or the model file, then the compared files.
  std::vector<ExperimentRow> rows;
  for (const std::string& cell : spec.compare_cells) rows.push_back(make_row(cell, "", true));
  if (!spec.build.empty() && rows.empty()) rows.push_back(make_row(build.cell->name, "", true));
  if (!spec.model_path.empty()) {
    const bool beside = !spec.compare_models.empty() || !rows.empty();  // a row of a comparison
    ExperimentRow row =
        make_row(beside ? file_name(spec.model_path) : "model", spec.model_path, false);
    row.bytes = loaded.bytes;
    model_recurrent_cell(loaded.model, &row.cell_type, &row.units);
    row.data = &data;
    row.summarize = beside;
    if (!fit_model(loaded.model, runner, spec.model_path, spec.loss_output, data, spec.data_path,
                   &row.loss_output, &error)) {
      return fail(error);
    }
    rows.push_back(std::move(row));
  }
  // The same samples, split the same way, fitted to each file's input.
  std::list<PreparedData> model_data;
  for (const std::string& path : spec.compare_models) {
    ExperimentRow row = make_row(file_name(path), path, false);
    row.summarize = true;
    for (const ExperimentRow& other : rows) {
      if (other.label == row.label) row.label = path;  // same name, other folder
    }
    tools::LoadedModel model;
    tools::ModelRunner model_runner;
    int t = 0;
    if (open_model(path, &model, &model_runner, &t, &row.error)) {
      row.bytes = model.bytes;
      model_recurrent_cell(model.model, &row.cell_type, &row.units);
      if (data.timesteps == t && options.normalize_data == file_normalize) {
        row.data = &data;
      } else {
        for (const PreparedData& d : model_data) {
          if (d.timesteps == t) row.data = &d;
        }
      }
      if (!row.data) {
        PrepareOptions fitted = options;
        fitted.timesteps = t;
        fitted.normalize_data = file_normalize;
        PreparedData prepared;
        if (prepare_dataset(files, fitted, &prepared, &error)) {
          model_data.push_back(std::move(prepared));
          row.data = &model_data.back();
        } else {
          row.error = path + ": data for its input [1, " + std::to_string(t) + ", F]: " + error;
        }
      }
      if (row.data) {
        fit_model(model.model, model_runner, path, "", *row.data, spec.data_path, &row.loss_output,
                  &row.error);
      }
      if (row.error.empty() && row.data != &data) {
        data.notes.push_back(row.label + ": data fitted to its input (" +
                             std::to_string(row.data->timesteps) + " steps" +
                             (file_normalize ? ", normalised" : "") + ")");
      }
    }
    rows.push_back(std::move(row));
  }
  if (bake && !spec.build.empty()) data.notes.push_back("normalisation: baked into the model");
  // A quantized file's stages train, and are evaluated, in float32 (TrainingSession).
  for (const ExperimentRow& row : rows) {
    std::vector<uint8_t> float_form;
    tools::DequantizeResult dequantized;
    std::string ignored;  // a file that does not convert fails with its row
    if (row.bytes.empty() ||
        !tools::float_training_model(row.bytes, &float_form, &dequantized, &ignored)) {
      continue;
    }
    if (dequantized.integer_tensors > 0) {
      data.notes.push_back(row.label + ": full-integer: its stages train its float form (" +
                           std::to_string(dequantized.integer_tensors) +
                           " quantized tensors as float32)");
    } else if (dequantized.tensors > 0) {
      data.notes.push_back(row.label + ": hybrid: its stages train float32 copies of " +
                           std::to_string(dequantized.tensors) + " INT8 weight tensor(s)");
    }
  }
  result.data_name = data.name;
  result.timesteps = data.timesteps;
  result.features = data.features;
  result.class_names = data.class_names;
  result.train_count = data.train.size();
  result.validation_count = data.validation.size();
  result.test_count = data.test.size();
  result.data_notes = data.notes;

  int runnable = 0;
  for (const ExperimentRow& row : rows) runnable += row.error.empty();
  const int total = std::max(1, runnable * spec.seeds * static_cast<int>(spec.stages.size()));
  int index = 0;
  bool cancelled = false;
  // Records a finished run (saved at once) and tells the caller.
  const auto finish_run = [&](StageRun run, Clock::time_point run_start) {
    run.seconds = seconds_since(run_start);
    result.runs.push_back(std::move(run));
    save();
    ExperimentEvent finished;
    finished.kind = ExperimentEvent::Kind::kRunFinished;
    finished.run = index;
    finished.runs = total;
    finished.progress = static_cast<double>(index + 1) / total;
    finished.message = result.runs.back().error;
    finished.stage_run = &result.runs.back();
    notify(finished);
    ++index;
  };
  for (const ExperimentRow& row : rows) {
    const std::string& cell = row.label;
    if (!row.error.empty()) {  // this row cannot run; the others go on
      CellSummary summary;
      summary.cell = row.label;
      summary.model_path = row.model_path;
      summary.model = row.model_path;
      summary.error = row.error;
      result.cells.push_back(summary);
      ExperimentEvent message;
      message.message = row.error;
      notify(message);
      continue;
    }
    tools::BuildSpec cell_spec = build;
    std::string row_cell_type = row.cell_type;
    int row_units = row.units;
    const PreparedData& row_data = row.built ? data : *row.data;
    if (row.built) {
      tools::parse_cell(cell, &cell_spec.cell);
      row_cell_type = cell_spec.cell->name;
      row_units = cell_spec.units;
      cell_spec.timesteps = data.timesteps;
      cell_spec.features = data.features;
      cell_spec.classes = static_cast<int>(data.class_names.size());
      if (bake) cell_spec.mean = data.mean, cell_spec.variance = data.variance;
    }
    const TrainingData train = training_data(row_data.train, row_data, spec.data_path + " (train)");
    const TrainingData val =
        training_data(row_data.validation, row_data, spec.data_path + " (validation)");
    const TrainingData test = training_data(row_data.test, row_data, spec.data_path + " (test)");
    const int32_t loss_output = row.loss_output;
    for (int s = 0; s < spec.seeds && !cancelled; ++s) {
      const uint64_t seed = spec.first_seed + static_cast<uint64_t>(s);
      std::vector<uint8_t> initial = row.bytes;
      if (row.built) {
        cell_spec.seed = seed;
        tools::BuildFigures figures;
        if (!tools::build_and_measure(cell_spec, &figures, &initial, &error)) {
          return fail("build spec '" + spec.build + "' (" + cell + "): " + error);
        }
      }
      // The model the last stage ended with: what a quantization stage quantizes.
      std::vector<uint8_t> latest = initial;
      std::string latest_stage = "initial";
      bool latest_evaluated = false;
      double latest_accuracy = 0.0;
      for (const StageSpec& stage : spec.stages) {
        if (cancel && cancel->load()) {
          cancelled = true;
          break;
        }
        StageRun run;
        run.stage = stage.name;
        run.cell = cell;
        run.seed = seed;
        run.cell_type = row_cell_type;
        run.units = row_units;
        ExperimentEvent started;
        started.kind = ExperimentEvent::Kind::kRunStarted;
        started.run = index;
        started.runs = total;
        started.progress = static_cast<double>(index) / total;
        started.message = cell + " " + stage.name + " seed " + std::to_string(seed);
        notify(started);
        const auto run_start = Clock::now();
        if (is_quantization_scope(stage.scope)) {
          run.quantization.source_stage = latest_stage;
          run.quantization.source_evaluated = latest_evaluated;
          run.quantization.source_accuracy = latest_accuracy;
          if (!quantization_stage(stage.scope, latest, row_data.train, test,
                                  std::max(loss_output, 0), &run, &error)) {
            run.error = error;
          } else {
            run.model_bytes = run.quantization.quantized.model_bytes;
          }
          finish_run(std::move(run), run_start);
          continue;
        }
        TrainingRunSpec ts;
        ts.model_bytes = initial;
        ts.model_label = row.built ? "built " + cell + " model" : row.model_path;
        ts.config.loss = Loss::kCategoricalCrossEntropy;
        ts.config.loss_output = loss_output;
        ts.config.optimizer = stage.optimizer;
        ts.config.learning_rate = stage.learning_rate;
        ts.config.batch_size = stage.batch_size;
        ts.batched_passes = spec.batched_passes;
        ts.config.clip_norm = stage.clip_norm;
        ts.as_written = spec.as_written;
        const bool train_stage = stage.scope != "init";
        std::string scope = train_stage ? stage.scope : "fc";
        if (scope.rfind("names:", 0) == 0) {
          scope = scope.substr(6);
          std::replace(scope.begin(), scope.end(), ';', ',');
        }
        ts.epochs = train_stage ? stage.epochs : 0;
        ts.seed = seed;
        ts.early_stopping.patience = stage.patience;
        ts.observer = observer;
        TrainingSession session;
        const bool has_val = val.count() > 0;
        bool ok = set_trainable_scope(scope, &ts, &error) &&
                  session.prepare(ts, train, has_val ? &val : nullptr, &error);
        if (ok) {
          run.training = session.run(
              [&](const TrainingEvent& t) {
                ExperimentEvent event;
                event.kind = ExperimentEvent::Kind::kTraining;
                event.run = index;
                event.runs = total;
                const double within =
                    t.epochs > 0 && t.epoch_samples > 0
                        ? ((t.epoch - 1) + static_cast<double>(t.epoch_samples_done) /
                                               static_cast<double>(t.epoch_samples)) /
                              t.epochs
                        : 0.0;
                event.progress = (index + std::clamp(within, 0.0, 1.0)) / total;
                event.training = t;
                notify(event);
              },
              cancel);
          if (run.training.outcome == TrainingOutcome::kFailed) {
            ok = false;
            error = run.training.error;
          }
          if (run.training.outcome == TrainingOutcome::kCancelled) cancelled = true;
        }
        if (ok && !cancelled) {
          run.evaluated = session.evaluate(test, &run.test_loss, &run.test_classes, &error);
          run.test_accuracy = run.test_classes.accuracy;
          ok = run.evaluated && session.trained_model(session.model_format(), &latest, &error);
          if (ok) {
            run.model_bytes = latest.size();
            latest_stage = stage.name;
            latest_evaluated = true;
            latest_accuracy = run.test_accuracy;
            if (train_stage) run.trained_model = latest;
          }
        }
        if (!ok) run.error = error;
        finish_run(std::move(run), run_start);
        if (cancelled) break;
      }
    }
    if (cancelled) break;
    if (row.built) {
      // Size of every layout and fused latency, with the first seed's weights.
      CellSummary summary;
      summary.cell = cell;
      summary.model = built_model_text(spec.build, cell, data);
      cell_spec.seed = spec.first_seed;
      for (tools::RnnLayout layout :
           {tools::RnnLayout::kFused, tools::RnnLayout::kWhile, tools::RnnLayout::kUnrolled}) {
        cell_spec.layout = layout;
        tools::BuildFigures figures;
        std::vector<uint8_t> bytes;
        if (!tools::build_and_measure(cell_spec, &figures, &bytes, &error)) {
          return fail("build spec '" + spec.build + "' (" + cell + "): " + error);
        }
        if (layout == tools::RnnLayout::kFused) {
          summary.fused_bytes = figures.model_bytes;
          summary.parameters = tools::trainable_parameters(cell_spec);
          if (!measure_latency(bytes, &summary.latency_us, &summary.arena_bytes, &error)) {
            return fail("latency of the " + cell + " model: " + error);
          }
          if (board) bench_row_on_board(*board, bytes, &summary);
        } else {
          (layout == tools::RnnLayout::kWhile ? summary.while_bytes : summary.unrolled_bytes) =
              figures.model_bytes;
        }
      }
      result.cells.push_back(summary);
    } else if (row.summarize) {
      CellSummary summary;
      std::vector<uint8_t> deployed;
      if (!model_summary(row.model_path, row.bytes, train, &summary, &error, &deployed)) {
        summary.error = row.model_path + ": " + error;
      }
      summary.cell = row.label;
      summary.model = row.model_path;
      if (board && summary.error.empty()) bench_row_on_board(*board, deployed, &summary);
      result.cells.push_back(summary);
    }
  }
  result.status = cancelled ? ExperimentStatus::kCancelled : ExperimentStatus::kCompleted;
  for (const StageRun& run : result.runs) {
    if (!run.error.empty() && result.error.empty()) {
      result.error =
          run.cell + " " + run.stage + " seed " + std::to_string(run.seed) + ": " + run.error;
    }
  }
  for (const CellSummary& row : result.cells) {
    if (!row.error.empty() && result.error.empty()) result.error = row.error;
  }
  if (!result.error.empty() && !cancelled) result.status = ExperimentStatus::kFailed;
  save();
  ExperimentEvent done;
  done.kind = ExperimentEvent::Kind::kFinished;
  done.progress = 1.0;
  done.message = experiment_status_name(result.status);
  notify(done);
  return result;
}

// ---- worker ------------------------------------------------------------------------

ExperimentWorker::~ExperimentWorker() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

void ExperimentWorker::start(const ExperimentSpec& spec, ExperimentCallback callback,
                             const std::string& autosave_path) {
  if (thread_.joinable()) thread_.join();
  cancel_ = false;
  running_ = true;
  thread_ = std::thread([this, spec, callback, autosave_path] {
    result_ = run_experiment(spec, callback, &cancel_, autosave_path);
    running_ = false;
  });
}

const ExperimentResult& ExperimentWorker::wait() {
  if (thread_.joinable()) thread_.join();
  return result_;
}

// ---- JSON ----------------------------------------------------------------------------

namespace {

void write_spec(tools::JsonWriter& json, const ExperimentSpec& spec) {
  json.begin_object();
  json.key("format").value("gruwb-experiment-1");
  json.key("name").value(spec.name);
  json.key("model").value(spec.model_path);
  json.key("build").value(spec.build);
  if (!spec.loss_output.empty()) json.key("loss_output").value(spec.loss_output);
  json.key("data").value(spec.data_path);
  json.key("timesteps").value(spec.timesteps);
  json.key("length_policy").value(length_policy_name(spec.length_policy));
  json.key("validation_fraction").value(spec.validation_fraction);
  json.key("normalize").value(spec.normalize);
  json.key("seeds").value(spec.seeds);
  json.key("first_seed").value(spec.first_seed);
  json.key("compare_cells").array(spec.compare_cells);
  if (!spec.compare_models.empty()) json.key("compare_models").array(spec.compare_models);
  if (!spec.board_port.empty()) json.key("board_port").value(spec.board_port);
  if (spec.as_written) json.key("as_written").value(true);
  if (!spec.batched_passes) json.key("batched_passes").value(false);
  json.key("stages").begin_array();
  for (const StageSpec& s : spec.stages) {
    json.begin_object();
    json.key("name").value(s.name);
    json.key("scope").value(s.scope);
    json.key("optimizer").value(optimizer_name(s.optimizer));
    json.key("learning_rate").value(s.learning_rate);
    json.key("batch_size").value(s.batch_size);
    json.key("epochs").value(s.epochs);
    json.key("patience").value(s.patience);
    json.key("clip_norm").value(s.clip_norm);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

void write_classes(tools::JsonWriter& json, const ClassMetrics& m) {
  json.begin_object();
  json.key("accuracy").value(m.accuracy);
  json.key("samples").value(m.samples);
  json.key("precision").array(m.precision);
  json.key("recall").array(m.recall);
  json.key("confusion").begin_array();
  for (const auto& row : m.confusion) json.array(row);
  json.end_array();
  json.end_object();
}

void write_figure(tools::JsonWriter& json, const char* key, const Figure& f) {
  json.key(key).begin_object();
  json.key("mean").value(f.mean);
  json.key("std").value(f.std);
  json.key("count").value(f.count);
  json.end_object();
}

void write_epoch(tools::JsonWriter& json, const EpochMetrics& e) {
  json.begin_object();
  json.key("epoch").value(e.epoch);
  json.key("steps").value(e.steps);
  json.key("train_loss").value(e.train_loss);
  json.key("train_accuracy").value(e.train_accuracy);
  if (e.has_val) {
    json.key("val_loss").value(e.val_loss);
    json.key("val_accuracy").value(e.val_accuracy);
    json.key("val_precision").array(e.val_classes.precision);
    json.key("val_recall").array(e.val_classes.recall);
  }
  json.key("train_precision").array(e.train_classes.precision);
  json.key("train_recall").array(e.train_classes.recall);
  json.key("seconds").value(e.seconds);
  json.key("samples_per_second").value(e.samples_per_second);
  write_gradient_stats(json, e.gradients);
  json.end_object();
}

void write_deploy(tools::JsonWriter& json, const char* key, const DeployFigures& d) {
  json.key(key).begin_object();
  json.key("model_bytes").value(d.model_bytes);
  json.key("weight_bytes").value(d.weight_bytes);
  json.key("arena_bytes").value(d.arena_bytes);
  json.key("latency_us").value(d.latency_us);
  json.end_object();
}

void write_quantization(tools::JsonWriter& json, const QuantizationFigures& q) {
  json.key("quantization").begin_object();
  json.key("mode").value(q.mode);
  json.key("source_stage").value(q.source_stage);
  if (q.source_evaluated) json.key("source_accuracy").value(q.source_accuracy);
  write_deploy(json, "source", q.source);
  write_deploy(json, "quantized", q.quantized);
  json.key("kept_float").array(q.kept_float);
  json.end_object();
}

}  // namespace

std::string experiment_spec_json(const ExperimentSpec& spec) {
  tools::JsonWriter json;
  write_spec(json, spec);
  return json.take() + "\n";
}

std::string experiment_result_json(const ExperimentResult& r) {
  tools::JsonWriter json;
  json.begin_object();
  json.key("spec");
  write_spec(json, r.spec);
  json.key("status").value(experiment_status_name(r.status));
  json.key("error").value(r.error);
  json.key("started").value(r.started);
  json.key("seconds").value(r.seconds);
  json.key("data").begin_object();
  json.key("name").value(r.data_name);
  json.key("timesteps").value(r.timesteps);
  json.key("features").value(r.features);
  json.key("classes").array(r.class_names);
  json.key("train").value(r.train_count);
  json.key("validation").value(r.validation_count);
  json.key("test").value(r.test_count);
  json.key("notes").array(r.data_notes);
  json.end_object();
  json.key("summary").begin_array();
  for (const StageSummary& s : r.summary) {
    json.begin_object();
    json.key("cell").value(s.cell);
    json.key("stage").value(s.stage);
    write_figure(json, "test_accuracy", s.accuracy);
    write_figure(json, "test_loss", s.loss);
    if (s.has_delta) {
      json.key("delta_accuracy").value(s.delta_accuracy);
      json.key("delta_loss").value(s.delta_loss);
    }
    json.key("trainable_parameters").value(s.trainable_parameters);
    json.key("training_memory");
    write_training_memory(json, s.memory);
    json.key("epochs_run").value(s.epochs_run);
    if (s.quantized) {
      write_quantization(json, s.quantization);
      write_figure(json, "source_test_accuracy", s.source_accuracy);
    }
    json.end_object();
  }
  json.end_array();
  json.key("cells").begin_array();
  for (const CellSummary& c : r.cells) {
    json.begin_object();
    json.key("cell").value(c.cell);
    if (!c.model_path.empty()) json.key("model_path").value(c.model_path);
    write_figure(json, "test_accuracy", c.accuracy);
    json.key("fused_bytes").value(c.fused_bytes);
    json.key("while_bytes").value(c.while_bytes);
    json.key("unrolled_bytes").value(c.unrolled_bytes);
    json.key("parameters").value(c.parameters);
    json.key("arena_bytes").value(c.arena_bytes);
    json.key("latency_us").value(c.latency_us);
    json.key("board_latency_us").value(c.board_latency_us);  // 0: not measured
    if (c.board_cycles) json.key("board_cycles").value(c.board_cycles);
    if (!c.board.empty()) json.key("board").value(c.board);
    if (!c.board_note.empty()) json.key("board_note").value(c.board_note);
    if (!c.fuse_note.empty()) json.key("fuse_note").value(c.fuse_note);
    if (!c.error.empty()) json.key("error").value(c.error);
    if (!c.model.empty()) json.key("model").value(c.model);  // which model the row trained
    json.end_object();
  }
  json.end_array();
  json.key("runs").begin_array();
  for (const StageRun& run : r.runs) {
    json.begin_object();
    json.key("cell").value(run.cell);
    json.key("stage").value(run.stage);
    json.key("seed").value(run.seed);
    if (!run.cell_type.empty()) json.key("cell_type").value(run.cell_type);
    if (run.units > 0) json.key("units").value(run.units);
    if (run.model_bytes > 0) json.key("model_bytes").value(run.model_bytes);
    json.key("outcome").value(training_outcome_name(run.training.outcome));
    json.key("error").value(run.error);
    json.key("seconds").value(run.seconds);
    if (run.evaluated) {
      json.key("test_loss").value(run.test_loss);
      json.key("test_accuracy").value(run.test_accuracy);
      json.key("test_classes");
      write_classes(json, run.test_classes);
    }
    json.key("trainable_parameters").value(run.training.trainable_parameters);
    json.key("best_epoch").value(run.training.best_epoch);
    json.key("training_memory");
    write_training_memory(json, run.training.memory);
    json.key("epochs").begin_array();
    for (const EpochMetrics& e : run.training.epochs) write_epoch(json, e);
    json.end_array();
    if (run.quantized) write_quantization(json, run.quantization);
    json.end_object();
  }
  json.end_array();
  json.end_object();
  return json.take() + "\n";
}

bool parse_json_object(const std::string& text, const std::string& label, QJsonObject* out,
                       std::string* error) {
  QJsonParseError parse_error{};
  const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text), &parse_error);
  if (parse_error.error != QJsonParseError::NoError || !doc.isObject()) {
    *error = label + ": not a JSON object (" + parse_error.errorString().toStdString() +
             " at offset " + std::to_string(parse_error.offset) + ")";
    return false;
  }
  *out = doc.object();
  return true;
}

namespace {

// The reader of write_spec's object (a spec file, or a result's "spec").
bool read_spec(const QJsonObject& o, const std::string& label, ExperimentSpec* out,
               std::string* error) {
  if (o.value("format").toString() != "gruwb-experiment-1") {
    *error = label + ": not a GRU Workbench experiment (format is not gruwb-experiment-1)";
    return false;
  }
  ExperimentSpec s;
  s.name = o.value("name").toString(QString::fromStdString(s.name)).toStdString();
  s.model_path = o.value("model").toString().toStdString();
  s.build = o.value("build").toString().toStdString();
  s.loss_output = o.value("loss_output").toString().toStdString();
  s.data_path = o.value("data").toString().toStdString();
  s.timesteps = o.value("timesteps").toInt(0);
  if (!parse_length_policy(o.value("length_policy").toString("resample").toStdString(),
                           &s.length_policy)) {
    *error = label + ": length_policy must be exact, crop, pad or resample";
    return false;
  }
  s.validation_fraction = o.value("validation_fraction").toDouble(0);
  s.normalize = o.value("normalize").toString("auto").toStdString();
  s.seeds = o.value("seeds").toInt(1);
  s.first_seed = static_cast<uint64_t>(o.value("first_seed").toInteger(1));
  for (const QJsonValue& c : o.value("compare_cells").toArray()) {
    s.compare_cells.push_back(c.toString().toStdString());
  }
  for (const QJsonValue& m : o.value("compare_models").toArray()) {
    s.compare_models.push_back(m.toString().toStdString());
  }
  s.board_port = o.value("board_port").toString().toStdString();
  s.as_written = o.value("as_written").toBool(false);
  s.batched_passes = o.value("batched_passes").toBool(true);
  for (const QJsonValue& v : o.value("stages").toArray()) {
    const QJsonObject st = v.toObject();
    StageSpec stage;
    stage.scope = st.value("scope").toString().toStdString();
    stage.name = st.value("name").toString(QString::fromStdString(stage.scope)).toStdString();
    const std::string opt = st.value("optimizer").toString("adam").toStdString();
    if (opt != "adam" && opt != "sgd") {
      *error = label + ": stage '" + stage.name + "': optimizer must be adam or sgd";
      return false;
    }
    stage.optimizer = opt == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
    stage.learning_rate = static_cast<float>(st.value("learning_rate").toDouble(1e-3));
    stage.batch_size = st.value("batch_size").toInt(16);
    stage.epochs = st.value("epochs").toInt(20);
    stage.patience = st.value("patience").toInt(0);
    stage.clip_norm = static_cast<float>(st.value("clip_norm").toDouble(0));
    s.stages.push_back(stage);
  }
  if (!check_experiment_spec(s, error)) {
    *error = label + ": " + *error;
    return false;
  }
  *out = s;
  return true;
}

// Reads the members experiment_result_json writes. The first one missing or
// of the wrong type fails with its path ("runs[1].epochs[0].train_loss"), so
// a hand-edited or truncated file says where it went wrong.
class ResultReader {
 public:
  ResultReader(const std::string& label, std::string* error) : label_(label), error_(error) {}

  template <typename T>
  bool member(const QJsonObject& o, const std::string& path, const char* key, T* out) {
    return read(o.value(key), path.empty() ? key : path + "." + key, out);
  }
  // Optional members: the writer leaves them out (no validation data, run not evaluated).
  template <typename T>
  bool optional(const QJsonObject& o, const std::string& path, const char* key, T* out,
                bool* present = nullptr) {
    if (present) *present = o.contains(key);
    return !o.contains(key) || member(o, path, key, out);
  }

  bool read(const QJsonValue& v, const std::string& path, QJsonObject* out) {
    if (!v.isObject()) return fail(v, path, "an object");
    *out = v.toObject();
    return true;
  }
  bool read(const QJsonValue& v, const std::string& path, std::string* out) {
    if (!v.isString()) return fail(v, path, "a string");
    *out = v.toString().toStdString();
    return true;
  }
  bool read(const QJsonValue& v, const std::string& path, double* out) {
    // The writer turns non-finite figures (a diverged loss) into null.
    if (v.isNull()) return *out = std::numeric_limits<double>::quiet_NaN(), true;
    if (!v.isDouble()) return fail(v, path, "a number");
    *out = v.toDouble();
    return true;
  }
  bool read(const QJsonValue& v, const std::string& path, float* out) {
    double wide = 0;
    if (!read(v, path, &wide)) return false;
    *out = static_cast<float>(wide);
    return true;
  }
  template <typename Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
  bool read(const QJsonValue& v, const std::string& path, Int* out) {
    const double d = v.toDouble(0.5);
    if (!v.isDouble() || d != std::floor(d) || d < double(std::numeric_limits<Int>::min()) ||
        d > double(std::numeric_limits<Int>::max())) {
      return fail(v, path, "an integer in range");
    }
    *out = static_cast<Int>(v.toInteger());
    return true;
  }
  template <typename T>
  bool read(const QJsonValue& v, const std::string& path, std::vector<T>* out) {
    if (!v.isArray()) return fail(v, path, "an array");
    const QJsonArray items = v.toArray();
    out->assign(static_cast<size_t>(items.size()), T());
    for (qsizetype i = 0; i < items.size(); ++i) {
      if (!read(items[i], path + "[" + std::to_string(i) + "]", &(*out)[size_t(i)])) return false;
    }
    return true;
  }
  bool read(const QJsonValue& v, const std::string& path, ExperimentStatus* out) {
    return read_name(v, path, experiment_status_name,
                     {ExperimentStatus::kNotRun, ExperimentStatus::kCompleted,
                      ExperimentStatus::kCancelled, ExperimentStatus::kFailed},
                     out);
  }
  bool read(const QJsonValue& v, const std::string& path, TrainingOutcome* out) {
    return read_name(
        v, path, training_outcome_name,
        {TrainingOutcome::kNotRun, TrainingOutcome::kCompleted, TrainingOutcome::kEarlyStopped,
         TrainingOutcome::kCancelled, TrainingOutcome::kFailed},
        out);
  }
  bool read(const QJsonValue& v, const std::string& path, Figure* out) {
    QJsonObject o;
    return read(v, path, &o) && member(o, path, "mean", &out->mean) &&
           member(o, path, "std", &out->std) && member(o, path, "count", &out->count);
  }
  bool read(const QJsonValue& v, const std::string& path, TrainingMemory* out) {
    QJsonObject o;
    return read(v, path, &o) && member(o, path, "total", &out->total) &&
           member(o, path, "weights", &out->weight_bytes) &&
           member(o, path, "gradients", &out->gradient_bytes) &&
           member(o, path, "optimizer", &out->optimizer_bytes) &&
           member(o, path, "activations", &out->activation_bytes) &&
           member(o, path, "other", &out->other_bytes);
  }
  bool read(const QJsonValue& v, const std::string& path, ClassMetrics* out) {
    QJsonObject o;
    return read(v, path, &o) && member(o, path, "accuracy", &out->accuracy) &&
           member(o, path, "samples", &out->samples) &&
           member(o, path, "precision", &out->precision) &&
           member(o, path, "recall", &out->recall) && member(o, path, "confusion", &out->confusion);
  }
  bool read(const QJsonValue& v, const std::string& path, EpochGradientStats* out) {
    QJsonObject o;
    return read(v, path, &o) && member(o, path, "name", &out->name) &&
           member(o, path, "mean_norm", &out->mean_norm) &&
           member(o, path, "last_norm", &out->last_norm) &&
           member(o, path, "max_norm", &out->max_norm) && member(o, path, "min", &out->min) &&
           member(o, path, "max", &out->max);
  }
  bool read(const QJsonValue& v, const std::string& path, EpochMetrics* out) {
    QJsonObject o;
    // Experiments always train classifiers (categorical cross entropy).
    out->has_accuracy = true;
    return read(v, path, &o) && member(o, path, "epoch", &out->epoch) &&
           member(o, path, "steps", &out->steps) &&
           member(o, path, "train_loss", &out->train_loss) &&
           member(o, path, "train_accuracy", &out->train_accuracy) &&
           optional(o, path, "val_loss", &out->val_loss, &out->has_val) &&
           optional(o, path, "val_accuracy", &out->val_accuracy) &&
           optional(o, path, "val_precision", &out->val_classes.precision) &&
           optional(o, path, "val_recall", &out->val_classes.recall) &&
           member(o, path, "train_precision", &out->train_classes.precision) &&
           member(o, path, "train_recall", &out->train_classes.recall) &&
           member(o, path, "seconds", &out->seconds) &&
           member(o, path, "samples_per_second", &out->samples_per_second) &&
           member(o, path, "gradients", &out->gradients);
  }
  bool read(const QJsonValue& v, const std::string& path, DeployFigures* out) {
    QJsonObject o;
    return read(v, path, &o) && member(o, path, "model_bytes", &out->model_bytes) &&
           member(o, path, "weight_bytes", &out->weight_bytes) &&
           member(o, path, "arena_bytes", &out->arena_bytes) &&
           member(o, path, "latency_us", &out->latency_us);
  }
  bool read(const QJsonValue& v, const std::string& path, QuantizationFigures* out) {
    QJsonObject o;
    return read(v, path, &o) && member(o, path, "mode", &out->mode) &&
           member(o, path, "source_stage", &out->source_stage) &&
           optional(o, path, "source_accuracy", &out->source_accuracy, &out->source_evaluated) &&
           member(o, path, "source", &out->source) &&
           member(o, path, "quantized", &out->quantized) &&
           member(o, path, "kept_float", &out->kept_float);
  }
  bool read(const QJsonValue& v, const std::string& path, StageRun* out) {
    QJsonObject o;
    return read(v, path, &o) && member(o, path, "cell", &out->cell) &&
           member(o, path, "stage", &out->stage) && member(o, path, "seed", &out->seed) &&
           // Results saved before these were kept: unknown.
           optional(o, path, "cell_type", &out->cell_type) &&
           optional(o, path, "units", &out->units) &&
           optional(o, path, "model_bytes", &out->model_bytes) &&
           member(o, path, "outcome", &out->training.outcome) &&
           member(o, path, "error", &out->error) && member(o, path, "seconds", &out->seconds) &&
           optional(o, path, "test_loss", &out->test_loss, &out->evaluated) &&
           optional(o, path, "test_accuracy", &out->test_accuracy) &&
           optional(o, path, "test_classes", &out->test_classes) &&
           member(o, path, "trainable_parameters", &out->training.trainable_parameters) &&
           member(o, path, "best_epoch", &out->training.best_epoch) &&
           member(o, path, "training_memory", &out->training.memory) &&
           member(o, path, "epochs", &out->training.epochs) &&
           optional(o, path, "quantization", &out->quantization, &out->quantized);
  }
  bool read(const QJsonValue& v, const std::string& path, StageSummary* out) {
    QJsonObject o;
    const bool ok = read(v, path, &o) && member(o, path, "cell", &out->cell) &&
                    member(o, path, "stage", &out->stage) &&
                    member(o, path, "test_accuracy", &out->accuracy) &&
                    member(o, path, "test_loss", &out->loss) &&
                    optional(o, path, "delta_accuracy", &out->delta_accuracy, &out->has_delta) &&
                    optional(o, path, "delta_loss", &out->delta_loss) &&
                    member(o, path, "trainable_parameters", &out->trainable_parameters) &&
                    member(o, path, "training_memory", &out->memory) &&
                    member(o, path, "epochs_run", &out->epochs_run) &&
                    optional(o, path, "quantization", &out->quantization, &out->quantized) &&
                    optional(o, path, "source_test_accuracy", &out->source_accuracy);
    out->training_memory_bytes = out->memory.total;
    return ok;
  }
  bool read(const QJsonValue& v, const std::string& path, CellSummary* out) {
    QJsonObject o;
    return read(v, path, &o) && member(o, path, "cell", &out->cell) &&
           member(o, path, "test_accuracy", &out->accuracy) &&
           member(o, path, "fused_bytes", &out->fused_bytes) &&
           member(o, path, "while_bytes", &out->while_bytes) &&
           optional(o, path, "unrolled_bytes", &out->unrolled_bytes) &&
           member(o, path, "parameters", &out->parameters) &&
           member(o, path, "arena_bytes", &out->arena_bytes) &&
           member(o, path, "latency_us", &out->latency_us) &&
           // Results saved before model rows and boards: absent.
           optional(o, path, "model_path", &out->model_path) &&
           optional(o, path, "model", &out->model) &&
           optional(o, path, "board_latency_us", &out->board_latency_us) &&
           optional(o, path, "board_cycles", &out->board_cycles) &&
           optional(o, path, "board", &out->board) &&
           optional(o, path, "board_note", &out->board_note) &&
           optional(o, path, "fuse_note", &out->fuse_note) &&
           optional(o, path, "error", &out->error);
  }

 private:
  template <typename Enum>
  bool read_name(const QJsonValue& v, const std::string& path, const char* (*name)(Enum),
                 std::initializer_list<Enum> values, Enum* out) {
    std::string text;
    if (!read(v, path, &text)) return false;
    for (Enum value : values) {
      if (text == name(value)) return *out = value, true;
    }
    *error_ = label_ + ": member '" + path + "' is '" + text + "', not a known state";
    return false;
  }
  bool fail(const QJsonValue& v, const std::string& path, const char* expected) {
    *error_ = label_ + ": member '" + path + "' " +
              (v.isUndefined() ? std::string("is missing") : "is not " + std::string(expected));
    return false;
  }

  const std::string label_;
  std::string* error_;
};

}  // namespace

bool parse_experiment_spec(const std::string& text, const std::string& label, ExperimentSpec* out,
                           std::string* error) {
  QJsonObject o;
  if (!parse_json_object(text, label, &o, error)) return false;
  return read_spec(o.contains("spec") ? o.value("spec").toObject() : o, label, out, error);
}

bool parse_experiment_result(const std::string& text, const std::string& label,
                             ExperimentResult* out, std::string* error) {
  QJsonObject o, spec, data;
  ResultReader r(label, error);
  if (!parse_json_object(text, label, &o, error) || !r.member(o, "", "spec", &spec)) return false;
  ExperimentResult result;
  if (!read_spec(spec, label + ": spec", &result.spec, error)) return false;
  const bool ok =
      r.member(o, "", "status", &result.status) && r.member(o, "", "error", &result.error) &&
      r.member(o, "", "started", &result.started) && r.member(o, "", "seconds", &result.seconds) &&
      r.member(o, "", "data", &data) && r.member(data, "data", "name", &result.data_name) &&
      r.member(data, "data", "timesteps", &result.timesteps) &&
      r.member(data, "data", "features", &result.features) &&
      r.member(data, "data", "classes", &result.class_names) &&
      r.member(data, "data", "train", &result.train_count) &&
      r.member(data, "data", "validation", &result.validation_count) &&
      r.member(data, "data", "test", &result.test_count) &&
      r.member(data, "data", "notes", &result.data_notes) &&
      r.member(o, "", "summary", &result.summary) && r.member(o, "", "cells", &result.cells) &&
      r.member(o, "", "runs", &result.runs);
  if (!ok) return false;
  *out = std::move(result);
  return true;
}

bool load_experiment_spec(const std::string& path, ExperimentSpec* out, std::string* error) {
  QFile file(QString::fromStdString(path));
  if (!file.open(QIODevice::ReadOnly)) {
    *error = path + ": cannot open file";
    return false;
  }
  return parse_experiment_spec(file.readAll().toStdString(), path, out, error);
}

bool save_text_atomically(const std::string& path, const std::string& text, std::string* error) {
  return tools::write_file_atomically(path, std::vector<uint8_t>(text.begin(), text.end()), error);
}

}  // namespace gruwb::app
