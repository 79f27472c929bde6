// The Circle GRU op (-5) and our GRUWB_GRU custom op. References: onert-micro's
// own test vector for gru_float.circle (shared/data/models/onert-micro/README.md)
// and PyTorch fixtures (tests/fixtures/gen/recurrent_fixtures.py).

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "engine/kernels/flexbuffer_map.h"
#include "engine/kernels/gru_cell.h"
#include "tests/engine/kernels/recurrent_test_util.h"
#include "tests/engine/test_models.h"

namespace gruwb {
namespace {

using test::FloatArray;
using test::RecurrentModelBuilder;
using test::RunnableModel;

constexpr double kTolerance = 1e-5;
constexpr int32_t B = 2, T = 5, I = 3, H = 4;

FloatArray row(const FloatArray& a, int64_t r) {  // a[r] of a 2-D array
  int64_t cols = a.shape[1];
  return FloatArray{
      {cols}, std::vector<float>(a.values.begin() + r * cols, a.values.begin() + (r + 1) * cols)};
}

FloatArray last_step(const FloatArray& y) {  // [B,T,H] -> [B,H]
  FloatArray out{{y.shape[0], y.shape[2]}, {}};
  for (int64_t b = 0; b < y.shape[0]; ++b) {
    for (int64_t k = 0; k < y.shape[2]; ++k) {
      out.values.push_back(y.values[(b * y.shape[1] + y.shape[1] - 1) * y.shape[2] + k]);
    }
  }
  return out;
}

FloatArray steps(const FloatArray& x, int64_t begin, int64_t end) {  // [B,T,F] -> [B,end-begin,F]
  FloatArray out{{x.shape[0], end - begin, x.shape[2]}, {}};
  for (int64_t b = 0; b < x.shape[0]; ++b) {
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t k = 0; k < x.shape[2]; ++k) {
        out.values.push_back(x.values[(b * x.shape[1] + t) * x.shape[2] + k]);
      }
    }
  }
  return out;
}

// ---- Circle GRU ----------------------------------------------------------------------------

TEST(CircleGruTest, OnertMicroGruFloatMatchesItsReferenceVector) {
  RunnableModel m;
  std::string error;
  ASSERT_TRUE(test::load_and_prepare(test::model_path("gru_float.circle"), &m, &error)) << error;
  FloatArray x{{1, 1, 6},
               {7.899295f, -4.584313f, -2.9251342f, -2.1820352f, -10.649105f, 1.3530581f}};
  FloatArray y = test::run(&m, {x});
  std::vector<float> expected = {-0.9979859f, -0.90550894f, 0.025957875f, -0.39570245f,
                                 -0.8868108f};
  EXPECT_LE(test::max_abs_diff(y.values, expected), kTolerance);
}

