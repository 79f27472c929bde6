#include "engine/tools/analyzer.h"

#include <flatbuffers/minireflect.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>

#include "engine/kernels/flexbuffer_map.h"
#include "engine/kernels/op_cost.h"
#include "engine/runtime/op_resolver.h"
#include "engine/tools/arena_figures.h"
#include "engine/tools/fuser.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_runner.h"

namespace gruwb::tools {
namespace {

// ---------------------------------------------------------------------------
// Small formatting helpers

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char text[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  return text;
}

// Shortest "%g"-style text that reads back as the same float.
std::string float_text(float value) {
  char text[32];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, static_cast<double>(value));
    if (std::strtof(text, nullptr) == value) break;
  }
  return text;
}

std::string join_ints(const std::vector<int32_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(values[i]);
  }
  return out;
}

std::vector<int32_t> to_vector(Span<int32_t> span) {
  return std::vector<int32_t>(span.begin(), span.end());
}

double percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// ---------------------------------------------------------------------------
// Tensors

template <typename T>
T load_unaligned(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

// The first few values of constant data, as the Analyzer shows them inline.
std::string data_preview(TensorType type, Span<uint8_t> data) {
  constexpr size_t kMaxValues = 4;
  size_t width = 0;
  switch (type) {
    case TensorType::FLOAT32:
    case TensorType::INT32:
    case TensorType::UINT32: width = 4; break;
    case TensorType::INT64: width = 8; break;
    case TensorType::INT16:
    case TensorType::UINT16: width = 2; break;
    case TensorType::INT8:
    case TensorType::UINT8:
    case TensorType::BOOL: width = 1; break;
    default: return "";  // packed, half-precision and opaque types: no preview
  }
  const size_t count = data.size / width;
  std::string out = "[";
  for (size_t i = 0; i < std::min(count, kMaxValues); ++i) {
    if (i) out += ", ";
    const uint8_t* p = data.data + i * width;
    switch (type) {
      case TensorType::FLOAT32: out += float_text(load_unaligned<float>(p)); break;
      case TensorType::INT32: out += std::to_string(load_unaligned<int32_t>(p)); break;
      case TensorType::UINT32: out += std::to_string(load_unaligned<uint32_t>(p)); break;
      case TensorType::INT64: out += std::to_string(load_unaligned<int64_t>(p)); break;
      case TensorType::INT16: out += std::to_string(load_unaligned<int16_t>(p)); break;
      case TensorType::UINT16: out += std::to_string(load_unaligned<uint16_t>(p)); break;
      case TensorType::INT8: out += std::to_string(load_unaligned<int8_t>(p)); break;
      case TensorType::UINT8: out += std::to_string(*p); break;
      case TensorType::BOOL: out += *p ? "true" : "false"; break;
      default: break;
    }
  }
  if (count > kMaxValues) out += ", ...";
  out += "]";
  return out;
}

void describe_quantization(const fb::QuantizationParameters* q, TensorReport* t) {
  if (!q) return;
  if (q->scale()) t->scales.assign(q->scale()->begin(), q->scale()->end());
  for (uint32_t i = 0; i < zero_point_count(q); ++i) t->zero_points.push_back(zero_point_at(q, i));
  t->quantized_dimension = q->quantized_dimension();
  if (t->scales.size() == 1) {
    t->quantization = "scale=" + float_text(t->scales[0]);
    if (!t->zero_points.empty())
      t->quantization += " zero_point=" + std::to_string(t->zero_points[0]);
  } else if (t->scales.size() > 1) {
    t->quantization =
        format("per-axis(%d) x%zu", static_cast<int>(t->quantized_dimension), t->scales.size());
  } else if (q->min() && q->max() && q->min()->size() > 0 && q->max()->size() > 0) {
    // Legacy files carry only a float range.
    t->quantization =
        "min=" + float_text(q->min()->Get(0)) + " max=" + float_text(q->max()->Get(0));
  }
}

TensorReport analyze_tensor(const Model& model, const TensorView& view) {
  TensorReport t;
  t.index = view.index;
  t.name = view.name;
  t.shape = to_vector(view.shape);
  t.shape_signature = to_vector(view.shape_signature);
  t.type = tensor_type_name(view.type);
  t.buffer = view.buffer;
  t.is_variable = view.is_variable;
  t.is_sparse = view.is_sparse;
  t.elements = view.element_count();
  // The Analyzer counts buffer bytes whatever the tensor is; buffer 0 is the
  // empty sentinel and never holds data.
  const Span<uint8_t> data = view.buffer == 0 ? Span<uint8_t>{} : model.buffer_data(view.buffer);
  t.data_bytes = data.size;
  // A variable's buffer is an initial value for state, not a learned weight.
  t.is_constant = data.size > 0 && !view.is_variable;
  if (t.is_constant) {
    t.parameters = t.elements;
    t.data_preview = data_preview(view.type, data);
  }
  describe_quantization(view.quantization, &t);
  return t;
}

// ---------------------------------------------------------------------------
// Builtin options, decoded with flatbuffers mini-reflection. The options table
// is unpacked into the object API and packed again with ForceDefaults, so
// every field appears with its schema default even when the file omits it
// (flatbuffers does not store defaults, and mini-reflection does not know them).

struct OptionsVisitor : public flatbuffers::IterationVisitor {
  std::vector<OptionValue> values;
  int table_depth = 0;
  int vector_depth = 0;

  OptionValue* current() { return values.empty() ? nullptr : &values.back(); }
  void append(const std::string& text, OptionValue::Kind kind) {
    OptionValue* v = current();
    if (!v) return;
    if (vector_depth > 0 || table_depth > 1) {
      v->value += text;
      v->kind = OptionValue::Kind::kOther;
    } else {
      v->value = text;
      v->kind = kind;
    }
  }
  template <typename T>
  void named(T x, const char* name) {
    if (name) {
      append(name, OptionValue::Kind::kEnum);
    } else {
      append(std::to_string(x), OptionValue::Kind::kNumber);
    }
  }

  // Brackets are appended while still inside the nested value, so append()
  // extends the field's text instead of replacing it.
  void StartSequence() override {
    if (++table_depth > 1) append("{", OptionValue::Kind::kOther);
  }
  void EndSequence() override {
    if (table_depth > 1) append("}", OptionValue::Kind::kOther);
    --table_depth;
  }
  void Field(size_t, size_t set_idx, flatbuffers::ElementaryType, bool,
             const flatbuffers::TypeTable*, const char* name, const uint8_t* val) override {
    if (!val) return;
    if (table_depth == 1) {
      values.push_back(OptionValue{name ? name : "?", "", OptionValue::Kind::kOther});
    } else {
      append(std::string(set_idx ? ", " : "") + (name ? name : "?") + "=",
             OptionValue::Kind::kOther);
    }
  }
  void UType(uint8_t x, const char* name) override { named(x, name); }
  void Bool(bool x) override { append(x ? "true" : "false", OptionValue::Kind::kBool); }
  void Char(int8_t x, const char* name) override { named(static_cast<int>(x), name); }
  void UChar(uint8_t x, const char* name) override { named(static_cast<unsigned>(x), name); }
  void Short(int16_t x, const char* name) override { named(x, name); }
  void UShort(uint16_t x, const char* name) override { named(x, name); }
  void Int(int32_t x, const char* name) override { named(x, name); }
  void UInt(uint32_t x, const char* name) override { named(x, name); }
  void Long(int64_t x) override { append(std::to_string(x), OptionValue::Kind::kNumber); }
  void ULong(uint64_t x) override { append(std::to_string(x), OptionValue::Kind::kNumber); }
  void Float(float x) override { append(float_text(x), OptionValue::Kind::kNumber); }
  void Double(double x) override { append(format("%.17g", x), OptionValue::Kind::kNumber); }
  void String(const flatbuffers::String* s) override {
    append(s->str(), OptionValue::Kind::kString);
  }
  void Unknown(const uint8_t*) override { append("?", OptionValue::Kind::kOther); }
  void StartVector() override {
    ++vector_depth;
    append("[", OptionValue::Kind::kOther);
  }
  void EndVector() override {
    append("]", OptionValue::Kind::kOther);
    --vector_depth;
  }
  void Element(size_t i, flatbuffers::ElementaryType, const flatbuffers::TypeTable*,
               const uint8_t*) override {
    if (i) append(", ", OptionValue::Kind::kOther);
  }
};

const flatbuffers::TypeTable* options_type_table(fb::BuiltinOptions type) {
  const flatbuffers::TypeTable* unions = fb::BuiltinOptionsTypeTable();
  const int64_t index =
      flatbuffers::LookupEnum(static_cast<int64_t>(type), unions->values, unions->num_elems);
  if (index <= 0) return nullptr;  // NONE or a value our schema does not name
  const flatbuffers::TypeCode& code = unions->type_codes[index];
  if (code.sequence_ref < 0) return nullptr;
  return unions->type_refs[code.sequence_ref]();
}

void decode_options(const OperatorView& op, OpReport* report) {
  if (op.options_type == fb::BuiltinOptions::NONE || !op.table->builtin_options()) return;
  const char* type_name = fb::EnumNameBuiltinOptions(op.options_type);
  report->options_type = (type_name && type_name[0]) ? type_name : "";
  const flatbuffers::TypeTable* table = options_type_table(op.options_type);
  if (!table) return;

  fb::BuiltinOptionsUnion unpacked;
  unpacked.type = op.options_type;
  unpacked.value =
      fb::BuiltinOptionsUnion::UnPack(op.table->builtin_options(), op.options_type, nullptr);
  if (!unpacked.value) return;
  flatbuffers::FlatBufferBuilder builder;
  builder.ForceDefaults(true);
  builder.Finish(unpacked.Pack(builder));

  OptionsVisitor visitor;
  flatbuffers::IterateFlatBuffer(builder.GetBufferPointer(), table, &visitor);
  report->option_values = std::move(visitor.values);
  for (const OptionValue& v : report->option_values) {
    if (!report->options.empty()) report->options += ", ";
    report->options += v.key + "=" + v.value;
  }
}

// A custom op's FlexBuffer map (GRUWB_GRU's reset_after, activation, ...: docs/fused-gru-op.md)
// as option values, so the report and the GUI show custom ops' attributes as they do builtin
// ones. Options that are not a well-formed map stay summarised by custom_options_bytes.
void decode_custom_options(const OperatorView& op, OpReport* report) {
  FlexMap map;  // the engine's own bounds-checked reader: the kernel reads the same values
  if (op.custom_options.size == 0 || !map.parse(op.custom_options.data, op.custom_options.size)) {
    return;
  }
  report->options_type = "FlexBuffer map";
  for (size_t i = 0; i < map.size(); ++i) {
    FlexValue value;
    const char* key = map.key(i);
    if (!key || !map.value_at(i, &value)) continue;
    OptionValue option;
    option.key = key;
    bool flag = false;
    int64_t number = 0;
    const char* text = nullptr;
    if (value.type == FlexType::kBool && map.as_bool(value, &flag)) {
      option.kind = OptionValue::Kind::kBool;
      option.value = flag ? "true" : "false";
    } else if (map.as_int(value, &number)) {
      option.kind = OptionValue::Kind::kNumber;
      option.value = std::to_string(number);
    } else if (map.as_string(value, &text)) {
      option.kind = OptionValue::Kind::kString;
      option.value = text;
    } else {
      option.value = format("(FlexBuffer type %d)", static_cast<int>(value.type));
    }
    report->option_values.push_back(std::move(option));
  }
  for (const OptionValue& v : report->option_values) {
    if (!report->options.empty()) report->options += ", ";
    report->options += v.key + "=" + v.value;
  }
}

// ---------------------------------------------------------------------------
// MACs: the kernel list's figure (KernelRegistration::cost, next to each
// kernel; engine/kernels/op_cost.h). Ops the engine has no kernel for are
// counted here, so the report still compares with TFLite's Analyzer.

std::string format_cost(const OpCost& cost) {
  std::string out;
  int term = 0;
  for (const char* p = cost.formula; *p; ++p) {
    if (p[0] == '{' && p[1] == '}' && term < cost.term_count) {
      out += std::to_string(cost.terms[term++]);
      ++p;
    } else {
      out += *p;
    }
  }
  return out;
}

// CONV_2D filter [O,KH,KW,I]: each output element costs KH x KW x I.
// DEPTHWISE_CONV_2D filter [1,KH,KW,C]: each output element costs KH x KW.
OpCost conv_cost(const SubgraphView& sg, const OperatorView& op, bool depthwise) {
  if (input_rank(sg, op, 1) != 4 || op.outputs.size == 0 || op.outputs[0] < 0) return {};
  const TensorView o = sg.tensor(op.outputs[0]);
  if (o.shape.size == 0) return {};  // unknown output shape
  const int64_t outputs = static_cast<int64_t>(o.element_count());
  const int64_t kh = input_dim(sg, op, 1, 1), kw = input_dim(sg, op, 1, 2);
  const int64_t channels = input_dim(sg, op, 1, 3);
  if (depthwise) {
    return make_cost(static_cast<uint64_t>(outputs * kh * kw), "outputs {} x kernel {}x{}",
                     {outputs, kh, kw});
  }
  return make_cost(static_cast<uint64_t>(outputs * kh * kw * channels),
                   "outputs {} x kernel {}x{} x in {}", {outputs, kh, kw, channels});
}

OpCost cost_without_kernel(const SubgraphView& sg, const OperatorView& op) {
  switch (op.op_code) {
    case static_cast<int32_t>(BuiltinOperator::LSTM): return lstm_cost(sg, op, false);
    case static_cast<int32_t>(BuiltinOperator::RNN): return rnn_cost(sg, op, false);
    case static_cast<int32_t>(BuiltinOperator::CONV_2D): return conv_cost(sg, op, false);
    case static_cast<int32_t>(BuiltinOperator::DEPTHWISE_CONV_2D): return conv_cost(sg, op, true);
    default: return {};
  }
}

OpCost count_macs(const SubgraphView& sg, const OperatorView& op, const Interpreter* prepared) {
  const OpResolver& ops = default_op_resolver();
  if (!ops.supports(op.op_code, op.custom_code)) return cost_without_kernel(sg, op);
  return op_cost(sg, op, ops, prepared);
}

// ---------------------------------------------------------------------------
// Operators and subgraphs

std::string op_display_name(const OperatorView& op) {
  if (op.op_code == kOpCustom) return std::string("CUSTOM:") + op.custom_code;
  const char* name = op_code_name(op.op_code);
  if (name && name[0]) return name;
  return "UNKNOWN(" + std::to_string(op.op_code) + ")";
}

OpReport analyze_op(const SubgraphView& sg, const OperatorView& op, const Interpreter* prepared) {
  OpReport r;
  r.index = op.index;
  r.op_code = op.op_code;
  r.name = op_display_name(op);
  r.inputs = to_vector(op.inputs);
  r.outputs = to_vector(op.outputs);
  r.intermediates = to_vector(op.intermediates);
  int32_t called[2];
  const int called_count = called_subgraphs(op, called);
  r.called_subgraphs.assign(called, called + called_count);
  decode_options(op, &r);
  if (op.op_code == kOpCustom) decode_custom_options(op, &r);
  const OpCost macs = count_macs(sg, op, prepared);
  r.macs = macs.macs;
  r.macs_formula = format_cost(macs);
  r.engine_supported = default_op_resolver().supports(op.op_code, op.custom_code);
  r.version = op.op_version;
  if (op.op_code == kOpCustom) r.custom_code = op.custom_code;
  r.custom_options_bytes = op.custom_options.size;
  return r;
}

SubgraphReport analyze_subgraph(const Model& model, const SubgraphView& sg,
                                const Interpreter* prepared) {
  SubgraphReport s;
  s.index = sg.index;
  s.name = sg.name;
  s.inputs = to_vector(sg.inputs);
  s.outputs = to_vector(sg.outputs);
  std::set<uint32_t> buffers_seen;  // a buffer shared by two tensors counts once
  for (int i = 0; i < sg.tensor_count; ++i) {
    TensorReport t = analyze_tensor(model, sg.tensor(i));
    if (t.data_bytes > 0 && buffers_seen.insert(t.buffer).second) s.data_bytes += t.data_bytes;
    s.parameters += t.parameters;
    s.tensors.push_back(std::move(t));
  }
  for (int i = 0; i < sg.operator_count; ++i) {
    const OperatorView view = sg.op(i);
    const KernelRegistration* kernel = default_op_resolver().find(view.op_code, view.custom_code);
    for (size_t k = 0; k < view.inputs.size; ++k) {
      if (view.inputs[k] < 0 || !is_weight_input(kernel, static_cast<int>(k))) continue;
      TensorReport& t = s.tensors[static_cast<size_t>(view.inputs[k])];
      t.trainable_weight = t.is_constant && t.type == "FLOAT32";
    }
    OpReport op = analyze_op(sg, view, prepared);
    s.macs += op.macs;
    s.ops.push_back(std::move(op));
  }
  return s;
}

bool all_zero(Span<uint8_t> data) {
  return std::all_of(data.begin(), data.end(), [](uint8_t b) { return b == 0; });
}

}  // namespace

