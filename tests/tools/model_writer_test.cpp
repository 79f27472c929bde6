// Writer round trips on every real model in ../shared, and the writer's own
// rules (buffer 0, alignment, op code encoding, format limits).

#include "engine/tools/model_writer.h"

#include <flatbuffers/minireflect.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "engine/tools/model_file.h"
#include "tests/engine/test_models.h"

namespace gruwb::tools {
namespace {

using test::all_test_models;
using test::TestModel;

// Mini-reflection text with floats in exact hex form ("%a"), so values that
// agree only in their first six digits do not compare equal.
struct ExactTextVisitor : flatbuffers::ToStringVisitor {
  ExactTextVisitor() : ToStringVisitor("\n", false, "", true) {}
  void Float(float x) override { Exact(static_cast<double>(x)); }
  void Double(double x) override { Exact(x); }
  void Exact(double x) {
    char text[40];
    std::snprintf(text, sizeof text, "%a", x);
    s += text;
  }
};

// Every field of a ModelDef that our schema declares, one per line. The
// ModelDef is packed by flatbuffers' generated object API (not by our writer)
// with defaults forced, so a field set to its default and an absent field read
// the same. Buffer bytes are left out: they are compared byte for byte.
std::string canonical_text(ModelDef def) {
  for (auto& buffer : def.buffers) buffer->data.clear();
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);
  fbb.Finish(fb::Model::Pack(fbb, &def));
  ExactTextVisitor visitor;
  flatbuffers::IterateFlatBuffer(fbb.GetBufferPointer(), fb::ModelTypeTable(), &visitor);
  return visitor.s;
}

// Equal texts, or the first differing line with a little context.
::testing::AssertionResult same_text(const std::string& expected, const std::string& actual) {
  if (expected == actual) return ::testing::AssertionSuccess();
  std::istringstream a(expected), b(actual);
  std::string line_a, line_b, previous;
  for (int line = 1;; ++line) {
    bool more_a = static_cast<bool>(std::getline(a, line_a));
    bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) break;
    if (!more_a || !more_b || line_a != line_b) {
      return ::testing::AssertionFailure() << "line " << line << " differs (after '" << previous
                                           << "'):\n  expected: " << (more_a ? line_a : "<end>")
                                           << "\n  actual:   " << (more_b ? line_b : "<end>");
    }
    previous = line_a;
  }
  return ::testing::AssertionFailure() << "texts differ";
}

template <typename T>
std::vector<T> to_vector(Span<T> span) {
  return std::vector<T>(span.begin(), span.end());
}

