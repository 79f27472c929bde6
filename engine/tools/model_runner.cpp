#include "engine/tools/model_runner.h"

#include <cstring>

#include "engine/kernels/recurrent_util.h"
#include "engine/tools/memory_budget.h"

namespace gruwb::tools {

std::string npy_dtype_for(TensorType type) {
  switch (type) {
    case TensorType::FLOAT32: return "<f4";
    case TensorType::INT32: return "<i4";
    case TensorType::INT64: return "<i8";
    case TensorType::FLOAT64: return "<f8";
    case TensorType::BOOL: return "|b1";
    case TensorType::UINT8: return "|u1";
    case TensorType::INT8: return "|i1";
    case TensorType::INT16: return "<i2";
    default: return "";
  }
}

bool ModelRunner::prepare_in(size_t bytes, std::string* error) {
  if (!storage_.allocate(bytes)) {
    *error = "out of memory: cannot allocate " + std::to_string(bytes) + " bytes of arena";
    return false;
  }
  Status status = interpreter_.prepare(*model_, storage_.data(), bytes);
  if (!status.ok()) {
    *error = std::string(status_code_name(status.code())) + ": " + status.message();
    return false;
  }
  return true;
}

void ModelRunner::set_packed_weights(bool packed) {
#if defined(GRUWB_CLONED_HOT_LOOPS)
  packed_ = packed;
  interpreter_.set_op_resolver(packed ? &packed_inference_ops() : nullptr);
#else
  (void)packed;
#endif
}

bool ModelRunner::board_arena_usage(ArenaUsage* usage, std::string* error) const {
  if (!packed_) {
    *usage = interpreter_.arena_usage();
    return true;
  }
  ModelRunner board;
  if (!board.prepare(*model_, error)) return false;
  *usage = board.arena_usage();
  return true;
}

bool ModelRunner::prepare(const Model& model, std::string* error) {
  model_ = &model;
  // First pass with a generous arena learns the exact size; the second pass
  // runs in exactly that many bytes, as a board would.
  size_t probe = 1 << 20;
  for (;;) {
    std::string probe_error;
    if (prepare_in(probe, &probe_error)) break;
    if (interpreter_.arena_bytes_needed() <= probe) {
      *error = probe_error;
      return false;
    }
    probe = interpreter_.arena_bytes_needed();
    if (!within_memory_budget(probe, interpreter_.arena_usage(), error)) return false;
  }
  return prepare_in(interpreter_.arena_bytes_needed(), error);
}

bool ModelRunner::set_input(int index, const NpyArray& array, std::string* error) {
  Tensor* tensor = interpreter_.input(index);
  std::string want = npy_dtype_for(tensor->type);
  std::vector<int64_t> shape(tensor->shape.dims, tensor->shape.dims + tensor->shape.rank);
  std::string name = "input " + std::to_string(index) + " '" + tensor->name + "'";
  if (array.dtype != want) {
    *error = name + " is " + tensor_type_name(tensor->type) + " (" + want + "), the array is " +
             array.dtype;
    return false;
  }
  if (array.shape != shape) {
    *error = name + " has shape " + npy_shape_text(shape) + ", the array has " +
             npy_shape_text(array.shape);
    return false;
  }
  if (tensor->bytes > 0) std::memcpy(tensor->data, array.data.data(), tensor->bytes);
  return true;
}

bool ModelRunner::invoke(std::string* error) {
  Status status = interpreter_.invoke();
  if (!status.ok()) {
    *error = std::string(status_code_name(status.code())) + ": " + status.message();
    return false;
  }
  return true;
}

NpyArray ModelRunner::output(int index) {
  const Tensor* tensor = interpreter_.output(index);
  NpyArray array;
  array.dtype = npy_dtype_for(tensor->type);
  array.shape.assign(tensor->shape.dims, tensor->shape.dims + tensor->shape.rank);
  array.data.assign(tensor->data, tensor->data + tensor->bytes);
  return array;
}

}  // namespace gruwb::tools