void add_fusion_outlook(const Model& model, AnalyzerReport* report, FuseResult* result) {
  FuseResult local;
  FuseResult& fused = result ? *result : local;
  std::string error;
  const std::vector<uint8_t> bytes(model.bytes(), model.bytes() + model.size_bytes());
  if (!fuse_model(bytes, FuseOptions(), &fused, &error)) return;
  report->recurrent_cells = static_cast<int>(fused.cells.size());
  report->fusable_cells = fused.fused_count();
  for (const CellOutcome& c : fused.cells) {
    if (!c.fused && report->fuse_note.empty()) report->fuse_note = c.cell.summary + ": " + c.reason;
  }
  // A streaming model's cells may fuse keeping their state inside (`gruwb fuse --stateful`).
  if (report->fusable_cells < report->recurrent_cells) {
    FuseOptions stateful;
    stateful.stateful = true;
    FuseResult kept_state;
    if (fuse_model(bytes, stateful, &kept_state, &error) &&
        kept_state.fused_count() > report->fusable_cells) {
      report->fuse_note += " (gruwb fuse --stateful fuses " +
                           std::to_string(kept_state.fused_count()) + " of " +
                           std::to_string(report->recurrent_cells) +
                           ", keeping the streaming state inside the fused ops)";
    }
  }
}