// The graph as the reader exposes it: every subgraph, tensor (incl. bytes),
// operator (incl. raw options), metadata entry and signature.
void expect_same_graph(const Model& expected, const Model& actual) {
  ASSERT_EQ(expected.subgraph_count(), actual.subgraph_count());
  EXPECT_STREQ(expected.description(), actual.description());
  for (int s = 0; s < expected.subgraph_count(); ++s) {
    SCOPED_TRACE("subgraph " + std::to_string(s));
    SubgraphView a = expected.subgraph(s), b = actual.subgraph(s);
    EXPECT_STREQ(a.name, b.name);
    EXPECT_EQ(to_vector(a.inputs), to_vector(b.inputs));
    EXPECT_EQ(to_vector(a.outputs), to_vector(b.outputs));
    ASSERT_EQ(a.tensor_count, b.tensor_count);
    ASSERT_EQ(a.operator_count, b.operator_count);
    for (int t = 0; t < a.tensor_count; ++t) {
      SCOPED_TRACE("tensor " + std::to_string(t));
      TensorView x = a.tensor(t), y = b.tensor(t);
      EXPECT_STREQ(x.name, y.name);
      EXPECT_EQ(to_vector(x.shape), to_vector(y.shape));
      EXPECT_EQ(to_vector(x.shape_signature), to_vector(y.shape_signature));
      EXPECT_EQ(x.type, y.type);
      EXPECT_EQ(x.buffer, y.buffer);
      EXPECT_EQ(to_vector(x.data), to_vector(y.data));
      EXPECT_EQ(x.is_variable, y.is_variable);
      EXPECT_EQ(x.is_sparse, y.is_sparse);
      EXPECT_EQ(x.quantization == nullptr, y.quantization == nullptr);
    }
    for (int o = 0; o < a.operator_count; ++o) {
      SCOPED_TRACE("op " + std::to_string(o));
      OperatorView x = a.op(o), y = b.op(o);
      EXPECT_EQ(x.op_code, y.op_code);
      EXPECT_STREQ(x.name(), y.name());
      EXPECT_EQ(x.opcode_index, y.opcode_index);
      EXPECT_EQ(x.op_version, y.op_version);
      EXPECT_STREQ(x.custom_code, y.custom_code);
      EXPECT_EQ(to_vector(x.inputs), to_vector(y.inputs));  // -1 stays -1
      EXPECT_EQ(to_vector(x.outputs), to_vector(y.outputs));
      EXPECT_EQ(to_vector(x.intermediates), to_vector(y.intermediates));
      EXPECT_EQ(x.options_type, y.options_type);
      EXPECT_EQ(to_vector(x.custom_options), to_vector(y.custom_options));
      int32_t callees_x[2], callees_y[2];
      int n = called_subgraphs(x, callees_x);
      ASSERT_EQ(n, called_subgraphs(y, callees_y));
      for (int i = 0; i < n; ++i) EXPECT_EQ(callees_x[i], callees_y[i]);
    }
  }
  ASSERT_EQ(expected.opcode_count(), actual.opcode_count());
  for (int i = 0; i < expected.opcode_count(); ++i) {
    EXPECT_EQ(expected.opcode(i), actual.opcode(i)) << "operator code " << i;
    EXPECT_STREQ(expected.custom_code(i), actual.custom_code(i)) << "operator code " << i;
  }
  ASSERT_EQ(expected.buffer_count(), actual.buffer_count());
  for (int i = 0; i < expected.buffer_count(); ++i) {
    EXPECT_EQ(to_vector(expected.buffer_data(i)), to_vector(actual.buffer_data(i)))
        << "buffer " << i;
  }
  ASSERT_EQ(expected.metadata_count(), actual.metadata_count());
  for (int i = 0; i < expected.metadata_count(); ++i) {
    EXPECT_STREQ(expected.metadata(i).name, actual.metadata(i).name);
    EXPECT_EQ(expected.metadata(i).buffer, actual.metadata(i).buffer);
    EXPECT_EQ(to_vector(expected.metadata(i).data), to_vector(actual.metadata(i).data));
  }
  ASSERT_EQ(expected.signature_count(), actual.signature_count());
  for (int i = 0; i < expected.signature_count(); ++i) {
    SignatureView x = expected.signature(i), y = actual.signature(i);
    EXPECT_STREQ(x.key, y.key);
    EXPECT_EQ(x.subgraph_index, y.subgraph_index);
    ASSERT_EQ(x.input_count(), y.input_count());
    ASSERT_EQ(x.output_count(), y.output_count());
    for (int m = 0; m < x.input_count(); ++m) {
      EXPECT_STREQ(x.input(m).name, y.input(m).name);
      EXPECT_EQ(x.input(m).tensor_index, y.input(m).tensor_index);
    }
    for (int m = 0; m < x.output_count(); ++m) {
      EXPECT_STREQ(x.output(m).name, y.output(m).name);
      EXPECT_EQ(x.output(m).tensor_index, y.output(m).tensor_index);
    }
  }
}

