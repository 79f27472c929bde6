#include "engine/tools/dequantize.h"

#include <algorithm>
#include <cstring>

#include "engine/tools/fuser.h"

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

// An INT8/UINT8/INT16/INT32/INT64 tensor with scales: a full-integer model's activation,
// state, weight or bias.
bool is_quantized_integer(const fb::TensorT& t) {
  const bool integer = t.type == TensorType::INT8 || t.type == TensorType::UINT8 ||
                       t.type == TensorType::INT16 || t.type == TensorType::INT32 ||
                       t.type == TensorType::INT64;
  return integer && t.quantization && !t.quantization->scale.empty();
}

bool has_data(const ModelDef& model, const fb::TensorT& t) {
  return t.buffer != 0 && t.buffer < model.buffers.size() && !model.buffers[t.buffer]->data.empty();
}

// `t` holds `values` as float32 from now on, in a new buffer (the old one may be shared).
void set_float_values(ModelDef* model, fb::TensorT* t, const std::vector<float>& values) {
  // Buffer 0 is the empty sentinel ("no data"), even in a file that has no buffers at all.
  if (model->buffers.empty()) model->buffers.push_back(std::make_unique<fb::BufferT>());
  auto buffer = std::make_unique<fb::BufferT>();
  buffer->data.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(buffer->data.data(), values.data(), buffer->data.size());
  model->buffers.push_back(std::move(buffer));
  t->buffer = static_cast<uint32_t>(model->buffers.size() - 1);
  t->type = TensorType::FLOAT32;
}

// Every reference to tensor `from` (op inputs and outputs, the subgraph's inputs and outputs)
// made to `to`.
void redirect(fb::SubGraphT* sg, int32_t from, int32_t to) {
  auto swap = [&](std::vector<int32_t>* list) {
    for (int32_t& t : *list) t = t == from ? to : t;
  };
  for (auto& op : sg->operators) {
    swap(&op->inputs);
    swap(&op->outputs);
  }
  swap(&sg->inputs);
  swap(&sg->outputs);
}

bool contains(const std::vector<int32_t>& list, int32_t t) {
  return std::find(list.begin(), list.end(), t) != list.end();
}

// After its tensors are float32, a QUANTIZE or DEQUANTIZE copies its input: its readers read
// the input instead, or, when its output is a subgraph output (a model's named result), the
// input's producer writes that output.
bool drop_conversions(const ModelDef& model, fb::SubGraphT* sg, DequantizeResult* result,
                      std::string* error) {
  std::vector<bool> dropped(sg->operators.size(), false);
  for (size_t o = 0; o < sg->operators.size(); ++o) {
    fb::OperatorT& op = *sg->operators[o];
    const bool known = op.opcode_index < model.operator_codes.size();
    const BuiltinOperator code =
        known ? model.operator_codes[op.opcode_index]->builtin_code : BuiltinOperator::CUSTOM;
    if ((code != BuiltinOperator::QUANTIZE && code != BuiltinOperator::DEQUANTIZE) ||
        op.inputs.size() != 1 || op.outputs.size() != 1 || op.inputs[0] < 0 || op.outputs[0] < 0) {
      continue;
    }
    const int32_t in = op.inputs[0], out = op.outputs[0];
    const int32_t tensors = static_cast<int32_t>(sg->tensors.size());
    if (in >= tensors || out >= tensors) continue;  // the loader refuses such files
    // Only a conversion between what is now float32 on both sides is a copy (not, say, the
    // DEQUANTIZE of float16 weights).
    if (sg->tensors[static_cast<size_t>(in)]->type != TensorType::FLOAT32 ||
        sg->tensors[static_cast<size_t>(out)]->type != TensorType::FLOAT32) {
      continue;
    }
    const auto produced = [&](int32_t t) {
      for (const auto& other : sg->operators) {
        if (other.get() != &op && contains(other->outputs, t)) return true;
      }
      return false;
    };
    const bool out_is_result = contains(sg->outputs, out);
    // A result must stay some op's output: its producer takes it over, if there is one.
    if (out_is_result && (contains(sg->inputs, in) || contains(sg->outputs, in) || !produced(in))) {
      *error = std::string(EnumNameBuiltinOperator(code)) + " from '" +
               sg->tensors[static_cast<size_t>(in)]->name + "' straight to the result '" +
               sg->tensors[static_cast<size_t>(out)]->name + "' has no float form";
      return false;
    }
    op.inputs.clear();
    op.outputs.clear();
    if (out_is_result) {
      redirect(sg, in, out);
    } else {
      redirect(sg, out, in);
    }
    dropped[o] = true;
    ++result->dropped_ops;
  }
  std::vector<std::unique_ptr<fb::OperatorT>> kept;
  for (size_t o = 0; o < sg->operators.size(); ++o) {
    if (!dropped[o]) kept.push_back(std::move(sg->operators[o]));
  }
  sg->operators = std::move(kept);
  return true;
}

