// IF: input 0 is a BOOL condition; the other inputs go to the chosen branch
// subgraph, whose outputs become the op's outputs. Both branches must produce
// the same shapes (static planning).

#include <cstring>

#include "engine/kernels/kernel_util.h"
#include "engine/kernels/op_cost.h"

namespace gruwb {
namespace {

Status prepare_branch(OpContext& ctx, int branch) {
  SubgraphRunner subgraphs = ctx.subgraphs();
  SubgraphView sg = subgraphs.model().subgraph(branch);
  if (static_cast<int>(sg.inputs.size) != ctx.input_count() - 1 ||
      static_cast<int>(sg.outputs.size) != ctx.output_count()) {
    return Status::error(StatusCode::kInvalidModel,
                         "branch subgraph %d '%s' takes %d inputs and gives %d outputs; the IF "
                         "passes %d and expects %d",
                         branch, sg.name, static_cast<int>(sg.inputs.size),
                         static_cast<int>(sg.outputs.size), ctx.input_count() - 1,
                         ctx.output_count());
  }
  for (int i = 1; i < ctx.input_count(); ++i) {
    subgraphs.input(branch, i - 1).shape = ctx.input(i)->shape;
  }
  return subgraphs.prepare(branch);
}

Status prepare(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::IfOptions>();
  GRUWB_RETURN_IF_ERROR(expect_type(ctx.input(0), TensorType::BOOL, "condition"));
  const int branches[2] = {options->then_subgraph_index(), options->else_subgraph_index()};
  for (int branch : branches) GRUWB_RETURN_IF_ERROR(prepare_branch(ctx, branch));
  SubgraphRunner subgraphs = ctx.subgraphs();
  for (int o = 0; o < ctx.output_count(); ++o) {
    const Tensor* results[2];
    for (int b = 0; b < 2; ++b) results[b] = &subgraphs.output(branches[b], o);
    if (results[0]->shape != results[1]->shape || results[0]->type != results[1]->type) {
      return Status::error(StatusCode::kUnsupported,
                           "output %d differs between the branches; both must give the same "
                           "shape and type",
                           o);
    }
    ctx.output(o)->type = results[0]->type;
    set_output_shape(ctx.output(o), results[0]->shape);
  }
  return Status();
}

Status eval(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::IfOptions>();
  bool condition = *reinterpret_cast<const bool*>(ctx.input(0)->data);
  int branch = condition ? options->then_subgraph_index() : options->else_subgraph_index();
  SubgraphRunner subgraphs = ctx.subgraphs();
  for (int i = 1; i < ctx.input_count(); ++i) {
    Tensor& arg = subgraphs.input(branch, i - 1);
    if (arg.data) memcpy(arg.data, ctx.input(i)->data, arg.bytes);
  }
  GRUWB_RETURN_IF_ERROR(subgraphs.invoke(branch));
  for (int o = 0; o < ctx.output_count(); ++o) {
    const Tensor& result = subgraphs.output(branch, o);
    memcpy(ctx.output(o)->data, result.data, ctx.output(o)->bytes);
  }
  return Status();
}

// One branch runs; which one is data, so the dearer one is counted.
OpCost cost(const OpCostQuery& q) {
  const auto* options = q.op.options<fb::IfOptions>();
  if (!options) return OpCost();
  const Model& model = *q.subgraph.model;
  const uint64_t then_macs = subgraph_macs(model, options->then_subgraph_index(), q.ops);
  const uint64_t else_macs = subgraph_macs(model, options->else_subgraph_index(), q.ops);
  if (then_macs == 0 && else_macs == 0) return OpCost();
  return make_cost(then_macs > else_macs ? then_macs : else_macs,
                   "the dearer branch of then {} and else {}",
                   {static_cast<int64_t>(then_macs), static_cast<int64_t>(else_macs)});
}

}  // namespace

extern const KernelRegistration kIfKernel = {
    static_cast<int32_t>(BuiltinOperator::IF), nullptr, prepare, eval, nullptr, cost};

}  // namespace gruwb
