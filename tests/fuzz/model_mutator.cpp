#include "tests/fuzz/model_mutator.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>

#include "engine/schema/model_generated.h"

namespace gruwb::fuzz {
namespace {

using Rng = std::mt19937_64;

size_t pick(Rng& rng, size_t count) { return count == 0 ? 0 : static_cast<size_t>(rng() % count); }

template <typename T>
const T& pick_from(Rng& rng, const std::vector<T>& values) {
  return values[pick(rng, values.size())];
}

// Values that break size arithmetic and index checks.
int64_t extreme_int(Rng& rng) {
  static const std::vector<int64_t> values = {0,         1,
                                              -1,        -2,
                                              2,         3,
                                              7,         127,
                                              -128,      255,
                                              65535,     1 << 20,
                                              1 << 28,   (1 << 28) + 1,
                                              1 << 30,   INT32_MAX,
                                              INT32_MIN, INT32_MAX - 1,
                                              0x10000,   4096,
                                              -(1 << 28)};
  if (rng() % 8 == 0) return static_cast<int32_t>(rng());
  return pick_from(rng, values);
}

double extreme_float(Rng& rng) {
  static const std::vector<double> values = {0.0,
                                             -0.0,
                                             1.0,
                                             -1.0,
                                             1e38,
                                             -1e38,
                                             1e-45,
                                             std::numeric_limits<double>::infinity(),
                                             -std::numeric_limits<double>::infinity(),
                                             std::numeric_limits<double>::quiet_NaN(),
                                             3e9};
  return pick_from(rng, values);
}

struct Editor {
  fb::ModelT& model;
  Rng& rng;
  std::string& log;

  void note(const std::string& text) {
    if (!log.empty()) log += "; ";
    log += text;
  }
  fb::SubGraphT* subgraph(size_t* index) {
    if (model.subgraphs.empty()) return nullptr;
    *index = pick(rng, model.subgraphs.size());
    return model.subgraphs[*index].get();
  }
  fb::TensorT* tensor(size_t* sg, size_t* index) {
    fb::SubGraphT* g = subgraph(sg);
    if (!g || g->tensors.empty()) return nullptr;
    *index = pick(rng, g->tensors.size());
    return g->tensors[*index].get();
  }
  fb::OperatorT* op(size_t* sg, size_t* index) {
    fb::SubGraphT* g = subgraph(sg);
    if (!g || g->operators.empty()) return nullptr;
    *index = pick(rng, g->operators.size());
    return g->operators[*index].get();
  }
  const std::vector<uint8_t>* constant_data(const fb::TensorT& t) const {
    if (t.buffer >= model.buffers.size() || !model.buffers[t.buffer]) return nullptr;
    const std::vector<uint8_t>& data = model.buffers[t.buffer]->data;
    return data.empty() ? nullptr : &data;
  }
  std::string where(size_t sg, size_t index, const char* what) {
    return "subgraph " + std::to_string(sg) + " " + what + " " + std::to_string(index);
  }

  bool huge_dimension() {
    size_t sg = 0, t = 0;
    fb::TensorT* tensor = this->tensor(&sg, &t);
    if (!tensor) return false;
    static const std::vector<int64_t> dims = {INT32_MAX, 1 << 30, 1 << 28, (1 << 28) + 1, 1 << 16,
                                              0,         -1,      -2,      INT32_MIN,     46341};
    const int64_t value = pick_from(rng, dims);
    if (tensor->shape.empty() || rng() % 5 == 0) {
      tensor->shape.push_back(static_cast<int32_t>(value));
      note(where(sg, t, "tensor") + " gains dim " + std::to_string(value));
      return true;
    }
    const size_t d = pick(rng, tensor->shape.size());
    tensor->shape[d] = static_cast<int32_t>(value);
    if (!tensor->shape_signature.empty() && rng() % 2) {
      tensor->shape_signature[pick(rng, tensor->shape_signature.size())] =
          static_cast<int32_t>(value);
    }
    note(where(sg, t, "tensor") + " dim " + std::to_string(d) + " = " + std::to_string(value));
    return true;
  }

