#pragma once
// The integer GRU's prepare and eval, shared by GRUWB_GRU (gru_custom.cpp) and
// the Circle GRU op (gru.cpp): each op checks its own bias layout and options
// and hands over its tensors; the maths is gru_sequence_integer (gru_cell.h).
// docs/fused-gru-op.md "Integer GRU" is the specification.

#include "engine/kernels/gru_cell.h"

namespace gruwb {

// The integer form's constants, computed once at prepare.
struct IntegerGru {
  GruIntegerCell cell;
  SequenceLayout layout;
  bool return_sequences = false;
  int32_t output_zero_point = 0;
  QuantizedMultiplier output_multiplier;  // 2^-15 / s_out (int8 output)
  int scratch_slot = 0;
};

struct IntegerGruTensors {
  const char* op_name = "";  // for messages: "GRUWB_GRU", "GRU"
  const Tensor* x = nullptr;
  const Tensor* input_kernel = nullptr;
  const Tensor* recurrent_kernel = nullptr;
  const char* input_kernel_role = "";
  const char* recurrent_kernel_role = "";
  const int32_t* input_bias = nullptr;      // [3H] int32 or null (the op checked type and shape)
  const int32_t* recurrent_bias = nullptr;  // [3H] int32 or null
  const Tensor* state = nullptr;            // [B,H] int16 Q0.15 or null (zeros)
  const char* state_role = "";
  Tensor* output = nullptr;  // its shape is the op's to set
  SequenceLayout layout;
  bool return_sequences = false;
};

// Checks types and scales (one line naming the tensor), folds x's zero point
// into the input bias, computes the multipliers, plans the scratch.
Status prepare_integer_gru(OpContext& ctx, const IntegerGruTensors& tensors, IntegerGru** out);

// Every batch row from its state row (or zeros); a variable state receives
// the last state.
void eval_integer_gru(OpContext& ctx, const IntegerGru& gru, const Tensor* x, Tensor* state,
                      Tensor* output);

}  // namespace gruwb
