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
  std::string quantization;  // e.g. "scale=0.0039 zero_point=-128", per-axis: "per-axis(0) x20"; "" if none
};

struct OpReport {
  int index = -1;
  int32_t op_code = 0;
  std::string name;  // "FULLY_CONNECTED", "CUSTOM:BatchMatMulV2", "GRU"
  std::vector<int32_t> inputs;  // -1 = omitted
  std::vector<int32_t> outputs;
  std::vector<int32_t> called_subgraphs;  // WHILE/IF/CALL_ONCE targets
  std::string options;  // decoded builtin options, "key=value, ..." ("" if none)
  uint64_t macs = 0;    // multiply-accumulates per inference (0 where not counted)
  bool engine_supported = false;
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
  uint64_t non_data_bytes = 0;  // model_bytes - data_bytes
  uint64_t data_bytes = 0;      // sum of all buffer data
  uint64_t zero_value_buffers = 0;  // bytes of buffers whose data is all zeros
  uint64_t parameters = 0;
  uint64_t macs = 0;
  std::vector<SubgraphReport> subgraphs;
  std::vector<std::string> unsupported_ops;  // op names the engine cannot run (unique)
  std::vector<std::string> signatures;       // signature keys
  std::vector<std::string> metadata;         // metadata names
};

AnalyzerReport analyze_model(const Model& model, const std::string& path);

// Text in the TFLite Analyzer's style ("Op#0 FULLY_CONNECTED(T#1, T#2) -> [T#3]").
std::string report_to_text(const AnalyzerReport& report);
std::string report_to_json(const AnalyzerReport& report);

}  // namespace gruwb::tools
