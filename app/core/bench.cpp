#include "app/core/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "app/core/inspect.h"
#include "app/core/text_table.h"
#include "app/core/training_session.h"
#include "engine/runtime/op_profiler.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/train/loss_output.h"

namespace gruwb::app {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kInputSeed = 7;    // the same inputs on every run and machine
constexpr int kTrainingSamples = 16;  // random samples cycled through while training
constexpr float kLearningRate = 1e-3f;

double seconds_of(const std::function<bool()>& call, int64_t calls, bool* ok) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < calls && *ok; ++i) *ok = call();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Fills a float tensor with uniform [-1, 1] values, anything else with zeros.
void fill_random(Tensor* tensor, std::mt19937* rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  if (tensor->type != TensorType::FLOAT32) {
    std::memset(tensor->data, 0, tensor->bytes);
    return;
  }
  for (int64_t i = 0; i < tensor->elements(); ++i) tensor->f32()[i] = uniform(*rng);
}

int count_ops(const Model& model) {
  int ops = 0;
  for (int s = 0; s < model.subgraph_count(); ++s) ops += model.subgraph(s).operator_count;
  return ops;
}

std::string fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// A row of the timing table: label, median, min, max, what was timed.
std::vector<std::string> spread_row(const char* label, const Spread& spread, int digits,
                                    const std::string& note) {
  return {label, fixed(spread.median, digits), fixed(spread.min, digits), fixed(spread.max, digits),
          note};
}

void write_spread(tools::JsonWriter& json, const Spread& spread, const char* unit) {
  json.key(std::string("median_") + unit).value(spread.median);
  json.key(std::string("min_") + unit).value(spread.min);
  json.key(std::string("max_") + unit).value(spread.max);
}

// Self time per op kind: an op's time minus that of the ops it ran (a
// WHILE's cond and body), so the shares add up to the whole. Each nested op
// also costs its parent one begin/end pair of clock reads; that cost,
// measured once, is taken off the parent (else a WHILE would be charged for
// the profiler itself).
class SelfTimeProfiler : public OpProfiler {
 public:
  SelfTimeProfiler() {
    constexpr int kPairs = 2000;
    const auto start = Clock::now();
    for (int i = 0; i < kPairs; ++i) {
      begin_op(0, 0);
      end_op(0, 0, "calibration");
    }
    pair_seconds_ = std::chrono::duration<double>(Clock::now() - start).count() / kPairs;
    kinds_.clear();
  }

  bool begin_op(int32_t, int32_t) override {
    open_.push_back({Clock::now(), 0.0, 0});
    return true;
  }
  void end_op(int32_t subgraph, int32_t op, const char* op_name) override {
    const double total = std::chrono::duration<double>(Clock::now() - open_.back().start).count();
    const Open& self = open_.back();
    const double own = std::max(0.0, total - self.nested - self.children * pair_seconds_);
    open_.pop_back();
    if (!open_.empty()) {
      open_.back().nested += total;
      ++open_.back().children;
    }
    Kind& kind = kinds_[op_name];
    kind.seconds += own;
    kind.instances.insert({subgraph, op});
  }

  // Each kind's share of all self time, and that share of `sequence_us`
  // (the unprofiled time per sequence); largest first.
  std::vector<OpTime> times(double sequence_us) const {
    double all = 0.0;
    for (const auto& entry : kinds_) all += entry.second.seconds;
    std::vector<OpTime> out;
    for (const auto& [name, kind] : kinds_) {
      OpTime t;
      t.op = name;
      t.instances = static_cast<int>(kind.instances.size());
      t.share = all > 0 ? kind.seconds / all : 0.0;
      t.microseconds = t.share * sequence_us;
      out.push_back(t);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const OpTime& a, const OpTime& b) { return a.share > b.share; });
    return out;
  }

 private:
  struct Open {
    Clock::time_point start;
    double nested = 0.0;  // seconds of the ops this one ran
    int children = 0;
  };
  struct Kind {
    double seconds = 0.0;
    std::set<std::pair<int32_t, int32_t>> instances;  // (subgraph, op)
  };
  double pair_seconds_ = 0.0;
  std::vector<Open> open_;
  std::map<std::string, Kind> kinds_;
};

