// Which output the loss goes on (engine/train/loss_output.h): the chooser's
// rules one by one, and the trainer putting the loss, the accuracy and the
// gradients on the chosen output of a model that also returns its states.

#include "engine/train/loss_output.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/train/trainer.h"
#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

// x [1,3] -> FC -> h [1,8] -> TANH -> state [1,8] (an output)
//                  h -> FC -> logits [1,4] -> SOFTMAX -> probs [1,4] (an output)
// Outputs in the order `state_first` asks: the state before the prediction,
// as streaming models list them.
struct StreamingModel {
  OpModelBuilder b;
  int state = -1, probs = -1;
};

fb::SoftmaxOptionsT softmax_options() {
  fb::SoftmaxOptionsT options;
  options.beta = 1.f;
  return options;
}

void build_streaming(StreamingModel* m, bool state_first, bool reshape = false,
                     bool second_softmax = false) {
  OpModelBuilder& b = m->b;
  const int x = b.input("x", {1, 3});
  const int w1 = b.constant("w1", {8, 3}, random_floats(24, 0.8f, 1));
  const int w2 = b.constant("w2", {4, 8}, random_floats(32, 0.8f, 2));
  const int h = b.tensor("h", {1, 8});
  const int logits = b.tensor("logits", {1, 4});
  m->state = b.tensor("state", {1, 8});
  m->probs = b.tensor("probs", {1, 4});
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w1, -1}, {h});
  b.op(BuiltinOperator::TANH, {h}, {m->state});
  b.op(BuiltinOperator::FULLY_CONNECTED, {h, w2, -1}, {logits});
  int probs_source = m->probs;
  if (reshape) {
    probs_source = b.tensor("probs_2d", {1, 4});
    b.op(BuiltinOperator::SOFTMAX, {logits}, {probs_source}, softmax_options());
    const int shape = b.constant_i32("shape", {2}, {1, 4});
    b.op(BuiltinOperator::RESHAPE, {probs_source, shape}, {m->probs});
  } else {
    b.op(BuiltinOperator::SOFTMAX, {logits}, {m->probs}, softmax_options());
  }
  if (second_softmax) {
    // The state through a LOGISTIC: now two outputs come from activations.
    const int gate = b.tensor("gate", {1, 8});
    b.op(BuiltinOperator::LOGISTIC, {m->state}, {gate});
    m->state = gate;
  }
  if (state_first) {
    b.mark_output(m->state);
    b.mark_output(m->probs);
  } else {
    b.mark_output(m->probs);
    b.mark_output(m->state);
  }
}

struct Loaded {
  std::vector<uint8_t> bytes;
  Model model;
  explicit Loaded(const OpModelBuilder& b) : bytes(b.bytes(ModelFormat::kTflite)) {
    Status s = Model::load(bytes.data(), bytes.size(), &model);
    EXPECT_TRUE(s.ok()) << s.message();
  }
};

Status choose(const Model& model, const char* name, int32_t* out, int64_t label_width = 0,
              int64_t class_count = 0) {
  LossOutputRequest request;
  request.name = name;
  request.label_width = label_width;
  request.class_count = class_count;
  return choose_loss_output(model, request, out);
}

TEST(LossOutput, SingleOutputIsTheOnlyChoice) {
  OpModelBuilder b;
  const int x = b.input("x", {1, 3});
  const int w = b.constant("w", {2, 3}, random_floats(6, 0.5f, 3));
  const int y = b.output("y", {1, 2});
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {y});
  Loaded m(b);
  int32_t out = -1;
  ASSERT_TRUE(choose(m.model, nullptr, &out).ok());
  EXPECT_EQ(out, 0);
  // Even when the labels do not fit: the data check names that mismatch.
  ASSERT_TRUE(choose(m.model, "", &out, /*label_width=*/5).ok());
  EXPECT_EQ(out, 0);
}

