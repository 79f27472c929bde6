// Inference latency of the recurrent kernels on the reference model of the
// workbench: input 1x60x3, GRU(60), Dense(4), softmax, one sequence per invoke.
//
//   ninja -C build gruwb_bench_kernels && build/tests/bench/gruwb_bench_kernels
//
// Models are built in memory (GRUWB_GRU custom op, the Circle GRU op, and an
// LSTM of the same size) with seeded random weights.

#include <benchmark/benchmark.h>
#include <flatbuffers/flexbuffers.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/model_writer.h"

namespace gruwb {
namespace {

constexpr int32_t kTime = 60, kFeatures = 3, kUnits = 60, kClasses = 4;

class Builder {
 public:
  Builder() {
    def_.version = 3;
    def_.buffers.push_back(std::make_unique<fb::BufferT>());
    def_.subgraphs.push_back(std::make_unique<fb::SubGraphT>());
  }
  int tensor(const std::string& name, std::vector<int32_t> shape, bool random = false,
             bool variable = false) {
    auto t = std::make_unique<fb::TensorT>();
    t->name = name;
    t->shape = shape;
    t->is_variable = variable;
    if (random) {
      int64_t n = 1;
      for (int32_t d : shape) n *= d;
      std::normal_distribution<float> normal(0.f, 0.2f);
      std::vector<float> values(static_cast<size_t>(n));
      for (float& v : values) v = normal(rng_);
      auto buffer = std::make_unique<fb::BufferT>();
      buffer->data.resize(values.size() * sizeof(float));
      std::memcpy(buffer->data.data(), values.data(), buffer->data.size());
      t->buffer = static_cast<uint32_t>(def_.buffers.size());
      def_.buffers.push_back(std::move(buffer));
    }
    auto& sg = *def_.subgraphs[0];
    sg.tensors.push_back(std::move(t));
    return static_cast<int>(sg.tensors.size() - 1);
  }
  void op(int32_t code, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
          fb::BuiltinOptionsUnion options = {}, const std::string& custom_code = "",
          std::vector<uint8_t> custom_options = {}) {
    auto c = std::make_unique<fb::OperatorCodeT>();
    c->builtin_code = static_cast<fb::BuiltinOperator>(code);
    c->custom_code = custom_code;
    def_.operator_codes.push_back(std::move(c));
    auto o = std::make_unique<fb::OperatorT>();
    o->opcode_index = static_cast<uint32_t>(def_.operator_codes.size() - 1);
    o->inputs = inputs;
    o->outputs = outputs;
    o->builtin_options = std::move(options);
    o->custom_options = std::move(custom_options);
    def_.subgraphs[0]->operators.push_back(std::move(o));
  }
  // Dense(4) + softmax after `features` [1, kUnits].
  int classifier(int features) {
    int w = tensor("dense/kernel", {kClasses, kUnits}, true);
    int b = tensor("dense/bias", {kClasses}, true);
    int logits = tensor("logits", {1, kClasses});
    op(static_cast<int32_t>(BuiltinOperator::FULLY_CONNECTED), {features, w, b}, {logits});
    int probs = tensor("probabilities", {1, kClasses});
    fb::BuiltinOptionsUnion softmax;
    fb::SoftmaxOptionsT s;
    s.beta = 1.f;
    softmax.Set(std::move(s));
    op(static_cast<int32_t>(BuiltinOperator::SOFTMAX), {logits}, {probs}, std::move(softmax));
    return probs;
  }
  void io(int input, int output) {
    def_.subgraphs[0]->inputs = {input};
    def_.subgraphs[0]->outputs = {output};
  }
  const tools::ModelDef& def() const { return def_; }

