// Backpropagation through time of the fused recurrent ops, checked two ways:
//  - central differences of the loss (eps 1e-3, float32 forward) for
//    UNIDIRECTIONAL_SEQUENCE_LSTM (plain, CIFG + peepholes + cell clip,
//    time-major) and UNIDIRECTIONAL_SEQUENCE_RNN, with 2-3 batch rows in one
//    pass, so the expected values come from the forward kernels;
//  - PyTorch golden gradients and one Adam step (tests/fixtures/gen/
//    train_fixtures.py) for GRU reset_after true/false, LSTM and SimpleRNN,
//    each + Dense + softmax + CE, on the fused model the builder makes from the
//    fixture's weights.

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/tools/model_builder.h"
#include "engine/tools/npy.h"
#include "engine/train/trainer.h"
#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"
#include "tests/fixtures/train_fixtures.h"

namespace gruwb::test {
namespace {

// gradient_check.h's check, plus: a training forward carries no state from
// one sample to the next (the same loss when the sample is evaluated again).
void check_sequence_gradients(Session& s, const std::vector<float>& x,
                              const std::vector<float>& labels, const std::string& what) {
  check_gradients(s, {x}, labels, what);
  Trainer& t = s.trainer;
  t.clear_gradients();
  float loss = 0.f;
  Status st = t.accumulate(&loss);
  ASSERT_TRUE(st.ok()) << what << ": " << st.message();
  EXPECT_FLOAT_EQ(loss_now(t), loss) << what;
}

// ---- UNIDIRECTIONAL_SEQUENCE_LSTM ---------------------------------------------------

struct LstmCase {
  bool cifg;
  bool peephole;
  float cell_clip;
  bool time_major;
  const char* what;
};

TEST(RecurrentBackward, LstmBpttMatchesFiniteDifferences) {
  const int B = 2, T = 11, I = 3, H = 3;  // T: a full and a partial kTimeBlock
  uint32_t seed = 100;
  for (LstmCase c : {LstmCase{false, false, 0.f, false, "LSTM"},
                     LstmCase{true, true, 0.6f, false, "LSTM CIFG+peephole+clip"},
                     LstmCase{false, true, 0.f, true, "LSTM peephole time-major"}}) {
    OpModelBuilder b;
    int x =
        b.input("x", c.time_major ? std::vector<int32_t>{T, B, I} : std::vector<int32_t>{B, T, I});
    std::vector<int32_t> inputs(24, -1);
    inputs[0] = x;
    const char* gate[4] = {"i", "f", "c", "o"};
    for (int g = c.cifg ? 1 : 0; g < 4; ++g) {
      inputs[1 + g] =
          b.constant(std::string("w_") + gate[g], {H, I}, random_floats(H * I, 0.7f, ++seed));
      inputs[5 + g] =
          b.constant(std::string("r_") + gate[g], {H, H}, random_floats(H * H, 1.2f, ++seed));
      inputs[12 + g] = b.constant(std::string("b_") + gate[g], {H}, random_floats(H, 0.4f, ++seed));
    }
    if (c.peephole) {
      if (!c.cifg) inputs[9] = b.constant("p_i", {H}, random_floats(H, 0.5f, ++seed));
      inputs[10] = b.constant("p_f", {H}, random_floats(H, 0.5f, ++seed));
      inputs[11] = b.constant("p_o", {H}, random_floats(H, 0.5f, ++seed));
    }
    inputs[18] = b.variable("output_state", {B, H});
    inputs[19] = b.variable("cell_state", {B, H});
    int y = b.output("y");
    fb::UnidirectionalSequenceLSTMOptionsT options;
    options.fused_activation_function = fb::ActivationFunctionType::TANH;
    options.cell_clip = c.cell_clip;
    options.time_major = c.time_major;
    b.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, {y}, options);
    Session s;
    ASSERT_TRUE(s.prepare(b, mse_config())) << c.what;
    const int gates = c.cifg ? 3 : 4;
    const int peepholes = c.peephole ? (c.cifg ? 2 : 3) : 0;
    EXPECT_EQ(s.trainer.weight_count(), 3 * gates + peepholes) << c.what;
    EXPECT_GT(s.trainer.memory().tape_bytes, 0u);
    const std::vector<float> x_values = random_floats(B * T * I, 1.5f, ++seed);
    check_sequence_gradients(s, x_values, random_floats(B * T * H, 3.f, ++seed), c.what);
  }
}

TEST(RecurrentBackward, LstmTrainingRefusesProjectionNamingIt) {
  const int T = 2, I = 2, H = 3, P = 2;
  OpModelBuilder b;
  std::vector<int32_t> inputs(24, -1);
  inputs[0] = b.input("x", {1, T, I});
  for (int g = 0; g < 4; ++g) {
    inputs[1 + g] = b.constant("w" + std::to_string(g), {H, I}, random_floats(H * I, 0.5f, 1));
    inputs[5 + g] = b.constant("r" + std::to_string(g), {H, P}, random_floats(H * P, 0.5f, 2));
    inputs[12 + g] = b.constant("b" + std::to_string(g), {H}, random_floats(H, 0.5f, 3));
  }
  inputs[16] = b.constant("projection", {P, H}, random_floats(P * H, 0.5f, 4));
  inputs[18] = b.variable("output_state", {1, P});
  inputs[19] = b.variable("cell_state", {1, H});
  int y = b.output("y");
  fb::UnidirectionalSequenceLSTMOptionsT options;
  options.fused_activation_function = fb::ActivationFunctionType::TANH;
  b.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, {y}, options);
  Session s;
  ::testing::AssertionResult r = s.prepare(b, mse_config());
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("projection"), std::string::npos) << r.message();
}

