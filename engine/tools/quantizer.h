#pragma once
// Post-training quantization (host only), as TFLite's converter does it with a
// representative dataset:
//   1. calibrate: run the float model on the samples with the engine's
//      interpreter and record min/max of every float activation, the ops of
//      WHILE bodies included (an OpProfiler sees each op before and after its
//      eval), and the largest |cell state| of every fused LSTM;
//   2. rewrite: ops with an integer form in TFLite get int8 weights (symmetric,
//      per output channel; per tensor for the LSTM, as TFLite), int32 biases
//      at s_in * s_w and asymmetric int8 activations (int16x8: symmetric int16
//      activations, int64 FC/conv biases); SOFTMAX/LOGISTIC/TANH outputs take
//      TFLite's fixed quantization; data movement, pools, CONCATENATION and
//      loop-carried WHILE values share one quantization with their inputs. Ops
//      without an integer form (and the Circle GRU) stay float, with DEQUANTIZE
//      before and QUANTIZE after them; GRUWB_GRU becomes the integer GRU;
//   3. measure: sizes and arena before/after, and the largest output
//      difference float vs quantized over the samples.
// Mode kDynamic writes hybrid weights instead (int8 weights, float
// activations). docs/quantize.md.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/fuser.h"
#include "engine/tools/model_writer.h"

namespace gruwb::tools {

enum class QuantizeMode { kInt8, kInt16x8, kDynamic };
const char* quantize_mode_name(QuantizeMode mode);  // "int8", "int16x8", "dynamic"
bool parse_quantize_mode(const std::string& text, QuantizeMode* out);

struct QuantizeOptions {
  QuantizeMode mode = QuantizeMode::kInt8;
  // false (TFLite's default, inference_input_type float): float inputs and outputs with
  // QUANTIZE after the inputs and DEQUANTIZE before the outputs; true: the model's inputs
  // and outputs are int8 (int16 in kInt16x8).
  bool integer_io = false;
  ModelFormat format = ModelFormat::kTflite;  // of the result
  // One weight scale per output channel for FC/conv (TFLite's default); false: one per
  // tensor, for older TFLite builds whose hybrid FULLY_CONNECTED reads a single scale (the
  // tfjs-tflite oracle outputs the bias alone for a per-channel hybrid FC).
  bool per_channel = true;
};

// One representative sample: one float vector per input of subgraph 0, in input order,
// each with exactly that input's element count.
using RepresentativeSample = std::vector<std::vector<float>>;

// What happened to one op of the float model.
struct QuantizedOpOutcome {
  int subgraph = 0;
  int op = 0;
  std::string name;  // "FULLY_CONNECTED", "GRUWB_GRU", ...
  bool quantized = false;
  std::string reason;  // kept float: why; quantized: a note (e.g. "int16 cell state 2^-11")
  // Quantized, but this engine has no integer kernel for it yet (real TFLite runs it).
  bool engine_refuses = false;
};

struct QuantizeResult {
  std::vector<QuantizedOpOutcome> ops;
  ModelSizeFigures before, after;
  uint64_t weight_bytes_before = 0;  // the float weights and biases that were quantized
  uint64_t weight_bytes_after = 0;   // their int8 / int32 / int64 replacements
  int samples = 0;
  // Largest |float output - dequantized quantized output| over the samples, when our engine
  // runs the quantized model; otherwise measured = false and why.
  bool diff_measured = false;
  double max_abs_diff = 0;
  std::string diff_note;
  std::vector<uint8_t> bytes;  // the quantized model file
  int quantized_count() const;
  int float_count() const;
};

// Quantizes the model in `bytes` (.tflite or .circle; hybrid int8 weights are dequantized
// first) with `samples` as the representative data. Fails with one line naming the
// problem: an unreadable or already full-integer model, no samples, a sample whose size
// does not fit an input, a sample the float model cannot run.
bool quantize_model(const std::vector<uint8_t>& bytes,
                    const std::vector<RepresentativeSample>& samples,
                    const QuantizeOptions& options, QuantizeResult* result, std::string* error);

}  // namespace gruwb::tools