TEST(LossOutput, SoftmaxAmongStateOutputs) {
  for (bool reshape : {false, true}) {
    StreamingModel s;
    build_streaming(&s, /*state_first=*/true, reshape);
    Loaded m(s.b);
    int32_t out = -1;
    Status status = choose(m.model, nullptr, &out);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(out, 1) << "reshape " << reshape;
    EXPECT_TRUE(output_is_activation_fed(m.model, 1));
    EXPECT_FALSE(output_is_activation_fed(m.model, 0));
    // Labels of the prediction's size agree; the state is never taken.
    ASSERT_TRUE(choose(m.model, nullptr, &out, 0, /*class_count=*/4).ok());
    EXPECT_EQ(out, 1);
  }
}

TEST(LossOutput, AmbiguousNamesTheCandidates) {
  // Two outputs fed by activations (SOFTMAX and LOGISTIC).
  StreamingModel s;
  build_streaming(&s, /*state_first=*/true, false, /*second_softmax=*/true);
  Loaded m(s.b);
  int32_t out = 7;
  Status status = choose(m.model, nullptr, &out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(out, -1);
  const std::string message = status.message();
  EXPECT_NE(message.find("'gate' [1,8]"), std::string::npos) << message;
  EXPECT_NE(message.find("'probs' [1,4]"), std::string::npos) << message;
  EXPECT_NE(message.find("--output NAME"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  // The labels' size decides between them.
  ASSERT_TRUE(choose(m.model, nullptr, &out, /*label_width=*/4).ok());
  EXPECT_EQ(out, 1);
}

TEST(LossOutput, WithoutActivationsTheOnlyFittingFloatOutput) {
  OpModelBuilder b;
  const int x = b.input("x", {1, 3});
  const int w1 = b.constant("w1", {4, 3}, random_floats(12, 0.5f, 4));
  const int w2 = b.constant("w2", {6, 3}, random_floats(18, 0.5f, 5));
  const int y = b.output("y", {1, 4});
  const int flat = b.tensor("flat", {1, 6});
  const int states = b.output("states", {1, 2, 3});
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w1, -1}, {y});
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w2, -1}, {flat});
  const int shape = b.constant_i32("shape", {3}, {1, 2, 3});
  b.op(BuiltinOperator::RESHAPE, {flat, shape}, {states});
  Loaded m(b);
  int32_t out = -1;
  Status status = choose(m.model, nullptr, &out);  // nothing to tell them apart
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("'y' [1,4], 'states' [1,2,3]"), std::string::npos)
      << status.message();
  ASSERT_TRUE(choose(m.model, nullptr, &out, /*label_width=*/6).ok());
  EXPECT_EQ(out, 1);
  ASSERT_TRUE(choose(m.model, nullptr, &out, 0, /*class_count=*/3).ok());
  EXPECT_EQ(out, 0);  // class ids need one row: [1,2,3] is two
  status = choose(m.model, nullptr, &out, /*label_width=*/5);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("5 values per sample"), std::string::npos)
      << status.message();
}

TEST(LossOutput, ExplicitNameOrPosition) {
  StreamingModel s;
  build_streaming(&s, /*state_first=*/true);
  Loaded m(s.b);
  int32_t out = -1;
  ASSERT_TRUE(choose(m.model, "state", &out).ok());
  EXPECT_EQ(out, 0);  // explicit beats the softmax rule
  ASSERT_TRUE(choose(m.model, "probs", &out).ok());
  EXPECT_EQ(out, 1);
  ASSERT_TRUE(choose(m.model, "0", &out).ok());
  EXPECT_EQ(out, 0);
  LossOutputRequest by_index;
  by_index.index = 1;
  ASSERT_TRUE(choose_loss_output(m.model, by_index, &out).ok());
  EXPECT_EQ(out, 1);
  by_index.index = 2;
  EXPECT_FALSE(choose_loss_output(m.model, by_index, &out).ok());
}

