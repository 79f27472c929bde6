// Engine training tests. Gradient checks compare every backward kernel with
// central differences of the same loss (eps 1e-3, float32 forward), so the
// expected values come from the forward kernels, never from the backward code.

#include "engine/train/trainer.h"

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/tools/npy.h"
#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"
#include "tests/fixtures/train_fixtures.h"

namespace gruwb::test {
namespace {

// ---- backward kernels ---------------------------------------------------------

TEST(TrainBackward, FullyConnectedWithBiasAndFusedActivations) {
  using Act = fb::ActivationFunctionType;
  for (Act act : {Act::NONE, Act::TANH, Act::RELU}) {
    OpModelBuilder b;
    int x = b.input("x", {2, 3});
    int w = b.constant("w", {4, 3}, random_floats(12, 0.8f, 1));
    int bias = b.constant("b", {4}, random_floats(4, 0.3f, 2));
    int y = b.output("y");
    fb::FullyConnectedOptionsT options;
    options.fused_activation_function = act;
    b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, bias}, {y}, options);
    Session s;
    ASSERT_TRUE(s.prepare(b, mse_config()));
    EXPECT_EQ(s.trainer.weight_count(), 2);
    check_gradients(s, {random_floats(6, 1.f, 3)}, random_floats(8, 1.f, 4),
                    std::string("FC ") + fb::EnumNameActivationFunctionType(act));
  }
}

// FC -> op: the FC weights give the op a gradient path; the input gradient
// checks the op's own backward.
void check_unary_after_fc(BuiltinOperator op_code, const std::string& what) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3});
  int w = b.constant("w", {4, 3}, random_floats(12, 0.8f, 5));
  int h = b.tensor("h");
  int y = b.output("y");
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {h});
  if (op_code == BuiltinOperator::SOFTMAX) {
    fb::SoftmaxOptionsT options;
    options.beta = 1.5f;
    b.op(op_code, {h}, {y}, options);
  } else {
    b.op(op_code, {h}, {y});
  }
  Session s;
  ASSERT_TRUE(s.prepare(b, mse_config()));
  check_gradients(s, {random_floats(6, 1.f, 6)}, random_floats(8, 1.f, 7), what);
}

TEST(TrainBackward, Softmax) { check_unary_after_fc(BuiltinOperator::SOFTMAX, "SOFTMAX"); }
TEST(TrainBackward, Logistic) { check_unary_after_fc(BuiltinOperator::LOGISTIC, "LOGISTIC"); }
TEST(TrainBackward, Tanh) { check_unary_after_fc(BuiltinOperator::TANH, "TANH"); }
TEST(TrainBackward, Relu) { check_unary_after_fc(BuiltinOperator::RELU, "RELU"); }

TEST(TrainBackward, BinaryOpsReduceOverBroadcastDims) {
  for (BuiltinOperator op : {BuiltinOperator::ADD, BuiltinOperator::SUB, BuiltinOperator::MUL,
                             BuiltinOperator::MINIMUM, BuiltinOperator::MAXIMUM}) {
    OpModelBuilder b;
    int a = b.input("a", {2, 3, 4});
    int c = b.input("c", {3, 1});
    int y = b.output("y");
    b.op(op, {a, c}, {y});
    Session s;
    ASSERT_TRUE(s.prepare(b, mse_config()));
    check_gradients(s, {random_floats(24, 1.f, 8), random_floats(3, 1.f, 9)},
                    random_floats(24, 1.f, 10), fb::EnumNameBuiltinOperator(op));
  }
}