// What every file from our writer must satisfy, checked on the raw bytes.
void expect_writer_layout(const Model& written, ModelFormat format) {
  const uint8_t* file = written.bytes();
  EXPECT_EQ(0, std::memcmp(file + 4, format == ModelFormat::kCircle ? "CIR0" : "TFL3", 4));
  EXPECT_EQ(written.format(), format);
  EXPECT_EQ(written.version(), format == ModelFormat::kCircle ? 0u : 3u);
  ASSERT_GE(written.buffer_count(), 1);
  EXPECT_TRUE(written.buffer_data(0).empty()) << "buffer 0 must be the empty sentinel";
  for (int i = 0; i < written.buffer_count(); ++i) {
    Span<uint8_t> data = written.buffer_data(i);
    if (data.empty()) continue;
    EXPECT_EQ((data.data - file) % 16, 0) << "buffer " << i << " (" << data.size
                                          << " bytes) starts at file offset " << (data.data - file);
  }
  // Writer rule: deprecated = code < 127 ? code : 127 (signed byte), builtin = code.
  auto codes = written.table()->operator_codes();
  for (int i = 0; i < written.opcode_count(); ++i) {
    const fb::OperatorCode* code = codes->Get(i);
    int32_t decoded = written.opcode(i);
    int32_t expected_deprecated = decoded < 127 ? decoded : 127;
    EXPECT_EQ(code->deprecated_builtin_code(), expected_deprecated) << "operator code " << i;
    EXPECT_EQ(static_cast<int32_t>(code->builtin_code()), decoded) << "operator code " << i;
  }
}

bool load_ok(const std::string& path, LoadedModel* out) {
  std::string error;
  bool ok = load_model_file(path, out, &error);
  EXPECT_TRUE(ok) << error;
  return ok;
}

ModelDef unpacked(const Model& model) {
  ModelDef def;
  std::string error;
  EXPECT_TRUE(unpack_model(model, &def, &error)) << error;
  return def;
}

// Writes `def` and loads the result; fails the test on either error.
bool write_and_load(const ModelDef& def, ModelFormat format, const std::string& label,
                    LoadedModel* out) {
  std::vector<uint8_t> bytes;
  std::string error;
  bool written = write_model(def, format, &bytes, &error);
  EXPECT_TRUE(written) << error;
  if (!written) return false;
  bool loaded = load_model_bytes(std::move(bytes), label, out, &error);
  EXPECT_TRUE(loaded) << error;
  return loaded;
}

class RoundTrip : public ::testing::TestWithParam<TestModel> {};

TEST_P(RoundTrip, SameFormatGivesSameGraphBytesAndFields) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path(GetParam()), &original));
  ModelFormat format = original.model.format();
  EXPECT_EQ(format, test::is_circle(GetParam()) ? ModelFormat::kCircle : ModelFormat::kTflite);
  ModelDef def = unpacked(original.model);

  LoadedModel written;
  ASSERT_TRUE(write_and_load(def, format, "written", &written));
  expect_same_graph(original.model, written.model);
  expect_writer_layout(written.model, format);
  EXPECT_TRUE(same_text(canonical_text(def), canonical_text(unpacked(written.model))));

  // Writing is deterministic: a second round gives the very same bytes.
  std::vector<uint8_t> again;
  std::string error;
  ASSERT_TRUE(write_model(unpacked(written.model), format, &again, &error)) << error;
  EXPECT_TRUE(again == written.bytes) << "second write differs from the first";
}

TEST_P(RoundTrip, ThroughTheOtherFormatAndBack) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path(GetParam()), &original));
  ModelFormat format = original.model.format();
  ModelFormat other = format == ModelFormat::kCircle ? ModelFormat::kTflite : ModelFormat::kCircle;
  ModelDef def = unpacked(original.model);

  bool circle_only = false;
  for (int i = 0; i < original.model.opcode_count(); ++i) {
    circle_only = circle_only || original.model.opcode(i) < 0;
  }
  if (circle_only) {
    // A TFLite reader cannot run Circle's own ops: the writer must refuse.
    std::vector<uint8_t> bytes;
    std::string error;
    EXPECT_FALSE(write_model(def, other, &bytes, &error));
    EXPECT_NE(error.find("Circle-only op"), std::string::npos) << error;
    return;
  }
  LoadedModel converted;
  ASSERT_TRUE(write_and_load(def, other, "converted", &converted));
  expect_same_graph(original.model, converted.model);
  expect_writer_layout(converted.model, other);

  LoadedModel back;
  ASSERT_TRUE(write_and_load(unpacked(converted.model), format, "back", &back));
  expect_same_graph(original.model, back.model);
  expect_writer_layout(back.model, format);
  ModelDef back_def = unpacked(back.model);
  EXPECT_TRUE(same_text(canonical_text(def), canonical_text(back_def)));
}

