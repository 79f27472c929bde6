#pragma once
// Exporters: a model as a C array (xxd -i style, a header and a source file),
// as .tflite or .circle (converting what has to change between the two), and
// its weight tensors as NumPy .npy files with a manifest. docs/export.md.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/model_writer.h"
#include "engine/tools/npy.h"

namespace gruwb::tools {

// xxd -i's naming rule: every character that is not a letter or digit
// becomes '_', and a leading digit gets a '_' prefix ("2gru.tflite" ->
// "_2gru_tflite").
std::string c_identifier(const std::string& text);

// The pair for `name`:
//   header: extern const unsigned char name[]; extern const unsigned int name_len;
//   source: alignas(16) const unsigned char name[] = {0x54, ...}; name_len = N;
// Both compile as C11 and C++11 (the header wraps extern "C"). The 16-byte
// alignment lets the engine read weights in place. `header_file` is the name
// the source #includes.
struct CArrayFiles {
  std::string header;
  std::string source;
};
CArrayFiles c_array_files(const std::vector<uint8_t>& bytes, const std::string& name,
                          const std::string& header_file);

// Rewrites a model for `target`. To .tflite: Circle GRU ops (-5) become the
// GRUWB_GRU custom op (time-major input, bias [2,3H], options from the GRU op);
// any other Circle-only op or tensor type is an error naming it. To .circle:
// the graph is kept (a GRUWB_GRU stays the custom op). `notes` lists what was
// changed, one line each.
bool convert_model(const std::vector<uint8_t>& bytes, ModelFormat target, std::vector<uint8_t>* out,
                   std::vector<std::string>* notes, std::string* error);

// One exported constant tensor.
struct WeightArray {
  std::string file_name;  // "<sanitised tensor name>.npy", unique within the export
  std::string tensor_name;
  int subgraph = 0;
  int tensor = -1;
  std::string type;  // "FLOAT32", ...
  NpyArray array;
  std::vector<float> scales;  // quantization, if any
  std::vector<int64_t> zero_points;
};

// Every weight tensor of the model: constant tensors of float, int8, uint8 and
// bool types, and int32/int64 constants of rank >= 1 with more than 8
// elements (biases of quantized models, not shape or axis operands).
// `skipped` lists constants whose type NumPy files here cannot carry.
bool weight_arrays(const std::vector<uint8_t>& bytes, std::vector<WeightArray>* out,
                   std::vector<std::string>* skipped, std::string* error);

// manifest.json for the arrays: model, and per file its tensor, subgraph,
// shape, dtype and quantization.
std::string weight_manifest_json(const std::string& model_name,
                                 const std::vector<WeightArray>& arrays,
                                 const std::vector<std::string>& skipped);

}  // namespace gruwb::tools