AnalyzerReport analyze_model(const Model& model, const std::string& path) {
  AnalyzerReport r;
  r.path = path;
  r.format = model_format_name(model.format());
  r.version = model.version();
  r.description = model.description();
  r.model_bytes = model.size_bytes();
  r.buffer_count = static_cast<uint32_t>(model.buffer_count());
  r.operator_code_count = static_cast<uint32_t>(model.opcode_count());

  for (int i = 0; i < model.buffer_count(); ++i) {
    const Span<uint8_t> data = model.buffer_data(static_cast<uint32_t>(i));
    r.data_bytes += data.size;
    if (!data.empty() && all_zero(data)) {
      r.zero_value_buffers += data.size;
      ++r.zero_value_buffer_count;
    }
  }
  r.non_data_bytes = r.model_bytes - r.data_bytes;

  // Prepared once: whether it runs, and the constants it folds (loop trip counts).
  ModelRunner runner;
  r.engine_runs = runner.prepare(model, &r.engine_error);
  if (r.engine_runs) r.engine_error.clear();
  const Interpreter* prepared = r.engine_runs ? &runner.interpreter() : nullptr;

  std::set<std::string> unsupported;
  std::vector<std::string> firmware_ops;  // in order of first use
  std::set<std::string> integer_ops;
  for (int i = 0; i < model.subgraph_count(); ++i) {
    SubgraphReport s = analyze_subgraph(model, model.subgraph(i), prepared);
    r.parameters += s.parameters;
    for (const OpReport& op : s.ops) {
      if (!op.engine_supported && unsupported.insert(op.name).second) {
        r.unsupported_ops.push_back(op.name);
      }
      const std::string name = op.custom_code.empty() ? op.name : op.custom_code;
      if (std::find(firmware_ops.begin(), firmware_ops.end(), name) == firmware_ops.end()) {
        firmware_ops.push_back(name);
      }
      for (const auto* side : {&op.inputs, &op.outputs}) {
        for (int32_t t : *side) {
          if (t < 0 || t >= static_cast<int32_t>(s.tensors.size())) continue;
          const TensorReport& tensor = s.tensors[static_cast<size_t>(t)];
          const bool integer =
              tensor.type == "INT8" || tensor.type == "UINT8" || tensor.type == "INT16";
          if (integer && !tensor.is_constant) integer_ops.insert(name);
        }
      }
    }
    r.subgraphs.push_back(std::move(s));
  }
  for (const std::string& name : firmware_ops) {
    r.firmware_ops += (r.firmware_ops.empty() ? "" : ",") + name;
    if (integer_ops.count(name)) r.firmware_ops += ":int8";
  }
  // Per inference: the subgraphs no op calls (subgraph 0, and any other entry
  // point). A called subgraph's MACs are in its caller's op already, times
  // the loop's trip count; a CALL_ONCE initializer runs once per session.
  std::set<int32_t> called;
  for (const SubgraphReport& s : r.subgraphs) {
    for (const OpReport& op : s.ops)
      called.insert(op.called_subgraphs.begin(), op.called_subgraphs.end());
  }
  for (const SubgraphReport& s : r.subgraphs) {
    if (!called.count(s.index)) r.macs += s.macs;
  }

  for (int i = 0; i < model.signature_count(); ++i) {
    const SignatureView sig = model.signature(i);
    SignatureReport s;
    s.key = sig.key;
    s.subgraph = static_cast<int32_t>(sig.subgraph_index);
    for (int k = 0; k < sig.input_count(); ++k) {
      const TensorMapView map = sig.input(k);
      s.inputs.push_back({map.name, static_cast<int32_t>(map.tensor_index)});
    }
    for (int k = 0; k < sig.output_count(); ++k) {
      const TensorMapView map = sig.output(k);
      s.outputs.push_back({map.name, static_cast<int32_t>(map.tensor_index)});
    }
    r.signatures.push_back(s.key);
    r.signature_defs.push_back(std::move(s));
  }
  for (int i = 0; i < model.metadata_count(); ++i) r.metadata.push_back(model.metadata(i).name);
  return r;
}

