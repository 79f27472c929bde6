#pragma once
// Where the tests find the real model files in ../shared: one explicit list,
// so a file that goes missing fails a test instead of shrinking the suite.

#include <cctype>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

namespace gruwb::test {

// The shared data folder: $GRUWB_SHARED_DIR if set (a relocated checkout),
// else the path CMake compiled in.
inline std::string shared_dir() {
  const char* env = std::getenv("GRUWB_SHARED_DIR");
  return (env && env[0]) ? std::string(env) : std::string(GRUWB_SHARED_DIR);
}

struct TestModel {
  const char* folder;  // under data/models/
  const char* file;
};

// All 19 models: 11 in tflite/ (2 of them .circle) and 8 in onert-micro/.
inline const std::vector<TestModel>& all_test_models() {
  static const std::vector<TestModel> kModels = {
      {"tflite", "litert_call_once_mul.tflite"},
      {"tflite", "litert_multi_subgraphs_while.tflite"},
      {"tflite", "litert_nested_while.tflite"},
      {"tflite", "litert_unidirectional_sequence_lstm_24inputs.tflite"},
      {"tflite", "one_onert_micro_unidir_lstm_float.circle"},
      {"tflite", "one_vscode_while_000.circle"},
      {"tflite", "tflm_hello_world_float.tflite"},
      {"tflite", "tflm_keyword_scrambled_svdf_int8.tflite"},
      {"tflite", "tflm_micro_speech_quantized_legacy_opcodes.tflite"},
      {"tflite", "tflm_mnist_fused_lstm_float.tflite"},
      {"tflite", "tflm_mnist_fused_lstm_int8.tflite"},
      {"onert-micro", "fully_connected_float.circle"},
      {"onert-micro", "gru_float.circle"},
      {"onert-micro", "synthetic_gru_fc_fc_softmax_t28_i28_h32_c10.circle"},
      {"onert-micro", "synthetic_gru_fc_softmax_t28_i28_h32_c10.circle"},
      {"onert-micro", "synthetic_gru_fc_softmax_t3_i2_h4_c3.circle"},
      {"onert-micro", "train_boston_housing_fc.circle"},
      {"onert-micro", "train_checkpoint_simple_fc.circle"},
      {"onert-micro", "train_numbers_classification_cnn.circle"},
  };
  return kModels;
}

// So gtest names the model in failures instead of dumping its bytes.
inline void PrintTo(const TestModel& model, std::ostream* os) {
  *os << model.folder << "/" << model.file;
}

inline std::string models_dir(const std::string& folder) {
  return shared_dir() + "/data/models/" + folder;
}

inline std::string model_path(const TestModel& model) {
  return models_dir(model.folder) + "/" + model.file;
}

// Path of a model by file name alone, e.g. model_path("gru_float.circle");
// "" when the name is not in the list.
inline std::string model_path(const std::string& file) {
  for (const TestModel& model : all_test_models()) {
    if (file == model.file) return model_path(model);
  }
  return "";
}

inline bool is_circle(const TestModel& model) {
  std::string file = model.file;
  return file.size() > 7 && file.compare(file.size() - 7, 7, ".circle") == 0;
}

// A gtest-safe parameter name: "tflm_hello_world_float_tflite".
inline std::string test_name_for(const TestModel& model) {
  std::string name = model.file;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace gruwb::test
