#pragma once
// Hybrid models keep their weights in INT8 with scales and compute in float.
// Training needs float weights, so `dequantize_hybrid_weights` turns every
// constant INT8 tensor that a float op reads as a weight into a float32
// tensor holding scale * (q - zero_point) (per channel along the quantized
// dimension, or per tensor). Full-integer models (INT8 activations) are left
// alone: their int8 tensors are not weights of float ops.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/model_writer.h"

namespace gruwb::tools {

struct DequantizeResult {
  int tensors = 0;      // INT8 weight tensors turned into float32
  uint64_t values = 0;  // their elements
  std::vector<std::string> names;
};

// scale * (q - zero_point) of an INT8 tensor's bytes, per channel along its quantized
// dimension or per tensor; false (naming the tensor) when the scales fit no axis.
bool dequantize_int8(const fb::TensorT& tensor, const std::vector<uint8_t>& data,
                     std::vector<float>* values, std::string* error);

// Edits `model` in place. Fails (naming the tensor) on a scale count that fits no axis.
bool dequantize_hybrid_weights(ModelDef* model, DequantizeResult* result, std::string* error);

// The same on a file's bytes; `out` is `bytes` unchanged when nothing is hybrid.
bool dequantize_hybrid_model(const std::vector<uint8_t>& bytes, std::vector<uint8_t>* out,
                             DequantizeResult* result, std::string* error);

}  // namespace gruwb::tools
