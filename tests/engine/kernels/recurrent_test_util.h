#pragma once
// Helpers shared by the recurrent kernel tests (lstm_test, rnn_test,
// gru_test): running a loaded model on float inputs, reading the committed
// PyTorch fixtures in tests/fixtures/recurrent/<case>/<array>.npy, and
// building one-op models in memory with the object API + host writer.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/model_writer.h"
#include "engine/tools/npy.h"

namespace gruwb::test {

struct FloatArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

inline std::string recurrent_fixture_path(const std::string& case_name, const std::string& array) {
  return std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/recurrent/" + case_name + "/" + array +
         ".npy";
}

// Reads a float32 fixture array; fails the test (and returns empty) if absent.
inline FloatArray read_fixture(const std::string& case_name, const std::string& array) {
  FloatArray out;
  tools::NpyArray npy;
  std::string error;
  if (!tools::read_npy(recurrent_fixture_path(case_name, array), &npy, &error)) {
    ADD_FAILURE() << error;
    return out;
  }
  EXPECT_EQ(npy.dtype, "<f4") << case_name << "/" << array;
  out.shape = npy.shape;
  out.values.resize(static_cast<size_t>(npy.elements()));
  std::memcpy(out.values.data(), npy.data.data(), out.values.size() * sizeof(float));
  return out;
}

inline tools::NpyArray to_npy(const FloatArray& array) {
  tools::NpyArray npy;
  npy.dtype = "<f4";
  npy.shape = array.shape;
  npy.data.resize(array.values.size() * sizeof(float));
  std::memcpy(npy.data.data(), array.values.data(), npy.data.size());
  return npy;
}

inline FloatArray from_npy(const tools::NpyArray& npy) {
  FloatArray out;
  out.shape = npy.shape;
  out.values.resize(static_cast<size_t>(npy.elements()));
  std::memcpy(out.values.data(), npy.data.data(), out.values.size() * sizeof(float));
  return out;
}

// Largest |a - b|; the sizes must match.
inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    double d = std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (!(d <= worst)) worst = d;  // NaN wins
  }
  return worst;
}

// [B,T,F] <-> [T,B,F].
inline FloatArray swap_batch_time(const FloatArray& in) {
  FloatArray out;
  int64_t d0 = in.shape[0], d1 = in.shape[1], f = in.shape[2];
  out.shape = {d1, d0, f};
  out.values.resize(in.values.size());
  for (int64_t a = 0; a < d0; ++a) {
    for (int64_t b = 0; b < d1; ++b) {
      for (int64_t k = 0; k < f; ++k)
        out.values[(b * d0 + a) * f + k] = in.values[(a * d1 + b) * f + k];
    }
  }
  return out;
}

// A loaded model plus a runner, kept together because the runner views the
// model's bytes.
struct RunnableModel {
  tools::LoadedModel loaded;
  tools::ModelRunner runner;
};

inline bool prepare_model(RunnableModel* m, std::string* error) {
  return m->runner.prepare(m->loaded.model, error);
}

inline bool load_and_prepare(const std::string& path, RunnableModel* m, std::string* error) {
  return tools::load_model_file(path, &m->loaded, error) && prepare_model(m, error);
}

inline bool build_and_prepare(const tools::ModelDef& def, ModelFormat format, RunnableModel* m,
                              std::string* error) {
  std::vector<uint8_t> bytes;
  return tools::write_model(def, format, &bytes, error) &&
         tools::load_model_bytes(std::move(bytes), "test model", &m->loaded, error) &&
         prepare_model(m, error);
}

// Sets input 0 .. n-1, invokes, returns output 0.
inline FloatArray run(RunnableModel* m, const std::vector<FloatArray>& inputs) {
  std::string error;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(m->runner.set_input(static_cast<int>(i), to_npy(inputs[i]), &error)) << error;
  }
  EXPECT_TRUE(m->runner.invoke(&error)) << error;
  return from_npy(m->runner.output(0));
}

// ---- one-op models through the object API ---------------------------------

