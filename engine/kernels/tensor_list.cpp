// TensorFlow's TensorList ops as the converter writes them with SELECT_TF_OPS (Flex):
// FlexTensorListReserve, FlexTensorListSetItem, FlexTensorListGetItem,
// FlexTensorListFromTensor, FlexTensorListStack. Stock TFLite needs the Flex delegate for
// them and TFLite Micro cannot run them at all.
//
// A list here is a dense tensor [num_elements, element_shape...] of its element type: the
// VARIANT tensors of the file take that type and shape at prepare, so WHILE copies them
// like any loop value and the arena holds them at a planned size. The element type comes
// from the TensorFlow NodeDef in custom_options (a FlexBuffer vector [op name, NodeDef
// bytes]); a -1 in the element shape is the batch (1). Elements never written read as
// zeros. Backward: SetItem routes row `index` of the list's gradient to the item and the
// rest to the older list; GetItem adds into its row; Stack and FromTensor pass through.

#include <cstring>

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

// ---- custom_options: FlexBuffer vector [op name, NodeDef] --------------------------------

uint64_t read_uint(const uint8_t* p, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Element `index` of the root vector, a string or blob: its bytes.
bool flex_vector_bytes(Span<uint8_t> buffer, size_t index, const uint8_t** data, size_t* size) {
  const uint8_t* begin = buffer.data;
  const size_t n = buffer.size;
  if (!begin || n < 3) return false;
  const size_t root_width = begin[n - 1];
  const uint8_t root_type = begin[n - 2];
  if ((root_width != 1 && root_width != 2 && root_width != 4 && root_width != 8) ||
      n < 2 + root_width || (root_type >> 2) != 10) {  // FBT_VECTOR
    return false;
  }
  // Offsets are checked as sizes from `begin`, so no pointer ever leaves the buffer.
  const size_t root_at = n - 2 - root_width;
  const uint64_t root_offset = read_uint(begin + root_at, root_width);
  if (root_offset > root_at) return false;
  const size_t vector_at = root_at - static_cast<size_t>(root_offset);
  const size_t width = size_t{1} << (root_type & 3);
  if (vector_at < width) return false;
  const uint64_t count = read_uint(begin + vector_at - width, width);
  if (index >= count || count > n || vector_at + count * (width + 1) > n) return false;
  const uint8_t type = begin[vector_at + count * width + index];
  if ((type >> 2) != 5 && (type >> 2) != 25) return false;  // FBT_STRING, FBT_BLOB
  const size_t slot_at = vector_at + index * width;
  const uint64_t item_offset = read_uint(begin + slot_at, width);
  if (item_offset > slot_at) return false;
  const size_t item_at = slot_at - static_cast<size_t>(item_offset);
  const size_t size_width = size_t{1} << (type & 3);
  if (item_at < size_width) return false;
  const uint64_t length = read_uint(begin + item_at - size_width, size_width);
  if (length > n - item_at) return false;
  const uint8_t* item = begin + item_at;
  *data = item;
  *size = static_cast<size_t>(length);
  return true;
}

// ---- the NodeDef (protobuf): attr "element_dtype" -----------------------------------------

struct Proto {
  const uint8_t* at;
  const uint8_t* end;

  bool varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && at < end; shift += 7) {
      const uint8_t b = *at++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return *out = v, true;
    }
    return false;
  }
  // Next field: number, wire type, and for length-delimited fields the payload.
  bool field(uint32_t* number, uint32_t* wire, Proto* payload, uint64_t* value) {
    uint64_t key = 0;
    if (!varint(&key)) return false;
    *number = static_cast<uint32_t>(key >> 3);
    *wire = static_cast<uint32_t>(key & 7);
    switch (*wire) {
      case 0: return varint(value);
      case 1: return end - at >= 8 ? (at += 8, true) : false;
      case 5: return end - at >= 4 ? (at += 4, true) : false;
      case 2: {
        uint64_t length = 0;
        if (!varint(&length) || length > static_cast<uint64_t>(end - at)) return false;
        *payload = Proto{at, at + length};
        at += length;
        return true;
      }
      default: return false;
    }
  }
};

