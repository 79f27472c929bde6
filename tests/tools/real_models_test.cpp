// The ten licensed models other people's converters wrote (../shared/data/models/real):
// each runs against the real TFLite runtime's outputs (golden/<stem>/), fuses where it
// holds a recurrent cell, and the fused file gives the same answers. One table says what
// each model is expected to do today, so a model that starts or stops working fails a test.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "engine/tools/fuser.h"
#include "engine/tools/golden.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"
#include "engine/train/trainer.h"
#include "tests/engine/test_models.h"

namespace gruwb::tools {
namespace {

enum class Expect {
  kGolden,  // runs and equals real TFLite (float: 1e-5 relative to max(1, |ref|))
  // Flex TensorList ops, which no TFLite build here runs: the original in the engine equals
  // real TFLite on the builtin-only `gruwb fuse` rewrite (tests/fixtures/flex_golden/).
  kFlexGolden,
  kRefused,  // prepare fails with `reason` (work of a later issue)
};

struct RealModel {
  const char* stem;
  Expect expect;
  int cells_fused;     // by gruwb fuse
  const char* reason;  // kRefused: part of the one-line error; otherwise why fusing stops
};

const RealModel kRealModels[] = {
    // Two LSTM(128) cells each, detected; TFLite's fused LSTM takes its state only from
    // variable tensors and outputs no c, and these models take h, c in and give them out.
    {"breizhn_dtln_model_1", Expect::kGolden, 0, "LSTM state in, c out"},
    {"breizhn_dtln_model_1_3d37fdf", Expect::kGolden, 0, "LSTM state in, c out"},
    // Hybrid (int8 weights, float activations): TFLite's run-time input quantization, which the
    // fused recurrent kernels do not follow.
    {"breizhn_dtln_model_quant_1", Expect::kGolden, 0, "hybrid; LSTM state in, c out"},
    {"mycroftai_plugin_wake_word_precise_lite_hey_mycroft", Expect::kGolden, 1, ""},
    {"casonka_networkfilter_simplernn", Expect::kFlexGolden, 2, ""},
    {"casonka_networkfilter_lstm", Expect::kFlexGolden, 2, ""},
    // Flex lists around hybrid LSTM cells (kept as loops): its golden is real TFLite on the
    // `gruwb fuse --builtin-only` rewrite.
    {"cpmpercussion_impsy_musicmdrnn_dim2_layers2_units32_mixtures5_scale10", Expect::kFlexGolden,
     0, "hybrid LSTM cells"},
    // Full-integer int8 LSTMs (TFLite's 8x8->16 integer kernel), already fused.
    {"google_coral_test_data_keras_lstm_mnist_ptq", Expect::kGolden, 0, "already fused"},
    {"tensorflow_tflite_micro_dtln_noise_suppression", Expect::kGolden, 0, "already fused"},
    {"tensorflow_tflite_micro_micro_speech_lstm", Expect::kGolden, 0, "already fused"},
};

// gtest prints a model by its stem.
void PrintTo(const RealModel& m, std::ostream* os) { *os << m.stem; }

std::string real_dir() { return test::shared_dir() + "/data/models/real/"; }

std::string file_of(const RealModel& m) { return real_dir() + m.stem + ".tflite"; }

std::string golden_dir(const RealModel& m) {
  return m.expect == Expect::kFlexGolden
             ? std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/flex_golden/" + m.stem + "/"
             : real_dir() + "golden/" + m.stem + "/";
}

std::vector<NpyArray> golden(const RealModel& m, const char* kind) {
  std::vector<NpyArray> arrays;
  for (int i = 0;; ++i) {
    const std::string path = golden_dir(m) + kind + std::to_string(i) + ".npy";
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      std::fclose(f);
    } else {
      break;
    }
    NpyArray a;
    std::string error;
    EXPECT_TRUE(read_npy(path, &a, &error)) << error;
    arrays.push_back(a);
  }
  return arrays;
}

// Runs `bytes` on the golden inputs; the largest error relative to max(1, |ref|).
::testing::AssertionResult matches_golden(const std::vector<uint8_t>& bytes, const RealModel& m,
                                          double* worst) {
  Model model;
  Status s = Model::load(bytes.data(), bytes.size(), &model);
  if (!s.ok()) return ::testing::AssertionFailure() << "load: " << s.message();
  ModelRunner runner;
  std::string error;
  if (!runner.prepare(model, &error)) return ::testing::AssertionFailure() << error;
  GoldenResult golden;
  if (!compare_with_golden(runner, golden_dir(m), &golden, &error)) {
    return ::testing::AssertionFailure() << error;
  }
  if (!golden.found) return ::testing::AssertionFailure() << "no golden files in " << golden_dir(m);
  *worst = golden.worst;
  if (!golden.equal) return ::testing::AssertionFailure() << "max relative error " << *worst;
  return ::testing::AssertionSuccess();
}

class RealModels : public ::testing::TestWithParam<RealModel> {};

TEST_P(RealModels, RunAsRealTfliteDoes) {
  const RealModel& m = GetParam();
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(read_file_bytes(file_of(m), &bytes, &error)) << error;
  if (m.expect == Expect::kRefused) {
    Model model;
    ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
    ModelRunner runner;
    EXPECT_FALSE(runner.prepare(model, &error));
    EXPECT_NE(error.find(m.reason), std::string::npos) << error;
    return;
  }
  double worst = 0;
  EXPECT_TRUE(matches_golden(bytes, m, &worst));
  std::printf("%s: max relative error %.3g\n", m.stem, worst);
}

// gruwb fuse: the cells it rewrites, and the rewritten file still equals real TFLite.
TEST_P(RealModels, FuseKeepsTheAnswers) {
  const RealModel& m = GetParam();
  if (m.expect == Expect::kRefused) GTEST_SKIP() << m.reason;
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(read_file_bytes(file_of(m), &bytes, &error)) << error;
  FuseResult result;
  ASSERT_TRUE(fuse_model(bytes, FuseOptions(), &result, &error)) << error;
  EXPECT_EQ(result.fused_count(), m.cells_fused);
  for (const CellOutcome& c : result.cells) {
    if (!c.fused)
      std::printf("%s: %s not fused: %s\n", m.stem, c.cell.summary.c_str(), c.reason.c_str());
  }
  if (result.fused_count() == 0) return;
  EXPECT_LT(result.after.bytes, result.before.bytes);
  EXPECT_LT(result.after.ops, result.before.ops);
  double worst = 0;
  EXPECT_TRUE(matches_golden(result.bytes, m, &worst));
  std::printf("%s fused: %llu -> %llu bytes, %u -> %u ops, max relative error %.3g\n", m.stem,
              static_cast<unsigned long long>(result.before.bytes),
              static_cast<unsigned long long>(result.after.bytes), result.before.ops,
              result.after.ops, worst);
}

// gruwb fuse --builtin-only: no Flex op is left, and the file equals real TFLite (which runs
// it: the Flex goldens are real TFLite's outputs on exactly these rewrites).
TEST_P(RealModels, BuiltinOnlyLeavesNoFlexOpAndKeepsTheAnswers) {
  const RealModel& m = GetParam();
  if (m.expect != Expect::kFlexGolden) GTEST_SKIP() << "no Flex ops";
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(read_file_bytes(file_of(m), &bytes, &error)) << error;
  FuseOptions options;
  options.builtin_only = true;
  FuseResult result;
  ASSERT_TRUE(fuse_model(bytes, options, &result, &error)) << error;
  EXPECT_EQ(result.lowering_note, "");
  EXPECT_EQ(result.lowered_list_ops > 0, m.cells_fused == 0) << "fused cells absorb the lists";
  Model model;
  ASSERT_TRUE(Model::load(result.bytes.data(), result.bytes.size(), &model).ok());
  for (int s = 0; s < model.subgraph_count(); ++s) {
    for (int o = 0; o < model.subgraph(s).operator_count; ++o) {
      EXPECT_NE(model.subgraph(s).op(o).op_code, kOpCustom) << "subgraph " << s << " op " << o;
    }
  }
  double worst = 0;
  EXPECT_TRUE(matches_golden(result.bytes, m, &worst));
  std::printf("%s builtin-only: %d list ops lowered, max relative error %.3g\n", m.stem,
              result.lowered_list_ops, worst);
}

// gruwb fuse --stateful on the streaming DTLN models (LSTM state in and out as model inputs
// and outputs): every cell fuses, the state input and output go (the fused ops keep the state
// in their variable tensors), and three invokes in a row equal real TFLite's three invokes of
// the same file (tests/fixtures/stateful_golden; real TFLite's outputs there equal the
// original fed back its own state output, checked when they were made).
TEST(RealModelsStateful, StreamingLstmsFuseKeepingTheirStateInside) {
  for (const char* stem :
       {"breizhn_dtln_model_1", "breizhn_dtln_model_quant_1", "breizhn_dtln_model_1_3d37fdf"}) {
    SCOPED_TRACE(stem);
    std::vector<uint8_t> bytes;
    std::string error;
    ASSERT_TRUE(read_file_bytes(real_dir() + stem + ".tflite", &bytes, &error)) << error;
    FuseOptions options;
    options.stateful = true;
    FuseResult result;
    ASSERT_TRUE(fuse_model(bytes, options, &result, &error)) << error;
    ASSERT_EQ(result.fused_count(), 2);
    EXPECT_LT(result.after.ops, result.before.ops);
    EXPECT_LT(result.after.arena_bytes, result.before.arena_bytes);
    Model model;
    ASSERT_TRUE(Model::load(result.bytes.data(), result.bytes.size(), &model).ok());
    ModelRunner runner;
    ASSERT_TRUE(runner.prepare(model, &error)) << error;
    ASSERT_EQ(runner.input_count(), 1);   // the state input is gone
    ASSERT_EQ(runner.output_count(), 1);  // and the state output
    const std::string dir =
        std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/stateful_golden/" + stem + "/";
    double worst = 0;
    for (int k = 0; k < 3; ++k) {  // one runner: the state carries over
      NpyArray x, want;
      ASSERT_TRUE(read_npy(dir + "input" + std::to_string(k) + ".npy", &x, &error)) << error;
      ASSERT_TRUE(read_npy(dir + "output" + std::to_string(k) + ".npy", &want, &error)) << error;
      ASSERT_TRUE(runner.set_input(0, x, &error)) << error;
      ASSERT_TRUE(runner.invoke(&error)) << error;
      const NpyArray got = runner.output(0);
      ASSERT_EQ(got.data.size(), want.data.size());
      for (size_t i = 0; i < got.data.size() / 4; ++i) {
        float a, b;
        std::memcpy(&a, got.data.data() + 4 * i, 4);
        std::memcpy(&b, want.data.data() + 4 * i, 4);
        worst = std::max(worst, std::fabs(double{a} - b) / std::max(1.0, std::fabs(double{b})));
      }
    }
    EXPECT_LT(worst, 1e-5);
    std::printf("%s --stateful: %u -> %u ops, arena %llu -> %llu B, max relative error %.3g\n",
                stem, result.before.ops, result.after.ops,
                static_cast<unsigned long long>(result.before.arena_bytes),
                static_cast<unsigned long long>(result.after.arena_bytes), worst);
  }
}

// One MSE step towards 0.5 on the golden inputs: the loss, dL/d(input 0), and the
// gradient of each weight by tensor name.
struct Step {
  float loss = 0;
  std::vector<float> input_gradient;
  std::map<std::string, std::vector<float>> weights;
};

::testing::AssertionResult train_step(const std::vector<uint8_t>& bytes, const RealModel& m,
                                      Step* out) {
  Model model;
  Status s = Model::load(bytes.data(), bytes.size(), &model);
  if (!s.ok()) return ::testing::AssertionFailure() << s.message();
  TrainingConfig config;
  config.loss = Loss::kMeanSquaredError;
  config.input_gradients = true;
  std::vector<uint8_t> arena(4u << 20);
  Trainer trainer;
  s = trainer.prepare(model, config, arena.data(), arena.size());
  if (!s.ok()) return ::testing::AssertionFailure() << "prepare: " << s.message();
  const std::vector<NpyArray> inputs = golden(m, "input");
  for (int i = 0; i < trainer.input_count(); ++i) {
    Tensor* in = trainer.input(i);
    const NpyArray& a = inputs[static_cast<size_t>(i)];
    if (in->bytes != a.data.size()) return ::testing::AssertionFailure() << "input " << i;
    std::copy(a.data.begin(), a.data.end(), in->data);
  }
  std::fill(trainer.label(), trainer.label() + trainer.label_count(), 0.5f);
  s = trainer.accumulate(&out->loss);
  if (!s.ok()) return ::testing::AssertionFailure() << "accumulate: " << s.message();
  const Tensor* dx = trainer.interpreter().gradient(0, trainer.input(0));
  if (!dx) return ::testing::AssertionFailure() << "no gradient reaches input 0";
  out->input_gradient.assign(dx->f32(), dx->f32() + dx->elements());
  for (int w = 0; w < trainer.weight_count(); ++w) {
    const Tensor* g = trainer.weight_gradient(w);
    out->weights[trainer.weight(w)->name].assign(g->f32(), g->f32() + g->elements());
  }
  return ::testing::AssertionSuccess();
}

// BPTT through the converter's loop (WHILE, Flex TensorLists, set-item accumulators) gives
// the fused op's loss, input gradient and head gradients; the fused ops' backward is checked
// against PyTorch in tests/engine/kernels. (Weight layouts differ between the forms.)
TEST_P(RealModels, LoopGradientsEqualTheFusedOps) {
  const RealModel& m = GetParam();
  if (m.expect == Expect::kRefused || m.cells_fused == 0) GTEST_SKIP() << "nothing fused";
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(read_file_bytes(file_of(m), &bytes, &error)) << error;
  FuseResult result;
  ASSERT_TRUE(fuse_model(bytes, FuseOptions(), &result, &error)) << error;
  Step loop, fused;
  ASSERT_TRUE(train_step(bytes, m, &loop));
  ASSERT_TRUE(train_step(result.bytes, m, &fused));
  EXPECT_NEAR(loop.loss, fused.loss, 1e-6f * std::max(1.f, fused.loss));
  ASSERT_EQ(loop.input_gradient.size(), fused.input_gradient.size());
  float scale = 0;
  for (float g : fused.input_gradient) scale = std::max(scale, std::fabs(g));
  EXPECT_GT(scale, 1e-6f) << "the gradient crosses the recurrent layers";
  for (size_t i = 0; i < loop.input_gradient.size(); ++i) {
    EXPECT_NEAR(loop.input_gradient[i], fused.input_gradient[i], 1e-5f * std::max(scale, 1e-3f))
        << "dL/dx[" << i << "]";
  }
  int shared = 0;
  for (const auto& [name, g] : loop.weights) {
    auto it = fused.weights.find(name);
    if (it == fused.weights.end()) continue;
    ++shared;
    ASSERT_EQ(g.size(), it->second.size()) << name;
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], it->second[i], 1e-5f) << name;
  }
  EXPECT_GT(shared, 0) << "the Dense head keeps its weights";
}

INSTANTIATE_TEST_SUITE_P(Licensed, RealModels, ::testing::ValuesIn(kRealModels),
                         [](const ::testing::TestParamInfo<RealModel>& info) {
                           std::string name = info.param.stem;
                           std::replace_if(
                               name.begin(), name.end(), [](char c) { return !std::isalnum(c); },
                               '_');
                           return name;
                         });

}  // namespace
}  // namespace gruwb::tools