  bool shape_lies_about_buffer() {
    size_t sg = 0, t = 0;
    fb::TensorT* tensor = this->tensor(&sg, &t);
    if (!tensor) return false;
    switch (rng() % 4) {
      case 0:  // shape grows, data stays
        if (tensor->shape.empty()) tensor->shape.push_back(2);
        {
          int32_t& dim = tensor->shape[pick(rng, tensor->shape.size())];
          dim = static_cast<int32_t>(static_cast<uint32_t>(dim) * 2u);  // wraps: hostile too
        }
        note(where(sg, t, "tensor") + " shape doubled, buffer kept");
        return true;
      case 1: {  // data shrinks or grows
        if (tensor->buffer >= model.buffers.size() || tensor->buffer == 0) return false;
        std::vector<uint8_t>& data = model.buffers[tensor->buffer]->data;
        const size_t size = data.empty() ? 4 : (rng() % 2 ? data.size() / 2 : data.size() + 4);
        data.resize(size);
        note(where(sg, t, "tensor") + " buffer resized to " + std::to_string(size));
        return true;
      }
      case 2:  // another buffer
        if (model.buffers.empty()) return false;
        tensor->buffer = static_cast<uint32_t>(pick(rng, model.buffers.size()));
        note(where(sg, t, "tensor") + " now reads buffer " + std::to_string(tensor->buffer));
        return true;
      default:  // a constant becomes an activation, or the reverse
        if (constant_data(*tensor)) {
          tensor->buffer = 0;
          note(where(sg, t, "tensor") + " loses its constant data");
        } else {
          auto buffer = std::make_unique<fb::BufferT>();
          buffer->data.assign(4 * (1 + rng() % 64), 0x41);
          model.buffers.push_back(std::move(buffer));
          tensor->buffer = static_cast<uint32_t>(model.buffers.size() - 1);
          note(where(sg, t, "tensor") + " gains " +
               std::to_string(model.buffers.back()->data.size()) + " bytes of constant data");
        }
        return true;
    }
  }

  // One index-bearing place in the model, to set to `value`.
  bool set_some_index(int64_t value, bool out_of_range) {
    size_t sg = 0;
    fb::SubGraphT* g = subgraph(&sg);
    if (!g) return false;
    const int64_t tensors = static_cast<int64_t>(g->tensors.size());
    auto index_value = [&](int64_t count) { return out_of_range ? count + value : value; };
    std::vector<std::pair<std::string, std::vector<int32_t>*>> lists;
    lists.push_back({"inputs", &g->inputs});
    lists.push_back({"outputs", &g->outputs});
    size_t o = 0;
    if (!g->operators.empty()) {
      o = pick(rng, g->operators.size());
      fb::OperatorT& op = *g->operators[o];
      lists.push_back({"op " + std::to_string(o) + " inputs", &op.inputs});
      lists.push_back({"op " + std::to_string(o) + " outputs", &op.outputs});
      lists.push_back({"op " + std::to_string(o) + " outputs", &op.outputs});
      if (!op.intermediates.empty()) {
        lists.push_back({"op " + std::to_string(o) + " intermediates", &op.intermediates});
      }
      const uint64_t place = rng() % 6;
      if (place == 0) {
        const int64_t v = index_value(static_cast<int64_t>(model.operator_codes.size()));
        op.opcode_index = static_cast<uint32_t>(v);
        note(where(sg, o, "op") + " opcode_index = " + std::to_string(v));
        return true;
      }
      if (place == 1) {
        int32_t* target = nullptr;
        if (auto* w = op.builtin_options.AsWhileOptions()) {
          target = rng() % 2 ? &w->body_subgraph_index : &w->cond_subgraph_index;
        } else if (auto* i = op.builtin_options.AsIfOptions()) {
          target = rng() % 2 ? &i->then_subgraph_index : &i->else_subgraph_index;
        } else if (auto* c = op.builtin_options.AsCallOnceOptions()) {
          target = &c->init_subgraph_index;
        }
        if (target) {
          *target = static_cast<int32_t>(index_value(static_cast<int64_t>(model.subgraphs.size())));
          note(where(sg, o, "op") + " called subgraph = " + std::to_string(*target));
          return true;
        }
      }
    }
    if (rng() % 6 == 0 && !g->tensors.empty()) {
      const size_t t = pick(rng, g->tensors.size());
      const int64_t v = index_value(static_cast<int64_t>(model.buffers.size()));
      g->tensors[t]->buffer = static_cast<uint32_t>(v);
      note(where(sg, t, "tensor") + " buffer = " + std::to_string(v));
      return true;
    }
    auto& [name, list] = lists[pick(rng, lists.size())];
    const int64_t v = index_value(tensors);
    if (list->empty() || rng() % 4 == 0) {
      list->push_back(static_cast<int32_t>(v));
      note("subgraph " + std::to_string(sg) + " " + name + " gains " + std::to_string(v));
    } else {
      const size_t k = pick(rng, list->size());
      (*list)[k] = static_cast<int32_t>(v);
      note("subgraph " + std::to_string(sg) + " " + name + "[" + std::to_string(k) +
           "] = " + std::to_string(v));
    }
    return true;
  }

