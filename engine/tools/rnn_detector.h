#pragma once
// RNN detector: finds recurrent cells that a converter spelled out op by op,
// either as a WHILE loop (TensorFlow's converter for Keras RNN layers) or as
// an unrolled chain of T steps, and recovers their weights.
//
// Cells are recognised by the roles values play in the dataflow, not by op
// counts: the sequence GATHERed by a loop counter (or UNPACKed into steps),
// the state that goes in and comes out, FULLY_CONNECTED products (possibly
// per gate, possibly SPLIT) on x and on h, and the gate nonlinearities
// (LOGISTIC, or hard_sigmoid spelled MUL 0.2 / ADD 0.5 / MINIMUM 1 /
// MAXIMUM 0). Every registered cell type's matcher (cells/cell_registry.h; the
// patterns are described in gru.cpp, lstm.cpp, simple_rnn.cpp and the cell plugins'
// host/*_descriptor.cpp) is tried on the
// state update, in registration order.
// The GUI uses the result to highlight a cell's ops; the fuser (fuser.h)
// rewrites them. docs/fuser.md has the details.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/cells/cell_descriptor.h"
#include "engine/tools/model_writer.h"

namespace gruwb::tools {

enum class CellForm { kWhile, kUnrolled };

const char* cell_form_name(CellForm form);  // "while", "unrolled"

// What a WHILE loop value is for (same index for WHILE inputs, outputs and
// the body's inputs/outputs).
enum class LoopRole {
  kCounter,              // int counter + 1 per step (the GATHER index or a second counter)
  kInvariant,            // passed through unchanged (the sequence, a trip count)
  kHidden,               // h
  kCell,                 // c (LSTM)
  kLastOutput,           // accumulator holding RESHAPE(h') [1,B,H]: the last output only
  kSequenceAccumulator,  // accumulator [T,B,H] shifted by one step per iteration
  kOther,                // anything else (the rewrite fails if it is used after the loop)
};

struct DetectedCell {
  CellForm form = CellForm::kWhile;
  const CellDescriptor* type = nullptr;  // the registered cell type that matched
  int subgraph = 0;                      // where the WHILE op or the unrolled chain lives
  // kWhile: the WHILE op and its subgraphs. kUnrolled: the UNPACK op, or the
  // STRIDED_SLICE that takes step 0.
  int op = -1;
  int cond_subgraph = -1;
  int body_subgraph = -1;
  // Ops of the cell: in the body (kWhile) or in `subgraph` (kUnrolled, all
  // steps and the UNPACK), for highlighting and for the rewrite.
  std::vector<int> cell_ops;
  bool reset_after = true;                  // GRU only (CellConfig)
  std::string gate_activation = "sigmoid";  // or "hard_sigmoid"
  std::string activation = "tanh";
  int timesteps = 0, batch = 1, features = 0, units = 0;
  CellWeights weights;
  // Tensors in `subgraph`: the time-major sequence [T,B,F] (WHILE input or
  // UNPACK input) and, unrolled only, the last step's h.
  int sequence_tensor = -1;
  int final_hidden = -1;
  int initial_hidden = -1, initial_cell = -1;  // in `subgraph`; -1 when absent
  // Unrolled only: the steps' x_t are UNPACK outputs or STRIDED_SLICEs of
  // `sequence_tensor` along `time_axis` (0: [T,B,F], 1: [B,T,F]); h_t of every
  // step (the last is final_hidden) and the last step's c (LSTM, else -1).
  int time_axis = 0;
  bool step_slices = false;  // x_t are STRIDED_SLICEs (`op` takes step 0), not one UNPACK
  std::vector<int> step_hidden;
  int final_cell = -1;
  // Step 0 had its zero-state products folded away by the converter (it reads x_0 and
  // constants only); its ops are in cell_ops and the cell starts from zeros.
  bool folded_first_step = false;
  // The cell's FCs hold int8 weights with scales (a hybrid model); `weights`
  // holds them dequantized.
  bool hybrid = false;
  // How its FCs quantize inputs at run time: "symmetric", "asymmetric" or "mixed".
  std::string hybrid_inputs = "symmetric";
  std::vector<LoopRole> loop_roles;  // kWhile only
  std::string summary;               // "GRU(60) reset_after, sigmoid/tanh, T=60 F=3"
};

// A WHILE loop that is not a recognised RNN cell, with why.
struct OtherLoop {
  int subgraph = 0;
  int op = -1;
  int cond_subgraph = -1;
  int body_subgraph = -1;
  std::string reason;
};

struct DetectionReport {
  std::vector<DetectedCell> cells;
  std::vector<OtherLoop> other_loops;
};

DetectionReport detect_rnn_cells(const ModelDef& model);

// The cell's variant as its descriptor's emitters read it.
CellConfig cell_config(const DetectedCell& cell);

}  // namespace gruwb::tools
