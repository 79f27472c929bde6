#include "engine/kernels/op_cost.h"

#include "engine/runtime/interpreter.h"

namespace gruwb {

OpCost op_cost(const SubgraphView& subgraph, const OperatorView& op, const OpResolver& ops,
               const Interpreter* prepared) {
  const KernelRegistration* kernel = ops.find(op.op_code, op.custom_code);
  if (!kernel || !kernel->cost) return OpCost();
  return kernel->cost(OpCostQuery{subgraph, op, ops, prepared});
}

uint64_t subgraph_macs(const Model& model, int index, const OpResolver& ops,
                       const Interpreter* prepared) {
  const SubgraphView subgraph = model.subgraph(index);
  uint64_t macs = 0;
  for (int o = 0; o < subgraph.operator_count; ++o) {
    macs += op_cost(subgraph, subgraph.op(o), ops, prepared).macs;
  }
  return macs;
}

const Tensor* prepared_tensor(const Interpreter* prepared, int subgraph, int32_t tensor) {
  if (!prepared || tensor < 0 || !prepared->subgraph_state(subgraph).prepared) return nullptr;
  return &prepared->subgraph_state(subgraph).tensors[tensor];
}

OpCost make_cost(uint64_t macs, const char* formula, std::initializer_list<int64_t> terms) {
  OpCost cost;
  cost.macs = macs;
  cost.formula = formula;
  for (int64_t term : terms) {
    if (cost.term_count == OpCost::kMaxTerms) break;
    cost.terms[cost.term_count++] = term;
  }
  return cost;
}

bool has_input(const OperatorView& op, int slot) {
  return slot >= 0 && static_cast<size_t>(slot) < op.inputs.size && op.inputs[slot] >= 0;
}

int input_rank(const SubgraphView& subgraph, const OperatorView& op, int slot) {
  if (!has_input(op, slot)) return 0;
  return static_cast<int>(subgraph.tensor(op.inputs[slot]).shape.size);
}

int64_t input_dim(const SubgraphView& subgraph, const OperatorView& op, int slot, int i) {
  if (!has_input(op, slot)) return 0;
  const Span<int32_t> shape = subgraph.tensor(op.inputs[slot]).shape;
  const int rank = static_cast<int>(shape.size);
  if (i < 0) i += rank;
  if (i < 0 || i >= rank) return 0;
  return shape[static_cast<size_t>(i)];
}

uint64_t rows_of(const SubgraphView& subgraph, const OperatorView& op, int slot, int64_t features) {
  if (!has_input(op, slot) || features <= 0) return 0;
  return subgraph.tensor(op.inputs[slot]).element_count() / static_cast<uint64_t>(features);
}

// LSTM input slots: 0 x, 1-4 input-to-{input,forget,cell,output} weights
// [H,I] (slot 1 is omitted for CIFG), 5-8 recurrent weights [H,O], 16
// projection [O,H].
OpCost lstm_cost(const SubgraphView& sg, const OperatorView& op, bool sequence) {
  if (!has_input(op, 2) || !has_input(op, 6)) return OpCost();
  const int64_t hidden = input_dim(sg, op, 2, 0), in = input_dim(sg, op, 2, 1);
  const int64_t out = input_dim(sg, op, 6, 1);
  int64_t gates = 0;
  for (int slot = 1; slot <= 4; ++slot) gates += has_input(op, slot) ? 1 : 0;
  const uint64_t steps = rows_of(sg, op, 0, in);
  if (steps == 0 || hidden <= 0 || out <= 0) return OpCost();
  const uint64_t per_step = static_cast<uint64_t>(gates * hidden * (in + out));
  const int64_t s = static_cast<int64_t>(steps);
  if (has_input(op, 16)) {
    const int64_t rows = input_dim(sg, op, 16, 0), cols = input_dim(sg, op, 16, 1);
    return make_cost(steps * (per_step + static_cast<uint64_t>(rows * cols)),
                     sequence ? "T*B {} x {} gates x H {} x (I {} + O {}) + projection {} x {}"
                              : "batch {} x {} gates x H {} x (I {} + O {}) + projection {} x {}",
                     {s, gates, hidden, in, out, rows, cols});
  }
  return make_cost(steps * per_step,
                   sequence ? "T*B {} x {} gates x H {} x (I {} + O {})"
                            : "batch {} x {} gates x H {} x (I {} + O {})",
                   {s, gates, hidden, in, out});
}

// RNN inputs: 0 x, 1 weights [U,I], 2 recurrent weights [U,U].
OpCost rnn_cost(const SubgraphView& sg, const OperatorView& op, bool sequence) {
  if (input_rank(sg, op, 1) != 2) return OpCost();
  const int64_t units = input_dim(sg, op, 1, 0), in = input_dim(sg, op, 1, 1);
  const uint64_t steps = rows_of(sg, op, 0, in);
  if (steps == 0 || units <= 0) return OpCost();
  return make_cost(steps * static_cast<uint64_t>(units * (in + units)),
                   sequence ? "T*B {} x U {} x (I {} + U {})" : "batch {} x U {} x (I {} + U {})",
                   {static_cast<int64_t>(steps), units, in, units});
}

OpCost gru_cost(const SubgraphView& sg, const OperatorView& op, int input_kernel,
                int recurrent_kernel) {
  if (!has_input(op, input_kernel) || !has_input(op, recurrent_kernel)) return OpCost();
  const int64_t gates_hidden = input_dim(sg, op, input_kernel, 0);
  const int64_t in = input_dim(sg, op, input_kernel, 1);
  const int64_t hidden = input_dim(sg, op, recurrent_kernel, 1);
  const uint64_t steps = rows_of(sg, op, 0, in);
  if (steps == 0 || gates_hidden <= 0 || hidden <= 0) return OpCost();
  return make_cost(steps * static_cast<uint64_t>(gates_hidden * (in + hidden)),
                   "T*B {} x 3H {} x (I {} + H {})",
                   {static_cast<int64_t>(steps), gates_hidden, in, hidden});
}

}  // namespace gruwb
