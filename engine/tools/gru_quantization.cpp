#include "engine/tools/gru_quantization.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/kernels/flexbuffer_map.h"

namespace gruwb::tools {
namespace {

// The op's inputs, as gru_custom.cpp numbers them.
enum Input { kX = 0, kInputKernel, kRecurrentKernel, kBias, kState };

struct Asymmetric {
  float scale = 1.f;
  int64_t zero_point = 0;
};

// TFLite's asymmetric int8 parameters for [min, max] widened to hold 0.
Asymmetric asymmetric_int8(float min, float max) {
  min = std::min(min, 0.f);
  max = std::max(max, 0.f);
  Asymmetric q;
  if (!(max > min)) return q;
  q.scale = (max - min) / 255.f;
  const double zp = std::round(-128.0 - static_cast<double>(min) / q.scale);
  q.zero_point = static_cast<int64_t>(std::clamp(zp, -128.0, 127.0));
  return q;
}

std::unique_ptr<fb::QuantizationParametersT> quantization(std::vector<float> scales,
                                                          std::vector<int64_t> zero_points) {
  auto q = std::make_unique<fb::QuantizationParametersT>();
  q->scale = std::move(scales);
  q->zero_point = std::move(zero_points);
  return q;
}

std::vector<float> constant_floats(const ModelDef& model, const fb::TensorT& t) {
  const std::vector<uint8_t>& data = model.buffers[t.buffer]->data;
  std::vector<float> values(data.size() / sizeof(float));
  if (!values.empty()) memcpy(values.data(), data.data(), values.size() * sizeof(float));
  return values;
}

bool is_constant(const ModelDef& model, const fb::TensorT& t) {
  return t.buffer > 0 && t.buffer < model.buffers.size() && !model.buffers[t.buffer]->data.empty();
}

// Weights [rows, cols] to int8, one symmetric scale per row: max |w| / 127.
void quantize_rows(const std::vector<float>& w, int32_t rows, int32_t cols, std::vector<int8_t>* q,
                   std::vector<float>* scales) {
  q->assign(w.size(), 0);
  scales->assign(static_cast<size_t>(rows), 1.f);
  for (int32_t r = 0; r < rows; ++r) {
    const float* row = w.data() + static_cast<size_t>(r) * cols;
    float max_abs = 0.f;
    for (int32_t i = 0; i < cols; ++i) max_abs = std::max(max_abs, std::fabs(row[i]));
    const float scale = max_abs > 0.f ? max_abs / 127.f : 1.f;
    (*scales)[static_cast<size_t>(r)] = scale;
    for (int32_t i = 0; i < cols; ++i) {
      const float v = std::round(row[i] / scale);
      (*q)[static_cast<size_t>(r) * cols + i] = static_cast<int8_t>(std::clamp(v, -127.f, 127.f));
    }
  }
}

template <typename T>
uint32_t add_buffer(ModelDef* model, const std::vector<T>& values) {
  auto buffer = std::make_unique<fb::BufferT>();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(values.data());
  buffer->data.assign(p, p + values.size() * sizeof(T));
  model->buffers.push_back(std::move(buffer));
  return static_cast<uint32_t>(model->buffers.size() - 1);
}

uint32_t opcode_index(ModelDef* model, BuiltinOperator code) {
  for (size_t i = 0; i < model->operator_codes.size(); ++i) {
    if (model->operator_codes[i]->builtin_code == code &&
        model->operator_codes[i]->custom_code.empty()) {
      return static_cast<uint32_t>(i);
    }
  }
  auto c = std::make_unique<fb::OperatorCodeT>();
  c->builtin_code = code;
  model->operator_codes.push_back(std::move(c));
  return static_cast<uint32_t>(model->operator_codes.size() - 1);
}

// The options the integer kernel supports, or why not (the kernel's own
// reader; prepare checks the rest of the map).
bool check_options(const std::vector<uint8_t>& bytes, std::string* why) {
  if (bytes.empty()) return true;
  FlexMap map;
  if (!map.parse(bytes.data(), bytes.size())) {
    *why = "custom options that are not a FlexBuffer map";
    return false;
  }
  FlexValue value;
  bool reset_after = true;
  const char* name = nullptr;
  if (map.find("reset_after", &value) && map.as_bool(value, &reset_after) && !reset_after) {
    *why = "reset_after=false";
  } else if (map.find("activation", &value) && map.as_string(value, &name) &&
             std::string(name) != "tanh") {
    *why = std::string("activation '") + name + "'";
  } else if (map.find("recurrent_activation", &value) && map.as_string(value, &name) &&
             std::string(name) != "sigmoid") {
    *why = std::string("recurrent_activation '") + name + "'";
  }
  return why->empty();
}

}  // namespace

bool quantize_gru_op(ModelDef* model, int subgraph, int op_index, const GruCalibration& calibration,
                     std::string* error) {
  char where[64];
  snprintf(where, sizeof where, "subgraph %d op %d", subgraph, op_index);
  auto fail = [&](const std::string& why) {
    *error = std::string(where) + ": " + why;
    return false;
  };
  if (subgraph < 0 || static_cast<size_t>(subgraph) >= model->subgraphs.size()) {
    return fail("no such subgraph");
  }
  fb::SubGraphT& sg = *model->subgraphs[static_cast<size_t>(subgraph)];
  if (op_index < 0 || static_cast<size_t>(op_index) >= sg.operators.size()) {
    return fail("no such op");
  }
  fb::OperatorT& op = *sg.operators[static_cast<size_t>(op_index)];
  const fb::OperatorCodeT& code = *model->operator_codes[op.opcode_index];
  if (code.builtin_code != BuiltinOperator::CUSTOM || code.custom_code != "GRUWB_GRU") {
    return fail("not a GRUWB_GRU op");
  }
  std::string why;
  if (!check_options(op.custom_options, &why)) {
    return fail("the integer GRU needs reset_after, sigmoid and tanh; this op has " + why);
  }
  const auto input = [&](int i) -> fb::TensorT* {
    if (static_cast<size_t>(i) >= op.inputs.size() || op.inputs[static_cast<size_t>(i)] < 0) {
      return nullptr;
    }
    return sg.tensors[static_cast<size_t>(op.inputs[static_cast<size_t>(i)])].get();
  };
  fb::TensorT* x = input(kX);
  fb::TensorT* wx = input(kInputKernel);
  fb::TensorT* wh = input(kRecurrentKernel);
  fb::TensorT* bias = input(kBias);
  fb::TensorT* state = input(kState);
  fb::TensorT* output = sg.tensors[static_cast<size_t>(op.outputs.at(0))].get();
  if (!x || !wx || !wh) return fail("inputs 0-2 (x, kernel, recurrent kernel) are required");
  if (x->type != TensorType::FLOAT32 && x->type != TensorType::INT8) {
    return fail("input x '" + x->name + "' is " + tensor_type_name(x->type));
  }
  for (fb::TensorT* w : {wx, wh}) {
    if (w->type != TensorType::FLOAT32 || !is_constant(*model, *w) || w->shape.size() != 2) {
      return fail("weights '" + w->name + "' must be a constant float32 matrix");
    }
  }
  const int32_t gates = wh->shape[0];
  const int32_t units = wh->shape[1];
  const int32_t input_size = wx->shape[1];
  if (gates != 3 * units || wx->shape[0] != gates) {
    return fail("weights '" + wx->name + "' and '" + wh->name + "' are not [3H,I] and [3H,H]");
  }
  // Input scale: the file's when x is int8 already, else the calibration's.
  Asymmetric xq;
  if (x->type == TensorType::INT8) {
    if (!x->quantization || x->quantization->scale.size() != 1) {
      return fail("int8 input x '" + x->name + "' has no single scale");
    }
    xq.scale = x->quantization->scale[0];
    xq.zero_point = x->quantization->zero_point.empty() ? 0 : x->quantization->zero_point[0];
  } else {
    if (!(calibration.x_max > calibration.x_min)) return fail("the x range is empty");
    xq = asymmetric_int8(calibration.x_min, calibration.x_max);
  }
  std::vector<int8_t> wx_q, wh_q;
  std::vector<float> wx_scales, wh_scales;
  quantize_rows(constant_floats(*model, *wx), gates, input_size, &wx_q, &wx_scales);
  quantize_rows(constant_floats(*model, *wh), gates, units, &wh_q, &wh_scales);
  // Bias rows at the scales of the products they join: s_x s_wx[r], 2^-15 s_wh[r].
  std::vector<int32_t> bias_q(static_cast<size_t>(2 * gates), 0);
  if (bias) {
    if (bias->type != TensorType::FLOAT32 || !is_constant(*model, *bias) ||
        bias->shape != std::vector<int32_t>{2, gates}) {
      return fail("bias '" + bias->name + "' must be a constant float32 [2,3H]");
    }
    const std::vector<float> b = constant_floats(*model, *bias);
    for (int32_t i = 0; i < 2 * gates; ++i) {
      const int32_t r = i % gates;
      const double scale = i < gates ? static_cast<double>(xq.scale) * wx_scales[r]
                                     : static_cast<double>(wh_scales[r]) / 32768.0;
      const double v = std::round(static_cast<double>(b[static_cast<size_t>(i)]) / scale);
      // Half of int32: room for the kernel's folded zero point term.
      if (std::fabs(v) > 2147483647.0 / 2) return fail("bias '" + bias->name + "' overflows int32");
      bias_q[static_cast<size_t>(i)] = static_cast<int32_t>(v);
    }
  }
  std::vector<int16_t> state_q;
  if (state) {
    if (state->type != TensorType::FLOAT32) {
      return fail("initial state '" + state->name + "' is " + tensor_type_name(state->type));
    }
    if (is_constant(*model, *state)) {
      for (float v : constant_floats(*model, *state)) {
        state_q.push_back(
            static_cast<int16_t>(std::clamp(std::round(v * 32768.f), -32768.f, 32767.f)));
      }
    }
  }

  // Every check passed: rewrite.
  wx->type = wh->type = TensorType::INT8;
  wx->buffer = add_buffer(model, wx_q);
  wh->buffer = add_buffer(model, wh_q);
  wx->quantization = quantization(wx_scales, std::vector<int64_t>(wx_scales.size(), 0));
  wh->quantization = quantization(wh_scales, std::vector<int64_t>(wh_scales.size(), 0));
  if (bias) {
    bias->type = TensorType::INT32;
    bias->buffer = add_buffer(model, bias_q);
    bias->quantization.reset();  // scales implied by x and the weights (docs/fused-gru-op.md)
  }
  if (state) {
    state->type = TensorType::INT16;
    if (!state_q.empty()) state->buffer = add_buffer(model, state_q);
    state->quantization = quantization({1.f / 32768.f}, {0});
  }
  auto output_quantization = [&] {
    if (calibration.int16_output) return quantization({1.f / 32768.f}, {0});
    const bool given = calibration.output_max > calibration.output_min;
    const Asymmetric q = asymmetric_int8(given ? calibration.output_min : -1.f,
                                         given ? calibration.output_max : 1.f);
    return quantization({q.scale}, {q.zero_point});
  };
  const TensorType output_type = calibration.int16_output ? TensorType::INT16 : TensorType::INT8;
  const bool x_float = x->type == TensorType::FLOAT32;
  if (!calibration.float_boundaries) {
    x->type = TensorType::INT8;
    x->quantization = quantization({xq.scale}, {xq.zero_point});
    output->type = output_type;
    output->quantization = output_quantization();
    return true;
  }
  // QUANTIZE x -> int8 copy; the op writes an integer copy of its output,
  // DEQUANTIZE gives the float tensor back to its consumers.
  auto add_tensor = [&](const fb::TensorT& like, const std::string& suffix, TensorType type,
                        std::unique_ptr<fb::QuantizationParametersT> q) {
    auto t = std::make_unique<fb::TensorT>();
    t->name = like.name + suffix;
    t->shape = like.shape;
    t->type = type;
    t->quantization = std::move(q);
    sg.tensors.push_back(std::move(t));
    return static_cast<int32_t>(sg.tensors.size() - 1);
  };
  const int32_t output_index = op.outputs[0];
  const int32_t output_q = add_tensor(*output, "/int", output_type, output_quantization());
  op.outputs[0] = output_q;
  auto dequantize = std::make_unique<fb::OperatorT>();
  dequantize->opcode_index = opcode_index(model, BuiltinOperator::DEQUANTIZE);
  dequantize->inputs = {output_q};
  dequantize->outputs = {output_index};
  sg.operators.insert(sg.operators.begin() + op_index + 1, std::move(dequantize));
  if (x_float) {
    const int32_t x_index = op.inputs[kX];
    const int32_t x_q =
        add_tensor(*x, "/int8", TensorType::INT8, quantization({xq.scale}, {xq.zero_point}));
    op.inputs[kX] = x_q;
    auto quantize = std::make_unique<fb::OperatorT>();
    quantize->opcode_index = opcode_index(model, BuiltinOperator::QUANTIZE);
    quantize->inputs = {x_index};
    quantize->outputs = {x_q};
    sg.operators.insert(sg.operators.begin() + op_index, std::move(quantize));
  }
  return true;
}

}  // namespace gruwb::tools