// The row scales of a quantized weight tensor (one per row, or one for all), or empty.
std::vector<float> row_scales(const fb::TensorT& w, size_t rows) {
  if (!w.quantization || w.quantization->scale.empty()) return {};
  const std::vector<float>& scale = w.quantization->scale;
  if (scale.size() == 1) return std::vector<float>(rows, scale[0]);
  if (scale.size() == rows && w.quantization->quantized_dimension == 0) return scale;
  return {};
}

// The integer GRU (Circle GRU, GRUWB_GRU; engine/kernels/gru_integer.h) keeps what has no
// scales of its own: int32 biases at x_scale * W_x's row scale (b_x) and 2^-15 * W_h's (b_h),
// and an int16 state and output in Q0.15. They get their real values here, before the
// generic pass, which reads the scales of x and the weights.
bool float_form_of_integer_grus(ModelDef* model, fb::SubGraphT* sg, DequantizeResult* result,
                                std::string* error) {
  const auto tensor = [&](int32_t t) -> fb::TensorT* {
    return t >= 0 && static_cast<size_t>(t) < sg->tensors.size()
               ? sg->tensors[static_cast<size_t>(t)].get()
               : nullptr;
  };
  for (const auto& op : sg->operators) {
    if (op->opcode_index >= model->operator_codes.size()) continue;
    const fb::OperatorCodeT& code = *model->operator_codes[op->opcode_index];
    const bool circle = code.builtin_code == BuiltinOperator::GRU;
    const bool ours =
        code.builtin_code == BuiltinOperator::CUSTOM && code.custom_code == "GRUWB_GRU";
    const auto in = [&](size_t k) {
      return k < op->inputs.size() ? tensor(op->inputs[k]) : nullptr;
    };
    fb::TensorT* x = in(0);
    fb::TensorT* wx = in(1);
    fb::TensorT* wh = in(circle ? 3 : 2);
    if ((!circle && !ours) || !x || !wx || !wh || x->type != TensorType::INT8 ||
        !is_quantized_integer(*x) || wx->shape.size() != 2 || wx->shape[0] <= 0 ||
        wx->shape[0] > (1 << 24)) {
      continue;  // not an integer GRU, or one its kernel refuses: the generic pass does the rest
    }
    const size_t gates = static_cast<size_t>(wx->shape[0]);
    const std::vector<float> sx = row_scales(*wx, gates), sh = row_scales(*wh, gates);
    if (sx.empty() || sh.empty()) {
      *error = "integer GRU '" + x->name + "': its weights have no row scales";
      return false;
    }
    const double x_scale = x->quantization->scale[0];
    // A bias tensor and the scale of each of its values.
    struct Part {
      fb::TensorT* bias;
      std::vector<double> scale;
    };
    std::vector<Part> parts;
    std::vector<double> bx(gates), bh(gates);
    for (size_t r = 0; r < gates; ++r) {
      bx[r] = x_scale * sx[r];
      bh[r] = sh[r] / 32768.0;
    }
    if (circle) {
      parts.push_back({in(2), bx});
      parts.push_back({in(4), bh});
    } else {
      std::vector<double> both = bx;
      both.insert(both.end(), bh.begin(), bh.end());
      parts.push_back({in(3), both});
    }
    for (const Part& part : parts) {
      fb::TensorT* b = part.bias;
      if (!b || b->type != TensorType::INT32 || is_quantized_integer(*b)) continue;
      if (has_data(*model, *b)) {
        const std::vector<uint8_t>& data = model->buffers[b->buffer]->data;
        if (data.size() != 4 * part.scale.size()) {
          *error = "integer GRU bias '" + b->name + "' has " + std::to_string(data.size() / 4) +
                   " values, expected " + std::to_string(part.scale.size());
          return false;
        }
        std::vector<float> values(part.scale.size());
        for (size_t r = 0; r < values.size(); ++r) {
          int32_t q;
          std::memcpy(&q, data.data() + 4 * r, 4);
          values[r] = static_cast<float>(q * part.scale[r]);
        }
        set_float_values(model, b, values);
      }
      b->type = TensorType::FLOAT32;
      ++result->integer_tensors;
    }
    // Q0.15 state (an input) and output: real = q / 32768.
    fb::TensorT* state = in(circle ? 5 : 4);
    for (fb::TensorT* t : {state, op->outputs.empty() ? nullptr : tensor(op->outputs[0])}) {
      if (!t || t->type != TensorType::INT16 || is_quantized_integer(*t)) continue;
      if (has_data(*model, *t)) {
        const std::vector<uint8_t>& data = model->buffers[t->buffer]->data;
        std::vector<float> real(data.size() / 2);
        for (size_t k = 0; k < real.size(); ++k) {
          int16_t q;
          std::memcpy(&q, data.data() + 2 * k, 2);
          real[k] = q / 32768.f;
        }
        set_float_values(model, t, real);
      }
      t->type = TensorType::FLOAT32;
      ++result->integer_tensors;
    }
  }
  return true;
}

}  // namespace

