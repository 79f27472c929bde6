#include "engine/runtime/subgraph_runner.h"

#include "engine/runtime/interpreter.h"

namespace gruwb {

const Model& SubgraphRunner::model() const { return interpreter_->model(); }

Status SubgraphRunner::prepare(int subgraph) { return interpreter_->prepare_subgraph(subgraph); }

Status SubgraphRunner::invoke(int subgraph) { return interpreter_->invoke_subgraph(subgraph); }

Tensor& SubgraphRunner::tensor(int subgraph, int32_t index) const {
  return interpreter_->subgraph_state(subgraph).tensors[index];
}

Tensor& SubgraphRunner::input(int subgraph, int i) const {
  return tensor(subgraph, model().subgraph(subgraph).inputs[static_cast<size_t>(i)]);
}

Tensor& SubgraphRunner::output(int subgraph, int i) const {
  return tensor(subgraph, model().subgraph(subgraph).outputs[static_cast<size_t>(i)]);
}

int SubgraphRunner::tensor_count(int subgraph) const {
  return interpreter_->subgraph_state(subgraph).tensor_count;
}

void SubgraphRunner::keep_on_tape(int subgraph) {
  SubgraphState& state = interpreter_->subgraph_state(subgraph);
  for (int o = 0; o < state.op_count; ++o) {
    if (!interpreter_->op_training(state.first_op + o)->on_path) continue;
    const OperatorView& op = state.nodes[o].op;
    for (Span<int32_t> list : {op.inputs, op.outputs}) {
      for (int32_t t : list) {
        if (t < 0 || state.tensors[t].kind != TensorKind::kActivation) continue;
        interpreter_->tensor_training(state.first_tensor + t)->taped = true;
      }
    }
  }
}

bool SubgraphRunner::on_tape(int subgraph, int32_t tensor) const {
  const TensorTraining* train =
      interpreter_->tensor_training(interpreter_->global_tensor_index(subgraph, tensor));
  return train && train->taped;
}

Tensor* SubgraphRunner::gradient(int subgraph, const Tensor* tensor) const {
  return interpreter_->gradient(subgraph, tensor);
}

void SubgraphRunner::zero_activation_gradients(int subgraph) {
  interpreter_->zero_activation_gradients(subgraph);
}

Status SubgraphRunner::backward(int subgraph) { return interpreter_->backward_subgraph(subgraph); }

}  // namespace gruwb
