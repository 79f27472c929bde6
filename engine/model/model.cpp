#include "engine/model/model.h"

#include <cstdio>
#include <cstring>

namespace gruwb {
namespace {

constexpr int32_t kPlaceholderForGreaterOpCodes = 127;

template <typename T>
Span<T> span_of(const flatbuffers::Vector<T>* vector) {
  if (!vector) return {};
  return {vector->data(), vector->size()};
}

const char* str_or_empty(const flatbuffers::String* s) { return s ? s->c_str() : ""; }

template <typename T>
uint32_t count_of(const flatbuffers::Vector<T>* vector) {
  return vector ? vector->size() : 0;
}

// "[1,60,3]" into `out` (truncated if needed).
void format_shape(Span<int32_t> shape, char* out, size_t capacity) {
  size_t used = static_cast<size_t>(snprintf(out, capacity, "["));
  for (size_t i = 0; i < shape.size && used < capacity; ++i) {
    used += static_cast<size_t>(
        snprintf(out + used, capacity - used, i ? ",%d" : "%d", static_cast<int>(shape[i])));
  }
  if (used < capacity) snprintf(out + used, capacity - used, "]");
}

// Names in messages are capped at 96 characters ('%.96s') so that converter
// names of 150+ characters cannot push the sizes off the end of a Status.

// Context shared by the validation steps.
struct Validator {
  const fb::Model* model;
  ModelFormat format;
  uint32_t buffer_count;
  uint32_t opcode_count;
  uint32_t subgraph_count;

  const fb::SubGraph* subgraph(uint32_t i) const { return model->subgraphs()->Get(i); }
  uint32_t tensor_count(uint32_t sg) const { return count_of(subgraph(sg)->tensors()); }

