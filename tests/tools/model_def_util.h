#pragma once
// Round trips between file bytes and the editable ModelDef for the model-tool tests.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/model_writer.h"

namespace gruwb::tools {

// The model in `bytes`, loaded, verified and unpacked (a failed expectation if it is not one).
inline ModelDef unpack(const std::vector<uint8_t>& bytes) {
  Model model;
  EXPECT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  ModelDef def;
  std::string error;
  EXPECT_TRUE(unpack_model(model, &def, &error)) << error;
  return def;
}

// `def` written as .tflite bytes.
inline std::vector<uint8_t> bytes_of(const ModelDef& def) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(write_model(def, ModelFormat::kTflite, &bytes, &error)) << error;
  return bytes;
}

}  // namespace gruwb::tools
