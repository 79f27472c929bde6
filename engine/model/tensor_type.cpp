#include "engine/model/tensor_type.h"

namespace gruwb {

const char* tensor_type_name(TensorType type) {
  const char* name = fb::EnumNameTensorType(type);
  return (name && name[0]) ? name : "UNKNOWN_TYPE";
}

bool tensor_storage_bytes(TensorType type, uint64_t elements, uint64_t* bytes) {
  uint64_t bits = 0;
  switch (type) {
    case TensorType::BOOL:
    case TensorType::INT8:
    case TensorType::UINT8:
    case TensorType::FLOAT8_E4M3FN:
    case TensorType::FLOAT8_E5M2: bits = 8; break;
    case TensorType::INT16:
    case TensorType::UINT16:
    case TensorType::FLOAT16:
    case TensorType::BFLOAT16: bits = 16; break;
    case TensorType::FLOAT32:
    case TensorType::INT32:
    case TensorType::UINT32:
    case TensorType::RESOURCE: bits = 32; break;  // our runtime stores a resource id
    case TensorType::FLOAT64:
    case TensorType::INT64:
    case TensorType::UINT64:
    case TensorType::COMPLEX64: bits = 64; break;
    case TensorType::COMPLEX128: bits = 128; break;
    case TensorType::INT4:
    case TensorType::UINT4:
    case TensorType::CIRCLE_UINT4: bits = 4; break;
    case TensorType::INT2: bits = 2; break;
    default: return false;  // STRING, VARIANT, GGML blocks: no fixed size
  }
  *bytes = (elements * bits + 7) / 8;
  return true;
}

}  // namespace gruwb
