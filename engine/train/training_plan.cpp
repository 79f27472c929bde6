// The training plan (engine/train/training_plan.h): trainable weights, the
// gradient path, training lifetimes. Moved out of the runtime's interpreter;
// the code is unchanged.

#include "engine/train/training_plan.h"

#include <cstring>

#include "engine/train/backprop.h"

namespace gruwb {
namespace {

// Gradient paths are marked before the kernels' prepare gives Flex TensorLists (VARIANT in
// the file) their element type; the lists of recurrent models hold floats.
bool carries_gradient(TensorType type) {
  return type == TensorType::FLOAT32 || type == TensorType::VARIANT;
}

bool is_while(const OperatorView& op) {
  return op.op_code == static_cast<int32_t>(BuiltinOperator::WHILE);
}

}  // namespace

Status TrainingPlan::init_training(Interpreter& in) {
  const TrainingOptions& options = in.training_options_;
  if (options.optimizer_slots < 0 || options.optimizer_slots > 2) {
    return Status::error(StatusCode::kInvalidArgument, "%d optimizer slots (0..2)",
                         options.optimizer_slots);
  }
  for (int g = 0; g < in.total_tensors_; ++g) {
    if (!options.trainable || !options.trainable[g]) continue;
    Tensor& tensor = in.subgraphs_[0].tensors[g];
    TensorTraining& train = in.tensor_training_[g];
    if (tensor.kind != TensorKind::kConstant || tensor.type != TensorType::FLOAT32 ||
        tensor.bytes == 0) {
      return Status::error(StatusCode::kInvalidArgument,
                           "tensor %d '%s' cannot be trained: only constant float32 weights "
                           "can (it is a %s %s tensor)",
                           g, tensor.name,
                           tensor.kind == TensorKind::kConstant ? "constant" : "non-constant",
                           tensor_type_name(tensor.type));
    }
    // The model's bytes stay read-only (flash on a board): train a copy.
    void* copy = nullptr;
    GRUWB_RETURN_IF_ERROR(in.allocate_persistent(tensor.bytes, &copy));
    memcpy(copy, tensor.data, tensor.bytes);
    tensor.data = static_cast<uint8_t*>(copy);
    in.training_usage_.weight_bytes += tensor.bytes;
    void* grad = nullptr;
    GRUWB_RETURN_IF_ERROR(in.allocate_persistent(tensor.bytes, &grad));
    train.gradient = tensor;
    train.gradient.data = static_cast<uint8_t*>(grad);
    in.training_usage_.weight_gradient_bytes += tensor.bytes;
    for (int slot = 0; slot < options.optimizer_slots; ++slot) {
      void* memory = nullptr;
      GRUWB_RETURN_IF_ERROR(in.allocate_persistent(tensor.bytes, &memory));
      train.state[slot] = static_cast<float*>(memory);
      in.training_usage_.optimizer_bytes += tensor.bytes;
    }
    train.trainable = true;
    train.requires_grad = true;
  }
  SubgraphView sg = in.model_->subgraph(0);
  if (options.input_gradients) {
    for (int32_t t : sg.inputs) {
      if (in.subgraphs_[0].tensors[t].type == TensorType::FLOAT32) {
        in.tensor_training_[t].requires_grad = true;
      }
    }
  }
  GRUWB_RETURN_IF_ERROR(mark_forward(in, 0));
  for (int32_t t : sg.outputs) in.tensor_training_[t].needed = true;
  GRUWB_RETURN_IF_ERROR(mark_backward(in, 0));
  for (int g = 0; g < in.total_tensors_; ++g) {
    TensorTraining& train = in.tensor_training_[g];
    if (!train.trainable && !train.needed) train.requires_grad = false;
  }
  return Status();
}

bool TrainingPlan::has_trainable_weights(Interpreter& in, int index) {
  const SubgraphState& state = in.subgraphs_[index];
  for (int t = 0; t < state.tensor_count; ++t) {
    if (in.tensor_training_[state.first_tensor + t].trainable) return true;
  }
  return false;
}

// Back to "nothing flows here" (trainable weights keep their flag).
void TrainingPlan::reset_training_marks(Interpreter& in, int index) {
  SubgraphState& state = in.subgraphs_[index];
  for (int t = 0; t < state.tensor_count; ++t) {
    TensorTraining& train = in.tensor_training_[state.first_tensor + t];
    train.requires_grad = train.trainable;
    train.needed = false;
  }
  for (int o = 0; o < state.op_count; ++o) in.op_training_[state.first_op + o].on_path = false;
  state.owner_op = -1;
}

// Forward: an op is on the gradient path when it reads a tensor that
// depends on a trainable weight (or a model input with input_gradients).
Status TrainingPlan::mark_forward(Interpreter& in, int index) {
  SubgraphState& state = in.subgraphs_[index];
  TensorTraining* tensors = in.tensor_training_ + state.first_tensor;
  for (int o = 0; o < state.op_count; ++o) {
    const OperatorView& op = state.nodes[o].op;
    bool reads_grad = false;
    for (int32_t t : op.inputs) reads_grad |= t >= 0 && tensors[t].requires_grad;
    int32_t callees[2];
    const int callee_count = called_subgraphs(op, callees);
    if (is_while(op)) {
      GRUWB_RETURN_IF_ERROR(mark_forward_while(in, index, o));
      continue;
    }
    if (callee_count > 0) {
      bool trains_inside = false;
      for (int c = 0; c < callee_count; ++c) trains_inside |= has_trainable_weights(in, callees[c]);
      if (reads_grad || trains_inside) {
        return Status::error(StatusCode::kUnsupported,
                             "subgraph %d op %d (%s) lies on the gradient path: only WHILE "
                             "loops can be trained through",
                             index, o, op.name());
      }
      continue;
    }
    if (!reads_grad) continue;
    for (int32_t t : op.outputs) {
      if (t < 0 || !carries_gradient(state.tensors[t].type) ||
          state.tensors[t].kind != TensorKind::kActivation) {
        continue;
      }
      tensors[t].requires_grad = true;
      in.op_training_[state.first_op + o].on_path = true;
    }
  }
  return Status();
}

// A loop value carries a gradient when it does on entry or when the body
// makes it depend on a trainable weight; iterate the body to a fixed point
// (each round can only add loop values). The WHILE's outputs hold the
// per-value flags.
Status TrainingPlan::mark_forward_while(Interpreter& in, int index, int o) {
  SubgraphState& state = in.subgraphs_[index];
  TensorTraining* tensors = in.tensor_training_ + state.first_tensor;
  const OperatorView& op = state.nodes[o].op;
  const auto* options = op.options<fb::WhileOptions>();
  const int body = options->body_subgraph_index();
  SubgraphView body_view = in.model_->subgraph(body);
  const int n = static_cast<int>(op.outputs.size);
  if (static_cast<int>(op.inputs.size) != n || static_cast<int>(body_view.inputs.size) != n ||
      static_cast<int>(body_view.outputs.size) != n) {
    return Status::error(StatusCode::kInvalidModel,
                         "subgraph %d op %d (WHILE): %d inputs, %d outputs, body %d takes %d and "
                         "returns %d",
                         index, o, static_cast<int>(op.inputs.size), n, body,
                         static_cast<int>(body_view.inputs.size),
                         static_cast<int>(body_view.outputs.size));
  }
  bool any_input = false;
  for (int i = 0; i < n; ++i) {
    const int32_t in = op.inputs[static_cast<size_t>(i)];
    const int32_t out = op.outputs[static_cast<size_t>(i)];
    if (out < 0) continue;
    const bool flows =
        in >= 0 && tensors[in].requires_grad && carries_gradient(state.tensors[out].type);
    tensors[out].requires_grad = flows;
    any_input |= flows;
  }
  if (!any_input && !has_trainable_weights(in, body)) return Status();
  if (index != 0) {
    return Status::error(StatusCode::kUnsupported,
                         "subgraph %d op %d: training through nested WHILE loops is not supported",
                         index, o);
  }
  SubgraphState& body_state = in.subgraphs_[body];
  TensorTraining* body_tensors = in.tensor_training_ + body_state.first_tensor;
  for (int round = 0; round <= n + 1; ++round) {
    GRUWB_RETURN_IF_ERROR(mark_body_forward(in, op, tensors, body));
    bool changed = false;
    for (int i = 0; i < n; ++i) {
      const int32_t out = op.outputs[static_cast<size_t>(i)];
      const int32_t next = body_view.outputs[static_cast<size_t>(i)];
      if (out < 0 || tensors[out].requires_grad || !body_tensors[next].requires_grad) continue;
      if (!carries_gradient(state.tensors[out].type)) continue;
      tensors[out].requires_grad = true;
      changed = true;
    }
    if (!changed) break;
  }
  bool on_path = false;
  for (int i = 0; i < n; ++i) {
    const int32_t out = op.outputs[static_cast<size_t>(i)];
    on_path |= out >= 0 && tensors[out].requires_grad;
  }
  in.op_training_[state.first_op + o].on_path = on_path;
  if (on_path) body_state.owner_op = state.first_op + o;
  return Status();
}

// Marks a WHILE body's forward afresh, its arguments seeded from the loop
// values that carry a gradient (both fixed points above and below use it).
Status TrainingPlan::mark_body_forward(Interpreter& in, const OperatorView& op,
                                       const TensorTraining* loop_tensors, int body) {
  SubgraphView body_view = in.model_->subgraph(body);
  TensorTraining* body_tensors = in.tensor_training_ + in.subgraphs_[body].first_tensor;
  reset_training_marks(in, body);
  for (size_t i = 0; i < op.outputs.size; ++i) {
    const int32_t out = op.outputs[i];
    const int32_t arg = body_view.inputs[i];
    if (out >= 0 && loop_tensors[out].requires_grad) body_tensors[arg].requires_grad = true;
  }
  return mark_forward(in, body);
}

// Backward: only ops whose outputs reach the model outputs run backward.
Status TrainingPlan::mark_backward(Interpreter& in, int index) {
  SubgraphState& state = in.subgraphs_[index];
  TensorTraining* tensors = in.tensor_training_ + state.first_tensor;
  for (int o = state.op_count - 1; o >= 0; --o) {
    OpTraining& train = in.op_training_[state.first_op + o];
    if (!train.on_path) continue;
    const OperatorView& op = state.nodes[o].op;
    bool needed = false;
    for (int32_t t : op.outputs) needed |= t >= 0 && tensors[t].needed;
    if (!needed) {
      train.on_path = false;
      if (is_while(op))
        reset_training_marks(in, op.options<fb::WhileOptions>()->body_subgraph_index());
      continue;
    }
    if (!state.nodes[o].kernel->backward) {
      return Status::error(StatusCode::kUnsupported,
                           "subgraph %d op %d (%s) is on the gradient path but has no backward "
                           "kernel yet",
                           index, o, op.name());
    }
    if (is_while(op)) {
      GRUWB_RETURN_IF_ERROR(mark_backward_while(in, index, o));
      continue;
    }
    for (int32_t t : op.inputs) {
      if (t >= 0) tensors[t].needed = true;
    }
  }
  return Status();
}

// A loop value's gradient is carried when a later use needs it: from the
// WHILE's outputs, through the body, back into the body's inputs, which are
// the previous iteration's outputs; again to a fixed point.
Status TrainingPlan::mark_backward_while(Interpreter& in, int index, int o) {
  SubgraphState& state = in.subgraphs_[index];
  TensorTraining* tensors = in.tensor_training_ + state.first_tensor;
  const OperatorView& op = state.nodes[o].op;
  const int body = op.options<fb::WhileOptions>()->body_subgraph_index();
  SubgraphView body_view = in.model_->subgraph(body);
  TensorTraining* body_tensors = in.tensor_training_ + in.subgraphs_[body].first_tensor;
  const int n = static_cast<int>(op.outputs.size);
  for (int i = 0; i < n; ++i) {
    const int32_t out = op.outputs[static_cast<size_t>(i)];
    if (out >= 0 && !tensors[out].requires_grad) tensors[out].needed = false;
  }
  for (int round = 0; round <= n + 1; ++round) {
    // The forward marks again (mark_backward prunes them), with the final
    // carried values.
    GRUWB_RETURN_IF_ERROR(mark_body_forward(in, op, tensors, body));
    for (int i = 0; i < n; ++i) {
      const int32_t out = op.outputs[static_cast<size_t>(i)];
      const int32_t next = body_view.outputs[static_cast<size_t>(i)];
      if (out >= 0 && tensors[out].needed) body_tensors[next].needed = true;
    }
    GRUWB_RETURN_IF_ERROR(mark_backward(in, body));
    bool changed = false;
    for (int i = 0; i < n; ++i) {
      const int32_t out = op.outputs[static_cast<size_t>(i)];
      const int32_t arg = body_view.inputs[static_cast<size_t>(i)];
      if (out < 0 || tensors[out].needed) continue;
      if (!body_tensors[arg].needed || !body_tensors[arg].requires_grad) continue;
      tensors[out].needed = true;
      changed = true;
    }
    if (!changed) break;
  }
  in.subgraphs_[body].owner_op = state.first_op + o;
  for (int i = 0; i < n; ++i) {
    const int32_t in = op.inputs[static_cast<size_t>(i)];
    const int32_t out = op.outputs[static_cast<size_t>(i)];
    if (in >= 0 && out >= 0 && tensors[out].needed) tensors[in].needed = true;
  }
  return Status();
}

void TrainingPlan::plan_training_lifetimes(Interpreter& in, uint32_t end_of_time) {
  SubgraphView sg = in.model_->subgraph(0);
  SubgraphState& state = in.subgraphs_[0];
  const int ops = state.op_count;
  const uint32_t loss_time = end_of_time;
  const uint32_t total_end = end_of_time + static_cast<uint32_t>(ops) + 1;
  // Backward steps run after the loss, in reverse op order.
  for (int o = 0; o < ops; ++o) {
    in.op_training_[o].backward_time = end_of_time + 1 + static_cast<uint32_t>(ops - 1 - o);
  }
  // The model inputs and outputs stay valid through backward, so callers
  // read the predictions (accuracy) after a training step and may run the
  // same sample again (evaluate) without writing it anew.
  for (int32_t t : sg.inputs) {
    if (state.tensors[t].kind == TensorKind::kActivation) {
      in.buffers_[state.first_buffer + t].last = total_end;
    }
  }
  for (int32_t t : sg.outputs) {
    if (state.tensors[t].kind == TensorKind::kActivation)
      in.buffers_[state.first_buffer + t].last = total_end;
  }
  for (int o = 0; o < ops; ++o) {
    OpTraining& train = in.op_training_[o];
    if (!train.on_path) continue;
    const OpNode& node = state.nodes[o];
    const uint32_t b = train.backward_time;
    // What a backward step reads must survive until it runs.
    for (int32_t t : node.op.inputs) {
      if (t < 0) continue;
      if (state.tensors[t].kind == TensorKind::kActivation) {
        PlannedBuffer& buffer = in.buffers_[state.first_buffer + t];
        if (buffer.last < b) buffer.last = b;
      }
      TensorTraining& tt = in.tensor_training_[t];
      if (tt.requires_grad && !tt.trainable) tt.first_backward_op = o;  // ascending: the last wins
    }
    for (int32_t t : node.op.outputs) {
      if (t < 0) continue;
      if (state.tensors[t].kind == TensorKind::kActivation) {
        PlannedBuffer& buffer = in.buffers_[state.first_buffer + t];
        if (buffer.last < b) buffer.last = b;
      }
      in.tensor_training_[t].producer = o;
    }
    if (train.tape_buffer >= 0) {
      in.buffers_[train.tape_buffer].first = node.start_time;
      in.buffers_[train.tape_buffer].last = b;
    }
    for (int32_t id : train.backward_scratch) {
      if (id < 0) continue;
      in.buffers_[id].first = b;
      in.buffers_[id].last = b;
    }
  }
  for (int t = 0; t < state.tensor_count; ++t) {
    TensorTraining& train = in.tensor_training_[t];
    Tensor& tensor = state.tensors[t];
    if (!train.requires_grad || train.trainable || tensor.kind != TensorKind::kActivation) continue;
    bool is_output = false;
    for (int32_t out : sg.outputs) is_output |= out == t;
    // The loss op's inputs: written by the caller together with the loss.
    const int loss_op = in.training_options_.loss_op;
    if (loss_op >= 0 && loss_op < ops && train.first_backward_op == loss_op) is_output = true;
    const int consumer = train.first_backward_op;  // the last on-path op reading it
    const int producer = train.producer;
    uint32_t first = total_end;
    if (is_output) {
      first = loss_time;  // the caller writes the loss gradient
      train.first_backward_op = -1;
    } else if (consumer >= 0) {
      first = in.op_training_[consumer].backward_time;
    } else if (producer >= 0) {
      first = in.op_training_[producer].backward_time;
      train.first_backward_op = producer;
    }
    uint32_t last = producer >= 0 ? in.op_training_[producer].backward_time : total_end;
    if (last < first) last = first;
    train.gradient = tensor;
    train.gradient.kind = TensorKind::kActivation;
    train.grad_buffer = in.buffer_count_;
    in.buffers_[in.buffer_count_++] = PlannedBuffer{tensor.bytes, 0, first, last};
    in.training_usage_.activation_gradient_bytes += tensor.bytes;
  }
  // WHILE bodies: every backward step of a body runs inside its loop's
  // backward step, so the body's gradients and backward scratch live there.
  for (int s = 1; s < in.subgraph_count_; ++s) {
    SubgraphState& body = in.subgraphs_[s];
    if (body.owner_op < 0 || !body.prepared) continue;
    const uint32_t b = in.op_training_[body.owner_op].backward_time;
    for (int o = 0; o < body.op_count; ++o) {
      OpTraining& train = in.op_training_[body.first_op + o];
      if (!train.on_path) continue;
      train.backward_time = b;
      for (int32_t id : train.backward_scratch) {
        if (id < 0) continue;
        in.buffers_[id].first = b;
        in.buffers_[id].last = b;
      }
    }
    for (int t = 0; t < body.tensor_count; ++t) {
      TensorTraining& train = in.tensor_training_[body.first_tensor + t];
      Tensor& tensor = body.tensors[t];
      if (!train.requires_grad || train.trainable || tensor.kind != TensorKind::kActivation) {
        continue;
      }
      train.gradient = tensor;
      train.gradient.kind = TensorKind::kActivation;
      train.grad_buffer = in.buffer_count_;
      in.buffers_[in.buffer_count_++] = PlannedBuffer{tensor.bytes, 0, b, b};
      in.training_usage_.activation_gradient_bytes += tensor.bytes;
    }
  }
}

const TrainingSteps& training_steps() {
  static const TrainingSteps steps = {
      TrainingPlan::init_training,
      TrainingPlan::plan_training_lifetimes,
      Backprop::backward,
      Backprop::backward_subgraph,
      Backprop::zero_activation_gradients,
      Backprop::zero_weight_gradients,
  };
  return steps;
}

}  // namespace gruwb
