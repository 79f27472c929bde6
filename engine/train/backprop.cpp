// Backprop (engine/train/backprop.h): the backward steps of an interpreter
// prepared for training. Moved out of the runtime's interpreter.

#include "engine/train/backprop.h"

#include <cstring>

namespace gruwb {

Status Backprop::backward(Interpreter& in) {
  const int skip_op = in.training_options_.loss_op;
  SubgraphState& state = in.subgraphs_[0];
  for (int o = state.op_count - 1; o >= 0; --o) {
    if (!in.op_training_[o].on_path || o == skip_op) continue;
    OpNode& node = state.nodes[o];
    for (int32_t t : node.op.inputs) {
      if (t < 0) continue;
      TensorTraining& train = in.tensor_training_[t];
      if (train.first_backward_op == o && train.gradient.data) {
        memset(train.gradient.data, 0, train.gradient.bytes);
      }
    }
    for (int32_t t : node.op.outputs) {
      if (t < 0) continue;
      TensorTraining& train = in.tensor_training_[t];
      if (train.first_backward_op == o && train.gradient.data) {
        memset(train.gradient.data, 0, train.gradient.bytes);
      }
    }
    OpContext ctx(&in, 0, o, state.tensors, &node);
    Status status = node.kernel->backward(ctx);
    if (!status.ok()) {
      return status.prefix("backward of subgraph 0 op %d (%s): ", o, node.op.name());
    }
  }
  return Status();
}

Status Backprop::backward_subgraph(Interpreter& in, int index) {
  SubgraphState& state = in.subgraphs_[index];
  for (int o = state.op_count - 1; o >= 0; --o) {
    if (!in.op_training_[state.first_op + o].on_path) continue;
    OpNode& node = state.nodes[o];
    OpContext ctx(&in, index, o, state.tensors, &node);
    Status status = node.kernel->backward(ctx);
    if (!status.ok()) {
      return status.prefix("backward of subgraph %d op %d (%s): ", index, o, node.op.name());
    }
  }
  return Status();
}

void Backprop::zero_activation_gradients(Interpreter& in, int index) {
  SubgraphState& state = in.subgraphs_[index];
  for (int t = 0; t < state.tensor_count; ++t) {
    TensorTraining& train = in.tensor_training_[state.first_tensor + t];
    if (!train.trainable && train.gradient.data) {
      memset(train.gradient.data, 0, train.gradient.bytes);
    }
  }
}

void Backprop::zero_weight_gradients(Interpreter& in) {
  for (int t = 0; t < in.total_tensors_; ++t) {
    TensorTraining& train = in.tensor_training_[t];
    if (train.trainable) memset(train.gradient.data, 0, train.gradient.bytes);
  }
}

}  // namespace gruwb
