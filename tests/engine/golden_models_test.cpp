// Every .tflite model we ship gives the answers of a real TFLite runtime.
//
// The goldens in tests/fixtures/golden/<stem>.json were computed by TFLite's WASM build
// (tests/fixtures/gen/tflite_golden.mjs); this test needs only the JSON files. Each file has
// "cases" (each run on a freshly prepared interpreter) and "sequence" (the same inputs invoked
// back to back on one interpreter, so LSTM states and resource variables carry over as in TFLite).
// The single-kernel full-integer models of tests/fixtures/int8 (write_int8_models) run here too,
// their golden JSON beside them; integer outputs must equal TFLite's exactly.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/runtime/interpreter.h"
#include "engine/tools/model_file.h"
#include "tests/engine/golden_json.h"
#include "tests/engine/test_models.h"

namespace gruwb {
namespace {

using test::Json;
using test::load_golden;

constexpr double kTolerance = 1e-5;  // absolute, on every float output element

// ---- Fixture access ----------------------------------------------------------------------

// Shipped models by file name; the int8 fixtures as "int8/<file>"; the real full-integer
// models of ../shared/data/models/real as "real/<file>" (their goldens in tests/fixtures/golden).
constexpr char kInt8Prefix[] = "int8/";
constexpr char kRealPrefix[] = "real/";

bool is_int8_fixture(const std::string& param) { return param.rfind(kInt8Prefix, 0) == 0; }
bool is_real_model(const std::string& param) { return param.rfind(kRealPrefix, 0) == 0; }

std::string file_of(const std::string& param) {
  if (is_int8_fixture(param)) return param.substr(sizeof kInt8Prefix - 1);
  if (is_real_model(param)) return param.substr(sizeof kRealPrefix - 1);
  return param;
}

std::string golden_path(const std::string& param) {
  const std::string file = file_of(param);
  std::string stem = file.substr(0, file.rfind('.'));
  return std::string(GRUWB_SOURCE_DIR) +
         (is_int8_fixture(param) ? "/tests/fixtures/int8/" : "/tests/fixtures/golden/") + stem +
         ".json";
}

std::string model_path_of(const std::string& param) {
  if (is_real_model(param)) return test::models_dir("real") + "/" + file_of(param);
  return is_int8_fixture(param)
             ? std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/int8/" + file_of(param)
             : test::model_path(param);
}

// "float32" in the fixtures; the engine's TensorType names are "FLOAT32".
std::string dtype_of(TensorType type) {
  std::string name = tensor_type_name(type);
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  return name;
}

std::string shape_text(const Shape& shape) {
  char text[128];
  format_shape(shape, text, sizeof text);
  return text;
}

std::string shape_text(const Json& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.items.size(); ++i) {
    text += (i ? "," : "") + std::to_string(static_cast<int64_t>(dims.items[i].number));
  }
  return text + "]";
}

// ---- Running the engine ------------------------------------------------------------------

// Owns a 16-byte aligned arena of exactly the size the interpreter asked for.
struct PreparedModel {
  std::vector<uint8_t> storage;
  Interpreter interpreter;
  size_t arena_bytes = 0;
};

// Prepares in a generous arena first so the interpreter reports what it needs (a kernel's
// persistent memory at prepare is only known once the earlier ones fitted), then in exactly
// that many bytes, as a board would.
Status prepare_in(const Model& model, size_t bytes, PreparedModel* out) {
  out->storage.assign(bytes + Interpreter::kAlignment, 0);
  uintptr_t base = reinterpret_cast<uintptr_t>(out->storage.data());
  uintptr_t aligned = (base + Interpreter::kAlignment - 1) & ~(Interpreter::kAlignment - 1);
  out->arena_bytes = bytes;
  return out->interpreter.prepare(model, reinterpret_cast<uint8_t*>(aligned), bytes);
}

Status prepare_sized(const Model& model, PreparedModel* out) {
  size_t bytes = size_t{1} << 20;
  Status status;
  for (int attempt = 0; attempt < 8; ++attempt) {
    status = prepare_in(model, bytes, out);
    if (status.code() != StatusCode::kOutOfMemory) break;
    size_t needed = out->interpreter.arena_bytes_needed();
    bytes = needed > bytes ? needed : bytes * 2;
  }
  if (!status.ok()) return status;
  return prepare_in(model, out->interpreter.arena_bytes_needed(), out);
}

// Copies one fixture tensor into an engine input, checking name-independent facts first.
void fill_input(const Json& expected, int index, Tensor* tensor) {
  SCOPED_TRACE("input " + std::to_string(index) + " '" + expected["name"].text + "'");
  ASSERT_EQ(dtype_of(tensor->type), expected["dtype"].text);
  ASSERT_EQ(shape_text(tensor->shape), shape_text(expected["shape"]));
  const std::vector<Json>& data = expected["data"].items;
  ASSERT_EQ(static_cast<size_t>(tensor->elements()), data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    switch (tensor->type) {
      case TensorType::FLOAT32: tensor->f32()[i] = static_cast<float>(data[i].number); break;
      case TensorType::INT32: tensor->i32()[i] = static_cast<int32_t>(data[i].number); break;
      case TensorType::INT16:
        reinterpret_cast<int16_t*>(tensor->data)[i] = static_cast<int16_t>(data[i].number);
        break;
      case TensorType::INT8:
        reinterpret_cast<int8_t*>(tensor->data)[i] = static_cast<int8_t>(data[i].number);
        break;
      case TensorType::UINT8: tensor->data[i] = static_cast<uint8_t>(data[i].number); break;
      default: FAIL() << "input type " << dtype_of(tensor->type) << " not handled by this test";
    }
  }
}

double element(const Tensor& tensor, size_t i) {
  switch (tensor.type) {
    case TensorType::FLOAT32: return tensor.f32()[i];
    case TensorType::INT32: return tensor.i32()[i];
    case TensorType::INT16: return reinterpret_cast<const int16_t*>(tensor.data)[i];
    case TensorType::INT8: return reinterpret_cast<const int8_t*>(tensor.data)[i];
    case TensorType::UINT8: return tensor.data[i];
    case TensorType::BOOL: return tensor.data[i] ? 1 : 0;
    default: return NAN;
  }
}

// Integer outputs that may differ from TFLite by a step (or what a step becomes through a
// LOGISTIC), and how many did. TFLite's WASM
// build runs int8 FULLY_CONNECTED (and ADD, SUB, MUL, CONV_2D) on XNNPACK, which requantizes in
// float (input x weight / output scale as a float, the float product rounded half to even);
// our kernels do what TFLite's reference kernels and TFLite Micro do (an int32 multiplier and
// shift, gemmlowp rounding). The two disagree by one step near ties: 9 of the FC fixtures'
// 6,360 outputs. The integer arithmetic itself is checked bit for bit by quant_util_test.
struct IntegerSteps {
  double tolerance = 0;
  size_t off_by_one = 0;
  size_t compared = 0;
};
IntegerSteps g_integer_steps;

// The int8 fixtures whose kernels TFLite's WASM build hands to XNNPACK and which requantize
// (FULLY_CONNECTED, ADD, SUB, MUL, CONV_2D); int8_add_builtin's scales keep XNNPACK out.
bool requantized_by_xnnpack(const std::string& file) {
  if (file.find("_builtin") != std::string::npos) return false;
  for (const char* kernel :
       {"fully_connected", "chain", "int8_add", "int8_sub", "int8_mul", "int8_conv_2d"}) {
    if (file.find(kernel) != std::string::npos) return true;
  }
  return false;
}

// Compares one engine output with the fixture; floats to kTolerance, integers exactly (or to
// g_integer_steps.tolerance). Returns the largest absolute difference seen.
double check_output(const Json& expected, int index, const Tensor& tensor) {
  SCOPED_TRACE("output " + std::to_string(index) + " '" + expected["name"].text + "'");
  EXPECT_EQ(dtype_of(tensor.type), expected["dtype"].text);
  EXPECT_EQ(shape_text(tensor.shape), shape_text(expected["shape"]));
  const std::vector<Json>& data = expected["data"].items;
  if (static_cast<size_t>(tensor.elements()) != data.size()) {
    ADD_FAILURE() << "engine gives " << tensor.elements() << " elements, TFLite " << data.size();
    return INFINITY;
  }
  double worst = 0;
  const bool is_float = tensor.type == TensorType::FLOAT32;
  const double tolerance = is_float ? kTolerance : g_integer_steps.tolerance;
  for (size_t i = 0; i < data.size(); ++i) {
    double got = element(tensor, i);
    // The fixture holds the shortest decimal of a float32; compare against that float itself.
    double want =
        tensor.type == TensorType::FLOAT32 ? static_cast<float>(data[i].number) : data[i].number;
    double error = std::fabs(got - want);
    if (!(error <= tolerance)) {  // also catches NaN
      ADD_FAILURE() << "element " << i << ": engine " << got << ", TFLite " << want;
      return error;
    }
    if (!is_float) {
      ++g_integer_steps.compared;
      if (error != 0) ++g_integer_steps.off_by_one;
    }
    worst = std::max(worst, error);
  }
  return worst;
}

// Fills the inputs of `test_case`, invokes, and checks `expected_outputs`.
double run_case(Interpreter& interpreter, const Json& test_case, const Json& expected_outputs) {
  const std::vector<Json>& inputs = test_case["inputs"].items;
  EXPECT_EQ(static_cast<size_t>(interpreter.input_count()), inputs.size());
  if (static_cast<size_t>(interpreter.input_count()) != inputs.size()) return INFINITY;
  for (size_t i = 0; i < inputs.size(); ++i) {
    fill_input(inputs[i], static_cast<int>(i), interpreter.input(static_cast<int>(i)));
    if (testing::Test::HasFatalFailure()) return INFINITY;
  }
  Status status = interpreter.invoke();
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok()) return INFINITY;
  const std::vector<Json>& outputs = expected_outputs.items;
  EXPECT_EQ(static_cast<size_t>(interpreter.output_count()), outputs.size());
  if (static_cast<size_t>(interpreter.output_count()) != outputs.size()) return INFINITY;
  double worst = 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& tensor = *interpreter.output(static_cast<int>(o));
    worst = std::max(worst, check_output(outputs[o], static_cast<int>(o), tensor));
  }
  return worst;
}

