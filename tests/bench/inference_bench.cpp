// Single-sequence inference latency of the workbench's reference model
// (input 1x60x3, GRU(60), Dense(4), softmax) in each layout the builder makes,
// plus LSTM and SimpleRNN of the same size, through the engine's Interpreter.
//
//   ninja -C build gruwb_bench_inference
//   build/tests/bench/gruwb_bench_inference --benchmark_repetitions=10
//
// On a shared machine the minimum over repetitions is the figure least
// disturbed by other processes; it is reported as the "_min" row.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engine/kernels/recurrent_util.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"

namespace gruwb {
namespace {

double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

void run_reference(benchmark::State& state, const tools::CellDescriptor* cell,
                   tools::RnnLayout layout, ModelFormat format) {
  tools::BuildSpec spec;  // defaults are the reference model: T=60, F=3, H=60, C=4
  spec.cell = cell;
  spec.layout = layout;
  spec.format = format;
  tools::ModelDef def;
  std::vector<uint8_t> bytes;
  std::string error;
  tools::LoadedModel loaded;
  tools::ModelRunner runner;
  runner.set_packed_weights(true);
  if (!tools::build_model(spec, &def, &error) || !tools::write_model(def, format, &bytes, &error) ||
      !tools::load_model_bytes(std::move(bytes), "reference", &loaded, &error) ||
      !runner.prepare(loaded.model, &error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  Tensor* input = runner.interpreter().input(0);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (int64_t i = 0; i < input->elements(); ++i) input->f32()[i] = uniform(rng);
  for (auto _ : state) {
    runner.interpreter().reset_variables();  // independent windows, as a classifier runs
    Status status = runner.interpreter().invoke();
    if (!status.ok()) state.SkipWithError(status.message());
    benchmark::DoNotOptimize(runner.interpreter().output(0)->data);
  }
  state.counters["arena_bytes"] = static_cast<double>(runner.arena_bytes());
  state.counters["model_bytes"] = static_cast<double>(loaded.bytes.size());
}

#define GRUWB_REFERENCE_BENCH(name, cell, layout, format)                                        \
  void name(benchmark::State& state) {                                                           \
    run_reference(state, tools::find_cell(cell), tools::RnnLayout::layout, ModelFormat::format); \
  }                                                                                              \
  BENCHMARK(name)->Unit(benchmark::kMicrosecond)->ComputeStatistics("min", min_of)

GRUWB_REFERENCE_BENCH(BM_Gru60_Fused_GruwbCustomOp, "gru", kFused, kTflite);
GRUWB_REFERENCE_BENCH(BM_Gru60_Fused_CircleGru, "gru", kFused, kCircle);
GRUWB_REFERENCE_BENCH(BM_Gru60_While, "gru", kWhile, kTflite);
GRUWB_REFERENCE_BENCH(BM_Gru60_Unrolled, "gru", kUnrolled, kTflite);
GRUWB_REFERENCE_BENCH(BM_Lstm60_Fused, "lstm", kFused, kTflite);
GRUWB_REFERENCE_BENCH(BM_Rnn60_Fused, "rnn", kFused, kTflite);

// The reference GRU's recurrent product (180x60) through matvec_rows and
// through matvec_rows_portable, in the same process so both see the same
// machine load (a place to compare a candidate faster version against).
template <bool kPortable>
void BM_Matvec180x60(benchmark::State& state) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> w(180 * 60), x(60), out(180);
  for (float& v : w) v = uniform(rng);
  for (float& v : x) v = uniform(rng);
  for (auto _ : state) {
    if (kPortable) {
      matvec_rows_portable(w.data(), 180, 60, x.data(), nullptr, false, out.data());
    } else {
      matvec_rows(w.data(), 180, 60, x.data(), nullptr, false, out.data());
    }
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK_TEMPLATE(BM_Matvec180x60, false)->ComputeStatistics("min", min_of);
BENCHMARK_TEMPLATE(BM_Matvec180x60, true)->ComputeStatistics("min", min_of);

#if defined(GRUWB_CLONED_HOT_LOOPS)
// The same product over the column-major copy fused GRUs pack at prepare for
// inference on AVX-512 hosts (matvec_columns_avx512).
void BM_Matvec180x60_Packed(benchmark::State& state) {
  if (!cpu_has_avx512()) {
    state.SkipWithError("no AVX-512");
    return;
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> w(180 * 60), x(60), out(180), packed(192 * 60 + 16);
  for (float& v : w) v = uniform(rng);
  for (float& v : x) v = uniform(rng);
  const ColumnMajorWeights columns = pack_column_major(w.data(), 180, 60, packed.data());
  for (auto _ : state) {
    matvec_columns_avx512(columns, x.data(), nullptr, false, out.data());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Matvec180x60_Packed)->ComputeStatistics("min", min_of);

// The H = 128 GRU's W_h (384x128, 196 KB: more than L1) both ways.
template <bool kPacked>
void BM_Matvec384x128(benchmark::State& state) {
  if (kPacked && !cpu_has_avx512()) {
    state.SkipWithError("no AVX-512");
    return;
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> w(384 * 128), x(128), out(384), packed(384 * 128 + 16);
  for (float& v : w) v = uniform(rng);
  for (float& v : x) v = uniform(rng);
  const ColumnMajorWeights columns = pack_column_major(w.data(), 384, 128, packed.data());
  for (auto _ : state) {
    if (kPacked) {
      matvec_columns_avx512(columns, x.data(), nullptr, false, out.data());
    } else {
      matvec_rows(w.data(), 384, 128, x.data(), nullptr, false, out.data());
    }
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK_TEMPLATE(BM_Matvec384x128, false)->ComputeStatistics("min", min_of);
BENCHMARK_TEMPLATE(BM_Matvec384x128, true)->ComputeStatistics("min", min_of);
#endif

}  // namespace
}  // namespace gruwb

BENCHMARK_MAIN();
