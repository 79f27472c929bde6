#pragma once
// RNN fuser: rewrites the recurrent cells the detector finds (rnn_detector.h)
// into one fused op each, the one their cell descriptor's emitter writes
// (cells/cell_descriptor.h), and cleans up what they leave behind. Built in:
//   GRU        -> Circle GRU (-5) in .circle files when reset_after=true with
//                 sigmoid/tanh; otherwise our GRUWB_GRU custom op
//                 (docs/fused-gru-op.md)
//   LSTM       -> UNIDIRECTIONAL_SEQUENCE_LSTM, Keras' 24-input form with 15
//                 used inputs (what TFLite Micro accepts)
//   SimpleRNN  -> UNIDIRECTIONAL_SEQUENCE_RNN
// and the cell plugins' (plugins/cells/): FastGRNN -> GRUWB_FASTGRNN, MGU -> GRUWB_MGU.
// The per-gate FCs (up to 6 per step) become the op's two matrix products
// (one on x, one on h). Unused subgraphs, tensors, buffers and op codes are
// dropped and every index (WHILE/IF/CALL_ONCE options, signature defs) is
// renumbered. A rewrite is kept only when the rewritten model computes the
// same outputs as the original on random inputs (max |diff| <= tolerance);
// otherwise the original stays and the report says why. docs/fuser.md.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/tools/model_writer.h"
#include "engine/tools/rnn_detector.h"

namespace gruwb::tools {

struct FuseOptions {
  ModelFormat format = ModelFormat::kTflite;  // of the output (decides Circle GRU vs custom op)
  double tolerance = 1e-5;
  int trials = 3;  // random input sets per equivalence check
  uint64_t seed = 1;
  // Also rewrite the Flex TensorList ops no fused cell absorbed into builtin ops
  // (tensor_list_lowering.h), so stock TFLite runs the result.
  bool builtin_only = false;
  // Streaming models (the state comes in as a model input and goes out as an output): an
  // LSTM/RNN keeps its state in the fused op's variable tensors between invokes, as TFLite
  // Micro's streaming models do; the state input goes, the state output reads the variables.
  // Kept when N invokes of the result, each fed the new input, equal N invokes of the
  // original fed back its own state output.
  bool stateful = false;
};

// The figures of one model file (before/after).
struct ModelSizeFigures {
  uint64_t bytes = 0;
  uint64_t data_bytes = 0;  // constant buffer bytes
  uint32_t subgraphs = 0;
  uint32_t ops = 0;          // over all subgraphs
  uint32_t tensors = 0;      // over all subgraphs
  uint64_t arena_bytes = 0;  // 0 when the engine cannot plan the model
  std::string arena_error;   // why arena_bytes is 0
};

struct CellOutcome {
  DetectedCell cell;  // as found in the input model
  bool fused = false;
  std::string fused_op;     // "GRU", "GRUWB_GRU", "UNIDIRECTIONAL_SEQUENCE_LSTM", ...
  std::string reason;       // why it was not fused
  double max_abs_diff = 0;  // of the equivalence check (when it ran)
};

struct FuseResult {
  std::vector<CellOutcome> cells;
  std::vector<OtherLoop> other_loops;  // WHILE loops left alone, with why
  ModelSizeFigures before, after;
  std::vector<uint8_t> bytes;  // the output file (the input unchanged when nothing was fused)
  int lowered_list_ops = 0;    // builtin_only: Flex TensorList ops rewritten as builtin ops
  std::string lowering_note;   // builtin_only: why they were kept
  int fused_count() const;
};

// Rewrites one detected cell of `model` (no check, no cleanup). Fails with the
// reason when the surrounding graph needs something the fused op cannot give
// (e.g. the loop counter or the LSTM cell state is used after the loop).
bool rewrite_cell(ModelDef* model, const DetectedCell& cell, ModelFormat format,
                  std::string* fused_op, std::string* error, bool stateful = false);

// Drops ops whose results nobody uses (side-effect-free ops only), subgraphs
// no op or signature reaches, unreferenced tensors, buffers and op codes, and
// renumbers every reference.
void remove_unused(ModelDef* model);

// Runs both models on the same random inputs (`trials` sets, uniform in
// [-1, 1] for float inputs) and returns the largest output difference.
bool compare_models(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int trials,
                    uint64_t seed, double* max_abs_diff, std::string* error);

// The same over `steps` invokes of one runner each (variables persist), every model input that
// pairs with an output of the same name-free shape (a state) fed that output of the previous
// invoke (zeros first); inputs of `a` that `b` lacks must be such states. Outputs compared by name.
// `state_pairs` names known pairs (input tensor -> output tensor), e.g. a loop's h_0 and h_T.
bool compare_streaming(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int steps,
                       uint64_t seed, double* max_abs_diff, std::string* error,
                       const std::map<std::string, std::string>& state_pairs = {});

// Figures of a model file; the arena comes from ModelRunner.
bool measure_model(const std::vector<uint8_t>& bytes, ModelSizeFigures* out, std::string* error);

// Detects, rewrites, checks and cleans up every cell of the model in `bytes`.
// Fails only when `bytes` is not a model we can edit; cells that cannot be
// fused are reported in the result.
bool fuse_model(const std::vector<uint8_t>& bytes, const FuseOptions& options, FuseResult* result,
                std::string* error);

}  // namespace gruwb::tools
