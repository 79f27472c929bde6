#pragma once
// Pieces the built-in cell descriptors share (host only).

#include <string>
#include <utility>
#include <vector>

#include "engine/tools/cells/cell_descriptor.h"
#include "engine/tools/graph_writer.h"

namespace gruwb::tools::cells {

// Rows [first, first + count) of a row-major matrix with `cols` columns.
std::vector<float> rows(const std::vector<float>& m, int cols, int first, int count);

// The row scales rows [first, first + count) of a fused weight keep: a hybrid cell's int8
// scales, else none (float32).
std::vector<float> hybrid_scales(const FusedCell& c, const std::vector<float>& scales, int first,
                                 int count);

// Why a hybrid cell whose fused op reads one scale per gate weight tensor (TFLite's LSTM and
// RNN ops) cannot keep per-row scales ("" when every gate block has one scale).
std::string per_gate_scale_problem(const FusedCell& c, const char* op);

// TFLite's fused LSTM/RNN ops carry the cell's activation (Keras tanh, relu or none).
fb::ActivationFunctionType fused_activation(const std::string& activation);

// ", relu" for a cell whose activation is not tanh, else "" (CellDescriptor::describe).
std::string describe_activation(const CellConfig& config);

// Keras' initializers for G gate blocks: glorot-uniform kernel, orthogonal recurrent kernel,
// biases per `bias_init` (a recurrent bias too when `two_biases`), in this draw order.
void keras_weights(const CellConfig& config, int gates, bool two_biases, BiasInit bias_init,
                   Rng& rng, CellWeights* out);

// The G*H*(F+H) multiply-accumulates of a cell's two matrix products per step.
uint64_t gate_products_macs(const CellConfig& config, int gates);

// The weight constants of a cell that reads kernel [G*H,F], recurrent kernel [G*H,H] and
// bias [G*H] whole (LSTM, SimpleRNN): tensors {kernel, recurrent_kernel, bias}.
StepConstants whole_constants(GraphWriter& g, const CellConfig& config, const CellWeights& w,
                              int gates, const std::string& prefix);

// The sequence tensor a fused op writes (plan->sequence, made when -1: [T,B,H] time-major, else
// [B,T,H]); ops that always return the whole sequence (TFLite's LSTM and RNN) write this.
int sequence_output(GraphWriter& g, const FusedCell& c, FusedPlan* plan, const std::string& prefix);

// The tensor a fused op with a return_sequences flag writes: the sequence when
// plan->need_sequence, else the last h [B,H] (plan->h_final, made when -1).
int fused_output(GraphWriter& g, const FusedCell& c, FusedPlan* plan, const std::string& prefix);

// After the op wrote `out`: when the plan needs the last h and `out` is the sequence, its last
// step into plan->h_final.
void fused_last_step(GraphWriter& g, const FusedCell& c, FusedPlan* plan, int out,
                     const std::string& prefix);

// The FlexBuffer map of a fused cell custom op (GRUWB_MGU, GRUWB_FASTGRNN): its layout flags
// and string options.
std::vector<uint8_t> cell_op_options(
    bool return_sequences, bool time_major,
    const std::vector<std::pair<std::string, std::string>>& strings = {});

}  // namespace gruwb::tools::cells