TEST(TrainBackward, ReshapeExpandDimsSqueeze) {
  OpModelBuilder b;
  int x = b.input("x", {2, 6});
  int shape = b.constant_i32("shape", {2}, {3, 4});
  int r = b.tensor("r");
  int axis = b.constant_i32("axis", {}, {0});
  int e = b.tensor("e");
  int w = b.constant("w", {4, 4}, random_floats(16, 0.8f, 11));
  int f = b.tensor("f");
  int y = b.output("y");
  b.op(BuiltinOperator::RESHAPE, {x, shape}, {r});
  b.op(BuiltinOperator::EXPAND_DIMS, {r, axis}, {e});  // [1,3,4]
  fb::FullyConnectedOptionsT keep;
  keep.keep_num_dims = true;
  b.op(BuiltinOperator::FULLY_CONNECTED, {e, w, -1}, {f}, keep);  // [1,3,4]
  fb::SqueezeOptionsT squeeze;
  squeeze.squeeze_dims = {0};
  b.op(BuiltinOperator::SQUEEZE, {f}, {y}, squeeze);
  Session s;
  ASSERT_TRUE(s.prepare(b, mse_config()));
  check_gradients(s, {random_floats(12, 1.f, 12)}, random_floats(12, 1.f, 13),
                  "RESHAPE/EXPAND_DIMS/SQUEEZE");
}

std::vector<uint8_t> gru_options(bool reset_after, const char* activation,
                                 const char* recurrent_activation, bool return_sequences) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.Bool("reset_after", reset_after);
    fbb.String("activation", activation);
    fbb.String("recurrent_activation", recurrent_activation);
    fbb.Bool("return_sequences", return_sequences);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

struct GruCase {
  bool reset_after;
  const char* activation;
  const char* recurrent_activation;
  bool return_sequences;
};

TEST(TrainBackward, GruwbGruBpttAllVariants) {
  const int T = 4, I = 3, H = 3, B = 2;
  for (GruCase c :
       {GruCase{true, "tanh", "sigmoid", false}, GruCase{false, "tanh", "sigmoid", false},
        GruCase{true, "tanh", "hard_sigmoid", true},
        GruCase{false, "tanh", "hard_sigmoid", true}}) {
    OpModelBuilder b;
    int x = b.input("x", {B, T, I});
    int h0 = b.input("h0", {B, H});
    int wx = b.constant("wx", {3 * H, I}, random_floats(3 * H * I, 0.7f, 14));
    int wh = b.constant("wh", {3 * H, H}, random_floats(3 * H * H, 0.7f, 15));
    int bias = c.reset_after ? b.constant("bias", {2, 3 * H}, random_floats(6 * H, 0.3f, 16))
                             : b.constant("bias", {3 * H}, random_floats(3 * H, 0.3f, 16));
    int y = b.output("y");
    b.custom_op(
        "GRUWB_GRU", {x, wx, wh, bias, h0}, {y},
        gru_options(c.reset_after, c.activation, c.recurrent_activation, c.return_sequences));
    Session s;
    ASSERT_TRUE(s.prepare(b, mse_config()));
    EXPECT_EQ(s.trainer.weight_count(), 3);
    EXPECT_GT(s.trainer.memory().tape_bytes, 0u);
    const size_t out = static_cast<size_t>(B * H * (c.return_sequences ? T : 1));
    std::string what = std::string("GRUWB_GRU reset_after=") + (c.reset_after ? "1 " : "0 ") +
                       c.recurrent_activation + (c.return_sequences ? " seq" : " last");
    check_gradients(s, {random_floats(B * T * I, 1.f, 17), random_floats(B * H, 0.5f, 18)},
                    random_floats(out, 1.f, 19), what);
  }
}