TEST(CircleGruTest, SyntheticOnertMicroModelsRunWithDimZeroAsTime) {
  for (const char* file : {"synthetic_gru_fc_softmax_t28_i28_h32_c10.circle",
                           "synthetic_gru_fc_softmax_t3_i2_h4_c3.circle",
                           "synthetic_gru_fc_fc_softmax_t28_i28_h32_c10.circle"}) {
    SCOPED_TRACE(file);
    RunnableModel m;
    std::string error;
    ASSERT_TRUE(test::load_and_prepare(test::model_path(file), &m, &error)) << error;
    tools::NpyArray in = m.runner.output(0);  // for the class count
    Tensor* input = m.runner.interpreter().input(0);
    FloatArray x;
    for (int32_t d = 0; d < input->shape.rank; ++d) x.shape.push_back(input->shape.dims[d]);
    for (int64_t i = 0; i < input->elements(); ++i) x.values.push_back(std::sin(0.37f * i));
    FloatArray y = test::run(&m, {x});
    double sum = 0;
    for (float p : y.values) {
      EXPECT_TRUE(p >= 0.f && p <= 1.f);
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
    EXPECT_EQ(y.values.size(), static_cast<size_t>(in.elements()));
  }
}

// Circle GRU from the PyTorch reset_after fixture: time-major x, both biases, a non-zero
// constant initial state; this exercises W_h (input 3), which gru_float (T=1, h0=0) cannot.
tools::ModelDef circle_gru_model(const std::string& case_name, bool return_sequences,
                                 bool variable_state, int32_t steps_per_invoke) {
  RecurrentModelBuilder mb;
  FloatArray bias = test::read_fixture(case_name, "bias");
  int x = mb.input("x", {steps_per_invoke, B, I});
  int wx = mb.constant("hidden_hidden", test::read_fixture(case_name, "kernel"));
  int bx = mb.constant("hidden_hidden_bias", row(bias, 0));
  int wh = mb.constant("hidden_input", test::read_fixture(case_name, "recurrent_kernel"));
  int bh = mb.constant("hidden_input_bias", row(bias, 1));
  FloatArray h0 = test::read_fixture(case_name, "h0");
  int state =
      variable_state ? mb.tensor("state", {B, H}, &h0.values, true) : mb.constant("state", h0);
  int y = mb.output("y", return_sequences ? std::vector<int32_t>{steps_per_invoke, B, H}
                                          : std::vector<int32_t>{B, H});
  fb::BuiltinOptionsUnion options;
  auto gru_options = std::make_unique<fb::GRUOptionsT>();
  gru_options->return_sequences = return_sequences;
  options.Set(std::move(*gru_options));
  mb.op(static_cast<int32_t>(BuiltinOperator::GRU), {x, wx, bx, wh, bh, state}, {y},
        std::move(options));
  return mb.take();
}

TEST(CircleGruTest, MatchesTorchWithRecurrentWeightsBiasesAndInitialState) {
  const std::string kCase = "gru_reset_after";
  FloatArray x = test::swap_batch_time(test::read_fixture(kCase, "x"));
  FloatArray y = test::read_fixture(kCase, "y");
  std::string error;
  RunnableModel last;
  ASSERT_TRUE(test::build_and_prepare(circle_gru_model(kCase, false, false, T),
                                      ModelFormat::kCircle, &last, &error))
      << error;
  EXPECT_LE(test::max_abs_diff(test::run(&last, {x}).values, last_step(y).values), kTolerance);

  RunnableModel sequences;
  ASSERT_TRUE(test::build_and_prepare(circle_gru_model(kCase, true, false, T), ModelFormat::kCircle,
                                      &sequences, &error))
      << error;
  FloatArray out = test::run(&sequences, {x});
  EXPECT_EQ(out.shape, (std::vector<int64_t>{T, B, H}));
  EXPECT_LE(test::max_abs_diff(out.values, test::swap_batch_time(y).values), kTolerance);
}

TEST(CircleGruTest, VariableStateCarriesAcrossInvokesAndResets) {
  const std::string kCase = "gru_reset_after";
  FloatArray x = test::read_fixture(kCase, "x");
  FloatArray y = test::read_fixture(kCase, "y");
  std::string error;
  RunnableModel m;
  ASSERT_TRUE(test::build_and_prepare(circle_gru_model(kCase, false, true, 1), ModelFormat::kCircle,
                                      &m, &error))
      << error;
  for (int t = 0; t < T; ++t) {  // one step per invoke: the state lives in the variable
    FloatArray out = test::run(&m, {test::swap_batch_time(steps(x, t, t + 1))});
    EXPECT_LE(test::max_abs_diff(out.values, last_step(steps(y, 0, t + 1)).values), kTolerance)
        << "step " << t;
  }
  m.runner.interpreter().reset_variables();  // back to the file's initial state h0
  FloatArray out = test::run(&m, {test::swap_batch_time(steps(x, 0, 1))});
  EXPECT_LE(test::max_abs_diff(out.values, last_step(steps(y, 0, 1)).values), kTolerance);
}

TEST(CircleGruTest, RejectsWrongRecurrentWeightShapeNamingTheInput) {
  RecurrentModelBuilder mb;
  int x = mb.input("x", {T, 1, I});
  int wx = mb.constant("wx", FloatArray{{3 * H, I}, std::vector<float>(3 * H * I, 0.1f)});
  int wh = mb.constant("wh_wrong", FloatArray{{3 * H, I}, std::vector<float>(3 * H * I, 0.1f)});
  int state = mb.constant("state", FloatArray{{1, H}, std::vector<float>(H, 0.f)});
  int y = mb.output("y", {1, H});
  mb.op(static_cast<int32_t>(BuiltinOperator::GRU), {x, wx, -1, wh, -1, state}, {y});
  RunnableModel m;
  std::string error;
  EXPECT_FALSE(test::build_and_prepare(mb.def(), ModelFormat::kCircle, &m, &error));
  EXPECT_NE(error.find("wh_wrong"), std::string::npos) << error;
  // H is read from W_h's second dimension (3), so W_h should be [9,3].
  EXPECT_NE(error.find("[12,3], expected [9,3]"), std::string::npos) << error;
}

// ---- GRUWB_GRU custom op -------------------------------------------------------------------

struct CustomGruCase {
  const char* name;
  bool reset_after;
  const char* activation;
  const char* recurrent_activation;
};

const CustomGruCase kCustomCases[] = {
    {"gru_reset_after", true, "tanh", "sigmoid"},
    {"gru_reset_before", false, "tanh", "sigmoid"},
    {"gru_hard_sigmoid_linear", false, "linear", "hard_sigmoid"},
    {"gru_hard_sigmoid_reset_after_relu", true, "relu", "hard_sigmoid"},
};

std::vector<uint8_t> gru_options(const CustomGruCase& c, bool return_sequences, bool time_major) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.Bool("reset_after", c.reset_after);
    fbb.String("activation", c.activation);
    fbb.String("recurrent_activation", c.recurrent_activation);
    fbb.Bool("return_sequences", return_sequences);
    fbb.Bool("time_major", time_major);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

struct CustomGruConfig {
  bool return_sequences = false;
  bool time_major = false;
  bool with_state = true;
  bool int8_weights = false;
  bool dequantized_float = false;  // float weights holding the int8 values x scale
};

constexpr float kKernelScale = 0.02f;

tools::ModelDef custom_gru_model(const CustomGruCase& c, const CustomGruConfig& config) {
  RecurrentModelBuilder mb;
  std::vector<int32_t> x_shape =
      config.time_major ? std::vector<int32_t>{T, B, I} : std::vector<int32_t>{B, T, I};
  int x = mb.input("x", x_shape);
  FloatArray kernel = test::read_fixture(c.name, "kernel");
  FloatArray recurrent = test::read_fixture(c.name, "recurrent_kernel");
  if (config.dequantized_float) {
    for (FloatArray* a : {&kernel, &recurrent}) {
      for (float& v : a->values) v = std::round(v / kKernelScale) * kKernelScale;
    }
  }
  int wx = mb.constant("gru/kernel", kernel);
  int wh = mb.constant("gru/recurrent_kernel", recurrent);
  if (config.int8_weights) {
    mb.quantize_int8(wx, kKernelScale);
    mb.quantize_int8(wh, kKernelScale);
  }
  int bias = mb.constant("gru/bias", test::read_fixture(c.name, "bias"));
  int state = config.with_state ? mb.constant("h0", test::read_fixture(c.name, "h0")) : -1;
  std::vector<int32_t> y_shape = {B, H};
  if (config.return_sequences)
    y_shape = config.time_major ? std::vector<int32_t>{T, B, H} : std::vector<int32_t>{B, T, H};
  int y = mb.output("y", y_shape);
  mb.op(kOpCustom, {x, wx, wh, bias, state}, {y}, {}, "GRUWB_GRU",
        gru_options(c, config.return_sequences, config.time_major));
  return mb.take();
}

FloatArray run_custom(const CustomGruCase& c, const CustomGruConfig& config, const FloatArray& x) {
  RunnableModel m;
  std::string error;
  EXPECT_TRUE(
      test::build_and_prepare(custom_gru_model(c, config), ModelFormat::kTflite, &m, &error))
      << error;
  if (!error.empty()) return {};
  return test::run(&m, {x});
}

class CustomGruTest : public ::testing::TestWithParam<CustomGruCase> {};

TEST_P(CustomGruTest, ReturnSequencesMatchesTorch) {
  const CustomGruCase& c = GetParam();
  CustomGruConfig config;
  config.return_sequences = true;
  FloatArray y = run_custom(c, config, test::read_fixture(c.name, "x"));
  EXPECT_EQ(y.shape, (std::vector<int64_t>{B, T, H}));
  EXPECT_LE(test::max_abs_diff(y.values, test::read_fixture(c.name, "y").values), kTolerance);
}

TEST_P(CustomGruTest, LastStateMatchesTorch) {
  const CustomGruCase& c = GetParam();
  FloatArray y = run_custom(c, CustomGruConfig(), test::read_fixture(c.name, "x"));
  EXPECT_EQ(y.shape, (std::vector<int64_t>{B, H}));
  EXPECT_LE(test::max_abs_diff(y.values, last_step(test::read_fixture(c.name, "y")).values),
            kTolerance);
}

TEST_P(CustomGruTest, TimeMajorMatchesTorch) {
  const CustomGruCase& c = GetParam();
  CustomGruConfig config;
  config.return_sequences = true;
  config.time_major = true;
  FloatArray y = run_custom(c, config, test::swap_batch_time(test::read_fixture(c.name, "x")));
  EXPECT_EQ(y.shape, (std::vector<int64_t>{T, B, H}));
  EXPECT_LE(
      test::max_abs_diff(y.values, test::swap_batch_time(test::read_fixture(c.name, "y")).values),
      kTolerance);
}

TEST_P(CustomGruTest, OmittedInitialStateIsZero) {
  const CustomGruCase& c = GetParam();
  for (bool return_sequences : {false, true}) {
    CustomGruConfig config;
    config.with_state = false;
    config.return_sequences = return_sequences;
    FloatArray y = run_custom(c, config, test::read_fixture(c.name, "x"));
    FloatArray expected = test::read_fixture(c.name, "y_zero_state");
    if (!return_sequences) expected = last_step(expected);
    EXPECT_LE(test::max_abs_diff(y.values, expected.values), kTolerance) << return_sequences;
  }
}

// Hybrid weights: x, h (and r * h) are quantized at run time as hybrid FULLY_CONNECTEDs do
// (equality with the loop of hybrid FCs: hybrid_test), so the result is close to float maths
// on the dequantized weights (checked against torch above) but not equal to it.
TEST_P(CustomGruTest, Int8WeightsQuantizeActivationsAtRunTime) {
  const CustomGruCase& c = GetParam();
  FloatArray x = test::read_fixture(c.name, "x");
  CustomGruConfig quantized;
  quantized.return_sequences = true;
  quantized.int8_weights = true;
  CustomGruConfig dequantized = quantized;
  dequantized.int8_weights = false;
  dequantized.dequantized_float = true;
  FloatArray a = run_custom(c, quantized, x);
  FloatArray b = run_custom(c, dequantized, x);
  EXPECT_LE(test::max_abs_diff(a.values, b.values), 2e-2);
  EXPECT_GT(test::max_abs_diff(a.values, b.values), 1e-5);
  // And quantization changed something, so this is not float vs float.
  EXPECT_GT(test::max_abs_diff(b.values, test::read_fixture(c.name, "y").values), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CustomGruTest, ::testing::ValuesIn(kCustomCases),
                         [](const auto& info) { return std::string(info.param.name); });

std::string prepare_error_with_options(const std::vector<uint8_t>& options) {
  tools::ModelDef def = custom_gru_model(kCustomCases[0], CustomGruConfig());
  def.subgraphs[0]->operators[0]->custom_options = options;
  RunnableModel m;
  std::string error;
  EXPECT_FALSE(test::build_and_prepare(def, ModelFormat::kTflite, &m, &error));
  return error;
}

TEST(CustomGruOptionsTest, UnknownKeysValuesAndBrokenBuffersAreRejectedByName) {
  auto map_with = [](const std::function<void(flexbuffers::Builder&)>& fill) {
    flexbuffers::Builder fbb;
    fbb.Map([&]() { fill(fbb); });
    fbb.Finish();
    return fbb.GetBuffer();
  };
  EXPECT_NE(prepare_error_with_options(map_with([](auto& f) {
              f.Bool("go_backwards", true);
            })).find("go_backwards"),
            std::string::npos);
  EXPECT_NE(prepare_error_with_options(map_with([](auto& f) {
              f.String("activation", "elu");
            })).find("elu"),
            std::string::npos);
  EXPECT_NE(prepare_error_with_options(map_with([](auto& f) {
              f.String("recurrent_activation", "softsign");
            })).find("softsign"),
            std::string::npos);
  EXPECT_NE(prepare_error_with_options(map_with([](auto& f) {
              f.String("time_major", "yes");
            })).find("time_major"),
            std::string::npos);
  EXPECT_NE(prepare_error_with_options({1, 2, 3}).find("FlexBuffer"), std::string::npos);
}

TEST(CustomGruOptionsTest, BiasShapeMustMatchResetAfter) {
  CustomGruCase c = kCustomCases[1];  // reset_before fixture: bias [3H]
  c.reset_after = true;
  RunnableModel m;
  std::string error;
  EXPECT_FALSE(test::build_and_prepare(custom_gru_model(c, CustomGruConfig()), ModelFormat::kTflite,
                                       &m, &error));
  EXPECT_NE(error.find("gru/bias"), std::string::npos) << error;
  EXPECT_NE(error.find("[2,12]"), std::string::npos) << error;
}

// ---- FlexMap ---------------------------------------------------------------------------------

TEST(FlexMapTest, ReadsBoolsIntsAndStringsOfEveryWidth) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.Bool("flag", true);
    fbb.Int("small", -5);
    fbb.Int("big", -123456789012LL);
    fbb.UInt("unsigned", 70000);
    fbb.String("name", "hard_sigmoid");
    fbb.Float("ratio", 0.5f);
  });
  fbb.Finish();
  std::vector<uint8_t> bytes = fbb.GetBuffer();
  FlexMap map;
  ASSERT_TRUE(map.parse(bytes.data(), bytes.size()));
  EXPECT_EQ(map.size(), 6u);
  FlexValue v;
  bool flag = false;
  ASSERT_TRUE(map.find("flag", &v));
  EXPECT_TRUE(map.as_bool(v, &flag));
  EXPECT_TRUE(flag);
  int64_t n = 0;
  ASSERT_TRUE(map.find("small", &v));
  EXPECT_TRUE(map.as_int(v, &n));
  EXPECT_EQ(n, -5);
  ASSERT_TRUE(map.find("big", &v));
  EXPECT_TRUE(map.as_int(v, &n));
  EXPECT_EQ(n, -123456789012LL);
  ASSERT_TRUE(map.find("unsigned", &v));
  EXPECT_TRUE(map.as_int(v, &n));
  EXPECT_EQ(n, 70000);
  const char* text = nullptr;
  ASSERT_TRUE(map.find("name", &v));
  EXPECT_TRUE(map.as_string(v, &text));
  EXPECT_STREQ(text, "hard_sigmoid");
  EXPECT_FALSE(map.as_bool(v, &flag));  // a string is not a bool
  ASSERT_TRUE(map.find("ratio", &v));
  EXPECT_FALSE(map.as_int(v, &n));  // floats are not read as ints
  EXPECT_FALSE(map.find("missing", &v));
}

