// RNN detector and fuser on models the builder writes in all three layouts
// (same weights): the detector recovers exactly the weights the fused layout
// holds, fuse(while) and fuse(unrolled) compute what fused/while/unrolled
// compute, the file shrinks to the fused layout's size; the non-RNN WHILE
// models of ../shared are left alone with a reason.

#include "engine/tools/fuser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "engine/tools/initializers.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "tests/engine/test_models.h"
#include "tests/tools/model_def_util.h"

namespace gruwb::tools {
namespace {

struct Sizes {
  int t, f, h;
};

struct CellCase {
  const char* name;
  const CellDescriptor* cell;
  bool reset_after;
  GruVariant variant;
  const char* tflite_op;  // fused op in .tflite
  const char* circle_op;  // fused op in .circle
};

const CellCase kCells[] = {
    {"gru_reset_after", find_cell("gru"), true, GruVariant::kModern, "GRUWB_GRU", "GRU"},
    {"gru_reset_before", find_cell("gru"), false, GruVariant::kModern, "GRUWB_GRU", "GRUWB_GRU"},
    {"gru_legacy", find_cell("gru"), false, GruVariant::kLegacy, "GRUWB_GRU", "GRUWB_GRU"},
    {"lstm", find_cell("lstm"), true, GruVariant::kModern, "UNIDIRECTIONAL_SEQUENCE_LSTM",
     "UNIDIRECTIONAL_SEQUENCE_LSTM"},
    {"rnn", find_cell("rnn"), true, GruVariant::kModern, "UNIDIRECTIONAL_SEQUENCE_RNN",
     "UNIDIRECTIONAL_SEQUENCE_RNN"},
};

const Sizes kSizes[] = {{1, 1, 1}, {5, 3, 4}, {12, 2, 9}};

BuildSpec spec_for(const CellCase& c, Sizes s, RnnLayout layout, ModelFormat format) {
  BuildSpec spec;
  spec.cell = c.cell;
  spec.reset_after = c.reset_after;
  spec.gru_variant = c.variant;
  spec.layout = layout;
  spec.timesteps = s.t;
  spec.features = s.f;
  spec.units = s.h;
  spec.classes = 3;
  spec.bias_init = BiasInit::kUniform;  // zero biases would hide bias mix-ups
  spec.seed = 7;
  spec.format = format;
  return spec;
}

std::vector<uint8_t> build(const BuildSpec& spec) {
  ModelDef def;
  std::string error;
  EXPECT_TRUE(build_model(spec, &def, &error)) << error;
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(write_model(def, spec.format, &bytes, &error)) << error;
  return bytes;
}

// Output 0 of the model for input x [1,T,F].
std::vector<float> run(const std::vector<uint8_t>& bytes, const std::vector<float>& x,
                       const Sizes& s) {
  Model model;
  EXPECT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  ModelRunner runner;
  std::string error;
  EXPECT_TRUE(runner.prepare(model, &error)) << error;
  NpyArray in;
  in.dtype = "<f4";
  in.shape = {1, s.t, s.f};
  in.data.resize(x.size() * 4);
  std::memcpy(in.data.data(), x.data(), in.data.size());
  EXPECT_TRUE(runner.set_input(0, in, &error)) << error;
  EXPECT_TRUE(runner.invoke(&error)) << error;
  NpyArray out = runner.output(0);
  std::vector<float> v(out.data.size() / 4);
  std::memcpy(v.data(), out.data.data(), out.data.size());
  return v;
}

void expect_near(const std::vector<float>& a, const std::vector<float>& b, double tol,
                 const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << what << " [" << i << "]";
}

const fb::OperatorT* recurrent_op(const ModelDef& def, std::string* name) {
  for (const auto& op : def.subgraphs[0]->operators) {
    const fb::OperatorCodeT& code = *def.operator_codes[op->opcode_index];
    std::string n = code.builtin_code == BuiltinOperator::CUSTOM
                        ? code.custom_code
                        : op_code_name(static_cast<int32_t>(code.builtin_code));
    if (n == "GRUWB_GRU" || n == "GRU" || n == "UNIDIRECTIONAL_SEQUENCE_LSTM" ||
        n == "UNIDIRECTIONAL_SEQUENCE_RNN") {
      *name = n;
      return op.get();
    }
  }
  return nullptr;
}

// The constant inputs of the recurrent op, in input order, as raw bytes.
std::vector<std::vector<uint8_t>> recurrent_constants(const std::vector<uint8_t>& bytes) {
  ModelDef def = unpack(bytes);
  std::string name;
  const fb::OperatorT* op = recurrent_op(def, &name);
  std::vector<std::vector<uint8_t>> out;
  if (!op) return out;
  for (int32_t t : op->inputs) {
    if (t < 0) {
      out.push_back({});
      continue;
    }
    const fb::TensorT& tensor = *def.subgraphs[0]->tensors[static_cast<size_t>(t)];
    out.push_back(def.buffers[tensor.buffer]->data);
  }
  return out;
}

void check_cell(const CellCase& c, Sizes s, ModelFormat format) {
  const std::string label = std::string(c.name) + " T=" + std::to_string(s.t) +
                            " F=" + std::to_string(s.f) + " H=" + std::to_string(s.h) +
                            (format == ModelFormat::kCircle ? " circle" : " tflite");
  SCOPED_TRACE(label);
  const RnnWeights weights = initial_weights(spec_for(c, s, RnnLayout::kFused, format));
  auto spec = [&](RnnLayout layout) {
    BuildSpec b = spec_for(c, s, layout, format);
    b.weights = &weights;
    return b;
  };
  const std::vector<uint8_t> fused = build(spec(RnnLayout::kFused));
  const std::vector<uint8_t> loop = build(spec(RnnLayout::kWhile));
  const std::vector<uint8_t> unrolled = build(spec(RnnLayout::kUnrolled));
  Rng rng(11);
  const std::vector<float> x = uniform(rng, s.t * s.f, 2.f);
  const std::vector<float> expected = run(fused, x, s);
  expect_near(run(loop, x, s), expected, 1e-5, "while vs fused");
  expect_near(run(unrolled, x, s), expected, 1e-5, "unrolled vs fused");

  for (const auto* source : {&loop, &unrolled}) {
    const bool is_loop = source == &loop;
    SCOPED_TRACE(is_loop ? "fuse(while)" : "fuse(unrolled)");
    // The detector recovers the builder's weights exactly.
    DetectionReport found = detect_rnn_cells(unpack(*source));
    ASSERT_EQ(found.cells.size(), 1u);
    EXPECT_TRUE(found.other_loops.empty());
    const DetectedCell& cell = found.cells[0];
    EXPECT_EQ(cell.form, is_loop ? CellForm::kWhile : CellForm::kUnrolled);
    EXPECT_EQ(cell.units, s.h);
    EXPECT_EQ(cell.features, s.f);
    EXPECT_EQ(cell.timesteps, s.t);
    EXPECT_EQ(cell.weights.kernel, weights.kernel);
    EXPECT_EQ(cell.weights.recurrent_kernel, weights.recurrent_kernel);
    EXPECT_EQ(cell.weights.bias, weights.bias);
    EXPECT_EQ(cell.weights.recurrent_bias, weights.recurrent_bias);
    if (c.cell == find_cell("gru")) {
      EXPECT_EQ(cell.type, find_cell("gru"));
      EXPECT_EQ(cell.reset_after, c.reset_after);
      EXPECT_EQ(cell.gate_activation,
                c.variant == GruVariant::kLegacy ? "hard_sigmoid" : "sigmoid");
    } else {
      EXPECT_EQ(cell.type, c.cell);
    }

    FuseOptions options;
    options.format = format;
    FuseResult result;
    std::string error;
    ASSERT_TRUE(fuse_model(*source, options, &result, &error)) << error;
    ASSERT_EQ(result.fused_count(), 1) << result.cells[0].reason;
    EXPECT_EQ(result.cells[0].fused_op, format == ModelFormat::kCircle ? c.circle_op : c.tflite_op);
    expect_near(run(result.bytes, x, s), expected, 1e-5, "fused model");
    // Same graph as the builder's fused layout: one subgraph, same ops, same
    // weight tensors byte for byte.
    ModelSizeFigures built;
    ASSERT_TRUE(measure_model(fused, &built, &error)) << error;
    EXPECT_EQ(result.after.subgraphs, 1u);
    EXPECT_EQ(result.after.ops, built.ops);
    EXPECT_EQ(result.after.tensors, built.tensors);
    EXPECT_EQ(result.after.data_bytes, built.data_bytes);
    EXPECT_LE(result.after.bytes, built.bytes + 256);
    EXPECT_EQ(result.after.arena_bytes, built.arena_bytes);
    EXPECT_EQ(recurrent_constants(result.bytes), recurrent_constants(fused));
  }
}

TEST(FuserTest, FusesEveryCellInEveryLayoutAndRecoversTheWeights) {
  for (const CellCase& c : kCells) {
    for (Sizes s : kSizes) check_cell(c, s, ModelFormat::kTflite);
  }
}

TEST(FuserTest, CircleOutputUsesTheCircleGruWhenSemanticsMatch) {
  for (const CellCase& c : kCells) check_cell(c, {7, 3, 5}, ModelFormat::kCircle);
}

TEST(FuserTest, ReferenceGruShrinksToTheSizeGoal) {
  // The reference gesture model: T=60, F=3, H=60, 4 classes (default Keras init).
  BuildSpec spec;
  spec.layout = RnnLayout::kWhile;
  const std::vector<uint8_t> loop = build(spec);
  FuseResult result;
  std::string error;
  ASSERT_TRUE(fuse_model(loop, FuseOptions(), &result, &error)) << error;
  ASSERT_EQ(result.fused_count(), 1);
  const uint64_t weight_bytes = trainable_parameters(spec) * 4;
  EXPECT_LE(result.after.bytes, weight_bytes + weight_bytes / 20 + 2048);
  EXPECT_LT(result.after.bytes, result.before.bytes);
  EXPECT_EQ(result.before.subgraphs, 3u);
  EXPECT_EQ(result.after.subgraphs, 1u);
  EXPECT_EQ(result.after.ops, 3u);  // GRUWB_GRU, FULLY_CONNECTED, SOFTMAX
  EXPECT_LT(result.after.arena_bytes, result.before.arena_bytes);
}

TEST(FuserTest, TheShippedWhileGruSampleFuses) {
  LoadedModel sample;
  std::string error;
  ASSERT_TRUE(
      load_model_file(std::string(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_while.tflite",
                      &sample, &error))
      << error;
  FuseResult result;
  ASSERT_TRUE(fuse_model(sample.bytes, FuseOptions(), &result, &error)) << error;
  ASSERT_EQ(result.fused_count(), 1) << result.cells[0].reason;
  EXPECT_EQ(result.cells[0].fused_op, "GRUWB_GRU");
  EXPECT_EQ(result.cells[0].cell.units, 60);
  EXPECT_EQ(result.after.subgraphs, 1u);
  // The fused result keeps the signature and its input/output names.
  ModelDef def = unpack(result.bytes);
  ASSERT_EQ(def.signature_defs.size(), 1u);
  const auto& sig = *def.signature_defs[0];
  EXPECT_EQ(sig.subgraph_index, 0u);
  EXPECT_EQ(static_cast<int>(sig.inputs[0]->tensor_index), def.subgraphs[0]->inputs[0]);
  EXPECT_EQ(static_cast<int>(sig.outputs[0]->tensor_index), def.subgraphs[0]->outputs[0]);
}

TEST(FuserTest, NonRnnWhileModelsAreLeftAloneWithAReason) {
  for (const char* file : {"litert_multi_subgraphs_while.tflite", "litert_nested_while.tflite",
                           "one_vscode_while_000.circle"}) {
    SCOPED_TRACE(file);
    LoadedModel model;
    std::string error;
    ASSERT_TRUE(load_model_file(test::model_path(file), &model, &error)) << error;
    FuseOptions options;
    options.format = format_for_path(file);
    FuseResult result;
    ASSERT_TRUE(fuse_model(model.bytes, options, &result, &error)) << error;
    EXPECT_TRUE(result.cells.empty());
    ASSERT_FALSE(result.other_loops.empty());
    for (const OtherLoop& loop : result.other_loops) {
      EXPECT_NE(loop.reason.find("not an RNN"), std::string::npos) << loop.reason;
    }
    EXPECT_EQ(result.bytes, model.bytes);  // not rewritten
    EXPECT_EQ(result.after.ops, result.before.ops);
  }
}

TEST(FuserTest, ModelsWithoutRecurrenceHaveNoCells) {
  for (const char* file : {"tflm_hello_world_float.tflite", "tflm_mnist_fused_lstm_float.tflite"}) {
    LoadedModel model;
    std::string error;
    ASSERT_TRUE(load_model_file(test::model_path(file), &model, &error)) << error;
    DetectionReport found = detect_rnn_cells(unpack(model.bytes));
    EXPECT_TRUE(found.cells.empty()) << file;
    EXPECT_TRUE(found.other_loops.empty()) << file;
  }
}

TEST(FuserTest, KeepsTheOriginalWhenTheLoopCounterIsUsedAfterTheLoop) {
  const CellCase& gru = kCells[0];
  ModelDef def = unpack(build(spec_for(gru, {4, 2, 3}, RnnLayout::kWhile, ModelFormat::kTflite)));
  // Expose the WHILE's time counter as a second model output.
  fb::SubGraphT& main = *def.subgraphs[0];
  for (const auto& op : main.operators) {
    if (def.operator_codes[op->opcode_index]->builtin_code == BuiltinOperator::WHILE) {
      main.outputs.push_back(op->outputs[1]);
    }
  }
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(write_model(def, ModelFormat::kTflite, &bytes, &error)) << error;
  FuseResult result;
  ASSERT_TRUE(fuse_model(bytes, FuseOptions(), &result, &error)) << error;
  ASSERT_EQ(result.cells.size(), 1u);
  EXPECT_FALSE(result.cells[0].fused);
  EXPECT_NE(result.cells[0].reason.find("counter) is used after the loop"), std::string::npos)
      << result.cells[0].reason;
  EXPECT_EQ(result.bytes, bytes);
}

// A loop body whose ops lost inputs (a damaged or hostile file): the detector finds no cell
// in it and reads no input that is not there (under ASan + UBSan an empty input list read at
// [0] aborts). Each code in the body loses all its inputs, one code at a time.
TEST(FuserTest, BodyOpsWithoutTheirInputsAreNoCell) {
  const ModelDef whole =
      unpack(build(spec_for(kCells[0], {4, 2, 3}, RnnLayout::kWhile, ModelFormat::kTflite)));
  ASSERT_EQ(detect_rnn_cells(whole).cells.size(), 1u);
  const int body = detect_rnn_cells(whole).cells[0].body_subgraph;
  ASSERT_GE(body, 0);
  std::set<BuiltinOperator> codes;
  for (const auto& op : whole.subgraphs[static_cast<size_t>(body)]->operators) {
    codes.insert(whole.operator_codes[op->opcode_index]->builtin_code);
  }
  ASSERT_TRUE(codes.count(BuiltinOperator::GATHER));
  for (BuiltinOperator code : codes) {
    SCOPED_TRACE(static_cast<int>(code));
    ModelDef def = unpack(bytes_of(whole));
    for (auto& op : def.subgraphs[static_cast<size_t>(body)]->operators) {
      if (def.operator_codes[op->opcode_index]->builtin_code == code) op->inputs.clear();
    }
    const DetectionReport found = detect_rnn_cells(def);
    // The body's RESHAPE only feeds the loop's output accumulator: the cell itself stays whole.
    if (code != BuiltinOperator::RESHAPE) {
      EXPECT_TRUE(found.cells.empty());
    }
  }
}

// A streaming model passes h_0 in as a model input: GRUWB_GRU takes it as its initial state
// (input 4), the fused LSTM/RNN ops cannot, and the fuser says so.
TEST(FuserTest, StreamingStateInputBecomesTheFusedGrusInitialState) {
  for (size_t k : {size_t{0}, size_t{3}}) {  // a GRU, then an LSTM
    const CellCase& c = kCells[k];
    SCOPED_TRACE(c.name);
    ModelDef def = unpack(build(spec_for(c, {4, 2, 3}, RnnLayout::kWhile, ModelFormat::kTflite)));
    const DetectionReport found = detect_rnn_cells(def);
    ASSERT_EQ(found.cells.size(), 1u);
    fb::SubGraphT& main = *def.subgraphs[0];
    const int h0 = found.cells[0].initial_hidden;
    ASSERT_GE(h0, 0);
    main.tensors[static_cast<size_t>(h0)]->buffer = 0;  // the zeros constant becomes an input
    main.inputs.push_back(h0);
    std::vector<uint8_t> bytes;
    std::string error;
    ASSERT_TRUE(write_model(def, ModelFormat::kTflite, &bytes, &error)) << error;
    FuseResult result;
    ASSERT_TRUE(fuse_model(bytes, FuseOptions(), &result, &error)) << error;
    ASSERT_EQ(result.cells.size(), 1u);
    if (c.cell != find_cell("gru")) {
      EXPECT_FALSE(result.cells[0].fused);
      EXPECT_NE(result.cells[0].reason.find("takes no initial state"), std::string::npos)
          << result.cells[0].reason;
      continue;
    }
    // Kept only because both models agree on random inputs, the random h_0 included.
    ASSERT_TRUE(result.cells[0].fused) << result.cells[0].reason;
    EXPECT_EQ(result.cells[0].fused_op, "GRUWB_GRU");
    const ModelDef fused = unpack(result.bytes);
    bool state_wired = false;
    for (const auto& op : fused.subgraphs[0]->operators) {
      if (op->inputs.size() == 5 && op->inputs[4] >= 0)
        state_wired =
            std::find(fused.subgraphs[0]->inputs.begin(), fused.subgraphs[0]->inputs.end(),
                      op->inputs[4]) != fused.subgraphs[0]->inputs.end();
    }
    EXPECT_TRUE(state_wired) << "the model's state input feeds the fused GRU";
  }
}

TEST(FuserTest, RejectsARewriteThatFailsTheNumericCheck) {
  const std::vector<uint8_t> loop =
      build(spec_for(kCells[3], {4, 2, 3}, RnnLayout::kWhile, ModelFormat::kTflite));
  FuseOptions options;
  options.tolerance = -1;  // no difference is small enough: every rewrite must be refused
  FuseResult result;
  std::string error;
  ASSERT_TRUE(fuse_model(loop, options, &result, &error)) << error;
  ASSERT_EQ(result.cells.size(), 1u);
  EXPECT_FALSE(result.cells[0].fused);
  EXPECT_NE(result.cells[0].reason.find("outputs differ"), std::string::npos)
      << result.cells[0].reason;
  EXPECT_EQ(result.bytes, loop);
}

TEST(FuserTest, UnrolledToFusedRatioGrowsWithT) {
  double previous = 0;
  for (int t : {4, 16, 48}) {
    BuildSpec spec = spec_for(kCells[0], {t, 3, 16}, RnnLayout::kUnrolled, ModelFormat::kTflite);
    const std::vector<uint8_t> unrolled = build(spec);
    FuseResult result;
    std::string error;
    ASSERT_TRUE(fuse_model(unrolled, FuseOptions(), &result, &error)) << error;
    ASSERT_EQ(result.fused_count(), 1);
    const double ratio =
        static_cast<double>(result.before.bytes) / static_cast<double>(result.after.bytes);
    EXPECT_GT(ratio, previous) << "T=" << t;
    previous = ratio;
  }
}

}  // namespace
}  // namespace gruwb::tools
