// Hybrid kernels (INT8 weights with scales, float activations) compute what TFLite's hybrid
// kernels compute:
// - UNIDIRECTIONAL_SEQUENCE_LSTM / _RNN against real TFLite: the models and
//   outputs in tests/fixtures/hybrid (write_hybrid_models + tflite_golden.mjs, see
//   tests/fixtures/gen/README.md), within 1e-5 relative to max(1, |ref|), fresh and with the
//   state carried over invokes. Each test also reports how far float maths on the dequantized
//   weights (what the recurrent kernels did before) is from TFLite, so the fixtures show that
//   they tell the two apart.
// - GRUWB_GRU's hybrid mode against the loop it replaces: the converter-style WHILE GRU that
//   engine/tools/model_builder writes, its FULLY_CONNECTED weights made INT8 (hybrid FCs), run
//   by our engine, equals the fused op with the same INT8 weights within 1e-6.

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "engine/tools/model_builder.h"
#include "tests/engine/golden_json.h"
#include "tests/engine/kernels/recurrent_test_util.h"

namespace gruwb {
namespace {

using test::FloatArray;
using test::Json;
using test::RunnableModel;

std::string hybrid_fixture(const std::string& stem, const char* extension) {
  return std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/hybrid/" + stem + extension;
}

FloatArray from_json(const Json& tensor) {
  FloatArray out;
  for (const Json& d : tensor["shape"].items) out.shape.push_back(static_cast<int64_t>(d.number));
  // The fixture holds the shortest decimal of each float32: reading it as a float restores it.
  for (const Json& v : tensor["data"].items) out.values.push_back(static_cast<float>(v.number));
  return out;
}

// Largest |got - ref| / max(1, |ref|).
double worst_relative(const std::vector<float>& got, const std::vector<float>& ref) {
  EXPECT_EQ(got.size(), ref.size());
  double worst = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - ref[i]) /
                     std::max(1.0, std::fabs(static_cast<double>(ref[i])));
    if (!(d <= worst)) worst = d;  // NaN wins
  }
  return worst;
}

// The same model with every INT8 tensor replaced by float32 values q * scale: float maths on
// the dequantized weights.
tools::ModelDef dequantized(const tools::ModelDef& hybrid) {
  tools::ModelDef def;
  std::vector<uint8_t> bytes;
  std::string error;
  tools::LoadedModel loaded;
  EXPECT_TRUE(tools::write_model(hybrid, ModelFormat::kTflite, &bytes, &error)) << error;
  EXPECT_TRUE(tools::load_model_bytes(std::move(bytes), "hybrid", &loaded, &error)) << error;
  EXPECT_TRUE(tools::unpack_model(loaded.model, &def, &error)) << error;
  for (auto& t : def.subgraphs[0]->tensors) {
    if (t->type != fb::TensorType::INT8 || t->buffer == 0) continue;
    auto& data = def.buffers[t->buffer]->data;
    const std::vector<float>& scales = t->quantization->scale;
    const size_t per_row = data.size() / scales.size();
    std::vector<float> values(data.size());
    for (size_t i = 0; i < data.size(); ++i) {
      values[i] = static_cast<float>(static_cast<int8_t>(data[i])) * scales[i / per_row];
    }
    data.resize(values.size() * sizeof(float));
    std::memcpy(data.data(), values.data(), data.size());
    t->type = fb::TensorType::FLOAT32;
    t->quantization.reset();
  }
  return def;
}

struct GoldenRun {
  double fresh = 0;     // worst over the cases, each on a fresh runner
  double sequence = 0;  // worst over the cases invoked back to back on one runner
};

bool prepare_def(const tools::ModelDef& def, RunnableModel* m) {
  std::string error;
  bool ok = test::build_and_prepare(def, ModelFormat::kTflite, m, &error);
  EXPECT_TRUE(ok) << error;
  return ok;
}

