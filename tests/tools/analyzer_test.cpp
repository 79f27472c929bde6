// Analyzer figures against the golden data in ../shared: the "Size breakdown"
// table and per-file details of data/models/tflite/README.md (TensorFlow's
// tf.lite.experimental.Analyzer definitions) and the onert-micro README.

#include "engine/tools/analyzer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/runtime/op_resolver.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_writer.h"
#include "tests/engine/test_models.h"

namespace gruwb::tools {
namespace {

// One row of the README's "Size breakdown" table plus the subgraph/op/tensor
// counts of its "Per-file details" section.
struct SizeRow {
  const char* file;
  uint64_t size;
  uint64_t non_data;
  const char* non_data_percent;  // as printed in the table
  uint64_t data;
  const char* data_percent;
  std::vector<uint64_t> per_subgraph;
  uint64_t zero_buffers;
  std::vector<size_t> ops;      // per subgraph
  std::vector<size_t> tensors;  // per subgraph
};

const std::vector<SizeRow>& size_table() {
  static const std::vector<SizeRow> kRows = {
      {"litert_call_once_mul.tflite", 1380, 1360, "98.55", 20, "1.45", {0, 4}, 0, {5, 2}, {4, 2}},
      {"litert_multi_subgraphs_while.tflite",
       2120,
       2088,
       "98.49",
       32,
       "1.51",
       {4, 4, 8},
       4,
       {1, 1, 3},
       {5, 5, 8}},
      {"litert_nested_while.tflite",
       1740,
       1724,
       "99.08",
       16,
       "0.92",
       {0, 0, 0, 0, 0},
       0,
       {1, 2, 1, 2, 1},
       {2, 3, 2, 3, 2}},
      {"litert_unidirectional_sequence_lstm_24inputs.tflite",
       2752,
       2536,
       "92.15",
       216,
       "7.85",
       {216},
       0,
       {1},
       {30}},
      {"tflm_hello_world_float.tflite", 3164, 1780, "56.26", 1384, "43.74", {1284}, 0, {3}, {10}},
      {"tflm_keyword_scrambled_svdf_int8.tflite",
       34576,
       6728,
       "19.46",
       27848,
       "80.54",
       {27848},
       0,
       {15},
       {54}},
      {"tflm_micro_speech_quantized_legacy_opcodes.tflite",
       18800,
       2091,
       "11.12",
       16709,
       "88.88",
       {16704},
       0,
       {4},
       {10}},
      {"tflm_mnist_fused_lstm_float.tflite",
       41240,
       2852,
       "6.92",
       38388,
       "93.08",
       {38128},
       160,
       {4},
       {22}},
      {"tflm_mnist_fused_lstm_int8.tflite",
       13952,
       3980,
       "28.53",
       9972,
       "71.47",
       {9808},
       20,
       {4},
       {27}},
      {"one_onert_micro_unidir_lstm_float.circle",
       1580,
       1372,
       "86.84",
       208,
       "13.16",
       {208},
       8,
       {1},
       {14}},
      {"one_vscode_while_000.circle",
       1512,
       1480,
       "97.88",
       32,
       "2.12",
       {0, 4, 28},
       0,
       {1, 1, 2},
       {4, 4, 6}},
  };
  return kRows;
}

AnalyzerReport analyze(const std::string& file) {
  const std::string path = test::model_path(file);
  EXPECT_FALSE(path.empty()) << file << " is not in tests/engine/test_models.h";
  LoadedModel loaded;
  std::string error;
  EXPECT_TRUE(load_model_file(path, &loaded, &error)) << error;
  return analyze_model(loaded.model, path);
}

AnalyzerReport analyze_sample(const std::string& file) {
  const std::string path = std::string(GRUWB_SOURCE_DIR) + "/resources/samples/" + file;
  LoadedModel loaded;
  std::string error;
  EXPECT_TRUE(load_model_file(path, &loaded, &error)) << error;
  return analyze_model(loaded.model, path);
}

std::vector<std::string> op_names(const SubgraphReport& sg) {
  std::vector<std::string> names;
  for (const OpReport& op : sg.ops) names.push_back(op.name);
  return names;
}

const OptionValue* option(const OpReport& op, const std::string& key) {
  for (const OptionValue& v : op.option_values) {
    if (v.key == key) return &v;
  }
  return nullptr;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class SizeBreakdownTest : public ::testing::TestWithParam<SizeRow> {};

TEST_P(SizeBreakdownTest, FiguresEqualTheReadmeTable) {
  const SizeRow& row = GetParam();
  const AnalyzerReport r = analyze(row.file);
  EXPECT_EQ(r.model_bytes, row.size);
  EXPECT_EQ(r.non_data_bytes, row.non_data);
  EXPECT_EQ(r.data_bytes, row.data);
  EXPECT_EQ(r.zero_value_buffers, row.zero_buffers);
  ASSERT_EQ(r.subgraphs.size(), row.per_subgraph.size());
  for (size_t i = 0; i < r.subgraphs.size(); ++i) {
    SCOPED_TRACE("subgraph " + std::to_string(i));
    EXPECT_EQ(r.subgraphs[i].index, static_cast<int>(i));
    EXPECT_EQ(r.subgraphs[i].data_bytes, row.per_subgraph[i]);
    EXPECT_EQ(r.subgraphs[i].ops.size(), row.ops[i]);
    EXPECT_EQ(r.subgraphs[i].tensors.size(), row.tensors[i]);
  }
}

TEST_P(SizeBreakdownTest, TextPrintsTheTableFigures) {
  const SizeRow& row = GetParam();
  const std::string text = report_to_text(analyze(row.file));
  EXPECT_TRUE(contains(text, "Model size: " + std::to_string(row.size) + " bytes\n")) << text;
  EXPECT_TRUE(contains(text, "Non-data buffer size: " + std::to_string(row.non_data) + " bytes (" +
                                 row.non_data_percent + "%)"))
      << text;
  EXPECT_TRUE(contains(text, "Total data buffer size: " + std::to_string(row.data) + " bytes (" +
                                 row.data_percent + "%)"))
      << text;
  EXPECT_TRUE(
      contains(text, "(Zero value buffers): " + std::to_string(row.zero_buffers) + " bytes"))
      << text;
  // The Analyzer lists per-subgraph data only when there are several subgraphs.
  const bool several = row.per_subgraph.size() > 1;
  EXPECT_EQ(contains(text, "- Subgraph#0: "), several) << text;
  if (several) {
    for (size_t i = 0; i < row.per_subgraph.size(); ++i) {
      EXPECT_TRUE(contains(text, "- Subgraph#" + std::to_string(i) + ": " +
                                     std::to_string(row.per_subgraph[i]) + " bytes ("))
          << text;
    }
  }
}

TEST_P(SizeBreakdownTest, JsonCarriesTheTableFigures) {
  const SizeRow& row = GetParam();
  const std::string json = report_to_json(analyze(row.file));
  EXPECT_TRUE(contains(json, "\"model_bytes\": " + std::to_string(row.size) + ",")) << json;
  EXPECT_TRUE(contains(json, "\"non_data_bytes\": " + std::to_string(row.non_data) + ","));
  EXPECT_TRUE(contains(json, "\"data_bytes\": " + std::to_string(row.data) + ","));
  EXPECT_TRUE(contains(json, "\"zero_value_buffers\": " + std::to_string(row.zero_buffers) + ","));
}

INSTANTIATE_TEST_SUITE_P(ReadmeTable, SizeBreakdownTest, ::testing::ValuesIn(size_table()),
                         [](const ::testing::TestParamInfo<SizeRow>& info) {
                           return test::test_name_for(test::TestModel{"tflite", info.param.file});
                         });

TEST(AnalyzerTest, TableCoversEveryModelInTheTfliteFolder) {
  std::set<std::string> in_table;
  for (const SizeRow& row : size_table()) in_table.insert(row.file);
  std::set<std::string> in_folder;
  for (const test::TestModel& model : test::all_test_models()) {
    if (std::string(model.folder) == "tflite") in_folder.insert(model.file);
  }
  EXPECT_EQ(in_table, in_folder);
  EXPECT_EQ(in_table.size(), 11u);
}

// README details: op lists, in order.
TEST(AnalyzerTest, OpNamesFollowTheReadmeDetails) {
  EXPECT_EQ(
      op_names(analyze("tflm_micro_speech_quantized_legacy_opcodes.tflite").subgraphs[0]),
      (std::vector<std::string>{"RESHAPE", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SOFTMAX"}));
  EXPECT_EQ(op_names(analyze("tflm_mnist_fused_lstm_float.tflite").subgraphs[0]),
            (std::vector<std::string>{"UNIDIRECTIONAL_SEQUENCE_LSTM", "RESHAPE", "FULLY_CONNECTED",
                                      "SOFTMAX"}));
  const AnalyzerReport call_once = analyze("litert_call_once_mul.tflite");
  EXPECT_EQ(op_names(call_once.subgraphs[0]),
            (std::vector<std::string>{"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE",
                                      "MUL"}));
  EXPECT_EQ(call_once.subgraphs[1].name, "NoOp");
  const AnalyzerReport vscode = analyze("one_vscode_while_000.circle");
  EXPECT_EQ(vscode.format, "circle");
  EXPECT_EQ(vscode.version, 0u);
  EXPECT_EQ(vscode.description, "ONE-tflite2circle");
  EXPECT_EQ(op_names(vscode.subgraphs[2]),
            (std::vector<std::string>{"ADD", "CUSTOM:BatchMatMulV2"}));
  EXPECT_EQ(vscode.subgraphs[2].ops[1].custom_code, "BatchMatMulV2");
  EXPECT_GT(vscode.subgraphs[2].ops[1].custom_options_bytes, 0u);
  // README: SVDF x7 (duplicated OperatorCode entries decode to the same op).
  const std::vector<std::string> svdf =
      op_names(analyze("tflm_keyword_scrambled_svdf_int8.tflite").subgraphs[0]);
  EXPECT_EQ(std::count(svdf.begin(), svdf.end(), "SVDF"), 7);
}

TEST(AnalyzerTest, ControlFlowOpsNameTheirSubgraphs) {
  const AnalyzerReport loop = analyze("litert_multi_subgraphs_while.tflite");
  EXPECT_EQ(loop.subgraphs[0].ops[0].called_subgraphs, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(loop.subgraphs[0].ops[0].options_type, "WhileOptions");
  EXPECT_EQ(loop.subgraphs[0].ops[0].options, "cond_subgraph_index=1, body_subgraph_index=2");
  const AnalyzerReport nested = analyze("litert_nested_while.tflite");
  EXPECT_EQ(nested.subgraphs[2].ops[0].called_subgraphs, (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(analyze("litert_call_once_mul.tflite").subgraphs[0].ops[0].called_subgraphs,
            (std::vector<int32_t>{1}));
  const std::string text = report_to_text(loop);
  EXPECT_TRUE(contains(text, ", Cond: Subgraph#1, Body: Subgraph#2) -> [")) << text;
}

TEST(AnalyzerTest, HelloWorldListingInTheAnalyzerStyle) {
  const AnalyzerReport r = analyze("tflm_hello_world_float.tflite");
  const SubgraphReport& sg = r.subgraphs[0];
  EXPECT_EQ(sg.name, "main");
  EXPECT_EQ(sg.inputs, (std::vector<int32_t>{0}));
  EXPECT_EQ(sg.outputs, (std::vector<int32_t>{9}));
  EXPECT_EQ(sg.tensors[0].name, "serving_default_dense_input:0");
  EXPECT_EQ(sg.tensors[0].shape, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(sg.tensors[0].type, "FLOAT32");
  EXPECT_FALSE(sg.tensors[0].is_constant);

  const std::string text = report_to_text(r);
  EXPECT_TRUE(contains(text, "\nSubgraph#0 main(T#0) -> [T#9]\n")) << text;
  // Constant inputs carry a data marker, as in the Analyzer.
  EXPECT_TRUE(contains(text, "\n  Op#0 FULLY_CONNECTED(T#0, T#4[...], T#3[...]) -> [T#7]\n"))
      << text;
  EXPECT_TRUE(contains(text, "\nTensors of Subgraph#0\n")) << text;
  EXPECT_TRUE(contains(text,
                       "  T#0(serving_default_dense_input:0) shape:[1, 1], "
                       "shape_signature:[-1, 1], type:FLOAT32\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "  T#5(sequential/dense_1/MatMul) shape:[16, 16], type:FLOAT32 RO 1024 "
                       "bytes, buffer:6"))
      << text;
  EXPECT_TRUE(contains(text, "fused_activation_function=RELU")) << text;
  EXPECT_EQ(r.signatures, (std::vector<std::string>{"serving_default"}));
  EXPECT_EQ(r.description, "MLIR Converted.");
  EXPECT_EQ(r.format, "tflite");
  EXPECT_EQ(r.version, 3u);
  EXPECT_EQ(r.buffer_count, 13u);  // README: "13 buffers"
}

TEST(AnalyzerTest, OmittedInputsAreMinusOne) {
  const AnalyzerReport r = analyze("tflm_mnist_fused_lstm_float.tflite");
  const OpReport& lstm = r.subgraphs[0].ops[0];
  ASSERT_EQ(lstm.inputs.size(), 24u);
  EXPECT_EQ(std::count(lstm.inputs.begin(), lstm.inputs.end(), -1), 9);
  EXPECT_TRUE(contains(report_to_text(r), ", T#-1, ")) << report_to_text(r);
  // README: the states (inputs 18 and 19) are variables with empty buffers.
  for (size_t slot : {18u, 19u}) {
    const TensorReport& state = r.subgraphs[0].tensors[static_cast<size_t>(lstm.inputs[slot])];
    EXPECT_TRUE(state.is_variable) << state.name;
    EXPECT_EQ(state.data_bytes, 0u) << state.name;
    EXPECT_FALSE(state.is_constant) << state.name;
  }
}

TEST(AnalyzerTest, DecodesBuiltinOptionsWithDefaults) {
  const OpReport lstm = analyze("tflm_mnist_fused_lstm_float.tflite").subgraphs[0].ops[0];
  EXPECT_EQ(lstm.options_type, "UnidirectionalSequenceLSTMOptions");
  ASSERT_NE(option(lstm, "fused_activation_function"), nullptr);
  EXPECT_EQ(option(lstm, "fused_activation_function")->value, "TANH");
  EXPECT_EQ(option(lstm, "fused_activation_function")->kind, OptionValue::Kind::kEnum);
  ASSERT_NE(option(lstm, "cell_clip"), nullptr);
  EXPECT_EQ(option(lstm, "cell_clip")->value, "10");
  EXPECT_EQ(option(lstm, "cell_clip")->kind, OptionValue::Kind::kNumber);
  ASSERT_NE(option(lstm, "time_major"), nullptr);
  EXPECT_EQ(option(lstm, "time_major")->value, "false");
  EXPECT_EQ(option(lstm, "time_major")->kind, OptionValue::Kind::kBool);

  // Circle GRU options (README: GRUOptions{NONE, return_sequences=false, time_major=false}).
  const AnalyzerReport gru = analyze("gru_float.circle");
  const OpReport& gru_op = gru.subgraphs[0].ops[0];
  EXPECT_EQ(gru_op.op_code, -5);
  EXPECT_EQ(gru_op.name, "GRU");
  EXPECT_EQ(gru_op.options,
            "fused_activation_function=NONE, return_sequences=false, time_major=false");
  // Absent optional inputs (biases) are -1.
  EXPECT_EQ(gru_op.inputs[2], -1);
  EXPECT_EQ(gru_op.inputs[4], -1);
}

TEST(AnalyzerTest, DecodesVectorOptionsAndNonZeroDefaults) {
  const AnalyzerReport r = analyze("tflm_micro_speech_quantized_legacy_opcodes.tflite");
  const OpReport& reshape = r.subgraphs[0].ops[0];
  EXPECT_EQ(reshape.options, "new_shape=[-1, 49, 40, 1]");
  ASSERT_NE(option(reshape, "new_shape"), nullptr);
  EXPECT_EQ(option(reshape, "new_shape")->kind, OptionValue::Kind::kOther);
  // Schema default 1 (not 0) must show even when the file leaves the field out.
  const OpReport& depthwise = r.subgraphs[0].ops[1];
  ASSERT_NE(option(depthwise, "dilation_w_factor"), nullptr);
  EXPECT_EQ(option(depthwise, "dilation_w_factor")->value, "1");
  EXPECT_EQ(option(depthwise, "depth_multiplier")->value, "8");
  EXPECT_EQ(option(depthwise, "padding")->value, "SAME");
}

TEST(AnalyzerTest, QuantizationIsDescribed) {
  const AnalyzerReport r = analyze("tflm_mnist_fused_lstm_int8.tflite");
  const TensorReport& input = r.subgraphs[0].tensors[r.subgraphs[0].inputs[0]];
  EXPECT_EQ(input.type, "INT8");
  ASSERT_EQ(input.scales.size(), 1u);
  ASSERT_EQ(input.zero_points.size(), 1u);
  EXPECT_EQ(input.quantization.rfind("scale=", 0), 0u) << input.quantization;
  EXPECT_TRUE(contains(input.quantization, " zero_point=")) << input.quantization;
}

// MACs as documented in analyzer.cpp and docs/inspect-json.md.
TEST(AnalyzerTest, MacsOfHelloWorld) {
  // 3 FULLY_CONNECTED, batch 1: 1x16x1 + 1x16x16 + 1x1x16 = 16 + 256 + 16 = 288.
  const AnalyzerReport r = analyze("tflm_hello_world_float.tflite");
  std::vector<uint64_t> macs;
  for (const OpReport& op : r.subgraphs[0].ops) macs.push_back(op.macs);
  EXPECT_EQ(macs, (std::vector<uint64_t>{16, 256, 16}));
  EXPECT_EQ(r.subgraphs[0].macs, 288u);
  EXPECT_EQ(r.macs, 288u);
  EXPECT_EQ(r.subgraphs[0].ops[1].macs_formula, "batch 1 x out 16 x in 16");
  // Parameters: weights 16x1 + 16x16 + 1x16 and biases 16 + 16 + 1.
  EXPECT_EQ(r.parameters, 16u + 256u + 16u + 16u + 16u + 1u);
}

TEST(AnalyzerTest, MacsOfFusedLstmMnist) {
  // Input [1, 28, 28] (batch 1, T 28, I 28), LSTM with H = O = 20, 4 gates, no
  // projection: T x B x 4H x (I + O) = 28 x 1 x 80 x 48 = 107520.
  // RESHAPE to [1, 560], then FULLY_CONNECTED [10, 560]: 1 x 10 x 560 = 5600.
  // RESHAPE and SOFTMAX count 0. Total 113120.
  for (const char* file :
       {"tflm_mnist_fused_lstm_float.tflite", "tflm_mnist_fused_lstm_int8.tflite"}) {
    SCOPED_TRACE(file);
    const AnalyzerReport r = analyze(file);
    const std::vector<OpReport>& ops = r.subgraphs[0].ops;
    EXPECT_EQ(ops[0].macs, 107520u);
    EXPECT_EQ(ops[1].macs, 0u);
    EXPECT_EQ(ops[2].macs, 5600u);
    EXPECT_EQ(ops[3].macs, 0u);
    EXPECT_EQ(r.macs, 113120u);
    // Parameters: 4x20x28 input weights + 4x20x20 recurrent + 4x20 biases,
    // 10x560 + 10 for the FC, and the 2-element RESHAPE shape.
    EXPECT_EQ(r.parameters, 2240u + 1600u + 80u + 5600u + 10u + 2u);
  }
}

TEST(AnalyzerTest, MacsOfProjectedLstmAndCircleGru) {
  // 24-input LSTM: input [1, 2, 2], H 2, O 2, 4 gates, projection [2, 2]:
  // 2 steps x (4 x 2 x (2 + 2) + 2 x 2) = 72.
  EXPECT_EQ(analyze("litert_unidirectional_sequence_lstm_24inputs.tflite").macs, 72u);
  // onert-micro LSTM (README: I=4, H=2, T=4): 4 x 4 x 2 x (4 + 2) = 192.
  EXPECT_EQ(analyze("one_onert_micro_unidir_lstm_float.circle").macs, 192u);
  // gru_float: x [1,1,6], W_x [15,6], W_h [15,5]: 1 x 3H 15 x (I 6 + H 5) = 165.
  EXPECT_EQ(analyze("gru_float.circle").subgraphs[0].ops[0].macs, 165u);
  // synthetic t3: GRU x [3,1,2], W_x [12,2], W_h [12,4]: 3 x 12 x (2 + 4) = 216;
  // FC [3,4] on [1,4]: 12; SOFTMAX 0.
  const AnalyzerReport t3 = analyze("synthetic_gru_fc_softmax_t3_i2_h4_c3.circle");
  EXPECT_EQ(t3.subgraphs[0].ops[0].macs, 216u);
  EXPECT_EQ(t3.subgraphs[0].ops[1].macs, 12u);
  EXPECT_EQ(t3.macs, 228u);
  // synthetic t28: 28 x 96 x (28 + 32) = 161280, FC 10 x 32 = 320.
  EXPECT_EQ(analyze("synthetic_gru_fc_softmax_t28_i28_h32_c10.circle").macs, 161280u + 320u);
}

// The reference gesture network (T 60, F 3, GRU 60, Dense 4) costs the same
// in its fused and its WHILE form: the GRU 60 x 180 x (3 + 60) = 680400 plus
// the classifier 4 x 60 = 240. The loop's body (x and h FCs, 180 x 3 + 180 x
// 60 = 11340 MACs) runs 60 times, a trip count read from its LESS cond.
TEST(AnalyzerTest, MacsOfTheReferenceGruAreTheSameFusedAndAsALoop) {
  const AnalyzerReport fused = analyze_sample("gesture_gru_fused.tflite");
  EXPECT_EQ(fused.macs, 680640u);
  const OpReport& gru = fused.subgraphs[0].ops[0];
  ASSERT_EQ(gru.name, "CUSTOM:GRUWB_GRU");
  EXPECT_EQ(gru.macs, 680400u);
  EXPECT_EQ(gru.macs_formula, "T*B 60 x 3H 180 x (I 3 + H 60)");

  const AnalyzerReport loop = analyze_sample("gesture_gru_while.tflite");
  EXPECT_EQ(loop.macs, 680640u);
  bool saw_while = false;
  for (const OpReport& op : loop.subgraphs[0].ops) {
    if (op.name != "WHILE") continue;
    saw_while = true;
    EXPECT_EQ(op.macs, 680400u);
    EXPECT_EQ(op.macs_formula, "60 iterations x body 11340");
    // The body's own figure is one iteration; the total counts it through
    // its WHILE only.
    ASSERT_EQ(op.called_subgraphs.size(), 2u);
    EXPECT_EQ(loop.subgraphs[static_cast<size_t>(op.called_subgraphs[1])].macs, 11340u);
  }
  EXPECT_TRUE(saw_while);
  EXPECT_EQ(loop.macs, loop.subgraphs[0].macs);
}

TEST(AnalyzerTest, MacsOfElementwiseAndControlFlowAreZero) {
  EXPECT_EQ(analyze("litert_multi_subgraphs_while.tflite").macs, 0u);
  EXPECT_EQ(analyze("litert_call_once_mul.tflite").macs, 0u);
}

// onert-micro README: file sizes and op lists.
struct OnertRow {
  const char* file;
  uint64_t size;
  std::vector<std::string> ops;
};

TEST(AnalyzerTest, OnertMicroModelsMatchTheirReadme) {
  const std::vector<OnertRow> rows = {
      {"gru_float.circle", 1776, {"GRU", "STRIDED_SLICE"}},
      {"fully_connected_float.circle", 772, {"FULLY_CONNECTED"}},
      {"train_boston_housing_fc.circle", 2744, {"FULLY_CONNECTED", "FULLY_CONNECTED"}},
      {"train_numbers_classification_cnn.circle",
       1972,
       {"CONV_2D", "MAX_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"}},
      {"train_checkpoint_simple_fc.circle", 588, {"FULLY_CONNECTED"}},
      {"synthetic_gru_fc_softmax_t28_i28_h32_c10.circle",
       25552,
       {"GRU", "FULLY_CONNECTED", "SOFTMAX"}},
      {"synthetic_gru_fc_fc_softmax_t28_i28_h32_c10.circle",
       30016,
       {"GRU", "FULLY_CONNECTED", "FULLY_CONNECTED", "SOFTMAX"}},
      {"synthetic_gru_fc_softmax_t3_i2_h4_c3.circle", 1424, {"GRU", "FULLY_CONNECTED", "SOFTMAX"}},
  };
  for (const OnertRow& row : rows) {
    SCOPED_TRACE(row.file);
    const AnalyzerReport r = analyze(row.file);
    EXPECT_EQ(r.format, "circle");
    EXPECT_EQ(r.model_bytes, row.size);
    EXPECT_EQ(r.non_data_bytes + r.data_bytes, r.model_bytes);
    ASSERT_EQ(r.subgraphs.size(), 1u);
    EXPECT_EQ(op_names(r.subgraphs[0]), row.ops);
  }
  // fully_connected_float: FC [1,16] x [4,16]: 64 MACs; 4x16 + 4 parameters.
  const AnalyzerReport fc = analyze("fully_connected_float.circle");
  EXPECT_EQ(fc.macs, 64u);
  EXPECT_EQ(fc.parameters, 68u);
}

TEST(AnalyzerTest, UnsupportedOpsFollowTheEngine) {
  for (const test::TestModel& model : test::all_test_models()) {
    SCOPED_TRACE(model.file);
    const AnalyzerReport r = analyze(model.file);
    std::set<std::string> expected;
    for (const SubgraphReport& sg : r.subgraphs) {
      for (const OpReport& op : sg.ops) {
        EXPECT_EQ(op.engine_supported,
                  default_op_resolver().supports(op.op_code, op.custom_code.c_str()))
            << op.name;
        if (!op.engine_supported) expected.insert(op.name);
      }
    }
    EXPECT_EQ(std::set<std::string>(r.unsupported_ops.begin(), r.unsupported_ops.end()), expected);
    EXPECT_EQ(r.unsupported_ops.size(), expected.size()) << "names must be unique";
  }
  // A custom op without a kernel is not runnable...
  const AnalyzerReport vscode = analyze("one_vscode_while_000.circle");
  EXPECT_NE(std::find(vscode.unsupported_ops.begin(), vscode.unsupported_ops.end(),
                      "CUSTOM:BatchMatMulV2"),
            vscode.unsupported_ops.end());
}

// ...but one with a kernel is, found by its code like any builtin: the bundled
// fused sample is what `gruwb run` runs, so inspect must not call it unrunnable.
TEST(AnalyzerTest, CustomOpWithAKernelIsRunnable) {
  const AnalyzerReport r = analyze_sample("gesture_gru_fused.tflite");
  EXPECT_TRUE(r.unsupported_ops.empty());
  bool saw_custom = false;
  for (const OpReport& op : r.subgraphs[0].ops) {
    EXPECT_TRUE(op.engine_supported) << op.name;
    saw_custom |= op.name == "CUSTOM:GRUWB_GRU";
  }
  EXPECT_TRUE(saw_custom);
  EXPECT_TRUE(r.engine_runs) << r.engine_error;
  EXPECT_NE(report_to_text(r).find("Engine runs: yes (prepare succeeds; kernels for all 3 ops)"),
            std::string::npos);
}

// A custom op's FlexBuffer map is decoded like builtin options (issue 20 point 10: the GUI's op
// inspector and `gruwb inspect --json` show GRUWB_GRU's attributes).
TEST(AnalyzerTest, DecodesTheFusedGrusFlexBufferOptions) {
  const AnalyzerReport r = analyze_sample("gesture_gru_fused.tflite");
  const OpReport* gru = nullptr;
  for (const OpReport& op : r.subgraphs[0].ops) gru = op.name == "CUSTOM:GRUWB_GRU" ? &op : gru;
  ASSERT_NE(gru, nullptr);
  EXPECT_EQ(gru->options_type, "FlexBuffer map");
  std::map<std::string, std::string> values;
  for (const OptionValue& v : gru->option_values) values[v.key] = v.value;
  EXPECT_EQ(values["reset_after"], "true");
  EXPECT_EQ(values["activation"], "tanh");
  EXPECT_EQ(values["recurrent_activation"], "sigmoid");
  EXPECT_EQ(values["return_sequences"], "false");
  EXPECT_NE(gru->options.find("activation=tanh"), std::string::npos);
}

// "Runs" is what prepare says, not whether each op has a kernel: an int8 LSTM whose file lacks
// the intermediates (the hidden state's quantization) has kernels for all its ops but cannot
// run, and inspect says why.
TEST(AnalyzerTest, RunsMeansPrepareSucceeds) {
  const std::string path =
      test::shared_dir() + "/data/models/real/tensorflow_tflite_micro_micro_speech_lstm.tflite";
  LoadedModel loaded;
  std::string error;
  ASSERT_TRUE(load_model_file(path, &loaded, &error)) << error;
  EXPECT_TRUE(analyze_model(loaded.model, path).engine_runs);
  ModelDef def;
  ASSERT_TRUE(unpack_model(loaded.model, &def, &error)) << error;
  def.subgraphs[0]->operators[0]->intermediates.clear();
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(write_model(def, ModelFormat::kTflite, &bytes, &error)) << error;
  LoadedModel broken;
  ASSERT_TRUE(load_model_bytes(bytes, "no_intermediates", &broken, &error)) << error;
  const AnalyzerReport r = analyze_model(broken.model, "no_intermediates");
  EXPECT_TRUE(r.unsupported_ops.empty());
  EXPECT_FALSE(r.engine_runs);
  EXPECT_NE(r.engine_error.find("5 intermediate tensors"), std::string::npos) << r.engine_error;
  const std::string text = report_to_text(r);
  EXPECT_NE(text.find("Engine cannot run: "), std::string::npos) << text;
  EXPECT_EQ(text.find("Engine runs: yes"), std::string::npos) << text;
}

TEST(AnalyzerTest, EveryModelGivesBalancedJson) {
  for (const test::TestModel& model : test::all_test_models()) {
    SCOPED_TRACE(model.file);
    const std::string json = report_to_json(analyze(model.file));
    // Structural sanity without a JSON library here (the CLI tests parse it with Qt).
    int depth = 0;
    bool in_string = false, escaped = false;
    for (char c : json) {
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        } else {
          ASSERT_GE(static_cast<unsigned char>(c), 0x20) << "raw control character in a string";
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        ASSERT_GT(depth, 0);
        --depth;
      }
    }
    EXPECT_EQ(depth, 0);
    EXPECT_FALSE(in_string);
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(json.back(), '\n');
  }
}

// ---------------------------------------------------------------------------
// JsonWriter

TEST(JsonWriterTest, EscapesStrings) {
  EXPECT_EQ(JsonWriter::quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonWriter::quote("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(JsonWriter::quote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonWriter::quote(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
  EXPECT_EQ(JsonWriter::quote("/ and \x7f stay"), "\"/ and \x7f stay\"");
  // Valid UTF-8 passes through; invalid bytes become U+FFFD.
  EXPECT_EQ(JsonWriter::quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(JsonWriter::quote("a\xff"
                              "b"),
            "\"a\xef\xbf\xbd"
            "b\"");
  EXPECT_EQ(JsonWriter::quote("\xc3"), "\"\xef\xbf\xbd\"");                  // truncated sequence
  EXPECT_EQ(JsonWriter::quote("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");  // overlong '/'
  EXPECT_EQ(JsonWriter::quote("\xed\xa0\x80"),                               // UTF-16 surrogate
            "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

TEST(JsonWriterTest, WritesNestedStructuresCompactAndPretty) {
  JsonWriter compact(0);
  compact.begin_object();
  compact.key("n").value(-3);
  compact.key("u").value(uint64_t{18446744073709551615u});
  compact.key("b").value(true);
  compact.key("s").value("x");
  compact.key("list").array(std::vector<int32_t>{1, 2});
  compact.key("empty").begin_array().end_array();
  compact.key("obj").begin_object().end_object();
  compact.key("nothing").null();
  compact.end_object();
  EXPECT_TRUE(compact.complete());
  EXPECT_EQ(compact.str(),
            "{\"n\":-3,\"u\":18446744073709551615,\"b\":true,\"s\":\"x\",\"list\":[1,2],"
            "\"empty\":[],\"obj\":{},\"nothing\":null}");

  JsonWriter pretty(2);
  pretty.begin_object().key("a").begin_array().value(1).value(2).end_array().end_object();
  EXPECT_EQ(pretty.str(), "{\n  \"a\": [\n    1,\n    2\n  ]\n}");

  JsonWriter lists(2);
  lists.begin_object().key("shape").array(std::vector<int32_t>{1, 28, 28});
  lists.key("none").array(std::vector<int32_t>{}).end_object();
  EXPECT_EQ(lists.str(), "{\n  \"shape\": [1, 28, 28],\n  \"none\": []\n}");
}

TEST(JsonWriterTest, NumbersRoundTripAndNonFiniteIsNull) {
  JsonWriter json(0);
  json.begin_array();
  json.value(0.1f).value(0.1).value(1e-5f).value(-2.5).value(
      std::numeric_limits<float>::infinity());
  json.value(std::numeric_limits<double>::quiet_NaN());
  json.value(int64_t{-9223372036854775807 - 1});
  json.end_array();
  EXPECT_EQ(json.str(), "[0.1,0.1,1e-05,-2.5,null,null,-9223372036854775808]");
}

// The fusion outlook of a streaming model says why its cells stay and what --stateful does.
TEST(AnalyzerTest, FusionOutlookOfAStreamingModelNamesStateful) {
  LoadedModel loaded;
  std::string error;
  ASSERT_TRUE(
      load_model_file(test::shared_dir() + "/data/models/real/breizhn_dtln_model_1_3d37fdf.tflite",
                      &loaded, &error))
      << error;
  AnalyzerReport report = analyze_model(loaded.model, loaded.path);
  add_fusion_outlook(loaded.model, &report);
  EXPECT_EQ(report.recurrent_cells, 2);
  EXPECT_EQ(report.fusable_cells, 0);
  EXPECT_NE(report.fuse_note.find("gruwb fuse --stateful fuses 2 of 2"), std::string::npos)
      << report.fuse_note;
}

}  // namespace
}  // namespace gruwb::tools

namespace gruwb::tools {
namespace {

// The GRUWB_FW_OPS line names each op once, in order of first use, with :int8 where the op
// reads or writes integer activations (the kernel's integer form); a float model has none.
TEST(AnalyzerTest, FirmwareOpTableNamesTheIntegerForms) {
  EXPECT_EQ(analyze("tflm_micro_speech_quantized_legacy_opcodes.tflite").firmware_ops,
            "RESHAPE:int8,DEPTHWISE_CONV_2D:int8,FULLY_CONNECTED:int8,SOFTMAX:int8");
  const AnalyzerReport hello = analyze("tflm_hello_world_float.tflite");
  EXPECT_EQ(hello.firmware_ops, "FULLY_CONNECTED");
  EXPECT_NE(report_to_text(hello).find("Firmware op table: GRUWB_FW_OPS=FULLY_CONNECTED"),
            std::string::npos);
}

}  // namespace
}  // namespace gruwb::tools