// Two batch rows: on hosts they run through the batched kernel (gru_sequence_batch).
TEST(TrainBackward, CircleGruBptt) {
  const int T = 4, I = 3, H = 3, B = 2;
  OpModelBuilder b;
  int x = b.input("x", {T, B, I});
  int wx = b.constant("wx", {3 * H, I}, random_floats(3 * H * I, 0.7f, 20));
  int bx = b.constant("bx", {3 * H}, random_floats(3 * H, 0.3f, 21));
  int wh = b.constant("wh", {3 * H, H}, random_floats(3 * H * H, 0.7f, 22));
  int bh = b.constant("bh", {3 * H}, random_floats(3 * H, 0.3f, 23));
  int state = b.input("state", {B, H});
  int y = b.output("y");
  b.op(static_cast<int32_t>(BuiltinOperator::GRU), {x, wx, bx, wh, bh, state}, {y});
  Session s;
  ASSERT_TRUE(s.prepare(b, mse_config(), ModelFormat::kCircle));
  EXPECT_EQ(s.trainer.weight_count(), 4);
  check_gradients(s, {random_floats(T * B * I, 1.f, 24), random_floats(B * H, 0.5f, 25)},
                  random_floats(B * H, 1.f, 26), "Circle GRU");
}

// ---- PyTorch goldens ---------------------------------------------------------------

// The gru_dense_* fixtures.
std::vector<double> load_npy(const std::string& name) {
  return test::load_train_fixture("gru_dense_" + name);
}

std::vector<float> as_floats(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

OpModelBuilder golden_model() {
  const int T = 5, F = 3, H = 4, C = 3;
  OpModelBuilder b;
  int x = b.input("x", {1, T, F});
  int wx = b.constant("gru/kernel", {3 * H, F}, as_floats(load_npy("wx")));
  int wh = b.constant("gru/recurrent_kernel", {3 * H, H}, as_floats(load_npy("wh")));
  int bias = b.constant("gru/bias", {2, 3 * H}, as_floats(load_npy("bias")));
  int h = b.tensor("gru/out");
  int fcw = b.constant("dense/kernel", {C, H}, as_floats(load_npy("fcw")));
  int fcb = b.constant("dense/bias", {C}, as_floats(load_npy("fcb")));
  int logits = b.tensor("dense/logits");
  int p = b.output("probs");
  b.custom_op("GRUWB_GRU", {x, wx, wh, bias}, {h}, gru_options(true, "tanh", "sigmoid", false));
  b.op(BuiltinOperator::FULLY_CONNECTED, {h, fcw, fcb}, {logits});
  b.op(BuiltinOperator::SOFTMAX, {logits}, {p});
  return b;
}

void expect_rel(const Tensor* actual, const std::vector<double>& expected, double rel,
                const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(actual->elements()), expected.size()) << what;
  double scale = 0.0;
  for (double e : expected) scale = std::max(scale, std::fabs(e));
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_LE(std::fabs(actual->f32()[i] - expected[i]), rel * scale)
        << what << " element " << i << ": " << actual->f32()[i] << " vs torch " << expected[i];
  }
}

TEST(TrainGolden, GruDenseSoftmaxCrossEntropyMatchesPyTorch) {
  TrainingConfig c;  // Adam, CE, all
  c.optimizer = Optimizer::kAdam;
  c.learning_rate = 0.01f;
  c.epsilon = 1e-8f;
  c.torch_epsilon = true;
  Session s;
  ASSERT_TRUE(s.prepare(golden_model(), c));
  Trainer& t = s.trainer;
  EXPECT_TRUE(t.softmax_fused());
  ASSERT_EQ(t.weight_count(), 5);
  std::vector<float> x = as_floats(load_npy("x"));
  std::vector<float> y = as_floats(load_npy("y"));
  memcpy(t.input(0)->data, x.data(), t.input(0)->bytes);
  memcpy(t.label(), y.data(), y.size() * sizeof(float));
  float loss = 0.f;
  ASSERT_TRUE(t.accumulate(&loss).ok());
  EXPECT_NEAR(loss, load_npy("loss")[0], 1e-5);
  // Weights in model order: gru kernel, recurrent kernel, bias, dense kernel, dense bias.
  const char* names[] = {"wx", "wh", "bias", "fcw", "fcb"};
  for (int w = 0; w < 5; ++w) {
    expect_rel(t.weight_gradient(w), load_npy(std::string("grad_") + names[w]), 1e-4,
               std::string("gradient ") + names[w]);
  }
  ASSERT_TRUE(t.apply_update().ok());
  EXPECT_EQ(t.step(), 1);
  for (int w = 0; w < 5; ++w) {
    std::vector<double> expected = load_npy(std::string("adam_") + names[w]);
    const Tensor* weights = t.weight(w);
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(weights->f32()[i], expected[i], 2e-6) << "Adam step " << names[w] << " " << i;
    }
  }
}