// The op kinds with the most self time (at most 10 rows).
std::string op_table(const std::vector<OpTime>& ops) {
  constexpr size_t kRows = 10;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < ops.size() && i < kRows; ++i) {
    rows.push_back({"  " + ops[i].op, std::to_string(ops[i].instances),
                    fixed(ops[i].microseconds, 2), fixed(100.0 * ops[i].share, 1) + "%"});
  }
  std::string text =
      "\nInference by op (share of self time in one more, profiled repetition; µs = share x "
      "median):\n" +
      plain_table({"  op", "ops", "µs", "share"}, rows);
  if (ops.size() > kRows) text += "  (+" + std::to_string(ops.size() - kRows) + " more kinds)\n";
  return text;
}

}  // namespace

Spread spread_of(std::vector<double> values) {
  Spread spread;
  if (values.empty()) return spread;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  spread.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  spread.min = values.front();
  spread.max = values.back();
  return spread;
}

bool time_calls(const std::function<bool()>& call, int repetitions, double min_seconds,
                Timing* out) {
  *out = Timing();
  bool ok = true;
  // One untimed call first: a cold first call (page faults, caches) would
  // end the calibration at once with a count far too small.
  seconds_of(call, 1, &ok);
  // Warm-up and calibration in one: the last doubling gives the call time.
  int64_t calls = 1;
  double elapsed = ok ? seconds_of(call, calls, &ok) : 0.0;
  while (ok && elapsed < min_seconds / 10 && calls < (int64_t{1} << 32)) {
    calls *= 2;
    elapsed = seconds_of(call, calls, &ok);
  }
  if (!ok) return false;
  const double per_call = elapsed / static_cast<double>(calls);
  out->calls_per_repetition =
      per_call > 0 ? std::max<int64_t>(1, static_cast<int64_t>(std::ceil(min_seconds / per_call)))
                   : calls;
  for (int r = 0; r < repetitions; ++r) {
    const double seconds = seconds_of(call, out->calls_per_repetition, &ok);
    if (!ok) return false;
    out->seconds_per_call.push_back(seconds / static_cast<double>(out->calls_per_repetition));
  }
  return true;
}

int bench_inference(const Model& model, int repetitions, double min_seconds, bool per_op,
                    InferenceBench* out, std::string* error) {
  // The timing runs the host's fastest form, with the recurrent weights packed; the arena
  // reported is the one a board plans (`gruwb run --arena`).
  tools::ModelRunner runner;
  runner.set_packed_weights(true);
  ArenaUsage board_arena;
  if (!runner.prepare(model, error) || !runner.board_arena_usage(&board_arena, error)) {
    return kExitBadInput;
  }
  *out = InferenceBench();
  out->arena_bytes = board_arena.total();
  Interpreter& interpreter = runner.interpreter();
  std::mt19937 rng(kInputSeed);
  // The arena reuses an input's memory once it is read (interpreter.h), so
  // each call writes its inputs again, as an application does; copying them
  // costs nanoseconds against the microseconds of an inference.
  std::vector<std::vector<uint8_t>> inputs(runner.input_count());
  for (int i = 0; i < runner.input_count(); ++i) {
    Tensor* tensor = interpreter.input(i);
    fill_random(tensor, &rng);
    inputs[i].assign(tensor->data, tensor->data + tensor->bytes);
  }
  const auto invoke = [&]() {
    for (int i = 0; i < runner.input_count(); ++i) {
      if (!inputs[i].empty())
        memcpy(interpreter.input(i)->data, inputs[i].data(), inputs[i].size());
    }
    interpreter.reset_variables();  // independent windows, as a classifier runs
    return runner.invoke(error);
  };
  Timing timing;
  if (!time_calls(invoke, repetitions, min_seconds, &timing)) return kExitFailure;
  for (double& seconds : timing.seconds_per_call) seconds *= 1e6;
  out->microseconds = spread_of(timing.seconds_per_call);
  out->invokes_per_repetition = timing.calls_per_repetition;
  if (!per_op) return kExitOk;
  // One more repetition with the profiler (its clock reads cost time too,
  // so it stays out of the figures above).
  SelfTimeProfiler profiler;
  interpreter.set_profiler(&profiler);
  bool ok = true;
  seconds_of(invoke, timing.calls_per_repetition, &ok);
  interpreter.set_profiler(nullptr);
  if (!ok) return kExitFailure;
  out->ops = profiler.times(out->microseconds.median);
  return kExitOk;
}

