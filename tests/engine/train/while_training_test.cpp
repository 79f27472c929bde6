// Training through WHILE loops: the converter's loop form of a GRU (modern
// body: two FCs; legacy body: per-gate FCs, hard sigmoid as MUL/ADD/MIN/MAX,
// SLICE/CONCAT accumulator) must give the same loss, the same weight
// gradients and the same training curve as the fused op with the same
// weights (the builder makes both from one seed). Weight layouts differ
// between the forms (one [3H,F] kernel vs per-gate FCs), so the RNN's
// gradients are compared as sorted multisets of values; the Dense head's
// tensors match one to one.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/train/observer.h"
#include "engine/train/trainer.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using tools::BuildSpec;
using tools::RnnLayout;

std::vector<uint8_t> build(BuildSpec spec, RnnLayout layout) {
  spec.layout = layout;
  tools::ModelDef def;
  std::string error;
  EXPECT_TRUE(tools::build_model(spec, &def, &error)) << error;
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(tools::write_model(def, spec.format, &bytes, &error)) << error;
  return bytes;
}

BuildSpec small_gru(bool reset_after, tools::GruVariant variant) {
  BuildSpec spec;
  spec.timesteps = 6;
  spec.features = 3;
  spec.units = 5;
  spec.classes = 3;
  spec.reset_after = reset_after;
  spec.gru_variant = variant;
  spec.bias_init = tools::BiasInit::kUniform;  // non-zero biases get non-trivial gradients
  spec.seed = 7;
  return spec;
}

TrainingConfig adam_all() {
  TrainingConfig c;
  c.loss = Loss::kSparseCategoricalCrossEntropy;
  c.optimizer = Optimizer::kAdam;
  c.learning_rate = 0.02f;
  return c;
}

struct Pair {
  Session fused;
  Session loop;
};

void set_sample(Trainer& t, const std::vector<float>& x, float label) {
  memcpy(t.input(0)->data, x.data(), t.input(0)->bytes);
  t.label()[0] = label;
}

// All gradient values of the weights whose names do not start with "dense",
// sorted; and the dense ones by name.
std::vector<float> rnn_gradient_values(Trainer& t) {
  std::vector<float> v;
  for (int w = 0; w < t.weight_count(); ++w) {
    if (std::string(t.weight(w)->name).rfind("dense", 0) == 0) continue;
    const Tensor* g = t.weight_gradient(w);
    v.insert(v.end(), g->f32(), g->f32() + g->elements());
  }
  std::sort(v.begin(), v.end());
  return v;
}

const Tensor* named_gradient(Trainer& t, const std::string& name) {
  for (int w = 0; w < t.weight_count(); ++w) {
    if (name == t.weight(w)->name) return t.weight_gradient(w);
  }
  return nullptr;
}

void expect_same_training(std::vector<uint8_t> fused_bytes, std::vector<uint8_t> loop_bytes,
                          int classes, const std::string& what) {
  Session fused, loop;
  fused.bytes = std::move(fused_bytes);
  loop.bytes = std::move(loop_bytes);
  ASSERT_TRUE(fused.prepare_bytes(adam_all())) << what;
  ASSERT_TRUE(loop.prepare_bytes(adam_all())) << what;
  ASSERT_GE(loop.trainer.weight_count(), 4) << what << ": the loop body's FCs are trainable";
  EXPECT_GT(loop.trainer.memory().tape_bytes, 0u) << what;
  const TrainingMemory fm = fused.trainer.memory();
  const TrainingMemory lm = loop.trainer.memory();
  std::printf("%s: training arena fused %zu bytes (tape %zu), loop %zu bytes (tape %zu)\n",
              what.c_str(), fm.total, fm.tape_bytes, lm.total, lm.tape_bytes);
  const int64_t inputs = fused.trainer.input(0)->elements();
  for (int step = 0; step < 4; ++step) {
    std::vector<float> x = random_floats(static_cast<size_t>(inputs), 1.f, 100 + step);
    const float label = static_cast<float>(step % classes);
    set_sample(fused.trainer, x, label);
    set_sample(loop.trainer, x, label);
    float fused_loss = 0.f, loop_loss = 0.f;
    ASSERT_TRUE(fused.trainer.accumulate(&fused_loss).ok()) << what;
    Status s = loop.trainer.accumulate(&loop_loss);
    ASSERT_TRUE(s.ok()) << what << ": " << s.message();
    EXPECT_NEAR(loop_loss, fused_loss, 1e-5 * std::max(1.f, fused_loss))
        << what << " step " << step;
    std::vector<float> a = rnn_gradient_values(fused.trainer);
    std::vector<float> b = rnn_gradient_values(loop.trainer);
    ASSERT_EQ(a.size(), b.size()) << what;
    float scale = 0.f;
    for (float g : a) scale = std::max(scale, std::fabs(g));
    EXPECT_GT(scale, 1e-4f) << what;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(b[i], a[i], 1e-5f * std::max(1.f, scale))
          << what << " step " << step << " #" << i;
    }
    for (int w = 0; w < fused.trainer.weight_count(); ++w) {
      const std::string name = fused.trainer.weight(w)->name;
      if (name.rfind("dense", 0) != 0) continue;
      const Tensor* g = named_gradient(loop.trainer, name);
      ASSERT_NE(g, nullptr) << what << " " << name;
      const Tensor* f = fused.trainer.weight_gradient(w);
      for (int64_t i = 0; i < f->elements(); ++i) {
        EXPECT_NEAR(g->f32()[i], f->f32()[i], 1e-5f) << what << " " << name << " " << i;
      }
    }
    ASSERT_TRUE(fused.trainer.apply_update().ok());
    ASSERT_TRUE(loop.trainer.apply_update().ok());
  }
}

