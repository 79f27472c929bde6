#pragma once
// A verified, validated, zero-copy view over a .tflite (TFL3) or .circle (CIR0)
// flatbuffer. Model::load() is the only way in: it runs the flatbuffers
// Verifier and then checks the format's semantic rules (indices in range,
// buffer sizes matching shapes, control-flow subgraphs valid and acyclic), so
// everything reachable through a loaded Model can be used without checks.
// The model bytes are borrowed and must outlive the Model. No heap is used.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/model/checked_size.h"
#include "engine/model/status.h"
#include "engine/model/tensor_type.h"
#include "engine/schema/model_generated.h"

namespace gruwb {

enum class ModelFormat : uint8_t { kTflite, kCircle };
const char* model_format_name(ModelFormat format);  // "tflite" / "circle"

// Read-only contiguous range (flatbuffer vectors are little-endian, as are all
// our targets).
template <typename T>
struct Span {
  const T* data = nullptr;
  size_t size = 0;

  const T& operator[](size_t i) const { return data[i]; }
  const T* begin() const { return data; }
  const T* end() const { return data + size; }
  bool empty() const { return size == 0; }
};

// Op codes that have names in our schema; any int32 may appear in a file.
using BuiltinOperator = fb::BuiltinOperator;
constexpr int32_t kOpCustom = static_cast<int32_t>(BuiltinOperator::CUSTOM);

// "FULLY_CONNECTED", "GRU" (Circle), ...; nullptr for codes our schema does not name.
const char* op_code_name(int32_t op_code);

// Op code decoding rules of each format (see docs/model-format.md):
// TFLite max(builtin_code, deprecated_builtin_code); Circle
// deprecated == 127 ? builtin_code : (int8)deprecated.
int32_t decode_op_code(int8_t deprecated_builtin_code, int32_t builtin_code, ModelFormat format);

struct TensorView {
  int index = -1;
  const char* name = "";  // never null
  Span<int32_t> shape;
  Span<int32_t> shape_signature;  // empty when the file has none
  TensorType type = TensorType::FLOAT32;
  uint32_t buffer = 0;
  Span<uint8_t> data;  // constant data; empty for activations and variables
  bool is_variable = false;
  bool is_sparse = false;
  const fb::QuantizationParameters* quantization = nullptr;  // may be null
  const fb::Tensor* table = nullptr;

  uint64_t element_count() const;  // product of shape (1 for scalars)
  bool is_constant() const { return !data.empty(); }
};

// The zero points of quantization parameters (none when `q` or its vector is null). Read
// bytewise: the flatbuffers Verifier holds a vector of int64 to 4-byte alignment only, so a valid
// file may place them off their 8-byte boundary, where a plain load is undefined behaviour.
inline uint32_t zero_point_count(const fb::QuantizationParameters* q) {
  return q && q->zero_point() ? q->zero_point()->size() : 0;
}
inline int64_t zero_point_at(const fb::QuantizationParameters* q, uint32_t i) {
  int64_t value = 0;
  memcpy(&value, q->zero_point()->Data() + size_t{i} * sizeof value, sizeof value);
  return value;
}

struct OperatorView {
  int index = -1;
  int32_t op_code = 0;        // decoded builtin code; kOpCustom for custom ops
  uint32_t opcode_index = 0;  // index into the model's operator_codes
  int32_t op_version = 1;
  const char* custom_code = "";  // custom ops only
  Span<int32_t> inputs;          // -1 = omitted optional input
  Span<int32_t> outputs;
  Span<int32_t> intermediates;
  fb::BuiltinOptions options_type = fb::BuiltinOptions::NONE;
  Span<uint8_t> custom_options;  // raw (usually flexbuffers)
  const fb::Operator* table = nullptr;

  // Decoded builtin options, e.g. op.options<fb::FullyConnectedOptions>();
  // null when the op carries another (or no) options table.
  template <typename T>
  const T* options() const {
    return table->builtin_options_as<T>();
  }
  // Name of the op: the builtin name, the custom code, or "UNKNOWN".
  const char* name() const;
};

class Model;

struct SubgraphView {
  int index = -1;
  const char* name = "";  // never null
  Span<int32_t> inputs;
  Span<int32_t> outputs;
  int tensor_count = 0;
  int operator_count = 0;
  const fb::SubGraph* table = nullptr;
  const Model* model = nullptr;

  TensorView tensor(int i) const;
  OperatorView op(int i) const;
};

struct MetadataView {
  const char* name = "";
  uint32_t buffer = 0;
  Span<uint8_t> data;
};

struct TensorMapView {
  const char* name = "";
  uint32_t tensor_index = 0;
};

struct SignatureView {
  const char* key = "";
  uint32_t subgraph_index = 0;
  const fb::SignatureDef* table = nullptr;

  int input_count() const;
  int output_count() const;
  TensorMapView input(int i) const;
  TensorMapView output(int i) const;
};

// Limits that keep validation allocation-free and reject absurd files.
constexpr int kMaxSubgraphs = 256;
constexpr int kMaxRank = 8;
constexpr int64_t kMaxDimension = int64_t{1} << 28;

class Model {
 public:
  // Verifies and validates `size` bytes at `data`. For kernels to read
  // weights directly, `data` should be 16-byte aligned.
  static Status load(const uint8_t* data, size_t size, Model* out);

  ModelFormat format() const { return format_; }
  uint32_t version() const;
  const char* description() const;  // never null
  const uint8_t* bytes() const { return bytes_; }
  size_t size_bytes() const { return size_; }

  int subgraph_count() const;
  SubgraphView subgraph(int i) const;
  SubgraphView main_subgraph() const { return subgraph(0); }

  int buffer_count() const;
  Span<uint8_t> buffer_data(uint32_t i) const;

  int opcode_count() const;
  int32_t opcode(uint32_t opcode_index) const;           // decoded op code
  const char* custom_code(uint32_t opcode_index) const;  // "" for builtins

  int metadata_count() const;
  MetadataView metadata(int i) const;
  int signature_count() const;
  SignatureView signature(int i) const;

  const fb::Model* table() const { return table_; }

 private:
  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
  ModelFormat format_ = ModelFormat::kTflite;
  const fb::Model* table_ = nullptr;
};

// Subgraphs an op invokes (WHILE: cond, body; IF: then, else; CALL_ONCE:
// init). Writes up to 2 indices into `out`; returns how many.
int called_subgraphs(const OperatorView& op, int32_t out[2]);

}  // namespace gruwb
