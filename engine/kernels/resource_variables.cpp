// Resource variables: VAR_HANDLE names a variable (container, shared_name) and
// outputs its id; ASSIGN_VARIABLE writes it, READ_VARIABLE reads it. The
// storage is persistent and sized by the first ASSIGN_VARIABLE seen in prepare.

#include <cstring>

#include "engine/kernels/kernel_util.h"
#include "engine/runtime/interpreter.h"

namespace gruwb {
namespace {

Status prepare_handle(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const auto* options = ctx.op().options<fb::VarHandleOptions>();
  const char* container = options && options->container() ? options->container()->c_str() : "";
  const char* name = options && options->shared_name() ? options->shared_name()->c_str() : "";
  int32_t id = 0;
  GRUWB_RETURN_IF_ERROR(ctx.interpreter().find_or_add_resource(container, name, &id));
  int32_t* stored = nullptr;
  GRUWB_RETURN_IF_ERROR(
      ctx.allocate_persistent(sizeof(int32_t), reinterpret_cast<void**>(&stored)));
  *stored = id;
  ctx.set_user_data(stored);
  Tensor* output = ctx.output(0);
  output->type = TensorType::RESOURCE;
  set_output_shape(output, Shape{});
  return Status();
}

Status eval_handle(OpContext& ctx) {
  *ctx.output(0)->i32() = *static_cast<int32_t*>(ctx.user_data());
  return Status();
}

// The handle is produced by a VAR_HANDLE in the same subgraph; prepare needs
// its id before any eval ran, so we find that op.
Status resource_of(OpContext& ctx, ResourceVariable** out) {
  const Tensor* handle = ctx.input(0);
  GRUWB_RETURN_IF_ERROR(expect_type(handle, TensorType::RESOURCE, "resource handle"));
  Interpreter& interpreter = ctx.interpreter();
  SubgraphState& state = interpreter.subgraph_state(ctx.subgraph_index());
  for (int o = 0; o < state.op_count; ++o) {
    const OpNode& node = state.nodes[o];
    if (node.op.op_code != static_cast<int32_t>(BuiltinOperator::VAR_HANDLE)) continue;
    if (&state.tensors[node.op.outputs[0]] != handle || !node.user_data) continue;
    *out = &interpreter.resource(*static_cast<int32_t*>(node.user_data));
    return Status();
  }
  return Status::error(StatusCode::kUnsupported,
                       "resource handle '%s' does not come from a VAR_HANDLE before this op",
                       handle->name);
}

Status prepare_assign(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  ResourceVariable* variable = nullptr;
  GRUWB_RETURN_IF_ERROR(resource_of(ctx, &variable));
  const Tensor* value = ctx.input(1);
  size_t bytes = 0;
  if (!tensor_bytes(value->type, value->shape, &bytes)) {
    return Status::error(StatusCode::kUnsupported, "%s resource variables",
                         tensor_type_name(value->type));
  }
  if (!variable->data) {
    variable->type = value->type;
    variable->shape = value->shape;
    variable->bytes = bytes;
    void* data = nullptr;
    GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(bytes, &data));
    variable->data = static_cast<uint8_t*>(data);
  } else if (variable->type != value->type || variable->shape != value->shape) {
    return Status::error(StatusCode::kUnsupported,
                         "variable '%s' is assigned values of different shapes or types",
                         variable->shared_name);
  }
  ctx.set_user_data(variable);
  return Status();
}

Status eval_assign(OpContext& ctx) {
  auto* variable = static_cast<ResourceVariable*>(ctx.user_data());
  memcpy(variable->data, ctx.input(1)->data, variable->bytes);
  return Status();
}

Status prepare_read(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  ResourceVariable* variable = nullptr;
  GRUWB_RETURN_IF_ERROR(resource_of(ctx, &variable));
  if (!variable->data) {
    return Status::error(StatusCode::kUnsupported,
                         "variable '%s' is read before any ASSIGN_VARIABLE gives it a shape",
                         variable->shared_name);
  }
  ctx.set_user_data(variable);
  Tensor* output = ctx.output(0);
  output->type = variable->type;
  set_output_shape(output, variable->shape);
  return Status();
}

Status eval_read(OpContext& ctx) {
  auto* variable = static_cast<ResourceVariable*>(ctx.user_data());
  memcpy(ctx.output(0)->data, variable->data, variable->bytes);
  return Status();
}

}  // namespace

extern const KernelRegistration kVarHandleKernel = {
    static_cast<int32_t>(BuiltinOperator::VAR_HANDLE), nullptr, prepare_handle, eval_handle};
extern const KernelRegistration kAssignVariableKernel = {
    static_cast<int32_t>(BuiltinOperator::ASSIGN_VARIABLE), nullptr, prepare_assign, eval_assign};
extern const KernelRegistration kReadVariableKernel = {
    static_cast<int32_t>(BuiltinOperator::READ_VARIABLE), nullptr, prepare_read, eval_read};

}  // namespace gruwb