  bool index_out_of_range() {
    static const std::vector<int64_t> past = {0, 1, 2, 100, INT32_MAX / 2};
    return set_some_index(pick_from(rng, past), true);
  }
  bool minus_one_index() { return set_some_index(-1, false); }

  bool self_reference() {
    size_t sg = 0;
    fb::SubGraphT* g = subgraph(&sg);
    if (!g) return false;
    for (auto& op : g->operators) {
      if (auto* w = op->builtin_options.AsWhileOptions()) {
        (rng() % 2 ? w->body_subgraph_index : w->cond_subgraph_index) = static_cast<int32_t>(sg);
        note("subgraph " + std::to_string(sg) + " WHILE calls itself");
        return true;
      }
      if (auto* c = op->builtin_options.AsCallOnceOptions()) {
        c->init_subgraph_index = static_cast<int32_t>(sg);
        note("subgraph " + std::to_string(sg) + " CALL_ONCE calls itself");
        return true;
      }
    }
    // A new CALL_ONCE (or WHILE) op in this subgraph that calls this subgraph or subgraph 0.
    auto code = std::make_unique<fb::OperatorCodeT>();
    const bool loop = rng() % 2;
    code->builtin_code = loop ? fb::BuiltinOperator::WHILE : fb::BuiltinOperator::CALL_ONCE;
    code->deprecated_builtin_code = static_cast<int8_t>(code->builtin_code);
    model.operator_codes.push_back(std::move(code));
    auto op = std::make_unique<fb::OperatorT>();
    op->opcode_index = static_cast<uint32_t>(model.operator_codes.size() - 1);
    const int32_t target = rng() % 2 ? static_cast<int32_t>(sg) : 0;
    if (loop) {
      fb::WhileOptionsT options;
      options.cond_subgraph_index = target;
      options.body_subgraph_index = target;
      op->inputs = g->inputs;
      op->outputs = g->inputs;
      op->builtin_options.Set(std::move(options));
    } else {
      fb::CallOnceOptionsT options;
      options.init_subgraph_index = target;
      op->builtin_options.Set(std::move(options));
    }
    g->operators.insert(
        g->operators.begin() + static_cast<std::ptrdiff_t>(pick(rng, g->operators.size() + 1)),
        std::move(op));
    note("subgraph " + std::to_string(sg) + " gains a " + (loop ? "WHILE" : "CALL_ONCE") +
         " calling subgraph " + std::to_string(target));
    return true;
  }