void expect_same_training(const BuildSpec& spec, const std::string& what) {
  expect_same_training(build(spec, RnnLayout::kFused), build(spec, RnnLayout::kWhile), spec.classes,
                       what);
}

TEST(WhileTraining, ModernGruResetAfterMatchesFusedOp) {
  expect_same_training(small_gru(true, tools::GruVariant::kModern), "modern reset_after=true");
}

TEST(WhileTraining, LegacyGruPerGateFcsHardSigmoidMatchesFusedOp) {
  expect_same_training(small_gru(false, tools::GruVariant::kLegacy), "legacy reset_after=false");
}

TEST(WhileTraining, ModernGruResetBeforeMatchesFusedOp) {
  expect_same_training(small_gru(false, tools::GruVariant::kModern), "modern reset_after=false");
}

// The shipped reference samples (resources/samples, same seed-1 weights):
// the converter-style loop trains exactly like the fused GRU.
TEST(WhileTraining, GestureSamplesLoopMatchesFused) {
  std::vector<uint8_t> fused, loop;
  std::string error;
  const std::string dir = std::string(GRUWB_SOURCE_DIR) + "/resources/samples/";
  ASSERT_TRUE(tools::read_file_bytes(dir + "gesture_gru_fused.tflite", &fused, &error)) << error;
  ASSERT_TRUE(tools::read_file_bytes(dir + "gesture_gru_while.tflite", &loop, &error)) << error;
  expect_same_training(std::move(fused), std::move(loop), 4, "gesture_gru samples");
}

// Finite differences straight through the loop (weights inside the body and
// the input sequence through GATHER).
TEST(WhileTraining, LoopGradientsMatchFiniteDifferences) {
  BuildSpec spec = small_gru(true, tools::GruVariant::kModern);
  spec.timesteps = 4;
  spec.units = 3;
  Session s;
  s.bytes = build(spec, RnnLayout::kWhile);
  TrainingConfig c = adam_all();
  c.input_gradients = true;
  ASSERT_TRUE(s.prepare_bytes(c));
  check_gradients(s, {random_floats(12, 1.f, 3)}, {2.f}, "GRU WHILE loop");
}

// LSTM and SimpleRNN loop bodies (the builder's converter form) against
// finite differences; no fused backward needed.
TEST(WhileTraining, LstmAndRnnLoopGradientsMatchFiniteDifferences) {
  for (const tools::CellDescriptor* cell : {tools::find_cell("lstm"), tools::find_cell("rnn")}) {
    BuildSpec spec = small_gru(true, tools::GruVariant::kModern);
    spec.cell = cell;
    spec.timesteps = 4;
    spec.units = 3;
    Session s;
    s.bytes = build(spec, RnnLayout::kWhile);
    ASSERT_TRUE(s.prepare_bytes(adam_all())) << cell->name;
    check_gradients(s, {random_floats(12, 1.f, 13)}, {1.f},
                    std::string(cell->name) + " WHILE loop");
  }
}

// Loop vs fused for LSTM and SimpleRNN: runs once the fused ops have their
// backward kernels (skipped, with the reason, before that).
void expect_same_training_if_fused_trains(const tools::CellDescriptor* cell) {
  BuildSpec spec = small_gru(true, tools::GruVariant::kModern);
  spec.cell = cell;
  Session probe;
  probe.bytes = build(spec, RnnLayout::kFused);
  ::testing::AssertionResult prepared = probe.prepare_bytes(adam_all());
  if (!prepared &&
      std::string(prepared.message()).find("no backward kernel yet") != std::string::npos) {
    GTEST_SKIP() << prepared.message();
  }
  ASSERT_TRUE(prepared);
  expect_same_training(spec, cell->name);
}

