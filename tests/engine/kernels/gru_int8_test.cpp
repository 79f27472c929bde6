// The integer GRUWB_GRU (docs/fused-gru-op.md "Integer GRU"): the fixed-point
// sigmoid/tanh against hand-worked values and libm, the int8 op against the
// float op on the same quantized weights within a bound from the quantization
// steps, streaming through an int16 variable state, and the refusals.

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/kernels/fixed_point.h"
#include "tests/engine/kernels/op_test_util.h"

namespace gruwb {
namespace {

using test::OpModelBuilder;
using test::Values;

// The fixed-point sigmoid/tanh are TFLite's integer LSTM's (fixed_point.h,
// checked in fixed_point_test).

// ---- the op ----

constexpr int32_t B = 2, T = 12, I = 3, H = 8;
constexpr float kXScale = 4.f / 255.f;  // x in [-2, 2]
constexpr int32_t kXZeroPoint = -1;

std::vector<uint8_t> options(bool reset_after = true, bool return_sequences = true,
                             bool time_major = false) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Bool("reset_after", reset_after);
    fbb.Bool("return_sequences", return_sequences);
    fbb.Bool("time_major", time_major);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

// Random weights quantized per row; `float_*` hold the dequantized values the
// float reference runs on, so only the integer arithmetic differs.
struct QuantizedGru {
  std::vector<int8_t> wx, wh;
  std::vector<float> wx_scales, wh_scales;
  std::vector<int32_t> bias;
  std::vector<float> float_wx, float_wh, float_bias;
  std::vector<int8_t> x;
  std::vector<float> float_x;
};

void quantize_rows(const std::vector<float>& w, int32_t cols, std::vector<int8_t>* q,
                   std::vector<float>* scales, std::vector<float>* dequantized) {
  const int32_t rows = static_cast<int32_t>(w.size()) / cols;
  for (int32_t r = 0; r < rows; ++r) {
    float m = 0.f;
    for (int32_t i = 0; i < cols; ++i) m = std::max(m, std::fabs(w[r * cols + i]));
    const float s = m / 127.f;
    scales->push_back(s);
    for (int32_t i = 0; i < cols; ++i) {
      q->push_back(static_cast<int8_t>(std::lround(w[r * cols + i] / s)));
      dequantized->push_back(q->back() * s);
    }
  }
}

QuantizedGru random_gru(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> weight(-0.6f, 0.6f), x(-2.f, 2.f);
  QuantizedGru g;
  std::vector<float> wx(3 * H * I), wh(3 * H * H);
  for (float& v : wx) v = weight(rng);
  for (float& v : wh) v = weight(rng);
  quantize_rows(wx, I, &g.wx, &g.wx_scales, &g.float_wx);
  quantize_rows(wh, H, &g.wh, &g.wh_scales, &g.float_wh);
  for (int32_t i = 0; i < 6 * H; ++i) {
    const int32_t r = i % (3 * H);
    const double s = i < 3 * H ? static_cast<double>(kXScale) * g.wx_scales[r]
                               : static_cast<double>(g.wh_scales[r]) / 32768.0;
    g.bias.push_back(static_cast<int32_t>(std::lround(weight(rng) / s)));
    g.float_bias.push_back(static_cast<float>(g.bias.back() * s));
  }
  for (int32_t i = 0; i < B * T * I; ++i) {
    g.x.push_back(static_cast<int8_t>(
        std::clamp<long>(std::lround(x(rng) / kXScale) + kXZeroPoint, -128, 127)));
    g.float_x.push_back((g.x.back() - kXZeroPoint) * kXScale);
  }
  return g;
}

std::unique_ptr<fb::QuantizationParametersT> params(std::vector<float> scales,
                                                    std::vector<int64_t> zero_points) {
  auto q = std::make_unique<fb::QuantizationParametersT>();
  q->scale = std::move(scales);
  q->zero_point = std::move(zero_points);
  return q;
}

struct IntegerConfig {
  TensorType output_type = TensorType::INT16;
  bool variable_state = false;
  bool return_sequences = true;
  int32_t steps = T;
};
constexpr float kOutputScale = 2.f / 255.f;  // int8 output: h in [-1, 1]

OpModelBuilder integer_model(const QuantizedGru& g, const IntegerConfig& c = IntegerConfig()) {
  OpModelBuilder b;
  const int x = b.input("x", {B, c.steps, I}, TensorType::INT8);
  b.tensor_def(x).quantization = params({kXScale}, {kXZeroPoint});
  const int wx = b.constant_int8("gru/kernel", {3 * H, I}, g.wx, g.wx_scales);
  const int wh = b.constant_int8("gru/recurrent_kernel", {3 * H, H}, g.wh, g.wh_scales);
  const int bias = b.constant("gru/bias", Values::i32({2, 3 * H}, g.bias));
  int state = -1;
  if (c.variable_state) {
    state = b.variable("h", {B, H}, TensorType::INT16);
    b.tensor_def(state).quantization = params({1.f / 32768.f}, {0});
  }
  const int y = b.output("y", {}, c.output_type);
  b.tensor_def(y).quantization = c.output_type == TensorType::INT16 ? params({1.f / 32768.f}, {0})
                                                                    : params({kOutputScale}, {0});
  b.custom_op("GRUWB_GRU", {x, wx, wh, bias, state}, {y}, options(true, c.return_sequences));
  return b;
}

std::vector<float> run_float(const QuantizedGru& g) {
  OpModelBuilder b;
  const int x = b.input("x", {B, T, I});
  const int wx = b.constant("gru/kernel", {3 * H, I}, g.float_wx);
  const int wh = b.constant("gru/recurrent_kernel", {3 * H, H}, g.float_wh);
  const int bias = b.constant("gru/bias", {2, 3 * H}, g.float_bias);
  const int y = b.output("y");
  b.custom_op("GRUWB_GRU", {x, wx, wh, bias, -1}, {y}, options());
  std::vector<Values> out = test::run(b, {Values::f32({B, T, I}, g.float_x)});
  return out.empty() ? std::vector<float>() : out[0].floats();
}

std::vector<float> dequantize(const Values& v) {
  std::vector<float> out;
  if (v.type == TensorType::INT16) {
    const int16_t* p = reinterpret_cast<const int16_t*>(v.bytes.data());
    for (int64_t i = 0; i < v.elements(); ++i) out.push_back(p[i] / 32768.f);
  } else {
    for (uint8_t b : v.bytes) out.push_back(static_cast<int8_t>(b) * kOutputScale);
  }
  return out;
}

// Per step, h picks up at most: the Q3.12 rounding of W_x x, W_h h and r (W_h h)
// (3 x 2^-13 in a pre-activation, passed on with slope <= 1), one Q0.15 step
// each from sigmoid, tanh and the blend, and the weights see h's error again
// the next step. Over T steps with these weights (|row| of W_h <= 8 x 0.6)
// the error stays below T x (3 x 2^-13 + 3 x 2^-15) ~ 5.6e-3.
constexpr float kStepBudget = 3.f / 8192.f + 3.f / 32768.f;

TEST(GruInt8Test, MatchesTheFloatOpOnTheSameQuantizedWeights) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const QuantizedGru g = random_gru(seed);
    const std::vector<float> expected = run_float(g);
    std::vector<Values> out = test::run(integer_model(g), {Values::i8({B, T, I}, g.x)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int32_t>{B, T, H}));
    const std::vector<float> actual = dequantize(out[0]);
    ASSERT_EQ(actual.size(), expected.size());
    float worst = 0.f;
    for (int32_t b = 0; b < B; ++b) {
      for (int32_t t = 0; t < T; ++t) {
        for (int32_t i = 0; i < H; ++i) {
          const size_t at = (static_cast<size_t>(b) * T + t) * H + i;
          const float diff = std::fabs(actual[at] - expected[at]);
          worst = std::max(worst, diff);
          EXPECT_LE(diff, (t + 1) * kStepBudget) << "seed " << seed << " b " << b << " t " << t;
        }
      }
    }
    printf("seed %u: max |int16 - float| = %.3g\n", seed, static_cast<double>(worst));
  }
}