TEST(FlexMapTest, LongMapsUseWideOffsets) {
  flexbuffers::Builder fbb;
  std::string long_text(70000, 'x');  // forces 32-bit offsets
  fbb.Map([&]() {
    fbb.String("a_long", long_text);
    fbb.Bool("z_flag", false);
  });
  fbb.Finish();
  std::vector<uint8_t> bytes = fbb.GetBuffer();
  FlexMap map;
  ASSERT_TRUE(map.parse(bytes.data(), bytes.size()));
  FlexValue v;
  const char* text = nullptr;
  ASSERT_TRUE(map.find("a_long", &v));
  ASSERT_TRUE(map.as_string(v, &text));
  EXPECT_EQ(std::string(text), long_text);
  bool flag = true;
  ASSERT_TRUE(map.find("z_flag", &v));
  EXPECT_TRUE(map.as_bool(v, &flag));
  EXPECT_FALSE(flag);
}

TEST(FlexMapTest, TruncatedAndCorruptedBuffersNeverReadOutside) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.Bool("reset_after", true);
    fbb.String("activation", "tanh");
  });
  fbb.Finish();
  const std::vector<uint8_t> good = fbb.GetBuffer();
  // Every strict prefix, copied into an exactly sized heap block (ASan catches overreads).
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> prefix(good.begin(), good.begin() + static_cast<long>(n));
    FlexMap map;
    if (map.parse(prefix.data(), prefix.size())) {
      FlexValue v;
      const char* text = nullptr;
      if (map.find("activation", &v)) map.as_string(v, &text);
    }
  }
  // Every single-byte corruption.
  int parsed = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= static_cast<uint8_t>(1u << bit);
      FlexMap map;
      if (!map.parse(bad.data(), bad.size())) continue;
      ++parsed;
      for (size_t k = 0; k < map.size(); ++k) {
        FlexValue v;
        const char* text = nullptr;
        bool flag = false;
        if (map.key(k) && map.value_at(k, &v)) {
          map.as_string(v, &text);
          map.as_bool(v, &flag);
        }
      }
    }
  }
  EXPECT_GT(parsed, 0);  // some corruptions (e.g. in string bytes) still parse
  FlexMap map;
  EXPECT_FALSE(map.parse(nullptr, 0));
}

}  // namespace
}  // namespace gruwb