class RecurrentModelBuilder {
 public:
  RecurrentModelBuilder() {
    def_.version = 3;
    def_.buffers.push_back(std::make_unique<fb::BufferT>());  // empty sentinel
    def_.subgraphs.push_back(std::make_unique<fb::SubGraphT>());
    def_.subgraphs[0]->name = "main";
  }

  int tensor(const std::string& name, const std::vector<int32_t>& shape,
             const std::vector<float>* data = nullptr, bool variable = false) {
    auto t = std::make_unique<fb::TensorT>();
    t->name = name;
    t->shape = shape;
    t->type = fb::TensorType::FLOAT32;
    t->is_variable = variable;
    if (data) {
      auto buffer = std::make_unique<fb::BufferT>();
      buffer->data.resize(data->size() * sizeof(float));
      std::memcpy(buffer->data.data(), data->data(), buffer->data.size());
      t->buffer = static_cast<uint32_t>(def_.buffers.size());
      def_.buffers.push_back(std::move(buffer));
    }
    auto& sg = *def_.subgraphs[0];
    sg.tensors.push_back(std::move(t));
    return static_cast<int>(sg.tensors.size() - 1);
  }
  int input(const std::string& name, const std::vector<int32_t>& shape) {
    int t = tensor(name, shape);
    def_.subgraphs[0]->inputs.push_back(t);
    return t;
  }
  int constant(const std::string& name, const FloatArray& array) {
    std::vector<int32_t> shape(array.shape.begin(), array.shape.end());
    return tensor(name, shape, &array.values);
  }
  int variable(const std::string& name, const std::vector<int32_t>& shape) {
    return tensor(name, shape, nullptr, true);
  }
  int output(const std::string& name, const std::vector<int32_t>& shape) {
    int t = tensor(name, shape);
    def_.subgraphs[0]->outputs.push_back(t);
    return t;
  }
  // Sets INT8 weights with one scale per tensor (symmetric), replacing the
  // float data of `t`.
  void quantize_int8(int t, float scale) {
    auto& tensor = *def_.subgraphs[0]->tensors[static_cast<size_t>(t)];
    auto& buffer = *def_.buffers[tensor.buffer];
    std::vector<float> values(buffer.data.size() / sizeof(float));
    std::memcpy(values.data(), buffer.data.data(), buffer.data.size());
    buffer.data.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      float q = std::round(values[i] / scale);
      q = q > 127.f ? 127.f : (q < -127.f ? -127.f : q);
      buffer.data[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
    }
    tensor.type = fb::TensorType::INT8;
    tensor.quantization = std::make_unique<fb::QuantizationParametersT>();
    tensor.quantization->scale = {scale};
    tensor.quantization->zero_point = {0};
  }

  // Adds the one op. `options` is a filled BuiltinOptionsUnion (may be empty).
  void op(int32_t op_code, const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs,
          fb::BuiltinOptionsUnion options = {}, const std::string& custom_code = "",
          const std::vector<uint8_t>& custom_options = {}) {
    auto code = std::make_unique<fb::OperatorCodeT>();
    code->builtin_code = static_cast<fb::BuiltinOperator>(op_code);
    code->custom_code = custom_code;
    code->version = 1;
    def_.operator_codes.push_back(std::move(code));
    auto o = std::make_unique<fb::OperatorT>();
    o->opcode_index = static_cast<uint32_t>(def_.operator_codes.size() - 1);
    o->inputs = inputs;
    o->outputs = outputs;
    o->builtin_options = std::move(options);
    o->custom_options = custom_options;
    def_.subgraphs[0]->operators.push_back(std::move(o));
  }

  void tensor_shape(int t, const std::vector<int32_t>& shape) {
    def_.subgraphs[0]->tensors[static_cast<size_t>(t)]->shape = shape;
  }

  const tools::ModelDef& def() const { return def_; }
  tools::ModelDef take() { return std::move(def_); }

 private:
  tools::ModelDef def_;
};

}  // namespace gruwb::test
