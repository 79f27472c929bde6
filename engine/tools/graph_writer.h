#pragma once
// Graph writer (host only), the one graph editor of the builder, the fuser, the cell
// descriptors (cells/) and the tests: appends tensors, constants and ops to one subgraph of a
// ModelDef at a time, plus one emitter per op pattern they write. Every tensor gets its static
// shape, so the file reads well in other tools too (our interpreter infers shapes anyway).
// Editing an existing graph, new ops can be held back (kHoldOps) and spliced in by the caller
// where they belong in execution order.

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/tools/model_writer.h"

namespace gruwb::tools {

using Dims = std::vector<int32_t>;

class GraphWriter {
 public:
  // A new model: adds buffer 0, the empty sentinel.
  explicit GraphWriter(ModelDef* def) : def_(def) {
    def_->buffers.push_back(std::make_unique<fb::BufferT>());
  }
  // Edits `subgraph` of an existing model. kHoldOps: new ops go to held_ops() instead.
  enum OpPlacement { kAppendOps, kHoldOps };
  GraphWriter(ModelDef* def, int subgraph, OpPlacement placement = kAppendOps)
      : def_(def), current_(subgraph), hold_ops_(placement == kHoldOps) {}

  int add_subgraph(const std::string& name) {
    auto sg = std::make_unique<fb::SubGraphT>();
    sg->name = name;
    def_->subgraphs.push_back(std::move(sg));
    return static_cast<int>(def_->subgraphs.size() - 1);
  }
  void use(int subgraph) { current_ = subgraph; }
  int current() const { return current_; }
  fb::SubGraphT& sg() { return *def_->subgraphs[static_cast<size_t>(current_)]; }
  const Dims& shape(int tensor) { return sg().tensors[static_cast<size_t>(tensor)]->shape; }
  TensorType type(int tensor) { return sg().tensors[static_cast<size_t>(tensor)]->type; }

  int tensor(const std::string& name, Dims shape, TensorType type = TensorType::FLOAT32) {
    auto t = std::make_unique<fb::TensorT>();
    t->name = name;
    t->shape = std::move(shape);
    t->type = type;
    sg().tensors.push_back(std::move(t));
    return static_cast<int>(sg().tensors.size() - 1);
  }
  int constant(const std::string& name, Dims shape, const std::vector<float>& values) {
    return constant_bytes(name, std::move(shape), TensorType::FLOAT32, values.data(),
                          values.size() * sizeof(float));
  }
  int constant_i32(const std::string& name, Dims shape, const std::vector<int32_t>& values) {
    return constant_bytes(name, std::move(shape), TensorType::INT32, values.data(),
                          values.size() * sizeof(int32_t));
  }
  // A constant of any type from its raw little-endian bytes.
  int constant_bytes(const std::string& name, Dims shape, TensorType type, const void* data,
                     size_t bytes) {
    auto buffer = std::make_unique<fb::BufferT>();
    const uint8_t* p = static_cast<const uint8_t*>(data);
    buffer->data.assign(p, p + bytes);
    def_->buffers.push_back(std::move(buffer));
    int t = tensor(name, std::move(shape), type);
    sg().tensors[static_cast<size_t>(t)]->buffer = static_cast<uint32_t>(def_->buffers.size() - 1);
    return t;
  }
  int constant_bool(const std::string& name, Dims shape, const std::vector<uint8_t>& values) {
    return constant_bytes(name, std::move(shape), TensorType::BOOL, values.data(), values.size());
  }
  // Scalars used by the step patterns, one tensor per value and subgraph (the
  // converter shares them the same way).
  int scalar(float value) {
    auto key = std::make_tuple(current_, 0, value);
    auto it = scalars_.find(key);
    if (it != scalars_.end()) return it->second;
    return scalars_[key] = constant("const_" + number_text(value), {}, {value});
  }
  int scalar_i32(int32_t value) {
    auto key = std::make_tuple(current_, 1, static_cast<float>(value));
    auto it = scalars_.find(key);
    if (it != scalars_.end()) return it->second;
    return scalars_[key] = constant_i32("const_i32_" + std::to_string(value), {}, {value});
  }
  // A weight [rows, cols]: float32, or int8 when `row_scales` (one per row) are given, with
  // one scale when they are all equal, else one per row (quantized_dimension 0).
  int weight(const std::string& name, Dims shape, const std::vector<float>& values,
             const std::vector<float>& row_scales);
  // A state tensor (is_variable, empty buffer: zero at start).
  int variable(const std::string& name, Dims shape) {
    int t = tensor(name, std::move(shape));
    sg().tensors[static_cast<size_t>(t)]->is_variable = true;
    return t;
  }