  bool sparsity() {
    size_t sg = 0, t = 0;
    fb::TensorT* tensor = this->tensor(&sg, &t);
    if (!tensor) return false;
    // Its contents do not matter: the reader refuses sparse tensors by the field's presence.
    tensor->sparsity = std::make_unique<fb::SparsityParametersT>();
    // A sparse constant stores fewer bytes than its dense shape needs.
    if (tensor->buffer != 0 && tensor->buffer < model.buffers.size() && rng() % 2) {
      std::vector<uint8_t>& data = model.buffers[tensor->buffer]->data;
      data.resize(data.size() / 2);
    }
    note(where(sg, t, "tensor") + " becomes sparse");
    return true;
  }

  bool swap_options() {
    size_t sg = 0, o = 0;
    fb::OperatorT* op = this->op(&sg, &o);
    if (!op) return false;
    size_t sg2 = 0, o2 = 0;
    fb::OperatorT* other = this->op(&sg2, &o2);
    if (!other || other == op) {
      op->builtin_options.Reset();
      note(where(sg, o, "op") + " loses its options");
      return true;
    }
    op->builtin_options = other->builtin_options;
    note(where(sg, o, "op") + " takes the options of " + where(sg2, o2, "op"));
    return true;
  }

  bool rewire() {
    size_t sg = 0;
    fb::SubGraphT* g = subgraph(&sg);
    if (!g || g->tensors.empty()) return false;
    const size_t choice = rng() % 6;
    if (choice == 0 || g->operators.empty()) {  // a graph output nobody produces
      auto t = std::make_unique<fb::TensorT>();
      t->name = "unproduced";
      t->shape = {1, 4};
      g->tensors.push_back(std::move(t));
      g->outputs.push_back(static_cast<int32_t>(g->tensors.size() - 1));
      note("subgraph " + std::to_string(sg) + " output with no producer");
      return true;
    }
    const size_t o = pick(rng, g->operators.size());
    fb::OperatorT& op = *g->operators[o];
    if (op.outputs.empty()) op.outputs.push_back(0);
    const size_t k = pick(rng, op.outputs.size());
    if (choice == 1) {  // two ops write one tensor
      const fb::OperatorT& other = *g->operators[pick(rng, g->operators.size())];
      if (other.outputs.empty()) return false;
      op.outputs[k] = other.outputs[pick(rng, other.outputs.size())];
      note(where(sg, o, "op") + " output duplicates another op's");
    } else if (choice == 2 && !g->inputs.empty()) {  // an op writes a graph input
      op.outputs[k] = g->inputs[pick(rng, g->inputs.size())];
      note(where(sg, o, "op") + " writes a graph input");
    } else if (choice == 3) {  // an op writes a constant
      for (size_t t = 0; t < g->tensors.size(); ++t) {
        if (constant_data(*g->tensors[t])) {
          op.outputs[k] = static_cast<int32_t>(t);
          note(where(sg, o, "op") + " writes constant tensor " + std::to_string(t));
          return true;
        }
      }
      return false;
    } else if (choice == 4) {  // an op removed: its outputs lose their producer
      g->operators.erase(g->operators.begin() + static_cast<std::ptrdiff_t>(o));
      note(where(sg, o, "op") + " removed");
    } else {  // an op reads its own output, or the same output listed twice
      if (rng() % 2 && !op.inputs.empty()) {
        op.inputs[pick(rng, op.inputs.size())] = op.outputs[k];
        note(where(sg, o, "op") + " reads its own output");
      } else {
        op.outputs.push_back(op.outputs[k]);
        note(where(sg, o, "op") + " lists an output twice");
      }
    }
    return true;
  }

  bool type_change() {
    size_t sg = 0, t = 0;
    fb::TensorT* tensor = this->tensor(&sg, &t);
    if (!tensor) return false;
    const int value = rng() % 4 == 0 ? static_cast<int>(static_cast<int8_t>(rng()))
                                     : static_cast<int>(rng() % 20) - 5;
    tensor->type = static_cast<fb::TensorType>(value);
    note(where(sg, t, "tensor") + " type = " + std::to_string(value));
    return true;
  }