TEST(LossOutput, UnknownNameListsTheOutputs) {
  StreamingModel s;
  build_streaming(&s, /*state_first=*/true);
  Loaded m(s.b);
  int32_t out = 3;
  for (const char* name : {"Identity", "2"}) {
    Status status = choose(m.model, name, &out);
    ASSERT_FALSE(status.ok()) << name;
    EXPECT_EQ(out, -1);
    const std::string message = status.message();
    EXPECT_NE(message.find(std::string("no output named '") + name + "'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("'state' [1,8], 'probs' [1,4]"), std::string::npos) << message;
  }
}

TEST(LossOutput, ExplicitNonFloatOutputIsRefused) {
  OpModelBuilder b;
  const int x = b.input("x", {1, 3});
  const int w = b.constant("w", {2, 3}, random_floats(6, 0.5f, 3));
  const int y = b.output("y", {1, 2});
  const int shape = b.output("shape", {2}, TensorType::INT32);
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {y});
  b.op(BuiltinOperator::SHAPE, {y}, {shape});
  Loaded m(b);
  int32_t out = -1;
  ASSERT_TRUE(choose(m.model, nullptr, &out).ok());
  EXPECT_EQ(out, 0);  // the only float output
  Status status = choose(m.model, "shape", &out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("'shape' [2] INT32"), std::string::npos)
      << status.message();
}

// The trainer on the streaming model: loss, labels, accuracy and gradients
// belong to the prediction, whatever position it has, and the state
// output's (unwritten) gradient buffer adds nothing even when the arena
// starts out as garbage.
TEST(LossOutput, TrainerPutsTheLossOnTheChosenOutput) {
  TrainingConfig config;
  config.loss = Loss::kCategoricalCrossEntropy;
  config.optimizer = Optimizer::kSgd;
  config.learning_rate = 0.1f;
  const std::vector<float> x = {0.3f, -0.7f, 0.5f};
  const std::vector<float> y = {0.f, 0.f, 1.f, 0.f};
  std::vector<std::vector<float>> gradients[2];
  float losses[2] = {};
  for (int order = 0; order < 2; ++order) {
    StreamingModel s;
    build_streaming(&s, /*state_first=*/order == 0);
    Session session;
    session.bytes = s.b.bytes(ModelFormat::kTflite);
    std::memset(session.arena.data, 0xFF, session.arena.size);  // NaN everywhere
    ASSERT_TRUE(session.prepare_bytes(config));
    Trainer& t = session.trainer;
    EXPECT_EQ(t.loss_output(), order == 0 ? 1 : 0);
    EXPECT_STREQ(t.output()->name, "probs");
    EXPECT_EQ(t.label_count(), 4);
    std::memcpy(t.input(0)->data, x.data(), sizeof(float) * 3);
    std::memcpy(t.label(), y.data(), sizeof(float) * 4);
    ASSERT_TRUE(t.accumulate(&losses[order]).ok());
    const float* p = t.output()->f32();
    EXPECT_NEAR(losses[order], -std::log(p[2]), 1e-5f);
    for (int w = 0; w < t.weight_count(); ++w) {
      const Tensor* g = t.weight_gradient(w);
      gradients[order].emplace_back(g->f32(), g->f32() + g->elements());
      for (float v : gradients[order].back()) ASSERT_TRUE(std::isfinite(v)) << t.weight(w)->name;
    }
    int32_t predicted = -1;
    ASSERT_TRUE(t.evaluate(nullptr, &predicted).ok());
    int32_t best = 0;
    for (int c = 1; c < 4; ++c) best = p[c] > p[best] ? c : best;
    EXPECT_EQ(predicted, best);
  }
  EXPECT_FLOAT_EQ(losses[0], losses[1]);
  ASSERT_EQ(gradients[0].size(), 2u);
  for (size_t w = 0; w < gradients[0].size(); ++w) {
    ASSERT_EQ(gradients[0][w].size(), gradients[1][w].size());
    for (size_t i = 0; i < gradients[0][w].size(); ++i) {
      EXPECT_FLOAT_EQ(gradients[0][w][i], gradients[1][w][i]) << w << " " << i;
    }
  }
}

TEST(LossOutput, TrainerRefusesAnUndecidableModel) {
  StreamingModel s;
  build_streaming(&s, /*state_first=*/true, false, /*second_softmax=*/true);
  Session session;
  TrainingConfig config;
  ::testing::AssertionResult prepared = session.prepare(s.b, config);
  ASSERT_FALSE(prepared);
  EXPECT_NE(std::string(prepared.message()).find("--output NAME"), std::string::npos);
  config.loss_output = 1;
  ASSERT_TRUE(session.prepare(s.b, config));
  EXPECT_STREQ(session.trainer.output()->name, "probs");
}

}  // namespace
}  // namespace gruwb::test
