#pragma once
// The float models and representative data behind tests/fixtures/quantized/: the generator
// (tests/fixtures/gen/write_quantized_models.cpp) and quantizer_test build them from here,
// so the test can check that the committed quantized files are what the quantizer writes.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/graph_writer.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/quantizer.h"

namespace gruwb::test {

constexpr int32_t kQuantT = 12, kQuantF = 3, kQuantClasses = 4;

// mulberry32, as tflite_golden.mjs: uniform [-1, 1), the range the oracle feeds float inputs.
inline std::vector<tools::RepresentativeSample> representative_data(int count, uint32_t seed) {
  uint32_t state = seed;
  auto next = [&state]() {
    state += 0x6d2b79f5u;
    uint32_t t = state;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return static_cast<float>(static_cast<double>(t ^ (t >> 14)) / 4294967296.0);
  };
  std::vector<tools::RepresentativeSample> samples(static_cast<size_t>(count));
  for (tools::RepresentativeSample& s : samples) {
    s.emplace_back(static_cast<size_t>(kQuantT * kQuantF));
    for (float& v : s[0]) v = -1.f + 2.f * next();
  }
  return samples;
}

// [1,T,F] -> RESHAPE [1,T*F] -> FC 16 RELU -> FC 8 -> TANH -> FC 4 -> LOGISTIC -> FC 4 ->
// SOFTMAX: every op our engine runs integer today.
inline bool build_fc_classifier(tools::ModelDef* def, std::string* error) {
  *def = tools::ModelDef();
  def->version = 3;
  def->description = "GRU Workbench quantizer fixture: FC classifier";
  tools::GraphWriter g(def);
  g.use(g.add_subgraph("main"));
  uint32_t state = 11;
  auto weights = [&state](size_t n, float limit) {
    std::vector<float> w(n);
    for (float& v : w) {
      state = state * 1664525u + 1013904223u;
      v = limit * (static_cast<float>(state >> 8) / 8388608.f - 1.f);
    }
    return w;
  };
  const int x = g.tensor("x", {1, kQuantT, kQuantF});
  g.sg().inputs.push_back(x);
  int h = tools::reshape(g, x, {1, kQuantT * kQuantF}, "flatten");
  struct Layer {
    int units;
    fb::ActivationFunctionType activation;
    fb::BuiltinOperator after;
  };
  const Layer layers[] = {
      {16, fb::ActivationFunctionType::RELU, fb::BuiltinOperator::CUSTOM},
      {8, fb::ActivationFunctionType::NONE, fb::BuiltinOperator::TANH},
      {4, fb::ActivationFunctionType::NONE, fb::BuiltinOperator::LOGISTIC},
      {kQuantClasses, fb::ActivationFunctionType::NONE, fb::BuiltinOperator::SOFTMAX}};
  int i = 0;
  for (const Layer& layer : layers) {
    const std::string name = "dense_" + std::to_string(i++);
    const int32_t in = g.shape(h)[1];
    const float limit = std::sqrt(6.f / static_cast<float>(in + layer.units));
    const int w = g.constant(name + "/kernel", {layer.units, in},
                             weights(static_cast<size_t>(layer.units * in), limit));
    const int b =
        g.constant(name + "/bias", {layer.units}, weights(static_cast<size_t>(layer.units), 0.1f));
    h = tools::fully_connected(g, h, w, b, name, layer.activation);
    if (layer.after == fb::BuiltinOperator::SOFTMAX) {
      const int y = g.tensor("probabilities", {1, kQuantClasses});
      fb::SoftmaxOptionsT softmax;
      softmax.beta = 1.f;
      g.op(fb::BuiltinOperator::SOFTMAX, {h}, {y}, softmax);
      h = y;
    } else if (layer.after != fb::BuiltinOperator::CUSTOM) {
      h = tools::unary(g, layer.after, h, name + "/activation");
    }
  }
  g.sg().outputs.push_back(h);
  std::vector<uint8_t> bytes;
  return tools::write_model(*def, ModelFormat::kTflite, &bytes, error);
}

// LSTM(8) classifiers from the builder, T=12, F=3, 4 classes.
inline bool build_lstm_classifier(tools::RnnLayout layout, tools::ModelDef* def,
                                  std::string* error) {
  tools::BuildSpec spec;
  spec.cell = tools::find_cell("lstm");
  spec.layout = layout;
  spec.timesteps = kQuantT;
  spec.features = kQuantF;
  spec.units = 8;
  spec.classes = kQuantClasses;
  spec.bias_init = tools::BiasInit::kUniform;
  spec.seed = 7;
  return tools::build_model(spec, def, error);
}

struct QuantizedFixture {
  const char* float_stem;  // tests/fixtures/quantized/<stem>.tflite
  const char* stem;
  tools::QuantizeOptions options;
};

inline tools::QuantizeOptions quantize_options(tools::QuantizeMode mode, bool integer_io) {
  tools::QuantizeOptions options;
  options.mode = mode;
  options.integer_io = integer_io;
  return options;
}

inline std::vector<QuantizedFixture> quantized_fixtures() {
  using tools::QuantizeMode;
  return {
      {"quant_fc_float", "quant_fc_int8", quantize_options(QuantizeMode::kInt8, false)},
      {"quant_fc_float", "quant_fc_int8_integer_io", quantize_options(QuantizeMode::kInt8, true)},
      {"quant_fc_float", "quant_fc_int16x8", quantize_options(QuantizeMode::kInt16x8, false)},
      {"quant_lstm_float", "quant_lstm_int8", quantize_options(QuantizeMode::kInt8, false)},
      {"quant_lstm_while_float", "quant_lstm_while_int8",
       quantize_options(QuantizeMode::kInt8, false)}};
}

constexpr int kRepresentativeSamples = 64;
constexpr uint32_t kRepresentativeSeed = 2024;

}  // namespace gruwb::test