TEST(TrainGolden, KerasAdamAndSgdMomentumFormulas) {
  // Same gradient, three optimizers: each update checked against its formula.
  for (int variant = 0; variant < 2; ++variant) {
    TrainingConfig c;
    c.learning_rate = 0.05f;
    if (variant == 0) {
      c.optimizer = Optimizer::kAdam;  // Keras form, epsilon 1e-7
    } else {
      c.optimizer = Optimizer::kSgd;
      c.momentum = 0.9f;
    }
    Session s;
    ASSERT_TRUE(s.prepare(golden_model(), c));
    Trainer& t = s.trainer;
    std::vector<float> x = as_floats(load_npy("x"));
    std::vector<float> y = as_floats(load_npy("y"));
    memcpy(t.input(0)->data, x.data(), t.input(0)->bytes);
    memcpy(t.label(), y.data(), y.size() * sizeof(float));
    std::vector<double> g = load_npy("grad_fcw");
    std::vector<double> w0 = load_npy("fcw");
    // Two steps with the same sample: the second uses the state of the first.
    std::vector<float> before = copy_of(t.weight(3));
    ASSERT_TRUE(t.train_sample(nullptr).ok());
    std::vector<float> after1 = copy_of(t.weight(3));
    for (size_t i = 0; i < g.size(); ++i) {
      double expected = variant == 0
                            ? w0[i] - 0.05 * std::sqrt(1 - 0.999) / (1 - 0.9) * (0.1 * g[i]) /
                                          (std::sqrt(0.001 * g[i] * g[i]) + 1e-7)
                            : w0[i] - 0.05 * g[i];
      EXPECT_NEAR(after1[i], expected, 2e-6) << (variant ? "SGD" : "Adam") << " element " << i;
      EXPECT_NE(before[i], after1[i]);
    }
  }
}

// ---- scope, memory -----------------------------------------------------------------

TEST(TrainScope, FcOnlyHasNoGruGradientOrTapeAndFiguresAddUp) {
  TrainingConfig fc;
  fc.scope = TrainableScope::kFc;
  Session s_fc;
  ASSERT_TRUE(s_fc.prepare(golden_model(), fc));
  ASSERT_EQ(s_fc.trainer.weight_count(), 2);
  EXPECT_STREQ(s_fc.trainer.weight(0)->name, "dense/kernel");
  TrainingMemory m = s_fc.trainer.memory();
  EXPECT_EQ(m.tape_bytes, 0u);  // the frozen GRU keeps no tape
  EXPECT_EQ(m.weight_bytes, (3 * 4 + 3) * sizeof(float));
  EXPECT_EQ(m.gradient_bytes, m.weight_bytes);
  EXPECT_EQ(m.optimizer_bytes, 2 * m.weight_bytes);  // Adam m and v
  EXPECT_EQ(
      m.weight_bytes + m.gradient_bytes + m.optimizer_bytes + m.activation_bytes + m.other_bytes,
      m.total);
  EXPECT_EQ(m.total, s_fc.trainer.arena_bytes_needed());

  TrainingConfig all;
  Session s_all;
  ASSERT_TRUE(s_all.prepare(golden_model(), all));
  TrainingMemory a = s_all.trainer.memory();
  const size_t gru_weights = (12 * 3 + 12 * 4 + 2 * 12) * sizeof(float);
  EXPECT_EQ(a.weight_bytes, m.weight_bytes + gru_weights);
  EXPECT_EQ(a.tape_bytes, 5u * 5 * 4 * sizeof(float));  // T x 5H floats
  EXPECT_GT(a.total, m.total);

  TrainingConfig last1;
  ASSERT_TRUE(parse_trainable_scope("last:1", &last1));
  Session s_last;
  ASSERT_TRUE(s_last.prepare(golden_model(), last1));
  EXPECT_EQ(s_last.trainer.weight_count(), 2);
  ASSERT_TRUE(parse_trainable_scope("last:2", &last1));
  Session s_last2;
  ASSERT_TRUE(s_last2.prepare(golden_model(), last1));
  EXPECT_EQ(s_last2.trainer.weight_count(), 5);
  EXPECT_FALSE(parse_trainable_scope("last:0", &last1));
  EXPECT_FALSE(parse_trainable_scope("gru", &last1));

  const char* names[] = {"gru/recurrent_kernel"};
  TrainingConfig named;
  named.scope = TrainableScope::kNames;
  named.names = names;
  named.name_count = 1;
  Session s_named;
  ASSERT_TRUE(s_named.prepare(golden_model(), named));
  EXPECT_EQ(s_named.trainer.weight_count(), 1);
  const char* bad[] = {"dense/logits"};
  named.names = bad;
  Session s_bad;
  EXPECT_FALSE(s_bad.prepare(golden_model(), named));
}

