// CALL_ONCE: runs its init subgraph on the first invoke only (TFLite uses it to
// initialise resource variables).

#include "engine/kernels/kernel_util.h"

namespace gruwb {
namespace {

Status prepare(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::CallOnceOptions>();  // reader checked presence
  void* done = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(bool), &done));
  ctx.set_user_data(done);
  return ctx.subgraphs().prepare(options->init_subgraph_index());
}

Status eval(OpContext& ctx) {
  bool* done = static_cast<bool*>(ctx.user_data());
  if (*done) return Status();
  GRUWB_RETURN_IF_ERROR(
      ctx.subgraphs().invoke(ctx.op().options<fb::CallOnceOptions>()->init_subgraph_index()));
  *done = true;
  return Status();
}

}  // namespace

extern const KernelRegistration kCallOnceKernel = {static_cast<int32_t>(BuiltinOperator::CALL_ONCE),
                                                   nullptr, prepare, eval};

}  // namespace gruwb