INSTANTIATE_TEST_SUITE_P(AllModels, RoundTrip, ::testing::ValuesIn(all_test_models()),
                         [](const auto& info) { return test::test_name_for(info.param); });

TEST(TestModels, ListMatchesTheSharedFolders) {
  // The explicit list must name every model there is, and only those.
  size_t found = 0;
  for (const char* folder : {"tflite", "onert-micro"}) {
    for (const auto& entry : std::filesystem::directory_iterator(test::models_dir(folder))) {
      std::string extension = entry.path().extension().string();
      if (extension != ".tflite" && extension != ".circle") continue;
      ++found;
      std::string file = entry.path().filename().string();
      EXPECT_EQ(test::model_path(file), entry.path().string()) << file << " is not listed";
    }
  }
  EXPECT_EQ(found, 19u);
  EXPECT_EQ(all_test_models().size(), 19u);
}

// --- op codes --------------------------------------------------------------

TEST(WriterOpCodes, CircleGruIsStoredAsTheSignedByte0xFB) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path("gru_float.circle"), &original));
  LoadedModel written;
  ASSERT_TRUE(write_and_load(unpacked(original.model), ModelFormat::kCircle, "gru", &written));
  int gru_codes = 0;
  for (int i = 0; i < written.model.opcode_count(); ++i) {
    if (written.model.opcode(i) != static_cast<int32_t>(fb::BuiltinOperator::GRU)) continue;
    ++gru_codes;
    const fb::OperatorCode* code = written.model.table()->operator_codes()->Get(i);
    // The stored byte itself, read through the table's vtable (field 0).
    const uint8_t* stored = reinterpret_cast<const flatbuffers::Table*>(code)->GetAddressOf(
        flatbuffers::FieldIndexToOffset(0));
    ASSERT_NE(stored, nullptr) << "deprecated_builtin_code must be written for GRU";
    EXPECT_EQ(*stored, 0xFB);
    EXPECT_EQ(code->builtin_code(), fb::BuiltinOperator::GRU);
  }
  EXPECT_EQ(gru_codes, 1);
  EXPECT_EQ(written.model.main_subgraph().op(0).op_code, -5);
}

TEST(WriterOpCodes, LegacyCodesAreRewrittenWithBuiltinCodeSet) {
  LoadedModel original;
  ASSERT_TRUE(
      load_ok(test::model_path("tflm_micro_speech_quantized_legacy_opcodes.tflite"), &original));
  for (int i = 0; i < original.model.opcode_count(); ++i) {
    ASSERT_EQ(original.model.table()->operator_codes()->Get(i)->builtin_code(),
              fb::BuiltinOperator::ADD)
        << "fixture changed: expected only deprecated_builtin_code set";
  }
  LoadedModel written;
  ASSERT_TRUE(write_and_load(unpacked(original.model), ModelFormat::kTflite, "speech", &written));
  std::vector<fb::BuiltinOperator> codes;
  for (int i = 0; i < written.model.opcode_count(); ++i) {
    codes.push_back(written.model.table()->operator_codes()->Get(i)->builtin_code());
  }
  EXPECT_EQ(codes, (std::vector<fb::BuiltinOperator>{
                       fb::BuiltinOperator::DEPTHWISE_CONV_2D, fb::BuiltinOperator::FULLY_CONNECTED,
                       fb::BuiltinOperator::RESHAPE, fb::BuiltinOperator::SOFTMAX}));
}