// ---------------------------------------------------------------------------
// Text

namespace {

// Constant inputs are marked in op lines. Scalars and small integer ones
// (shapes, axes, counters) show their values, as the Analyzer does for INT32;
// the others show "[...]" and the tensor list has their first values.
std::string tensor_ref(const SubgraphReport& sg, int32_t index, bool with_data) {
  constexpr uint64_t kMaxInlineElements = 4;
  std::string out = "T#" + std::to_string(index);
  if (with_data && index >= 0 && static_cast<size_t>(index) < sg.tensors.size()) {
    const TensorReport& t = sg.tensors[static_cast<size_t>(index)];
    if (t.data_bytes > 0) {
      const bool integer = t.type == "INT32" || t.type == "INT64";
      const bool inline_values =
          (t.elements == 1 || (integer && t.elements <= kMaxInlineElements)) &&
          !t.data_preview.empty();
      out += inline_values ? t.data_preview : "[...]";
    }
  }
  return out;
}

std::string tensor_list(const SubgraphReport& sg, const std::vector<int32_t>& indices,
                        bool with_data) {
  std::string out;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i) out += ", ";
    out += tensor_ref(sg, indices[i], with_data);
  }
  return out;
}

void write_op(const SubgraphReport& sg, const OpReport& op, std::string* out) {
  *out +=
      "  Op#" + std::to_string(op.index) + " " + op.name + "(" + tensor_list(sg, op.inputs, true);
  // Control flow shows its subgraphs inside the parentheses, as the Analyzer does.
  const auto subgraph = [](int32_t i) { return "Subgraph#" + std::to_string(i); };
  const size_t called = op.called_subgraphs.size();
  const char* sep = op.inputs.empty() ? "" : ", ";
  if (op.op_code == static_cast<int32_t>(BuiltinOperator::WHILE) && called == 2) {
    *out += std::string(sep) + "Cond: " + subgraph(op.called_subgraphs[0]) +
            ", Body: " + subgraph(op.called_subgraphs[1]);
  } else if (op.op_code == static_cast<int32_t>(BuiltinOperator::IF) && called == 2) {
    *out += std::string(sep) + "Then: " + subgraph(op.called_subgraphs[0]) +
            ", Else: " + subgraph(op.called_subgraphs[1]);
  } else if (called > 0) {
    *out += std::string(sep) + subgraph(op.called_subgraphs[0]);
  }
  *out += ") -> [" + tensor_list(sg, op.outputs, false) + "]\n";

  std::string details;
  if (!op.options.empty()) {  // option tables without fields add nothing
    details += op.options_type + "{" + op.options + "}";
  }
  if (!op.custom_code.empty() && op.custom_options_bytes > 0) {
    if (!details.empty()) details += "; ";
    details += format("custom options %" PRIu64 " bytes", op.custom_options_bytes);
  }
  if (op.macs > 0) {
    if (!details.empty()) details += "; ";
    details += format("MACs %" PRIu64 " (", op.macs) + op.macs_formula + ")";
  }
  if (!details.empty()) *out += "       " + details + "\n";
}

