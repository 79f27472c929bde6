// Every WHILE-loop structure of shared/research/converter-variants.md, generated one at a
// time: the engine runs the converter's loop, the detector finds each cell, and the fused
// rewrite computes what an independent double-precision reference computes from the same
// weights.

#include "tests/tools/converter_variants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "engine/tools/fuser.h"
#include "engine/tools/golden.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"
#include "engine/tools/rnn_detector.h"
#include "engine/train/trainer.h"

namespace gruwb::test {
namespace {

using tools::DetectionReport;
using tools::FuseOptions;
using tools::FuseResult;

// Output 0 of the model for the variant's inputs (the engine's arena, one invoke).
bool run(const std::vector<uint8_t>& bytes, const std::vector<std::vector<float>>& inputs,
         std::vector<float>* out, std::string* error) {
  Model model;
  if (!Model::load(bytes.data(), bytes.size(), &model).ok()) return *error = "load", false;
  tools::ModelRunner runner;
  if (!runner.prepare(model, error)) return false;
  if (runner.input_count() != static_cast<int>(inputs.size())) {
    return *error = "model has " + std::to_string(runner.input_count()) + " inputs", false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    tools::NpyArray a;
    a.dtype = "<f4";
    const Tensor* t = runner.interpreter().input(static_cast<int>(i));
    for (int d = 0; d < t->shape.rank; ++d) a.shape.push_back(t->shape.dims[d]);
    a.data.resize(inputs[i].size() * 4);
    std::memcpy(a.data.data(), inputs[i].data(), a.data.size());
    if (!runner.set_input(static_cast<int>(i), a, error)) return false;
  }
  if (!runner.invoke(error)) return false;
  tools::NpyArray o = runner.output(0);
  out->resize(o.data.size() / 4);
  std::memcpy(out->data(), o.data.data(), o.data.size());
  return true;
}

double max_error(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(
        worst, std::fabs(double{got[i]} - want[i]) / std::max(1.0, std::fabs(double{want[i]})));
  }
  return worst;
}

class ConverterVariantTest : public ::testing::TestWithParam<ConverterVariant> {};

TEST_P(ConverterVariantTest, RunsDetectsAndFusesToTheReference) {
  const ConverterVariant& v = GetParam();
  SCOPED_TRACE(v.structure);
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(write_variant(v, &bytes, &error)) << error;
  const std::vector<std::vector<float>> inputs = variant_inputs(v);
  const std::vector<float> want = reference_output(
      v, inputs[0], std::vector<std::vector<float>>(inputs.begin() + 1, inputs.end()));

  std::vector<float> loop_out;
  ASSERT_TRUE(run(bytes, inputs, &loop_out, &error)) << "the converter's loop: " << error;
  // The reference is float: a hybrid loop differs by its weights' and inputs' quantization.
  const bool hybrid = v.hybrid != ConverterVariant::Hybrid::kNone;
  EXPECT_LT(max_error(loop_out, want), hybrid ? 2e-2 : 1e-5)
      << "the loop differs from the reference";

  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  tools::ModelDef def;
  ASSERT_TRUE(tools::unpack_model(model, &def, &error)) << error;
  const DetectionReport found = tools::detect_rnn_cells(def);
  std::string others;
  for (const auto& o : found.other_loops) others += o.reason + "; ";
  if (!v.unfused_reason.empty()) {
    // What no fused op can express is reported (a loop left alone, or a cell found and kept),
    // and the model stays as it is.
    FuseResult result;
    ASSERT_TRUE(tools::fuse_model(bytes, FuseOptions(), &result, &error)) << error;
    for (const auto& c : result.cells) others += c.reason + "; ";
    EXPECT_NE(others.find(v.unfused_reason), std::string::npos) << others;
    EXPECT_EQ(result.fused_count(), 0);
    EXPECT_EQ(result.bytes, bytes);
    if (v.accumulator == Accumulator::kFlexList) {  // its lists still become builtin ops
      FuseOptions builtin;
      builtin.builtin_only = true;
      ASSERT_TRUE(tools::fuse_model(bytes, builtin, &result, &error)) << error;
      EXPECT_GT(result.lowered_list_ops, 0) << result.lowering_note;
      std::vector<float> lowered_out;
      ASSERT_TRUE(run(result.bytes, inputs, &lowered_out, &error)) << error;
      EXPECT_LT(max_error(lowered_out, want), 1e-5);
    }
    return;
  }
  ASSERT_EQ(static_cast<int>(found.cells.size()), cell_count(v)) << others;
  for (const auto& cell : found.cells) {
    EXPECT_EQ(cell.type, v.cell) << cell.summary;
    EXPECT_EQ(cell.units, v.units) << cell.summary;
    EXPECT_EQ(cell.timesteps, v.timesteps) << cell.summary;
  }

  FuseResult result;
  ASSERT_TRUE(tools::fuse_model(bytes, FuseOptions(), &result, &error)) << error;
  for (const auto& cell : result.cells)
    EXPECT_TRUE(cell.fused) << cell.cell.summary << ": " << cell.reason;
  ASSERT_EQ(result.fused_count(), cell_count(v));
  EXPECT_LT(result.bytes.size(), bytes.size());
  std::vector<float> fused_out;
  ASSERT_TRUE(run(result.bytes, inputs, &fused_out, &error)) << "the fused model: " << error;
  EXPECT_LT(max_error(fused_out, loop_out), 1e-5) << "the fused model differs from the loop";
  EXPECT_LT(max_error(fused_out, want), hybrid ? 2e-2 : 1e-5)
      << "the fused model differs from the reference";
  if (hybrid) {  // the fused op keeps the int8 weights
    Model fused_model;
    ASSERT_TRUE(Model::load(result.bytes.data(), result.bytes.size(), &fused_model).ok());
    int int8_weights = 0;
    const SubgraphView main = fused_model.main_subgraph();
    for (int t = 0; t < main.tensor_count; ++t) {
      int8_weights += main.tensor(t).type == TensorType::INT8 && main.tensor(t).is_constant();
    }
    EXPECT_GE(int8_weights, 2);
  }
}

// Real TFLite (its WASM build, tests/fixtures/gen) ran every variant it can run: the loops
// as written, the Flex ones as `gruwb fuse --builtin-only` rewrites (the GRU ones fuse into
// our GRUWB_GRU custom op, which stock TFLite lacks). The engine on each original computes
// what real TFLite computed.
TEST_P(ConverterVariantTest, EqualsRealTflite) {
  const ConverterVariant& v = GetParam();
  const std::string dir =
      std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/variants_tflite/" + v.name;
  if (!std::filesystem::exists(dir)) {
    // Stock TFLite has no GRUWB_GRU, and this WASM build no per-row hybrid FC.
    ASSERT_TRUE(v.cell == tools::find_cell("gru") || v.hybrid == ConverterVariant::Hybrid::kPerRow)
        << "a fixture is missing";
    GTEST_SKIP() << "beyond the stock TFLite build here";
  }
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(write_variant(v, &bytes, &error)) << error;
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(model, &error)) << error;
  tools::GoldenResult golden;
  ASSERT_TRUE(tools::compare_with_golden(runner, dir, &golden, &error)) << error;
  ASSERT_TRUE(golden.found);
  EXPECT_TRUE(golden.equal) << "max relative error " << golden.worst;
}