TEST(WhileTraining, LstmLoopMatchesFusedOp) {
  expect_same_training_if_fused_trains(tools::find_cell("lstm"));
}

TEST(WhileTraining, RnnLoopMatchesFusedOp) {
  expect_same_training_if_fused_trains(tools::find_cell("rnn"));
}

TEST(WhileTraining, ScopeCountsTheLoopAsOneLayer) {
  BuildSpec spec = small_gru(true, tools::GruVariant::kModern);
  Session fused, loop;
  fused.bytes = build(spec, RnnLayout::kFused);
  loop.bytes = build(spec, RnnLayout::kWhile);
  TrainingConfig c = adam_all();
  c.scope = TrainableScope::kLastN;
  c.last_n = 1;
  ASSERT_TRUE(fused.prepare_bytes(c));
  ASSERT_TRUE(loop.prepare_bytes(c));
  EXPECT_EQ(loop.trainer.weight_count(), fused.trainer.weight_count());  // the Dense head
  c.last_n = 2;
  ASSERT_TRUE(fused.prepare_bytes(c));
  ASSERT_TRUE(loop.prepare_bytes(c));
  EXPECT_GT(loop.trainer.weight_count(), 2);  // head + the loop body's FCs
  c.scope = TrainableScope::kFc;
  ASSERT_TRUE(loop.prepare_bytes(c));
  EXPECT_EQ(loop.trainer.weight_count(), 2);
}

// The observer hears the loop's per-step state gradient norms, newest first.

TEST(WhileTraining, ReportsStateGradientPerIteration) {
  BuildSpec spec = small_gru(true, tools::GruVariant::kModern);
  Session s;
  s.bytes = build(spec, RnnLayout::kWhile);
  ASSERT_TRUE(s.prepare_bytes(adam_all()));
  StateGradientLog recorder;
  s.trainer.interpreter().set_observer(&recorder);
  set_sample(s.trainer, random_floats(18, 1.f, 5), 1.f);
  ASSERT_TRUE(s.trainer.accumulate(nullptr).ok());
  ASSERT_EQ(recorder.steps.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(recorder.steps[static_cast<size_t>(i)], 5 - i);
  for (float n : recorder.norms) EXPECT_GT(n, 0.f);
}

TEST(WhileTraining, UnknownTripCountFailsNamingTheLoop) {
  // cond: LESS(x, y) of two float loop values, no counter pattern.
  OpModelBuilder b;
  int x = b.input("x", {1, 1});
  int w = b.constant("w", {1, 1}, {0.5f});
  int y = b.output("y", {1, 1});
  const int cond = b.add_subgraph("cond");
  const int body = b.add_subgraph("body");
  fb::WhileOptionsT options;
  options.cond_subgraph_index = cond;
  options.body_subgraph_index = body;
  int looped = b.tensor("looped", {1, 1});
  b.op(BuiltinOperator::WHILE, {x}, {looped}, options);
  fb::FullyConnectedOptionsT fc;
  int yy = y;
  b.op(BuiltinOperator::FULLY_CONNECTED, {looped, w, -1}, {yy}, fc);
  b.use_subgraph(cond);
  int cx = b.input("cx", {1, 1});
  int limit = b.constant("limit", {1}, {3.f});
  int more = b.output("more", {1}, TensorType::BOOL);
  b.op(BuiltinOperator::LESS, {cx, limit}, {more});
  b.use_subgraph(body);
  int bx = b.input("bx", {1, 1});
  int bw = b.constant("bw", {1, 1}, {1.5f});
  int next = b.output("next", {1, 1});
  b.op(BuiltinOperator::FULLY_CONNECTED, {bx, bw, -1}, {next});
  b.use_subgraph(0);
  Session s;
  ::testing::AssertionResult r = s.prepare(b, mse_config(false));
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("trip count"), std::string::npos) << r.message();
  EXPECT_NE(std::string(r.message()).find("WHILE"), std::string::npos) << r.message();
}