// ---- UNIDIRECTIONAL_SEQUENCE_RNN ----------------------------------------------------

TEST(RecurrentBackward, RnnBpttMatchesFiniteDifferences) {
  const int B = 3, T = 5, I = 2, H = 4;
  uint32_t seed = 200;
  for (bool time_major : {false, true}) {
    for (auto act : {fb::ActivationFunctionType::TANH, fb::ActivationFunctionType::RELU}) {
      OpModelBuilder b;
      int x =
          b.input("x", time_major ? std::vector<int32_t>{T, B, I} : std::vector<int32_t>{B, T, I});
      int w = b.constant("w", {H, I}, random_floats(H * I, 0.8f, ++seed));
      int r = b.constant("r", {H, H}, random_floats(H * H, 0.6f, ++seed));
      int bias = b.constant("b", {H}, random_floats(H, 0.3f, ++seed));
      int state = b.variable("hidden_state", {B, H});
      int y = b.output("y");
      fb::SequenceRNNOptionsT options;
      options.time_major = time_major;
      options.fused_activation_function = act;
      b.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN, {x, w, r, bias, state}, {y}, options);
      Session s;
      ASSERT_TRUE(s.prepare(b, mse_config()));
      EXPECT_EQ(s.trainer.weight_count(), 3);
      std::string what = std::string("RNN ") + fb::EnumNameActivationFunctionType(act) +
                         (time_major ? " time-major" : "");
      const std::vector<float> x_values = random_floats(B * T * I, 1.f, ++seed);
      check_sequence_gradients(s, x_values, random_floats(B * T * H, 1.f, ++seed), what);
    }
  }
}

// An observer sees ||dL/dh_t|| once per time step, last step first, summed
// over the batch rows; at the last step it is the norm of the loss gradient
// of that step's outputs.

