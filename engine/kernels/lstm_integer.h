#pragma once
// UNIDIRECTIONAL_SEQUENCE_LSTM's input layout, shared by its float/hybrid
// kernel (unidirectional_sequence_lstm.cpp) and its full-integer one
// (lstm_integer.cpp, TFLite's 8x8->16 integer LSTM).

#include "engine/runtime/kernel.h"

namespace gruwb {
namespace lstm {

enum Input {
  kX = 0,
  kInputWeights = 1,      // + gate
  kRecurrentWeights = 5,  // + gate
  kCellToInput = 9,
  kCellToForget = 10,
  kCellToOutput = 11,
  kGateBias = 12,  // + gate
  kProjectionWeights = 16,
  kProjectionBias = 17,
  kOutputState = 18,
  kCellState = 19,
  kLayerNorm = 20,  // + gate
};
enum Gate { kInputGate = 0, kForgetGate, kCellGate, kOutputGate };
constexpr const char* kGateNames[] = {"input", "forget", "cell", "output"};
// The peephole input of each gate (the cell gate has none).
constexpr int kPeepholeInput[4] = {kCellToInput, kCellToForget, -1, kCellToOutput};

}  // namespace lstm

// Full-integer LSTM (int8 x, weights and output state, int16 cell state):
// prepare after the float kernel's shape checks, and eval.
Status prepare_integer_lstm(OpContext& ctx);
Status eval_integer_lstm(OpContext& ctx);

}  // namespace gruwb