TEST(WriterOpCodes, CodesAbove127UseThePlaceholderByte) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path("litert_call_once_mul.tflite"), &original));
  for (ModelFormat format : {ModelFormat::kTflite, ModelFormat::kCircle}) {
    LoadedModel written;
    ASSERT_TRUE(write_and_load(unpacked(original.model), format, "call_once", &written));
    const fb::OperatorCode* call_once = written.model.table()->operator_codes()->Get(0);
    EXPECT_EQ(call_once->deprecated_builtin_code(), 127);
    EXPECT_EQ(call_once->builtin_code(), fb::BuiltinOperator::CALL_ONCE);
    EXPECT_EQ(written.model.main_subgraph().op(0).op_code, 129);
  }
}

TEST(WriterOpCodes, LegacyModelDefFormReadsTheDeprecatedCode) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path("tflm_hello_world_float.tflite"), &original));
  ModelDef def = unpacked(original.model);
  def.operator_codes[0]->builtin_code = fb::BuiltinOperator::ADD;  // 0: "not set"
  def.operator_codes[0]->deprecated_builtin_code = 9;
  LoadedModel written;
  ASSERT_TRUE(write_and_load(def, ModelFormat::kTflite, "legacy", &written));
  EXPECT_EQ(written.model.main_subgraph().op(0).op_code,
            static_cast<int32_t>(fb::BuiltinOperator::FULLY_CONNECTED));
}

// --- the writer's refusals ----------------------------------------------------

// A one-tensor model built by hand: input = output = tensor 0 'x' [1] float32.
ModelDef tiny_model() {
  ModelDef def;
  auto sg = std::make_unique<fb::SubGraphT>();
  sg->name = "main";
  auto x = std::make_unique<fb::TensorT>();
  x->name = "x";
  x->shape = {1};
  sg->tensors.push_back(std::move(x));
  sg->inputs = {0};
  sg->outputs = {0};
  def.subgraphs.push_back(std::move(sg));
  return def;
}

TEST(WriterBuffers, MissingSentinelIsAdded) {
  LoadedModel written;
  ASSERT_TRUE(write_and_load(tiny_model(), ModelFormat::kTflite, "tiny", &written));
  ASSERT_EQ(written.model.buffer_count(), 1);
  EXPECT_TRUE(written.model.buffer_data(0).empty());
  EXPECT_EQ(written.model.main_subgraph().tensor(0).buffer, 0u);
}

TEST(WriterBuffers, DataInBufferZeroIsRefused) {
  ModelDef def = tiny_model();
  auto buffer = std::make_unique<fb::BufferT>();
  buffer->data = {1, 2, 3, 4};
  def.buffers.push_back(std::move(buffer));
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(write_model(def, ModelFormat::kTflite, &bytes, &error));
  EXPECT_NE(error.find("buffer 0 must be the empty sentinel but holds 4 bytes"), std::string::npos)
      << error;
}

TEST(WriterBuffers, ExternalBufferIsRefused) {
  ModelDef def = tiny_model();
  def.buffers.push_back(std::make_unique<fb::BufferT>());
  def.buffers.push_back(std::make_unique<fb::BufferT>());
  def.buffers[1]->offset = 4096;
  def.buffers[1]->size = 16;
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(write_model(def, ModelFormat::kTflite, &bytes, &error));
  EXPECT_NE(error.find("buffer 1 points outside the flatbuffer (offset 4096, size 16)"),
            std::string::npos)
      << error;
}

