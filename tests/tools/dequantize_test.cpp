// Hybrid models train float32 copies of their INT8 weights: dequantize_hybrid_model turns
// exactly the weights of float ops into float32 and leaves full-integer models alone.
// Full-integer models train their float form (float_training_model), checked against the
// real-TFLite golden outputs of the integer model.

#include "engine/tools/dequantize.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/tools/fuser.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"
#include "engine/tools/quantizer.h"
#include "tests/engine/test_models.h"
#include "tests/tools/model_def_util.h"

namespace gruwb::tools {
namespace {

std::vector<uint8_t> real_model(const std::string& stem) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(
      read_file_bytes(test::shared_dir() + "/data/models/real/" + stem + ".tflite", &bytes, &error))
      << error;
  return bytes;
}

int int8_tensors(const std::vector<uint8_t>& bytes) {
  const ModelDef def = unpack(bytes);
  int n = 0;
  for (const auto& sg : def.subgraphs) {
    for (const auto& t : sg->tensors) n += t->type == fb::TensorType::INT8;
  }
  return n;
}

TEST(DequantizeTest, HybridDtlnWeightsBecomeFloatAndTheModelStillRuns) {
  const std::vector<uint8_t> hybrid = real_model("breizhn_dtln_model_quant_1");
  ASSERT_GT(int8_tensors(hybrid), 0);
  std::vector<uint8_t> out;
  DequantizeResult result;
  std::string error;
  ASSERT_TRUE(dequantize_hybrid_model(hybrid, &out, &result, &error)) << error;
  EXPECT_EQ(result.tensors, int8_tensors(hybrid));
  EXPECT_EQ(int8_tensors(out), 0);
  EXPECT_GT(out.size(), hybrid.size());  // 4 bytes a weight instead of 1
  LoadedModel loaded;
  ASSERT_TRUE(load_model_bytes(out, "dequantized", &loaded, &error)) << error;
}

TEST(DequantizeTest, FullIntegerAndFloatModelsAreLeftAlone) {
  for (const char* stem : {"tensorflow_tflite_micro_micro_speech_lstm",
                           "mycroftai_plugin_wake_word_precise_lite_hey_mycroft"}) {
    const std::vector<uint8_t> bytes = real_model(stem);
    std::vector<uint8_t> out;
    DequantizeResult result;
    std::string error;
    ASSERT_TRUE(dequantize_hybrid_model(bytes, &out, &result, &error)) << error;
    EXPECT_EQ(result.tensors, 0) << stem;
    EXPECT_EQ(out, bytes) << stem;
  }
}

std::string golden_dir(const std::string& stem) {
  return test::shared_dir() + "/data/models/real/golden/" + stem;
}

// Every element of an array as double (npy_values).
std::vector<double> values_of(const NpyArray& a) {
  std::vector<double> values;
  std::string error;
  EXPECT_TRUE(npy_values(a, "array", &values, &error)) << error;
  return values;
}

// Real values of a quantized golden array: scale * (q - zero_point) with the tensor's
// per-tensor parameters.
std::vector<double> real_values(const NpyArray& q, const fb::TensorT& tensor) {
  const float scale = tensor.quantization->scale.at(0);
  const int64_t zero = tensor.quantization->zero_point.at(0);
  std::vector<double> out;
  for (double v : values_of(q)) out.push_back(scale * static_cast<float>(v - zero));
  return out;
}

// The float form on the real-TFLite golden input (dequantized, fed as float32 in real units);
// its first output.
std::vector<double> float_form_output(const std::string& stem, const std::vector<uint8_t>& integer,
                                      int* integer_tensors) {
  const ModelDef def = unpack(integer);
  const fb::SubGraphT& main = *def.subgraphs[0];
  std::vector<uint8_t> bytes;
  DequantizeResult result;
  std::string error;
  EXPECT_TRUE(float_training_model(integer, &bytes, &result, &error)) << error;
  EXPECT_FALSE(has_integer_activations(unpack(bytes)));
  *integer_tensors = result.integer_tensors;

  NpyArray x;
  EXPECT_TRUE(read_npy(golden_dir(stem) + "/input0.npy", &x, &error)) << error;
  const std::vector<double> real =
      real_values(x, *main.tensors[static_cast<size_t>(main.inputs[0])]);
  NpyArray x_float;
  x_float.dtype = "<f4";
  x_float.shape = x.shape;
  for (double v : real) {
    const float f = static_cast<float>(v);
    const auto* p = reinterpret_cast<const uint8_t*>(&f);
    x_float.data.insert(x_float.data.end(), p, p + sizeof f);
  }

  LoadedModel loaded;
  ModelRunner runner;
  EXPECT_TRUE(load_model_bytes(bytes, stem, &loaded, &error)) << error;
  EXPECT_TRUE(runner.prepare(loaded.model, &error)) << error;
  EXPECT_TRUE(runner.set_input(0, x_float, &error)) << error;
  EXPECT_TRUE(runner.invoke(&error)) << error;
  const NpyArray y = runner.output(0);
  EXPECT_EQ(y.dtype, "<f4");
  return values_of(y);
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

// An LSTM MNIST classifier (uint8) and micro_speech's LSTM (int8): the float form's outputs are
// within 2 output steps of the integer model's real-TFLite golden outputs (measured: 0.61 and
// 0.94 steps), the rounding of the integer kernels (gates, int16 cell state) apart.
TEST(DequantizeTest, FullIntegerLstmClassifiersFloatFormsMatchTheirGoldenOutputs) {
  for (const char* stem : {"google_coral_test_data_keras_lstm_mnist_ptq",
                           "tensorflow_tflite_micro_micro_speech_lstm"}) {
    SCOPED_TRACE(stem);
    const std::vector<uint8_t> integer = real_model(stem);
    int converted = 0;
    const std::vector<double> got = float_form_output(stem, integer, &converted);
    EXPECT_GT(converted, 0);
    const ModelDef def = unpack(integer);
    const fb::SubGraphT& main = *def.subgraphs[0];
    const fb::TensorT& out = *main.tensors[static_cast<size_t>(main.outputs[0])];
    NpyArray y;
    std::string error;
    ASSERT_TRUE(read_npy(golden_dir(stem) + "/output0.npy", &y, &error)) << error;
    EXPECT_LE(max_difference(got, real_values(y, out)), 2 * out.quantization->scale.at(0));
  }
}

// The int8 DTLN noise suppressor differs from its own float semantics by up to 0.21 on its
// golden input (random int8, far outside its calibration range, saturates the first LSTM), so
// its float form is checked against an independent NumPy computation of that float model
// (tests/fixtures/gen/integer_float_form.py) instead.
TEST(DequantizeTest, FullIntegerDtlnFloatFormMatchesAnIndependentFloatComputation) {
  const char* stem = "tensorflow_tflite_micro_dtln_noise_suppression";
  int converted = 0;
  const std::vector<double> got = float_form_output(stem, real_model(stem), &converted);
  // Every quantized tensor: 26 weights and biases, 4 states, 2 hidden-scale intermediates,
  // the input and 4 activations.
  EXPECT_EQ(converted, 37);
  NpyArray want;
  std::string error;
  ASSERT_TRUE(
      read_npy(std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/golden/" + stem + "_float_form.npy",
               &want, &error))
      << error;
  EXPECT_LE(max_difference(got, values_of(want)), 1e-5);
}

// Our own quantizer's int8 and int16x8 models (FC, LSTM, LSTM as a WHILE loop, and the fused
// GRU, whose int32 biases and Q0.15 state carry no scales of their own): each float form
// computes its float original within the quantization error, so training it continues from
// the model that was quantized.
TEST(DequantizeTest, QuantizedModelsFloatFormsComputeTheirFloatOriginals) {
  const std::string quantized = std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/quantized/";
  std::vector<uint8_t> gru_float;
  std::string error;
  ASSERT_TRUE(
      read_file_bytes(std::string(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite",
                      &gru_float, &error))
      << error;
  uint32_t state = 7;
  const auto uniform = [&state] {  // [-1, 1)
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 8388608.f - 1.f;
  };
  {  // Keras initializes biases to zeros: give them values, so their scales matter.
    ModelDef def = unpack(gru_float);
    for (auto& t : def.subgraphs[0]->tensors) {
      if (t->name != "gru/bias") continue;
      std::vector<uint8_t>& data = def.buffers[t->buffer]->data;
      for (size_t k = 0; k < data.size() / 4; ++k) {
        const float v = 0.5f * uniform();
        std::memcpy(data.data() + 4 * k, &v, 4);
      }
    }
    ASSERT_TRUE(write_model(def, ModelFormat::kTflite, &gru_float, &error)) << error;
  }
  std::vector<RepresentativeSample> samples(8, {std::vector<float>(60 * 3)});
  for (RepresentativeSample& s : samples) {
    for (float& v : s[0]) v = uniform();
  }
  QuantizeResult q;
  ASSERT_TRUE(quantize_model(gru_float, samples, QuantizeOptions(), &q, &error)) << error;
  struct Case {
    std::string name;
    std::vector<uint8_t> original, integer;
    double tolerance;
  };
  std::vector<Case> cases = {{"gesture GRU int8", gru_float, q.bytes, 0.005}};
  for (const char* stem : {"quant_fc_int8", "quant_fc_int8_integer_io", "quant_fc_int16x8",
                           "quant_lstm_int8", "quant_lstm_while_int8"}) {
    const std::string float_stem =
        std::string(stem).find("lstm_while") != std::string::npos ? "quant_lstm_while_float"
        : std::string(stem).find("lstm") != std::string::npos     ? "quant_lstm_float"
                                                                  : "quant_fc_float";
    std::vector<uint8_t> a, b;
    ASSERT_TRUE(read_file_bytes(quantized + float_stem + ".tflite", &a, &error)) << error;
    ASSERT_TRUE(read_file_bytes(quantized + stem + ".tflite", &b, &error)) << error;
    cases.push_back({stem, a, b, 0.005});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<uint8_t> float_form;
    DequantizeResult result;
    ASSERT_TRUE(float_training_model(c.integer, &float_form, &result, &error)) << error;
    EXPECT_GT(result.integer_tensors, 0);
    EXPECT_FALSE(has_integer_activations(unpack(float_form)));
    // Three random inputs, uniform in [-1, 1), every output compared.
    double worst = 0;
    ASSERT_TRUE(compare_models(c.original, float_form, 3, 1, &worst, &error)) << error;
    std::printf("%s: max |float form - float original| = %.5f\n", c.name.c_str(), worst);
    EXPECT_LE(worst, c.tolerance);
  }
}

}  // namespace
}  // namespace gruwb::tools
