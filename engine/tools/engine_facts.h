#pragma once
// What the engine's prepare knows that a file may not say: converters leave
// placeholder shapes ([1,1,1], rank 0 for loop values, VARIANT lists) and
// compute trip counts from SHAPE at run time. Host tools (the RNN detector,
// the tensor-list lowering) read the engine's inferred facts instead.

#include <cstdint>
#include <map>
#include <vector>

#include "engine/tools/model_writer.h"

namespace gruwb::tools {

// Empty (no subgraphs) when the engine cannot prepare the model.
struct EngineFacts {
  std::vector<std::vector<std::vector<int32_t>>> shapes;  // [subgraph][tensor]
  std::vector<std::vector<TensorType>> types;             // [subgraph][tensor], lists: elements
  std::vector<std::map<int, int64_t>> folded_scalars;     // int scalars folded at prepare
};

EngineFacts engine_facts(const ModelDef& def);

}  // namespace gruwb::tools