TEST(TrainScope, ExactArenaFitsAndOneByteLessFails) {
  TrainingConfig c;
  Session big;
  ASSERT_TRUE(big.prepare(golden_model(), c));
  const size_t need = big.trainer.arena_bytes_needed();
  Arena exact(need);
  Trainer t;
  Status s = t.prepare(big.model, c, exact.data, exact.size);
  EXPECT_TRUE(s.ok()) << s.message();
  Arena small(need - 16);
  Trainer t2;
  EXPECT_EQ(t2.prepare(big.model, c, small.data, small.size).code(), StatusCode::kOutOfMemory);
}

TEST(TrainGuard, NanGradientNamesTheWeight) {
  TrainingConfig c = mse_config(false);
  OpModelBuilder b;
  int x = b.input("x", {1, 2});
  int w = b.constant("layer/w", {1, 2}, {1.f, -1.f});
  int y = b.output("y");
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {y});
  Session s;
  ASSERT_TRUE(s.prepare(b, c));
  // y = 1e30 - 1e30 = 0, a finite loss (1e38), but dL/dw = 2 (y - label) x overflows.
  s.trainer.input(0)->f32()[0] = 1e30f;
  s.trainer.input(0)->f32()[1] = 1e30f;
  s.trainer.label()[0] = 1e19f;
  Status st = s.trainer.train_sample(nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("infinite"), std::string::npos) << st.message();
  EXPECT_NE(std::string(st.message()).find("'layer/w'"), std::string::npos) << st.message();
}

// MSE against 1e38 targets: the loss summed in double is finite (1e76) but not as a float32; it
// trained "completed" with exit 0 and saved the unchanged model.
TEST(TrainGuard, LossBeyondFloat32IsInfiniteAndNamesTheOutput) {
  TrainingConfig c = mse_config(false);
  OpModelBuilder b;
  int x = b.input("x", {1, 2});
  int w = b.constant("layer/w", {1, 2}, {0.5f, 0.5f});
  int y = b.output("prediction");
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {y});
  Session s;
  ASSERT_TRUE(s.prepare(b, c));
  s.trainer.input(0)->f32()[0] = 1.f;
  s.trainer.input(0)->f32()[1] = 1.f;
  s.trainer.label()[0] = 1e38f;
  Status st = s.trainer.train_sample(nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("the loss is infinite: output 'prediction'"),
            std::string::npos)
      << st.message();
}

// ---- learning --------------------------------------------------------------------------