void write_tensor(const TensorReport& t, std::string* out) {
  *out += "  T#" + std::to_string(t.index) + "(" + t.name + ") ";
  // The Analyzer prints only the signature when there is one; we keep the
  // concrete shape too and add the signature (-1 = dynamic) when it differs.
  *out += "shape:[" + join_ints(t.shape) + "]";
  if (!t.shape_signature.empty() && t.shape_signature != t.shape) {
    *out += ", shape_signature:[" + join_ints(t.shape_signature) + "]";
  }
  *out += ", type:" + t.type;
  if (t.data_bytes > 0) {
    *out += format(" RO %" PRIu64 " bytes, buffer:%u", t.data_bytes, t.buffer);
    if (!t.data_preview.empty()) *out += ", data:" + t.data_preview;
  }
  if (t.is_variable) *out += ", variable";
  if (t.is_sparse) *out += ", sparse";
  if (!t.quantization.empty()) *out += ", quantization:" + t.quantization;
  *out += "\n";
}

void write_subgraph(const SubgraphReport& sg, std::string* out) {
  *out += "Subgraph#" + std::to_string(sg.index) + (sg.name.empty() ? "" : " " + sg.name) + "(" +
          tensor_list(sg, sg.inputs, false) + ") -> [" + tensor_list(sg, sg.outputs, false) + "]\n";
  for (const OpReport& op : sg.ops) write_op(sg, op, out);
  *out += "\nTensors of Subgraph#" + std::to_string(sg.index) + "\n";
  for (const TensorReport& t : sg.tensors) write_tensor(t, out);
  *out += "\n";
}