FloatArray invoke(RunnableModel* m, const Json& test_case) {
  std::vector<FloatArray> inputs;
  for (const Json& input : test_case["inputs"].items) inputs.push_back(from_json(input));
  return test::run(m, inputs);
}

GoldenRun run_golden(const tools::ModelDef& def, const Json& golden) {
  GoldenRun result;
  const std::vector<Json>& cases = golden["cases"].items;
  for (const Json& c : cases) {
    RunnableModel m;
    if (!prepare_def(def, &m)) return {INFINITY, INFINITY};
    FloatArray want = from_json(c["outputs"].items.at(0));
    FloatArray got = invoke(&m, c);
    EXPECT_EQ(got.shape, want.shape);
    result.fresh = std::max(result.fresh, worst_relative(got.values, want.values));
  }
  RunnableModel m;
  if (!prepare_def(def, &m)) return {INFINITY, INFINITY};
  const std::vector<Json>& sequence = golden["sequence"].items;
  EXPECT_EQ(sequence.size(), cases.size());
  for (size_t i = 0; i < cases.size() && i < sequence.size(); ++i) {
    FloatArray got = invoke(&m, cases[i]);
    FloatArray want = from_json(sequence[i]["outputs"].items.at(0));
    result.sequence = std::max(result.sequence, worst_relative(got.values, want.values));
  }
  return result;
}

class HybridGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HybridGoldenTest, EqualsRealTflite) {
  const std::string stem = GetParam();
  Json golden;
  std::string error;
  ASSERT_TRUE(test::load_golden(hybrid_fixture(stem, ".json"), &golden, &error)) << error;
  ASSERT_EQ(golden["model"].text, stem + ".tflite");
  ASSERT_EQ(golden["cases"].items.size(), 3u);
  tools::LoadedModel loaded;
  ASSERT_TRUE(tools::load_model_file(hybrid_fixture(stem, ".tflite"), &loaded, &error)) << error;
  tools::ModelDef def;
  ASSERT_TRUE(tools::unpack_model(loaded.model, &def, &error)) << error;

