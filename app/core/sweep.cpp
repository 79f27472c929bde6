#include "app/core/sweep.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "app/core/text_table.h"
#include "engine/tools/model_file.h"

namespace gruwb::app {
namespace {

constexpr size_t kMaxRuns = 100000;  // sweep.json stays readable; Slurm arrays are smaller still

const char* const kBuildKeys[] = {"cell",        "units",     "dense", "layout",
                                  "reset_after", "bias_init", "format"};

bool is_build_key(const std::string& name) {
  return std::find(std::begin(kBuildKeys), std::end(kBuildKeys), name) != std::end(kBuildKeys);
}

std::string number_text(double v) {
  char text[32];
  if (std::fabs(v) < 1e15 && v == std::floor(v)) {
    std::snprintf(text, sizeof text, "%.0f", v);
  } else {
    std::snprintf(text, sizeof text, "%.6g", v);
  }
  return text;
}

bool value_text(const QJsonValue& v, std::string* out) {
  if (v.isString()) return *out = v.toString().toStdString(), true;
  if (v.isBool()) return *out = v.toBool() ? "true" : "false", true;
  if (v.isDouble()) return *out = number_text(v.toDouble()), true;
  return false;
}

bool read_text(const std::string& path, std::string* text, std::string* error) {
  std::vector<uint8_t> bytes;
  if (!tools::read_file_bytes(path, &bytes, error)) return false;
  text->assign(bytes.begin(), bytes.end());
  return true;
}

std::string absolute_path(const std::string& base_dir, const std::string& path) {
  if (path.empty()) return path;
  return QDir::cleanPath(
             QDir(QString::fromStdString(base_dir)).absoluteFilePath(QString::fromStdString(path)))
      .toStdString();
}

// "cell=gru,units=8" with key=value set (replaced, or added at the end).
std::string set_build_key(const std::string& build, const std::string& key,
                          const std::string& value) {
  std::string out;
  bool replaced = false;
  size_t start = 0;
  while (start <= build.size()) {
    size_t comma = build.find(',', start);
    if (comma == std::string::npos) comma = build.size();
    std::string item = build.substr(start, comma - start);
    if (item.compare(0, key.size() + 1, key + "=") == 0) item = key + "=" + value, replaced = true;
    if (!item.empty()) out += (out.empty() ? "" : ",") + item;
    start = comma + 1;
  }
  if (!replaced) out += (out.empty() ? "" : ",") + key + "=" + value;
  return out;
}

bool is_training_stage(const StageSpec& stage) {
  return stage.scope != "init" && !is_quantization_scope(stage.scope);
}

bool whole_number(const SweepParam& p, long long low, long long high, long long* out,
                  std::string* error) {
  char* end = nullptr;
  const long long v = std::strtoll(p.value.c_str(), &end, 10);
  if (p.value.empty() || *end != '\0' || v < low || v > high) {
    *error = "setting " + p.name + "='" + p.value + "': expected a whole number in " +
             std::to_string(low) + ".." + std::to_string(high);
    return false;
  }
  *out = v;
  return true;
}

bool real_number(const SweepParam& p, double low, double high, double* out, std::string* error) {
  char* end = nullptr;
  const double v = std::strtod(p.value.c_str(), &end);
  if (p.value.empty() || *end != '\0' || !(v >= low && v <= high)) {
    *error = "setting " + p.name + "='" + p.value + "': expected a number in " + number_text(low) +
             ".." + number_text(high);
    return false;
  }
  *out = v;
  return true;
}

// A grid axis or a random dimension.
struct Axis {
  std::string name;
  std::vector<std::string> values;  // grid, or a random choice
  std::string distribution;         // random: "uniform", "log_uniform", "int_uniform", "choice"
  double low = 0, high = 0;
};

bool read_values(const QJsonValue& v, const std::string& where, std::vector<std::string>* out,
                 std::string* error) {
  const QJsonArray items = v.isArray() ? v.toArray() : QJsonArray{v};
  for (const QJsonValue& item : items) {
    std::string text;
    if (!value_text(item, &text)) {
      *error = where + ": values must be strings, numbers or true/false";
      return false;
    }
    out->push_back(text);
  }
  if (out->empty()) {
    *error = where + ": no values";
    return false;
  }
  return true;
}

bool read_random_axis(const QString& name, const QJsonValue& v, const std::string& where,
                      Axis* axis, std::string* error) {
  axis->name = name.toStdString();
  if (!v.isObject()) {
    axis->distribution = "choice";
    return read_values(v, where, &axis->values, error);
  }
  const QJsonObject o = v.toObject();
  for (const char* kind : {"uniform", "log_uniform", "int_uniform"}) {
    const QJsonArray range = o.value(kind).toArray();
    if (!o.contains(kind)) continue;
    axis->distribution = kind;
    if (range.size() != 2 || !range[0].isDouble() || !range[1].isDouble() ||
        !(range[0].toDouble() <= range[1].toDouble()) ||
        (axis->distribution == "log_uniform" && !(range[0].toDouble() > 0))) {
      *error = where + ": " + kind + " takes [low, high] with low <= high" +
               (axis->distribution == "log_uniform" ? " and low > 0" : "");
      return false;
    }
    axis->low = range[0].toDouble();
    axis->high = range[1].toDouble();
    return true;
  }
  *error = where + ": expected a list of values or {\"uniform\"|\"log_uniform\"|" +
           "\"int_uniform\": [low, high]}";
  return false;
}

// A uniform double in [0, 1) from 53 random bits: the same on every platform
// (std::uniform_real_distribution is not).
double unit_random(std::mt19937_64* rng) { return static_cast<double>((*rng)() >> 11) * 0x1p-53; }

std::string sample(const Axis& axis, std::mt19937_64* rng) {
  const double u = unit_random(rng);
  if (axis.distribution == "choice") {
    return axis
        .values[std::min(axis.values.size() - 1, static_cast<size_t>(u * axis.values.size()))];
  }
  if (axis.distribution == "int_uniform") {
    const double span = std::floor(axis.high) - std::ceil(axis.low) + 1;
    return number_text(std::ceil(axis.low) + std::min(span - 1, std::floor(u * span)));
  }
  char text[32];
  const double v =
      axis.distribution == "uniform"
          ? axis.low + u * (axis.high - axis.low)
          : std::exp(std::log(axis.low) + u * (std::log(axis.high) - std::log(axis.low)));
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

int apply_order(const std::string& name) {
  return name == "stages" ? 0 : name == "quantize" ? 2 : 1;
}

}  // namespace

const char* sweep_setting_names() {
  return "cell, units, dense, layout, reset_after, bias_init, format, lr, batch, epochs, "
         "optimizer, patience, clip, stages, seed, seeds, quantize, timesteps, validation, "
         "normalize, length, data";
}

bool apply_sweep_param(const SweepParam& p, ExperimentSpec* spec, std::string* error) {
  long long whole = 0;
  double real = 0;
  if (is_build_key(p.name)) {
    if (spec->build.empty()) {
      *error = "setting '" + p.name + "' needs a build spec (\"build\") in the experiment";
      return false;
    }
    spec->build = set_build_key(spec->build, p.name, p.value);
    return true;
  }
  const auto each_training_stage = [&](auto set) {
    for (StageSpec& stage : spec->stages) {
      if (is_training_stage(stage)) set(stage);
    }
  };
  if (p.name == "lr") {
    if (!real_number(p, 1e-9, 100, &real, error)) return false;
    each_training_stage([&](StageSpec& s) { s.learning_rate = static_cast<float>(real); });
  } else if (p.name == "batch") {
    if (!whole_number(p, 1, 100000, &whole, error)) return false;
    each_training_stage([&](StageSpec& s) { s.batch_size = static_cast<int>(whole); });
  } else if (p.name == "epochs") {
    if (!whole_number(p, 0, 100000, &whole, error)) return false;
    each_training_stage([&](StageSpec& s) { s.epochs = static_cast<int>(whole); });
  } else if (p.name == "patience") {
    if (!whole_number(p, 0, 100000, &whole, error)) return false;
    each_training_stage([&](StageSpec& s) { s.patience = static_cast<int>(whole); });
  } else if (p.name == "clip") {
    if (!real_number(p, 0, 1e9, &real, error)) return false;
    each_training_stage([&](StageSpec& s) { s.clip_norm = static_cast<float>(real); });
  } else if (p.name == "optimizer") {
    if (p.value != "adam" && p.value != "sgd") {
      *error = "setting optimizer='" + p.value + "': expected adam or sgd";
      return false;
    }
    each_training_stage(
        [&](StageSpec& s) { s.optimizer = p.value == "sgd" ? Optimizer::kSgd : Optimizer::kAdam; });
  } else if (p.name == "stages") {
    StageSpec defaults;  // the experiment's first training stage, else gruwb experiment's
    defaults.learning_rate = 0.005f;
    defaults.batch_size = 8;
    for (const StageSpec& s : spec->stages) {
      if (is_training_stage(s)) {
        defaults = s;
        break;
      }
    }
    std::vector<StageSpec> stages;
    if (!parse_stages(p.value, defaults, &stages, error)) {
      *error = "setting stages='" + p.value + "': " + *error;
      return false;
    }
    spec->stages = stages;
  } else if (p.name == "quantize") {
    if (p.value != "none" && !is_quantization_scope(p.value)) {
      *error = "setting quantize='" + p.value + "': expected none, int8, int16x8 or dynamic";
      return false;
    }
    if (p.value != "none") {
      StageSpec stage;
      stage.name = stage.scope = p.value;
      spec->stages.push_back(stage);
    }
  } else if (p.name == "seed") {
    if (!whole_number(p, 0, 1 << 30, &whole, error)) return false;
    spec->first_seed = static_cast<uint64_t>(whole);
  } else if (p.name == "seeds") {
    if (!whole_number(p, 1, 1000, &whole, error)) return false;
    spec->seeds = static_cast<int>(whole);
  } else if (p.name == "timesteps") {
    if (!whole_number(p, 1, 1 << 20, &whole, error)) return false;
    spec->timesteps = static_cast<int>(whole);
  } else if (p.name == "validation") {
    if (!real_number(p, 0, 0.9, &real, error)) return false;
    spec->validation_fraction = real;
  } else if (p.name == "normalize") {
    spec->normalize = p.value;  // check_experiment_spec names a bad one
  } else if (p.name == "length") {
    if (!parse_length_policy(p.value, &spec->length_policy)) {
      *error = "setting length='" + p.value + "': expected exact, crop, pad or resample";
      return false;
    }
  } else if (p.name == "data") {
    spec->data_path = p.value;
  } else {
    *error = "unknown setting '" + p.name + "' (" + sweep_setting_names() + ")";
    return false;
  }
  return true;
}

namespace {
// Stages first (they reset every stage's settings), quantize last (it adds a stage).
bool apply_in_order(std::vector<SweepParam> params, ExperimentSpec* spec, std::string* error) {
  std::stable_sort(params.begin(), params.end(), [](const SweepParam& a, const SweepParam& b) {
    return apply_order(a.name) < apply_order(b.name);
  });
  for (const SweepParam& p : params) {
    if (!apply_sweep_param(p, spec, error)) return false;
  }
  return true;
}
}  // namespace

std::string sweep_run_label(const SweepRun& run) {
  std::string label = "r" + std::to_string(run.index);
  for (const SweepParam& p : run.params) label += " " + p.name + "=" + p.value;
  return label;
}

bool parse_sweep_spec(const std::string& text, const std::string& label,
                      const std::string& base_dir, SweepSpec* out, std::string* error) {
  QJsonObject o;
  if (!parse_json_object(text, label, &o, error)) return false;
  if (o.value("format").toString() != "gruwb-sweep-1") {
    *error = label + ": not a GRU Workbench sweep (format is not gruwb-sweep-1)";
    return false;
  }
  SweepSpec spec;
  spec.name = o.value("name").toString("sweep").toStdString();
  // The experiment every run starts from: inline, or a spec/result file.
  ExperimentSpec base;
  const QJsonValue experiment = o.value("experiment");
  if (experiment.isString()) {
    if (!load_experiment_spec(absolute_path(base_dir, experiment.toString().toStdString()), &base,
                              error)) {
      return false;
    }
  } else if (experiment.isObject()) {
    QJsonObject e = experiment.toObject();
    if (!e.contains("format")) e.insert("format", "gruwb-experiment-1");
    // Stages as text ("init,fc,all", default "all") take gruwb experiment's
    // settings (lr 0.005, batch 8, 20 epochs) unless "fixed" or the grid set them.
    const QJsonValue stages = e.value("stages");
    if (!stages.isArray()) {
      e.insert("stages", QJsonArray{QJsonObject{
                             {"scope", "all"}, {"learning_rate", 0.005}, {"batch_size", 8}}});
    }
    if (!parse_experiment_spec(QJsonDocument(e).toJson().toStdString(), label + ": experiment",
                               &base, error)) {
      return false;
    }
    if (!stages.isArray()) {
      const SweepParam p{"stages", stages.isString() ? stages.toString().toStdString() : "all"};
      if (!apply_sweep_param(p, &base, error)) return *error = label + ": " + *error, false;
    }
  } else {
    *error = label + ": member 'experiment' (an experiment object or file) is missing";
    return false;
  }
  // "fixed": settings every run shares (not columns of the table).
  std::vector<SweepParam> fixed;
  const QJsonObject fixed_object = o.value("fixed").toObject();
  for (auto it = fixed_object.begin(); it != fixed_object.end(); ++it) {
    std::string value;
    if (!value_text(it.value(), &value)) {
      *error = label + ": fixed." + it.key().toStdString() +
               ": a value must be a string, a number or true/false";
      return false;
    }
    fixed.push_back({it.key().toStdString(), value});
  }
  if (!apply_in_order(fixed, &base, error)) return *error = label + ": " + *error, false;
  base.data_path = absolute_path(base_dir, base.data_path);
  base.model_path = absolute_path(base_dir, base.model_path);
  for (std::string& path : base.compare_models) path = absolute_path(base_dir, path);

  // "grid": {"a": [...], "b": [...]} (keys in alphabetical order: JSON objects
  // keep none) or [{"a": [...]}, {"b": [...]}] in the order given.
  std::vector<Axis> grid, random;
  const QJsonValue grid_value = o.value("grid");
  const QJsonArray grid_parts =
      grid_value.isArray() ? grid_value.toArray() : QJsonArray{grid_value.toObject()};
  for (const QJsonValue& part : grid_parts) {
    if (!part.isObject()) {
      *error = label + ": grid: expected an object of settings, or a list of them";
      return false;
    }
    const QJsonObject grid_object = part.toObject();
    for (auto it = grid_object.begin(); it != grid_object.end(); ++it) {
      Axis axis;
      axis.name = it.key().toStdString();
      if (!read_values(it.value(), label + ": grid." + axis.name, &axis.values, error)) {
        return false;
      }
      grid.push_back(axis);
    }
  }
  int trials = 0;
  uint64_t random_seed = 1;
  if (o.contains("random")) {
    const QJsonObject r = o.value("random").toObject();
    trials = r.value("trials").toInt(0);
    random_seed = static_cast<uint64_t>(r.value("seed").toInteger(1));
    if (trials < 1 || trials > static_cast<int>(kMaxRuns)) {
      *error = label + ": random.trials must be in 1.." + std::to_string(kMaxRuns);
      return false;
    }
    const QJsonObject space = r.value("space").toObject();
    if (space.isEmpty()) {
      *error = label + ": random.space is empty (give settings to sample)";
      return false;
    }
    for (auto it = space.begin(); it != space.end(); ++it) {
      Axis axis;
      if (!read_random_axis(it.key(), it.value(),
                            label + ": random.space." + it.key().toStdString(), &axis, error)) {
        return false;
      }
      random.push_back(axis);
    }
  }
  size_t count = 1;
  for (const Axis& axis : grid) {
    count *= axis.values.size();
    if (count > kMaxRuns) break;
  }
  if (trials > 0 && count <= kMaxRuns) count *= static_cast<size_t>(trials);
  if (count > kMaxRuns) {
    *error = label + ": more than " + std::to_string(kMaxRuns) + " runs";
    return false;
  }
  // Grid points in order (the last setting varies fastest), each with every random trial.
  std::mt19937_64 rng(random_seed);
  std::vector<std::vector<SweepParam>> random_trials(std::max(trials, 1));
  for (int t = 0; t < trials; ++t) {
    for (const Axis& axis : random) random_trials[t].push_back({axis.name, sample(axis, &rng)});
  }
  const size_t points = trials > 0 ? count / static_cast<size_t>(trials) : count;
  for (size_t point = 0; point < points; ++point) {
    std::vector<SweepParam> grid_params(grid.size());
    size_t rest = point;
    for (size_t a = grid.size(); a-- > 0;) {
      grid_params[a] = {grid[a].name, grid[a].values[rest % grid[a].values.size()]};
      rest /= grid[a].values.size();
    }
    for (const std::vector<SweepParam>& trial : random_trials) {
      SweepRun run;
      run.index = static_cast<int>(spec.runs.size());
      run.params = grid_params;
      run.params.insert(run.params.end(), trial.begin(), trial.end());
      run.experiment = base;
      if (!apply_in_order(run.params, &run.experiment, error)) {
        *error = label + ": " + *error;
        return false;
      }
      run.experiment.data_path = absolute_path(base_dir, run.experiment.data_path);
      run.experiment.name = spec.name + ": " + sweep_run_label(run);
      if (!check_experiment_spec(run.experiment, error)) {
        *error = label + ": run " + sweep_run_label(run) + ": " + *error;
        return false;
      }
      spec.runs.push_back(std::move(run));
    }
  }
  *out = std::move(spec);
  return true;
}

bool load_sweep_spec(const std::string& path, SweepSpec* out, std::string* error) {
  std::string text;
  if (!read_text(path, &text, error)) return false;
  return parse_sweep_spec(
      text, path, QFileInfo(QString::fromStdString(path)).absolutePath().toStdString(), out, error);
}

// ---- the folder ------------------------------------------------------------------------

namespace {

QJsonObject json_object_of(const std::string& text) {
  return QJsonDocument::fromJson(QByteArray::fromStdString(text)).object();
}

std::string run_file(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "run-%04d", index);
  return name;
}

}  // namespace

std::string sweep_folder_json(const SweepSpec& spec) {
  QJsonArray runs;
  for (const SweepRun& run : spec.runs) {
    QJsonArray params;
    for (const SweepParam& p : run.params) {
      params.append(QJsonObject{{"name", QString::fromStdString(p.name)},
                                {"value", QString::fromStdString(p.value)}});
    }
    runs.append(QJsonObject{{"index", run.index},
                            {"params", params},
                            {"experiment", json_object_of(experiment_spec_json(run.experiment))}});
  }
  const QJsonObject o{{"format", "gruwb-sweep-folder-1"},
                      {"name", QString::fromStdString(spec.name)},
                      {"runs", runs}};
  return QJsonDocument(o).toJson().toStdString();
}

std::string sweep_result_path(const std::string& dir, int index) {
  return dir + "/runs/" + run_file(index) + ".json";
}

std::string sweep_log_path(const std::string& dir, int index) {
  return dir + "/logs/" + run_file(index) + ".log";
}

bool open_sweep_folder(const std::string& dir, SweepSpec* out, std::string* error) {
  const std::string path = dir + "/sweep.json";
  std::string text;
  QJsonObject o;
  if (!read_text(path, &text, error) || !parse_json_object(text, path, &o, error)) return false;
  if (o.value("format").toString() != "gruwb-sweep-folder-1") {
    *error = path + ": not a sweep folder (format is not gruwb-sweep-folder-1)";
    return false;
  }
  SweepSpec spec;
  spec.name = o.value("name").toString().toStdString();
  for (const QJsonValue& v : o.value("runs").toArray()) {
    const QJsonObject r = v.toObject();
    SweepRun run;
    run.index = static_cast<int>(spec.runs.size());
    for (const QJsonValue& p : r.value("params").toArray()) {
      run.params.push_back({p.toObject().value("name").toString().toStdString(),
                            p.toObject().value("value").toString().toStdString()});
    }
    const std::string where = path + ": runs[" + std::to_string(run.index) + "]";
    if (!parse_experiment_spec(
            QJsonDocument(r.value("experiment").toObject()).toJson().toStdString(), where,
            &run.experiment, error)) {
      return false;
    }
    spec.runs.push_back(std::move(run));
  }
  if (spec.runs.empty()) {
    *error = path + ": no runs";
    return false;
  }
  *out = std::move(spec);
  return true;
}

bool prepare_sweep_folder(const std::string& dir, const SweepSpec& spec, std::string* error) {
  const std::string text = sweep_folder_json(spec);
  const std::string path = dir + "/sweep.json";
  if (QFileInfo::exists(QString::fromStdString(path))) {
    std::string existing;
    if (!read_text(path, &existing, error)) return false;
    if (existing != text) {
      *error = dir + " holds a different sweep (its sweep.json differs); use another folder";
      return false;
    }
  }
  for (const char* sub : {"runs", "logs"}) {
    if (!QDir().mkpath(QString::fromStdString(dir + "/" + sub))) {
      *error = dir + "/" + sub + ": cannot create the folder";
      return false;
    }
  }
  return save_text_atomically(path, text, error);
}

const char* sweep_run_state_name(SweepRunState state) {
  switch (state) {
    case SweepRunState::kPending: return "pending";
    case SweepRunState::kFinished: return "finished";
    case SweepRunState::kFailed: return "failed";
  }
  return "?";
}

std::vector<SweepRunStatus> sweep_status(const std::string& dir, const SweepSpec& spec) {
  std::vector<SweepRunStatus> out(spec.runs.size());
  for (size_t i = 0; i < spec.runs.size(); ++i) {
    std::string text, ignored;
    if (!read_text(sweep_result_path(dir, static_cast<int>(i)), &text, &ignored)) continue;
    const QJsonObject o = json_object_of(text);
    const QString status = o.value("status").toString();
    if (status == "completed") out[i].state = SweepRunState::kFinished;
    if (status == "failed") {
      out[i].state = SweepRunState::kFailed;
      out[i].error = o.value("error").toString().toStdString();
    }
  }
  return out;
}

std::vector<int> sweep_runs_to_do(const std::vector<SweepRunStatus>& status, bool retry_failed) {
  std::vector<int> out;
  for (size_t i = 0; i < status.size(); ++i) {
    if (status[i].state == SweepRunState::kPending ||
        (retry_failed && status[i].state == SweepRunState::kFailed)) {
      out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

ExperimentResult run_sweep_task(const std::string& dir, const SweepSpec& spec, int index,
                                const ExperimentCallback& callback,
                                const std::atomic<bool>* cancel) {
  const SweepRun& run = spec.runs.at(static_cast<size_t>(index));
  const std::string path = sweep_result_path(dir, index);
  std::string text, error;
  if (read_text(path, &text, &error)) {
    ExperimentResult done;
    if (parse_experiment_result(text, path, &done, &error) &&
        done.status == ExperimentStatus::kCompleted) {
      return done;
    }
  }
  return run_experiment(run.experiment, callback, cancel, path);
}

// ---- collecting ------------------------------------------------------------------------

namespace {

void fill_row(const ExperimentResult& r, SweepRow* row) {
  row->seconds = r.seconds;
  if (r.summary.empty()) return;
  const StageSummary& last = r.summary.back();
  row->accuracy = last.accuracy.mean;
  row->loss = last.loss.mean;
  for (const StageSummary& s : r.summary) {
    if (s.cell == last.cell) row->parameters = std::max(row->parameters, s.trainable_parameters);
  }
  if (last.quantized) {
    row->model_bytes = last.quantization.quantized.model_bytes;
    row->arena_bytes = last.quantization.quantized.arena_bytes;
    row->latency_us = last.quantization.quantized.latency_us;
    return;
  }
  for (const CellSummary& c : r.cells) {
    if (c.cell != last.cell) continue;
    row->model_bytes = c.fused_bytes;
    row->arena_bytes = c.arena_bytes;
    row->latency_us = c.latency_us;
    if (c.parameters > 0) row->parameters = static_cast<int64_t>(c.parameters);
  }
}

}  // namespace

bool collect_sweep(const std::string& dir, SweepResult* out, std::string* error) {
  SweepSpec spec;
  if (!open_sweep_folder(dir, &spec, error)) return false;
  SweepResult result;
  result.name = spec.name;
  for (const SweepParam& p : spec.runs[0].params) result.param_names.push_back(p.name);
  ExperimentResult& merged = result.merged;
  bool first = true;
  double seconds = 0;
  for (const SweepRun& run : spec.runs) {
    SweepRow row;
    row.index = run.index;
    row.label = sweep_run_label(run);
    row.params = run.params;
    const std::string path = sweep_result_path(dir, run.index);
    std::string text, ignored;
    ExperimentResult r;
    if (read_text(path, &text, &ignored)) {
      if (!parse_experiment_result(text, path, &r, error)) return false;
      if (r.status == ExperimentStatus::kCompleted) row.state = SweepRunState::kFinished;
      if (r.status == ExperimentStatus::kFailed)
        row.state = SweepRunState::kFailed, row.error = r.error;
    }
    if (row.state == SweepRunState::kFinished) {
      fill_row(r, &row);
      seconds += r.seconds;
      if (first) {
        merged.spec = r.spec;
        merged.spec.name = spec.name;
        merged.started = r.started;
        merged.data_name = r.data_name;
        merged.timesteps = r.timesteps, merged.features = r.features;
        merged.class_names = r.class_names;
        merged.train_count = r.train_count, merged.validation_count = r.validation_count;
        merged.test_count = r.test_count;
        merged.data_notes = r.data_notes;
        first = false;
      }
      merged.started = std::min(merged.started, r.started);
      for (StageRun& s : r.runs) {
        s.cell = row.label;
        merged.runs.push_back(std::move(s));
      }
      for (CellSummary& c : r.cells) {
        c.cell = row.label;
        merged.cells.push_back(std::move(c));
      }
    }
    result.finished += row.state == SweepRunState::kFinished;
    result.failed += row.state == SweepRunState::kFailed;
    result.pending += row.state == SweepRunState::kPending;
    result.rows.push_back(std::move(row));
  }
  merged.seconds = seconds;  // the runs' own time, summed (not the wall time)
  merged.status = result.failed > 0    ? ExperimentStatus::kFailed
                  : result.pending > 0 ? ExperimentStatus::kNotRun
                                       : ExperimentStatus::kCompleted;
  if (result.failed > 0) {
    for (const SweepRow& row : result.rows) {
      if (row.state == SweepRunState::kFailed) {
        merged.error = row.label + ": " + row.error;
        break;
      }
    }
  }
  summarize(&merged);
  *out = std::move(result);
  return true;
}

std::vector<const SweepRow*> best_sweep_rows(const SweepResult& result, size_t count) {
  std::vector<const SweepRow*> rows;
  for (const SweepRow& row : result.rows) {
    if (row.state == SweepRunState::kFinished) rows.push_back(&row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const SweepRow* a, const SweepRow* b) {
    if (a->accuracy != b->accuracy) return a->accuracy > b->accuracy;
    if (a->model_bytes != b->model_bytes) return a->model_bytes < b->model_bytes;
    return a->index < b->index;
  });
  if (rows.size() > count) rows.resize(count);
  return rows;
}

std::vector<std::string> sweep_table_header(const SweepResult& result) {
  std::vector<std::string> header = {"run"};
  header.insert(header.end(), result.param_names.begin(), result.param_names.end());
  for (const char* column : {"state", "test accuracy", "cross entropy", "parameters", "model bytes",
                             "arena bytes", "latency (µs)", "seconds"}) {
    header.push_back(column);
  }
  return header;
}

std::vector<std::string> sweep_table_row(const SweepRow& row, bool plain_numbers) {
  std::vector<std::string> cells = {std::to_string(row.index)};
  for (const SweepParam& p : row.params) cells.push_back(p.value);
  cells.push_back(sweep_run_state_name(row.state));
  const bool done = row.state == SweepRunState::kFinished;
  const auto fixed = [&](const char* format, double v) {
    if (!done) return std::string(plain_numbers ? "" : "-");
    if (plain_numbers) return shortest_text(v);
    char text[64];
    std::snprintf(text, sizeof text, format, v);
    return std::string(text);
  };
  cells.push_back(fixed("%.3f", row.accuracy));
  cells.push_back(fixed("%.3f", row.loss));
  cells.push_back(done ? std::to_string(row.parameters) : plain_numbers ? "" : "-");
  cells.push_back(done ? std::to_string(row.model_bytes) : plain_numbers ? "" : "-");
  cells.push_back(done ? std::to_string(row.arena_bytes) : plain_numbers ? "" : "-");
  cells.push_back(fixed("%.1f", row.latency_us));
  cells.push_back(fixed("%.1f", row.seconds));
  return cells;
}

std::string sweep_result_json(const SweepResult& result) {
  QJsonArray names, rows;
  for (const std::string& n : result.param_names) names.append(QString::fromStdString(n));
  for (const SweepRow& row : result.rows) {
    QJsonArray params;
    for (const SweepParam& p : row.params) {
      params.append(QJsonObject{{"name", QString::fromStdString(p.name)},
                                {"value", QString::fromStdString(p.value)}});
    }
    rows.append(
        QJsonObject{{"index", row.index},
                    {"label", QString::fromStdString(row.label)},
                    {"params", params},
                    {"state", sweep_run_state_name(row.state)},
                    {"error", QString::fromStdString(row.error)},
                    {"test_accuracy", row.accuracy},
                    {"test_loss", row.loss},
                    {"parameters", static_cast<qint64>(row.parameters)},
                    {"model_bytes", static_cast<qint64>(row.model_bytes)},
                    {"arena_bytes", static_cast<qint64>(row.arena_bytes)},
                    {"latency_us", row.latency_us},
                    {"seconds", row.seconds},
                    {"result", QString::fromStdString("runs/" + run_file(row.index) + ".json")}});
  }
  const QJsonObject o{{"format", "gruwb-sweep-result-1"},
                      {"name", QString::fromStdString(result.name)},
                      {"params", names},
                      {"finished", result.finished},
                      {"failed", result.failed},
                      {"pending", result.pending},
                      {"runs", rows},
                      {"merged", json_object_of(experiment_result_json(result.merged))}};
  return QJsonDocument(o).toJson().toStdString();
}

bool parse_sweep_result(const std::string& text, const std::string& label, SweepResult* out,
                        std::string* error) {
  QJsonObject o;
  if (!parse_json_object(text, label, &o, error)) return false;
  if (o.value("format").toString() != "gruwb-sweep-result-1") {
    *error = label + ": not a collected sweep (format is not gruwb-sweep-result-1)";
    return false;
  }
  SweepResult r;
  r.name = o.value("name").toString().toStdString();
  for (const QJsonValue& n : o.value("params").toArray()) {
    r.param_names.push_back(n.toString().toStdString());
  }
  for (const QJsonValue& v : o.value("runs").toArray()) {
    const QJsonObject j = v.toObject();
    SweepRow row;
    row.index = j.value("index").toInt();
    row.label = j.value("label").toString().toStdString();
    for (const QJsonValue& p : j.value("params").toArray()) {
      row.params.push_back({p.toObject().value("name").toString().toStdString(),
                            p.toObject().value("value").toString().toStdString()});
    }
    const QString state = j.value("state").toString();
    row.state = state == "finished" ? SweepRunState::kFinished
                : state == "failed" ? SweepRunState::kFailed
                                    : SweepRunState::kPending;
    row.error = j.value("error").toString().toStdString();
    row.accuracy = j.value("test_accuracy").toDouble();
    row.loss = j.value("test_loss").toDouble();
    row.parameters = j.value("parameters").toInteger();
    row.model_bytes = static_cast<uint64_t>(j.value("model_bytes").toInteger());
    row.arena_bytes = static_cast<uint64_t>(j.value("arena_bytes").toInteger());
    row.latency_us = j.value("latency_us").toDouble();
    row.seconds = j.value("seconds").toDouble();
    if (row.params.size() != r.param_names.size()) {
      *error = label + ": runs[" + std::to_string(r.rows.size()) +
               "]: " + std::to_string(row.params.size()) + " settings, expected " +
               std::to_string(r.param_names.size());
      return false;
    }
    r.rows.push_back(std::move(row));
  }
  r.finished = o.value("finished").toInt();
  r.failed = o.value("failed").toInt();
  r.pending = o.value("pending").toInt();
  if (!parse_experiment_result(QJsonDocument(o.value("merged").toObject()).toJson().toStdString(),
                               label + ": merged", &r.merged, error)) {
    return false;
  }
  *out = std::move(r);
  return true;
}

bool open_sweep_result(const std::string& path, SweepResult* out, std::string* error) {
  const QFileInfo info(QString::fromStdString(path));
  if (info.isDir()) return collect_sweep(path, out, error);
  std::string text;
  return read_text(path, &text, error) && parse_sweep_result(text, path, out, error);
}

// ---- Slurm -----------------------------------------------------------------------------

std::string slurm_array_text(const std::vector<int>& indices) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

namespace {
// Single quotes for the shell: the folder or binary may hold spaces.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

std::string slurm_batch_script(const std::string& dir, const SweepSpec& spec,
                               const std::vector<int>& indices, const SlurmOptions& options) {
  std::string job_name = "gruwb-sweep";
  for (char c : spec.name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') job_name += c;
    if (c == ' ') job_name += '_';
  }
  if (job_name != "gruwb-sweep") job_name.insert(11, "-");
  std::string s = "#!/bin/bash\n";
  s += "# Written by gruwb sweep --slurm: task i runs sweep run i (docs/sweeps.md).\n";
  s += "#SBATCH --job-name=" + job_name.substr(0, 64) + "\n";
  s += "#SBATCH --array=" + slurm_array_text(indices) +
       (options.max_parallel > 0 ? "%" + std::to_string(options.max_parallel) : "") + "\n";
  // %4a: the task id padded to 4 digits, the name sweep_log_path gives.
  s += "#SBATCH --output=" + dir + "/logs/run-%4a.log\n";
  s += "#SBATCH --cpus-per-task=" + std::to_string(options.cpus) + "\n";
  s += "#SBATCH --ntasks=1\n";
  if (!options.partition.empty()) s += "#SBATCH --partition=" + options.partition + "\n";
  if (!options.time.empty()) s += "#SBATCH --time=" + options.time + "\n";
  if (!options.account.empty()) s += "#SBATCH --account=" + options.account + "\n";
  if (!options.memory.empty()) s += "#SBATCH --mem=" + options.memory + "\n";
  for (const std::string& extra : options.extra) s += "#SBATCH " + extra + "\n";
  s += "exec " + shell_quote(options.gruwb) + " sweep --run-task " + shell_quote(dir) +
       " \"$SLURM_ARRAY_TASK_ID\"\n";
  return s;
}

}  // namespace gruwb::app
