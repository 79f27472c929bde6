#pragma once
// Flex TensorList ops as builtin ops, so that stock TFLite (without the Flex
// delegate) and TFLite Micro can run a model whose loops keep lists:
//   FlexTensorListReserve(shape, n)       -> a zero constant [n, element...]
//   FlexTensorListFromTensor(x, shape)    -> RESHAPE(x)
//   FlexTensorListStack(list, shape)      -> RESHAPE(list)
//   FlexTensorListGetItem(list, i, shape) -> GATHER(list, i)
//   FlexTensorListSetItem(list, i, item)  -> CONCATENATION(SLICE(list, 0, [i,-1..]),
//                                            EXPAND_DIMS(item, 0), SLICE(list, [i+1,0..], -1))
// (the last is TensorFlow's own lowering of TensorListSetItem). Every VARIANT
// tensor becomes the dense tensor the engine plans for it, so the list sizes
// and a dynamic batch are fixed at the sizes the engine prepared (batch 1).

#include <string>

#include "engine/tools/model_writer.h"

namespace gruwb::tools {

struct LoweringResult {
  int ops = 0;  // Flex TensorList ops rewritten
};

// Fails, naming the reason, when the engine cannot prepare the model (the
// dense shapes come from it) or a list op has an unexpected form.
bool lower_tensor_lists(ModelDef* model, LoweringResult* result, std::string* error);

}  // namespace gruwb::tools
