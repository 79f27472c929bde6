#include "engine/tools/tensor_list_lowering.h"

#include "engine/model/tensor_type.h"
#include "engine/tools/engine_facts.h"
#include "engine/tools/graph_writer.h"

namespace gruwb::tools {
namespace {

using BO = fb::BuiltinOperator;

bool is_list_op(const ModelDef& def, const fb::OperatorT& o, std::string* name) {
  const fb::OperatorCodeT& code = *def.operator_codes[o.opcode_index];
  if (code.builtin_code != BO::CUSTOM || code.custom_code.rfind("FlexTensorList", 0) != 0) {
    return false;
  }
  *name = code.custom_code;
  return true;
}

int dense_reshape(GraphWriter& g, int x, int out, const Dims& shape, const std::string& name) {
  fb::ReshapeOptionsT options;
  options.new_shape = shape;
  g.op(BO::RESHAPE,
       {x, g.constant_i32(name + "/shape", {static_cast<int32_t>(shape.size())}, shape)}, {out},
       options);
  return out;
}

// list' = CONCATENATION(SLICE(list, 0, [i,-1..]), EXPAND_DIMS(item, 0),
//                       SLICE(list, [i+1,0..], [-1..])) along axis 0.
void set_item(GraphWriter& g, int list, int index, int item, int out, const std::string& name) {
  const Dims& shape = g.shape(list);
  const int32_t rank = static_cast<int32_t>(shape.size());
  fb::ConcatenationOptionsT axis0;
  axis0.axis = 0;
  int at = reshape(g, index, {1}, name + "/index");
  int next = reshape(g, binary(g, BO::ADD, index, g.scalar_i32(1), name + "/next"), {1},
                     name + "/next_index");
  int head_size = g.tensor(name + "/head_size", {rank}, fb::TensorType::INT32);
  g.op(BO::CONCATENATION,
       {at, g.constant_i32(name + "/rest", {rank - 1}, std::vector<int32_t>(rank - 1, -1))},
       {head_size}, axis0);
  int tail_begin = g.tensor(name + "/tail_begin", {rank}, fb::TensorType::INT32);
  g.op(BO::CONCATENATION,
       {next, g.constant_i32(name + "/origin", {rank - 1}, std::vector<int32_t>(rank - 1, 0))},
       {tail_begin}, axis0);
  int head = g.tensor(name + "/head", shape, g.type(list));
  int tail = g.tensor(name + "/tail", shape, g.type(list));
  g.op(BO::SLICE,
       {list, g.constant_i32(name + "/zeros", {rank}, std::vector<int32_t>(rank, 0)), head_size},
       {head}, fb::SliceOptionsT());
  g.op(BO::SLICE,
       {list, tail_begin, g.constant_i32(name + "/to_end", {rank}, std::vector<int32_t>(rank, -1))},
       {tail}, fb::SliceOptionsT());
  Dims row = shape;
  row[0] = 1;
  int expanded = g.tensor(name + "/item", row, g.type(list));
  g.op(BO::EXPAND_DIMS, {item, g.scalar_i32(0)}, {expanded}, fb::ExpandDimsOptionsT());
  g.op(BO::CONCATENATION, {head, expanded, tail}, {out}, axis0);
  // The slices change length with the index: TFLite plans a tensor as dynamic only when its
  // shape signature says so (a static shape here makes it reuse the planned size).
  Dims varying = shape;
  varying[0] = -1;
  for (int t : {head, tail}) g.sg().tensors[static_cast<size_t>(t)]->shape_signature = varying;
}

}  // namespace

bool lower_tensor_lists(ModelDef* model, LoweringResult* result, std::string* error) {
  *result = LoweringResult();
  bool any = false;
  std::string name;
  for (const auto& sg : model->subgraphs) {
    for (const auto& o : sg->operators) any |= is_list_op(*model, *o, &name);
  }
  if (!any) return true;
  const EngineFacts facts = engine_facts(*model);
  if (facts.shapes.size() != model->subgraphs.size()) {
    *error = "the engine cannot prepare the model, so the lists' dense shapes are unknown";
    return false;
  }
  for (size_t s = 0; s < model->subgraphs.size(); ++s) {
    fb::SubGraphT& sg = *model->subgraphs[s];
    if (facts.shapes[s].size() != sg.tensors.size()) continue;  // a subgraph nobody calls
    // Lists become the dense tensors the engine planned for them.
    for (size_t t = 0; t < sg.tensors.size(); ++t) {
      fb::TensorT& tensor = *sg.tensors[t];
      if (tensor.type != fb::TensorType::VARIANT) continue;
      tensor.type = facts.types[s][t];
      tensor.shape = facts.shapes[s][t];
      tensor.shape_signature.clear();
    }
    GraphWriter g(model, static_cast<int>(s));
    std::vector<std::unique_ptr<fb::OperatorT>> ops;
    std::vector<std::unique_ptr<fb::OperatorT>> old = std::move(sg.operators);
    sg.operators.clear();
    for (auto& o : old) {
      if (!is_list_op(*model, *o, &name)) {
        ops.push_back(std::move(o));
        continue;
      }
      const auto& in = o->inputs;
      const int out = o->outputs.empty() ? -1 : o->outputs[0];
      const std::string label = "op '" + name + "' in subgraph " + std::to_string(s);
      if (out < 0 || in.empty() || in[0] < 0) return *error = label + " has no list", false;
      const std::string p = sg.tensors[static_cast<size_t>(out)]->name + "/lowered";
      const Dims& shape = facts.shapes[s][static_cast<size_t>(out)];
      if (name == "FlexTensorListReserve") {
        // A zero constant: the output tensor takes a buffer of zeros.
        uint64_t elements = 1, bytes = 0;
        for (int32_t d : shape) elements *= static_cast<uint64_t>(d < 0 ? 0 : d);
        if (!tensor_storage_bytes(g.type(out), elements, &bytes) || bytes > (1u << 30)) {
          return *error = label + ": a list of " + std::to_string(elements) + " elements", false;
        }
        const int zero =
            g.constant_bytes(p, shape, g.type(out), std::vector<uint8_t>(bytes, 0).data(), bytes);
        sg.tensors[static_cast<size_t>(out)]->buffer =
            sg.tensors[static_cast<size_t>(zero)]->buffer;
      } else if (name == "FlexTensorListFromTensor" || name == "FlexTensorListStack") {
        dense_reshape(g, in[0], out, shape, p);
      } else if (name == "FlexTensorListGetItem" && in.size() >= 2) {
        fb::GatherOptionsT gather;
        gather.axis = 0;
        g.op(BO::GATHER, {in[0], in[1]}, {out}, gather);
      } else if (name == "FlexTensorListSetItem" && in.size() == 3) {
        set_item(g, in[0], in[1], in[2], out, p);
      } else {
        return *error = label + " has no builtin form here", false;
      }
      for (auto& added : sg.operators) ops.push_back(std::move(added));
      sg.operators.clear();
      ++result->ops;
    }
    sg.operators = std::move(ops);
  }
  return true;
}

}  // namespace gruwb::tools