TEST(GruInt8Test, Int8OutputAddsHalfAnOutputStep) {
  const QuantizedGru g = random_gru(4);
  const std::vector<float> expected = run_float(g);
  IntegerConfig c;
  c.output_type = TensorType::INT8;
  std::vector<Values> out = test::run(integer_model(g, c), {Values::i8({B, T, I}, g.x)});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> actual = dequantize(out[0]);
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_LE(std::fabs(actual[i] - expected[i]), T * kStepBudget + kOutputScale / 2) << i;
  }
}

TEST(GruInt8Test, StreamingThroughTheInt16StateEqualsOneLongRun) {
  const QuantizedGru g = random_gru(5);
  IntegerConfig whole;
  whole.return_sequences = false;
  std::vector<Values> expected = test::run(integer_model(g, whole), {Values::i8({B, T, I}, g.x)});
  ASSERT_EQ(expected.size(), 1u);
  IntegerConfig chunk = whole;
  chunk.variable_state = true;
  chunk.steps = T / 3;
  test::OpRunner runner(integer_model(g, chunk));
  ASSERT_TRUE(runner.ok()) << runner.error();
  Values last;
  for (int32_t part = 0; part < 3; ++part) {
    std::vector<int8_t> x;
    for (int32_t b = 0; b < B; ++b) {
      const auto from = g.x.begin() + (b * T + part * chunk.steps) * I;
      x.insert(x.end(), from, from + chunk.steps * I);
    }
    runner.set_input(0, Values::i8({B, chunk.steps, I}, x));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    last = runner.output(0);
  }
  EXPECT_EQ(last.bytes, expected[0].bytes);  // the same integer arithmetic, bit for bit
  runner.interpreter().reset_variables();    // back to h = 0: the first chunk again
  std::vector<int8_t> first;
  for (int32_t b = 0; b < B; ++b) {
    const auto from = g.x.begin() + b * T * I;
    first.insert(first.end(), from, from + chunk.steps * I);
  }
  runner.set_input(0, Values::i8({B, chunk.steps, I}, first));
  ASSERT_TRUE(runner.invoke());
  IntegerConfig short_run = whole;
  short_run.steps = chunk.steps;
  EXPECT_EQ(
      runner.output(0).bytes,
      test::run(integer_model(g, short_run), {Values::i8({B, chunk.steps, I}, first)})[0].bytes);
}