TEST(WriterBuffers, OddSizedBuffersAreAllAligned) {
  // Sizes 1..33 force every possible misalignment of the next vector.
  ModelDef def = tiny_model();
  def.buffers.push_back(std::make_unique<fb::BufferT>());
  for (uint8_t size = 1; size <= 33; ++size) {
    auto buffer = std::make_unique<fb::BufferT>();
    buffer->data.assign(size, size);
    def.buffers.push_back(std::move(buffer));
    auto tensor = std::make_unique<fb::TensorT>();
    tensor->name = "c" + std::to_string(size);
    tensor->type = fb::TensorType::INT8;
    tensor->shape = {size};
    tensor->buffer = static_cast<uint32_t>(def.buffers.size() - 1);
    def.subgraphs[0]->tensors.push_back(std::move(tensor));
  }
  for (ModelFormat format : {ModelFormat::kTflite, ModelFormat::kCircle}) {
    LoadedModel written;
    ASSERT_TRUE(write_and_load(def, format, "odd", &written));
    expect_writer_layout(written.model, format);
    ASSERT_EQ(written.model.buffer_count(), 34);
    for (int i = 1; i < 34; ++i) {
      EXPECT_EQ(written.model.buffer_data(i).size, static_cast<size_t>(i));
      EXPECT_EQ(written.model.buffer_data(i)[0], i);
    }
  }
}

TEST(WriterFormats, CircleGruCannotBeWrittenAsTflite) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path("gru_float.circle"), &original));
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(write_model(unpacked(original.model), ModelFormat::kTflite, &bytes, &error));
  EXPECT_NE(error.find("operator code 0: GRU (-5) is a Circle-only op"), std::string::npos)
      << error;
}

TEST(WriterFormats, TensorTypesOfTheOtherFormatAreRefused) {
  ModelDef def = tiny_model();
  def.subgraphs[0]->tensors[0]->type = fb::TensorType::UINT4;  // TFLite 20; Circle has -1
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(write_model(def, ModelFormat::kCircle, &bytes, &error));
  EXPECT_NE(error.find("subgraph 0 'main' tensor 0 'x': type UINT4 (20) does not exist in circle"),
            std::string::npos)
      << error;
  def.subgraphs[0]->tensors[0]->type = fb::TensorType::CIRCLE_UINT4;
  EXPECT_FALSE(write_model(def, ModelFormat::kTflite, &bytes, &error));
  EXPECT_NE(error.find("tensor 0 'x': type"), std::string::npos) << error;
  EXPECT_NE(error.find("(-1) does not exist in tflite"), std::string::npos) << error;
  EXPECT_TRUE(write_model(def, ModelFormat::kCircle, &bytes, &error)) << error;
}

TEST(WriterFormats, NullEntriesAreRefusedNotDereferenced) {
  ModelDef def = tiny_model();
  def.subgraphs[0]->operators.emplace_back();  // null
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(write_model(def, ModelFormat::kTflite, &bytes, &error));
  EXPECT_NE(error.find("subgraph 0 'main' op 0 is missing"), std::string::npos) << error;
}

// --- every field of the object API survives -----------------------------------