  const GoldenRun hybrid = run_golden(def, golden);
  const GoldenRun dequantized_float = run_golden(dequantized(def), golden);
  std::printf(
      "%s: hybrid kernels %.3g fresh / %.3g in sequence; float maths on dequantized "
      "weights %.3g / %.3g (relative to max(1,|ref|))\n",
      stem.c_str(), hybrid.fresh, hybrid.sequence, dequantized_float.fresh,
      dequantized_float.sequence);
  RecordProperty("hybrid_worst", std::to_string(std::max(hybrid.fresh, hybrid.sequence)));
  RecordProperty("dequantized_float_worst", std::to_string(dequantized_float.fresh));
  EXPECT_LE(hybrid.fresh, 1e-5);
  EXPECT_LE(hybrid.sequence, 1e-5);
  // The fixture tells hybrid arithmetic from float maths.
  EXPECT_GT(dequantized_float.fresh, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HybridGoldenTest,
                         ::testing::Values("hybrid_lstm_symmetric", "hybrid_lstm_asymmetric",
                                           "hybrid_lstm_projection_asymmetric",
                                           "hybrid_rnn_symmetric", "hybrid_rnn_asymmetric"),
                         [](const auto& info) { return std::string(info.param); });

// ---- GRUWB_GRU hybrid mode = the converter's loop of hybrid FULLY_CONNECTEDs -------------------

struct HybridGruCase {
  const char* name;
  bool reset_after;
  tools::GruVariant variant;
  bool per_row;  // else one scale per tensor (only where loop and fused tensors coincide)
  bool asymmetric;
};

// Replaces a float [rows, cols] constant by INT8 weights: scale max|w| / 127 per row or per
// tensor, symmetric, as a converter's dynamic-range quantization writes them.
void quantize_weights(tools::ModelDef* def, fb::TensorT* t, bool per_row) {
  ASSERT_EQ(t->type, fb::TensorType::FLOAT32) << t->name;
  ASSERT_EQ(t->shape.size(), 2u) << t->name;
  auto& data = def->buffers[t->buffer]->data;
  const size_t rows = static_cast<size_t>(t->shape[0]), cols = static_cast<size_t>(t->shape[1]);
  ASSERT_EQ(data.size(), rows * cols * sizeof(float)) << t->name;
  std::vector<float> w(rows * cols);
  std::memcpy(w.data(), data.data(), data.size());
  std::vector<float> scales(per_row ? rows : 1, 0.f);
  for (size_t i = 0; i < w.size(); ++i) {
    float& s = scales[per_row ? i / cols : 0];
    s = std::max(s, std::fabs(w[i]));
  }
  for (float& s : scales) s = s > 0.f ? s / 127.f : 1.f;
  data.resize(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    const float q = std::round(w[i] / scales[per_row ? i / cols : 0]);
    data[i] = static_cast<uint8_t>(static_cast<int8_t>(std::max(-127.f, std::min(127.f, q))));
  }
  t->type = fb::TensorType::INT8;
  t->quantization = std::make_unique<fb::QuantizationParametersT>();
  t->quantization->scale = scales;
  t->quantization->zero_point.assign(scales.size(), 0);
}

// The logits (the classifier's output before SOFTMAX) become the model output: they show the
// GRU state's differences unsquashed.
void output_logits(tools::ModelDef* def) {
  fb::SubGraphT& main = *def->subgraphs[0];
  for (const auto& op : main.operators) {
    if (def->operator_codes[op->opcode_index]->builtin_code == fb::BuiltinOperator::SOFTMAX) {
      main.outputs = {op->inputs[0]};
      return;
    }
  }
  ADD_FAILURE() << "no SOFTMAX in the built model";
}

tools::ModelDef build_gru(const HybridGruCase& c, tools::RnnLayout layout,
                          const tools::RnnWeights& weights) {
  tools::BuildSpec spec;
  spec.cell = tools::find_cell("gru");
  spec.layout = layout;
  spec.timesteps = 10;
  spec.features = 4;
  spec.units = 9;
  spec.classes = 3;
  spec.reset_after = c.reset_after;
  spec.gru_variant = c.variant;
  spec.bias_init = tools::BiasInit::kUniform;
  spec.weights = &weights;
  tools::ModelDef def;
  std::string error;
  EXPECT_TRUE(tools::build_model(spec, &def, &error)) << error;
  output_logits(&def);
  return def;
}

// The WHILE layout, each FULLY_CONNECTED of the loop body made hybrid.
tools::ModelDef hybrid_loop(const HybridGruCase& c, const tools::RnnWeights& weights) {
  tools::ModelDef def = build_gru(c, tools::RnnLayout::kWhile, weights);
  std::set<int32_t> done;
  int fcs = 0;
  for (size_t g = 1; g < def.subgraphs.size(); ++g) {
    fb::SubGraphT& sg = *def.subgraphs[g];
    for (auto& op : sg.operators) {
      if (def.operator_codes[op->opcode_index]->builtin_code !=
          fb::BuiltinOperator::FULLY_CONNECTED) {
        continue;
      }
      ++fcs;
      if (auto* options = op->builtin_options.AsFullyConnectedOptions()) {
        options->asymmetric_quantize_inputs = c.asymmetric;
      }
      if (done.insert(op->inputs[1]).second) {
        quantize_weights(&def, sg.tensors[static_cast<size_t>(op->inputs[1])].get(), c.per_row);
      }
    }
  }
  EXPECT_EQ(fcs, c.variant == tools::GruVariant::kLegacy ? 6 : (c.reset_after ? 2 : 3));
  return def;
}

// The fused layout (GRUWB_GRU), its kernels made hybrid the same way.
tools::ModelDef hybrid_fused(const HybridGruCase& c, const tools::RnnWeights& weights) {
  tools::ModelDef def = build_gru(c, tools::RnnLayout::kFused, weights);
  fb::SubGraphT& main = *def.subgraphs[0];
  int fused = 0;
  for (auto& op : main.operators) {
    if (def.operator_codes[op->opcode_index]->custom_code != "GRUWB_GRU") continue;
    ++fused;
    quantize_weights(&def, main.tensors[static_cast<size_t>(op->inputs[1])].get(), c.per_row);
    quantize_weights(&def, main.tensors[static_cast<size_t>(op->inputs[2])].get(), c.per_row);
    const bool legacy = c.variant == tools::GruVariant::kLegacy;
    flexbuffers::Builder fbb;
    fbb.Map([&]() {
      fbb.Bool("reset_after", c.reset_after);
      fbb.String("activation", "tanh");
      fbb.String("recurrent_activation", legacy ? "hard_sigmoid" : "sigmoid");
      fbb.Bool("asymmetric_quantize_inputs", c.asymmetric);
    });
    fbb.Finish();
    op->custom_options = fbb.GetBuffer();
  }
  EXPECT_EQ(fused, 1);
  return def;
}

class HybridGruTest : public ::testing::TestWithParam<HybridGruCase> {};

TEST_P(HybridGruTest, FusedOpEqualsLoopOfHybridFullyConnected) {
  const HybridGruCase& c = GetParam();
  tools::BuildSpec spec;
  spec.cell = tools::find_cell("gru");
  spec.timesteps = 10;
  spec.features = 4;
  spec.units = 9;
  spec.classes = 3;
  spec.reset_after = c.reset_after;
  spec.gru_variant = c.variant;
  spec.bias_init = tools::BiasInit::kUniform;
  spec.seed = 7;
  const tools::RnnWeights weights = tools::initial_weights(spec);
  RunnableModel loop, fused, float_loop;
  std::string error;
  ASSERT_TRUE(prepare_def(hybrid_loop(c, weights), &loop));
  ASSERT_TRUE(prepare_def(hybrid_fused(c, weights), &fused));
  ASSERT_TRUE(prepare_def(build_gru(c, tools::RnnLayout::kWhile, weights), &float_loop));
  double worst = 0, quantization_effect = 0;
  for (uint32_t seed : {1u, 2u, 3u}) {
    FloatArray x;
    x.shape = {1, 10, 4};
    uint32_t state = seed * 2654435761u;
    for (int i = 0; i < 40; ++i) {
      state = state * 1664525u + 1013904223u;
      x.values.push_back(2.f * static_cast<float>(state >> 8) / 16777216.f - 1.f);
    }
    FloatArray want = test::run(&loop, {x});
    FloatArray got = test::run(&fused, {x});
    ASSERT_EQ(got.shape, want.shape);
    worst = std::max(worst, test::max_abs_diff(got.values, want.values));
    quantization_effect = std::max(
        quantization_effect, test::max_abs_diff(test::run(&float_loop, {x}).values, want.values));
  }
  std::printf("%s: fused vs loop %.3g; hybrid vs float loop %.3g\n", c.name, worst,
              quantization_effect);
  EXPECT_LE(worst, 1e-6);
  EXPECT_GT(quantization_effect, 1e-5);  // the weights really are quantized
}

INSTANTIATE_TEST_SUITE_P(Variants, HybridGruTest,
                         ::testing::Values(HybridGruCase{"reset_after_per_tensor_symmetric", true,
                                                         tools::GruVariant::kModern, false, false},
                                           HybridGruCase{"reset_after_per_row_asymmetric", true,
                                                         tools::GruVariant::kModern, true, true},
                                           HybridGruCase{"reset_before_per_row_symmetric", false,
                                                         tools::GruVariant::kModern, true, false},
                                           HybridGruCase{"reset_before_per_row_asymmetric", false,
                                                         tools::GruVariant::kModern, true, true},
                                           HybridGruCase{"legacy_six_fcs_per_row_asymmetric", false,
                                                         tools::GruVariant::kLegacy, true, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gruwb
