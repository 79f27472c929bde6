// UNIDIRECTIONAL_SEQUENCE_LSTM: the onert-micro reference vector, the real
// TFLite files, and PyTorch / NumPy fixtures (tests/fixtures/gen/recurrent_fixtures.py)
// for every optional part (projection, peephole, CIFG, layer norm, clipping).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "tests/engine/kernels/recurrent_test_util.h"
#include "tests/engine/test_models.h"

namespace gruwb {
namespace {

using test::FloatArray;
using test::RecurrentModelBuilder;
using test::RunnableModel;

constexpr double kTolerance = 1e-5;
constexpr int32_t B = 2, T = 5, I = 3, H = 4;

TEST(LstmFileTest, OnertMicroCircleModelMatchesItsReferenceVector) {
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(test::load_and_prepare(test::model_path("one_onert_micro_unidir_lstm_float.circle"),
                                     &m, &error))
      << error;
  FloatArray x{{1, 4, 4},
               {-3.509163f, -18.256927f, 6.4799614f, 10.296598f, 30.371328f, 18.692572f, 10.12867f,
                -26.44944f, 25.324795f, 3.8303719f, 20.93112f, 22.603086f, -4.308655f, 2.3276749f,
                -5.9565907f, 25.611776f}};
  std::vector<float> expected = {0.7613201f,  -0.7570043f,    0.0480366f,  -4.3364323e-11f,
                                 -0.7613433f, 1.3437739e-08f, -0.7613537f, -7.000451e-08f};
  FloatArray y = test::run(&m, {x});
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 4, 2}));
  EXPECT_LE(test::max_abs_diff(y.values, expected), kTolerance);
  // The states are variables: a second invoke continues from them, so it differs...
  FloatArray again = test::run(&m, {x});
  EXPECT_GT(test::max_abs_diff(again.values, expected), 1e-3);
  // ...until they are reset.
  m.runner.interpreter().reset_variables();
  EXPECT_LE(test::max_abs_diff(test::run(&m, {x}).values, expected), kTolerance);
}

