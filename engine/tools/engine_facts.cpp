#include "engine/tools/engine_facts.h"

#include <string>

#include "engine/tools/model_runner.h"

namespace gruwb::tools {

EngineFacts engine_facts(const ModelDef& def) {
  EngineFacts facts;
  std::vector<uint8_t> bytes;
  std::string error;
  if (!write_model(def, ModelFormat::kTflite, &bytes, &error)) return facts;
  Model model;
  if (!Model::load(bytes.data(), bytes.size(), &model).ok()) return facts;
  ModelRunner runner;
  if (!runner.prepare(model, &error)) return facts;
  const int subgraphs = model.subgraph_count();
  facts.shapes.resize(static_cast<size_t>(subgraphs));
  facts.folded_scalars.resize(static_cast<size_t>(subgraphs));
  facts.types.resize(static_cast<size_t>(subgraphs));
  for (int s = 0; s < subgraphs; ++s) {
    const SubgraphState& state = runner.interpreter().subgraph_state(s);
    if (!state.prepared) continue;
    for (int t = 0; t < state.tensor_count; ++t) {
      const Tensor& tensor = state.tensors[t];
      facts.shapes[static_cast<size_t>(s)].emplace_back(tensor.shape.dims,
                                                        tensor.shape.dims + tensor.shape.rank);
      facts.types[static_cast<size_t>(s)].push_back(tensor.type);
      if (tensor.kind == TensorKind::kConstant && tensor.type == TensorType::INT32 &&
          tensor.elements() == 1 && tensor.data) {
        facts.folded_scalars[static_cast<size_t>(s)][t] = tensor.i32()[0];
      }
    }
  }
  return facts;
}

}  // namespace gruwb::tools
