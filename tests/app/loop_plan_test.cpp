// Loops at fused speed (app/core/loop_plan.h): the real models run through the plan give real
// TFLite's golden outputs, the WHILE GRU of hey_mycroft in its fused form; --as-written runs the
// loop; a fused form that disagrees with the file is refused; training runs and saves the fused
// form unless asked otherwise.

#include "app/core/loop_plan.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "app/core/training_session.h"
#include "engine/tools/golden.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/model_writer.h"

namespace gruwb::app {
namespace {

namespace fs = std::filesystem;

const fs::path kReal = fs::path(GRUWB_SHARED_DIR) / "data/models/real";
const char* const kMycroft = "mycroftai_plugin_wake_word_precise_lite_hey_mycroft";

std::vector<uint8_t> read(const fs::path& path) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(tools::read_file_bytes(path.string(), &bytes, &error)) << error;
  return bytes;
}

// How many ops of `code` the model has over all its subgraphs.
int count_ops(const std::vector<uint8_t>& bytes, BuiltinOperator code) {
  tools::ModelDef def;
  Model model;
  std::string error;
  if (!Model::load(bytes.data(), bytes.size(), &model).ok() ||
      !tools::unpack_model(model, &def, &error)) {
    ADD_FAILURE() << "the model does not load: " << error;
    return -1;
  }
  int n = 0;
  for (const auto& subgraph : def.subgraphs) {
    for (const auto& op : subgraph->operators) {
      n += def.operator_codes[op->opcode_index]->builtin_code == code;
    }
  }
  return n;
}

tools::GoldenResult golden_of(const std::vector<uint8_t>& bytes, const std::string& stem) {
  tools::GoldenResult golden;
  Model model;
  tools::ModelRunner runner;
  std::string error;
  EXPECT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok()) << stem;
  EXPECT_TRUE(runner.prepare(model, &error)) << stem << ": " << error;
  EXPECT_TRUE(
      tools::compare_with_golden(runner, (kReal / "golden" / stem).string(), &golden, &error))
      << stem << ": " << error;
  return golden;
}

TEST(LoopPlanTest, RealModelsThroughThePlanGiveTheGoldenOutputs) {
  int fused = 0;
  for (const auto& entry : fs::directory_iterator(kReal)) {
    const std::string stem = entry.path().stem().string();
    if (entry.path().extension() != ".tflite" || !fs::exists(kReal / "golden" / stem)) continue;
    const std::vector<uint8_t> file = read(entry.path());
    Model model;
    tools::ModelRunner runner;
    std::string error;
    ASSERT_TRUE(Model::load(file.data(), file.size(), &model).ok()) << stem;
    if (!runner.prepare(model, &error)) continue;  // the full-integer LSTMs (issue 15)
    const LoopPlan plan = plan_loops(file);
    const tools::GoldenResult golden = golden_of(plan.bytes, stem);
    ASSERT_TRUE(golden.found) << stem;
    EXPECT_TRUE(golden.equal) << stem << (plan.fused ? " (fused)" : "") << ": " << golden.worst;
    if (!plan.fused) {
      EXPECT_EQ(plan.bytes, file) << stem << ": a plan that is not fused runs the file";
      continue;
    }
    ++fused;
    EXPECT_LE(plan.difference, kLoopPlanTolerance) << stem;
    EXPECT_NE(plan.note.find("running the fused form of"), std::string::npos) << plan.note;
  }
  EXPECT_GE(fused, 1) << "hey_mycroft's WHILE GRU runs fused";
}

TEST(LoopPlanTest, TheWhileGruOfHeyMycroftRunsFusedAndAsWrittenOnRequest) {
  const std::vector<uint8_t> file = read(kReal / (std::string(kMycroft) + ".tflite"));
  ASSERT_EQ(count_ops(file, BuiltinOperator::WHILE), 1);

  const LoopPlan fused = plan_loops(file);
  ASSERT_TRUE(fused.fused) << fused.note;
  EXPECT_EQ(fused.fused_loops, 1);
  EXPECT_EQ(fused.fused_chains, 0);
  EXPECT_EQ(count_ops(fused.bytes, BuiltinOperator::WHILE), 0);
  EXPECT_NE(fused.note.find("1 WHILE loop"), std::string::npos) << fused.note;
  EXPECT_NE(fused.note.find("--as-written"), std::string::npos) << fused.note;
  EXPECT_TRUE(golden_of(fused.bytes, kMycroft).equal);

  LoopPlanOptions off;
  off.fuse_loops = false;
  const LoopPlan written = plan_loops(file, off);
  EXPECT_FALSE(written.fused);
  EXPECT_EQ(written.bytes, file);
  EXPECT_TRUE(written.note.empty());
  EXPECT_EQ(count_ops(written.bytes, BuiltinOperator::WHILE), 1);
  EXPECT_TRUE(golden_of(written.bytes, kMycroft).equal);
}

