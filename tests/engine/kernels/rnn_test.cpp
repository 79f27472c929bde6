// UNIDIRECTIONAL_SEQUENCE_RNN against torch.nn.RNN(tanh)
// (tests/fixtures/gen/recurrent_fixtures.py, case rnn_tanh).

#include <gtest/gtest.h>

#include <cmath>

#include "tests/engine/kernels/recurrent_test_util.h"

namespace gruwb {
namespace {

using test::FloatArray;
using test::RecurrentModelBuilder;
using test::RunnableModel;

constexpr double kTolerance = 1e-5;
constexpr int32_t B = 2, T = 5, I = 3, H = 4;
const char kCase[] = "rnn_tanh";

struct RnnConfig {
  bool time_major = false;
  bool int8_weights = false;
  bool dequantized_float = false;
  bool variable_state = true;
  fb::ActivationFunctionType activation = fb::ActivationFunctionType::TANH;
};

constexpr float kWeightScale = 0.02f;

tools::ModelDef rnn_model(const RnnConfig& config) {
  RecurrentModelBuilder mb;
  FloatArray w = test::read_fixture(kCase, "weights");
  FloatArray r = test::read_fixture(kCase, "recurrent_weights");
  if (config.dequantized_float) {
    for (FloatArray* a : {&w, &r}) {
      for (float& v : a->values) v = std::round(v / kWeightScale) * kWeightScale;
    }
  }
  int x = mb.input(
      "x", config.time_major ? std::vector<int32_t>{T, B, I} : std::vector<int32_t>{B, T, I});
  int wi = mb.constant("rnn/kernel", w);
  int wr = mb.constant("rnn/recurrent_kernel", r);
  if (config.int8_weights) {
    mb.quantize_int8(wi, kWeightScale);
    mb.quantize_int8(wr, kWeightScale);
  }
  int bias = mb.constant("rnn/bias", test::read_fixture(kCase, "bias"));
  int state = config.variable_state
                  ? mb.variable("rnn/state", {B, H})
                  : mb.constant("rnn/state", FloatArray{{B, H}, std::vector<float>(B * H, 0.f)});
  int y = mb.output(
      "y", config.time_major ? std::vector<int32_t>{T, B, H} : std::vector<int32_t>{B, T, H});
  fb::BuiltinOptionsUnion options;
  fb::SequenceRNNOptionsT rnn_options;
  rnn_options.time_major = config.time_major;
  rnn_options.fused_activation_function = config.activation;
  options.Set(std::move(rnn_options));
  mb.op(static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN),
        {x, wi, wr, bias, state}, {y}, std::move(options));
  return mb.take();
}

TEST(RnnTest, TanhMatchesTorchAcrossTwoInvokesAndResets) {
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(test::build_and_prepare(rnn_model(RnnConfig()), ModelFormat::kTflite, &m, &error))
      << error;
  FloatArray y1 = test::run(&m, {test::read_fixture(kCase, "x1")});
  EXPECT_EQ(y1.shape, (std::vector<int64_t>{B, T, H}));
  EXPECT_LE(test::max_abs_diff(y1.values, test::read_fixture(kCase, "y1").values), kTolerance);
  FloatArray y2 = test::run(&m, {test::read_fixture(kCase, "x2")});
  EXPECT_LE(test::max_abs_diff(y2.values, test::read_fixture(kCase, "y2").values), kTolerance);
  m.runner.interpreter().reset_variables();
  FloatArray again = test::run(&m, {test::read_fixture(kCase, "x1")});
  EXPECT_LE(test::max_abs_diff(again.values, test::read_fixture(kCase, "y1").values), kTolerance);
}

TEST(RnnTest, TimeMajorMatchesTorch) {
  RnnConfig config;
  config.time_major = true;
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(test::build_and_prepare(rnn_model(config), ModelFormat::kTflite, &m, &error))
      << error;
  FloatArray y1 = test::run(&m, {test::swap_batch_time(test::read_fixture(kCase, "x1"))});
  EXPECT_EQ(y1.shape, (std::vector<int64_t>{T, B, H}));
  EXPECT_LE(
      test::max_abs_diff(y1.values, test::swap_batch_time(test::read_fixture(kCase, "y1")).values),
      kTolerance);
}

// With a RELU activation the first step is relu(W x + b) (state 0): checked by plain loops.
TEST(RnnTest, ReluFirstStepIsReluOfInputProjection) {
  RnnConfig config;
  config.activation = fb::ActivationFunctionType::RELU;
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(test::build_and_prepare(rnn_model(config), ModelFormat::kTflite, &m, &error))
      << error;
  FloatArray x = test::read_fixture(kCase, "x1");
  FloatArray w = test::read_fixture(kCase, "weights");
  FloatArray bias = test::read_fixture(kCase, "bias");
  FloatArray y = test::run(&m, {x});
  for (int b = 0; b < B; ++b) {
    for (int u = 0; u < H; ++u) {
      double acc = bias.values[static_cast<size_t>(u)];
      for (int i = 0; i < I; ++i) {
        acc += static_cast<double>(w.values[static_cast<size_t>(u * I + i)]) *
               x.values[static_cast<size_t>((b * T) * I + i)];
      }
      EXPECT_NEAR(y.values[static_cast<size_t>((b * T) * H + u)], acc > 0 ? acc : 0.0, 1e-6);
    }
  }
}

// Hybrid weights quantize x and h at run time as TFLite does (equality with real TFLite:
// hybrid_test): close to float maths on the dequantized weights, but not equal to it.
TEST(RnnTest, Int8HybridWeightsQuantizeActivationsAtRunTime) {
  RnnConfig quantized;
  quantized.int8_weights = true;
  RnnConfig dequantized;
  dequantized.dequantized_float = true;
  RunnableModel a, b;
  std::string error;
  ASSERT_TRUE(test::build_and_prepare(rnn_model(quantized), ModelFormat::kTflite, &a, &error))
      << error;
  ASSERT_TRUE(test::build_and_prepare(rnn_model(dequantized), ModelFormat::kTflite, &b, &error))
      << error;
  FloatArray x = test::read_fixture(kCase, "x1");
  FloatArray ya = test::run(&a, {x});
  FloatArray yb = test::run(&b, {x});
  EXPECT_LE(test::max_abs_diff(ya.values, yb.values), 2e-2);
  EXPECT_GT(test::max_abs_diff(ya.values, yb.values), 1e-5);
  EXPECT_GT(test::max_abs_diff(yb.values, test::read_fixture(kCase, "y1").values), 1e-6);
}

TEST(RnnTest, ConstantHiddenStateIsRejectedByName) {
  RnnConfig config;
  config.variable_state = false;
  RunnableModel m;
  std::string error;
  EXPECT_FALSE(test::build_and_prepare(rnn_model(config), ModelFormat::kTflite, &m, &error));
  EXPECT_NE(error.find("rnn/state"), std::string::npos) << error;
  EXPECT_NE(error.find("variable"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb
