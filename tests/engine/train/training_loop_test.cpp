// The training loop around the backward pass: one-pass batches equal
// accumulated samples, checkpoints resume bit-identically, the observer sees
// steps and gradient statistics, the reference model's training memory
// stays close to the sum of its parts, and the epoch loop every host runs
// (order, updates, figures).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/tools/cells/cell_registry.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/train/epoch_loop.h"
#include "engine/train/observer.h"
#include "engine/train/pcg32.h"
#include "engine/train/trainer.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

std::vector<uint8_t> small_fused_gru(bool reset_after = true, int units = 4,
                                     const char* cell = "gru") {
  tools::BuildSpec spec;
  spec.cell = tools::find_cell(cell);
  spec.reset_after = reset_after;
  spec.timesteps = 5;
  spec.features = 3;
  spec.units = units;
  spec.classes = 3;
  spec.bias_init = tools::BiasInit::kUniform;
  spec.seed = 11;
  tools::ModelDef def;
  std::string error;
  EXPECT_TRUE(tools::build_model(spec, &def, &error)) << error;
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(tools::write_model(def, spec.format, &bytes, &error)) << error;
  return bytes;
}

TrainingConfig config(int batch, bool one_pass) {
  TrainingConfig c;
  c.loss = Loss::kSparseCategoricalCrossEntropy;
  c.optimizer = Optimizer::kAdam;
  c.learning_rate = 0.01f;
  c.batch_size = batch;
  c.one_pass_batches = one_pass;
  return c;
}

constexpr int kSampleValues = 15;  // 5 x 3

std::vector<float> sample(int i) { return random_floats(kSampleValues, 1.f, 500 + i); }
float label_of(int i) { return static_cast<float>((i * 7) % 3); }

void expect_same_weights(Trainer& a, Trainer& b, float tolerance, const std::string& what) {
  ASSERT_EQ(a.weight_count(), b.weight_count());
  for (int w = 0; w < a.weight_count(); ++w) {
    const Tensor* x = a.weight(w);
    const Tensor* y = b.weight(w);
    for (int64_t i = 0; i < x->elements(); ++i) {
      if (tolerance == 0.f) {
        ASSERT_EQ(memcmp(&x->f32()[i], &y->f32()[i], sizeof(float)), 0)
            << what << " weight " << x->name << " " << i << ": " << x->f32()[i] << " vs "
            << y->f32()[i];
      } else {
        ASSERT_NEAR(x->f32()[i], y->f32()[i], tolerance) << what << " " << x->name << " " << i;
      }
    }
  }
}

// On hosts the B rows run through the batched GRU kernels (GRUWB_BATCHED_KERNELS): GRUWB_GRU
// with reset_after true and false. (The builder's Circle model does not take a batch dimension:
// its one-pass mode falls back to single samples.) 20 units: the AVX-512 backward step's full
// 16 lanes and a 4-lane tail (gru_default_gate_gradients_avx512). The LSTM's batched kernels
// (lstm_batch.h) and the SimpleRNN's likewise.
enum GruForm { kResetAfter, kResetBefore, kResetAfter20Units, kLstm, kLstm20Units, kRnn20Units };
class OnePassBatches : public ::testing::TestWithParam<GruForm> {};

TEST_P(OnePassBatches, SameUpdateAsAccumulatedSamples) {
  const int B = 4;
  Session one, many;
  const GruForm form = GetParam();
  const bool twenty = form == kResetAfter20Units || form == kLstm20Units || form == kRnn20Units;
  const char* cell = form == kLstm || form == kLstm20Units ? "lstm"
                     : form == kRnn20Units                 ? "rnn"
                                                           : "gru";
  one.bytes = small_fused_gru(form != kResetBefore, twenty ? 20 : 4, cell);
  many.bytes = one.bytes;
  ASSERT_TRUE(one.prepare_bytes(config(B, true)));
  ASSERT_TRUE(many.prepare_bytes(config(B, false)));
  EXPECT_EQ(one.trainer.batch_rows(), B);
  EXPECT_TRUE(one.trainer.one_pass_batches());
  EXPECT_EQ(many.trainer.batch_rows(), 1);
  ASSERT_EQ(one.trainer.input(0)->elements(), B * kSampleValues);
  for (int step = 0; step < 3; ++step) {
    // A full batch, then a short one (3 of 4 rows).
    const int samples = step == 2 ? 3 : B;
    float many_loss = 0.f;
    int32_t predictions[B] = {};
    for (int i = 0; i < samples; ++i) {
      const int id = step * B + i;
      std::vector<float> x = sample(id);
      memcpy(one.trainer.input(0)->f32() + i * kSampleValues, x.data(), sizeof(float) * x.size());
      one.trainer.label()[i] = label_of(id);
      memcpy(many.trainer.input(0)->data, x.data(), many.trainer.input(0)->bytes);
      many.trainer.label()[0] = label_of(id);
      float loss = 0.f;
      ASSERT_TRUE(many.trainer.accumulate(&loss).ok());
      many_loss += loss / static_cast<float>(samples);
      predictions[i] = many.trainer.predicted_class(0);
    }
    // Garbage in the unused row must not matter.
    if (samples < B) {
      for (int k = 0; k < kSampleValues; ++k)
        one.trainer.input(0)->f32()[3 * kSampleValues + k] = 9.f;
      one.trainer.label()[3] = 2.f;
    }
    float one_loss = 0.f;
    Status s = samples == B ? one.trainer.train_sample(&one_loss)
                            : one.trainer.train_batch(samples, &one_loss);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(many.trainer.apply_update().ok());
    EXPECT_NEAR(one_loss, many_loss, 1e-5f) << "step " << step;
    for (int i = 0; i < samples; ++i) {
      EXPECT_EQ(one.trainer.predicted_class(i), predictions[i]) << "step " << step << " row " << i;
    }
    EXPECT_EQ(one.trainer.step(), step + 1);
    expect_same_weights(one.trainer, many.trainer, 2e-6f, "step " + std::to_string(step));
  }
}

std::string gru_form_name(const ::testing::TestParamInfo<GruForm>& info) {
  switch (info.param) {
    case kResetAfter: return "ResetAfter";
    case kResetBefore: return "ResetBefore";
    case kResetAfter20Units: return "ResetAfter20Units";
    case kLstm: return "Lstm";
    case kLstm20Units: return "Lstm20Units";
    case kRnn20Units: return "Rnn20Units";
  }
  return "";
}
INSTANTIATE_TEST_SUITE_P(GruForms, OnePassBatches,
                         ::testing::Values(kResetAfter, kResetBefore, kResetAfter20Units, kLstm,
                                           kLstm20Units, kRnn20Units),
                         gru_form_name);

TEST(OnePassBatchesLoops, FallsBackToSamplesForLoops) {
  tools::BuildSpec spec;
  spec.timesteps = 4;
  spec.features = 3;
  spec.units = 3;
  spec.classes = 2;
  spec.layout = tools::RnnLayout::kWhile;
  tools::ModelDef def;
  std::string error;
  ASSERT_TRUE(tools::build_model(spec, &def, &error)) << error;
  Session s;
  ASSERT_TRUE(tools::write_model(def, spec.format, &s.bytes, &error)) << error;
  ASSERT_TRUE(s.prepare_bytes(config(8, true)));
  EXPECT_EQ(s.trainer.batch_rows(), 1);
  EXPECT_FALSE(s.trainer.train_batch(2, nullptr).ok());
}

// Trains one step on sample `id`.
void write_sample(Trainer& t, int id);

void feed(Trainer& t, int id) {
  write_sample(t, id);
  ASSERT_TRUE(t.train_sample(nullptr).ok());
}

// Three trainers on the same small fused GRU: one trains straight through,
// one is checkpointed, one resumes from that checkpoint.
bool prepare_three(const TrainingConfig& c, Session* straight, Session* first, Session* resumed) {
  straight->bytes = small_fused_gru();
  first->bytes = straight->bytes;
  resumed->bytes = straight->bytes;
  return straight->prepare_bytes(c) && first->prepare_bytes(c) && resumed->prepare_bytes(c);
}