  bool quantization() {
    size_t sg = 0, t = 0;
    fb::TensorT* tensor = this->tensor(&sg, &t);
    if (!tensor) return false;
    if (!tensor->quantization)
      tensor->quantization = std::make_unique<fb::QuantizationParametersT>();
    fb::QuantizationParametersT& q = *tensor->quantization;
    switch (rng() % 5) {
      case 0: q.scale.clear(); break;
      case 1: q.scale.assign(1 + rng() % 3, static_cast<float>(extreme_float(rng))); break;
      case 2: q.zero_point.assign(1 + rng() % 70, extreme_int(rng)); break;
      case 3: q.quantized_dimension = static_cast<int32_t>(extreme_int(rng)); break;
      default:
        q.scale.assign(1 + rng() % 70, 0.5f);
        q.zero_point.assign(1 + rng() % 3, 0);
        break;
    }
    note(where(sg, t, "tensor") + " quantization garbled");
    return true;
  }

  bool constant_data_edit() {
    std::vector<std::pair<size_t, size_t>> int_constants;
    for (size_t sg = 0; sg < model.subgraphs.size(); ++sg) {
      const auto& tensors = model.subgraphs[sg]->tensors;
      for (size_t t = 0; t < tensors.size(); ++t) {
        const auto* data = constant_data(*tensors[t]);
        if (data && data->size() >= 4 && tensors[t]->type == fb::TensorType::INT32) {
          int_constants.push_back({sg, t});
        }
      }
    }
    if (int_constants.empty()) return false;
    const auto [sg, t] = int_constants[pick(rng, int_constants.size())];
    std::vector<uint8_t>& data = model.buffers[model.subgraphs[sg]->tensors[t]->buffer]->data;
    const size_t k = pick(rng, data.size() / 4);
    const auto value = static_cast<int32_t>(extreme_int(rng));
    std::memcpy(data.data() + 4 * k, &value, 4);
    note(where(sg, t, "tensor") + " element " + std::to_string(k) + " = " + std::to_string(value));
    return true;
  }