bool has_integer_activations(const ModelDef& model) {
  for (const auto& sg : model.subgraphs) {
    for (const auto& t : sg->tensors) {
      if (is_quantized_integer(*t) && !has_data(model, *t)) return true;
    }
  }
  return false;
}

bool dequantize_values(const fb::TensorT& tensor, const std::vector<uint8_t>& data,
                       std::vector<float>* values, std::string* error) {
  static const fb::QuantizationParametersT kNone;
  const fb::QuantizationParametersT& q = tensor.quantization ? *tensor.quantization : kNone;
  if (q.scale.empty()) return *error = "tensor '" + tensor.name + "' has no scale", false;
  size_t width = 0;
  switch (tensor.type) {
    case TensorType::INT8:
    case TensorType::UINT8: width = 1; break;
    case TensorType::INT16: width = 2; break;
    case TensorType::INT32: width = 4; break;
    case TensorType::INT64: width = 8; break;
    default:
      return *error = "tensor '" + tensor.name + "' is " + fb::EnumNameTensorType(tensor.type) +
                      ", not a quantized integer type",
             false;
  }
  if (data.size() % width != 0) {
    return *error = "tensor '" + tensor.name + "': its bytes do not fill its elements", false;
  }
  const size_t count = data.size() / width;
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
    if (inner == 0 || count % (inner * channels) != 0) {
      return *error = "tensor '" + tensor.name + "': its bytes do not fill its shape", false;
    }
  }
  values->resize(count);
  const uint8_t* p = data.data();
  for (size_t i = 0; i < count; ++i, p += width) {
    int64_t v = 0;
    switch (tensor.type) {
      case TensorType::UINT8: v = *p; break;
      case TensorType::INT8: v = static_cast<int8_t>(*p); break;
      case TensorType::INT16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        v = x;
        break;
      }
      case TensorType::INT32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v = x;
        break;
      }
      default: std::memcpy(&v, p, 8); break;
    }
    const size_t c = channels > 1 ? (i / inner) % channels : 0;
    const int64_t zero = c < q.zero_point.size() ? q.zero_point[c] : 0;
    (*values)[i] =
        static_cast<float>(q.scale[c] * (static_cast<double>(v) - static_cast<double>(zero)));
  }
  return true;
}