TEST(Checkpoint, ResumedTrainingIsBitIdentical) {
  for (Optimizer optimizer : {Optimizer::kAdam, Optimizer::kSgd}) {
    TrainingConfig c = config(2, false);
    c.optimizer = optimizer;
    c.momentum = 0.9f;
    Session straight, first, resumed;
    ASSERT_TRUE(prepare_three(c, &straight, &first, &resumed));
    for (int i = 0; i < 5; ++i) feed(straight.trainer, i);
    for (int i = 0; i < 5; ++i) feed(first.trainer, i);
    // Mid-batch: one sample is waiting in the accumulators.
    ASSERT_EQ(first.trainer.pending_samples(), 1);
    std::vector<uint8_t> checkpoint(first.trainer.checkpoint_bytes());
    size_t written = 0;
    ASSERT_TRUE(first.trainer.save_checkpoint(checkpoint.data(), checkpoint.size(), &written).ok());
    EXPECT_EQ(written, checkpoint.size());
    Status s = resumed.trainer.load_checkpoint(checkpoint.data(), checkpoint.size());
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(resumed.trainer.step(), 2);
    EXPECT_EQ(resumed.trainer.pending_samples(), 1);
    for (int i = 5; i < 12; ++i) feed(straight.trainer, i);
    for (int i = 5; i < 12; ++i) feed(resumed.trainer, i);
    EXPECT_EQ(resumed.trainer.step(), straight.trainer.step());
    expect_same_weights(straight.trainer, resumed.trainer, 0.f, "resumed");
    // A checkpoint from another setup is refused with the reason.
    TrainingConfig other = c;
    other.scope = TrainableScope::kFc;
    Session fc;
    fc.bytes = straight.bytes;
    ASSERT_TRUE(fc.prepare_bytes(other));
    Status bad = fc.trainer.load_checkpoint(checkpoint.data(), checkpoint.size());
    EXPECT_FALSE(bad.ok());
    EXPECT_NE(std::string(bad.message()).find("weights"), std::string::npos) << bad.message();
    EXPECT_FALSE(fc.trainer.load_checkpoint(checkpoint.data(), 10).ok());
  }
}

// The chunked interface a board streams with: byte for byte what
// save_checkpoint writes, in any chunk size (split inside the header, the
// element counts and the arrays), and written back in order it restores a
// trainer that trains on bit-identically.
TEST(Checkpoint, StreamsInChunksLikeSaveAndLoad) {
  TrainingConfig c = config(2, false);
  c.optimizer = Optimizer::kAdam;
  Session straight, first, resumed;
  ASSERT_TRUE(prepare_three(c, &straight, &first, &resumed));
  for (int i = 0; i < 5; ++i) feed(straight.trainer, i);
  for (int i = 0; i < 5; ++i) feed(first.trainer, i);
  const size_t total = first.trainer.checkpoint_bytes();
  std::vector<uint8_t> saved(total);
  ASSERT_TRUE(first.trainer.save_checkpoint(saved.data(), total, nullptr).ok());
  for (size_t chunk : {size_t{1}, size_t{3}, size_t{7}, size_t{61}, total}) {
    std::vector<uint8_t> streamed(total, 0xAB);
    for (size_t at = 0; at < total; at += chunk) {
      const size_t n = std::min(chunk, total - at);
      ASSERT_TRUE(first.trainer.read_checkpoint(at, streamed.data() + at, n).ok());
    }
    EXPECT_EQ(streamed, saved) << "chunk " << chunk;
  }
  EXPECT_FALSE(first.trainer.read_checkpoint(total - 2, saved.data(), 4).ok());

  // Out of order and header-less writes are refused with the offsets.
  Status s = resumed.trainer.write_checkpoint(8, saved.data() + 8, 8);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("byte 8, byte 0 expected"), std::string::npos)
      << s.message();
  ASSERT_TRUE(resumed.trainer.write_checkpoint(0, saved.data(), 13).ok());
  s = resumed.trainer.write_checkpoint(20, saved.data() + 20, 5);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("byte 20, byte 13 expected"), std::string::npos)
      << s.message();
  s = resumed.trainer.finish_checkpoint_write();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("stopped at byte 13 of"), std::string::npos)
      << s.message();
  // A corrupt element count is caught before any array is written.
  std::vector<uint8_t> bad = saved;
  bad[56] ^= 1;
  ASSERT_TRUE(resumed.trainer.write_checkpoint(0, bad.data(), 57).ok());
  s = resumed.trainer.write_checkpoint(57, bad.data() + 57, 3);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("checkpoint weight 0 has"), std::string::npos)
      << s.message();

  // Offset 0 starts over; 37-byte chunks then restore it exactly.
  for (size_t at = 0; at < total; at += 37) {
    const size_t n = std::min<size_t>(37, total - at);
    s = resumed.trainer.write_checkpoint(at, saved.data() + at, n);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  s = resumed.trainer.finish_checkpoint_write();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(resumed.trainer.step(), 2);
  EXPECT_EQ(resumed.trainer.pending_samples(), 1);
  for (int i = 5; i < 12; ++i) feed(straight.trainer, i);
  for (int i = 5; i < 12; ++i) feed(resumed.trainer, i);
  expect_same_weights(straight.trainer, resumed.trainer, 0.f, "streamed");
}