// A fused form whose recurrent weights were changed computes something else: the check on the
// check input sees it and the file runs as written.
TEST(LoopPlanTest, AFusedFormThatDisagreesFallsBackToTheFile) {
  const std::vector<uint8_t> file = read(kReal / (std::string(kMycroft) + ".tflite"));
  bool altered = false;
  LoopPlanOptions options;
  options.before_check = [&](std::vector<uint8_t>* fused) {
    Model model;
    tools::ModelDef def;
    std::string error;
    ASSERT_TRUE(Model::load(fused->data(), fused->size(), &model).ok());
    ASSERT_TRUE(tools::unpack_model(model, &def, &error)) << error;
    // The fused cell's op: the one custom op; input 1 is its input kernel (float).
    for (const auto& op : def.subgraphs[0]->operators) {
      if (def.operator_codes[op->opcode_index]->builtin_code != BuiltinOperator::CUSTOM) continue;
      const auto& kernel = *def.subgraphs[0]->tensors[static_cast<size_t>(op->inputs[1])];
      std::vector<uint8_t>& data = def.buffers[kernel.buffer]->data;
      ASSERT_GE(data.size(), 4u);
      for (size_t i = 0; i + 4 <= data.size(); i += 4) {
        float v;
        std::memcpy(&v, data.data() + i, 4);
        v += 0.5f;
        std::memcpy(data.data() + i, &v, 4);
      }
      altered = true;
    }
    ASSERT_TRUE(tools::write_model(def, model.format(), fused, &error)) << error;
  };
  const LoopPlan plan = plan_loops(file, options);
  ASSERT_TRUE(altered) << "the fused form has no custom op to alter";
  EXPECT_FALSE(plan.fused);
  EXPECT_EQ(plan.bytes, file);
  EXPECT_GT(plan.difference, kLoopPlanTolerance);
  EXPECT_NE(plan.note.find("differs from the file"), std::string::npos) << plan.note;
  EXPECT_NE(plan.note.find("running the file as written"), std::string::npos) << plan.note;
}

TEST(LoopPlanTest, AModelWithoutLoopsRunsAsWrittenWithoutANote) {
  const std::vector<uint8_t> file =
      read(fs::path(GRUWB_SOURCE_DIR) / "resources/samples/gesture_gru_fused.tflite");
  const LoopPlan plan = plan_loops(file);
  EXPECT_FALSE(plan.fused);
  EXPECT_EQ(plan.bytes, file);
  EXPECT_TRUE(plan.note.empty()) << plan.note;
}

// Training the WHILE sample: the fused form trains and is what trained_model() writes; with
// as_written, or a scope naming the file's tensors, the loop trains and is written.
TEST(LoopPlanTest, TrainingRunsAndSavesTheFusedFormUnlessAskedOtherwise) {
  const std::vector<uint8_t> file =
      read(fs::path(GRUWB_SOURCE_DIR) / "resources/samples/gesture_gru_while.tflite");
  TrainingData data;
  data.sample_shape = {60, 3};
  for (int i = 0; i < 4 * 180; ++i) data.inputs.push_back(static_cast<float>(i % 7) / 7.f - 0.5f);
  data.labels = {0, 1, 2, 3};
  struct Case {
    bool as_written;
    const char* scope;
    bool fused;
  };
  for (const Case& c : {Case{false, "all", true}, Case{false, "fc", true}, Case{true, "all", false},
                        Case{false, "last:1", false}}) {
    TrainingRunSpec spec;
    spec.model_bytes = file;
    spec.epochs = 1;
    spec.config.batch_size = 2;
    spec.as_written = c.as_written;
    std::string error;
    ASSERT_TRUE(set_trainable_scope(c.scope, &spec, &error)) << error;
    TrainingSession session;
    ASSERT_TRUE(session.prepare(spec, data, nullptr, &error)) << c.scope << ": " << error;
    EXPECT_EQ(session.loop_plan().fused, c.fused) << c.scope << " " << c.as_written;
    EXPECT_EQ(!session.fused_note().empty(), c.fused) << session.fused_note();
    ASSERT_EQ(session.run().outcome, TrainingOutcome::kCompleted) << c.scope;
    std::vector<uint8_t> trained;
    ASSERT_TRUE(session.trained_model(ModelFormat::kTflite, &trained, &error)) << error;
    EXPECT_EQ(count_ops(trained, BuiltinOperator::WHILE), c.fused ? 0 : 1) << c.scope;
  }
}

}  // namespace
}  // namespace gruwb::app
