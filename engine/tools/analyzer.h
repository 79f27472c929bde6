#pragma once
// Model analyzer: the figures of TensorFlow Lite's Analyzer (model size,
// non-data bytes, data bytes, data per subgraph, all-zero buffers) plus
// parameters, MACs per op and which ops our engine can run. Every figure the
// CLI, the GUI or a report shows comes from analyze_model().

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/model.h"

namespace gruwb::tools {

struct FuseResult;  // engine/tools/fuser.h

struct TensorReport {
  int index = -1;
  std::string name;
  std::vector<int32_t> shape;
  std::vector<int32_t> shape_signature;
  std::string type;  // "FLOAT32", ...
  uint32_t buffer = 0;
  uint64_t data_bytes = 0;  // constant data bytes (0 for activations)
  bool is_variable = false;
  bool is_constant = false;
  // A constant float32 tensor some op takes at a weight input (the kernel
  // list's KernelRegistration::weight_inputs): what training may update.
  bool trainable_weight = false;
  std::string
      quantization;  // e.g. "scale=0.0039 zero_point=-128", per-axis: "per-axis(0) x20"; "" if none
  // Structured form of `quantization` (empty when the tensor has none).
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int32_t quantized_dimension = 0;
  uint64_t elements = 0;    // product of shape (1 for a scalar)
  uint64_t parameters = 0;  // = elements for constant tensors, else 0
  bool is_sparse = false;
  std::string data_preview;  // first values of constant data, "[0.1, -2, ...]"; "" if none
};

// One decoded builtin option, e.g. {"fused_activation_function", "RELU", kEnum}.
struct OptionValue {
  enum class Kind { kNumber, kBool, kEnum, kString, kOther };
  std::string key;
  std::string value;  // numbers as text; JSON writes kNumber/kBool unquoted
  Kind kind = Kind::kOther;
};

struct OpReport {
  int index = -1;
  int32_t op_code = 0;
  std::string name;             // "FULLY_CONNECTED", "CUSTOM:BatchMatMulV2", "GRU"
  std::vector<int32_t> inputs;  // -1 = omitted
  std::vector<int32_t> outputs;
  std::vector<int32_t> called_subgraphs;  // WHILE/IF/CALL_ONCE targets
  std::string options;                    // decoded builtin options, "key=value, ..." ("" if none)
  uint64_t macs = 0;  // multiply-accumulates per inference (0 where not counted)
  bool engine_supported = false;
  // Extras beyond the Analyzer.
  int32_t version = 1;      // OperatorCode.version
  std::string custom_code;  // custom ops only
  uint64_t custom_options_bytes = 0;
  std::string options_type;                // "FullyConnectedOptions", "" if none
  std::vector<OptionValue> option_values;  // structured form of `options`
  std::vector<int32_t> intermediates;
  std::string macs_formula;  // how `macs` was counted, e.g. "batch 1 x out 16 x in 1"
};

struct TensorMapReport {
  std::string name;
  int32_t tensor = -1;
};

struct SignatureReport {
  std::string key;
  int32_t subgraph = 0;
  std::vector<TensorMapReport> inputs;
  std::vector<TensorMapReport> outputs;
};

struct SubgraphReport {
  int index = -1;
  std::string name;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<TensorReport> tensors;
  std::vector<OpReport> ops;
  uint64_t data_bytes = 0;  // sum of buffer bytes of the tensors it lists (Analyzer rule)
  uint64_t parameters = 0;  // elements of constant tensors
  uint64_t macs = 0;
};

struct AnalyzerReport {
  std::string path;
  std::string format;  // "tflite" / "circle"
  uint32_t version = 0;
  std::string description;
  uint64_t model_bytes = 0;
  uint64_t non_data_bytes = 0;      // model_bytes - data_bytes
  uint64_t data_bytes = 0;          // sum of all buffer data
  uint64_t zero_value_buffers = 0;  // bytes of buffers whose data is all zeros
  uint64_t parameters = 0;
  uint64_t macs = 0;
  std::vector<SubgraphReport> subgraphs;
  std::vector<std::string> unsupported_ops;  // op names the engine cannot run (unique)
  // The GRUWB_FW_OPS a firmware needs for this model (docs/firmware.md): its ops in order of
  // first use, as kernel_list.h names them, NAME:int8 where an op reads or writes an
  // int8/uint8/int16 activation (its integer form).
  std::string firmware_ops;
  // "Runs" means the engine's prepare succeeds (every op has a kernel AND every kernel
  // accepts its types and shapes); otherwise engine_error is prepare's one-line reason.
  bool engine_runs = false;
  std::string engine_error;
  // What `gruwb fuse` would do (the fuser's own detection, rewrite and numeric check):
  // recurrent cells found, how many it fuses, and why the first one left alone stays.
  int recurrent_cells = 0;
  int fusable_cells = 0;
  std::string fuse_note;
  std::vector<std::string> signatures;  // signature keys
  std::vector<std::string> metadata;    // metadata names
  // Extras beyond the Analyzer.
  uint32_t buffer_count = 0;
  uint32_t zero_value_buffer_count = 0;  // buffers counted in zero_value_buffers
  uint32_t operator_code_count = 0;
  std::vector<SignatureReport> signature_defs;  // full form of `signatures`
};

AnalyzerReport analyze_model(const Model& model, const std::string& path);

// Fills recurrent_cells / fusable_cells / fuse_note by running the fuser on the model
// (apart from analyze_model, which the fuser itself calls to measure its results).
// `result` (optional) receives the fuser's outcome per cell.
void add_fusion_outlook(const Model& model, AnalyzerReport* report, FuseResult* result = nullptr);

// Text in the TFLite Analyzer's style ("Op#0 FULLY_CONNECTED(T#1, T#2) -> [T#3]").
std::string report_to_text(const AnalyzerReport& report);
struct ArenaRow;  // arena_figures.h
// `arena` (optional): the arena figures as an "arena" object (`gruwb inspect --arena --json`).
std::string report_to_json(const AnalyzerReport& report,
                           const std::vector<ArenaRow>* arena = nullptr);

}  // namespace gruwb::tools
