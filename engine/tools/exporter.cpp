#include "engine/tools/exporter.h"

#include <flatbuffers/flexbuffers.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#include "engine/tools/json_writer.h"

namespace gruwb::tools {
namespace {

using Op = BuiltinOperator;

bool load_def(const std::vector<uint8_t>& bytes, ModelDef* def, std::string* error) {
  Model model;
  Status status = Model::load(bytes.data(), bytes.size(), &model);
  if (!status.ok()) {
    *error = std::string("invalid model: ") + status.message();
    return false;
  }
  return unpack_model(model, def, error);
}

uint32_t opcode(ModelDef* def, Op code, const std::string& custom) {
  for (size_t i = 0; i < def->operator_codes.size(); ++i) {
    const fb::OperatorCodeT& c = *def->operator_codes[i];
    if (c.builtin_code == code && c.custom_code == custom) return static_cast<uint32_t>(i);
  }
  auto c = std::make_unique<fb::OperatorCodeT>();
  c->builtin_code = code;
  c->custom_code = custom;
  c->version = 1;
  def->operator_codes.push_back(std::move(c));
  return static_cast<uint32_t>(def->operator_codes.size() - 1);
}

std::string state_out_name(const fb::SubGraphT& sg, int output) {
  return sg.tensors[static_cast<size_t>(output)]->name + "/shape";
}

// Circle GRU (x, W_x, b_x, W_h, b_h, state) -> GRUWB_GRU (x, W_x, W_h,
// bias [2,3H], state). Both compute the reset_after, sigmoid/tanh GRU.
bool circle_gru_to_custom(ModelDef* def, int s, fb::OperatorT* op, std::string* error) {
  fb::SubGraphT& sg = *def->subgraphs[static_cast<size_t>(s)];
  const std::string where = "subgraph " + std::to_string(s) + " GRU op";
  const auto* options = op->builtin_options.AsGRUOptions();
  if (options && options->fused_activation_function != fb::ActivationFunctionType::NONE) {
    *error = where + ": a fused activation after the GRU is not representable in .tflite";
    return false;
  }
  if (op->inputs.size() != 6) {
    *error = where + " has " + std::to_string(op->inputs.size()) + " inputs, expected 6";
    return false;
  }
  const int wx = op->inputs[1], bx = op->inputs[2], wh = op->inputs[3], bh = op->inputs[4];
  if (wh < 0 || sg.tensors[static_cast<size_t>(wh)]->shape.size() != 2) {
    *error = where + ": recurrent kernel (input 3) is not a [3H,H] tensor";
    return false;
  }
  const int gh = sg.tensors[static_cast<size_t>(wh)]->shape[0];
  std::vector<float> bias(static_cast<size_t>(2 * gh), 0.f);
  for (int k = 0; k < 2; ++k) {
    const int t = k == 0 ? bx : bh;
    if (t < 0) continue;
    const std::vector<uint8_t>* data = constant_data(*def, sg, t);
    if (!data || data->size() != static_cast<size_t>(gh) * 4 ||
        sg.tensors[static_cast<size_t>(t)]->type != fb::TensorType::FLOAT32) {
      *error = where + ": bias '" + sg.tensors[static_cast<size_t>(t)]->name +
               "' is not a constant float32 [" + std::to_string(gh) +
               "] (the custom op needs both biases in one constant)";
      return false;
    }
    std::memcpy(bias.data() + k * gh, data->data(), data->size());
  }
  auto buffer = std::make_unique<fb::BufferT>();
  buffer->data.resize(bias.size() * 4);
  std::memcpy(buffer->data.data(), bias.data(), buffer->data.size());
  def->buffers.push_back(std::move(buffer));
  auto tensor = std::make_unique<fb::TensorT>();
  const int x_name_source = bx >= 0 ? bx : wx;
  tensor->name = sg.tensors[static_cast<size_t>(x_name_source)]->name + "/stacked_bias";
  tensor->shape = {2, gh};
  tensor->buffer = static_cast<uint32_t>(def->buffers.size() - 1);
  sg.tensors.push_back(std::move(tensor));
  const int bias_tensor = static_cast<int>(sg.tensors.size() - 1);
  // A zero constant state is the op's default; anything else stays an input.
  int state = op->inputs[5];
  if (const std::vector<uint8_t>* d = constant_data(*def, sg, state)) {
    bool zero = true;
    for (uint8_t b : *d) zero &= b == 0;
    if (zero) state = -1;
  }
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Bool("reset_after", true);
    fbb.String("activation", "tanh");
    fbb.String("recurrent_activation", "sigmoid");
    fbb.Bool("return_sequences", options && options->return_sequences);
    fbb.Bool("time_major", true);  // the Circle op reads dim 0 as time
  });
  fbb.Finish();
  // The custom op's last state is [B,H]; Circle files may give the GRU output
  // another shape of the same size ([1,1,H] in onert-micro's tests): keep that
  // tensor and its shape behind a RESHAPE.
  const bool sequences = options && options->return_sequences;
  std::unique_ptr<fb::OperatorT> reshape;
  const int output = op->outputs.empty() ? -1 : op->outputs[0];
  if (!sequences && output >= 0 && sg.tensors[static_cast<size_t>(output)]->shape.size() != 2) {
    const std::vector<int32_t> shape = sg.tensors[static_cast<size_t>(output)]->shape;
    const int32_t units = sg.tensors[static_cast<size_t>(wh)]->shape[1];
    int64_t elements = 1;
    for (int32_t d : shape) elements *= d;
    auto state_out = std::make_unique<fb::TensorT>();
    state_out->name = sg.tensors[static_cast<size_t>(output)]->name + "/state";
    state_out->shape = {static_cast<int32_t>(elements / std::max(units, 1)), units};
    sg.tensors.push_back(std::move(state_out));
    const int state_tensor = static_cast<int>(sg.tensors.size() - 1);
    auto shape_buffer = std::make_unique<fb::BufferT>();
    shape_buffer->data.resize(shape.size() * 4);
    std::memcpy(shape_buffer->data.data(), shape.data(), shape_buffer->data.size());
    def->buffers.push_back(std::move(shape_buffer));
    auto shape_tensor = std::make_unique<fb::TensorT>();
    shape_tensor->name = state_out_name(sg, output);
    shape_tensor->shape = {static_cast<int32_t>(shape.size())};
    shape_tensor->type = fb::TensorType::INT32;
    shape_tensor->buffer = static_cast<uint32_t>(def->buffers.size() - 1);
    sg.tensors.push_back(std::move(shape_tensor));
    reshape = std::make_unique<fb::OperatorT>();
    reshape->opcode_index = opcode(def, Op::RESHAPE, "");
    reshape->inputs = {state_tensor, static_cast<int32_t>(sg.tensors.size() - 1)};
    reshape->outputs = {output};
    fb::ReshapeOptionsT reshape_options;
    reshape_options.new_shape = shape;
    reshape->builtin_options.Set(std::move(reshape_options));
    op->outputs[0] = state_tensor;
  }
  op->opcode_index = opcode(def, Op::CUSTOM, "GRUWB_GRU");
  op->inputs = {op->inputs[0], wx, wh, bias_tensor, state};
  op->builtin_options.Reset();
  op->custom_options = fbb.GetBuffer();
  op->custom_options_format = fb::CustomOptionsFormat::FLEXBUFFERS;
  if (reshape) {
    auto& ops = sg.operators;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].get() == op) {
        ops.insert(ops.begin() + static_cast<ptrdiff_t>(i + 1), std::move(reshape));
        break;
      }
    }
  }
  return true;
}

