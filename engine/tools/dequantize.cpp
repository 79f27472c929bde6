#include "engine/tools/dequantize.h"

#include <cstring>

namespace gruwb::tools {
namespace {

using fb::TensorType;

// A constant INT8 tensor with scales, read by an op whose first input is float32 (a hybrid
// op: float activations, int8 weights).
bool is_hybrid_weight(const ModelDef& model, const fb::SubGraphT& sg, int t) {
  const fb::TensorT& tensor = *sg.tensors[static_cast<size_t>(t)];
  if (tensor.type != TensorType::INT8 || tensor.buffer == 0 ||
      tensor.buffer >= model.buffers.size() || model.buffers[tensor.buffer]->data.empty() ||
      !tensor.quantization || tensor.quantization->scale.empty()) {
    return false;
  }
  bool read_by_float_op = false;
  for (const auto& op : sg.operators) {
    for (size_t i = 1; i < op->inputs.size(); ++i) {
      if (op->inputs[i] != t) continue;
      const int first = op->inputs[0];
      if (first < 0 || static_cast<size_t>(first) >= sg.tensors.size()) return false;
      if (sg.tensors[static_cast<size_t>(first)]->type != TensorType::FLOAT32) return false;
      read_by_float_op = true;
    }
    if (!op->inputs.empty() && op->inputs[0] == t) return false;  // an activation, not a weight
  }
  return read_by_float_op;
}

}  // namespace

bool dequantize_int8(const fb::TensorT& tensor, const std::vector<uint8_t>& data,
                     std::vector<float>* values, std::string* error) {
  static const fb::QuantizationParametersT kNone;
  const fb::QuantizationParametersT& q = tensor.quantization ? *tensor.quantization : kNone;
  if (q.scale.empty()) return *error = "tensor '" + tensor.name + "' has no scale", false;
  // Elements per channel step along the quantized dimension (C order).
  const size_t channels = q.scale.size();
  size_t inner = 1;
  if (channels > 1) {
    const int axis = q.quantized_dimension;
    if (axis < 0 || static_cast<size_t>(axis) >= tensor.shape.size() ||
        tensor.shape[static_cast<size_t>(axis)] != static_cast<int32_t>(channels)) {
      *error = "tensor '" + tensor.name + "': " + std::to_string(channels) +
               " scales do not match dimension " + std::to_string(axis) + " of its shape";
      return false;
    }
    for (size_t d = static_cast<size_t>(axis) + 1; d < tensor.shape.size(); ++d) {
      inner *= static_cast<size_t>(tensor.shape[d]);
    }
    if (inner == 0 || data.size() != inner * channels * (data.size() / (inner * channels))) {
      return *error = "tensor '" + tensor.name + "': its bytes do not fill its shape", false;
    }
  }
  values->resize(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    const size_t c = channels > 1 ? (i / inner) % channels : 0;
    const int64_t zero = c < q.zero_point.size() ? q.zero_point[c] : 0;
    (*values)[i] = q.scale[c] * static_cast<float>(static_cast<int8_t>(data[i]) - zero);
  }
  return true;
}

bool dequantize_hybrid_weights(ModelDef* model, DequantizeResult* result, std::string* error) {
  *result = DequantizeResult();
  for (auto& sg : model->subgraphs) {
    for (size_t t = 0; t < sg->tensors.size(); ++t) {
      if (!is_hybrid_weight(*model, *sg, static_cast<int>(t))) continue;
      fb::TensorT& tensor = *sg->tensors[t];
      const size_t n = model->buffers[tensor.buffer]->data.size();
      std::vector<float> values;
      if (!dequantize_int8(tensor, model->buffers[tensor.buffer]->data, &values, error)) {
        return false;
      }
      auto buffer = std::make_unique<fb::BufferT>();
      buffer->data.resize(n * sizeof(float));
      if (n > 0) std::memcpy(buffer->data.data(), values.data(), buffer->data.size());
      model->buffers.push_back(std::move(buffer));
      tensor.buffer = static_cast<uint32_t>(model->buffers.size() - 1);
      tensor.type = TensorType::FLOAT32;
      tensor.quantization.reset();
      ++result->tensors;
      result->values += n;
      result->names.push_back(tensor.name);
    }
  }
  return true;
}

bool dequantize_hybrid_model(const std::vector<uint8_t>& bytes, std::vector<uint8_t>* out,
                             DequantizeResult* result, std::string* error) {
  Model model;
  Status s = Model::load(bytes.data(), bytes.size(), &model);
  if (!s.ok()) return *error = s.message(), false;
  ModelDef def;
  if (!unpack_model(model, &def, error)) return false;
  if (!dequantize_hybrid_weights(&def, result, error)) return false;
  if (result->tensors == 0) {
    *out = bytes;
    return true;
  }
  // The old int8 buffers stay referenced by nobody; the writer keeps them, so drop them.
  std::vector<bool> used(def.buffers.size(), false);
  used[0] = true;
  for (const auto& sg : def.subgraphs) {
    for (const auto& t : sg->tensors) {
      if (t->buffer < used.size()) used[t->buffer] = true;
    }
  }
  for (size_t b = 1; b < def.buffers.size(); ++b) {
    if (!used[b]) def.buffers[b]->data.clear();
  }
  return write_model(def, model.format(), out, error);
}

}  // namespace gruwb::tools
