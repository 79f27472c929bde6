#pragma once
// Host-only: turns one float GRUWB_GRU op of a ModelDef into its integer form
// (docs/fused-gru-op.md, "Integer GRU"), given calibrated ranges. Weights
// become int8 with one symmetric scale per row, biases int32 at the scale of
// their product, the state int16 Q0.15; x and the output get the calibrated
// asymmetric int8 parameters.

#include <string>

#include "engine/tools/model_writer.h"

namespace gruwb::tools {

struct GruCalibration {
  // Range of the op's input x (ignored when x is already int8 with a scale).
  float x_min = 0.f;
  float x_max = 0.f;
  // Range of the output h for an int8 output; min == max: [-1, 1], the
  // range of a tanh GRU's state.
  float output_min = 0.f;
  float output_max = 0.f;
  // Output int16 Q0.15 (the state itself) instead of int8.
  bool int16_output = false;
  // Keep the op's neighbours float: a QUANTIZE of x before the op and a
  // DEQUANTIZE of its output after it (false: x and the output tensors are
  // retyped in place, and their producer and consumers must be integer).
  bool float_boundaries = false;
};

// False (and `error`, one line naming the op and the culprit) when the op is
// not a float GRUWB_GRU with reset_after, sigmoid and tanh, when a weight is
// not a constant, or when a bias does not fit int32. The model is unchanged
// then.
bool quantize_gru_op(ModelDef* model, int subgraph, int op_index, const GruCalibration& calibration,
                     std::string* error);

}  // namespace gruwb::tools