// time_major: x and the sequence output [T,B,...], the same integers.
TEST(GruInt8Test, TimeMajorIsTheSameSequenceTransposed) {
  const QuantizedGru g = random_gru(9);
  std::vector<Values> expected = test::run(integer_model(g), {Values::i8({B, T, I}, g.x)});
  ASSERT_EQ(expected.size(), 1u);
  OpModelBuilder b = integer_model(g);
  b.tensor_def(0).shape = {T, B, I};
  b.subgraph().operators[0]->custom_options = options(true, true, /*time_major=*/true);
  std::vector<int8_t> x(g.x.size());
  for (int32_t n = 0; n < B; ++n) {
    for (int32_t t = 0; t < T; ++t) {
      for (int32_t i = 0; i < I; ++i) x[(t * B + n) * I + i] = g.x[(n * T + t) * I + i];
    }
  }
  std::vector<Values> out = test::run(b, {Values::i8({T, B, I}, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int32_t>{T, B, H}));
  const int16_t* a = reinterpret_cast<const int16_t*>(expected[0].bytes.data());
  const int16_t* c = reinterpret_cast<const int16_t*>(out[0].bytes.data());
  for (int32_t n = 0; n < B; ++n) {
    for (int32_t t = 0; t < T; ++t) {
      for (int32_t i = 0; i < H; ++i) {
        ASSERT_EQ(c[(t * B + n) * H + i], a[(n * T + t) * H + i]) << n << " " << t << " " << i;
      }
    }
  }
}

// The Circle GRU op (-5): time-major x, biases as two [3H] int32 tensors, the
// state required; the same integer GRU, so the same integers as GRUWB_GRU.
TEST(GruInt8Test, CircleGruEqualsTheCustomOp) {
  const QuantizedGru g = random_gru(8);
  IntegerConfig last;
  last.return_sequences = false;
  std::vector<Values> expected = test::run(integer_model(g, last), {Values::i8({B, T, I}, g.x)});
  ASSERT_EQ(expected.size(), 1u);
  OpModelBuilder b;
  const int x = b.input("x", {T, B, I}, TensorType::INT8);
  b.tensor_def(x).quantization = params({kXScale}, {kXZeroPoint});
  const int wx = b.constant_int8("W_x", {3 * H, I}, g.wx, g.wx_scales);
  const std::vector<int32_t> bx(g.bias.begin(), g.bias.begin() + 3 * H);
  const std::vector<int32_t> bh(g.bias.begin() + 3 * H, g.bias.end());
  const int bias_x = b.constant("b_x", Values::i32({3 * H}, bx));
  const int wh = b.constant_int8("W_h", {3 * H, H}, g.wh, g.wh_scales);
  const int bias_h = b.constant("b_h", Values::i32({3 * H}, bh));
  const int state = b.variable("h", {B, H}, TensorType::INT16);
  b.tensor_def(state).quantization = params({1.f / 32768.f}, {0});
  const int y = b.output("y", {B, H}, TensorType::INT16);
  b.tensor_def(y).quantization = params({1.f / 32768.f}, {0});
  b.op(BuiltinOperator::GRU, {x, wx, bias_x, wh, bias_h, state}, {y}, fb::GRUOptionsT());
  std::vector<int8_t> time_major(g.x.size());
  for (int32_t n = 0; n < B; ++n) {
    for (int32_t t = 0; t < T; ++t) {
      for (int32_t i = 0; i < I; ++i) time_major[(t * B + n) * I + i] = g.x[(n * T + t) * I + i];
    }
  }
  std::vector<Values> out = test::run(b, {Values::i8({T, B, I}, time_major)}, ModelFormat::kCircle);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bytes, expected[0].bytes);
}