// ---- Tests -------------------------------------------------------------------------------

std::vector<std::string> tflite_model_files() {
  std::vector<std::string> files;
  for (const test::TestModel& model : test::all_test_models()) {
    std::string file = model.file;
    if (std::string(model.folder) == "tflite" && !test::is_circle(model)) files.push_back(file);
  }
  return files;
}

class GoldenModelTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(load_golden(golden_path(GetParam()), &golden_, &error)) << error;
    ASSERT_EQ(golden_["model"].text, file_of(GetParam()));
    ASSERT_FALSE(golden_["cases"].items.empty());
    ASSERT_TRUE(tools::load_model_file(model_path_of(GetParam()), &model_, &error)) << error;
    g_integer_steps = IntegerSteps();
    const std::string file = file_of(GetParam());
    // The real int8 models end in an int8 FULLY_CONNECTED too. DTLN's feeds a LOGISTIC whose
    // slope reaches 0.25 * 0.0388 / (1/256) = 2.5 output steps per input step, so one FC step
    // can show as up to 3 (5 of its 771 fresh outputs differ, by 1 or 2).
    if ((is_int8_fixture(GetParam()) && requantized_by_xnnpack(file)) ||
        is_real_model(GetParam())) {
      g_integer_steps.tolerance = file.find("dtln") != std::string::npos ? 3 : 1;
    }
  }

  // Off-by-one integer outputs stay rare (near-ties only).
  void TearDown() override {
    if (g_integer_steps.compared == 0 || g_integer_steps.tolerance == 0) return;
    std::printf("%s: %zu of %zu integer outputs off TFLite's by a step\n", GetParam().c_str(),
                g_integer_steps.off_by_one, g_integer_steps.compared);
    EXPECT_LE(g_integer_steps.off_by_one, std::max<size_t>(1, g_integer_steps.compared / 100))
        << "more than 1% of the integer outputs are a step off";
  }

  // Prepares `prepared`; skips the test when the engine does not support the model yet.
  void prepare(PreparedModel* prepared) {
    Status status = prepare_sized(model_.model, prepared);
    // The generated one-kernel fixtures exist for kernels we have: those must run.
    if (status.code() == StatusCode::kUnsupported && !is_int8_fixture(GetParam())) {
      GTEST_SKIP() << (golden_["quantized"].number ? "full-integer model: " : "")
                   << "engine does not run this model yet: " << status.message();
    }
    ASSERT_TRUE(status.ok()) << status_code_name(status.code()) << ": " << status.message();
  }

  Json golden_;
  tools::LoadedModel model_;
};