// The converter's TensorListSetItem lowering (TF 1.x-2.x): every step writes its output row
// t with acc' = CONCAT(SLICE(acc, 0, [t,-1,-1]), h, SLICE(acc, [t+1,0,0], -1)), so the two
// slices change shape from one iteration to the next. The loss reads every row, so the
// gradient crosses each iteration's concatenation at that iteration's shapes (kept on the
// tape); a recurrent h = FC(x, W) + FC(h, U) makes the rows depend on each other.
TEST(WhileTraining, SetItemAccumulatorGradientsMatchFiniteDifferences) {
  constexpr int kSteps = 4;
  const std::vector<int32_t> acc_shape = {kSteps, 1, 3};
  OpModelBuilder b;
  const int cond = b.add_subgraph("cond");
  const int body = b.add_subgraph("body");
  int sequence = b.input("sequence", acc_shape);
  int t0 = b.constant_i32("t0", {}, {0});
  int h0 = b.constant("h0", {1, 3}, {0.1f, -0.2f, 0.3f});
  int acc0 = b.constant("acc0", acc_shape, std::vector<float>(kSteps * 3, 0.f));
  int t_out = b.tensor("t_out", {}, TensorType::INT32);
  int h_out = b.tensor("h_out", {1, 3});
  int acc_out = b.output("acc_out");
  int seq_out = b.tensor("seq_out");
  fb::WhileOptionsT loop;
  loop.cond_subgraph_index = cond;
  loop.body_subgraph_index = body;
  b.op(BuiltinOperator::WHILE, {t0, h0, acc0, sequence}, {t_out, h_out, acc_out, seq_out}, loop);

  b.use_subgraph(cond);
  int ct = b.input("t", {}, TensorType::INT32);
  b.input("h", {1, 3});
  b.input("acc", acc_shape);
  b.input("sequence", acc_shape);
  int steps = b.constant_i32("steps", {}, {kSteps});
  int more = b.output("more", {}, TensorType::BOOL);
  b.op(BuiltinOperator::LESS, {ct, steps}, {more});

  b.use_subgraph(body);
  int bt = b.input("t", {}, TensorType::INT32);
  int bh = b.input("h", {1, 3});
  int bacc = b.input("acc", acc_shape);
  int bseq = b.input("sequence", acc_shape);
  fb::GatherOptionsT gather;
  gather.axis = 0;
  int x = b.tensor("x");
  b.op(BuiltinOperator::GATHER, {bseq, bt}, {x}, gather);
  int w = b.constant("w", {3, 3}, random_floats(9, 1.f, 3));
  int u = b.constant("u", {3, 3}, random_floats(9, 0.5f, 4));
  int xw = b.tensor("xw"), hu = b.tensor("hu"), h = b.tensor("h_next");
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {xw}, fb::FullyConnectedOptionsT());
  b.op(BuiltinOperator::FULLY_CONNECTED, {bh, u, -1}, {hu}, fb::FullyConnectedOptionsT());
  b.op(BuiltinOperator::ADD, {xw, hu}, {h}, fb::AddOptionsT());
  int one = b.constant_i32("one", {}, {1});
  int next_t = b.tensor("next_t", {}, TensorType::INT32);
  b.op(BuiltinOperator::ADD, {bt, one}, {next_t}, fb::AddOptionsT());
  fb::ConcatenationOptionsT axis0;
  axis0.axis = 0;
  int shape1 = b.constant_i32("shape1", {1}, {1});
  int t_vec = b.tensor("t_vec", {}, TensorType::INT32);
  int next_vec = b.tensor("next_vec", {}, TensorType::INT32);
  b.op(BuiltinOperator::RESHAPE, {bt, shape1}, {t_vec});
  b.op(BuiltinOperator::RESHAPE, {next_t, shape1}, {next_vec});
  int head_size = b.tensor("head_size", {}, TensorType::INT32);
  b.op(BuiltinOperator::CONCATENATION, {t_vec, b.constant_i32("rest", {2}, {-1, -1})}, {head_size},
       axis0);
  int tail_begin = b.tensor("tail_begin", {}, TensorType::INT32);
  b.op(BuiltinOperator::CONCATENATION, {next_vec, b.constant_i32("zeros", {2}, {0, 0})},
       {tail_begin}, axis0);
  int head = b.tensor("head"), tail = b.tensor("tail"), item = b.tensor("item");
  b.op(BuiltinOperator::SLICE, {bacc, b.constant_i32("origin", {3}, {0, 0, 0}), head_size}, {head});
  b.op(BuiltinOperator::SLICE, {bacc, tail_begin, b.constant_i32("to_end", {3}, {-1, -1, -1})},
       {tail});
  b.op(BuiltinOperator::EXPAND_DIMS, {h, b.constant_i32("axis", {}, {0})}, {item});
  int next_acc = b.tensor("next_acc");
  b.op(BuiltinOperator::CONCATENATION, {head, item, tail}, {next_acc}, axis0);
  for (int out : {next_t, h, next_acc, bseq}) b.mark_output(out);
  b.use_subgraph(0);

  Session s;
  ASSERT_TRUE(s.prepare(b, mse_config()));
  ASSERT_EQ(s.trainer.weight_count(), 2);  // the body's FC weights w and u
  EXPECT_GT(s.trainer.memory().tape_bytes, 0u);
  check_gradients(s, {random_floats(kSteps * 3, 1.f, 5)}, random_floats(kSteps * 3, 1.f, 6),
                  "set-item accumulator loop");
}

}  // namespace
}  // namespace gruwb::test