  const char* op_label(const fb::Operator* op) const {
    if (op->opcode_index() >= opcode_count) return "?";
    const fb::OperatorCode* code = model->operator_codes()->Get(op->opcode_index());
    int32_t decoded =
        decode_op_code(code->deprecated_builtin_code(), static_cast<int32_t>(code->builtin_code()), format);
    const char* name = op_code_name(decoded);
    return name ? name : "UNKNOWN";
  }
};

Status check_buffers(const Validator& v) {
  auto buffers = v.model->buffers();
  for (uint32_t i = 0; i < v.buffer_count; ++i) {
    const fb::Buffer* buffer = buffers->Get(i);
    if (buffer->offset() > 1 || buffer->size() > 0) {
      return Status::error(StatusCode::kUnsupported,
                           "buffer %u stores its data outside the flatbuffer (models over 2 GB "
                           "are not supported)",
                           static_cast<unsigned>(i));
    }
  }
  if (v.buffer_count > 0 && count_of(buffers->Get(0)->data()) != 0) {
    return Status::error(StatusCode::kInvalidModel,
                         "buffer 0 must be the empty sentinel but holds %u bytes",
                         static_cast<unsigned>(count_of(buffers->Get(0)->data())));
  }
  return Status();
}

Status check_tensor(const Validator& v, uint32_t sg, unsigned index) {  // unsigned: %u
  const fb::Tensor* tensor = v.subgraph(sg)->tensors()->Get(index);
  const char* name = str_or_empty(tensor->name());
  Span<int32_t> shape = span_of(tensor->shape());
  if (shape.size > static_cast<size_t>(kMaxRank)) {
    return Status::error(StatusCode::kInvalidModel, "tensor %u '%.96s': rank %u exceeds %d",
                         index, name, static_cast<unsigned>(shape.size), kMaxRank);
  }
  uint64_t elements = 1;
  for (size_t d = 0; d < shape.size; ++d) {
    int64_t dim = shape[d];
    if (dim < 0 || dim > kMaxDimension) {
      return Status::error(StatusCode::kInvalidModel,
                           "tensor %u '%.96s': dimension %u is %lld (must be 0..%lld)", index, name,
                           static_cast<unsigned>(d), static_cast<long long>(dim),
                           static_cast<long long>(kMaxDimension));
    }
    elements *= static_cast<uint64_t>(dim);
    if (elements > kMaxTensorElements) {
      return Status::error(StatusCode::kInvalidModel,
                           "tensor %u '%.96s': more than %llu elements", index, name,
                           static_cast<unsigned long long>(kMaxTensorElements));
    }
  }
  for (int32_t dim : span_of(tensor->shape_signature())) {
    if (dim < -1 || dim > kMaxDimension) {
      return Status::error(StatusCode::kInvalidModel,
                           "tensor %u '%.96s': shape_signature has dimension %d (must be -1..%lld)",
                           index, name, static_cast<int>(dim),
                           static_cast<long long>(kMaxDimension));
    }
  }
  if (tensor->buffer() >= v.buffer_count && !(tensor->buffer() == 0 && v.buffer_count == 0)) {
    return Status::error(StatusCode::kInvalidModel,
                         "tensor %u '%.96s': buffer index %u out of range (model has %u buffers)",
                         index, name, static_cast<unsigned>(tensor->buffer()),
                         static_cast<unsigned>(v.buffer_count));
  }
  if (tensor->sparsity()) {
    // No kernel reads the compressed layout: the dense shape would read past the stored bytes.
    return Status::error(
        StatusCode::kUnsupported,
        "tensor %u '%.96s': sparse tensors (sparsity parameters) are not supported", index, name);
  }
  if (v.buffer_count == 0) return Status();
  uint32_t data_bytes = count_of(v.model->buffers()->Get(tensor->buffer())->data());
  uint64_t needed = 0;
  if (data_bytes != 0 && tensor_storage_bytes(tensor->type(), elements, &needed) &&
      needed != data_bytes) {
    char shape_text[64];
    format_shape(shape, shape_text, sizeof shape_text);
    return Status::error(StatusCode::kInvalidModel,
                         "tensor %u '%.96s': buffer %u has %u bytes, shape %s %s needs %llu", index,
                         name, static_cast<unsigned>(tensor->buffer()),
                         static_cast<unsigned>(data_bytes), shape_text,
                         tensor_type_name(tensor->type()),
                         static_cast<unsigned long long>(needed));
  }
  return Status();
}

Status check_index_list(const char* what, Span<int32_t> indices, uint32_t tensor_count,
                        bool allow_omitted) {
  for (size_t i = 0; i < indices.size; ++i) {
    int32_t t = indices[i];
    if (t == -1 && allow_omitted) continue;
    if (t < 0 || static_cast<uint32_t>(t) >= tensor_count) {
      return Status::error(StatusCode::kInvalidModel,
                           "%s %u is tensor %d, but the subgraph has %u tensors", what,
                           static_cast<unsigned>(i), static_cast<int>(t),
                           static_cast<unsigned>(tensor_count));
    }
  }
  return Status();
}

Status check_subgraph_index(const Validator& v, const char* role, int32_t target) {
  if (target < 0 || static_cast<uint32_t>(target) >= v.subgraph_count) {
    return Status::error(StatusCode::kInvalidModel,
                         "%s subgraph index %d out of range (model has %u subgraphs)", role,
                         static_cast<int>(target), static_cast<unsigned>(v.subgraph_count));
  }
  return Status();
}

// WHILE carries the same values through op, cond and body: the counts must agree.
Status check_while_arity(const Validator& v, const fb::Operator* op, const fb::WhileOptions* w) {
  uint32_t carried = count_of(op->inputs());
  const fb::SubGraph* cond = v.subgraph(static_cast<uint32_t>(w->cond_subgraph_index()));
  const fb::SubGraph* body = v.subgraph(static_cast<uint32_t>(w->body_subgraph_index()));
  struct {
    const char* what;
    uint32_t count;
  } checks[] = {{"outputs of the WHILE", count_of(op->outputs())},
                {"inputs of its cond subgraph", count_of(cond->inputs())},
                {"inputs of its body subgraph", count_of(body->inputs())},
                {"outputs of its body subgraph", count_of(body->outputs())}};
  for (const auto& check : checks) {
    if (check.count != carried) {
      return Status::error(StatusCode::kInvalidModel,
                           "WHILE carries %u values but there are %u %s",
                           static_cast<unsigned>(carried), static_cast<unsigned>(check.count),
                           check.what);
    }
  }
  if (count_of(cond->outputs()) != 1) {
    return Status::error(StatusCode::kInvalidModel,
                         "WHILE cond subgraph %d must have 1 output, it has %u",
                         static_cast<int>(w->cond_subgraph_index()),
                         static_cast<unsigned>(count_of(cond->outputs())));
  }
  return Status();
}

// Subgraph indices are checked wherever a control-flow options table appears,
// whatever the op code says: the call graph (and the runtime) follow the
// tables, so a corrupt op carrying WhileOptions must not slip through.
Status check_control_flow(const Validator& v, const fb::Operator* op, int32_t op_code) {
  const fb::WhileOptions* w = op->builtin_options_as_WhileOptions();
  const fb::IfOptions* branches = op->builtin_options_as_IfOptions();
  const fb::CallOnceOptions* once = op->builtin_options_as_CallOnceOptions();
  if (w) {
    GRUWB_RETURN_IF_ERROR(check_subgraph_index(v, "cond", w->cond_subgraph_index()));
    GRUWB_RETURN_IF_ERROR(check_subgraph_index(v, "body", w->body_subgraph_index()));
  }
  if (branches) {
    GRUWB_RETURN_IF_ERROR(check_subgraph_index(v, "then", branches->then_subgraph_index()));
    GRUWB_RETURN_IF_ERROR(check_subgraph_index(v, "else", branches->else_subgraph_index()));
  }
  if (once) GRUWB_RETURN_IF_ERROR(check_subgraph_index(v, "init", once->init_subgraph_index()));
  Span<int32_t> inputs = span_of(op->inputs());
  for (size_t i = 0; (w || branches || once) && i < inputs.size; ++i) {
    if (inputs[i] < 0) {  // the values control flow carries into subgraphs cannot be omitted
      return Status::error(StatusCode::kInvalidModel, "input %u is -1 (omitted)",
                           static_cast<unsigned>(i));
    }
  }
  switch (static_cast<BuiltinOperator>(op_code)) {
    case BuiltinOperator::WHILE:
      if (!w) return Status::error(StatusCode::kInvalidModel, "WHILE has no WhileOptions");
      return check_while_arity(v, op, w);
    case BuiltinOperator::IF:
      if (!branches) return Status::error(StatusCode::kInvalidModel, "IF has no IfOptions");
      return Status();
    case BuiltinOperator::CALL_ONCE:
      if (!once) return Status::error(StatusCode::kInvalidModel, "CALL_ONCE has no CallOnceOptions");
      return Status();
    default: return Status();
  }
}

Status check_operator(const Validator& v, uint32_t sg, uint32_t index) {
  const fb::Operator* op = v.subgraph(sg)->operators()->Get(index);
  if (op->opcode_index() >= v.opcode_count) {
    return Status::error(StatusCode::kInvalidModel,
                         "opcode_index %u out of range (model has %u operator codes)",
                         static_cast<unsigned>(op->opcode_index()),
                         static_cast<unsigned>(v.opcode_count));
  }
  if (op->large_custom_options_offset() > 1) {
    return Status::error(StatusCode::kUnsupported,
                         "custom options stored outside the flatbuffer are not supported");
  }
  uint32_t tensors = v.tensor_count(sg);
  GRUWB_RETURN_IF_ERROR(check_index_list("input", span_of(op->inputs()), tensors, true));
  GRUWB_RETURN_IF_ERROR(check_index_list("output", span_of(op->outputs()), tensors, false));
  GRUWB_RETURN_IF_ERROR(
      check_index_list("intermediate", span_of(op->intermediates()), tensors, false));
  const fb::OperatorCode* code = v.model->operator_codes()->Get(op->opcode_index());
  int32_t op_code =
      decode_op_code(code->deprecated_builtin_code(), static_cast<int32_t>(code->builtin_code()), v.format);
  return check_control_flow(v, op, op_code);
}

// RESHAPE's new_shape in its options: each dimension >= 0 or one -1, a sane rank and count.
Status check_reshape_options(const fb::Operator* op) {
  const fb::ReshapeOptions* options = op->builtin_options_as_ReshapeOptions();
  if (!options || !options->new_shape()) return Status();
  Span<int32_t> shape = span_of(options->new_shape());
  char text[64];
  format_shape(shape, text, sizeof text);
  if (shape.size > static_cast<size_t>(kMaxRank)) {
    return Status::error(StatusCode::kInvalidModel, "new_shape %s has rank %u, more than %d", text,
                         static_cast<unsigned>(shape.size), kMaxRank);
  }
  int inferred = 0;
  uint64_t elements = 1;
  for (int32_t dim : shape) {
    if (dim == -1 && ++inferred == 1) continue;
    if (dim < 0 || dim > kMaxDimension ||
        !checked_mul(elements, static_cast<uint64_t>(dim), &elements) ||
        elements > kMaxTensorElements) {
      return Status::error(StatusCode::kInvalidModel,
                           "new_shape %s: each dimension must be 0..%lld, or one -1, and the "
                           "product at most %llu",
                           text, static_cast<long long>(kMaxDimension),
                           static_cast<unsigned long long>(kMaxTensorElements));
    }
  }
  return Status();
}

// Who writes what, in fixed memory: tensors are visited in windows of kWindow, each marked as it
// is written (by the caller for subgraph inputs, else by an op). Catches a tensor written twice
// (two ops, or one op listing it twice), an op writing a graph input or a constant, an op reading
// its own output, and a subgraph output nothing writes.
Status check_dataflow(const Validator& v, uint32_t sg) {
  const fb::SubGraph* subgraph = v.subgraph(sg);
  const auto* tensors = subgraph->tensors();
  const uint32_t tensor_count = v.tensor_count(sg);
  const uint32_t op_count = count_of(subgraph->operators());
  Span<int32_t> inputs = span_of(subgraph->inputs());
  const auto is_constant = [&](int32_t t) {
    const uint32_t buffer = tensors->Get(static_cast<uint32_t>(t))->buffer();
    return buffer < v.buffer_count && count_of(v.model->buffers()->Get(buffer)->data()) != 0;
  };
  for (uint32_t o = 0; o < op_count; ++o) {
    const fb::Operator* op = subgraph->operators()->Get(o);
    for (int32_t out : span_of(op->outputs())) {
      const char* problem = nullptr;
      if (is_constant(out)) problem = "a constant";
      for (int32_t in : span_of(op->inputs())) {
        if (in == out) problem = "also one of its own inputs";
      }
      if (problem) {
        return Status::error(
            StatusCode::kInvalidModel, "op %u (%s) writes tensor %d '%.96s', which is %s",
            static_cast<unsigned>(o), v.op_label(op), static_cast<int>(out),
            str_or_empty(tensors->Get(static_cast<uint32_t>(out))->name()), problem);
      }
    }
  }
  constexpr uint32_t kWindow = 2048;
  uint8_t written[kWindow / 8];
  for (uint32_t first = 0; first < tensor_count; first += kWindow) {
    memset(written, 0, sizeof written);
    const auto mark = [&](int32_t t) {  // true when `t` was already marked
      if (t < 0 || static_cast<uint32_t>(t) < first ||
          static_cast<uint32_t>(t) - first >= kWindow) {
        return false;
      }
      const uint32_t bit = static_cast<uint32_t>(t) - first;
      const bool was = written[bit / 8] & (1u << (bit % 8));
      written[bit / 8] = static_cast<uint8_t>(written[bit / 8] | (1u << (bit % 8)));
      return was;
    };
    for (int32_t in : inputs) mark(in);
    for (uint32_t o = 0; o < op_count; ++o) {
      const fb::Operator* op = subgraph->operators()->Get(o);
      for (int32_t out : span_of(op->outputs())) {
        if (!mark(out)) continue;
        bool graph_input = false;
        for (int32_t in : inputs) graph_input |= in == out;
        return Status::error(StatusCode::kInvalidModel,
                             "op %u (%s) writes tensor %d '%.96s', which %s",
                             static_cast<unsigned>(o), v.op_label(op), static_cast<int>(out),
                             str_or_empty(tensors->Get(static_cast<uint32_t>(out))->name()),
                             graph_input ? "is a subgraph input" : "another output already writes");
      }
    }
    for (int32_t out : span_of(subgraph->outputs())) {
      if (static_cast<uint32_t>(out) < first || static_cast<uint32_t>(out) - first >= kWindow)
        continue;
      const uint32_t bit = static_cast<uint32_t>(out) - first;
      const fb::Tensor* tensor = tensors->Get(static_cast<uint32_t>(out));
      if ((written[bit / 8] & (1u << (bit % 8))) || is_constant(out) || tensor->is_variable())
        continue;
      return Status::error(
          StatusCode::kInvalidModel,
          "output tensor %d '%.96s' is written by no op (and is no input, constant "
          "or variable)",
          static_cast<int>(out), str_or_empty(tensor->name()));
    }
  }
  return Status();
}

Status check_subgraph(const Validator& v, uint32_t sg) {
  const fb::SubGraph* subgraph = v.subgraph(sg);
  uint32_t tensors = v.tensor_count(sg);
  for (uint32_t t = 0; t < tensors; ++t) GRUWB_RETURN_IF_ERROR(check_tensor(v, sg, t));
  GRUWB_RETURN_IF_ERROR(check_index_list("input", span_of(subgraph->inputs()), tensors, false));
  GRUWB_RETURN_IF_ERROR(check_index_list("output", span_of(subgraph->outputs()), tensors, false));
  uint32_t ops = count_of(subgraph->operators());
  for (uint32_t o = 0; o < ops; ++o) {
    Status status = check_operator(v, sg, o);
    if (status.ok()) status = check_reshape_options(subgraph->operators()->Get(o));
    if (!status.ok()) {
      return status.prefix("op %u (%s): ", static_cast<unsigned>(o),
                           v.op_label(subgraph->operators()->Get(o)));
    }
  }
  return check_dataflow(v, sg);
}

// Calls of subgraph `sg`'s op `o`, as subgraph indices (validated already).
int callees_of(const Validator& v, uint32_t sg, uint32_t o, int32_t out[2]) {
  const fb::Operator* op = v.subgraph(sg)->operators()->Get(o);
  if (auto w = op->builtin_options_as_WhileOptions()) {
    out[0] = w->cond_subgraph_index();
    out[1] = w->body_subgraph_index();
    return 2;
  }
  if (auto i = op->builtin_options_as_IfOptions()) {
    out[0] = i->then_subgraph_index();
    out[1] = i->else_subgraph_index();
    return 2;
  }
  if (auto c = op->builtin_options_as_CallOnceOptions()) {
    out[0] = c->init_subgraph_index();
    return 1;
  }
  return 0;
}

// Control flow must form a DAG: a subgraph that (indirectly) calls itself would
// recurse without bound at run time. Iterative DFS, fixed memory.
Status check_no_recursion(const Validator& v) {
  enum : uint8_t { kUnvisited, kOnStack, kDone };
  uint8_t color[kMaxSubgraphs] = {};
  uint16_t stack_sg[kMaxSubgraphs];
  uint32_t stack_next[kMaxSubgraphs];  // (op index << 1) | callee slot to visit next
  for (uint32_t root = 0; root < v.subgraph_count; ++root) {
    if (color[root] != kUnvisited) continue;
    int depth = 0;
    stack_sg[0] = static_cast<uint16_t>(root);
    stack_next[0] = 0;
    color[root] = kOnStack;
    while (depth >= 0) {
      uint32_t sg = stack_sg[depth];
      uint32_t op_index = stack_next[depth] >> 1;
      uint32_t slot = stack_next[depth] & 1;
      if (op_index >= count_of(v.subgraph(sg)->operators())) {
        color[sg] = kDone;
        --depth;
        continue;
      }
      int32_t callees[2];
      int n = callees_of(v, sg, op_index, callees);
      stack_next[depth] = (slot + 1 < static_cast<uint32_t>(n)) ? stack_next[depth] + 1
                                                                : (op_index + 1) << 1;
      if (static_cast<int>(slot) >= n) continue;
      uint32_t callee = static_cast<uint32_t>(callees[slot]);
      if (color[callee] == kOnStack) {
        return Status::error(StatusCode::kInvalidModel,
                             "recursive control flow: subgraph %u '%.96s' op %u (%s) calls "
                             "subgraph %u '%.96s', which is already being executed",
                             static_cast<unsigned>(sg), str_or_empty(v.subgraph(sg)->name()),
                             static_cast<unsigned>(op_index),
                             v.op_label(v.subgraph(sg)->operators()->Get(op_index)),
                             static_cast<unsigned>(callee),
                             str_or_empty(v.subgraph(callee)->name()));
      }
      if (color[callee] == kUnvisited) {
        color[callee] = kOnStack;
        ++depth;
        stack_sg[depth] = static_cast<uint16_t>(callee);
        stack_next[depth] = 0;
      }
    }
  }
  return Status();
}

Status check_signatures_and_metadata(const Validator& v) {
  auto signatures = v.model->signature_defs();
  for (uint32_t s = 0; s < count_of(signatures); ++s) {
    const fb::SignatureDef* def = signatures->Get(s);
    const char* key = str_or_empty(def->signature_key());
    if (def->subgraph_index() >= v.subgraph_count) {
      return Status::error(StatusCode::kInvalidModel,
                           "signature %u '%.96s': subgraph index %u out of range (model has %u "
                           "subgraphs)",
                           static_cast<unsigned>(s), key,
                           static_cast<unsigned>(def->subgraph_index()),
                           static_cast<unsigned>(v.subgraph_count));
    }
    uint32_t tensors = v.tensor_count(def->subgraph_index());
    for (auto maps : {def->inputs(), def->outputs()}) {
      for (uint32_t m = 0; m < count_of(maps); ++m) {
        const fb::TensorMap* map = maps->Get(m);
        if (map->tensor_index() >= tensors) {
          return Status::error(StatusCode::kInvalidModel,
                               "signature %u '%.96s': '%.96s' maps to tensor %u, but subgraph %u has "
                               "%u tensors",
                               static_cast<unsigned>(s), key, str_or_empty(map->name()),
                               static_cast<unsigned>(map->tensor_index()),
                               static_cast<unsigned>(def->subgraph_index()),
                               static_cast<unsigned>(tensors));
        }
      }
    }
  }
  auto metadata = v.model->metadata();
  for (uint32_t m = 0; m < count_of(metadata); ++m) {
    if (metadata->Get(m)->buffer() >= v.buffer_count) {
      return Status::error(StatusCode::kInvalidModel,
                           "metadata '%.96s': buffer index %u out of range (model has %u buffers)",
                           str_or_empty(metadata->Get(m)->name()),
                           static_cast<unsigned>(metadata->Get(m)->buffer()),
                           static_cast<unsigned>(v.buffer_count));
    }
  }
  for (int32_t b : span_of(v.model->metadata_buffer())) {
    if (b < 0 || static_cast<uint32_t>(b) >= v.buffer_count) {
      return Status::error(StatusCode::kInvalidModel,
                           "metadata_buffer entry %d out of range (model has %u buffers)",
                           static_cast<int>(b), static_cast<unsigned>(v.buffer_count));
    }
  }
  return Status();
}

Status check_identifier(const uint8_t* data, size_t size, ModelFormat* format) {
  if (size == 0) return Status::error(StatusCode::kNotAModel, "file is empty");
  static const uint8_t kPng[4] = {0x89, 'P', 'N', 'G'};
  if (size >= 4 && memcmp(data, kPng, 4) == 0) {
    return Status::error(StatusCode::kNotAModel,
                         "this is a PNG image, not a .tflite/.circle model");
  }
  if (size < 8) {
    return Status::error(StatusCode::kNotAModel,
                         "file has only %u bytes, too small for a .tflite/.circle model",
                         static_cast<unsigned>(size));
  }
  if (memcmp(data + 4, "TFL3", 4) == 0) {
    *format = ModelFormat::kTflite;
  } else if (memcmp(data + 4, "CIR0", 4) == 0) {
    *format = ModelFormat::kCircle;
  } else {
    char shown[17];
    size_t used = 0;
    for (int i = 4; i < 8; ++i) {
      uint8_t c = data[i];
      used += static_cast<size_t>(snprintf(shown + used, sizeof shown - used,
                                           (c >= 0x20 && c < 0x7f) ? "%c" : "\\x%02x", c));
    }
    return Status::error(StatusCode::kNotAModel,
                         "missing file identifier: bytes 4..7 are '%.96s', expected 'TFL3' "
                         "(.tflite) or 'CIR0' (.circle)",
                         shown);
  }
  return Status();
}

}  // namespace

const char* model_format_name(ModelFormat format) {
  return format == ModelFormat::kCircle ? "circle" : "tflite";
}

#if defined(GRUWB_OP_NAMES) && !GRUWB_OP_NAMES
// Without the name table (a firmware build): "op <code>", in one buffer the next call reuses
// (messages name one op each; the host knows the names).
const char* op_code_name(int32_t op_code) {
  static char text[16];
  snprintf(text, sizeof text, "op %ld", static_cast<long>(op_code));
  return text;
}
#else
const char* op_code_name(int32_t op_code) {
  const char* name = fb::EnumNameBuiltinOperator(static_cast<BuiltinOperator>(op_code));
  return (name && name[0]) ? name : nullptr;
}
#endif

int32_t decode_op_code(int8_t deprecated_builtin_code, int32_t builtin_code, ModelFormat format) {
  if (format == ModelFormat::kCircle) {
    return deprecated_builtin_code == kPlaceholderForGreaterOpCodes
               ? builtin_code
               : static_cast<int32_t>(deprecated_builtin_code);
  }
  int32_t deprecated = deprecated_builtin_code;
  return builtin_code > deprecated ? builtin_code : deprecated;
}

uint64_t TensorView::element_count() const {
  uint64_t n = 1;
  for (int32_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

const char* OperatorView::name() const {
  if (op_code == kOpCustom) return custom_code[0] ? custom_code : "CUSTOM";
  const char* builtin = op_code_name(op_code);
  return builtin ? builtin : "UNKNOWN";
}

TensorView SubgraphView::tensor(int i) const {
  const fb::Tensor* t = table->tensors()->Get(static_cast<uint32_t>(i));
  TensorView view;
  view.index = i;
  view.name = str_or_empty(t->name());
  view.shape = span_of(t->shape());
  view.shape_signature = span_of(t->shape_signature());
  view.type = t->type();
  view.buffer = t->buffer();
  view.data = model->buffer_data(t->buffer());
  view.is_variable = t->is_variable();
  view.is_sparse = t->sparsity() != nullptr;
  view.quantization = t->quantization();
  view.table = t;
  return view;
}

OperatorView SubgraphView::op(int i) const {
  const fb::Operator* o = table->operators()->Get(static_cast<uint32_t>(i));
  OperatorView view;
  view.index = i;
  view.opcode_index = o->opcode_index();
  view.op_code = model->opcode(o->opcode_index());
  view.op_version = model->table()->operator_codes()->Get(o->opcode_index())->version();
  view.custom_code = model->custom_code(o->opcode_index());
  view.inputs = span_of(o->inputs());
  view.outputs = span_of(o->outputs());
  view.intermediates = span_of(o->intermediates());
  view.options_type = o->builtin_options_type();
  view.custom_options = span_of(o->custom_options());
  view.table = o;
  return view;
}

int SignatureView::input_count() const { return static_cast<int>(count_of(table->inputs())); }
int SignatureView::output_count() const { return static_cast<int>(count_of(table->outputs())); }

TensorMapView SignatureView::input(int i) const {
  const fb::TensorMap* m = table->inputs()->Get(static_cast<uint32_t>(i));
  return {str_or_empty(m->name()), m->tensor_index()};
}

TensorMapView SignatureView::output(int i) const {
  const fb::TensorMap* m = table->outputs()->Get(static_cast<uint32_t>(i));
  return {str_or_empty(m->name()), m->tensor_index()};
}

Status Model::load(const uint8_t* data, size_t size, Model* out) {
  if (!out) return Status::error(StatusCode::kInvalidArgument, "no Model to load into");
  *out = Model();
  if (!data && size) return Status::error(StatusCode::kInvalidArgument, "null model data");
  ModelFormat format = ModelFormat::kTflite;
  GRUWB_RETURN_IF_ERROR(check_identifier(data, size, &format));
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return Status::error(StatusCode::kUnsupported, "model of %llu bytes exceeds the 2 GB limit",
                         static_cast<unsigned long long>(size));
  }
  flatbuffers::Verifier verifier(data, size);
  if (!verifier.VerifyBuffer<fb::Model>(nullptr)) {
    return Status::error(StatusCode::kCorruptModel,
                         "flatbuffer verification failed: the %s file (%u bytes) is truncated "
                         "or corrupt",
                         model_format_name(format), static_cast<unsigned>(size));
  }
  const fb::Model* model = fb::GetModel(data);
  uint32_t expected_version = format == ModelFormat::kCircle ? 0 : 3;
  if (model->version() != expected_version) {
    return Status::error(StatusCode::kUnsupported,
                         "version mismatch: %s schema version %u, expected %u",
                         model_format_name(format), static_cast<unsigned>(model->version()),
                         static_cast<unsigned>(expected_version));
  }
  Validator v{model, format, count_of(model->buffers()), count_of(model->operator_codes()),
              count_of(model->subgraphs())};
  if (v.subgraph_count == 0) {
    return Status::error(StatusCode::kInvalidModel, "model has no subgraphs");
  }
  if (v.subgraph_count > static_cast<uint32_t>(kMaxSubgraphs)) {
    return Status::error(StatusCode::kUnsupported, "model has %u subgraphs, the limit is %d",
                         static_cast<unsigned>(v.subgraph_count), kMaxSubgraphs);
  }
  GRUWB_RETURN_IF_ERROR(check_buffers(v));
  for (uint32_t sg = 0; sg < v.subgraph_count; ++sg) {
    Status status = check_subgraph(v, sg);
    if (!status.ok()) {
      return status.prefix("subgraph %u '%.96s' ", static_cast<unsigned>(sg),
                           str_or_empty(v.subgraph(sg)->name()));
    }
  }
  GRUWB_RETURN_IF_ERROR(check_no_recursion(v));
  GRUWB_RETURN_IF_ERROR(check_signatures_and_metadata(v));
  out->bytes_ = data;
  out->size_ = size;
  out->format_ = format;
  out->table_ = model;
  return Status();
}

uint32_t Model::version() const { return table_->version(); }
const char* Model::description() const { return str_or_empty(table_->description()); }
int Model::subgraph_count() const { return static_cast<int>(count_of(table_->subgraphs())); }

SubgraphView Model::subgraph(int i) const {
  const fb::SubGraph* sg = table_->subgraphs()->Get(static_cast<uint32_t>(i));
  SubgraphView view;
  view.index = i;
  view.name = str_or_empty(sg->name());
  view.inputs = span_of(sg->inputs());
  view.outputs = span_of(sg->outputs());
  view.tensor_count = static_cast<int>(count_of(sg->tensors()));
  view.operator_count = static_cast<int>(count_of(sg->operators()));
  view.table = sg;
  view.model = this;
  return view;
}

int Model::buffer_count() const { return static_cast<int>(count_of(table_->buffers())); }

Span<uint8_t> Model::buffer_data(uint32_t i) const {
  if (i >= count_of(table_->buffers())) return {};
  return span_of(table_->buffers()->Get(i)->data());
}

int Model::opcode_count() const { return static_cast<int>(count_of(table_->operator_codes())); }

int32_t Model::opcode(uint32_t opcode_index) const {
  const fb::OperatorCode* code = table_->operator_codes()->Get(opcode_index);
  return decode_op_code(code->deprecated_builtin_code(), static_cast<int32_t>(code->builtin_code()),
                        format_);
}

const char* Model::custom_code(uint32_t opcode_index) const {
  return str_or_empty(table_->operator_codes()->Get(opcode_index)->custom_code());
}

int Model::metadata_count() const { return static_cast<int>(count_of(table_->metadata())); }

MetadataView Model::metadata(int i) const {
  const fb::Metadata* m = table_->metadata()->Get(static_cast<uint32_t>(i));
  return {str_or_empty(m->name()), m->buffer(), buffer_data(m->buffer())};
}

int Model::signature_count() const { return static_cast<int>(count_of(table_->signature_defs())); }

SignatureView Model::signature(int i) const {
  const fb::SignatureDef* s = table_->signature_defs()->Get(static_cast<uint32_t>(i));
  return {str_or_empty(s->signature_key()), s->subgraph_index(), s};
}

int called_subgraphs(const OperatorView& op, int32_t out[2]) {
  if (auto w = op.options<fb::WhileOptions>()) {
    out[0] = w->cond_subgraph_index();
    out[1] = w->body_subgraph_index();
    return 2;
  }
  if (auto i = op.options<fb::IfOptions>()) {
    out[0] = i->then_subgraph_index();
    out[1] = i->else_subgraph_index();
    return 2;
  }
  if (auto c = op.options<fb::CallOnceOptions>()) {
    out[0] = c->init_subgraph_index();
    return 1;
  }
  return 0;
}

}  // namespace gruwb