  bool apply(Mutation mutation) {
    switch (mutation) {
      case Mutation::kHugeDimension: return huge_dimension();
      case Mutation::kShapeLiesAboutBuffer: return shape_lies_about_buffer();
      case Mutation::kIndexOutOfRange: return index_out_of_range();
      case Mutation::kMinusOneIndex: return minus_one_index();
      case Mutation::kSelfReference: return self_reference();
      case Mutation::kSparsity: return sparsity();
      case Mutation::kGarbageOptions: return swap_options();  // + field garbage after packing
      case Mutation::kRewire: return rewire();
      case Mutation::kTypeChange: return type_change();
      case Mutation::kQuantization: return quantization();
      case Mutation::kConstantData: return constant_data_edit();
      case Mutation::kCount: break;
    }
    return false;
  }
};

size_t scalar_size(flatbuffers::ElementaryType type) {
  switch (type) {
    case flatbuffers::ET_UTYPE:
    case flatbuffers::ET_BOOL:
    case flatbuffers::ET_CHAR:
    case flatbuffers::ET_UCHAR: return 1;
    case flatbuffers::ET_SHORT:
    case flatbuffers::ET_USHORT: return 2;
    case flatbuffers::ET_INT:
    case flatbuffers::ET_UINT:
    case flatbuffers::ET_FLOAT: return 4;
    case flatbuffers::ET_LONG:
    case flatbuffers::ET_ULONG:
    case flatbuffers::ET_DOUBLE: return 8;
    default: return 0;
  }
}

void write_garbage(Rng& rng, flatbuffers::ElementaryType type, uint8_t* field) {
  const size_t size = scalar_size(type);
  if (type == flatbuffers::ET_FLOAT) {
    const auto value = static_cast<float>(extreme_float(rng));
    std::memcpy(field, &value, 4);
  } else if (type == flatbuffers::ET_DOUBLE) {
    const double value = extreme_float(rng);
    std::memcpy(field, &value, 8);
  } else {
    const int64_t value = extreme_int(rng);  // little-endian: the low bytes first
    std::memcpy(field, &value, size);
  }
}

// Every scalar field (and int vector element, with some chance) of one op's options table gets an
// extreme value, in place in the packed buffer (the mini reflection tables name the field types).
bool garble_options_fields(uint8_t* bytes, size_t size, Rng& rng, std::string& log) {
  // Only writes that lie inside the buffer: a field or vector may be read from anywhere.
  const auto inside = [&](const uint8_t* at, size_t n) {
    return at >= bytes && n <= size && static_cast<size_t>(at - bytes) <= size - n;
  };
  const fb::Model* model = fb::GetModel(bytes);
  if (!model->subgraphs() || model->subgraphs()->size() == 0) return false;
  const size_t sg = pick(rng, model->subgraphs()->size());
  const fb::SubGraph* g = model->subgraphs()->Get(static_cast<uint32_t>(sg));
  if (!g->operators() || g->operators()->size() == 0) return false;
  const size_t o = pick(rng, g->operators()->size());
  const fb::Operator* op = g->operators()->Get(static_cast<uint32_t>(o));
  const auto type = static_cast<size_t>(op->builtin_options_type());
  const auto* table = static_cast<const flatbuffers::Table*>(op->builtin_options());
  const flatbuffers::TypeTable* unions = fb::BuiltinOptionsTypeTable();
  if (!table || type == 0 || type >= unions->num_elems) return false;
  const flatbuffers::TypeCode union_code = unions->type_codes[type];
  if (union_code.sequence_ref < 0) return false;
  const flatbuffers::TypeTable* fields = unions->type_refs[union_code.sequence_ref]();
  bool changed = false;
  for (size_t f = 0; f < fields->num_elems; ++f) {
    const flatbuffers::TypeCode code = fields->type_codes[f];
    const auto base = static_cast<flatbuffers::ElementaryType>(code.base_type);
    const auto vtable_offset = static_cast<flatbuffers::voffset_t>(4 + 2 * f);
    const flatbuffers::voffset_t at = table->GetOptionalFieldOffset(vtable_offset);
    if (at == 0 || scalar_size(base) == 0 || rng() % 3 == 0) continue;
    uint8_t* field = const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(table)) + at;
    if (code.is_repeating) {
      if (!inside(field, 4)) continue;
      const uint8_t* vector = field + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(field);
      if (!inside(vector, 4)) continue;
      const auto count = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(vector);
      uint8_t* elements = const_cast<uint8_t*>(vector) + sizeof(flatbuffers::uoffset_t);
      for (flatbuffers::uoffset_t e = 0; e < count; ++e) {
        uint8_t* element = elements + e * scalar_size(base);
        if (!inside(element, scalar_size(base))) break;
        if (rng() % 2) write_garbage(rng, base, element);
      }
    } else {
      if (!inside(field, scalar_size(base))) continue;
      write_garbage(rng, base, field);
    }
    changed = true;
  }
  if (changed) {
    if (!log.empty()) log += "; ";
    log +=
        "subgraph " + std::to_string(sg) + " op " + std::to_string(o) + " options fields garbled";
  }
  return changed;
}

}  // namespace

const char* mutation_name(Mutation mutation) {
  switch (mutation) {
    case Mutation::kHugeDimension: return "huge-dimension";
    case Mutation::kShapeLiesAboutBuffer: return "shape-lies-about-buffer";
    case Mutation::kIndexOutOfRange: return "index-out-of-range";
    case Mutation::kMinusOneIndex: return "minus-one-index";
    case Mutation::kSelfReference: return "self-reference";
    case Mutation::kSparsity: return "sparsity";
    case Mutation::kGarbageOptions: return "garbage-options";
    case Mutation::kRewire: return "rewire";
    case Mutation::kTypeChange: return "type-change";
    case Mutation::kQuantization: return "quantization";
    case Mutation::kConstantData: return "constant-data";
    case Mutation::kCount: break;
  }
  return "?";
}