void write_signatures(const AnalyzerReport& r, std::string* out) {
  if (r.signature_defs.empty()) return;
  *out += format("Your model has '%zu' signature_def(s).\n\n", r.signature_defs.size());
  for (size_t i = 0; i < r.signature_defs.size(); ++i) {
    const SignatureReport& s = r.signature_defs[i];
    *out += format("Signature#%zu key: '", i) + s.key + "'\n";
    *out += format("- Subgraph: Subgraph#%d\n- Inputs:\n", s.subgraph);
    for (const TensorMapReport& m : s.inputs) {
      *out += "    '" + m.name + "' : T#" + std::to_string(m.tensor) + "\n";
    }
    *out += "- Outputs:\n";
    for (const TensorMapReport& m : s.outputs) {
      *out += "    '" + m.name + "' : T#" + std::to_string(m.tensor) + "\n";
    }
    *out += "\n";
  }
}

constexpr char kRule[] = "---------------------------------------------------------------\n";

std::string size_line(const char* label, uint64_t bytes, uint64_t model_bytes) {
  return format("%24s: %" PRIu64 " bytes (%.2f%%)\n", label, bytes, percent(bytes, model_bytes));
}

}  // namespace

std::string report_to_text(const AnalyzerReport& r) {
  std::string out;
  const char* format_label = r.format == "circle" ? "Circle (CIR0)" : "TFLite (TFL3)";
  out += "=== " + r.path + " ===\n";
  out += format("Format: %s, schema version %u", format_label, r.version);
  if (!r.description.empty()) out += ", description '" + r.description + "'";
  out += "\n\n";

  out += format("Your model has '%zu' subgraph(s). In the subgraph description below,\n",
                r.subgraphs.size());
  out += "T# represents the Tensor numbers";
  if (!r.subgraphs.empty() && !r.subgraphs[0].ops.empty()) {
    const OpReport& first = r.subgraphs[0].ops[0];
    out += ". For example, in Subgraph#0, the " + first.name + " op takes\n";
    auto verbose = [](const std::vector<int32_t>& list) {
      std::string s = list.empty() ? "no tensor" : "";
      for (size_t i = 0; i < list.size(); ++i) {
        if (i) s += " and ";
        s += "tensor #" + std::to_string(list[i]);
      }
      return s;
    };
    out +=
        verbose(first.inputs) + " as input and produces " + verbose(first.outputs) + " as output";
  }
  out += ".\n\n";

  for (const SubgraphReport& sg : r.subgraphs) write_subgraph(sg, &out);
  if (!r.signature_defs.empty()) out += kRule;
  write_signatures(r, &out);

  out += kRule;
  out += format("%24s: %" PRIu64 " bytes\n", "Model size", r.model_bytes);
  out += size_line("Non-data buffer size", r.non_data_bytes, r.model_bytes);
  out += size_line("Total data buffer size", r.data_bytes, r.model_bytes);
  if (r.subgraphs.size() > 1) {  // the Analyzer lists subgraphs only when there are several
    for (const SubgraphReport& sg : r.subgraphs) {
      const std::string label = "- Subgraph#" + std::to_string(sg.index);
      out += size_line(label.c_str(), sg.data_bytes, r.model_bytes);
    }
  }
  out += size_line("(Zero value buffers)", r.zero_value_buffers, r.model_bytes);
  out += "\n";
  out += format("%24s: %" PRIu64 " (elements of constant tensors)\n", "Parameters", r.parameters);
  out += format("%24s: %" PRIu64 " (per inference; loop bodies x trip count)\n", "MACs", r.macs);
  uint64_t op_count = 0;
  for (const SubgraphReport& sg : r.subgraphs) op_count += sg.ops.size();
  if (r.engine_runs) {
    out += format("%24s: yes (prepare succeeds; kernels for all %" PRIu64 " ops)\n", "Engine runs",
                  op_count);
  } else {
    if (!r.unsupported_ops.empty()) {
      std::string names;
      for (const std::string& name : r.unsupported_ops) names += (names.empty() ? "" : ", ") + name;
      out += format("%24s: ", "No kernel for") + names + "\n";
    }
    out += format("%24s: ", "Engine cannot run") + r.engine_error + "\n";
  }
  out += format("%24s: GRUWB_FW_OPS=", "Firmware op table") + r.firmware_ops + "\n";
  if (r.recurrent_cells > 0) {
    out += format("%24s: %d of %d recurrent cells (gruwb fuse)\n", "Can fuse", r.fusable_cells,
                  r.recurrent_cells);
    if (!r.fuse_note.empty()) out += format("%24s  ", "") + r.fuse_note + "\n";
  }
  return out;
}