TEST(WriterFields, RarelyUsedFieldsSurviveBothFormats) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path("tflm_hello_world_float.tflite"), &original));
  ModelDef def = unpacked(original.model);
  fb::SubGraphT& sg = *def.subgraphs[0];

  // An extra tensor carrying everything the real fixtures lack.
  auto extra = std::make_unique<fb::TensorT>();
  extra->name = "extra";
  extra->type = fb::TensorType::INT8;
  extra->shape = {4, 4};
  extra->shape_signature = {-1, 4};
  extra->is_variable = true;
  extra->has_rank = true;
  extra->quantization = std::make_unique<fb::QuantizationParametersT>();
  extra->quantization->scale = {0.5f, 0.25f, 0.1f, 1e-7f};  // per-axis
  extra->quantization->zero_point = {0, -1, 2, -128};
  extra->quantization->min = {-1.5f};
  extra->quantization->max = {2.5f};
  extra->quantization->quantized_dimension = 1;
  fb::CustomQuantizationT custom_quantization;
  custom_quantization.custom = {7, 8, 9};
  extra->quantization->details.Set(std::move(custom_quantization));
  // No sparsity: the reader refuses sparse tensors (broken_models_test), so none round-trips.
  auto variant = std::make_unique<fb::VariantSubTypeT>();
  variant->shape = {2};
  variant->type = fb::TensorType::FLOAT32;
  variant->has_rank = true;
  extra->variant_tensors.push_back(std::move(variant));
  int extra_index = static_cast<int>(sg.tensors.size());
  sg.tensors.push_back(std::move(extra));

  fb::OperatorT& op = *sg.operators[0];
  op.intermediates = {extra_index};
  op.custom_options = {0x01, 0x02, 0xFF};
  op.mutating_variable_inputs = {false, true, false};
  op.builtin_options.AsFullyConnectedOptions()->keep_num_dims = true;
  op.builtin_options.AsFullyConnectedOptions()->quantized_bias_type = fb::TensorType::INT32;
  def.metadata_buffer = {0, 1};
  auto signature = std::make_unique<fb::SignatureDefT>();
  signature->signature_key = "extra_signature";
  signature->subgraph_index = 0;
  auto map = std::make_unique<fb::TensorMapT>();
  map->name = "extra_in";
  map->tensor_index = static_cast<uint32_t>(extra_index);
  signature->inputs.push_back(std::move(map));
  def.signature_defs.push_back(std::move(signature));
  def.description = "edited by the writer test";

  std::string expected = canonical_text(def);
  for (ModelFormat format : {ModelFormat::kTflite, ModelFormat::kCircle}) {
    LoadedModel written;
    ASSERT_TRUE(write_and_load(def, format, "fields", &written));
    ModelDef back = unpacked(written.model);
    back.version = def.version;  // the writer stamps the format's version
    EXPECT_TRUE(same_text(expected, canonical_text(back)));
    TensorView tensor = written.model.main_subgraph().tensor(extra_index);
    ASSERT_NE(tensor.quantization, nullptr);
    ASSERT_NE(tensor.quantization->scale(), nullptr);
    EXPECT_EQ(tensor.quantization->scale()->size(), 4u);
    EXPECT_EQ(tensor.quantization->scale()->Get(3), 1e-7f);
    EXPECT_TRUE(tensor.is_variable);
    EXPECT_EQ(to_vector(tensor.shape_signature), (std::vector<int32_t>{-1, 4}));
  }
}

// --- unpack refuses what it cannot carry --------------------------------------

TEST(Unpack, OptionsOfAKindOutsideOurSchemaAreRefused) {
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(read_file_bytes(test::model_path("tflm_hello_world_float.tflite"), &bytes, &error));
  // Relabel op 0's FullyConnectedOptions as union slot 3 (LSHProjectionOptions
  // in TFLite), a table our schema does not model.
  auto model = const_cast<fb::Model*>(fb::GetModel(bytes.data()));
  auto op = const_cast<fb::Operator*>(model->subgraphs()->Get(0)->operators()->Get(0));
  ASSERT_TRUE(reinterpret_cast<flatbuffers::Table*>(op)->SetField<uint8_t>(
      flatbuffers::FieldIndexToOffset(3), 3, 0));
  LoadedModel loaded;
  ASSERT_TRUE(load_model_bytes(std::move(bytes), "relabelled", &loaded, &error)) << error;
  ModelDef def;
  EXPECT_FALSE(unpack_model(loaded.model, &def, &error));
  EXPECT_NE(error.find("subgraph 0 'main' op 0 (FULLY_CONNECTED): builtin options of union type 3"),
            std::string::npos)
      << error;
}

TEST(Unpack, TensorFieldsOfANewerSchemaAreRefused) {
  // A tensor with field 10 set (Circle compression_type / TFLite
  // external_buffer), which ModelT has no member for.
  flatbuffers::FlatBufferBuilder fbb;
  auto name = fbb.CreateString("compressed");
  fb::TensorBuilder tensor(fbb);
  tensor.add_name(name);
  tensor.fbb_.AddElement<uint8_t>(flatbuffers::FieldIndexToOffset(10), 1, 0);
  auto tensors = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::Tensor>>{tensor.Finish()});
  auto subgraph = fb::CreateSubGraph(fbb, tensors, fbb.CreateVector(std::vector<int32_t>{0}),
                                     fbb.CreateVector(std::vector<int32_t>{0}));
  auto subgraphs = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::SubGraph>>{subgraph});
  auto buffers =
      fbb.CreateVector(std::vector<flatbuffers::Offset<fb::Buffer>>{fb::CreateBuffer(fbb)});
  fbb.Finish(fb::CreateModel(fbb, 0, 0, subgraphs, 0, buffers), "CIR0");
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  LoadedModel loaded;
  std::string error;
  ASSERT_TRUE(load_model_bytes(std::move(bytes), "newer", &loaded, &error)) << error;
  ModelDef def;
  EXPECT_FALSE(unpack_model(loaded.model, &def, &error));
  EXPECT_NE(error.find("subgraph 0 '' tensor 0 'compressed': has field 10"), std::string::npos)
      << error;
}