TEST(LstmFileTest, MnistFusedLstmFloatRunsToAProbabilityVector) {
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(
      test::load_and_prepare(test::model_path("tflm_mnist_fused_lstm_float.tflite"), &m, &error))
      << error;
  FloatArray x{{1, 28, 28}, {}};
  for (int i = 0; i < 28 * 28; ++i) x.values.push_back(0.5f + 0.5f * std::sin(0.05f * i));
  FloatArray y = test::run(&m, {x});
  ASSERT_EQ(y.values.size(), 10u);
  double sum = 0;
  for (float p : y.values) {
    EXPECT_TRUE(p >= 0.f && p <= 1.f) << p;
    sum += p;
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST(LstmFileTest, LiteRtTwentyFourInputModelWithProjectionAndLayerNormRuns) {
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(test::load_and_prepare(
      test::model_path("litert_unidirectional_sequence_lstm_24inputs.tflite"), &m, &error))
      << error;
  // The file declares the output as [] (unknown); prepare infers [B,T,O].
  Tensor* output = m.runner.interpreter().output(0);
  ASSERT_EQ(output->shape.rank, 3);
  EXPECT_EQ(output->shape.dims[0], 1);
  EXPECT_EQ(output->shape.dims[1], 2);
  FloatArray y = test::run(&m, {FloatArray{{1, 2, 2}, {0.5f, -1.f, 2.f, 0.25f}}});
  ASSERT_FALSE(y.values.empty());
  for (float v : y.values) EXPECT_TRUE(std::isfinite(v)) << v;
}

// ---- one-op models from the fixtures ---------------------------------------------------------

struct LstmConfig {
  bool time_major = false;
  bool int8_weights = false;
  bool dequantized_float = false;
  float cell_clip = 0.f;
  float proj_clip = 0.f;
  int input_count = 24;
  int32_t steps = T;
};

constexpr float kWeightScale = 0.02f;

FloatArray rows(const FloatArray& a, int64_t begin, int64_t count) {
  int64_t cols = a.shape.size() > 1 ? a.shape[1] : 1;
  FloatArray out;
  out.shape = a.shape;
  out.shape[0] = count;
  out.values.assign(a.values.begin() + begin * cols, a.values.begin() + (begin + count) * cols);
  return out;
}

bool has_fixture(const std::string& name, const std::string& array) {
  return std::ifstream(test::recurrent_fixture_path(name, array)).good();
}

// The 24-input op with the parts the fixture provides; gate blocks i | f | c | o.
tools::ModelDef lstm_model(const std::string& name, const LstmConfig& config) {
  RecurrentModelBuilder mb;
  FloatArray w = test::read_fixture(name, "weights");
  FloatArray r = test::read_fixture(name, "recurrent_weights");
  FloatArray bias = test::read_fixture(name, "bias");
  const bool cifg = name.find("cifg") != std::string::npos;
  const bool projection = has_fixture(name, "projection");
  const int32_t O = static_cast<int32_t>(r.shape[1]);
  if (config.dequantized_float) {
    for (FloatArray* a : {&w, &r}) {
      for (float& v : a->values) v = std::round(v / kWeightScale) * kWeightScale;
    }
  }
  std::vector<int32_t> inputs(static_cast<size_t>(config.input_count), -1);
  const int32_t steps = config.steps;
  inputs[0] = mb.input("x", config.time_major ? std::vector<int32_t>{steps, B, I}
                                              : std::vector<int32_t>{B, steps, I});
  const char* gates = "ifco";
  for (int g = 0; g < 4; ++g) {
    if (cifg && g == 0) continue;
    std::string gate(1, gates[g]);
    inputs[1 + g] = mb.constant("input_to_" + gate, rows(w, g * H, H));
    inputs[5 + g] = mb.constant("recurrent_to_" + gate, rows(r, g * H, H));
    if (config.int8_weights) {
      mb.quantize_int8(inputs[1 + g], kWeightScale);
      mb.quantize_int8(inputs[5 + g], kWeightScale);
    }
    inputs[12 + g] = mb.constant("bias_" + gate, rows(bias, g * H, H));
  }
  if (has_fixture(name, "peephole")) {
    FloatArray peephole = test::read_fixture(name, "peephole");
    if (!cifg) inputs[9] = mb.constant("cell_to_i", rows(peephole, 0, 1));
    inputs[10] = mb.constant("cell_to_f", rows(peephole, 1, 1));
    inputs[11] = mb.constant("cell_to_o", rows(peephole, 2, 1));
    for (int k : {9, 10, 11}) {
      if (inputs[static_cast<size_t>(k)] < 0) continue;
      mb.tensor_shape(inputs[static_cast<size_t>(k)], {H});
    }
  }
  if (projection) {
    inputs[16] = mb.constant("projection", test::read_fixture(name, "projection"));
    if (has_fixture(name, "projection_bias")) {
      inputs[17] = mb.constant("projection_bias", test::read_fixture(name, "projection_bias"));
    }
  }
  inputs[18] = mb.variable("output_state", {B, O});
  inputs[19] = mb.variable("cell_state", {B, H});
  if (has_fixture(name, "layer_norm")) {
    FloatArray norm = test::read_fixture(name, "layer_norm");
    for (int g = cifg ? 1 : 0; g < 4; ++g) {
      inputs[static_cast<size_t>(20 + g)] =
          mb.constant(std::string("layer_norm_") + gates[g], rows(norm, g, 1));
      mb.tensor_shape(inputs[static_cast<size_t>(20 + g)], {H});
    }
  }
  int y = mb.output("y", config.time_major ? std::vector<int32_t>{steps, B, O}
                                           : std::vector<int32_t>{B, steps, O});
  fb::BuiltinOptionsUnion options;
  fb::UnidirectionalSequenceLSTMOptionsT lstm_options;
  lstm_options.fused_activation_function = fb::ActivationFunctionType::TANH;
  lstm_options.cell_clip = config.cell_clip;
  lstm_options.proj_clip = config.proj_clip;
  lstm_options.time_major = config.time_major;
  options.Set(std::move(lstm_options));
  mb.op(static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM), inputs, {y},
        std::move(options));
  return mb.take();
}

struct LstmCase {
  const char* name;
  float cell_clip;
  float proj_clip;
};

const LstmCase kLstmCases[] = {
    {"lstm_keras", 0.f, 0.f},
    {"lstm_projection", 0.f, 0.f},
    {"lstm_peephole_clip", 1.5f, 0.f},
    {"lstm_cifg_peephole_layer_norm_projection", 0.f, 0.4f},
};

class LstmFixtureTest : public ::testing::TestWithParam<LstmCase> {
 protected:
  LstmConfig config() const {
    LstmConfig c;
    c.cell_clip = GetParam().cell_clip;
    c.proj_clip = GetParam().proj_clip;
    return c;
  }
};

// Two invokes: the second continues from the states the first left behind.
TEST_P(LstmFixtureTest, TwoChunksMatchOneReferenceRun) {
  const std::string name = GetParam().name;
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(test::build_and_prepare(lstm_model(name, config()), ModelFormat::kTflite, &m, &error))
      << error;
  FloatArray y1 = test::run(&m, {test::read_fixture(name, "x1")});
  EXPECT_LE(test::max_abs_diff(y1.values, test::read_fixture(name, "y1").values), kTolerance);
  FloatArray y2 = test::run(&m, {test::read_fixture(name, "x2")});
  EXPECT_LE(test::max_abs_diff(y2.values, test::read_fixture(name, "y2").values), kTolerance);
  m.runner.interpreter().reset_variables();
  FloatArray again = test::run(&m, {test::read_fixture(name, "x1")});
  EXPECT_LE(test::max_abs_diff(again.values, test::read_fixture(name, "y1").values), kTolerance);
}

TEST_P(LstmFixtureTest, TimeMajorMatches) {
  const std::string name = GetParam().name;
  LstmConfig c = config();
  c.time_major = true;
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(test::build_and_prepare(lstm_model(name, c), ModelFormat::kTflite, &m, &error))
      << error;
  FloatArray y1 = test::run(&m, {test::swap_batch_time(test::read_fixture(name, "x1"))});
  EXPECT_LE(
      test::max_abs_diff(y1.values, test::swap_batch_time(test::read_fixture(name, "y1")).values),
      kTolerance);
}

// 13 steps in one invoke take the input products of 8 steps at once (a full and
// a partial block); one step per invoke takes them step by step. Same sums in
// another order: equal within float rounding.
TEST_P(LstmFixtureTest, BlockedInputProductsMatchStepByStep) {
  const std::string name = GetParam().name;
  constexpr int32_t kSteps = 13;
  LstmConfig whole = config();
  whole.steps = kSteps;
  LstmConfig single = config();
  single.steps = 1;
  RunnableModel all, one;
  std::string error;
  ASSERT_TRUE(test::build_and_prepare(lstm_model(name, whole), ModelFormat::kTflite, &all, &error))
      << error;
  ASSERT_TRUE(test::build_and_prepare(lstm_model(name, single), ModelFormat::kTflite, &one, &error))
      << error;
  FloatArray x{{B, kSteps, I}, {}};
  for (int32_t i = 0; i < B * kSteps * I; ++i) x.values.push_back(std::sin(0.7f * i) * 1.5f);
  FloatArray y = test::run(&all, {x});
  ASSERT_EQ(y.values.size() % (B * kSteps), 0u);
  const size_t O = y.values.size() / (B * kSteps);
  double worst = 0.0;
  for (int32_t t = 0; t < kSteps; ++t) {
    FloatArray xt{{B, 1, I}, {}};
    for (int32_t b = 0; b < B; ++b) {
      for (int32_t i = 0; i < I; ++i) xt.values.push_back(x.values[(b * kSteps + t) * I + i]);
    }
    FloatArray yt = test::run(&one, {xt});
    ASSERT_EQ(yt.values.size(), B * O);
    for (int32_t b = 0; b < B; ++b) {
      for (size_t o = 0; o < O; ++o) {
        const double d = std::fabs(yt.values[b * O + o] - y.values[(b * kSteps + t) * O + o]);
        worst = d > worst ? d : worst;
      }
    }
  }
  EXPECT_LE(worst, 1e-6) << name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LstmFixtureTest, ::testing::ValuesIn(kLstmCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(LstmTest, TwentyInputLayoutWithoutLayerNormWorks) {
  LstmConfig c;
  c.input_count = 20;
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(
      test::build_and_prepare(lstm_model("lstm_keras", c), ModelFormat::kTflite, &m, &error))
      << error;
  FloatArray y1 = test::run(&m, {test::read_fixture("lstm_keras", "x1")});
  EXPECT_LE(test::max_abs_diff(y1.values, test::read_fixture("lstm_keras", "y1").values),
            kTolerance);
}

// Hybrid weights quantize x and h at run time as TFLite does (equality with real TFLite:
// hybrid_test): close to float maths on the dequantized weights, but not equal to it.
TEST(LstmTest, Int8HybridWeightsQuantizeActivationsAtRunTime) {
  LstmConfig quantized;
  quantized.int8_weights = true;
  LstmConfig dequantized;
  dequantized.dequantized_float = true;
  FloatArray x = test::read_fixture("lstm_keras", "x1");
  RunnableModel a, b;
  std::string error;
  ASSERT_TRUE(test::build_and_prepare(lstm_model("lstm_keras", quantized), ModelFormat::kTflite, &a,
                                      &error))
      << error;
  ASSERT_TRUE(test::build_and_prepare(lstm_model("lstm_keras", dequantized), ModelFormat::kTflite,
                                      &b, &error))
      << error;
  FloatArray ya = test::run(&a, {x});
  FloatArray yb = test::run(&b, {x});
  EXPECT_LE(test::max_abs_diff(ya.values, yb.values), 2e-2);
  EXPECT_GT(test::max_abs_diff(ya.values, yb.values), 1e-5);
  EXPECT_GT(test::max_abs_diff(yb.values, test::read_fixture("lstm_keras", "y1").values), 1e-6);
}

TEST(LstmTest, StatesMustBeVariablesAndAreNamed) {
  tools::ModelDef def = lstm_model("lstm_keras", LstmConfig());
  for (auto& t : def.subgraphs[0]->tensors) {
    if (t->name == "cell_state") t->is_variable = false;
  }
  // A non-variable state without data would be an activation nothing writes:
  // give it a buffer so it is a constant.
  RunnableModel m;
  std::string error;
  auto& sg = *def.subgraphs[0];
  for (auto& t : sg.tensors) {
    if (t->name != "cell_state") continue;
    auto buffer = std::make_unique<fb::BufferT>();
    buffer->data.assign(B * H * sizeof(float), 0);
    t->buffer = static_cast<uint32_t>(def.buffers.size());
    def.buffers.push_back(std::move(buffer));
  }
  EXPECT_FALSE(test::build_and_prepare(def, ModelFormat::kTflite, &m, &error));
  EXPECT_NE(error.find("cell_state"), std::string::npos) << error;
  EXPECT_NE(error.find("variable"), std::string::npos) << error;
}

TEST(LstmTest, CifgWithRecurrentInputWeightsIsRejected) {
  tools::ModelDef def = lstm_model("lstm_keras", LstmConfig());
  def.subgraphs[0]->operators[0]->inputs[1] = -1;  // drop input-to-input only
  RunnableModel m;
  std::string error;
  EXPECT_FALSE(test::build_and_prepare(def, ModelFormat::kTflite, &m, &error));
  EXPECT_NE(error.find("CIFG"), std::string::npos) << error;
}

TEST(LstmTest, WrongGateWeightShapeNamesTensorAndBothShapes) {
  tools::ModelDef def = lstm_model("lstm_keras", LstmConfig());
  for (auto& t : def.subgraphs[0]->tensors) {
    if (t->name == "recurrent_to_c") {
      t->shape = {H, 2};  // 8 floats: the buffer still holds H*H, so shrink it
    }
  }
  for (auto& t : def.subgraphs[0]->tensors) {
    if (t->name == "recurrent_to_c") def.buffers[t->buffer]->data.resize(H * 2 * sizeof(float));
  }
  RunnableModel m;
  std::string error;
  EXPECT_FALSE(test::build_and_prepare(def, ModelFormat::kTflite, &m, &error));
  EXPECT_NE(error.find("recurrent_to_c"), std::string::npos) << error;
  EXPECT_NE(error.find("[4,2]"), std::string::npos) << error;
  EXPECT_NE(error.find("[4,4]"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb
