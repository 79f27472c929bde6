#pragma once
// Hybrid models keep their weights in INT8 with scales and compute in float.
// Training needs float weights, so `dequantize_hybrid_weights` turns every
// constant INT8 tensor that a float op reads as a weight into a float32
// tensor holding scale * (q - zero_point) (per channel along the quantized
// dimension, or per tensor). Full-integer models (INT8 activations) are left
// alone by it: float_form_of_integer_graphs gives them their float form.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/model_writer.h"

namespace gruwb::tools {

struct DequantizeResult {
  int tensors = 0;      // INT8 weight tensors of float ops turned into float32 (hybrid)
  uint64_t values = 0;  // their elements
  std::vector<std::string> names;
  int integer_tensors = 0;  // full-integer parts: quantized tensors given float32
  int dropped_ops = 0;      // and the QUANTIZE/DEQUANTIZE ops that became copies
};

// scale * (q - zero_point) of a quantized integer tensor's bytes (INT8, UINT8, INT16, INT32,
// INT64), per channel along its quantized dimension or per tensor; false (naming the tensor)
// when the scales fit no axis.
bool dequantize_values(const fb::TensorT& tensor, const std::vector<uint8_t>& data,
                       std::vector<float>* values, std::string* error);

// Edits `model` in place, adding to `result`. Fails (naming the tensor) on a scale count
// that fits no axis.
bool dequantize_hybrid_weights(ModelDef* model, DequantizeResult* result, std::string* error);

// Does any subgraph compute in integers (a quantized tensor without data: an activation or
// state)?
bool has_integer_activations(const ModelDef& model);

// Full-integer models compute in INT8/UINT8/INT16 with scales on every tensor. Their float
// form, which training needs: every quantized tensor becomes float32 holding its real values
// (constants scale * (q - zero_point), biases included; activations and states without
// scales), ops lose their intermediates (the integer LSTM's gate scales), and QUANTIZE and
// DEQUANTIZE, now copies, are dropped. Model inputs and outputs become float32 in real
// units. Nothing happens to a model without integer activations.
bool float_form_of_integer_graphs(ModelDef* model, DequantizeResult* result, std::string* error);

// The same on a file's bytes; `out` is `bytes` unchanged when nothing is hybrid.
bool dequantize_hybrid_model(const std::vector<uint8_t>& bytes, std::vector<uint8_t>* out,
                             DequantizeResult* result, std::string* error);
// Both: the float32 model that training runs (`out` is `bytes` when it is float already).
bool float_training_model(const std::vector<uint8_t>& bytes, std::vector<uint8_t>* out,
                          DequantizeResult* result, std::string* error);

}  // namespace gruwb::tools