bool dequantize_hybrid_weights(ModelDef* model, DequantizeResult* result, std::string* error) {
  for (auto& sg : model->subgraphs) {
    for (size_t t = 0; t < sg->tensors.size(); ++t) {
      if (!is_hybrid_weight(*model, *sg, static_cast<int>(t))) continue;
      fb::TensorT& tensor = *sg->tensors[t];
      const size_t n = model->buffers[tensor.buffer]->data.size();
      std::vector<float> values;
      if (!dequantize_values(tensor, model->buffers[tensor.buffer]->data, &values, error)) {
        return false;
      }
      set_float_values(model, &tensor, values);
      tensor.quantization.reset();
      ++result->tensors;
      result->values += n;
      result->names.push_back(tensor.name);
    }
  }
  return true;
}

bool float_form_of_integer_graphs(ModelDef* model, DequantizeResult* result, std::string* error) {
  if (!has_integer_activations(*model)) return true;
  for (auto& sg : model->subgraphs) {
    if (!float_form_of_integer_grus(model, sg.get(), result, error)) return false;
    for (auto& tensor : sg->tensors) {
      fb::TensorT& t = *tensor;
      if (!is_quantized_integer(t)) continue;
      if (has_data(*model, t)) {
        std::vector<float> values;
        if (!dequantize_values(t, model->buffers[t.buffer]->data, &values, error)) return false;
        set_float_values(model, &t, values);
      }
      t.type = TensorType::FLOAT32;
      t.quantization.reset();
      ++result->integer_tensors;
    }
    // The integer LSTM's intermediates carry the scales of its gates; float kernels take none.
    for (auto& op : sg->operators) op->intermediates.clear();
    if (!drop_conversions(*model, sg.get(), result, error)) return false;
  }
  return true;
}

namespace {

bool rewrite(const std::vector<uint8_t>& bytes, bool integer_graphs, std::vector<uint8_t>* out,
             DequantizeResult* result, std::string* error) {
  *result = DequantizeResult();
  Model model;
  Status s = Model::load(bytes.data(), bytes.size(), &model);
  if (!s.ok()) return *error = s.message(), false;
  ModelDef def;
  if (!unpack_model(model, &def, error)) return false;
  if (!dequantize_hybrid_weights(&def, result, error)) return false;
  if (integer_graphs && !float_form_of_integer_graphs(&def, result, error)) return false;
  if (result->tensors == 0 && result->integer_tensors == 0) {
    *out = bytes;
    return true;
  }
  // The old int8 buffers stay referenced by nobody; the writer keeps them, so drop them.
  std::vector<bool> used(def.buffers.size(), false);
  if (!used.empty()) used[0] = true;
  for (const auto& sg : def.subgraphs) {
    for (const auto& t : sg->tensors) {
      if (t->buffer < used.size()) used[t->buffer] = true;
    }
  }
  for (size_t b = 1; b < def.buffers.size(); ++b) {
    if (!used[b]) def.buffers[b]->data.clear();
  }
  if (result->dropped_ops > 0) remove_unused(&def);
  return write_model(def, model.format(), out, error);
}

}  // namespace

bool dequantize_hybrid_model(const std::vector<uint8_t>& bytes, std::vector<uint8_t>* out,
                             DequantizeResult* result, std::string* error) {
  return rewrite(bytes, false, out, result, error);
}

bool float_training_model(const std::vector<uint8_t>& bytes, std::vector<uint8_t>* out,
                          DequantizeResult* result, std::string* error) {
  return rewrite(bytes, true, out, result, error);
}

}  // namespace gruwb::tools