// Drops op codes no op uses (the Circle GRU code after the conversion).
void drop_unused_codes(ModelDef* def) {
  std::vector<bool> used(def->operator_codes.size(), false);
  for (const auto& sg : def->subgraphs) {
    for (const auto& o : sg->operators) used[o->opcode_index] = true;
  }
  std::vector<uint32_t> index(used.size(), 0);
  std::vector<std::unique_ptr<fb::OperatorCodeT>> kept;
  for (size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) continue;
    index[i] = static_cast<uint32_t>(kept.size());
    kept.push_back(std::move(def->operator_codes[i]));
  }
  def->operator_codes = std::move(kept);
  for (auto& sg : def->subgraphs) {
    for (auto& o : sg->operators) o->opcode_index = index[o->opcode_index];
  }
}

std::string sanitize_file_name(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    out += ok ? c : '_';
  }
  while (!out.empty() && out[0] == '.') out[0] = '_';  // no hidden files
  if (out.empty()) out = "tensor";
  if (out.size() > 96) out.resize(96);
  return out;
}

const char* npy_dtype_of(fb::TensorType type) {
  switch (type) {
    case fb::TensorType::FLOAT32: return "<f4";
    case fb::TensorType::FLOAT64: return "<f8";
    case fb::TensorType::INT32: return "<i4";
    case fb::TensorType::INT64: return "<i8";
    case fb::TensorType::INT8: return "|i1";
    case fb::TensorType::UINT8: return "|u1";
    case fb::TensorType::BOOL: return "|b1";
    default: return "";
  }
}

}  // namespace