// Three classes of noisy sequences (rising, falling, oscillating): a GRU +
// Dense + softmax trained with Adam must lower the loss and fit the data.
TEST(TrainLearning, GruClassifierLossFalls) {
  const int T = 8, F = 1, H = 6, C = 3, N = 48;
  OpModelBuilder b;
  int x = b.input("x", {1, T, F});
  int wx = b.constant("wx", {3 * H, F}, random_floats(3 * H * F, 0.5f, 30));
  int wh = b.constant("wh", {3 * H, H}, random_floats(3 * H * H, 0.5f, 31));
  int bias = b.constant("bias", {2, 3 * H}, std::vector<float>(6 * H, 0.f));
  int h = b.tensor("h");
  int fcw = b.constant("fcw", {C, H}, random_floats(C * H, 0.5f, 32));
  int fcb = b.constant("fcb", {C}, std::vector<float>(C, 0.f));
  int logits = b.tensor("logits");
  int p = b.output("p");
  b.custom_op("GRUWB_GRU", {x, wx, wh, bias}, {h}, gru_options(true, "tanh", "sigmoid", false));
  b.op(BuiltinOperator::FULLY_CONNECTED, {h, fcw, fcb}, {logits});
  b.op(BuiltinOperator::SOFTMAX, {logits}, {p});
  TrainingConfig c;
  c.loss = Loss::kSparseCategoricalCrossEntropy;
  c.learning_rate = 0.03f;
  c.batch_size = 4;
  c.clip_norm = 5.f;
  Session s;
  ASSERT_TRUE(s.prepare(b, c));
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.f, 0.1f);
  std::vector<std::vector<float>> xs(N);
  std::vector<int> ys(N);
  for (int n = 0; n < N; ++n) {
    ys[n] = n % C;
    for (int t = 0; t < T; ++t) {
      float v = ys[n] == 0 ? t / 8.f : (ys[n] == 1 ? 1.f - t / 8.f : (t % 2 ? 0.8f : 0.f));
      xs[n].push_back(v + noise(rng));
    }
  }
  auto epoch_loss = [&](bool train, int* correct) {
    double total = 0.0;
    *correct = 0;
    for (int n = 0; n < N; ++n) {
      memcpy(s.trainer.input(0)->data, xs[n].data(), sizeof(float) * T);
      s.trainer.label()[0] = static_cast<float>(ys[n]);
      float loss = 0.f;
      int32_t prediction = -1;
      if (train) {
        EXPECT_TRUE(s.trainer.train_sample(&loss).ok());
      } else {
        EXPECT_TRUE(s.trainer.evaluate(&loss, &prediction).ok());
        *correct += prediction == ys[n];
      }
      total += loss;
    }
    return total / N;
  };
  int correct = 0;
  const double initial = epoch_loss(false, &correct);
  for (int e = 0; e < 40; ++e) epoch_loss(true, &correct);
  const double final_loss = epoch_loss(false, &correct);
  EXPECT_LT(final_loss, 0.5 * initial) << "initial " << initial << " final " << final_loss;
  EXPECT_GE(correct, 44) << "accuracy " << correct << "/" << N;
}

// Inference figures do not change because training exists.
TEST(TrainPlan, InferenceArenaUnchangedAndTrainingKeepsActivations) {
  OpModelBuilder b = golden_model();
  std::vector<uint8_t> bytes = b.bytes();
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  Arena arena(1 << 20);
  Interpreter inference;
  ASSERT_TRUE(inference.prepare(model, arena.data, arena.size).ok());
  EXPECT_FALSE(inference.training());
  EXPECT_EQ(inference.gradient(0, inference.output(0)), nullptr);
  Interpreter again;
  ASSERT_TRUE(again.prepare(model, arena.data, arena.size, nullptr).ok());
  EXPECT_EQ(again.arena_bytes_needed(), inference.arena_bytes_needed());
}

}  // namespace
}  // namespace gruwb::test
