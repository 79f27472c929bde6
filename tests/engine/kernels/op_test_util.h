#pragma once
// Building small models in memory and running them, for hand-made kernel
// tests. A model is written with the host writer (object API -> .tflite or
// .circle bytes), loaded through the reader and prepared by the real
// interpreter in an exactly sized arena, so a kernel test also exercises
// what a file on disk would go through.
//
//   OpModelBuilder b;
//   int x = b.input("x", {1, 3});
//   int w = b.constant("w", {4, 3}, weights);
//   int y = b.output("y");                      // shape left to the kernel
//   fb::FullyConnectedOptionsT options;
//   options.keep_num_dims = true;
//   b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {y}, options);
//   std::vector<Values> out = run(b, {Values::f32({1, 3}, {1, 2, 3})});
//   EXPECT_EQ(out[0].shape, (std::vector<int32_t>{1, 4}));
//
// Several subgraphs (WHILE/IF bodies): add_subgraph() + use_subgraph(); the
// tensor and op functions act on the current subgraph.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/model_writer.h"

namespace gruwb::test {

using fb::TensorType;

// A tensor's value on the host: type, shape and raw little-endian bytes.
struct Values {
  TensorType type = TensorType::FLOAT32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;

  static Values f32(std::vector<int32_t> shape, const std::vector<float>& values);
  static Values i32(std::vector<int32_t> shape, const std::vector<int32_t>& values);
  static Values i64(std::vector<int32_t> shape, const std::vector<int64_t>& values);
  static Values boolean(std::vector<int32_t> shape, const std::vector<bool>& values);
  static Values i8(std::vector<int32_t> shape, const std::vector<int8_t>& values);

  int64_t elements() const;
  // Typed views; each fails the test when the type differs.
  std::vector<float> floats() const;
  std::vector<int32_t> ints() const;
  std::vector<int64_t> int64s() const;
  std::vector<bool> bools() const;
};

class OpModelBuilder {
 public:
  OpModelBuilder();

  // Subgraphs: 0 ("main") exists; add_subgraph() returns the new index and
  // does not switch to it.
  int add_subgraph(const std::string& name);
  void use_subgraph(int index);
  int current_subgraph() const { return current_; }

  // Tensors of the current subgraph; each returns the tensor index. An empty
  // shape is what converters write for "unknown" (and for scalars).
  int tensor(const std::string& name, std::vector<int32_t> shape = {},
             TensorType type = TensorType::FLOAT32);
  int input(const std::string& name, std::vector<int32_t> shape,
            TensorType type = TensorType::FLOAT32);
  int output(const std::string& name, std::vector<int32_t> shape = {},
             TensorType type = TensorType::FLOAT32);
  int constant(const std::string& name, const Values& values);
  int constant(const std::string& name, std::vector<int32_t> shape,
               const std::vector<float>& values);
  int constant_i32(const std::string& name, std::vector<int32_t> shape,
                   const std::vector<int32_t>& values);
  int constant_i64(const std::string& name, std::vector<int32_t> shape,
                   const std::vector<int64_t>& values);
  // INT8 weights with one scale (per tensor) or one per slice along
  // `quantized_dimension` (per channel); zero points default to 0.
  int constant_int8(const std::string& name, std::vector<int32_t> shape,
                    const std::vector<int8_t>& values, const std::vector<float>& scales,
                    const std::vector<int64_t>& zero_points = {}, int32_t quantized_dimension = 0);
  // A variable (is_variable, e.g. RNN state); `initial` gives it a buffer.
  int variable(const std::string& name, std::vector<int32_t> shape,
               TensorType type = TensorType::FLOAT32, const Values* initial = nullptr);
  void mark_input(int tensor);
  void mark_output(int tensor);

  // Ops. Inputs of -1 are omitted optional inputs. Operator codes are shared
  // between ops of the same kind, as converters write them.
  void op(int32_t op_code, const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs,
          fb::BuiltinOptionsUnion options = {});
  void op(BuiltinOperator op_code, const std::vector<int32_t>& inputs,
          const std::vector<int32_t>& outputs, fb::BuiltinOptionsUnion options = {}) {
    op(static_cast<int32_t>(op_code), inputs, outputs, std::move(options));
  }
  // Options as an object-API table, e.g. fb::GatherOptionsT.
  template <typename OptionsT>
  void op(BuiltinOperator op_code, const std::vector<int32_t>& inputs,
          const std::vector<int32_t>& outputs, OptionsT options) {
    fb::BuiltinOptionsUnion u;
    u.Set(std::move(options));
    op(static_cast<int32_t>(op_code), inputs, outputs, std::move(u));
  }
  // A CUSTOM op with its custom_code and raw (usually flexbuffer) options.
  void custom_op(const std::string& custom_code, const std::vector<int32_t>& inputs,
                 const std::vector<int32_t>& outputs, const std::vector<uint8_t>& custom_options);

  tools::ModelDef& def() { return def_; }
  const tools::ModelDef& def() const { return def_; }
  fb::SubGraphT& subgraph() { return *def_.subgraphs[static_cast<size_t>(current_)]; }
  fb::TensorT& tensor_def(int index) { return *subgraph().tensors[static_cast<size_t>(index)]; }

  // The file bytes; empty (and a test failure) when the writer refuses.
  std::vector<uint8_t> bytes(ModelFormat format = ModelFormat::kTflite) const;

 private:
  uint32_t opcode_index(int32_t op_code, const std::string& custom_code);
  uint32_t add_buffer(const std::vector<uint8_t>& data);

  tools::ModelDef def_;
  int current_ = 0;
};

// A written, loaded and prepared model. Keeps its bytes and arena.
class OpRunner {
 public:
  explicit OpRunner(const OpModelBuilder& builder, ModelFormat format = ModelFormat::kTflite);
  OpRunner(const OpRunner&) = delete;
  OpRunner& operator=(const OpRunner&) = delete;

  // false when writing, loading or prepare failed; error() says why.
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  // Fails the test on a type or shape mismatch.
  void set_input(int index, const Values& values);
  // false (and error() set) when an eval failed.
  bool invoke();
  Values output(int index);
  int output_count() { return runner_.output_count(); }

  tools::ModelRunner& runner() { return runner_; }
  Interpreter& interpreter() { return runner_.interpreter(); }
  const Model& model() const { return loaded_.model; }

 private:
  tools::LoadedModel loaded_;
  tools::ModelRunner runner_;
  bool ok_ = false;
  std::string error_;
};

// Prepare, set inputs 0..n-1, invoke, return every output. A failure at any
// step fails the test and returns no outputs.
std::vector<Values> run(const OpModelBuilder& builder, const std::vector<Values>& inputs,
                        ModelFormat format = ModelFormat::kTflite);
// The prepare error ("" if prepare succeeded), for tests of rejected models.
std::string prepare_error(const OpModelBuilder& builder);
// The invoke error ("" if invoke succeeded; prepare must succeed).
std::string invoke_error(const OpModelBuilder& builder, const std::vector<Values>& inputs);

// Element-wise |expected - actual| <= tolerance, naming the first mismatch.
::testing::AssertionResult floats_near(const std::vector<float>& expected,
                                       const std::vector<float>& actual, float tolerance = 1e-6f);

// A flat sequence 0, 1, 2, ... (times `scale`, plus `offset`): handy data.
std::vector<float> iota_floats(int64_t n, float scale = 1.f, float offset = 0.f);
std::vector<int32_t> iota_ints(int64_t n, int32_t offset = 0);

}  // namespace gruwb::test