  fb::OperatorT* op(BuiltinOperator code, const std::vector<int32_t>& inputs,
                    const std::vector<int32_t>& outputs, fb::BuiltinOptionsUnion options = {}) {
    fb::OperatorT* o = add_op(opcode(static_cast<int32_t>(code), ""), inputs, outputs);
    o->builtin_options = std::move(options);
    return o;
  }
  template <typename OptionsT>
  fb::OperatorT* op(BuiltinOperator code, const std::vector<int32_t>& inputs,
                    const std::vector<int32_t>& outputs, OptionsT options) {
    fb::BuiltinOptionsUnion u;
    u.Set(std::move(options));
    return op(code, inputs, outputs, std::move(u));
  }
  fb::OperatorT* custom_op(const std::string& custom_code, const std::vector<int32_t>& inputs,
                           const std::vector<int32_t>& outputs, std::vector<uint8_t> options) {
    fb::OperatorT* o = add_op(opcode(kOpCustom, custom_code), inputs, outputs);
    o->custom_options = std::move(options);
    o->custom_options_format = fb::CustomOptionsFormat::FLEXBUFFERS;
    return o;
  }
  // The model's operator-code index for `code` (and `custom_code`), added when new.
  uint32_t opcode(int32_t code, const std::string& custom_code) {
    for (size_t i = 0; i < def_->operator_codes.size(); ++i) {
      const fb::OperatorCodeT& c = *def_->operator_codes[i];
      if (static_cast<int32_t>(c.builtin_code) == code && c.custom_code == custom_code) {
        return static_cast<uint32_t>(i);
      }
    }
    auto c = std::make_unique<fb::OperatorCodeT>();
    c->builtin_code = static_cast<BuiltinOperator>(code);
    c->custom_code = custom_code;
    c->version = 1;
    def_->operator_codes.push_back(std::move(c));
    return static_cast<uint32_t>(def_->operator_codes.size() - 1);
  }
  // kHoldOps: the ops written so far, in order, for the caller to splice in.
  std::vector<std::unique_ptr<fb::OperatorT>>& held_ops() { return held_ops_; }

 private:
  static std::string number_text(float value) {
    char text[32];
    snprintf(text, sizeof text, "%g", static_cast<double>(value));
    return text;
  }
  fb::OperatorT* add_op(uint32_t opcode_index, const std::vector<int32_t>& inputs,
                        const std::vector<int32_t>& outputs) {
    auto o = std::make_unique<fb::OperatorT>();
    o->opcode_index = opcode_index;
    o->inputs = inputs;
    o->outputs = outputs;
    auto& ops = hold_ops_ ? held_ops_ : sg().operators;
    ops.push_back(std::move(o));
    return ops.back().get();
  }

  ModelDef* def_;
  int current_ = 0;
  bool hold_ops_ = false;
  std::vector<std::unique_ptr<fb::OperatorT>> held_ops_;
  std::map<std::tuple<int, int, float>, int> scalars_;
};

// ---- Op emitters (each returns its output tensor) ------------------------------

Dims broadcast(const Dims& a, const Dims& b);
// ADD/SUB/MUL/LESS/MINIMUM/MAXIMUM (and other two-input ops without options).
int binary(GraphWriter& g, fb::BuiltinOperator code, int a, int b, const std::string& name);
int unary(GraphWriter& g, fb::BuiltinOperator code, int x, const std::string& name);
// FULLY_CONNECTED on a [B,in] row: out [B, rows of w]; b = -1 for no bias.
int fully_connected(GraphWriter& g, int x, int w, int b, const std::string& name,
                    fb::ActivationFunctionType activation = fb::ActivationFunctionType::NONE);
// SPLIT along the last axis into `parts` equal pieces.
std::vector<int> split(GraphWriter& g, int x, int parts, const std::string& name);
int reshape(GraphWriter& g, int x, const Dims& shape, const std::string& name);
// [1,T,F] -> [T,1,F], the converter's step to time-major before an RNN.
int transpose_time_major(GraphWriter& g, int x, const std::string& name);
// x[..., -1, ...] along `axis` of a rank-3 tensor, that dimension dropped
// (Keras' outputs[-1] / outputs[:, -1]), into `out` (-1: a new tensor `name`).
int last_step(GraphWriter& g, int x, int axis, const std::string& name, int out = -1);

}  // namespace gruwb::tools