// ---------------------------------------------------------------------------
// JSON (schema: docs/inspect-json.md; keep the two in step)

namespace {

const char* option_kind_name(OptionValue::Kind kind) {
  switch (kind) {
    case OptionValue::Kind::kNumber: return "number";
    case OptionValue::Kind::kBool: return "bool";
    case OptionValue::Kind::kEnum: return "enum";
    case OptionValue::Kind::kString: return "string";
    default: return "other";
  }
}

void write_option_value(JsonWriter& json, const OptionValue& v) {
  switch (v.kind) {
    case OptionValue::Kind::kBool: json.value(v.value == "true"); break;
    case OptionValue::Kind::kNumber: {
      // Integers stay exact; floats go through double (they came from a float).
      const bool integral = v.value.find_first_of(".eEn") == std::string::npos;
      if (integral) {
        json.value(static_cast<int64_t>(std::strtoll(v.value.c_str(), nullptr, 10)));
      } else {
        json.value(std::strtof(v.value.c_str(), nullptr));
      }
      break;
    }
    default: json.value(v.value);
  }
}

void write_tensor_json(JsonWriter& json, const TensorReport& t) {
  json.begin_object();
  json.key("index").value(t.index);
  json.key("name").value(t.name);
  json.key("shape").array(t.shape);
  json.key("shape_signature").array(t.shape_signature);
  json.key("type").value(t.type);
  json.key("buffer").value(t.buffer);
  json.key("data_bytes").value(t.data_bytes);
  json.key("elements").value(t.elements);
  json.key("parameters").value(t.parameters);
  json.key("is_constant").value(t.is_constant);
  json.key("is_variable").value(t.is_variable);
  json.key("trainable_weight").value(t.trainable_weight);
  json.key("is_sparse").value(t.is_sparse);
  json.key("data_preview").value(t.data_preview);
  json.key("quantization").value(t.quantization);
  json.key("scales").array(t.scales);
  json.key("zero_points").array(t.zero_points);
  json.key("quantized_dimension").value(t.quantized_dimension);
  json.end_object();
}

void write_op_json(JsonWriter& json, const OpReport& op) {
  json.begin_object();
  json.key("index").value(op.index);
  json.key("op_code").value(op.op_code);
  json.key("name").value(op.name);
  json.key("version").value(op.version);
  json.key("custom_code").value(op.custom_code);
  json.key("custom_options_bytes").value(op.custom_options_bytes);
  json.key("inputs").array(op.inputs);
  json.key("outputs").array(op.outputs);
  json.key("intermediates").array(op.intermediates);
  json.key("called_subgraphs").array(op.called_subgraphs);
  json.key("options_type").value(op.options_type);
  json.key("options").value(op.options);
  json.key("option_values").begin_object();
  for (const OptionValue& v : op.option_values) {
    json.key(v.key);
    write_option_value(json, v);
  }
  json.end_object();
  json.key("option_kinds").begin_object();
  for (const OptionValue& v : op.option_values) json.key(v.key).value(option_kind_name(v.kind));
  json.end_object();
  json.key("macs").value(op.macs);
  json.key("macs_formula").value(op.macs_formula);
  json.key("engine_supported").value(op.engine_supported);
  json.end_object();
}

void write_subgraph_json(JsonWriter& json, const SubgraphReport& sg) {
  json.begin_object();
  json.key("index").value(sg.index);
  json.key("name").value(sg.name);
  json.key("inputs").array(sg.inputs);
  json.key("outputs").array(sg.outputs);
  json.key("data_bytes").value(sg.data_bytes);
  json.key("parameters").value(sg.parameters);
  json.key("macs").value(sg.macs);
  json.key("tensor_count").value(sg.tensors.size());
  json.key("op_count").value(sg.ops.size());
  json.key("ops").begin_array();
  for (const OpReport& op : sg.ops) write_op_json(json, op);
  json.end_array();
  json.key("tensors").begin_array();
  for (const TensorReport& t : sg.tensors) write_tensor_json(json, t);
  json.end_array();
  json.end_object();
}

void write_tensor_maps(JsonWriter& json, const std::vector<TensorMapReport>& maps) {
  json.begin_array();
  for (const TensorMapReport& m : maps) {
    json.begin_object().key("name").value(m.name).key("tensor").value(m.tensor).end_object();
  }
  json.end_array();
}

}  // namespace