// --- saving --------------------------------------------------------------------

class SaveModel : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gruwb_writer_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& file : created_) std::remove(file.c_str());
    rmdir(dir_.c_str());
  }
  std::string path(const std::string& name) {
    created_.push_back(dir_ + "/" + name);
    return created_.back();
  }
  std::string dir_;
  std::vector<std::string> created_;
};

TEST_F(SaveModel, WritesAFileThatLoadsAgain) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path("litert_nested_while.tflite"), &original));
  std::string target = path("nested.circle");
  std::string error;
  ASSERT_TRUE(save_model(unpacked(original.model), format_for_path(target), target, &error))
      << error;
  LoadedModel saved;
  ASSERT_TRUE(load_ok(target, &saved));
  EXPECT_EQ(saved.model.format(), ModelFormat::kCircle);
  expect_same_graph(original.model, saved.model);
}

TEST_F(SaveModel, RefusesAModelOurReaderWouldReject) {
  LoadedModel original;
  ASSERT_TRUE(load_ok(test::model_path("tflm_hello_world_float.tflite"), &original));
  ModelDef def = unpacked(original.model);
  def.subgraphs[0]->operators[1]->inputs[0] = 99;
  std::string target = path("broken.tflite");
  std::string error;
  EXPECT_FALSE(save_model(def, ModelFormat::kTflite, target, &error));
  EXPECT_EQ(error.rfind(target + ": not saved", 0), 0u) << error;
  EXPECT_NE(error.find("op 1 (FULLY_CONNECTED): input 0 is tensor 99"), std::string::npos) << error;
  EXPECT_NE(access(target.c_str(), F_OK), 0) << "nothing may be written";
}

TEST(FormatForPath, CircleExtensionOnly) {
  EXPECT_EQ(format_for_path("a/b/model.circle"), ModelFormat::kCircle);
  EXPECT_EQ(format_for_path("MODEL.CIRCLE"), ModelFormat::kCircle);
  EXPECT_EQ(format_for_path("model.tflite"), ModelFormat::kTflite);
  EXPECT_EQ(format_for_path("model.circle.bak"), ModelFormat::kTflite);
  EXPECT_EQ(format_for_path("circle"), ModelFormat::kTflite);
  EXPECT_EQ(format_for_path(""), ModelFormat::kTflite);
}

// A save killed before its rename left "<path>.tmp-<pid>" behind for good; the next save to the
// same path removes those of processes that are gone, and only those.
TEST(AtomicSave, StaleTemporariesOfDeadProcessesAreRemovedByTheNextSave) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gruwb_atomic_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  const std::string path = (dir / "model.tflite").string();
  const std::string stale = path + ".tmp-" + std::to_string(dead);
  const std::string alive = path + ".tmp-" + std::to_string(getppid());  // a running process
  const std::string other = (dir / "other.tflite").string() + ".tmp-" + std::to_string(dead);
  for (const std::string& file : {stale, alive, other}) {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  std::string error;
  ASSERT_TRUE(tools::write_file_atomically(path, {1, 2, 3}, &error)) << error;
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_TRUE(std::filesystem::exists(other));  // another file's temporaries are not ours
  EXPECT_EQ(std::filesystem::file_size(path), 3u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gruwb::tools