// Each case on a freshly prepared interpreter: no state from earlier invokes.
TEST_P(GoldenModelTest, MatchesTfliteOnFreshInterpreter) {
  double worst = 0;
  size_t arena_bytes = 0;
  const std::vector<Json>& cases = golden_["cases"].items;
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    auto prepared = std::make_unique<PreparedModel>();
    prepare(prepared.get());
    if (IsSkipped() || HasFatalFailure()) return;
    arena_bytes = prepared->arena_bytes;
    worst = std::max(worst, run_case(prepared->interpreter, cases[c], cases[c]["outputs"]));
    if (HasFatalFailure()) return;
  }
  RecordProperty("worst_abs_error", std::to_string(worst));
  std::printf("%s: %zu cases, arena %zu bytes, worst abs error %.3g\n", GetParam().c_str(),
              cases.size(), arena_bytes, worst);
}

// The cases' inputs back to back on one interpreter: variable tensors (LSTM h/c), resource
// variables and CALL_ONCE keep their effect between invokes, as in TFLite.
TEST_P(GoldenModelTest, MatchesTfliteAcrossInvokes) {
  const std::vector<Json>& cases = golden_["cases"].items;
  const std::vector<Json>& sequence = golden_["sequence"].items;
  ASSERT_EQ(sequence.size(), cases.size());
  auto prepared = std::make_unique<PreparedModel>();
  prepare(prepared.get());
  if (IsSkipped() || HasFatalFailure()) return;
  double worst = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("invoke " + std::to_string(c));
    worst = std::max(worst, run_case(prepared->interpreter, cases[c], sequence[c]["outputs"]));
    if (HasFatalFailure()) return;
  }
  RecordProperty("worst_abs_error", std::to_string(worst));
  std::printf("%s: %zu invokes in sequence, worst abs error %.3g\n", GetParam().c_str(),
              cases.size(), worst);
}