bool mutate_model(const uint8_t* bytes, size_t size, uint64_t seed, Mutant* out, Mutation only) {
  // Flatbuffers end at 2 GB; the bound also tells gcc's -Wstringop-overflow that the copy
  // below stays in the vector.
  if (size < 8 || size > (size_t{1} << 31)) return false;
  // The verifier checks alignment relative to the buffer's start, which libFuzzer's buffers do
  // not promise: an 8-aligned copy, as a file loader gives.
  std::vector<uint64_t> aligned((size + 7) / 8);
  std::memcpy(aligned.data(), bytes, size);
  const uint8_t* data = reinterpret_cast<const uint8_t*>(aligned.data());
  flatbuffers::Verifier verifier(data, size);
  if (!verifier.VerifyBuffer<fb::Model>(nullptr)) return false;
  // flatbuffers' verifier checks a vector's 4-byte length, not its elements' alignment: an int64
  // zero-point vector at 4 mod 8 would be read misaligned by UnPack (the engine reads them
  // bytewise, the host tools refuse them). Such inputs are left to libFuzzer's byte mutations.
  const auto* subgraphs = fb::GetModel(data)->subgraphs();
  for (uint32_t s = 0; subgraphs && s < subgraphs->size(); ++s) {
    const auto* tensors = subgraphs->Get(s)->tensors();
    for (uint32_t t = 0; tensors && t < tensors->size(); ++t) {
      const fb::QuantizationParameters* q = tensors->Get(t)->quantization();
      if (q && q->zero_point() && reinterpret_cast<uintptr_t>(q->zero_point()->data()) % 8 != 0)
        return false;
    }
  }
  std::unique_ptr<fb::ModelT> model(fb::GetModel(data)->UnPack());
  // Options named without their table unpack to a null table, which Pack dereferences (the
  // product's unpack_model in engine/tools/model_writer.cpp drops them the same way).
  for (auto& subgraph : model->subgraphs) {
    for (auto& op : subgraph->operators) {
      if (!op->builtin_options.value) op->builtin_options.Reset();
    }
    for (auto& tensor : subgraph->tensors) {
      if (tensor->quantization && !tensor->quantization->details.value)
        tensor->quantization->details.Reset();
    }
  }
  Rng rng(seed);
  std::string log;
  Editor editor{*model, rng, log};
  const int edits = only == Mutation::kCount ? 1 + static_cast<int>(rng() % 3) : 1;
  bool garble_fields = false;
  int applied = 0;
  for (int e = 0; e < edits; ++e) {
    const Mutation mutation =
        only != Mutation::kCount
            ? only
            : static_cast<Mutation>(rng() % static_cast<int>(Mutation::kCount));
    if (mutation == Mutation::kGarbageOptions && rng() % 2) {
      garble_fields = true;
      continue;
    }
    const size_t before = log.size();
    if (editor.apply(mutation)) {
      ++applied;
      log.insert(before == 0 ? 0 : before + 2, std::string(mutation_name(mutation)) + ": ");
    }
  }
  flatbuffers::FlatBufferBuilder builder;
  builder.ForceDefaults(true);  // every scalar option is present, so it can be garbled in place
  char identifier[5] = {};
  std::memcpy(identifier, data + 4, 4);
  builder.Finish(fb::Model::Pack(builder, model.get()), identifier);
  out->bytes.assign(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
  if (garble_fields) {
    std::string fields_log;
    if (garble_options_fields(out->bytes.data(), out->bytes.size(), rng, fields_log)) {
      ++applied;
      log += (log.empty() ? "" : "; ") + std::string("garbage-options: ") + fields_log;
    }
  }
  out->description = log;
  return applied > 0;
}

}  // namespace gruwb::fuzz