int bench_training(const tools::LoadedModel& loaded, const BenchRequest& request,
                   TrainingBench* out, std::string* error) {
  const std::string& scope = request.train_scope;
  const int batch_size = request.batch_size;
  TrainingRunSpec spec;
  spec.model_bytes = loaded.bytes;
  spec.model_label = loaded.path;
  spec.as_written = request.as_written;
  spec.batched_passes = request.batched_passes;
  spec.config.optimizer = Optimizer::kAdam;
  spec.config.learning_rate = kLearningRate;
  spec.config.batch_size = batch_size;
  if (!set_trainable_scope(scope, &spec, error)) return kExitBadInput;

  // Random samples shaped like the model's input without its batch
  // dimension, labelled round-robin over the output's classes.
  const SubgraphView main = loaded.model.main_subgraph();
  if (main.inputs.size < 1 || main.outputs.size < 1) {
    *error = loaded.path + ": training needs a model with an input and an output";
    return kExitBadInput;
  }
  LossOutputRequest output_request;
  output_request.name = request.loss_output.c_str();
  Status chosen = choose_loss_output(loaded.model, output_request, &spec.config.loss_output);
  if (!chosen.ok()) {
    *error = loaded.path + ": " + chosen.message();
    return kExitBadInput;
  }
  const TensorView input = main.tensor(main.inputs[0]);
  const TensorView output = main.tensor(main.outputs[static_cast<size_t>(spec.config.loss_output)]);
  TrainingData data;
  data.inputs_label = data.labels_label = loaded.path + " (random samples)";
  for (size_t d = input.shape.size && input.shape[0] == 1 ? 1 : 0; d < input.shape.size; ++d) {
    data.sample_shape.push_back(input.shape[d]);
  }
  const int classes = output.shape.size ? std::max(1, output.shape[output.shape.size - 1]) : 1;
  std::mt19937 rng(kInputSeed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  data.inputs.resize(static_cast<size_t>(kTrainingSamples * data.sample_elements()));
  for (float& v : data.inputs) v = uniform(rng);
  for (int i = 0; i < kTrainingSamples; ++i) data.labels.push_back(i % classes);

  TrainingSession session;
  if (!session.prepare(spec, data, nullptr, error)) return kExitBadInput;
  Trainer& trainer = session.trainer();
  *out = TrainingBench();
  out->scope = scope;
  out->loss_output = output.name;
  out->batch_size = batch_size;
  out->trainable_parameters = session.result().trainable_parameters;
  out->memory = session.memory();
  out->fused = session.loop_plan().fused;
  out->rows_per_pass = trainer.batch_rows();

  const int64_t per_sample = data.sample_elements();
  int64_t next = 0;
  // Batched passes (the session's default for batch > 1): the batch's samples
  // fill the input's rows and one pass trains them; else one pass per sample.
  const int rows = trainer.batch_rows();
  const int64_t label_width = trainer.label_count() / rows;
  const auto train_batch = [&]() {
    for (int b = 0; b < batch_size; ++b, next = (next + 1) % kTrainingSamples) {
      const int row = b % rows;
      std::memcpy(trainer.input(0)->f32() + row * per_sample,
                  data.inputs.data() + next * per_sample,
                  static_cast<size_t>(per_sample) * sizeof(float));
      float* label = trainer.label() + row * label_width;
      std::fill(label, label + label_width, 0.f);
      label[data.labels[static_cast<size_t>(next)]] = 1.f;  // one row of `classes`
      if (row + 1 < rows) continue;
      const Status step = trainer.train_sample(nullptr);
      if (!step.ok()) {
        *error = loaded.path + ": training: " + step.message();
        return false;
      }
    }
    return true;
  };
  Timing timing;
  if (!time_calls(train_batch, request.repetitions, request.min_seconds, &timing)) {
    return kExitFailure;
  }
  for (double& seconds : timing.seconds_per_call) seconds = batch_size / seconds;
  out->samples_per_second = spread_of(timing.seconds_per_call);
  out->samples_per_repetition = timing.calls_per_repetition * batch_size;
  return kExitOk;
}

int bench_model(const BenchRequest& request, BenchResult* out, std::string* error) {
  *out = BenchResult();
  out->model_path = request.model_path;
  out->repetitions = request.repetitions;
  out->min_seconds = request.min_seconds;
  TrainingRunSpec scope_check;  // a bad scope is an option error: before any timing
  if (!request.train_scope.empty() &&
      !set_trainable_scope(request.train_scope, &scope_check, error)) {
    return kExitBadInput;
  }
  tools::LoadedModel loaded;
  if (!tools::load_model_file(request.model_path, &loaded, error)) return kExitBadInput;
  out->model_bytes = loaded.bytes.size();
  LoopPlanOptions plan_options;
  plan_options.fuse_loops = !request.as_written;
  out->plan = plan_loops(loaded.bytes, plan_options);
  tools::LoadedModel timed;
  if (!tools::load_model_bytes(std::move(out->plan.bytes), request.model_path, &timed, error)) {
    return kExitFailure;
  }
  out->plan.bytes.clear();
  out->op_count = count_ops(timed.model);
  std::string problem;
  int code = bench_inference(timed.model, request.repetitions, request.min_seconds,
                             /*per_op=*/true, &out->inference, &problem);
  if (code != kExitOk) {
    *error = request.model_path + ": " + problem;
    return code;
  }
  if (request.train_scope.empty()) return kExitOk;
  code = bench_training(loaded, request, &out->training, error);
  out->trained = code == kExitOk;
  return code;
}

std::string bench_report(const BenchResult& r, bool json) {
  const TrainingMemory& m = r.training.memory;
  if (json) {
    tools::JsonWriter w;
    w.begin_object();
    w.key("model").value(r.model_path);
    w.key("model_bytes").value(r.model_bytes);
    w.key("op_count").value(r.op_count);
    write_loop_plan(w, r.plan);
    w.key("repetitions").value(r.repetitions);
    w.key("min_time_s").value(r.min_seconds);
    w.key("arena_bytes").value(r.inference.arena_bytes);
    w.key("inference").begin_object();
    write_spread(w, r.inference.microseconds, "us");
    w.key("invokes_per_repetition").value(r.inference.invokes_per_repetition);
    w.key("ops").begin_array();
    for (const OpTime& t : r.inference.ops) {
      w.begin_object();
      w.key("op").value(t.op);
      w.key("instances").value(t.instances);
      w.key("self_us").value(t.microseconds);
      w.key("share").value(t.share);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    if (r.trained) {
      w.key("training").begin_object();
      w.key("scope").value(r.training.scope);
      w.key("loss_output").value(r.training.loss_output);
      w.key("batch").value(r.training.batch_size);
      w.key("rows_per_pass").value(r.training.rows_per_pass);
      w.key("optimizer").value("adam");
      w.key("learning_rate").value(kLearningRate);
      w.key("trainable_parameters").value(r.training.trainable_parameters);
      w.key("form").value(r.training.fused ? "fused" : "as written");
      write_spread(w, r.training.samples_per_second, "samples_per_s");
      w.key("samples_per_repetition").value(r.training.samples_per_repetition);
      w.key("memory");
      write_training_memory(w, m);
      w.end_object();
    }
    w.end_object();
    return w.take() + "\n";
  }
  std::string text = "Model    " + r.model_path + ": " + std::to_string(r.model_bytes) +
                     " bytes, " + std::to_string(r.op_count) + " ops\n";
  if (!r.plan.note.empty()) text += "Form     " + r.plan.note + "\n";
  text += "Arena    " + std::to_string(r.inference.arena_bytes) + " bytes (inference, planned)\n\n";
  std::vector<std::vector<std::string>> timings = {
      spread_row("inference µs/sequence", r.inference.microseconds, 2,
                 std::to_string(r.repetitions) + " x " +
                     std::to_string(r.inference.invokes_per_repetition) + " invokes")};
  if (r.trained) {
    timings.push_back(spread_row("training samples/s", r.training.samples_per_second, 0,
                                 std::to_string(r.repetitions) + " x " +
                                     std::to_string(r.training.samples_per_repetition) +
                                     " samples"));
  }
  text += plain_table({"", "median", "min", "max", "timed"}, timings);
  text += op_table(r.inference.ops);
  if (!r.trained) return text;
  text += "\nTraining: scope " + r.training.scope + ", loss on output '" + r.training.loss_output +
          "', batch " + std::to_string(r.training.batch_size) +
          batch_passes_text(r.training.batch_size, r.training.rows_per_pass) + ", Adam lr 0.001, " +
          std::to_string(r.training.trainable_parameters) + " trainable parameters\n";
  const std::pair<const char*, size_t> parts[] = {
      {"weights", m.weight_bytes},      {"gradients", m.gradient_bytes},
      {"optimizer", m.optimizer_bytes}, {"activations", m.activation_bytes},
      {"other", m.other_bytes},         {"total", m.total}};
  std::vector<std::vector<std::string>> memory;
  for (const auto& part : parts)
    memory.push_back({std::string("  ") + part.first, std::to_string(part.second)});
  text += plain_table({"  memory", "bytes"}, memory);
  return text;
}

}  // namespace gruwb::app