TEST(RecurrentBackward, RnnReportsStateGradientPerStepToTheObserver) {
  const int B = 2, T = 5, I = 2, H = 4;
  OpModelBuilder b;
  int x = b.input("x", {B, T, I});
  int w = b.constant("w", {H, I}, random_floats(H * I, 0.8f, 301));
  int r = b.constant("r", {H, H}, random_floats(H * H, 0.6f, 302));
  int bias = b.constant("b", {H}, random_floats(H, 0.3f, 303));
  int state = b.variable("hidden_state", {B, H});
  int y = b.output("y");
  fb::SequenceRNNOptionsT options;
  options.fused_activation_function = fb::ActivationFunctionType::TANH;
  b.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN, {x, w, r, bias, state}, {y}, options);
  Session s;
  ASSERT_TRUE(s.prepare(b, mse_config()));
  Trainer& t = s.trainer;
  std::vector<float> xv = random_floats(B * T * I, 1.f, 304);
  std::vector<float> labels = random_floats(B * T * H, 1.f, 305);
  memcpy(t.input(0)->data, xv.data(), t.input(0)->bytes);
  memcpy(t.label(), labels.data(), labels.size() * sizeof(float));
  StateGradientLog log;
  t.set_observer(&log);
  ASSERT_TRUE(t.accumulate(nullptr).ok());
  const Tensor* dy = t.interpreter().gradient(0, t.output());
  ASSERT_NE(dy, nullptr);
  double last = 0.0;  // the step T-1 outputs of both rows
  for (int row = 0; row < B; ++row) {
    for (int i = 0; i < H; ++i) {
      const double g = dy->f32()[(row * T + T - 1) * H + i];
      last += g * g;
    }
  }
  ASSERT_EQ(log.steps.size(), static_cast<size_t>(T));
  for (int k = 0; k < T; ++k) {
    EXPECT_EQ(log.steps[static_cast<size_t>(k)], T - 1 - k);
    EXPECT_GT(log.norms[static_cast<size_t>(k)], 0.f);
  }
  EXPECT_NEAR(log.norms[0], std::sqrt(last), 1e-6 + 1e-5 * std::sqrt(last));
  t.set_observer(nullptr);
  ASSERT_TRUE(t.accumulate(nullptr).ok());
  EXPECT_EQ(log.steps.size(), static_cast<size_t>(T));  // no observer, no calls
}

// ---- PyTorch goldens on builder models ----------------------------------------------

constexpr int kT = 6, kF = 3, kH = 5, kC = 3;

struct GoldenCase {
  const char* name;  // fixture prefix
  const tools::CellDescriptor* cell;
  bool reset_after;
};

// The builder's fused model with the fixture's weights.
std::vector<uint8_t> golden_model(const GoldenCase& c) {
  tools::BuildSpec spec;
  spec.cell = c.cell;
  spec.layout = tools::RnnLayout::kFused;
  spec.timesteps = kT;
  spec.features = kF;
  spec.units = kH;
  spec.classes = kC;
  spec.reset_after = c.reset_after;
  const std::string p = std::string(c.name) + "_";
  tools::RnnWeights w;
  w.kernel = test::load_train_floats(p + "kernel");
  w.recurrent_kernel = test::load_train_floats(p + "recurrent_kernel");
  w.bias = test::load_train_floats(p + "bias");
  if (c.cell == tools::find_cell("gru") && c.reset_after) {
    w.recurrent_bias = test::load_train_floats(p + "recurrent_bias");
  }
  w.dense.push_back({test::load_train_floats(p + "fcw"), test::load_train_floats(p + "fcb")});
  spec.weights = &w;
  tools::ModelDef def;
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(tools::build_model(spec, &def, &error)) << error;
  EXPECT_TRUE(tools::write_model(def, spec.format, &bytes, &error)) << error;
  return bytes;
}

// The engine tensor of a fixture weight: the builder splits an LSTM's
// kernels per gate (lstm/<gate>_kernel [H,F]) and a reset_after GRU keeps
// both biases in one [2,3H] tensor.
struct WeightSlice {
  std::string fixture;  // fixture name without prefix
  int64_t offset;       // into the fixture array (elements)
};

WeightSlice fixture_slice(const GoldenCase& c, const std::string& tensor, int64_t elements) {
  if (tensor.rfind("dense_0/kernel", 0) == 0) return {"fcw", 0};
  if (tensor.rfind("dense_0/bias", 0) == 0) return {"fcb", 0};
  if (c.cell == tools::find_cell("lstm")) {
    const char* gates[4] = {"input", "forget", "cell", "output"};
    for (int g = 0; g < 4; ++g) {
      const std::string gate = std::string("lstm/") + gates[g];
      if (tensor == gate + "_kernel") return {"kernel", g * elements};
      if (tensor == gate + "_recurrent_kernel") return {"recurrent_kernel", g * elements};
      if (tensor == gate + "_bias") return {"bias", g * elements};
    }
  }
  const std::string name = tensor.substr(tensor.find('/') + 1);
  return {name, 0};  // kernel, recurrent_kernel, bias ([2,3H]: bias then recurrent_bias)
}