// TensorFlow's DataType enum -> ours.
bool tensor_type_of(uint64_t dt, TensorType* out) {
  switch (dt) {
    case 1: *out = TensorType::FLOAT32; return true;
    case 3: *out = TensorType::INT32; return true;
    case 9: *out = TensorType::INT64; return true;
    case 10: *out = TensorType::BOOL; return true;
    default: return false;
  }
}

// NodeDef.attr (field 5) is a map<string, AttrValue>; AttrValue.type is field 6.
Status element_dtype(const OpContext& ctx, TensorType* out) {
  const uint8_t* node = nullptr;
  size_t size = 0;
  if (!flex_vector_bytes(ctx.op().custom_options, 1, &node, &size)) {
    return Status::error(StatusCode::kInvalidModel,
                         "custom_options are not a Flex op's [name, NodeDef] FlexBuffer");
  }
  Proto def{node, node + size};
  while (def.at < def.end) {
    uint32_t number = 0, wire = 0;
    Proto entry{nullptr, nullptr};
    uint64_t value = 0;
    if (!def.field(&number, &wire, &entry, &value)) break;
    if (number != 5 || wire != 2) continue;
    bool is_dtype = false;
    Proto attr{nullptr, nullptr};
    while (entry.at < entry.end) {
      uint32_t n = 0, w = 0;
      Proto part{nullptr, nullptr};
      if (!entry.field(&n, &w, &part, &value)) break;
      if (n == 1 && w == 2) {
        static const char kKey[] = "element_dtype";
        is_dtype = static_cast<size_t>(part.end - part.at) == sizeof kKey - 1 &&
                   memcmp(part.at, kKey, sizeof kKey - 1) == 0;
      } else if (n == 2 && w == 2) {
        attr = part;
      }
    }
    if (!is_dtype || !attr.at) continue;
    while (attr.at < attr.end) {
      uint32_t n = 0, w = 0;
      Proto unused{nullptr, nullptr};
      if (!attr.field(&n, &w, &unused, &value)) break;
      if (n == 6 && w == 0) {
        if (tensor_type_of(value, out)) return Status();
        return Status::error(StatusCode::kUnsupported, "element_dtype %llu is not supported",
                             static_cast<unsigned long long>(value));
      }
    }
  }
  return Status::error(StatusCode::kInvalidModel, "the NodeDef has no element_dtype");
}

// ---- shared checks --------------------------------------------------------------------------

// The element shape from a constant (folded) int tensor; -1 (unknown) is the batch, 1.
Status element_shape(const Tensor* tensor, Shape* out) {
  GRUWB_RETURN_IF_ERROR(expect_constant_index(tensor, "element_shape"));
  if (tensor->shape.rank > 1 || tensor->elements() >= kMaxRank) {
    return Status::error(StatusCode::kUnsupported, "element_shape '%s' %s", tensor->name,
                         ShapeText(tensor->shape).text);
  }
  out->rank = static_cast<int32_t>(tensor->elements());
  for (int32_t d = 0; d < out->rank; ++d) {
    const int64_t size = index_at(tensor, d);
    if (size < -1 || size > kMaxDimension) {
      return Status::error(StatusCode::kInvalidModel, "element_shape '%s' holds %lld", tensor->name,
                           static_cast<long long>(size));
    }
    out->dims[d] = size < 0 ? 1 : static_cast<int32_t>(size);
  }
  return Status();
}

Shape list_shape(int32_t count, const Shape& element) {
  Shape shape;
  shape.rank = element.rank + 1;
  shape.dims[0] = count;
  for (int32_t d = 0; d < element.rank; ++d) shape.dims[d + 1] = element.dims[d];
  return shape;
}

Shape element_of(const Shape& list) {
  Shape shape;
  shape.rank = list.rank - 1;
  for (int32_t d = 0; d < shape.rank; ++d) shape.dims[d] = list.dims[d + 1];
  return shape;
}

