#pragma once
// MACs per op, from the kernel list (KernelRegistration::cost): each kernel
// file counts its own op next to its forward and backward, so the analyzer,
// the GUI and a test read one figure. Shapes come from the model file; what
// a kernel does not count is 0.

#include <cstdint>
#include <initializer_list>

#include "engine/model/model.h"
#include "engine/runtime/kernel.h"
#include "engine/runtime/op_resolver.h"

namespace gruwb {

// The registered cost of `op`; MACs 0 when `ops` has no kernel for it or the
// kernel counts none.
// `prepared` (optional): a prepared interpreter whose folded constants count.
OpCost op_cost(const SubgraphView& subgraph, const OperatorView& op, const OpResolver& ops,
               const Interpreter* prepared = nullptr);
// MACs of one run of subgraph `index`: the sum of its ops' costs, the
// subgraphs its control-flow ops call included (the model is acyclic).
uint64_t subgraph_macs(const Model& model, int index, const OpResolver& ops,
                       const Interpreter* prepared = nullptr);

// ---- Helpers for the kernels' cost functions ----
// Tensor `tensor` of subgraph `subgraph` in a prepared interpreter (constants
// it folded at prepare included); nullptr without one, or when that subgraph
// was not prepared.
const Tensor* prepared_tensor(const Interpreter* prepared, int subgraph, int32_t tensor);
OpCost make_cost(uint64_t macs, const char* formula, std::initializer_list<int64_t> terms);
// Dimension `i` of input `slot` (negative i from the back); 0 when the input
// is omitted or has no such dimension.
int64_t input_dim(const SubgraphView& subgraph, const OperatorView& op, int slot, int i);
int input_rank(const SubgraphView& subgraph, const OperatorView& op, int slot);
bool has_input(const OperatorView& op, int slot);
// Rows an op processes: input `slot`'s element count over its feature size
// (batch for a dense layer, time x batch for a sequence op, time-major or not).
uint64_t rows_of(const SubgraphView& subgraph, const OperatorView& op, int slot, int64_t features);

// Shared by the fused cells and their single-step forms, which the analyzer
// counts although the engine has no kernel for them (LSTM, RNN).
OpCost lstm_cost(const SubgraphView& subgraph, const OperatorView& op, bool sequence);
OpCost rnn_cost(const SubgraphView& subgraph, const OperatorView& op, bool sequence);
// A GRU with W_x [3H, I] and W_h [3H, H] at the given input slots (Circle's
// GRU and our GRUWB_GRU order their inputs differently).
OpCost gru_cost(const SubgraphView& subgraph, const OperatorView& op, int input_kernel,
                int recurrent_kernel);

}  // namespace gruwb
