#pragma once
// Facts about tensor element types: names and storage sizes.

#include <cstddef>
#include <cstdint>

#include "engine/schema/model_generated.h"

namespace gruwb {

using TensorType = fb::TensorType;

const char* tensor_type_name(TensorType type);  // "FLOAT32", "INT8", ...

// Bytes needed to store `elements` values of `type`; sub-byte types (INT4,
// UINT4, INT2) are packed. Returns false for types without a fixed size
// (STRING, RESOURCE, VARIANT) or unknown values.
bool tensor_storage_bytes(TensorType type, uint64_t elements, uint64_t* bytes);

}  // namespace gruwb
