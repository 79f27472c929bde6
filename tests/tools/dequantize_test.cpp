// Hybrid models train float32 copies of their INT8 weights: dequantize_hybrid_model turns
// exactly the weights of float ops into float32 and leaves full-integer models alone.

#include "engine/tools/dequantize.h"

#include <gtest/gtest.h>

#include "engine/tools/model_file.h"
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

}  // namespace
}  // namespace gruwb::tools