// One line naming the culprit.
void expect_refused(const OpModelBuilder& b, const char* problem) {
  const std::string error = test::prepare_error(b);
  EXPECT_NE(error.find(problem), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(GruInt8Test, BadQuantizationIsRefusedAtPrepare) {
  const QuantizedGru g = random_gru(6);
  {
    OpModelBuilder b = integer_model(g);
    b.tensor_def(0).quantization.reset();
    expect_refused(b, "input 'x' (INT8) has no quantization scale");
  }
  {
    OpModelBuilder b = integer_model(g);
    b.tensor_def(1).quantization->scale.resize(5);
    expect_refused(b, "'gru/kernel' needs 1 or 24 scales");
  }
  {
    OpModelBuilder b = integer_model(g);
    b.tensor_def(2).quantization->zero_point[3] = 4;
    expect_refused(b, "'gru/recurrent_kernel' has zero point 4");
  }
  {
    IntegerConfig c;
    c.variable_state = true;
    OpModelBuilder b = integer_model(g, c);
    b.tensor_def(4).quantization = params({1.f / 128.f}, {0});
    expect_refused(b, "must have scale 2^-15 and zero point 0");
    b.tensor_def(4).type = TensorType::INT8;
    expect_refused(b, "INT16");
  }
  {
    OpModelBuilder b = integer_model(g);
    b.tensor_def(3).type = TensorType::FLOAT32;
    b.tensor_def(3).shape = {B * 3 * H};  // same bytes, wrong type
    expect_refused(b, "bias (input 3)");
  }
  {
    OpModelBuilder b = integer_model(g);
    b.tensor_def(4).quantization.reset();
    expect_refused(b, "output 'y' (INT16) has no quantization scale");
  }
  {
    OpModelBuilder b = integer_model(g);
    b.subgraph().operators[0]->custom_options = options(/*reset_after=*/false);
    expect_refused(b, "int8 GRUWB_GRU supports reset_after=true");
  }
}

}  // namespace
}  // namespace gruwb