Status expect_list(const Tensor* list) {
  if (!list || list->shape.rank < 1 || list->type == TensorType::VARIANT) {
    return Status::error(StatusCode::kUnsupported,
                         "list '%s' does not come from a TensorListReserve/FromTensor the "
                         "engine could size",
                         list ? list->name : "(omitted)");
  }
  size_t bytes = 0;
  return element_size(list, "list", &bytes);
}

// Row `index` of the list: its byte offset, or an error naming the index.
Status row_offset(const Tensor* list, const Tensor* index, size_t* offset) {
  const int64_t i = index_at(index, 0);
  if (i < 0 || i >= list->shape.dims[0]) {
    return Status::error(StatusCode::kInvalidArgument, "index %lld is outside list '%s' of %d",
                         static_cast<long long>(i), list->name,
                         static_cast<int>(list->shape.dims[0]));
  }
  *offset = static_cast<size_t>(i) * (list->bytes / static_cast<size_t>(list->shape.dims[0]));
  return Status();
}

Status expect_index(const Tensor* index) {
  GRUWB_RETURN_IF_ERROR(expect_index_type(index, "index"));
  if (index->elements() != 1) {
    return Status::error(StatusCode::kInvalidModel, "index '%s' %s is not a scalar", index->name,
                         ShapeText(index->shape).text);
  }
  return Status();
}

// ---- FlexTensorListReserve(element_shape, num_elements) -> list -----------------------------

Status prepare_reserve(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  Shape element;
  GRUWB_RETURN_IF_ERROR(element_shape(ctx.input(0), &element));
  const Tensor* count = ctx.input(1);
  GRUWB_RETURN_IF_ERROR(expect_constant_index(count, "num_elements"));
  const int64_t n = count->elements() == 1 ? index_at(count, 0) : -1;
  if (n < 0 || n > kMaxDimension) {
    return Status::error(StatusCode::kUnsupported,
                         "num_elements '%s' must be a known count (lists that grow are not "
                         "supported)",
                         count->name);
  }
  TensorType type = TensorType::FLOAT32;
  GRUWB_RETURN_IF_ERROR(element_dtype(ctx, &type));
  Tensor* output = ctx.output(0);
  output->type = type;
  set_output_shape(output, list_shape(static_cast<int32_t>(n), element));
  return Status();
}

Status eval_reserve(OpContext& ctx) {
  Tensor* output = ctx.output(0);
  memset(output->data, 0, output->bytes);
  return Status();
}

// ---- FlexTensorListFromTensor(tensor, element_shape) -> list ---------------------------------

Status prepare_from_tensor(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* tensor = ctx.input(0);
  if (tensor->shape.rank < 1) {
    return Status::error(StatusCode::kInvalidModel, "tensor '%s' is a scalar", tensor->name);
  }
  size_t bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(tensor, "tensor", &bytes));
  Tensor* output = ctx.output(0);
  output->type = tensor->type;
  set_output_shape(output, tensor->shape);
  return Status();
}

// Stack and FromTensor copy the whole list, so their gradients pass straight through.
Status eval_copy(OpContext& ctx) {
  Tensor* output = ctx.output(0);
  memcpy(output->data, ctx.input(0)->data, output->bytes);
  return Status();
}

Status backward_copy(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(ctx.input(0));
  if (dy && dx) add_floats(dx->f32(), dy->f32(), ctx.input(0)->elements());
  return Status();
}

// ---- FlexTensorListStack(list, element_shape) -> tensor --------------------------------------

Status prepare_stack(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* list = ctx.input(0);
  GRUWB_RETURN_IF_ERROR(expect_list(list));
  Tensor* output = ctx.output(0);
  if (output->type != list->type) {
    return Status::error(StatusCode::kInvalidModel, "stack '%s' is %s but list '%s' holds %s",
                         output->name, tensor_type_name(output->type), list->name,
                         tensor_type_name(list->type));
  }
  set_output_shape(output, list->shape);
  return Status();
}

// ---- FlexTensorListGetItem(list, index, element_shape) -> item -------------------------------

