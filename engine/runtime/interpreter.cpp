#include "engine/runtime/interpreter.h"

#include <cstring>
#include <new>

#include "engine/runtime/float_mode.h"
#include "engine/runtime/op_profiler.h"
#include "engine/runtime/state_gradient_observer.h"

namespace gruwb {
namespace {

size_t align_up(size_t n) {
  return (n + Interpreter::kAlignment - 1) & ~(Interpreter::kAlignment - 1);
}

bool is_integer_activation_type(TensorType type) {
  return type == TensorType::INT8 || type == TensorType::UINT8 || type == TensorType::INT16;
}

}  // namespace

// ---- OpContext -----------------------------------------------------------

OpContext::OpContext(Interpreter* interpreter, int subgraph, int op_index, Tensor* tensors,
                     OpNode* node)
    : interpreter_(interpreter),
      subgraph_(subgraph),
      op_index_(op_index),
      op_(node->op),
      tensors_(tensors),
      node_(node) {}

Tensor* OpContext::input(int i) const {
  if (i < 0 || static_cast<size_t>(i) >= op_.inputs.size) return nullptr;
  int32_t t = op_.inputs[static_cast<size_t>(i)];
  return t < 0 ? nullptr : &tensors_[t];
}

Tensor* OpContext::intermediate(int i) const {
  if (i < 0 || static_cast<size_t>(i) >= op_.intermediates.size) return nullptr;
  int32_t t = op_.intermediates[static_cast<size_t>(i)];
  return t < 0 ? nullptr : &tensors_[t];
}

Tensor* OpContext::output(int i) const {
  if (i < 0 || static_cast<size_t>(i) >= op_.outputs.size) return nullptr;
  int32_t t = op_.outputs[static_cast<size_t>(i)];
  return t < 0 ? nullptr : &tensors_[t];
}

Status OpContext::allocate_persistent(size_t bytes, void** out) {
  return interpreter_->allocate_persistent(bytes, out);
}

Status OpContext::request_scratch(size_t bytes, int* slot) {
  return interpreter_->add_scratch(subgraph_, op_index_, bytes, slot);
}

void* OpContext::scratch(int slot) const {
  return interpreter_->scratch_data(node_->scratch_buffer[slot]);
}

void* OpContext::user_data() const { return node_->user_data; }

bool OpContext::training() const {
  OpTraining* op = interpreter_->op_training(interpreter_->global_op_index(node_));
  return op && op->on_path;
}

Tensor* OpContext::gradient(const Tensor* tensor) const {
  return interpreter_->gradient(subgraph_, tensor);
}

Status OpContext::request_tape(size_t bytes) {
  return interpreter_->add_tape(subgraph_, op_index_, bytes);
}

void* OpContext::tape() const {
  OpTraining* op = interpreter_->op_training(interpreter_->global_op_index(node_));
  if (!op || op->tape_buffer < 0) return nullptr;
  return interpreter_->scratch_data(op->tape_buffer);
}

Status OpContext::request_backward_scratch(size_t bytes, int* slot) {
  return interpreter_->add_backward_scratch(subgraph_, op_index_, bytes, slot);
}

void* OpContext::backward_scratch(int slot) const {
  OpTraining* op = interpreter_->op_training(interpreter_->global_op_index(node_));
  if (!op || slot < 0 || slot > 1 || op->backward_scratch[slot] < 0) return nullptr;
  return interpreter_->scratch_data(op->backward_scratch[slot]);
}
void OpContext::set_user_data(void* data) { node_->user_data = data; }

bool OpContext::wants_state_gradients() const { return interpreter_->observer() != nullptr; }

void OpContext::report_state_gradient(int32_t step, float norm) const {
  StateGradientObserver* observer = interpreter_->observer();
  if (!observer) return;
  observer->on_state_gradient(subgraph_, interpreter_->global_op_index(node_), op_.name(), step,
                              norm);
}

// ---- Interpreter: tables and tensors --------------------------------------

Status Interpreter::layout_tables(size_t* table_bytes) {
  int total_tensors = 0;
  int total_ops = 0;
  for (int s = 0; s < subgraph_count_; ++s) {
    SubgraphView sg = model_->subgraph(s);
    total_tensors += sg.tensor_count;
    total_ops += sg.operator_count;
  }
  total_tensors_ = total_tensors;
  total_ops_ = total_ops;
  buffer_capacity_ = total_tensors + kMaxScratchPerOp * total_ops;
  // Training: one gradient buffer per tensor, a tape and two backward
  // scratch buffers per op (WHILE bodies included).
  const size_t train_tensors = training_ ? static_cast<size_t>(total_tensors) : 0;
  const size_t train_ops = training_ ? static_cast<size_t>(total_ops) : 0;
  buffer_capacity_ += static_cast<int32_t>(train_tensors + 3 * train_ops);
  size_t subgraph_bytes = align_up(sizeof(SubgraphState) * static_cast<size_t>(subgraph_count_));
  size_t tensor_bytes = align_up(sizeof(Tensor) * static_cast<size_t>(total_tensors));
  size_t node_bytes = align_up(sizeof(OpNode) * static_cast<size_t>(total_ops));
  size_t buffer_bytes = align_up(sizeof(PlannedBuffer) * static_cast<size_t>(buffer_capacity_));
  size_t train_tensor_bytes = align_up(sizeof(TensorTraining) * train_tensors);
  size_t train_op_bytes = align_up(sizeof(OpTraining) * train_ops);
  *table_bytes = subgraph_bytes + tensor_bytes + node_bytes + buffer_bytes + train_tensor_bytes +
                 train_op_bytes;
  usage_.metadata_bytes = *table_bytes;
  if (*table_bytes > arena_bytes_) {
    return Status::error(StatusCode::kOutOfMemory,
                         "arena of %u bytes is too small even for the model's tables (%u bytes)",
                         static_cast<unsigned>(arena_bytes_), static_cast<unsigned>(*table_bytes));
  }
  uint8_t* cursor = arena_;
  subgraphs_ = new (cursor) SubgraphState[subgraph_count_];
  cursor += subgraph_bytes;
  Tensor* tensors = new (cursor) Tensor[total_tensors];
  cursor += tensor_bytes;
  OpNode* nodes = new (cursor) OpNode[total_ops];
  cursor += node_bytes;
  buffers_ = reinterpret_cast<PlannedBuffer*>(cursor);
  cursor += buffer_bytes;
  if (training_) {
    tensor_training_ = new (cursor) TensorTraining[train_tensors];
    cursor += train_tensor_bytes;
    op_training_ = new (cursor) OpTraining[train_ops];
  }
  for (int s = 0; s < subgraph_count_; ++s) {
    SubgraphView sg = model_->subgraph(s);
    SubgraphState& state = subgraphs_[s];
    state.tensors = tensors;
    state.nodes = nodes;
    state.tensor_count = sg.tensor_count;
    state.op_count = sg.operator_count;
    state.first_buffer = buffer_count_;
    state.first_tensor = buffer_count_;  // one buffer per tensor, in the same order
    state.first_op = static_cast<int32_t>(nodes - subgraphs_[0].nodes);
    buffer_count_ += sg.tensor_count;
    tensors += sg.tensor_count;
    nodes += sg.operator_count;
    for (int o = 0; o < sg.operator_count; ++o) state.nodes[o].op = sg.op(o);
  }
  for (int32_t b = 0; b < buffer_count_; ++b) buffers_[b] = PlannedBuffer{0, 0, 0, 0};
  return Status();
}

Status Interpreter::allocate_persistent(size_t bytes, void** out) {
  size_t start = align_up(persistent_end_);
  if (saturating_add(start, bytes) > arena_bytes_) {
    usage_.persistent_bytes = saturating_add(start, bytes) - usage_.metadata_bytes;
    return Status::error(StatusCode::kOutOfMemory,
                         "arena of %u bytes is too small: persistent data needs %u more bytes",
                         static_cast<unsigned>(arena_bytes_),
                         static_cast<unsigned>(saturating_add(start, bytes) - arena_bytes_));
  }
  *out = arena_ + start;
  memset(*out, 0, bytes);
  persistent_end_ = start + bytes;
  usage_.persistent_bytes = persistent_end_ - usage_.metadata_bytes;
  return Status();
}

Status Interpreter::add_scratch(int subgraph, int op, size_t bytes, int* slot) {
  OpNode& node = subgraphs_[subgraph].nodes[op];
  for (int s = 0; s < kMaxScratchPerOp; ++s) {
    if (node.scratch_buffer[s] >= 0) continue;
    if (buffer_count_ >= buffer_capacity_) break;
    node.scratch_buffer[s] = buffer_count_;
    buffers_[buffer_count_++] = PlannedBuffer{bytes, 0, 0, 0};
    *slot = s;
    return Status();
  }
  return Status::error(StatusCode::kInternal, "more than %d scratch buffers requested",
                       kMaxScratchPerOp);
}

Status Interpreter::add_tape(int subgraph, int op, size_t bytes) {
  const int global = subgraphs_[subgraph].first_op + op;
  if (!training_ || !op_training_[global].on_path || bytes == 0) return Status();
  if (subgraph != 0) {
    // A body's values are taped per iteration by its WHILE; a tape of a
    // tape (a fused RNN inside a loop) is not planned yet.
    return Status::error(StatusCode::kUnsupported,
                         "op %d of subgraph %d: a recurrent op inside a loop cannot be trained yet",
                         op, subgraph);
  }
  OpTraining& train = op_training_[global];
  if (train.tape_buffer >= 0) {
    return Status::error(StatusCode::kInternal, "op %d requested a second tape", op);
  }
  if (buffer_count_ >= buffer_capacity_) {
    return Status::error(StatusCode::kInternal, "no planned buffer left for op %d's tape", op);
  }
  train.tape_buffer = buffer_count_;
  buffers_[buffer_count_++] = PlannedBuffer{bytes, 0, 0, 0};
  training_usage_.tape_bytes = saturating_add(training_usage_.tape_bytes, bytes);
  return Status();
}

Status Interpreter::add_backward_scratch(int subgraph, int op, size_t bytes, int* slot) {
  *slot = -1;
  const int global = subgraphs_[subgraph].first_op + op;
  if (!training_ || !op_training_[global].on_path || bytes == 0) return Status();
  OpTraining& train = op_training_[global];
  for (int s = 0; s < 2; ++s) {
    if (train.backward_scratch[s] >= 0) continue;
    if (buffer_count_ >= buffer_capacity_) break;
    train.backward_scratch[s] = buffer_count_;
    buffers_[buffer_count_++] = PlannedBuffer{bytes, 0, 0, 0};
    *slot = s;
    return Status();
  }
  return Status::error(StatusCode::kInternal, "op %d: more than 2 backward scratch buffers", op);
}

Status Interpreter::find_or_add_resource(const char* container, const char* shared_name,
                                         int32_t* id) {
  for (int i = 0; i < resource_count_; ++i) {
    if (strcmp(resources_[i].container, container) == 0 &&
        strcmp(resources_[i].shared_name, shared_name) == 0) {
      *id = i;
      return Status();
    }
  }
  if (resource_count_ == kMaxResourceVariables) {
    return Status::error(StatusCode::kUnsupported, "more than %d resource variables",
                         kMaxResourceVariables);
  }
  resources_[resource_count_].container = container;
  resources_[resource_count_].shared_name = shared_name;
  *id = resource_count_++;
  return Status();
}

void* Interpreter::scratch_data(int32_t buffer_id) const {
  return arena_ + activations_offset_ + buffers_[buffer_id].offset;
}

namespace {
bool is_input(const SubgraphView& sg, int tensor) {
  for (int32_t in : sg.inputs) {
    if (in == tensor) return true;
  }
  return false;
}
}  // namespace

Status Interpreter::init_tensors(int s) {
  SubgraphView sg = model_->subgraph(s);
  SubgraphState& state = subgraphs_[s];
  for (int t = 0; t < sg.tensor_count; ++t) {
    TensorView view = sg.tensor(t);
    Tensor& tensor = state.tensors[t];
    tensor.type = view.type;
    tensor.shape = make_shape(view.shape);
    tensor.quantization = view.quantization;
    tensor.name = view.name;
    if (view.is_constant() && is_input(sg, t)) {
      // Its caller (the user, WHILE, IF, CALL_ONCE) would write into the file's bytes.
      return Status::error(StatusCode::kInvalidModel,
                           "subgraph %d input tensor %d '%s' is constant", s, t, view.name);
    }
    if (view.is_variable) {
      tensor.kind = TensorKind::kVariable;
      // One-pass batches: a state [1, ...] (LSTM, RNN) keeps one row per batch row, each
      // starting from the file's value (reset_variables).
      if (s == 0 && training_ && training_options_.input_batch > 0 && tensor.shape.rank > 1 &&
          tensor.shape.dims[0] == 1) {
        tensor.shape.dims[0] = training_options_.input_batch;
      }
      Status sized = tensor_bytes_or_error(tensor, &tensor.bytes);
      if (!sized.ok()) return sized.prefix("subgraph %d tensor %d (a variable): ", s, t);
      void* data = nullptr;
      GRUWB_RETURN_IF_ERROR(allocate_persistent(tensor.bytes, &data));
      tensor.data = static_cast<uint8_t*>(data);
    } else if (view.is_constant() || (view.element_count() == 0 && !is_input(sg, t))) {
      // [0]-shaped and no data: empty, unless the caller (or an op, see prepare_subgraph) fills it.
      tensor.kind = TensorKind::kConstant;
      // Never written: kernels take const. An empty one points at a static byte, so no kernel
      // copies its 0 bytes from null (UB for memcpy): after prepare no tensor's data is null.
      static uint8_t empty_data;
      tensor.bytes = view.data.size;
      tensor.data = tensor.bytes ? const_cast<uint8_t*>(view.data.data) : &empty_data;
    } else {
      tensor.kind = TensorKind::kActivation;
      // One-pass batches: a model input [1, ...] becomes [B, ...].
      if (s == 0 && training_ && training_options_.input_batch > 0 && tensor.shape.rank > 0 &&
          tensor.shape.dims[0] == 1) {
        if (is_input(sg, t)) tensor.shape.dims[0] = training_options_.input_batch;
      }
    }
  }
  return Status();
}

namespace {

// True when `name` is one of the ", "-separated entries of `list` (a whole
// entry: "GRU" is not listed by "GRUWB_GRU").
bool listed(const char* list, const char* name) {
  const size_t length = strlen(name);
  for (const char* at = list; *at;) {
    const char* end = at;
    while (*end && *end != ',') ++end;
    if (static_cast<size_t>(end - at) == length && memcmp(at, name, length) == 0) return true;
    at = *end ? end + 2 : end;
  }
  return false;
}

}  // namespace

// Full-integer models run op by op: an op whose kernel has no integer form
// (KernelRegistration::integer_activations) is refused by name when it reads
// or writes an int8/uint8/int16 activation or state (constant int8 weights of
// hybrid models are fine).
Status Interpreter::check_integer_activations(int s, int o) {
  SubgraphState& state = subgraphs_[s];
  const OpNode& node = state.nodes[o];
  if (node.kernel->integer_activations) return Status();
  for (int side = 0; side < 2; ++side) {
    const Span<int32_t> tensors = side == 0 ? node.op.inputs : node.op.outputs;
    for (uint32_t i = 0; i < tensors.size; ++i) {
      const int32_t t = tensors.data[i];
      if (t < 0 || t >= state.tensor_count) continue;
      const Tensor& tensor = state.tensors[t];
      if (tensor.kind == TensorKind::kConstant || !is_integer_activation_type(tensor.type)) {
        continue;
      }
      return Status::error(StatusCode::kUnsupported,
                           "subgraph %d op %d (%s) has no integer kernel (tensor %d '%s' is %s)", s,
                           o, node.op.name(), static_cast<int>(t), tensor.name,
                           tensor_type_name(tensor.type));
    }
  }
  return Status();
}

Status Interpreter::check_supported_ops(const OpResolver& ops) {
  // One message listing every distinct unsupported op, so users see all at once.
  char names[Status::kMessageCapacity] = {};
  size_t used = 0;
  int missing = 0;
  for (int s = 0; s < subgraph_count_; ++s) {
    SubgraphState& state = subgraphs_[s];
    for (int o = 0; o < state.op_count; ++o) {
      OpNode& node = state.nodes[o];
      node.kernel = ops.find(node.op.op_code, node.op.custom_code);
      if (node.kernel) {
        GRUWB_RETURN_IF_ERROR(check_integer_activations(s, o));
        continue;
      }
      const char* name = node.op.name();
      if (listed(names, name)) continue;
      ++missing;
      int n = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", name);
      if (n > 0)
        used = used + static_cast<size_t>(n) < sizeof names ? used + static_cast<size_t>(n)
                                                            : sizeof names - 1;
    }
  }
  if (missing == 0) return Status();
  if (ops.is_all()) {
    return Status::error(StatusCode::kUnsupported, "the engine has no kernel for %d op%s: %s",
                         missing, missing == 1 ? "" : "s", names);
  }
  // A board built with fewer ops: say which table, so the fix is obvious.
  return Status::error(StatusCode::kUnsupported,
                       "this build's op table (%s) has no kernel for %d op%s: %s", ops.name,
                       missing, missing == 1 ? "" : "s", names);
}

// ---- prepare ----------------------------------------------------------------

namespace {

// A kernel that plans with static shapes would read a bounded-dynamic
// tensor (Tensor::dynamic) at its upper bound: refuse it, naming the tensor.
Status check_dynamic_inputs(const OpContext& ctx, const KernelRegistration& kernel) {
  if (kernel.dynamic_inputs) return Status();
  for (int i = 0; i < ctx.input_count(); ++i) {
    const Tensor* input = ctx.input(i);
    if (input && input->dynamic) {
      char bound[48];
      format_shape(input->shape, bound, sizeof bound);
      return Status::error(StatusCode::kUnsupported,
                           "input %d '%s' changes shape at run time (up to %s), which this "
                           "kernel does not support",
                           i, input->name, bound);
    }
  }
  return Status();
}

// Shapes a kernel computed at prepare (FILL dims, RESHAPE, broadcasting ...) are checked once
// here, before any later kernel sizes loops or scratch from them.
Status check_output_shapes(const OpContext& ctx) {
  for (int i = 0; i < ctx.output_count(); ++i) {
    const Tensor* output = ctx.output(i);
    if (!output || (output->shape.valid_size() && output->kind != TensorKind::kVariable)) continue;
    // A bad shape fails here; a variable keeps the storage its declared shape sized
    // (init_tensors), so an op may not write more into it (an int16 FC with more input rows than
    // its variable output has).
    size_t bytes = 0;
    GRUWB_RETURN_IF_ERROR(tensor_bytes_or_error(*output, &bytes).prefix("output %d: ", i));
    if (bytes > output->bytes) {
      return Status::error(StatusCode::kInvalidModel,
                           "output %d '%s' needs %llu bytes, its variable has %llu", i,
                           output->name, static_cast<unsigned long long>(bytes),
                           static_cast<unsigned long long>(output->bytes));
    }
  }
  return Status();
}

// A tensor declared with no elements and no data starts as an empty constant (init_tensors); one
// that an op writes gets its shape from the op instead, and is planned like any activation.
void make_outputs_activations(OpContext& ctx) {
  for (int i = 0; i < ctx.output_count(); ++i) {
    Tensor* output = ctx.output(i);
    if (!output || output->kind != TensorKind::kConstant) continue;
    output->kind = TensorKind::kActivation;
    output->data = nullptr;
    output->bytes = 0;
  }
}

}  // namespace

Status Interpreter::prepare_subgraph(int index) {
  SubgraphState& state = subgraphs_[index];
  if (state.prepared) return Status();
  if (state.preparing) {
    return Status::error(StatusCode::kInvalidModel, "subgraph %d is called recursively", index);
  }
  state.preparing = true;
  for (int o = 0; o < state.op_count; ++o) {
    OpContext ctx(this, index, o, state.tensors, &state.nodes[o]);
    make_outputs_activations(ctx);
    Status status = check_dynamic_inputs(ctx, *state.nodes[o].kernel);
    if (status.ok()) status = state.nodes[o].kernel->prepare(ctx);
    if (status.ok()) status = check_output_shapes(ctx);
    if (!status.ok()) {
      return status.prefix("subgraph %d '%s' op %d (%s): ", index, model_->subgraph(index).name, o,
                           state.nodes[o].op.name());
    }
  }
  state.preparing = false;
  state.prepared = true;
  return Status();
}

// Global timeline: every op gets [start, end]; a callee's ops are numbered
// inside its caller op's span, so the planner sees exactly which tensors are
// alive while a WHILE body runs.
Status Interpreter::assign_times(int index, uint32_t* clock) {
  SubgraphState& state = subgraphs_[index];
  state.start_time = (*clock)++;
  for (int o = 0; o < state.op_count; ++o) {
    OpNode& node = state.nodes[o];
    node.start_time = (*clock)++;
    int32_t callees[2];
    int n = called_subgraphs(node.op, callees);
    for (int c = 0; c < n; ++c) {
      if (subgraphs_[callees[c]].call_sites++ == 0) {
        GRUWB_RETURN_IF_ERROR(assign_times(callees[c], clock));
      }
    }
    node.end_time = (*clock)++;
  }
  state.end_time = (*clock)++;
  return Status();
}

Status Interpreter::plan_activations() {
  uint32_t clock = 0;
  subgraphs_[0].call_sites = 1;
  GRUWB_RETURN_IF_ERROR(assign_times(0, &clock));
  const uint32_t end_of_time = clock;

  // Lifetimes of activation tensors.
  for (int s = 0; s < subgraph_count_; ++s) {
    SubgraphState& state = subgraphs_[s];
    if (!state.prepared) continue;
    SubgraphView sg = model_->subgraph(s);
    const uint32_t kNever = UINT32_MAX;
    for (int t = 0; t < state.tensor_count; ++t) {
      buffers_[state.first_buffer + t] = PlannedBuffer{0, 0, kNever, 0};
    }
    // Inputs are written by the caller when the subgraph starts, so they live
    // at least then, even when no op reads them (a WHILE cond that ignores
    // some loop values); otherwise their [first, last] would be empty and
    // the planner would overlap them with live tensors.
    for (int32_t t : sg.inputs) {
      buffers_[state.first_buffer + t].first = state.start_time;
      buffers_[state.first_buffer + t].last = state.start_time;
    }
    for (int o = 0; o < state.op_count; ++o) {
      const OpNode& node = state.nodes[o];
      for (int32_t t : node.op.outputs) {
        if (t < 0) continue;
        PlannedBuffer& b = buffers_[state.first_buffer + t];
        if (b.first == kNever) b.first = node.start_time;
        if (b.last < node.end_time) b.last = node.end_time;
      }
      for (int32_t t : node.op.inputs) {
        if (t < 0) continue;
        PlannedBuffer& b = buffers_[state.first_buffer + t];
        if (state.tensors[t].kind == TensorKind::kActivation && b.first == kNever) {
          return Status::error(StatusCode::kInvalidModel,
                               "subgraph %d op %d (%s) reads tensor %d '%s', which nothing "
                               "writes before it",
                               s, o, node.op.name(), static_cast<int>(t), state.tensors[t].name);
        }
        if (b.last < node.end_time) b.last = node.end_time;
      }
    }
    for (int32_t t : sg.outputs) buffers_[state.first_buffer + t].last = state.end_time;
    for (int t = 0; t < state.tensor_count; ++t) {
      PlannedBuffer& b = buffers_[state.first_buffer + t];
      Tensor& tensor = state.tensors[t];
      if (tensor.kind != TensorKind::kActivation) continue;
      if (b.first == kNever) {
        tensor.kind = TensorKind::kOmitted;
        continue;
      }
      Status sized = tensor_bytes_or_error(tensor, &tensor.bytes);
      if (!sized.ok()) return sized.prefix("subgraph %d tensor %d: ", s, t);
      if (tensor.bytes > usage_.largest_tensor_bytes) {
        usage_.largest_tensor = tensor.name;
        usage_.largest_tensor_subgraph = s;
        usage_.largest_tensor_index = t;
        usage_.largest_tensor_bytes = tensor.bytes;
      }
      b.bytes = tensor.bytes;
      // Taped WHILE body values live on their loop's tape (one copy per
      // iteration), which the WHILE points them at while it runs.
      if (training_ && tensor_training_[state.first_tensor + t].taped) b.bytes = 0;
      if (state.call_sites > 1) {
        b.first = 0;
        b.last = end_of_time;
      }
    }
    for (int o = 0; o < state.op_count; ++o) {
      const OpNode& node = state.nodes[o];
      for (int32_t id : node.scratch_buffer) {
        if (id < 0) continue;
        buffers_[id].first = state.call_sites > 1 ? 0 : node.start_time;
        buffers_[id].last = state.call_sites > 1 ? end_of_time : node.end_time;
      }
    }
  }
  if (subgraphs_[0].prepared) {
    for (int32_t t : model_->subgraph(0).outputs) buffers_[t].last = end_of_time;
  }
  if (training_) training_options_.steps->plan_lifetimes(*this, end_of_time);

  // Placement (engine/runtime/memory_planner.h); its work lists live at the
  // arena's tail until planning is done.
  const size_t work_bytes = planner_work_bytes(buffer_count_);
  size_t persistent = align_up(persistent_end_);
  // The padding up to the activations counts, also when planning fails here: a caller that
  // retries with arena_bytes_needed() must get enough.
  usage_.persistent_bytes = persistent - usage_.metadata_bytes;
  if (saturating_add(persistent, work_bytes) > arena_bytes_) {
    usage_.activation_bytes = work_bytes;
    return Status::error(StatusCode::kOutOfMemory,
                         "arena of %u bytes is too small to plan activations",
                         static_cast<unsigned>(arena_bytes_));
  }
  const size_t high_water =
      plan_buffers(buffers_, buffer_count_, kAlignment, arena_ + arena_bytes_ - work_bytes);
  activations_offset_ = persistent;
  // The work lists above sit in the same tail, so a model with almost no
  // activations (all folded, or tiny) needs room for them instead.
  usage_.activation_bytes = high_water > work_bytes ? high_water : work_bytes;
  if (saturating_add(persistent, high_water) > arena_bytes_) {
    return Status::error(
        StatusCode::kOutOfMemory,
        "arena too small: the model needs %llu bytes (tables %llu, persistent %llu, "
        "activations %llu), the arena has %llu",
        static_cast<unsigned long long>(usage_.total()),
        static_cast<unsigned long long>(usage_.metadata_bytes),
        static_cast<unsigned long long>(usage_.persistent_bytes),
        static_cast<unsigned long long>(usage_.activation_bytes),
        static_cast<unsigned long long>(arena_bytes_));
  }
  for (int s = 0; s < subgraph_count_; ++s) {
    SubgraphState& state = subgraphs_[s];
    for (int t = 0; t < state.tensor_count; ++t) {
      Tensor& tensor = state.tensors[t];
      if (tensor.kind != TensorKind::kActivation) continue;
      if (training_ && tensor_training_[state.first_tensor + t].taped) continue;
      tensor.data = arena_ + activations_offset_ + buffers_[state.first_buffer + t].offset;
    }
  }
  if (training_) {
    for (int t = 0; t < total_tensors_; ++t) {
      TensorTraining& train = tensor_training_[t];
      if (train.grad_buffer >= 0)
        train.gradient.data = arena_ + activations_offset_ + buffers_[train.grad_buffer].offset;
    }
  }
  return Status();
}

TensorTraining* Interpreter::tensor_training(int index) {
  if (!training_ || index < 0 || index >= total_tensors_) return nullptr;
  return &tensor_training_[index];
}

OpTraining* Interpreter::op_training(int index) {
  if (!training_ || index < 0 || index >= total_ops_) return nullptr;
  return &op_training_[index];
}

Tensor* Interpreter::gradient(int subgraph, const Tensor* tensor) {
  (void)subgraph;
  if (!training_ || !tensor) return nullptr;
  const Tensor* first = subgraphs_[0].tensors;
  if (tensor < first || tensor >= first + total_tensors_) return nullptr;
  TensorTraining& train = tensor_training_[tensor - first];
  return train.gradient.data ? &train.gradient : nullptr;
}

// ---- training (engine/train: the plan and backprop, through TrainingSteps) ----

Status Interpreter::backward() {
  if (!prepared_ || !training_) {
    return Status::error(StatusCode::kInvalidArgument,
                         "backward needs an interpreter prepared "
                         "for training");
  }
  // Flushing denormals: the caller's (Trainer::accumulate, float_mode.h).
  return training_options_.steps->backward(*this);
}

Status Interpreter::backward_subgraph(int index) {
  return training_options_.steps->backward_subgraph(*this, index);
}

void Interpreter::zero_activation_gradients(int index) {
  training_options_.steps->zero_activation_gradients(*this, index);
}

void Interpreter::zero_weight_gradients() {
  if (training_) training_options_.steps->zero_weight_gradients(*this);
}

Status Interpreter::prepare_with(const OpResolver& ops, const Model& model, uint8_t* arena,
                                 size_t arena_bytes, const TrainingOptions* training) {
  // A fresh plan, but the caller's hooks (set_observer, set_profiler,
  // set_op_resolver) belong to the caller, not to the plan: they survive.
  StateGradientObserver* observer = observer_;
  OpProfiler* profiler = profiler_;
  const OpResolver* op_resolver = op_resolver_;
  *this = Interpreter();
  observer_ = observer;
  profiler_ = profiler;
  op_resolver_ = op_resolver;
  training_ = training != nullptr;
  if (training) training_options_ = *training;
  if (training && !training->steps) {
    return Status::error(StatusCode::kInvalidArgument, "TrainingOptions::steps is null");
  }
  if (!model.table()) return Status::error(StatusCode::kInvalidArgument, "model is not loaded");
  if (!arena || (reinterpret_cast<uintptr_t>(arena) & (kAlignment - 1)) != 0) {
    return Status::error(StatusCode::kInvalidArgument, "arena must be %u-byte aligned",
                         static_cast<unsigned>(kAlignment));
  }
  model_ = &model;
  arena_ = arena;
  arena_bytes_ = arena_bytes;
  subgraph_count_ = model.subgraph_count();
  size_t table_bytes = 0;
  GRUWB_RETURN_IF_ERROR(layout_tables(&table_bytes));
  persistent_end_ = table_bytes;
  for (int s = 0; s < subgraph_count_; ++s) GRUWB_RETURN_IF_ERROR(init_tensors(s));
  GRUWB_RETURN_IF_ERROR(check_supported_ops(ops));
  if (training_) GRUWB_RETURN_IF_ERROR(training_options_.steps->init_training(*this));
  GRUWB_RETURN_IF_ERROR(prepare_subgraph(0));
  GRUWB_RETURN_IF_ERROR(plan_activations());
  reset_variables();
  prepared_ = true;
  return Status();
}

// ---- invoke -------------------------------------------------------------------

Status Interpreter::invoke_subgraph(int index) {
  SubgraphState& state = subgraphs_[index];
  for (int o = 0; o < state.op_count; ++o) {
    OpNode& node = state.nodes[o];
    OpContext ctx(this, index, o, state.tensors, &node);
    if (profiler_ && !profiler_->begin_op(index, o)) {
      return Status::error(StatusCode::kStopped, "stopped by the caller at subgraph %d op %d (%s)",
                           index, o, node.op.name());
    }
    Status status = node.kernel->eval(ctx);
    if (profiler_) profiler_->end_op(index, o, node.op.name());
    if (!status.ok()) {
      return status.prefix("subgraph %d op %d (%s): ", index, o, node.op.name());
    }
  }
  return Status();
}

Status Interpreter::invoke() {
  if (!prepared_) return Status::error(StatusCode::kInvalidArgument, "invoke before prepare");
  return with_flushed_denormals([this] { return invoke_subgraph(0); });  // float_mode.h
}

void Interpreter::reset_variables() {
  for (int s = 0; s < subgraph_count_; ++s) {
    SubgraphState& state = subgraphs_[s];
    for (int t = 0; t < state.tensor_count; ++t) {
      Tensor& tensor = state.tensors[t];
      if (tensor.kind != TensorKind::kVariable || tensor.bytes == 0) continue;
      // A variable may carry its initial value in the file; most start at zero. One grown for
      // one-pass batches (init_tensors) takes its one row's value in every row.
      Span<uint8_t> initial = model_->subgraph(s).tensor(t).data;
      if (initial.size > 0 && tensor.bytes % initial.size == 0) {
        for (size_t at = 0; at < tensor.bytes; at += initial.size) {
          memcpy(tensor.data + at, initial.data, initial.size);
        }
      } else {
        // As TFLite: an int8 variable (an integer LSTM's output state) starts
        // at its zero point, every other one at 0.
        const int value = tensor.type == TensorType::INT8 && zero_point_count(tensor.quantization)
                              ? static_cast<int>(zero_point_at(tensor.quantization, 0))
                              : 0;
        memset(tensor.data, value, tensor.bytes);
      }
    }
  }
}

int Interpreter::input_count() const { return static_cast<int>(model_->subgraph(0).inputs.size); }

int Interpreter::output_count() const { return static_cast<int>(model_->subgraph(0).outputs.size); }

Tensor* Interpreter::input(int i) {
  return &subgraphs_[0].tensors[model_->subgraph(0).inputs[static_cast<size_t>(i)]];
}

Tensor* Interpreter::output(int i) {
  return &subgraphs_[0].tensors[model_->subgraph(0).outputs[static_cast<size_t>(i)]];
}

}  // namespace gruwb