std::string c_identifier(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

CArrayFiles c_array_files(const std::vector<uint8_t>& bytes, const std::string& name,
                          const std::string& header_file) {
  CArrayFiles files;
  std::string guard = c_identifier(header_file);
  for (char& c : guard) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  guard = "GRUWB_" + guard + "_";
  files.header = "// Generated by gruwb export --to c-array. Do not edit.\n#ifndef " + guard +
                 "\n#define " + guard +
                 "\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
                 "// The model file, 16-byte aligned so weights can be read in place.\n"
                 "extern const unsigned char " +
                 name + "[];\nextern const unsigned int " + name +
                 "_len;\n\n#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n\n#endif  // " + guard +
                 "\n";
  std::string& s = files.source;
  s = "// Generated by gruwb export --to c-array. Do not edit.\n#include \"" + header_file +
      "\"\n\n#if !defined(__cplusplus)\n#include <stdalign.h>\n#endif\n\nalignas(16) const "
      "unsigned char " +
      name + "[] = {\n";
  s.reserve(s.size() + bytes.size() * 6 + 200);
  char item[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i % 12 == 0) s += "  ";
    std::snprintf(item, sizeof item, "0x%02x", bytes[i]);
    s += item;
    if (i + 1 < bytes.size()) s += (i % 12 == 11) ? ",\n" : ", ";
  }
  s += "\n};\nconst unsigned int " + name + "_len = " + std::to_string(bytes.size()) + ";\n";
  return files;
}

bool convert_model(const std::vector<uint8_t>& bytes, ModelFormat target, std::vector<uint8_t>* out,
                   std::vector<std::string>* notes, std::string* error) {
  ModelDef def;
  if (!load_def(bytes, &def, error)) return false;
  notes->clear();
  if (target == ModelFormat::kTflite) {
    int converted = 0;
    for (size_t s = 0; s < def.subgraphs.size(); ++s) {
      auto& ops = def.subgraphs[s]->operators;
      for (size_t i = 0; i < ops.size(); ++i) {
        fb::OperatorT* op = ops[i].get();
        const Op code = def.operator_codes[op->opcode_index]->builtin_code;
        if (code == Op::GRU) {
          if (!circle_gru_to_custom(&def, static_cast<int>(s), op, error)) {
            *error = "not representable in .tflite: " + *error;
            return false;
          }
          ++converted;
        } else if (static_cast<int32_t>(code) < 0) {
          const char* name = op_code_name(static_cast<int32_t>(code));  // null: unnamed code
          *error = std::string("not representable in .tflite: subgraph ") + std::to_string(s) +
                   " uses the Circle-only op " +
                   (name ? name : std::to_string(static_cast<int32_t>(code)));
          return false;
        }
      }
    }
    if (converted > 0) {
      drop_unused_codes(&def);
      notes->push_back(std::to_string(converted) +
                       " Circle GRU op(s) became the GRUWB_GRU custom op (docs/fused-gru-op.md); "
                       "stock TFLite runtimes do not know it");
    }
  } else {
    for (const auto& code : def.operator_codes) {
      if (code->builtin_code == Op::CUSTOM && code->custom_code == "GRUWB_GRU") {
        notes->push_back("GRUWB_GRU stays a custom op (runs on the GRU Workbench engine)");
      }
    }
  }
  if (!write_model(def, target, out, error)) {
    *error = std::string("not representable in .") + model_format_name(target) + ": " + *error;
    return false;
  }
  Model check;
  Status status = Model::load(out->data(), out->size(), &check);
  if (!status.ok()) {
    *error = std::string("the converted model does not validate: ") + status.message();
    return false;
  }
  return true;
}

