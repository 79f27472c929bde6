// WHILE: loop-carried values flow op inputs -> (cond, body) -> op outputs.
// Our runtime keeps the current values in the op's output tensors and copies
// them into the cond/body inputs each iteration, as TFLite Micro does, so
// every subgraph keeps static shapes and planned memory. INT32 counters are
// ordinary int32 ADDs (the case micro runtimes choke on).

#include <cstring>

#include "engine/kernels/kernel_util.h"
#include "engine/runtime/interpreter.h"

namespace gruwb {
namespace {

// A bound, so that a model whose cond never turns false reports an error
// instead of hanging the host or the board.
constexpr int64_t kMaxIterations = int64_t{1} << 24;

void copy_tensor(const Tensor& from, Tensor& to) {
  if (to.data && to.data != from.data) memcpy(to.data, from.data, from.bytes);
}

Status prepare(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::WhileOptions>();  // reader checked presence
  Interpreter& interpreter = ctx.interpreter();
  const Model& model = interpreter.model();
  SubgraphView cond = model.subgraph(options->cond_subgraph_index());
  SubgraphView body = model.subgraph(options->body_subgraph_index());
  SubgraphState& cond_state = interpreter.subgraph_state(cond.index);
  SubgraphState& body_state = interpreter.subgraph_state(body.index);
  for (int i = 0; i < ctx.input_count(); ++i) {
    const Tensor* value = ctx.input(i);
    if (!value) return Status::error(StatusCode::kInvalidModel, "loop value %d is omitted", i);
    for (SubgraphState* state : {&cond_state, &body_state}) {
      const SubgraphView& sg = state == &cond_state ? cond : body;
      Tensor& arg = state->tensors[sg.inputs[static_cast<size_t>(i)]];
      if (arg.type != value->type) {
        return Status::error(StatusCode::kInvalidModel,
                             "loop value %d is %s but subgraph %d '%s' takes %s", i,
                             tensor_type_name(value->type), sg.index, sg.name,
                             tensor_type_name(arg.type));
      }
      arg.shape = value->shape;
    }
  }
  GRUWB_RETURN_IF_ERROR(interpreter.prepare_subgraph(cond.index));
  GRUWB_RETURN_IF_ERROR(interpreter.prepare_subgraph(body.index));
  const Tensor& condition = cond_state.tensors[cond.outputs[0]];
  if (condition.type != TensorType::BOOL || condition.elements() != 1) {
    return Status::error(StatusCode::kInvalidModel, "cond subgraph %d must return one BOOL",
                         cond.index);
  }
  for (int i = 0; i < ctx.output_count(); ++i) {
    const Tensor* value = ctx.input(i);
    const Tensor& next = body_state.tensors[body.outputs[static_cast<size_t>(i)]];
    if (next.shape != value->shape || next.type != value->type) {
      char before[48], after[48];
      format_shape(value->shape, before, sizeof before);
      format_shape(next.shape, after, sizeof after);
      return Status::error(StatusCode::kUnsupported,
                           "loop value %d changes from %s %s to %s %s in the body; loop values "
                           "must keep their shape",
                           i, tensor_type_name(value->type), before, tensor_type_name(next.type),
                           after);
    }
    Tensor* output = ctx.output(i);
    output->type = value->type;
    set_output_shape(output, value->shape);
  }
  return Status();
}

Status eval(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::WhileOptions>();
  Interpreter& interpreter = ctx.interpreter();
  const int cond_index = options->cond_subgraph_index();
  const int body_index = options->body_subgraph_index();
  SubgraphState& cond = interpreter.subgraph_state(cond_index);
  SubgraphState& body = interpreter.subgraph_state(body_index);
  Span<int32_t> cond_inputs = interpreter.model().subgraph(cond_index).inputs;
  Span<int32_t> body_inputs = interpreter.model().subgraph(body_index).inputs;
  Span<int32_t> body_outputs = interpreter.model().subgraph(body_index).outputs;
  const Tensor& condition = cond.tensors[interpreter.model().subgraph(cond_index).outputs[0]];
  const int n = ctx.output_count();
  for (int i = 0; i < n; ++i) copy_tensor(*ctx.input(i), *ctx.output(i));
  for (int64_t iteration = 0;; ++iteration) {
    if (iteration == kMaxIterations) {
      return Status::error(StatusCode::kInvalidArgument,
                           "loop did not finish after %lld iterations",
                           static_cast<long long>(kMaxIterations));
    }
    for (int i = 0; i < n; ++i) copy_tensor(*ctx.output(i), cond.tensors[cond_inputs[i]]);
    GRUWB_RETURN_IF_ERROR(interpreter.invoke_subgraph(cond_index));
    if (!*reinterpret_cast<const bool*>(condition.data)) break;
    for (int i = 0; i < n; ++i) copy_tensor(*ctx.output(i), body.tensors[body_inputs[i]]);
    GRUWB_RETURN_IF_ERROR(interpreter.invoke_subgraph(body_index));
    for (int i = 0; i < n; ++i) copy_tensor(body.tensors[body_outputs[i]], *ctx.output(i));
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kWhileKernel = {static_cast<int32_t>(BuiltinOperator::WHILE),
                                                nullptr, prepare, eval};

}  // namespace gruwb