 private:
  tools::ModelDef def_;
  std::mt19937 rng_{42};
};

tools::ModelDef custom_gru_model() {
  Builder b;
  int x = b.tensor("x", {1, kTime, kFeatures});
  int wx = b.tensor("gru/kernel", {3 * kUnits, kFeatures}, true);
  int wh = b.tensor("gru/recurrent_kernel", {3 * kUnits, kUnits}, true);
  int bias = b.tensor("gru/bias", {2, 3 * kUnits}, true);
  int h = b.tensor("gru/h", {1, kUnits});
  flexbuffers::Builder fbb;
  fbb.Map([&]() { fbb.Bool("reset_after", true); });
  fbb.Finish();
  b.op(kOpCustom, {x, wx, wh, bias, -1}, {h}, {}, "GRUWB_GRU", fbb.GetBuffer());
  b.io(x, b.classifier(h));
  return std::move(const_cast<tools::ModelDef&>(b.def()));
}

tools::ModelDef circle_gru_model() {
  Builder b;
  int x = b.tensor("x", {kTime, 1, kFeatures});
  int wx = b.tensor("hidden_hidden", {3 * kUnits, kFeatures}, true);
  int bx = b.tensor("hidden_hidden_bias", {3 * kUnits}, true);
  int wh = b.tensor("hidden_input", {3 * kUnits, kUnits}, true);
  int bh = b.tensor("hidden_input_bias", {3 * kUnits}, true);
  int state = b.tensor("state", {1, kUnits}, true);
  int h = b.tensor("gru/h", {1, kUnits});
  b.op(static_cast<int32_t>(BuiltinOperator::GRU), {x, wx, bx, wh, bh, state}, {h});
  b.io(x, b.classifier(h));
  return std::move(const_cast<tools::ModelDef&>(b.def()));
}

tools::ModelDef lstm_model() {
  Builder b;
  int x = b.tensor("x", {1, kTime, kFeatures});
  std::vector<int32_t> inputs(24, -1);
  inputs[0] = x;
  for (int g = 0; g < 4; ++g) {
    inputs[static_cast<size_t>(1 + g)] =
        b.tensor("w" + std::to_string(g), {kUnits, kFeatures}, true);
    inputs[static_cast<size_t>(5 + g)] = b.tensor("r" + std::to_string(g), {kUnits, kUnits}, true);
    inputs[static_cast<size_t>(12 + g)] = b.tensor("b" + std::to_string(g), {kUnits}, true);
  }
  inputs[18] = b.tensor("h", {1, kUnits}, false, true);
  inputs[19] = b.tensor("c", {1, kUnits}, false, true);
  int seq = b.tensor("lstm/seq", {1, kTime, kUnits});
  fb::BuiltinOptionsUnion options;
  fb::UnidirectionalSequenceLSTMOptionsT o;
  o.fused_activation_function = fb::ActivationFunctionType::TANH;
  o.cell_clip = 10.f;
  options.Set(std::move(o));
  b.op(static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM), inputs, {seq},
       std::move(options));
  b.io(x, seq);
  return std::move(const_cast<tools::ModelDef&>(b.def()));
}

// On a shared machine the minimum over repetitions is the figure least
// disturbed by other processes: run with --benchmark_repetitions=10.
double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

void run_model(benchmark::State& state, const tools::ModelDef& def, ModelFormat format) {
  std::vector<uint8_t> bytes;
  std::string error;
  tools::LoadedModel loaded;
  tools::ModelRunner runner;
  if (!tools::write_model(def, format, &bytes, &error) ||
      !tools::load_model_bytes(std::move(bytes), "bench", &loaded, &error) ||
      !runner.prepare(loaded.model, &error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  Tensor* input = runner.interpreter().input(0);
  float* x = input->f32();
  for (int64_t i = 0; i < input->elements(); ++i) x[i] = 0.5f * static_cast<float>(i % 7) - 1.f;
  for (auto _ : state) {
    Status status = runner.interpreter().invoke();
    if (!status.ok()) {
      state.SkipWithError(status.message());
      return;
    }
    benchmark::DoNotOptimize(runner.interpreter().output(0)->data);
  }
  state.counters["arena_bytes"] = static_cast<double>(runner.arena_bytes());
  state.SetItemsProcessed(state.iterations());  // sequences
}

void BM_GruwbGru60_Dense4_Softmax(benchmark::State& state) {
  run_model(state, custom_gru_model(), ModelFormat::kTflite);
}
BENCHMARK(BM_GruwbGru60_Dense4_Softmax)
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", min_of);

void BM_CircleGru60_Dense4_Softmax(benchmark::State& state) {
  run_model(state, circle_gru_model(), ModelFormat::kCircle);
}
BENCHMARK(BM_CircleGru60_Dense4_Softmax)
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", min_of);

void BM_Lstm60_Sequence(benchmark::State& state) {
  run_model(state, lstm_model(), ModelFormat::kTflite);
}
BENCHMARK(BM_Lstm60_Sequence)->Unit(benchmark::kMicrosecond)->ComputeStatistics("min", min_of);

}  // namespace
}  // namespace gruwb

BENCHMARK_MAIN();