std::string report_to_json(const AnalyzerReport& r, const std::vector<ArenaRow>* arena) {
  JsonWriter json;
  json.begin_object();
  json.key("schema").value("gruwb-inspect/1");
  json.key("path").value(r.path);
  json.key("format").value(r.format);
  json.key("version").value(r.version);
  json.key("description").value(r.description);
  json.key("model_bytes").value(r.model_bytes);
  json.key("non_data_bytes").value(r.non_data_bytes);
  json.key("non_data_percent").value(percent(r.non_data_bytes, r.model_bytes));
  json.key("data_bytes").value(r.data_bytes);
  json.key("data_percent").value(percent(r.data_bytes, r.model_bytes));
  json.key("subgraph_data_bytes").begin_array();
  for (const SubgraphReport& sg : r.subgraphs) json.value(sg.data_bytes);
  json.end_array();
  json.key("zero_value_buffers").value(r.zero_value_buffers);
  json.key("zero_value_buffer_count").value(r.zero_value_buffer_count);
  json.key("buffer_count").value(r.buffer_count);
  json.key("operator_code_count").value(r.operator_code_count);
  json.key("parameters").value(r.parameters);
  json.key("macs").value(r.macs);
  json.key("unsupported_ops").array(r.unsupported_ops);
  json.key("firmware_ops").value(r.firmware_ops);
  json.key("engine_runs").value(r.engine_runs);
  json.key("engine_error").value(r.engine_error);
  json.key("recurrent_cells").value(r.recurrent_cells);
  json.key("fusable_cells").value(r.fusable_cells);
  json.key("fuse_note").value(r.fuse_note);
  json.key("signatures").array(r.signatures);
  json.key("signature_defs").begin_array();
  for (const SignatureReport& s : r.signature_defs) {
    json.begin_object();
    json.key("key").value(s.key);
    json.key("subgraph").value(s.subgraph);
    json.key("inputs");
    write_tensor_maps(json, s.inputs);
    json.key("outputs");
    write_tensor_maps(json, s.outputs);
    json.end_object();
  }
  json.end_array();
  json.key("metadata").array(r.metadata);
  json.key("subgraphs").begin_array();
  for (const SubgraphReport& sg : r.subgraphs) write_subgraph_json(json, sg);
  json.end_array();
  if (arena) {
    json.key("arena");
    write_arena_json(*arena, &json);
  }
  json.end_object();
  std::string text = json.take();
  text += "\n";
  return text;
}

}  // namespace gruwb::tools