// Gradients of every trainable weight after one MSE step towards 0.5, by tensor name; the loss.
bool gradients(const std::vector<uint8_t>& bytes, const std::vector<float>& x,
               std::map<std::string, std::vector<float>>* out, float* loss, std::string* error) {
  Model model;
  if (!Model::load(bytes.data(), bytes.size(), &model).ok()) return *error = "load", false;
  TrainingConfig config;
  config.loss = Loss::kMeanSquaredError;
  std::vector<uint8_t> arena(4u << 20);
  Trainer trainer;
  Status s = trainer.prepare(model, config, arena.data(), arena.size());
  if (!s.ok()) return *error = s.message(), false;
  std::memcpy(trainer.input(0)->data, x.data(), x.size() * sizeof(float));
  std::fill(trainer.label(), trainer.label() + trainer.label_count(), 0.5f);
  s = trainer.accumulate(loss);
  if (!s.ok()) return *error = s.message(), false;
  for (int w = 0; w < trainer.weight_count(); ++w) {
    const Tensor* g = trainer.weight_gradient(w);
    (*out)[trainer.weight(w)->name].assign(g->f32(), g->f32() + g->elements());
  }
  return true;
}

// The converter's LSTM adds its bias on its own (FC(x) + FC(h) -> ADD -> ADD(bias)): training
// the loop trains that bias too, with the gradient the fused op's gate biases get.
TEST(ConverterVariantTraining, SeparateBiasAddTrainsLikeTheFusedBias) {
  ConverterVariant v;
  for (const ConverterVariant& each : converter_variants()) {
    if (each.name == "lstm_bias_add") v = each;
  }
  ASSERT_EQ(v.name, "lstm_bias_add");
  std::vector<uint8_t> loop;
  std::string error;
  ASSERT_TRUE(write_variant(v, &loop, &error)) << error;
  FuseResult fused;
  ASSERT_TRUE(tools::fuse_model(loop, FuseOptions(), &fused, &error)) << error;
  ASSERT_EQ(fused.fused_count(), 1);
  const std::vector<float> x = variant_inputs(v)[0];
  std::map<std::string, std::vector<float>> loop_grads, fused_grads;
  float loop_loss = 0, fused_loss = 0;
  ASSERT_TRUE(gradients(loop, x, &loop_grads, &loop_loss, &error)) << error;
  ASSERT_TRUE(gradients(fused.bytes, x, &fused_grads, &fused_loss, &error)) << error;
  EXPECT_NEAR(loop_loss, fused_loss, 1e-6);
  const std::vector<float>* bias = nullptr;
  for (const auto& [name, g] : loop_grads) {
    if (name.find("body/bias") != std::string::npos) bias = &g;
  }
  ASSERT_NE(bias, nullptr) << "the loop's separate bias is a trainable weight";
  std::vector<float> gates;  // the fused op's i|f|c|o biases, in the loop's order
  for (const char* gate : {"input", "forget", "cell", "output"}) {
    const auto it = fused_grads.find(std::string("lstm/") + gate + "_bias");
    ASSERT_NE(it, fused_grads.end()) << gate;
    gates.insert(gates.end(), it->second.begin(), it->second.end());
  }
  ASSERT_EQ(bias->size(), gates.size());
  double scale = 0;
  for (float g : gates) scale = std::max(scale, std::fabs(double{g}));
  EXPECT_GT(scale, 1e-6);
  for (size_t i = 0; i < gates.size(); ++i) EXPECT_NEAR((*bias)[i], gates[i], 1e-5 * scale) << i;
}

INSTANTIATE_TEST_SUITE_P(Variants, ConverterVariantTest, ::testing::ValuesIn(converter_variants()),
                         [](const ::testing::TestParamInfo<ConverterVariant>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace gruwb::test