// The arena a fused GRU asks for: the reference model's sizes, and a shape whose BPTT tape
// (batch x time x 5H floats) cannot be addressed is refused instead of wrapping to a small size.
TEST(GruArenaBytesTest, SizesTheTapeAndRefusesOneThatDoesNotFit) {
  gruwb::GruArenaBytes bytes;
  ASSERT_TRUE(gruwb::gru_arena_bytes(3, 60, 1, 60, false, false, &bytes).ok());
  EXPECT_EQ(bytes.tape, sizeof(float) * 60 * 5 * 60);
  EXPECT_EQ(bytes.scratch,
            sizeof(float) * static_cast<size_t>(gruwb::gru_scratch_floats(3, 60, false)));
  EXPECT_EQ(bytes.backward_scratch,
            sizeof(float) * static_cast<size_t>(gruwb::gru_backward_scratch_floats(60) + 60));
  const gruwb::Status huge =
      gruwb::gru_arena_bytes(3, 26754, INT32_MAX, INT32_MAX, false, false, &bytes);
  EXPECT_EQ(huge.code(), gruwb::StatusCode::kOutOfMemory);
  EXPECT_NE(std::string(huge.message()).find("GRU"), std::string::npos);
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
// Inference on AVX-512 hosts runs the recurrent product over a column-major
// copy of W_h packed at prepare: whole sequences with and without it agree
// within float rounding, at the reference size, with 3H not a multiple of 16
// (H = 5, 130) and with H > 128 (the row path's AVX-512 limit).
TEST(GruPackedKernelTest, SequencesMatchTheRowProduct) {
  if (!gruwb::cpu_has_avx512()) GTEST_SKIP() << "no AVX-512 on this machine";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = uniform(rng);
    return v;
  };
  struct Size {
    int32_t input, units, steps;
  };
  for (const Size size : {Size{3, 60, 60}, Size{4, 5, 9}, Size{7, 130, 20}}) {
    const int32_t gates = 3 * size.units;
    const std::vector<float> wx = random(static_cast<size_t>(gates) * size.input);
    const std::vector<float> wh = random(static_cast<size_t>(gates) * size.units);
    const std::vector<float> bias = random(2 * static_cast<size_t>(gates));
    const std::vector<float> x = random(static_cast<size_t>(size.steps) * size.input);
    const std::vector<float> h0 = random(static_cast<size_t>(size.units));
    gruwb::GruCell cell;
    cell.input_size = size.input;
    cell.units = size.units;
    cell.input_kernel.f32 = wx.data();
    cell.input_kernel.rows = gates;
    cell.input_kernel.cols = size.input;
    cell.recurrent_kernel.f32 = wh.data();
    cell.recurrent_kernel.rows = gates;
    cell.recurrent_kernel.cols = size.units;
    cell.input_bias = bias.data();
    cell.recurrent_bias = bias.data() + gates;
    std::vector<float> scratch(
        static_cast<size_t>(gruwb::gru_scratch_floats(size.input, size.units, false)));
    const size_t out_floats = static_cast<size_t>(size.steps) * size.units;
    std::vector<float> by_rows(out_floats), by_columns(out_floats);
    gruwb::gru_sequence(cell, x.data(), size.input, size.steps, h0.data(), by_rows.data(),
                        size.units, scratch.data());
    size_t bytes = 0;
    ASSERT_TRUE(gruwb::column_major_bytes(gates, size.units, &bytes).ok());
    std::vector<float> packed(bytes / sizeof(float));
    cell.packed.recurrent = gruwb::pack_column_major(wh.data(), gates, size.units, packed.data());
    ASSERT_TRUE(gruwb::column_major_bytes(gates, size.input, &bytes).ok());
    std::vector<float> packed_input(bytes / sizeof(float));
    cell.packed.input = gruwb::pack_column_major(wx.data(), gates, size.input, packed_input.data());
    gruwb::gru_sequence(cell, x.data(), size.input, size.steps, h0.data(), by_columns.data(),
                        size.units, scratch.data());
    for (size_t i = 0; i < out_floats; ++i) {
      ASSERT_NEAR(by_columns[i], by_rows[i], 1e-5) << "H " << size.units << " value " << i;
    }
  }
}
#endif