std::vector<std::string> int8_fixture_files() {
  // write_int8_models' models (tests/fixtures/gen/write_int8_models.cpp).
  std::vector<std::string> files;
  for (const char* stem : {"int8_fully_connected",
                           "int8_fully_connected_relu6",
                           "int8_fully_connected_per_channel",
                           "int8_fully_connected_large",
                           "int8_fully_connected_per_channel_large",
                           "int8_quantize",
                           "uint8_quantize_int8",
                           "uint8_requantize_int8",
                           "int8_dequantize",
                           "int8_softmax",
                           "int8_softmax_beta",
                           "int8_logistic",
                           "int8_tanh",
                           "int8_reshape_strided_slice",
                           "int8_chain",
                           "int8_lstm",
                           "int8_lstm_peephole",
                           "int8_lstm_projection",
                           "int8_lstm_peephole_projection",
                           "int8_lstm_layer_norm",
                           "int8_lstm_cifg_time_major",
                           "int8_add",
                           "int8_add_broadcast_relu",
                           "int8_add_builtin",
                           "int8_sub_broadcast",
                           "int8_mul",
                           "int8_mul_broadcast_relu6",
                           "int16_add",
                           "int16_add_pot",
                           "int16_sub",
                           "int16_mul",
                           "int8_conv_2d",
                           "int8_conv_2d_valid_dilated",
                           "int8_max_pool",
                           "int8_average_pool",
                           "uint8_concatenation_requantize",
                           "float_svdf",
                           "int8_svdf",
                           "int16_fully_connected",
                           "int16_fully_connected_per_channel",
                           "int16_quantize",
                           "int16_requantize_int8",
                           "int16_requantize_int32",
                           "int8_softmax_int16",
                           "int16_logistic",
                           "int16_tanh",
                           "int16_softmax",
                           "int16_softmax_beta",
                           "int16_conv_2d",
                           "int16_depthwise_conv_2d",
                           "int16_max_pool",
                           "int16_average_pool",
                           "int16_concatenation_reshape_slice"}) {
    files.push_back(std::string(kInt8Prefix) + stem + ".tflite");
  }
  return files;
}

INSTANTIATE_TEST_SUITE_P(Int8Kernels, GoldenModelTest, testing::ValuesIn(int8_fixture_files()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           const std::string file = file_of(info.param);
                           return file.substr(0, file.rfind('.'));
                         });

// The full-integer LSTM models of ../shared/data/models/real (int8 UNIDIRECTIONAL_SEQUENCE_LSTM;
// DTLN streams one step per invoke, so its "sequence" checks the state carried between invokes).
INSTANTIATE_TEST_SUITE_P(
    RealInt8Models, GoldenModelTest,
    testing::Values("real/tensorflow_tflite_micro_micro_speech_lstm.tflite",
                    "real/tensorflow_tflite_micro_dtln_noise_suppression.tflite",
                    "real/google_coral_test_data_keras_lstm_mnist_ptq.tflite"),
    [](const testing::TestParamInfo<std::string>& info) {
      const std::string file = file_of(info.param);
      return file.substr(0, file.rfind('.'));
    });

INSTANTIATE_TEST_SUITE_P(TfliteModels, GoldenModelTest, testing::ValuesIn(tflite_model_files()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return test::test_name_for({"tflite", info.param.c_str()});
                         });

}  // namespace
}  // namespace gruwb
