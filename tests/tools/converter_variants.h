#pragma once
// Generated models that reproduce, one structure at a time, what TensorFlow's
// converter writes for Keras recurrent layers as WHILE loops
// (shared/research/converter-variants.md): how x_t is read, the zero state,
// the output accumulator, the loop condition, how gates are cut, biases,
// activations, the state update's algebra, weights passed as loop arguments,
// stacked and bidirectional layers, Flex TensorList loops. Each variant is a
// small classifier (x [1,T,F] -> RNN -> FC -> SOFTMAX) whose expected output a
// plain double-precision reference computes from the same weights, so a test
// can check the engine on the loop, the detector, and the fused rewrite
// against something that shares no code with either.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "engine/tools/model_builder.h"

namespace gruwb::test {

enum class StateInit { kConstZeros, kFill, kModelInput };
enum class GateCut { kSplit, kSplitV, kStridedSlice, kPerGateFc };
// kLastOutput: RESHAPE(h') [1,B,H]; kSetItem(Cast): the TensorListSetItem lowering
// CONCAT(SLICE(acc, 0, [t,-1,-1]), h', SLICE(acc, [t+1,0,0], -1)) [+ CAST] over [T,B,H];
// kSetItemOneRow: the same on a one-row list with constant bounds (TF 2.20);
// kFlexList: FlexTensorListSetItem(list, t, h') then Stack; kFlexLastOutput: a one-element
// list written at index 0 (the last layer).
enum class Accumulator {
  kLastOutput,
  kSetItem,
  kSetItemCast,
  kSetItemOneRow,
  kFlexList,
  kFlexLastOutput
};
enum class Direction { kForward, kBackward, kBidirectional };
enum class GruUpdate { kKeras, kDifference };  // z*h + (1-z)*n, or n + z*(h - n)

struct ConverterVariant {
  std::string name;       // file stem
  std::string structure;  // what it reproduces, in converter-variants.md's words
  const tools::CellDescriptor* cell = tools::find_cell("gru");
  int timesteps = 5, features = 3, units = 4, classes = 3;
  bool dynamic_batch = false;  // shape_signature [-1,T,F]: TRANSPOSE and SHAPE-made states
  StateInit state = StateInit::kConstZeros;
  GateCut gates = GateCut::kSplit;
  bool bias_add = false;            // bias-free FCs, the bias added by its own ADD
  bool reset_after = true;          // GRU: false applies r to h before the recurrent FC
  bool hard_sigmoid = false;        // MUL 0.2 / ADD 0.5 / MINIMUM 1 / MAXIMUM 0
  std::string activation = "tanh";  // tanh, relu, linear (no op)
  GruUpdate update = GruUpdate::kKeras;
  bool two_counters = false;     // LESS(counter, max) AND LESS(time, T)
  bool weights_as_args = false;  // weights and T passed into the body as loop values
  bool ones_mask = false;        // x_t * FILL(SHAPE(x_t), 1.0): Keras' inference dropout mask
  Accumulator accumulator = Accumulator::kLastOutput;
  Direction direction = Direction::kForward;
  int layers = 1;           // 2: stacked, the first returning sequences
  bool flex_input = false;  // x_t = FlexTensorListGetItem(FlexTensorListFromTensor(sequence), t)
  bool unknown_loop_shapes = false;  // cond/body inputs written rank 0, as old converters do
  bool masking = false;  // h' = SELECT_V2(mask_t, h', h) (Keras mask_zero / Masking layer)
  // Hybrid: the FCs' weights are INT8 (scale per tensor, or per row), activations float,
  // inputs quantized at run time (asymmetrically when asymmetric_inputs).
  enum class Hybrid { kNone, kPerTensor, kPerRow } hybrid = Hybrid::kNone;
  bool asymmetric_inputs = false;
  // Empty: every cell must fuse. Else no cell may, and the reason says this.
  std::string unfused_reason;
};

// gtest prints a variant by its name.
inline void PrintTo(const ConverterVariant& v, std::ostream* os) { *os << v.name; }

// Every variant the tests and the corpus check: one or more per structure of
// converter-variants.md that a WHILE loop shows.
std::vector<ConverterVariant> converter_variants();

// The variant as a .tflite file (weights deterministic in the variant's name).
bool write_variant(const ConverterVariant& v, std::vector<uint8_t>* bytes, std::string* error);

// The classifier's output for x [T*F] (batch 1), computed in double from the
// weights write_variant uses; a kModelInput state takes `state` (H values per
// state tensor, in model-input order), else zeros.
std::vector<float> reference_output(const ConverterVariant& v, const std::vector<float>& x,
                                    const std::vector<std::vector<float>>& state = {});

// Cells the model holds: layers x directions.
int cell_count(const ConverterVariant& v);

// Deterministic inputs of the variant's model, in model-input order: x [1,T,F], then one
// [1,H] state per state input.
std::vector<std::vector<float>> variant_inputs(const ConverterVariant& v);

// Writes every variant as DIR/<name>.tflite with DIR/golden/<name>/input<i>.npy and
// output0.npy (the reference's output), the layout `gruwb corpus DIR` reads.
bool write_variant_folder(const std::string& dir, std::string* error);

}  // namespace gruwb::test
