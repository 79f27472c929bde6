// Training throughput of the workbench's reference model (input 60x3,
// GRU(60) fused as GRUWB_GRU, Dense(4), softmax, CE), Adam, every weight
// trainable (FC + GRU), one thread. Goals (issue #4): >= 5,000 samples/s at
// batch 1 and >= 8,000 at batch 32. The items_per_second column is samples/s.
//
//   ninja -C build gruwb_bench_training
//   build/tests/bench/gruwb_bench_training --benchmark_repetitions=5
//
// Batch 32 is measured two ways: 32 single-sample passes accumulated before
// one update (any model), and one pass over a [32,60,3] input (the model's
// batch dimension set to 32: the fused kernels run the 32 rows together).
// On a shared machine report the "_min" row (the least disturbed run).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/train/trainer.h"

namespace gruwb {
namespace {

double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

struct TrainingSetup {
  std::vector<uint8_t> bytes;
  Model model;
  std::vector<uint8_t> arena;
  Trainer trainer;
};

// Builds the reference model with `rows` batch rows and prepares a trainer.
bool prepare(TrainingSetup* s, int rows, int batch_size, std::string* error) {
  tools::BuildSpec spec;  // defaults: T=60, F=3, GRU 60, 4 classes, fused
  tools::ModelDef def;
  if (!tools::build_model(spec, &def, error)) return false;
  if (rows != 1) {
    // Every [1,...] activation of the fused model gets the batch dimension;
    // the interpreter infers the rest from the input.
    auto& graph = *def.subgraphs[0];
    graph.tensors[static_cast<size_t>(graph.inputs[0])]->shape[0] = rows;
  }
  if (!tools::write_model(def, spec.format, &s->bytes, error)) return false;
  Status status = Model::load(s->bytes.data(), s->bytes.size(), &s->model);
  TrainingConfig config;
  config.optimizer = Optimizer::kAdam;
  config.learning_rate = 1e-3f;
  config.batch_size = batch_size;
  config.scope = TrainableScope::kAll;
  s->arena.resize(64u << 20);
  if (status.ok()) status = s->trainer.prepare(s->model, config, s->arena.data(), s->arena.size());
  if (!status.ok()) {
    *error = status.message();
    return false;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  Tensor* input = s->trainer.input(0);
  for (int64_t i = 0; i < input->elements(); ++i) input->f32()[i] = uniform(rng);
  const int64_t classes = s->trainer.label_count() / rows;
  for (int64_t i = 0; i < s->trainer.label_count(); ++i) s->trainer.label()[i] = 0.f;
  for (int r = 0; r < rows; ++r) s->trainer.label()[r * classes + r % classes] = 1.f;
  return true;
}

// batch_size samples per iteration, one row each: accumulate, then update.
void BM_TrainGru60_Accumulated(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  auto s = std::make_unique<TrainingSetup>();
  std::string error;
  if (!prepare(s.get(), 1, batch, &error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) {
      float loss = 0.f;
      Status status = s->trainer.train_sample(&loss);
      if (!status.ok()) {
        state.SkipWithError(status.message());
        break;
      }
      benchmark::DoNotOptimize(loss);
    }
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["arena_bytes"] = static_cast<double>(s->trainer.arena_bytes_needed());
}

// One pass over a [rows,60,3] batch, then the update.
void BM_TrainGru60_OnePass(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  auto s = std::make_unique<TrainingSetup>();
  std::string error;
  if (!prepare(s.get(), rows, 1, &error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  for (auto _ : state) {
    float loss = 0.f;
    Status status = s->trainer.train_sample(&loss);
    if (!status.ok()) {
      state.SkipWithError(status.message());
      break;
    }
    benchmark::DoNotOptimize(loss);
  }
  state.SetItemsProcessed(state.iterations() * rows);
  state.counters["arena_bytes"] = static_cast<double>(s->trainer.arena_bytes_needed());
}

BENCHMARK(BM_TrainGru60_Accumulated)
    ->Arg(1)
    ->Arg(32)
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", min_of)
    ->ComputeStatistics("max", max_of);
BENCHMARK(BM_TrainGru60_OnePass)
    ->Arg(32)
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", min_of)
    ->ComputeStatistics("max", max_of);

}  // namespace
}  // namespace gruwb

BENCHMARK_MAIN();
