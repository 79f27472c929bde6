#pragma once
// A recurrent cell type as the host tools know it: its facts (names, gate blocks, states,
// weight layout, MACs, Keras-style initialisation) and the functions that write it (the fused
// op, one time step of the WHILE body / unrolled chain the way TensorFlow's converter lowers
// keras.layers.RNN(cell)) and read it back (the matcher the detector and the fuser use).
//
// One descriptor per cell type, listed in the registry (cell_registry.h); nothing outside a
// descriptor names a cell type. GRU, LSTM and SimpleRNN are built in (gru.cpp, lstm.cpp,
// simple_rnn.cpp), FastGRNN and MGU are cell plugins (plugins/cells/*/host/); docs/cells.md
// says how to add one.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/model_writer.h"

namespace gruwb::tools {

class GraphWriter;
class Rng;

namespace cells {
class Graph;
class Matcher;
struct CellMatch;
}  // namespace cells

// Weights in the fused ops' layout: FULLY_CONNECTED [out, in] rows (the Keras kernel
// transposed), G gate blocks of H rows in the cell's own order (GRU z|r|h, LSTM i|f|c|o,
// SimpleRNN one block, MGU f|h, FastGRNN one block its gate and candidate share).
struct CellWeights {
  std::vector<float> kernel;            // [G*H, F]
  std::vector<float> recurrent_kernel;  // [G*H, H]
  std::vector<float> bias;              // [bias_blocks*H] input side (all unless two_biases)
  std::vector<float> recurrent_bias;    // [G*H] when the cell keeps two biases, else empty
  // The cell's trainable scalars in its own order (FastGRNN: zeta, nu before their
  // sigmoids); empty for cells without (CellDescriptor::scalars).
  std::vector<float> scalars;
  // Hybrid cells: the int8 scale of each row of kernel / recurrent_kernel (0 for a float
  // row), so the fused op keeps the int8 values (kernel = scale * q exactly).
  std::vector<float> kernel_scales, recurrent_kernel_scales;
};

// kKeras: zeros, plus what the cell's Keras initializer adds (an LSTM's unit_forget_bias).
// kUniform: U(-0.1, 0.1) for every bias (tests, GRU experiments).
enum class BiasInit { kKeras, kZeros, kUniform };

// The variant of one cell: what a matcher reads off a graph and the emitters write.
struct CellConfig {
  int features = 0, units = 0;
  bool reset_after = true;                  // GRU: reset gate after the recurrent product
  std::string gate_activation = "sigmoid";  // or "hard_sigmoid"
  std::string activation = "tanh";          // "tanh", "relu" or "linear"
  // The older converter's body: one FC per gate and side, hard_sigmoid spelled as
  // MUL/ADD/MINIMUM/MAXIMUM (cells with has_legacy_body only).
  bool legacy = false;
};

// The state tensors of one step: h, and c for a cell with two states.
struct CellState {
  int h = -1;
  int c = -1;
};

// The weight constants one step reads, as the cell's add_constants wrote them (each
// descriptor decides what its entries are).
struct StepConstants {
  std::vector<int> tensors;
};

// One cell to write as a fused op.
struct FusedCell {
  CellConfig config;
  const CellWeights* weights = nullptr;
  int batch = 1, timesteps = 0;
  bool hybrid = false;                      // keep int8 weight rows (weights->*_scales)
  std::string hybrid_inputs = "symmetric";  // "asymmetric": quantize inputs asymmetrically
  ModelFormat format = ModelFormat::kTflite;
};

// Where the fused op reads and what it must provide.
struct FusedPlan {
  int input = -1;          // the sequence tensor the op reads
  bool time_major = true;  // input is [T,B,F] (else [B,T,F])
  bool need_sequence = false;
  int h_final = -1;        // tensor to hold the last h ([B,H]); -1 = new
  bool need_last = true;   // something reads the last h
  int sequence = -1;       // tensor to hold the output sequence; -1 = new
  int initial_state = -1;  // h_0 when the op takes one (fused_takes_state) and it is not zeros
  int cell_state = -1;     // set by the emitter: the variable tensor holding c (two states)
};

struct CellDescriptor {
  const char* name;          // "gru": CLI, build and experiment specs, JSON
  const char* display_name;  // "GRU": reports and tables
  const char* layer_name;    // "gru": tensor-name prefix, as Keras names the layer
  const char* help;          // one line for CLI help: "Keras SimpleRNN"
  int gates;                 // gate blocks G of H rows in the weights
  int bias_blocks;           // H-element blocks of CellWeights::bias (G, FastGRNN 2 for 1 gate)
  int scalars;               // entries of CellWeights::scalars (FastGRNN 2, else 0)
  int states;                // 1: h; 2: h and c
  bool has_reset_after;      // CellConfig::reset_after is a variant of this cell (GRU)
  bool has_legacy_body;      // CellConfig::legacy is a variant of this cell (GRU)

  // Weight layout: whether the recurrent side has its own bias vector.
  bool (*two_biases)(const CellConfig& config);
  // Multiply-accumulates of one step for one sample (the fused kernel's cost per step).
  uint64_t (*step_macs)(const CellConfig& config);
  // Keras-style initial weights (deterministic in rng).
  void (*initialize)(const CellConfig& config, BiasInit bias_init, Rng& rng, CellWeights* out);
  // Why `config` cannot be built ("" when it can).
  std::string (*check)(const CellConfig& config);
  // The variant for summaries: " reset_after, sigmoid/tanh" (GRU), ", relu" ("" for defaults).
  std::string (*describe)(const CellConfig& config);

  // The fused op: its name for `config` in `format` ("GRU" (Circle), "GRUWB_GRU", ...), why
  // the fused op cannot express `cell` ("" when it can), and the emitter, which writes the
  // op (and a last-step slice when plan->need_last) and returns the op's name.
  const char* (*fused_op)(const CellConfig& config, ModelFormat format, bool hybrid);
  std::string (*fused_problem)(const FusedCell& cell);
  std::string (*emit_fused)(GraphWriter& g, const FusedCell& cell, FusedPlan* plan);
  // The fused op takes h_0 as an input (else it starts from zeros or its variable tensors).
  bool (*fused_takes_state)(const CellConfig& config, ModelFormat format, bool hybrid);
  // The fused op reads a time-major [T,B,F] sequence only.
  bool (*fused_needs_time_major)(const CellConfig& config, ModelFormat format, bool hybrid);
  // The fused op keeps its states in variable tensors between invokes (streaming models).
  bool fused_keeps_state;

  // One time step, as the converter writes the WHILE body and each unrolled step: the
  // weight constants (add_constants, once per body or per step) and the step on x [B,F].
  StepConstants (*add_constants)(GraphWriter& g, const CellConfig& config,
                                 const CellWeights& weights, const std::string& prefix);
  CellState (*step)(GraphWriter& g, const CellConfig& config, const StepConstants& constants, int x,
                    CellState in, const std::string& prefix);

  // The matcher: whether h_out's producer looks like this cell's state update (so its
  // failure is worth reporting), and the match backwards from h_out (cell_pattern.h).
  bool (*claims)(const cells::Graph& g, int h_out);
  bool (*match)(const cells::Graph& g, cells::Matcher& m, int h_out, cells::CellMatch* out);
};

}  // namespace gruwb::tools