std::vector<double> expected_values(const GoldenCase& c, const std::string& kind,
                                    const std::string& tensor, int64_t elements) {
  WeightSlice slice = fixture_slice(c, tensor, elements);
  const std::string p = std::string(c.name) + "_" + kind;
  std::vector<double> all = test::load_train_fixture(p + slice.fixture);
  if (slice.fixture == "bias" && c.cell == tools::find_cell("gru") && c.reset_after) {
    std::vector<double> recurrent = test::load_train_fixture(p + "recurrent_bias");
    all.insert(all.end(), recurrent.begin(), recurrent.end());
  }
  EXPECT_LE(slice.offset + elements, static_cast<int64_t>(all.size())) << tensor;
  if (slice.offset + elements > static_cast<int64_t>(all.size())) return {};
  return std::vector<double>(all.begin() + slice.offset, all.begin() + slice.offset + elements);
}

TEST(RecurrentGolden, CellDenseSoftmaxCrossEntropyMatchPyTorch) {
  for (GoldenCase c : {GoldenCase{"gru_ra", tools::find_cell("gru"), true},
                       GoldenCase{"gru_rb", tools::find_cell("gru"), false},
                       GoldenCase{"lstm", tools::find_cell("lstm"), false},
                       GoldenCase{"rnn", tools::find_cell("rnn"), false}}) {
    SCOPED_TRACE(c.name);
    TrainingConfig config;  // CE, all weights
    config.optimizer = Optimizer::kAdam;
    config.learning_rate = 0.01f;
    config.epsilon = 1e-8f;
    config.torch_epsilon = true;
    Session s;
    s.bytes = golden_model(c);
    ASSERT_TRUE(s.prepare_bytes(config));
    Trainer& t = s.trainer;
    const int expected_weights = c.cell == tools::find_cell("lstm") ? 12 + 2 : 3 + 2;
    ASSERT_EQ(t.weight_count(), expected_weights);
    std::vector<float> x = test::load_train_floats(std::string(c.name) + "_x");
    std::vector<float> y = test::load_train_floats(std::string(c.name) + "_y");
    ASSERT_EQ(static_cast<size_t>(t.input(0)->elements()), x.size());
    memcpy(t.input(0)->data, x.data(), t.input(0)->bytes);
    memcpy(t.label(), y.data(), y.size() * sizeof(float));
    float loss = 0.f;
    ASSERT_TRUE(t.accumulate(&loss).ok());
    EXPECT_NEAR(loss, test::load_train_fixture(std::string(c.name) + "_loss")[0], 1e-5);
    for (int w = 0; w < t.weight_count(); ++w) {
      const Tensor* g = t.weight_gradient(w);
      const std::string name = t.weight(w)->name;
      std::vector<double> expected = expected_values(c, "grad_", name, g->elements());
      ASSERT_EQ(expected.size(), static_cast<size_t>(g->elements())) << name;
      double scale = 0.0;
      for (double e : expected) scale = std::max(scale, std::fabs(e));
      EXPECT_GT(scale, 1e-4) << name << ": the check needs a non-trivial gradient";
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_LE(std::fabs(g->f32()[i] - expected[i]), 1e-4 * scale)
            << c.name << " gradient " << name << " [" << i << "]: " << g->f32()[i] << " vs torch "
            << expected[i];
      }
    }
    ASSERT_TRUE(t.apply_update().ok());
    for (int w = 0; w < t.weight_count(); ++w) {
      const Tensor* weights = t.weight(w);
      std::vector<double> expected =
          expected_values(c, "adam_", weights->name, weights->elements());
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_NEAR(weights->f32()[i], expected[i], 2e-6)
            << c.name << " Adam step " << weights->name << " [" << i << "]";
      }
    }
  }
}

}  // namespace
}  // namespace gruwb::test
