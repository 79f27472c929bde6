// libFuzzer target for the model reader (gruwb::Model::load).
//
// Model::load promises that everything reachable through a loaded Model can be used without
// further checks. So after a successful load this target walks every subgraph, tensor, operator,
// buffer, op code, metadata entry and signature, reads every byte the views point at, and follows
// every index the views hand out (op inputs/outputs, subgraph inputs/outputs, called subgraphs).
// Any index or span the validator let through wrongly then shows up as an ASan/UBSan report.
//
// Build: see tests/fuzz/CMakeLists.txt (clang only, -DGRUWB_FUZZ=ON).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "engine/model/model.h"
#include "engine/model/status.h"
#include "engine/model/tensor_type.h"

namespace {

// Everything read goes into this, so the compiler cannot drop the reads.
volatile uint64_t g_sink = 0;

void touch(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint64_t sum = 0;
  for (size_t i = 0; i < size; ++i) sum += bytes[i];
  g_sink = g_sink + sum;
}

void touch_string(const char* text) {
  // The views promise non-null, NUL-terminated names.
  touch(text, std::strlen(text));
}

template <typename T>
void touch_span(gruwb::Span<T> span) {
  touch(span.data, span.size * sizeof(T));
}

template <typename T>
void touch_vector(const flatbuffers::Vector<T>* vector) {
  if (vector != nullptr) touch(vector->data(), vector->size() * sizeof(T));
}

void walk_tensor(const gruwb::TensorView& tensor) {
  touch_string(tensor.name);
  touch_span(tensor.shape);
  touch_span(tensor.shape_signature);
  touch_span(tensor.data);
  touch_string(gruwb::tensor_type_name(tensor.type));
  uint64_t bytes = 0;
  if (gruwb::tensor_storage_bytes(tensor.type, tensor.element_count(), &bytes)) {
    g_sink = g_sink + bytes;
  }
  if (const gruwb::fb::QuantizationParameters* quantization = tensor.quantization) {
    touch_vector(quantization->min());
    touch_vector(quantization->max());
    touch_vector(quantization->scale());
    touch_vector(quantization->zero_point());
    g_sink = g_sink + static_cast<uint64_t>(quantization->quantized_dimension());
  }
}

// Follows a tensor index handed out by an op or a subgraph; -1 means "omitted".
void follow_tensor_index(const gruwb::SubgraphView& subgraph, int32_t index) {
  if (index < 0) return;
  walk_tensor(subgraph.tensor(index));
}

void walk_operator(const gruwb::SubgraphView& subgraph, const gruwb::OperatorView& op) {
  const gruwb::Model& model = *subgraph.model;
  touch_string(op.name());
  touch_string(op.custom_code);
  const char* name = gruwb::op_code_name(op.op_code);
  if (name != nullptr) touch_string(name);
  g_sink = g_sink + static_cast<uint64_t>(model.opcode(op.opcode_index));
  touch_string(model.custom_code(op.opcode_index));
  for (int32_t index : op.inputs) follow_tensor_index(subgraph, index);
  for (int32_t index : op.outputs) follow_tensor_index(subgraph, index);
  for (int32_t index : op.intermediates) follow_tensor_index(subgraph, index);
  touch_span(op.custom_options);

  int32_t called[2] = {-1, -1};
  const int called_count = gruwb::called_subgraphs(op, called);
  for (int i = 0; i < called_count; ++i) {
    const gruwb::SubgraphView callee = model.subgraph(called[i]);
    touch_string(callee.name);
  }

  // Unpacking decodes every field of the op, its builtin options union included, the way the
  // host writer reads it.
  std::unique_ptr<gruwb::fb::OperatorT> unpacked(op.table->UnPack());
  g_sink = g_sink + unpacked->inputs.size();
}

void walk_subgraph(const gruwb::SubgraphView& subgraph) {
  touch_string(subgraph.name);
  for (int32_t index : subgraph.inputs) follow_tensor_index(subgraph, index);
  for (int32_t index : subgraph.outputs) follow_tensor_index(subgraph, index);
  for (int i = 0; i < subgraph.tensor_count; ++i) walk_tensor(subgraph.tensor(i));
  for (int i = 0; i < subgraph.operator_count; ++i) walk_operator(subgraph, subgraph.op(i));
}

void walk_model(const gruwb::Model& model) {
  g_sink = g_sink + model.version();
  touch_string(model.description());
  touch_string(gruwb::model_format_name(model.format()));
  for (int i = 0; i < model.buffer_count(); ++i) {
    touch_span(model.buffer_data(static_cast<uint32_t>(i)));
  }
  for (int i = 0; i < model.opcode_count(); ++i) {
    g_sink = g_sink + static_cast<uint64_t>(model.opcode(static_cast<uint32_t>(i)));
    touch_string(model.custom_code(static_cast<uint32_t>(i)));
  }
  for (int i = 0; i < model.subgraph_count(); ++i) walk_subgraph(model.subgraph(i));
  for (int i = 0; i < model.metadata_count(); ++i) {
    const gruwb::MetadataView metadata = model.metadata(i);
    touch_string(metadata.name);
    touch_span(metadata.data);
  }
  for (int i = 0; i < model.signature_count(); ++i) {
    const gruwb::SignatureView signature = model.signature(i);
    touch_string(signature.key);
    for (int k = 0; k < signature.input_count(); ++k) touch_string(signature.input(k).name);
    for (int k = 0; k < signature.output_count(); ++k) touch_string(signature.output(k).name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Model::load wants 16-byte aligned bytes (as a file loader provides). An exact-size heap copy
  // also puts ASan's redzone right behind the last byte, so any over-read is caught.
  constexpr std::align_val_t kAlignment{16};
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> bytes(
      static_cast<uint8_t*>(::operator new(size == 0 ? 1 : size, kAlignment)),
      [](uint8_t* p) { ::operator delete (p, std::align_val_t{16}); });
  if (size != 0) std::memcpy(bytes.get(), data, size);

  gruwb::Model model;
  const gruwb::Status status = gruwb::Model::load(bytes.get(), size, &model);
  if (!status.ok()) {
    // Every failure must say what is wrong; an empty message is a bug worth a crash report.
    if (status.message()[0] == '\0') __builtin_trap();
    touch_string(status.message());
    touch_string(gruwb::status_code_name(status.code()));
    return 0;
  }
  walk_model(model);
  return 0;
}
