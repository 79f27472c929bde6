#include "engine/tools/model_writer.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cctype>

#include "engine/tools/model_file.h"

namespace gruwb::tools {
namespace {

constexpr int32_t kPlaceholderForGreaterOpCodes = 127;
// Kernels read weights in place; 16 bytes covers every SIMD load we use.
constexpr size_t kBufferAlignment = 16;
// Circle's schema ends its shared tensor types at INT4; TFLite's later ones
// (BFLOAT16, INT2, UINT4 = 20, FLOAT8_*) mean nothing to a Circle reader.
constexpr int kLastCircleSharedTensorType = static_cast<int>(fb::TensorType::INT4);

std::string quoted(const std::string& name) { return "'" + name + "'"; }

std::string op_code_label(int32_t code) {
  const char* name = op_code_name(code);
  return std::string(name ? name : "UNKNOWN") + " (" + std::to_string(code) + ")";
}

// The op code an OperatorCodeT stands for (see ModelDef in the header).
int32_t op_code_of(const fb::OperatorCodeT& code) {
  int32_t builtin = static_cast<int32_t>(code.builtin_code);
  return builtin != 0 ? builtin : static_cast<int32_t>(code.deprecated_builtin_code);
}

// Writer rule shared by both formats: codes that fit below the placeholder go
// in the byte too (Circle's negative codes as the signed byte, GRU -5 = 0xFB);
// the rest are flagged with 127 and live in builtin_code only.
int8_t deprecated_code_for(int32_t code) {
  if (code >= -128 && code < kPlaceholderForGreaterOpCodes) return static_cast<int8_t>(code);
  return static_cast<int8_t>(kPlaceholderForGreaterOpCodes);
}

// Ids of the fields a table stores beyond the `known` ones our schema declares
// (trailing fields added by a newer TFLite/Circle schema), from its vtable.
std::vector<int> unknown_field_ids(const void* table, size_t known) {
  std::vector<int> ids;
  auto raw = reinterpret_cast<const flatbuffers::Table*>(table);
  auto vtable_bytes = flatbuffers::ReadScalar<flatbuffers::voffset_t>(raw->GetVTable());
  size_t slots = vtable_bytes >= 4 ? (vtable_bytes - 4u) / 2u : 0;
  for (size_t id = known; id < slots; ++id) {
    if (raw->GetOptionalFieldOffset(
            flatbuffers::FieldIndexToOffset(static_cast<flatbuffers::voffset_t>(id))) != 0) {
      ids.push_back(static_cast<int>(id));
    }
  }
  return ids;
}

// Rejects files holding data that ModelT cannot carry, so a save never drops
// meaning silently. Debug-only trailing fields (SubGraph and Operator
// debug_metadata_index, Circle's deprecated data_format) may be dropped.
bool check_carried_over(const Model& model, std::string* error) {
  const fb::Model* root = model.table();
  std::vector<int> model_extra = unknown_field_ids(root, fb::ModelTypeTable()->num_elems);
  if (!model_extra.empty()) {
    *error = "model table has field " + std::to_string(model_extra.front()) +
             " (e.g. external buffers) that our schema does not carry; writing would drop it";
    return false;
  }
  constexpr int kOperatorDebugMetadataField = 13;
  for (int s = 0; s < model.subgraph_count(); ++s) {
    SubgraphView sg = model.subgraph(s);
    std::string where = "subgraph " + std::to_string(s) + " " + quoted(sg.name);
    for (int t = 0; t < sg.tensor_count; ++t) {
      TensorView tensor = sg.tensor(t);
      std::vector<int> extra = unknown_field_ids(tensor.table, fb::TensorTypeTable()->num_elems);
      if (!extra.empty()) {
        *error = where + " tensor " + std::to_string(t) + " " + quoted(tensor.name) +
                 ": has field " + std::to_string(extra.front()) +
                 " (TFLite external_buffer / Circle compression_type) that our schema does not "
                 "carry; writing would drop it";
        return false;
      }
      // The engine reads zero points bytewise; the generated object API loads them as int64.
      const fb::QuantizationParameters* q = tensor.quantization;
      if (zero_point_count(q) && reinterpret_cast<uintptr_t>(q->zero_point()->Data()) % 8 != 0) {
        *error = where + " tensor " + std::to_string(t) + " " + quoted(tensor.name) +
                 ": its zero points are not 8-byte aligned in the file (flatbuffers requires it; "
                 "the writer broke the rule), so the model cannot be rewritten";
        return false;
      }
    }
    for (int o = 0; o < sg.operator_count; ++o) {
      OperatorView op = sg.op(o);
      std::string op_where = where + " op " + std::to_string(o) + " (" + op.name() + ")";
      const char* options_name = fb::EnumNameBuiltinOptions(op.options_type);
      if (op.table->builtin_options() != nullptr &&
          (op.options_type == fb::BuiltinOptions::NONE || options_name[0] == '\0')) {
        *error = op_where + ": builtin options of union type " +
                 std::to_string(static_cast<int>(op.options_type)) +
                 " are not in our schema; writing would drop them";
        return false;
      }
      for (int id : unknown_field_ids(op.table, fb::OperatorTypeTable()->num_elems)) {
        if (id == kOperatorDebugMetadataField) continue;
        *error = op_where + ": has field " + std::to_string(id) +
                 " (builtin_options_2) that our schema does not carry; writing would drop it";
        return false;
      }
    }
  }
  return true;
}

// Everything write_model cannot or must not write, named by its culprit.
bool check_writable(const ModelDef& model, ModelFormat format, std::string* error) {
  for (size_t i = 0; i < model.operator_codes.size(); ++i) {
    if (!model.operator_codes[i]) {
      *error = "operator code " + std::to_string(i) + " is missing (null)";
      return false;
    }
    int32_t code = op_code_of(*model.operator_codes[i]);
    if (format == ModelFormat::kTflite && code < 0) {
      *error = "operator code " + std::to_string(i) + ": " + op_code_label(code) +
               " is a Circle-only op; save the model as .circle";
      return false;
    }
  }
  for (size_t b = 0; b < model.buffers.size(); ++b) {
    const fb::BufferT* buffer = model.buffers[b].get();
    if (!buffer) {
      *error = "buffer " + std::to_string(b) + " is missing (null)";
      return false;
    }
    // offset 1 is the converter's "not placed yet" marker, harmless without a size.
    if (buffer->offset > 1 || buffer->size > 0) {
      *error = "buffer " + std::to_string(b) + " points outside the flatbuffer (offset " +
               std::to_string(buffer->offset) + ", size " + std::to_string(buffer->size) +
               "); models over 2 GB are not supported";
      return false;
    }
  }
  if (!model.buffers.empty() && !model.buffers[0]->data.empty()) {
    *error = "buffer 0 must be the empty sentinel but holds " +
             std::to_string(model.buffers[0]->data.size()) +
             " bytes; insert an empty buffer at index 0 and shift the tensor and metadata buffer "
             "indices";
    return false;
  }
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    const fb::SubGraphT* sg = model.subgraphs[s].get();
    if (!sg) {
      *error = "subgraph " + std::to_string(s) + " is missing (null)";
      return false;
    }
    std::string where = "subgraph " + std::to_string(s) + " " + quoted(sg->name);
    for (size_t t = 0; t < sg->tensors.size(); ++t) {
      const fb::TensorT* tensor = sg->tensors[t].get();
      if (!tensor) {
        *error = where + " tensor " + std::to_string(t) + " is missing (null)";
        return false;
      }
      int type = static_cast<int>(tensor->type);
      bool foreign = format == ModelFormat::kTflite ? type < 0 : type > kLastCircleSharedTensorType;
      if (foreign) {
        *error = where + " tensor " + std::to_string(t) + " " + quoted(tensor->name) + ": type " +
                 tensor_type_name(tensor->type) + " (" + std::to_string(type) +
                 ") does not exist in " + model_format_name(format);
        return false;
      }
    }
    for (size_t o = 0; o < sg->operators.size(); ++o) {
      const fb::OperatorT* op = sg->operators[o].get();
      if (!op) {
        *error = where + " op " + std::to_string(o) + " is missing (null)";
        return false;
      }
      if (op->large_custom_options_offset > 1 || op->large_custom_options_size > 0) {
        *error = where + " op " + std::to_string(o) +
                 ": custom options stored outside the flatbuffer are not supported";
        return false;
      }
    }
  }
  for (size_t m = 0; m < model.metadata.size(); ++m) {
    if (!model.metadata[m]) {
      *error = "metadata " + std::to_string(m) + " is missing (null)";
      return false;
    }
  }
  for (size_t s = 0; s < model.signature_defs.size(); ++s) {
    const fb::SignatureDefT* def = model.signature_defs[s].get();
    bool complete = def != nullptr;
    if (def) {
      for (const auto& map : def->inputs) complete = complete && map != nullptr;
      for (const auto& map : def->outputs) complete = complete && map != nullptr;
    }
    if (!complete) {
      *error = "signature " + std::to_string(s) + " is missing (null) or has a null tensor map";
      return false;
    }
  }
  return true;
}

// Buffers are packed by hand rather than through the object API so that the
// 16-byte alignment of each data vector does not depend on the flatc version
// honouring force_align in Pack().
flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Buffer>>> write_buffers(
    const ModelDef& model, flatbuffers::FlatBufferBuilder* fbb) {
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  if (model.buffers.empty()) {
    // Buffer 0 is the sentinel every tensor without data points at.
    buffers.push_back(fb::CreateBuffer(*fbb));
  }
  for (const auto& buffer : model.buffers) {
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> data = 0;
    if (!buffer->data.empty()) {
      fbb->ForceVectorAlignment(buffer->data.size(), sizeof(uint8_t), kBufferAlignment);
      data = fbb->CreateVector(buffer->data);
    }
    buffers.push_back(fb::CreateBuffer(*fbb, data, buffer->offset, buffer->size));
  }
  return fbb->CreateVector(buffers);
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::OperatorCode>>>
write_operator_codes(const ModelDef& model, flatbuffers::FlatBufferBuilder* fbb) {
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
  for (const auto& code : model.operator_codes) {
    int32_t op_code = op_code_of(*code);
    flatbuffers::Offset<flatbuffers::String> custom_code = 0;
    if (!code->custom_code.empty()) custom_code = fbb->CreateString(code->custom_code);
    codes.push_back(fb::CreateOperatorCode(*fbb, deprecated_code_for(op_code), custom_code,
                                           code->version,
                                           static_cast<fb::BuiltinOperator>(op_code)));
  }
  return fbb->CreateVector(codes);
}

// Creates a vector of tables from object-API items with the generated packer.
template <typename Table, typename NativeTable>
flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Table>>> write_tables(
    const std::vector<std::unique_ptr<NativeTable>>& items, flatbuffers::FlatBufferBuilder* fbb) {
  if (items.empty()) return 0;
  std::vector<flatbuffers::Offset<Table>> offsets;
  offsets.reserve(items.size());
  for (const auto& item : items) offsets.push_back(Table::Pack(*fbb, item.get()));
  return fbb->CreateVector(offsets);
}

}  // namespace

bool unpack_model(const Model& model, ModelDef* out, std::string* error) {
  if (!model.table()) {
    *error = "no model loaded";
    return false;
  }
  if (!check_carried_over(model, error)) return false;
  *out = ModelDef();
  model.table()->UnPackTo(out);
  // A union may name a type without its table (the verifier accepts it, readers see no options):
  // the object form then holds a null table that packing would dereference, so it becomes NONE.
  for (auto& subgraph : out->subgraphs) {
    for (auto& op : subgraph->operators) {
      if (!op->builtin_options.value) op->builtin_options.Reset();
    }
    for (auto& tensor : subgraph->tensors) {
      if (tensor->quantization && !tensor->quantization->details.value)
        tensor->quantization->details.Reset();
    }
  }
  for (size_t i = 0; i < out->operator_codes.size(); ++i) {
    int32_t code = model.opcode(static_cast<uint32_t>(i));
    out->operator_codes[i]->builtin_code = static_cast<fb::BuiltinOperator>(code);
    out->operator_codes[i]->deprecated_builtin_code = deprecated_code_for(code);
  }
  return true;
}

bool write_model(const ModelDef& model, ModelFormat format, std::vector<uint8_t>* out,
                 std::string* error) {
  if (!check_writable(model, format, error)) return false;
  size_t data_bytes = 0;
  for (const auto& buffer : model.buffers) data_bytes += buffer->data.size() + kBufferAlignment;
  flatbuffers::FlatBufferBuilder fbb(data_bytes + 4096);
  // Data first: flatbuffers builds back to front, so the weights end up at the
  // end of the file, after the graph a reader looks at first.
  auto buffers = write_buffers(model, &fbb);
  auto operator_codes = write_operator_codes(model, &fbb);
  auto subgraphs = write_tables<fb::SubGraph>(model.subgraphs, &fbb);
  auto description = model.description.empty() ? 0 : fbb.CreateString(model.description);
  auto metadata_buffer =
      model.metadata_buffer.empty() ? 0 : fbb.CreateVector(model.metadata_buffer);
  auto metadata = write_tables<fb::Metadata>(model.metadata, &fbb);
  auto signature_defs = write_tables<fb::SignatureDef>(model.signature_defs, &fbb);
  uint32_t version = format == ModelFormat::kCircle ? 0 : 3;
  auto root = fb::CreateModel(fbb, version, operator_codes, subgraphs, description, buffers,
                              metadata_buffer, metadata, signature_defs);
  fbb.Finish(root, format == ModelFormat::kCircle ? "CIR0" : "TFL3");
  out->assign(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  return true;
}

bool save_model(const ModelDef& model, ModelFormat format, const std::string& path,
                std::string* error) {
  std::vector<uint8_t> bytes;
  if (!write_model(model, format, &bytes, error)) {
    *error = path + ": " + *error;
    return false;
  }
  Model check;
  Status status = Model::load(bytes.data(), bytes.size(), &check);
  if (!status.ok()) {
    *error = path + ": not saved, the model would not load: " + status_code_name(status.code()) +
             ": " + status.message();
    return false;
  }
  return write_file_atomically(path, bytes, error);
}

ModelFormat format_for_path(const std::string& path) {
  static const std::string kCircleExtension = ".circle";
  if (path.size() < kCircleExtension.size()) return ModelFormat::kTflite;
  std::string tail = path.substr(path.size() - kCircleExtension.size());
  std::transform(tail.begin(), tail.end(), tail.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == kCircleExtension ? ModelFormat::kCircle : ModelFormat::kTflite;
}

const std::vector<uint8_t>* constant_data(const ModelDef& def, const fb::SubGraphT& sg, int t) {
  if (t < 0 || static_cast<size_t>(t) >= sg.tensors.size()) return nullptr;
  uint32_t b = sg.tensors[static_cast<size_t>(t)]->buffer;
  if (b == 0 || b >= def.buffers.size() || def.buffers[b]->data.empty()) return nullptr;
  return &def.buffers[b]->data;
}

}  // namespace gruwb::tools