struct Recorder : TrainingObserver {
  std::vector<StepMetrics> steps;
  std::vector<GradientStats> gradients;
  int state_calls = 0;
  void on_step(const StepMetrics& m) override { steps.push_back(m); }
  void on_weight_gradient(const GradientStats& g) override { gradients.push_back(g); }
  void on_state_gradient(int32_t, int32_t, const char*, int32_t, float) override { ++state_calls; }
};

TEST(Observer, StepMetricsAndGradientStatistics) {
  Session s;
  s.bytes = small_fused_gru();
  ASSERT_TRUE(s.prepare_bytes(config(3, false)));
  Recorder recorder;
  s.trainer.set_observer(&recorder);
  float sum = 0.f;
  int hits = 0;
  for (int i = 0; i < 3; ++i) {
    std::vector<float> x = sample(i);
    memcpy(s.trainer.input(0)->data, x.data(), s.trainer.input(0)->bytes);
    s.trainer.label()[0] = label_of(i);
    float loss = 0.f;
    ASSERT_TRUE(s.trainer.accumulate(&loss).ok());
    sum += loss;
    const float* p = s.trainer.output()->f32();
    int best = 0;
    for (int k = 1; k < 3; ++k) best = p[k] > p[best] ? k : best;
    hits += best == static_cast<int>(label_of(i)) ? 1 : 0;
  }
  // The mean gradient the optimizer is about to see.
  std::vector<std::vector<float>> mean;
  for (int w = 0; w < s.trainer.weight_count(); ++w) {
    std::vector<float> g = copy_of(s.trainer.weight_gradient(w));
    for (float& v : g) v /= 3.f;
    mean.push_back(g);
  }
  ASSERT_TRUE(s.trainer.apply_update().ok());
  ASSERT_EQ(recorder.steps.size(), 1u);
  EXPECT_EQ(recorder.steps[0].step, 1);
  EXPECT_EQ(recorder.steps[0].samples, 3);
  EXPECT_NEAR(recorder.steps[0].loss, sum / 3.f, 1e-6f);
  EXPECT_FLOAT_EQ(recorder.steps[0].accuracy, hits / 3.f);
  ASSERT_EQ(recorder.gradients.size(), static_cast<size_t>(s.trainer.weight_count()));
  double total = 0.0;
  for (size_t w = 0; w < mean.size(); ++w) {
    const GradientStats& g = recorder.gradients[w];
    double norm2 = 0.0;
    float lo = mean[w][0], hi = mean[w][0];
    for (float v : mean[w]) {
      norm2 += static_cast<double>(v) * v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    total += norm2;
    EXPECT_NEAR(g.norm, std::sqrt(norm2), 1e-6 + 1e-5 * std::sqrt(norm2)) << g.name;
    EXPECT_FLOAT_EQ(g.min, lo) << g.name;
    EXPECT_FLOAT_EQ(g.max, hi) << g.name;
    uint32_t counted = 0;
    for (uint32_t c : g.histogram) counted += c;
    EXPECT_EQ(counted, mean[w].size()) << g.name;
    EXPECT_GT(g.histogram[0] + g.histogram[GradientStats::kBins - 1], 0u)
        << g.name << ": the extreme value lands in an end bin";
  }
  EXPECT_NEAR(recorder.steps[0].gradient_norm, std::sqrt(total), 1e-5 * std::sqrt(total));
}

// Reference model (resources/samples/gesture_gru_fused.tflite: 1x60x3, GRU
// 60, Dense 4, softmax), Adam: the arena against the sum of its parts.
TEST(TrainingMemory, ReferenceModelCloseToItsParts) {
  Session fc, all;
  std::string error;
  ASSERT_TRUE(tools::read_file_bytes(
      std::string(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite", &fc.bytes,
      &error))
      << error;
  all.bytes = fc.bytes;
  TrainingConfig c;
  c.optimizer = Optimizer::kAdam;
  c.scope = TrainableScope::kAll;
  ASSERT_TRUE(all.prepare_bytes(c));
  c.scope = TrainableScope::kFc;
  ASSERT_TRUE(fc.prepare_bytes(c));
  Model model;
  ASSERT_TRUE(Model::load(fc.bytes.data(), fc.bytes.size(), &model).ok());
  Arena arena(1u << 20);
  Interpreter inference;
  ASSERT_TRUE(inference.prepare(model, arena.data, arena.size).ok());
  const size_t inference_bytes = inference.arena_bytes_needed();

  const TrainingMemory m = all.trainer.memory();
  const size_t parts = m.weight_bytes + m.gradient_bytes + m.optimizer_bytes + m.tape_bytes +
                       inference.arena_usage().activation_bytes;
  std::printf(
      "FC+GRU training arena %zu bytes: weights %zu, gradients %zu, optimizer %zu, tape %zu, "
      "activation gradients %zu, planned activations %zu, other %zu; parts %zu (%.3fx)\n",
      m.total, m.weight_bytes, m.gradient_bytes, m.optimizer_bytes, m.tape_bytes,
      m.activation_gradient_bytes, m.activation_bytes, m.other_bytes, parts,
      static_cast<double>(m.total) / static_cast<double>(parts));
  EXPECT_LE(static_cast<double>(m.total), 1.1 * static_cast<double>(parts));
  const TrainingMemory f = fc.trainer.memory();
  std::printf("FC-only training arena %zu bytes, inference %zu bytes: +%zu\n", f.total,
              inference_bytes, f.total - inference_bytes);
  EXPECT_LT(f.total, inference_bytes + 16 * 1024);
}

// ---- The epoch loop every host runs (engine/train/epoch_loop.h) ----

void write_sample(Trainer& t, int id) {
  std::vector<float> x = sample(id);
  memcpy(t.input(0)->data, x.data(), t.input(0)->bytes);
  t.label()[0] = label_of(id);
}

// The order is pcg_basic's stream through Fisher-Yates with unbiased bounded draws, stream
// epoch + 1: the values are pinned, so a board, the desktop and a third party agree forever.
TEST(EpochLoop, OrderIsPcg32FisherYatesPerEpoch) {
  uint32_t order[8];
  epoch_order(5, 0, true, order, 8);
  Pcg32 rng(5, 1);
  uint32_t expected[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  for (uint32_t i = 7; i > 0; --i) std::swap(expected[i], expected[rng.below(i + 1)]);
  EXPECT_TRUE(std::equal(order, order + 8, expected));
  const std::vector<uint32_t> pinned = {0, 2, 3, 6, 4, 7, 5, 1};  // (a Python PCG32 agrees)
  EXPECT_EQ(std::vector<uint32_t>(order, order + 8), pinned);
  uint32_t next[8];
  epoch_order(5, 1, true, next, 8);
  EXPECT_FALSE(std::equal(order, order + 8, next));  // each epoch its own order
  std::sort(next, next + 8);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(next[i], i);  // a permutation
  epoch_order(5, 3, false, next, 8);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(next[i], i);  // no shuffle: the data's order
}

// The loop steps the optimizer after every `batch` samples and at the epoch end, and its figures
// are the training passes' own: each sample's loss and prediction equal a forward-only pass
// with the same weights, and reading them changes nothing.
TEST(EpochLoop, UpdatesAtBatchesAndEpochEndsWithTheTrainingPassesFigures) {
  Session watched, plain;
  watched.bytes = small_fused_gru();
  plain.bytes = watched.bytes;
  ASSERT_TRUE(watched.prepare_bytes(config(4, false)));
  ASSERT_TRUE(plain.prepare_bytes(config(4, false)));
  EpochPlan plan;
  plan.samples = 10;
  plan.epochs = 2;
  plan.batch_size = 4;
  plan.seed = 3;
  uint32_t order_a[10], order_b[10];
  EpochLoop a, b;
  a.begin(plan, order_a);
  b.begin(plan, order_b);
  std::vector<uint32_t> updates_at;
  double loss_sum = 0.0;
  uint32_t hits = 0;
  while (!a.done()) {
    const uint32_t id = a.sample();
    ASSERT_EQ(b.sample(), id);
    write_sample(watched.trainer, static_cast<int>(id));
    write_sample(plain.trainer, static_cast<int>(id));
    float eval_loss = 0.f;
    int32_t eval_class = -1;
    ASSERT_TRUE(watched.trainer.evaluate(&eval_loss, &eval_class).ok());
    const int32_t truth = static_cast<int32_t>(label_of(static_cast<int>(id)));
    EpochStep step, other;
    ASSERT_TRUE(a.accumulate(watched.trainer, truth, &step).ok());
    ASSERT_TRUE(b.accumulate(plain.trainer, truth, &other).ok());
    EXPECT_EQ(step.loss, eval_loss);
    EXPECT_EQ(step.predicted, eval_class);
    loss_sum += step.loss;
    hits += step.predicted == truth ? 1 : 0;
    EXPECT_EQ(step.loss_sum, loss_sum);
    EXPECT_EQ(step.hits, hits);
    if (step.update) updates_at.push_back(step.epoch * 100 + step.samples);
    const bool epoch_end = step.epoch_end;
    ASSERT_TRUE(a.finish(watched.trainer, &step).ok());
    ASSERT_TRUE(b.finish(plain.trainer, &other).ok());
    if (epoch_end) {
      EXPECT_FLOAT_EQ(step.mean_loss(), static_cast<float>(loss_sum / 10));
      EXPECT_FLOAT_EQ(step.accuracy(), hits / 10.f);
      loss_sum = 0.0;
      hits = 0;
    }
  }
  EXPECT_EQ(updates_at, (std::vector<uint32_t>{4, 8, 10, 104, 108, 110}));
  EXPECT_EQ(watched.trainer.step(), 6);
  expect_same_weights(watched.trainer, plain.trainer, 0.f, "evaluated vs not");
}

// A loop restored at (epoch, position) with the epoch's sums goes on as the original did.
TEST(EpochLoop, RestoredLoopContinuesTheSameOrder) {
  EpochPlan plan;
  plan.samples = 12;
  plan.epochs = 3;
  plan.seed = 77;
  uint32_t order[12], restored_order[12];
  EpochLoop loop, restored;
  loop.begin(plan, order, 1);  // a resumed desktop run starts at epoch 1
  restored.begin(plan, restored_order);
  restored.restore(1, 5, 2, 1.5);
  EXPECT_EQ(restored.epoch(), 1u);
  EXPECT_EQ(restored.position(), 5u);
  EXPECT_EQ(restored.hits(), 2u);
  EXPECT_EQ(restored.loss_sum(), 1.5);
  EXPECT_TRUE(std::equal(order, order + 12, restored_order));
  plan.samples = 0;  // nothing to train: done at once, no order read
  restored.begin(plan, nullptr);
  EXPECT_TRUE(restored.done());
}

}  // namespace
}  // namespace gruwb::test