Status prepare_get_item(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* list = ctx.input(0);
  GRUWB_RETURN_IF_ERROR(expect_list(list));
  GRUWB_RETURN_IF_ERROR(expect_index(ctx.input(1)));
  Tensor* output = ctx.output(0);
  output->type = list->type;
  set_output_shape(output, element_of(list->shape));
  return Status();
}

Status eval_get_item(OpContext& ctx) {
  const Tensor* list = ctx.input(0);
  Tensor* output = ctx.output(0);
  size_t offset = 0;
  GRUWB_RETURN_IF_ERROR(row_offset(list, ctx.input(1), &offset));
  memcpy(output->data, list->data + offset, output->bytes);
  return Status();
}

Status backward_get_item(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dlist = ctx.gradient(ctx.input(0));
  if (!dy || !dlist) return Status();
  size_t offset = 0;
  GRUWB_RETURN_IF_ERROR(row_offset(ctx.input(0), ctx.input(1), &offset));
  add_floats(dlist->f32() + offset / sizeof(float), dy->f32(), ctx.output(0)->elements());
  return Status();
}

// ---- FlexTensorListSetItem(list, index, item) -> list' ---------------------------------------

Status prepare_set_item(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 3, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* list = ctx.input(0);
  const Tensor* item = ctx.input(2);
  GRUWB_RETURN_IF_ERROR(expect_list(list));
  GRUWB_RETURN_IF_ERROR(expect_index(ctx.input(1)));
  if (item->type != list->type || item->shape != element_of(list->shape)) {
    return Status::error(StatusCode::kInvalidModel,
                         "item '%s' %s %s does not fit list '%s' %s of %s elements", item->name,
                         tensor_type_name(item->type), ShapeText(item->shape).text, list->name,
                         ShapeText(list->shape).text, tensor_type_name(list->type));
  }
  Tensor* output = ctx.output(0);
  output->type = list->type;
  set_output_shape(output, list->shape);
  return Status();
}

Status eval_set_item(OpContext& ctx) {
  const Tensor* list = ctx.input(0);
  const Tensor* item = ctx.input(2);
  Tensor* output = ctx.output(0);
  size_t offset = 0;
  GRUWB_RETURN_IF_ERROR(row_offset(list, ctx.input(1), &offset));
  if (output->data != list->data) memcpy(output->data, list->data, output->bytes);
  memcpy(output->data + offset, item->data, item->bytes);
  return Status();
}

Status backward_set_item(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  if (!dy) return Status();
  size_t offset = 0;
  GRUWB_RETURN_IF_ERROR(row_offset(ctx.input(0), ctx.input(1), &offset));
  const int64_t row = offset / sizeof(float);
  const int64_t item_count = ctx.input(2)->elements();
  if (Tensor* ditem = ctx.gradient(ctx.input(2))) {
    add_floats(ditem->f32(), dy->f32() + row, item_count);
  }
  if (Tensor* dlist = ctx.gradient(ctx.input(0))) {
    const int64_t n = ctx.input(0)->elements();
    for (int64_t i = 0; i < n; ++i) {
      if (i < row || i >= row + item_count) dlist->f32()[i] += dy->f32()[i];
    }
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kFlexTensorListReserveKernel = {kOpCustom, "FlexTensorListReserve",
                                                                prepare_reserve, eval_reserve};
extern const KernelRegistration kFlexTensorListFromTensorKernel = {
    kOpCustom, "FlexTensorListFromTensor", prepare_from_tensor, eval_copy,
    GRUWB_BACKWARD(backward_copy)};
extern const KernelRegistration kFlexTensorListStackKernel = {
    kOpCustom, "FlexTensorListStack", prepare_stack, eval_copy, GRUWB_BACKWARD(backward_copy)};
extern const KernelRegistration kFlexTensorListGetItemKernel = {kOpCustom, "FlexTensorListGetItem",
                                                                prepare_get_item, eval_get_item,
                                                                GRUWB_BACKWARD(backward_get_item)};
extern const KernelRegistration kFlexTensorListSetItemKernel = {kOpCustom, "FlexTensorListSetItem",
                                                                prepare_set_item, eval_set_item,
                                                                GRUWB_BACKWARD(backward_set_item)};

}  // namespace gruwb