bool weight_arrays(const std::vector<uint8_t>& bytes, std::vector<WeightArray>* out,
                   std::vector<std::string>* skipped, std::string* error) {
  ModelDef def;
  if (!load_def(bytes, &def, error)) return false;
  out->clear();
  skipped->clear();
  std::set<std::string> names;
  for (size_t s = 0; s < def.subgraphs.size(); ++s) {
    const fb::SubGraphT& sg = *def.subgraphs[s];
    for (size_t t = 0; t < sg.tensors.size(); ++t) {
      const fb::TensorT& tensor = *sg.tensors[t];
      const std::vector<uint8_t>* data = constant_data(def, sg, static_cast<int>(t));
      if (!data) continue;
      int64_t elements = 1;
      for (int32_t d : tensor.shape) elements *= d;
      const bool integer_index =
          tensor.type == fb::TensorType::INT32 || tensor.type == fb::TensorType::INT64;
      if (integer_index && (tensor.shape.empty() || elements <= 8)) continue;  // shapes, axes
      const std::string label = "subgraph " + std::to_string(s) + " tensor " + std::to_string(t) +
                                " '" + tensor.name + "'";
      const std::string dtype = npy_dtype_of(tensor.type);
      if (dtype.empty()) {
        skipped->push_back(label + ": " + tensor_type_name(tensor.type) +
                           " has no .npy dtype here");
        continue;
      }
      if (static_cast<uint64_t>(elements) * npy_dtype_size(dtype) != data->size()) {
        skipped->push_back(label + ": buffer size does not match the shape");
        continue;
      }
      WeightArray w;
      w.subgraph = static_cast<int>(s);
      w.tensor = static_cast<int>(t);
      w.tensor_name = tensor.name;
      w.type = tensor_type_name(tensor.type);
      w.array.dtype = dtype;
      w.array.shape.assign(tensor.shape.begin(), tensor.shape.end());
      w.array.data = *data;
      if (tensor.quantization) {
        w.scales = tensor.quantization->scale;
        w.zero_points = tensor.quantization->zero_point;
      }
      std::string base =
          sanitize_file_name(tensor.name.empty() ? "tensor_" + std::to_string(t) : tensor.name);
      std::string file = base + ".npy";
      for (int k = 1; names.count(file); ++k) file = base + "_" + std::to_string(k) + ".npy";
      names.insert(file);
      w.file_name = file;
      out->push_back(std::move(w));
    }
  }
  return true;
}

std::string weight_manifest_json(const std::string& model_name,
                                 const std::vector<WeightArray>& arrays,
                                 const std::vector<std::string>& skipped) {
  JsonWriter json;
  json.begin_object();
  json.key("model").value(model_name);
  json.key("arrays").begin_array();
  for (const WeightArray& w : arrays) {
    json.begin_object();
    json.key("file").value(w.file_name);
    json.key("tensor").value(w.tensor_name);
    json.key("subgraph").value(w.subgraph);
    json.key("tensor_index").value(w.tensor);
    json.key("type").value(w.type);
    json.key("dtype").value(w.array.dtype);
    json.key("shape").array(w.array.shape);
    if (!w.scales.empty()) {
      json.key("scales").array(w.scales);
      json.key("zero_points").array(w.zero_points);
    }
    json.end_object();
  }
  json.end_array();
  json.key("skipped").array(skipped);
  json.end_object();
  return json.take() + "\n";
}

}  // namespace gruwb::tools
