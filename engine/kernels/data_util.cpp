#include "engine/kernels/data_util.h"

#include <cstring>

namespace gruwb {

size_t element_bytes_of(TensorType type) {
  uint64_t eight = 0;
  // Eight elements are a whole number of bytes for every packed type, so a
  // remainder tells sub-byte types apart.
  if (!tensor_storage_bytes(type, 8, &eight) || eight % 8 != 0) return 0;
  return static_cast<size_t>(eight / 8);
}

Status element_size(const Tensor* tensor, const char* role, size_t* bytes) {
  size_t size = element_bytes_of(tensor->type);
  if (size == 0) {
    return Status::error(StatusCode::kUnsupported, "%s '%s' is %s, which this op cannot move", role,
                         tensor->name, tensor_type_name(tensor->type));
  }
  *bytes = size;
  return Status();
}

Status expect_index_type(const Tensor* tensor, const char* role) {
  if (!tensor) return Status::error(StatusCode::kInvalidModel, "%s is missing", role);
  if (tensor->type != TensorType::INT32 && tensor->type != TensorType::INT64) {
    return Status::error(StatusCode::kUnsupported, "%s '%s' is %s, expected INT32 or INT64", role,
                         tensor->name, tensor_type_name(tensor->type));
  }
  return Status();
}

Status expect_constant_index(const Tensor* tensor, const char* role) {
  GRUWB_RETURN_IF_ERROR(expect_index_type(tensor, role));
  if (!is_constant(tensor)) {
    return Status::error(StatusCode::kUnsupported,
                         "%s '%s' is computed at run time; the output shape depends on it, so "
                         "it must be a constant",
                         role, tensor->name);
  }
  return Status();
}

Status normalize_axis(int64_t axis, int32_t rank, const Tensor* tensor, int32_t* out) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    return Status::error(StatusCode::kInvalidModel, "axis %lld is out of range for '%s' %s",
                         static_cast<long long>(axis), tensor->name, ShapeText(tensor->shape).text);
  }
  *out = static_cast<int32_t>(a);
  return Status();
}

namespace {

template <typename T>
void copy_row(const uint8_t* in, uint8_t* out, int64_t start, int32_t count, int64_t step) {
  const T* from = reinterpret_cast<const T*>(in) + start;
  T* to = reinterpret_cast<T*>(out);
  for (int32_t i = 0; i < count; ++i) to[i] = from[i * step];
}

// One innermost row: contiguous rows are one memcpy.
void copy_row(const uint8_t* in, uint8_t* out, size_t element_bytes, int64_t start, int32_t count,
              int64_t step) {
  if (step == 1) {
    memcpy(out, in + start * static_cast<int64_t>(element_bytes),
           static_cast<size_t>(count) * element_bytes);
    return;
  }
  switch (element_bytes) {
    case 1: copy_row<uint8_t>(in, out, start, count, step); return;
    case 2: copy_row<uint16_t>(in, out, start, count, step); return;
    case 4: copy_row<uint32_t>(in, out, start, count, step); return;
    case 8: copy_row<uint64_t>(in, out, start, count, step); return;
    default:
      for (int32_t i = 0; i < count; ++i) {
        memcpy(out + static_cast<size_t>(i) * element_bytes,
               in + (start + i * step) * static_cast<int64_t>(element_bytes), element_bytes);
      }
  }
}

}  // namespace

void strided_copy(const uint8_t* in, uint8_t* out, size_t element_bytes, int64_t base,
                  const int32_t* count, const int64_t* step, int32_t rank) {
  if (rank == 0) {
    memcpy(out, in + base * static_cast<int64_t>(element_bytes), element_bytes);
    return;
  }
  for (int32_t d = 0; d < rank; ++d) {
    if (count[d] <= 0) return;
  }
  const int32_t inner = rank - 1;
  const size_t row_bytes = static_cast<size_t>(count[inner]) * element_bytes;
  int32_t index[kMaxRank] = {};
  int64_t offset = base;
  for (;;) {
    copy_row(in, out, element_bytes, offset, count[inner], step[inner]);
    out += row_bytes;
    int32_t d = inner - 1;
    for (; d >= 0; --d) {
      offset += step[d];
      if (++index[d] < count[d]) break;
      offset -= step[d] * count[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

void strided_add_back(const float* dy, float* dx, int64_t base, const int32_t* count,
                      const int64_t* step, int32_t rank) {
  if (rank == 0) {
    dx[base] += dy[0];
    return;
  }
  for (int32_t d = 0; d < rank; ++d) {
    if (count[d] <= 0) return;
  }
  const int32_t inner = rank - 1;
  int32_t index[kMaxRank] = {};
  int64_t offset = base;
  for (;;) {
    float* row = dx + offset;
    const int64_t s = step[inner];
    for (int32_t i = 0; i < count[inner]; ++i) row[i * s] += dy[i];
    dy += count[inner];
    int32_t d = inner - 1;
    for (; d >= 0; --d) {
      offset += step[d];
      if (++index[d] < count[d]) break;
      offset -= step[d] * count[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

Status make_output_constant(OpContext& ctx, Tensor* output) {
  size_t bytes = 0;
  if (!tensor_bytes(output->type, output->shape, &bytes)) {
    return Status::error(StatusCode::kUnsupported, "output '%s' is %s", output->name,
                         tensor_type_name(output->type));
  }
  void* data = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(bytes, &data));
  output->data = static_cast<uint8_t*>(data);
  output->bytes = bytes;
  output->kind = TensorKind::kConstant;
  return Status();
}

Status fold_if_constant(OpContext& ctx, Status (*eval)(OpContext&)) {
  for (int i = 0; i < ctx.input_count(); ++i) {
    const Tensor* input = ctx.input(i);
    if (input && !is_constant(input)) return Status();
  }
  for (int i = 0; i < ctx.output_count(); ++i) {
    const Tensor* output = ctx.output(i);
    if (!output) continue;
    bool small_integer = output->type == TensorType::INT32 || output->type == TensorType::INT64 ||
                         output->type == TensorType::BOOL;
    if (!small_integer || output->elements() > kMaxFoldedElements) return Status();
  }
  for (int i = 0; i < ctx.output_count(); ++i) {
    if (ctx.output(i)) GRUWB_RETURN_IF_ERROR(make_output_constant(ctx, ctx.output(i)));
  }
  return eval(ctx);
}

}  // namespace gruwb
