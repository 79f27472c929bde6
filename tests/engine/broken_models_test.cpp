// A corpus of broken models, made here from the real files in ../shared:
// semantic breakage through the writer (unpack, edit the ModelT, write) and
// corruption through raw byte edits. Each case must give its specific
// StatusCode and a message that names the culprit; none may crash (run this
// under ASan/UBSan too).

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <map>

#include "engine/model/model.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_writer.h"
#include "tests/engine/test_models.h"

namespace gruwb {
namespace {

using tools::ModelDef;

std::vector<uint8_t> file_bytes(const std::string& file) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(tools::read_file_bytes(test::model_path(file), &bytes, &error)) << error;
  return bytes;
}

// Loads a private copy of exactly `size` bytes, so ASan sees any read past
// the end of the file.
Status load_status(const uint8_t* data, size_t size) {
  std::vector<uint8_t> copy(data, data + size);
  Model model;
  return Model::load(copy.empty() ? nullptr : copy.data(), copy.size(), &model);
}

Status load_status(const std::vector<uint8_t>& bytes) {
  return load_status(bytes.data(), bytes.size());
}

::testing::AssertionResult fails_with(const std::vector<uint8_t>& bytes, StatusCode code,
                                      const std::string& culprit) {
  Status status = load_status(bytes);
  std::string message = status.message();
  if (status.ok()) return ::testing::AssertionFailure() << "loaded, expected an error";
  if (status.code() != code || message.find(culprit) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "got " << status_code_name(status.code()) << ": '" << message << "'; expected "
           << status_code_name(code) << " naming '" << culprit << "'";
  }
  return ::testing::AssertionSuccess() << message;
}

// `file` unpacked, edited, and written back in its own format.
std::vector<uint8_t> edited(const std::string& file, const std::function<void(ModelDef&)>& edit) {
  tools::LoadedModel original;
  std::string error;
  EXPECT_TRUE(tools::load_model_file(test::model_path(file), &original, &error)) << error;
  ModelDef def;
  EXPECT_TRUE(tools::unpack_model(original.model, &def, &error)) << error;
  edit(def);
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(tools::write_model(def, original.model.format(), &bytes, &error)) << error;
  return bytes;
}

constexpr char kHelloWorld[] = "tflm_hello_world_float.tflite";  // main: 10 tensors, 3 FC
constexpr char kWhile[] = "litert_multi_subgraphs_while.tflite";
constexpr char kNestedWhile[] = "litert_nested_while.tflite";  // 5 subgraphs, 1 value carried
constexpr char kCallOnce[] = "litert_call_once_mul.tflite";
constexpr char kCircleWhile[] = "one_vscode_while_000.circle";

fb::SubGraphT& main_of(ModelDef& def) { return *def.subgraphs[0]; }

// --- not a model at all --------------------------------------------------------

TEST(NotAModel, ZeroLengthFile) { EXPECT_TRUE(fails_with({}, StatusCode::kNotAModel, "empty")); }

TEST(NotAModel, ZeroLengthFileOnDiskNamesThePath) {
  char path[] = "/tmp/gruwb_empty_XXXXXX.tflite";
  int fd = mkstemps(path, 7);
  ASSERT_GE(fd, 0);
  close(fd);
  tools::LoadedModel model;
  std::string error;
  EXPECT_FALSE(tools::load_model_file(path, &model, &error));
  unlink(path);
  EXPECT_EQ(error.rfind(std::string(path) + ":", 0), 0u) << error;
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
}

// A real 1x1 PNG image (signature, IHDR, IDAT, IEND).
const std::vector<uint8_t> kPng = {
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00,
    0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78,
    0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0, 0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99,
    0x3D, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82};

TEST(NotAModel, PngRenamedTflite) {
  EXPECT_TRUE(fails_with(kPng, StatusCode::kNotAModel, "PNG"));
  char path[] = "/tmp/gruwb_picture_XXXXXX.tflite";
  int fd = mkstemps(path, 7);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, kPng.data(), kPng.size()), static_cast<ssize_t>(kPng.size()));
  close(fd);
  tools::LoadedModel model;
  std::string error;
  EXPECT_FALSE(tools::load_model_file(path, &model, &error));
  unlink(path);
  EXPECT_EQ(error.rfind(std::string(path) + ":", 0), 0u) << error;
  EXPECT_NE(error.find("PNG"), std::string::npos) << error;
}

TEST(NotAModel, WrongIdentifierIsShown) {
  std::vector<uint8_t> bytes = file_bytes(kHelloWorld);
  std::memcpy(bytes.data() + 4, "TFL2", 4);
  EXPECT_TRUE(fails_with(bytes, StatusCode::kNotAModel, "'TFL2'"));
  std::memcpy(bytes.data() + 4, "\x01\x02PK", 4);
  EXPECT_TRUE(fails_with(bytes, StatusCode::kNotAModel, "'\\x01\\x02PK'"));
}

TEST(NotAModel, TextFile) {
  std::string text = "{\"version\": 3, \"subgraphs\": []}\n";
  EXPECT_TRUE(fails_with(std::vector<uint8_t>(text.begin(), text.end()), StatusCode::kNotAModel,
                         "identifier"));
}

TEST(NotAModel, TooShortForAHeader) {
  EXPECT_TRUE(fails_with({0x1c, 0, 0, 0, 'T'}, StatusCode::kNotAModel, "only 5 bytes"));
}

// --- truncated and flipped -------------------------------------------------------

// What Model::load promises for a model it accepts: everything reachable is in
// range. Checked independently here, so a flip that slips past validation
// fails the test (and ASan catches any read outside the file).
void expect_safe_to_use(const Model& model) {
  auto in_range = [](int32_t index, int count) { return index >= 0 && index < count; };
  for (int s = 0; s < model.subgraph_count(); ++s) {
    SubgraphView sg = model.subgraph(s);
    for (int32_t t : sg.inputs) ASSERT_TRUE(in_range(t, sg.tensor_count));
    for (int32_t t : sg.outputs) ASSERT_TRUE(in_range(t, sg.tensor_count));
    for (int t = 0; t < sg.tensor_count; ++t) {
      TensorView tensor = sg.tensor(t);
      EXPECT_LT(std::strlen(tensor.name), size_t{1} << 20);
      ASSERT_LE(tensor.shape.size, static_cast<size_t>(kMaxRank));
      for (int32_t dim : tensor.shape) ASSERT_TRUE(dim >= 0 && dim <= kMaxDimension);
      ASSERT_TRUE(model.buffer_count() == 0 || tensor.buffer < uint32_t(model.buffer_count()));
      uint64_t needed = 0;
      if (!tensor.data.empty() && !tensor.is_sparse &&
          tensor_storage_bytes(tensor.type, tensor.element_count(), &needed)) {
        ASSERT_EQ(needed, tensor.data.size);
      }
      volatile uint8_t sink = 0;
      for (uint8_t byte : tensor.data) sink = sink ^ byte;  // every data byte is readable
      (void)sink;
    }
    for (int o = 0; o < sg.operator_count; ++o) {
      OperatorView op = sg.op(o);
      ASSERT_TRUE(in_range(static_cast<int32_t>(op.opcode_index), model.opcode_count()));
      EXPECT_NE(op.name(), nullptr);
      for (int32_t t : op.inputs) ASSERT_TRUE(t == -1 || in_range(t, sg.tensor_count));
      for (int32_t t : op.outputs) ASSERT_TRUE(t == -1 || in_range(t, sg.tensor_count));
      for (int32_t t : op.intermediates) ASSERT_TRUE(in_range(t, sg.tensor_count));
      int32_t callees[2];
      int n = called_subgraphs(op, callees);
      for (int i = 0; i < n; ++i) ASSERT_TRUE(in_range(callees[i], model.subgraph_count()));
    }
  }
  for (int i = 0; i < model.signature_count(); ++i) {
    SignatureView signature = model.signature(i);
    ASSERT_TRUE(in_range(static_cast<int32_t>(signature.subgraph_index), model.subgraph_count()));
    int tensors = model.subgraph(static_cast<int>(signature.subgraph_index)).tensor_count;
    for (int m = 0; m < signature.input_count(); ++m) {
      ASSERT_TRUE(in_range(static_cast<int32_t>(signature.input(m).tensor_index), tensors));
    }
    for (int m = 0; m < signature.output_count(); ++m) {
      ASSERT_TRUE(in_range(static_cast<int32_t>(signature.output(m).tensor_index), tensors));
    }
  }
  for (int i = 0; i < model.metadata_count(); ++i) {
    ASSERT_TRUE(in_range(static_cast<int32_t>(model.metadata(i).buffer), model.buffer_count()));
  }
}

// Every byte of the header, then evenly spaced cuts, then the last few bytes.
std::vector<size_t> cut_points(size_t size) {
  std::vector<size_t> cuts;
  for (size_t n = 0; n <= 12; ++n) cuts.push_back(n);
  for (int i = 1; i < 36; ++i) cuts.push_back(12 + (size - 16) * i / 36);
  for (size_t back = 4; back >= 1; --back) cuts.push_back(size - back);
  return cuts;
}

class Truncated : public ::testing::TestWithParam<const char*> {};

TEST_P(Truncated, EveryCutIsRejectedAsCorruptOrNotAModel) {
  std::vector<uint8_t> bytes = file_bytes(GetParam());
  ASSERT_FALSE(bytes.empty());
  for (size_t length : cut_points(bytes.size())) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
    Model model;
    Status status = Model::load(prefix.data(), prefix.size(), &model);
    if (status.ok()) {
      // Only cutting the zero padding after the last referenced byte (a
      // string's terminator, say) leaves a complete flatbuffer behind.
      size_t cut = bytes.size() - length;
      EXPECT_LT(cut, 8u) << "a " << length << "-byte prefix loaded";
      for (size_t i = length; i < bytes.size(); ++i) {
        EXPECT_EQ(bytes[i], 0) << "a " << length << "-byte prefix loaded without byte " << i;
      }
      expect_safe_to_use(model);
      continue;
    }
    EXPECT_TRUE(status.code() == StatusCode::kCorruptModel ||
                status.code() == StatusCode::kNotAModel)
        << length << " bytes: " << status_code_name(status.code()) << ": " << status.message();
    if (length >= 8) {
      EXPECT_EQ(status.code(), StatusCode::kCorruptModel) << length << " bytes";
      EXPECT_NE(std::string(status.message()).find(std::to_string(length) + " bytes"),
                std::string::npos)
          << status.message();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RealModels, Truncated,
                         ::testing::Values(kHelloWorld, kWhile, kCircleWhile,
                                           "synthetic_gru_fc_softmax_t3_i2_h4_c3.circle"),
                         [](const auto& info) {
                           return test::test_name_for(test::TestModel{"", info.param});
                         });

class FlippedBytes : public ::testing::TestWithParam<const char*> {};

TEST_P(FlippedBytes, EveryPositionEitherLoadsSafelyOrFailsWithAReason) {
  const std::vector<uint8_t> original = file_bytes(GetParam());
  ASSERT_FALSE(original.empty());
  std::map<StatusCode, int> outcomes;
  for (size_t position = 0; position < original.size(); ++position) {
    uint8_t was = original[position];
    for (uint8_t now : {uint8_t{0x00}, uint8_t{0xFF}, uint8_t(was ^ 0x01), uint8_t(was ^ 0x80)}) {
      if (now == was) continue;
      std::vector<uint8_t> bytes = original;
      bytes[position] = now;
      Model model;
      Status status = Model::load(bytes.data(), bytes.size(), &model);
      ++outcomes[status.code()];
      if (status.ok()) {
        SCOPED_TRACE("byte " + std::to_string(position) + " set to " + std::to_string(now));
        expect_safe_to_use(model);
        if (::testing::Test::HasFatalFailure()) return;
        continue;
      }
      ASSERT_TRUE(
          status.code() == StatusCode::kNotAModel || status.code() == StatusCode::kCorruptModel ||
          status.code() == StatusCode::kInvalidModel || status.code() == StatusCode::kUnsupported)
          << "byte " << position << ": " << status_code_name(status.code());
      ASSERT_GT(std::strlen(status.message()), 10u) << "byte " << position;
    }
  }
  std::string summary;
  for (const auto& [code, count] : outcomes) {
    summary += std::string(" ") + status_code_name(code) + "=" + std::to_string(count);
  }
  RecordProperty("outcomes", summary);
  std::printf("%s:%s\n", GetParam(), summary.c_str());
  // Both layers must be exercised: the verifier and the semantic checks.
  EXPECT_GT(outcomes[StatusCode::kCorruptModel], 0) << summary;
  EXPECT_GT(outcomes[StatusCode::kInvalidModel], 0) << summary;
  EXPECT_GT(outcomes[StatusCode::kOk], 0) << summary;  // e.g. weight bytes
}

INSTANTIATE_TEST_SUITE_P(RealModels, FlippedBytes,
                         ::testing::Values(kHelloWorld, kWhile, kCircleWhile),
                         [](const auto& info) {
                           return test::test_name_for(test::TestModel{"", info.param});
                         });

// --- indices out of range -------------------------------------------------------

TEST(IndexOutOfRange, OperatorInput) {
  auto bytes =
      edited(kHelloWorld, [](ModelDef& def) { main_of(def).operators[1]->inputs[0] = 99; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 1 (FULLY_CONNECTED): input 0 is tensor 99, but "
                         "the subgraph has 10 tensors"));
}

TEST(IndexOutOfRange, OperatorInputBelowMinusOne) {
  auto bytes =
      edited(kHelloWorld, [](ModelDef& def) { main_of(def).operators[2]->inputs[2] = -2; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 2 (FULLY_CONNECTED): input 2 is tensor -2"));
}

TEST(IndexOutOfRange, OperatorOutput) {
  auto bytes =
      edited(kHelloWorld, [](ModelDef& def) { main_of(def).operators[0]->outputs[0] = 10; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 0 (FULLY_CONNECTED): output 0 is tensor 10, but "
                         "the subgraph has 10 tensors"));
}

TEST(IndexOutOfRange, OperatorIntermediate) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    main_of(def).operators[0]->intermediates = {3, 12};
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "op 0 (FULLY_CONNECTED): intermediate 1 is tensor 12"));
}

TEST(IndexOutOfRange, SubgraphInput) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) { main_of(def).inputs = {0, 42}; });
  EXPECT_TRUE(
      fails_with(bytes, StatusCode::kInvalidModel,
                 "subgraph 0 'main' input 1 is tensor 42, but the subgraph has 10 tensors"));
}

TEST(IndexOutOfRange, SubgraphOutputInABodySubgraph) {
  auto bytes = edited(kWhile, [](ModelDef& def) { def.subgraphs[2]->outputs[1] = -1; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 2 'while_body' output 1 is tensor -1"));
}

TEST(IndexOutOfRange, TensorBuffer) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) { main_of(def).tensors[5]->buffer = 500; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' tensor 5 'sequential/dense_1/MatMul': buffer index "
                         "500 out of range (model has 13 buffers)"));
}

TEST(IndexOutOfRange, OpcodeIndex) {
  auto bytes =
      edited(kHelloWorld, [](ModelDef& def) { main_of(def).operators[2]->opcode_index = 7; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 2 (?): opcode_index 7 out of range (model has 1 "
                         "operator codes)"));
}

TEST(IndexOutOfRange, WhileCondSubgraph) {
  auto bytes = edited(kWhile, [](ModelDef& def) {
    main_of(def).operators[0]->builtin_options.AsWhileOptions()->cond_subgraph_index = 3;
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 0 (WHILE): cond subgraph index 3 out of range "
                         "(model has 3 subgraphs)"));
}

TEST(IndexOutOfRange, WhileBodySubgraph) {
  auto bytes = edited(kWhile, [](ModelDef& def) {
    main_of(def).operators[0]->builtin_options.AsWhileOptions()->body_subgraph_index = -1;
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 0 (WHILE): body subgraph index -1 out of range"));
}

TEST(IndexOutOfRange, CircleWhileBodySubgraph) {
  auto bytes = edited(kCircleWhile, [](ModelDef& def) {
    main_of(def).operators[0]->builtin_options.AsWhileOptions()->body_subgraph_index = 1000;
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'Main' op 0 (WHILE): body subgraph index 1000 out of range"));
}

TEST(IndexOutOfRange, CallOnceInitSubgraph) {
  auto bytes = edited(kCallOnce, [](ModelDef& def) {
    main_of(def).operators[0]->builtin_options.AsCallOnceOptions()->init_subgraph_index = 2;
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 0 (CALL_ONCE): init subgraph index 2 out of range "
                         "(model has 2 subgraphs)"));
}

TEST(IndexOutOfRange, SignatureSubgraph) {
  auto bytes =
      edited(kHelloWorld, [](ModelDef& def) { def.signature_defs[0]->subgraph_index = 5; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "signature 0 'serving_default': subgraph index 5 out of range (model has "
                         "1 subgraphs)"));
}

TEST(IndexOutOfRange, SignatureTensor) {
  auto bytes = edited(kHelloWorld,
                      [](ModelDef& def) { def.signature_defs[0]->outputs[0]->tensor_index = 10; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "signature 0 'serving_default': 'dense_2' maps to tensor 10, but subgraph "
                         "0 has 10 tensors"));
}

TEST(IndexOutOfRange, MetadataBuffer) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) { def.metadata[1]->buffer = 13; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "metadata 'CONVERSION_METADATA': buffer index 13 out of range (model has "
                         "13 buffers)"));
}

// --- control flow ---------------------------------------------------------------

TEST(ControlFlow, WhileBodyCallingItself) {
  // nested_while: main -> WHILE(1, 2); subgraph 2 'while_body' -> WHILE(3, 4).
  // Every subgraph carries one value, so only the cycle is wrong.
  auto bytes = edited(kNestedWhile, [](ModelDef& def) {
    def.subgraphs[2]->operators[0]->builtin_options.AsWhileOptions()->body_subgraph_index = 2;
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "recursive control flow: subgraph 2 'while_body' op 0 (WHILE) calls "
                         "subgraph 2 'while_body'"));
}

TEST(ControlFlow, WhileBodyCallingMain) {
  auto bytes = edited(kNestedWhile, [](ModelDef& def) {
    def.subgraphs[2]->operators[0]->builtin_options.AsWhileOptions()->body_subgraph_index = 0;
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "recursive control flow: subgraph 2 'while_body' op 0 (WHILE) calls "
                         "subgraph 0 'main'"));
}

TEST(ControlFlow, CycleThroughTwoBodies) {
  // while_body (2) -> while2_body (4) -> back to while_body (2).
  auto bytes = edited(kNestedWhile, [](ModelDef& def) {
    fb::SubGraphT& inner = *def.subgraphs[4];
    auto loop = std::make_unique<fb::OperatorT>(*def.subgraphs[2]->operators[0]);
    loop->builtin_options.AsWhileOptions()->cond_subgraph_index = 3;
    loop->builtin_options.AsWhileOptions()->body_subgraph_index = 2;
    loop->inputs = {inner.outputs[0]};
    // A new tensor for its output: an op may not write the body's inputs.
    inner.tensors.push_back(std::make_unique<fb::TensorT>(*inner.tensors[inner.outputs[0]]));
    inner.tensors.back()->name = "cycle_out";
    loop->outputs = {static_cast<int32_t>(inner.tensors.size() - 1)};
    inner.operators.push_back(std::move(loop));
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 4 'while2_body' op 1 (WHILE) calls subgraph 2 'while_body'"));
}

// Found by the fuzzer: an op whose code is not CALL_ONCE but which carries
// CallOnceOptions with a wild index reached the call-graph walk unchecked.
TEST(ControlFlow, ControlFlowOptionsOnAnotherOpAreChecked) {
  auto bytes = edited(kCallOnce, [](ModelDef& def) {
    fb::OperatorT& op = *main_of(def).operators[0];
    op.opcode_index = main_of(def).operators[4]->opcode_index;  // MUL's code, CallOnceOptions kept
    op.builtin_options.AsCallOnceOptions()->init_subgraph_index = 2686977;
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "op 0 (MUL): init subgraph index 2686977 out of range (model has 2 "
                         "subgraphs)"));
}

TEST(ControlFlow, CallOnceOfItsOwnSubgraph) {
  auto bytes = edited(kCallOnce, [](ModelDef& def) {
    main_of(def).operators[0]->builtin_options.AsCallOnceOptions()->init_subgraph_index = 0;
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 0 (CALL_ONCE) calls subgraph 0 'main'"));
}

TEST(ControlFlow, WhileWithoutOptions) {
  auto bytes =
      edited(kWhile, [](ModelDef& def) { main_of(def).operators[0]->builtin_options.Reset(); });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' op 0 (WHILE): WHILE has no WhileOptions"));
}

TEST(ControlFlow, WhileBodyWithWrongArity) {
  auto bytes = edited(kWhile, [](ModelDef& def) { def.subgraphs[2]->outputs.pop_back(); });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "WHILE carries 3 values but there are 2 outputs of its body subgraph"));
}

// --- shapes and buffers ---------------------------------------------------------

TEST(Shapes, NegativeDimension) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    main_of(def).tensors[7]->shape = {1, -16};
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "tensor 7 'sequential/dense/MatMul;sequential/dense/Relu;sequential/dense/"
                         "BiasAdd': dimension 1 is -16"));
}

TEST(Shapes, AbsurdDimension) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    main_of(def).tensors[0]->shape = {1 << 30, 1};
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "tensor 0 'serving_default_dense_input:0': dimension 0 is 1073741824"));
}

TEST(Shapes, TooManyElements) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    main_of(def).tensors[8]->shape = {1 << 20, 1 << 20};
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "tensor 8 'sequential/dense_1/MatMul;sequential/dense_1/Relu;sequential/"
                         "dense_1/BiasAdd': more than 2147483648 elements"));
}

TEST(Shapes, RankAboveTheLimit) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    main_of(def).tensors[9]->shape = std::vector<int32_t>(kMaxRank + 1, 1);
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "tensor 9 'StatefulPartitionedCall:0': rank 9 exceeds 8"));
}

TEST(Shapes, BadShapeSignature) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    main_of(def).tensors[0]->shape_signature = {-7, 1};
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "tensor 0 'serving_default_dense_input:0': shape_signature has "
                         "dimension -7"));
}

TEST(Buffers, ShapeNotMatchingData) {
  // sequential/dense_1/MatMul is [16,16] float32 = 1024 bytes in buffer 6.
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    main_of(def).tensors[5]->shape = {16, 15};
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "tensor 5 'sequential/dense_1/MatMul': buffer 6 has 1024 bytes, shape "
                         "[16,15] FLOAT32 needs 960"));
}

TEST(Buffers, DataNotMatchingShape) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) { def.buffers[3]->data.resize(3); });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "tensor 2 'sequential/dense_2/BiasAdd/ReadVariableOp': buffer 3 has 3 "
                         "bytes, shape [1] FLOAT32 needs 4"));
}

TEST(Buffers, TypeNotMatchingData) {
  // The Circle GRU's weights reinterpreted as int8: a quarter of the bytes.
  auto bytes = edited("gru_float.circle", [](ModelDef& def) {
    for (auto& tensor : main_of(def).tensors) {
      if (!def.buffers[tensor->buffer]->data.empty()) {
        tensor->type = fb::TensorType::INT8;
        break;
      }
    }
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "INT8 needs"));
}

TEST(Buffers, BufferZeroHoldingData) {
  // The writer refuses this, so pack with flatbuffers' object API directly.
  tools::LoadedModel original;
  std::string error;
  ASSERT_TRUE(tools::load_model_file(test::model_path(kHelloWorld), &original, &error)) << error;
  ModelDef def;
  ASSERT_TRUE(tools::unpack_model(original.model, &def, &error)) << error;
  def.buffers[0]->data = {1, 2, 3, 4, 5};
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::Model::Pack(fbb, &def), "TFL3");
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "buffer 0 must be the empty sentinel but holds 5 bytes"));
}

TEST(Buffers, ExternalData) {
  tools::LoadedModel original;
  std::string error;
  ASSERT_TRUE(tools::load_model_file(test::model_path(kHelloWorld), &original, &error)) << error;
  ModelDef def;
  ASSERT_TRUE(tools::unpack_model(original.model, &def, &error)) << error;
  def.buffers[6]->offset = 1 << 20;
  def.buffers[6]->size = 1024;
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::Model::Pack(fbb, &def), "TFL3");
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  EXPECT_TRUE(fails_with(bytes, StatusCode::kUnsupported, "buffer 6 stores its data outside"));
}

// --- versions and structure -------------------------------------------------------

// Overwrites Model.version (root table field 0) in place.
void set_version(std::vector<uint8_t>* bytes, uint32_t version) {
  auto root =
      reinterpret_cast<flatbuffers::Table*>(const_cast<fb::Model*>(fb::GetModel(bytes->data())));
  ASSERT_TRUE(root->SetField<uint32_t>(flatbuffers::FieldIndexToOffset(0), version, 0))
      << "version field not stored";
}

TEST(Versions, Tflite7) {
  std::vector<uint8_t> bytes = file_bytes(kHelloWorld);
  set_version(&bytes, 7);
  EXPECT_TRUE(fails_with(bytes, StatusCode::kUnsupported,
                         "version mismatch: tflite schema version 7, expected 3"));
}

TEST(Versions, CircleWithTfliteVersion) {
  // A TFLite file (version 3) relabelled as Circle, whose files store 0.
  std::vector<uint8_t> bytes = file_bytes(kHelloWorld);
  std::memcpy(bytes.data() + 4, "CIR0", 4);
  EXPECT_TRUE(fails_with(bytes, StatusCode::kUnsupported,
                         "version mismatch: circle schema version 3, expected 0"));
}

TEST(Structure, NoSubgraphs) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    def.subgraphs.clear();
    def.signature_defs.clear();
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "model has no subgraphs"));
}

TEST(Structure, TooManySubgraphs) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    while (def.subgraphs.size() <= static_cast<size_t>(kMaxSubgraphs)) {
      def.subgraphs.push_back(std::make_unique<fb::SubGraphT>());
    }
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kUnsupported, "257 subgraphs, the limit is 256"));
}

// --- dataflow the kernels would trip on (found by tests/fuzz/mutant_census.py) ------

// A sparse constant skipped the buffer size check; kernels read its dense shape past the bytes.
TEST(Dataflow, SparseTensorIsRejectedByName) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    fb::SubGraphT& main = main_of(def);
    for (auto& tensor : main.tensors) {
      if (tensor->buffer != 0 && !def.buffers[tensor->buffer]->data.empty()) {
        tensor->sparsity = std::make_unique<fb::SparsityParametersT>();
        tensor->name = "sparse_weights";
        return;
      }
    }
  });
  EXPECT_TRUE(
      fails_with(bytes, StatusCode::kUnsupported,
                 "'sparse_weights': sparse tensors (sparsity parameters) are not supported"));
}

// An output nothing writes was left unplanned: run.cpp and trainer.cpp dereferenced null.
TEST(Dataflow, GraphOutputWithoutAProducer) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    fb::SubGraphT& main = main_of(def);
    auto tensor = std::make_unique<fb::TensorT>();
    tensor->name = "orphan";
    tensor->shape = {1, 1};
    main.tensors.push_back(std::move(tensor));
    main.outputs.push_back(static_cast<int32_t>(main.tensors.size() - 1));
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "subgraph 0 'main' output tensor 10 'orphan' is written by no op"));
}

// An op output of -1 crashed WHILE's prepare and the fuser.
TEST(Dataflow, OperatorOutputOfMinusOne) {
  auto bytes =
      edited(kHelloWorld, [](ModelDef& def) { main_of(def).operators[1]->outputs[0] = -1; });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel,
                         "op 1 (FULLY_CONNECTED): output 0 is tensor -1"));
}

TEST(Dataflow, WhileInputOfMinusOne) {
  auto bytes = edited(kWhile, [](ModelDef& def) {
    for (auto& op : main_of(def).operators) {
      if (op->builtin_options.AsWhileOptions()) op->inputs[0] = -1;
    }
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "(WHILE): input 0 is -1 (omitted)"));
}

TEST(Dataflow, TensorWrittenByTwoOps) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    fb::SubGraphT& main = main_of(def);
    main.tensors[static_cast<size_t>(main.operators[0]->outputs[0])]->name = "twice";
    main.operators[2]->outputs[0] = main.operators[0]->outputs[0];
    main.outputs = {main.operators[1]->outputs[0]};
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "op 2 (FULLY_CONNECTED) writes tensor"));
  EXPECT_TRUE(
      fails_with(bytes, StatusCode::kInvalidModel, "'twice', which another output already writes"));
}

TEST(Dataflow, OperatorWritingAGraphInput) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    fb::SubGraphT& main = main_of(def);
    main.operators[2]->outputs[0] = main.inputs[0];
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "which is a subgraph input"));
}

TEST(Dataflow, OperatorWritingAConstant) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    fb::SubGraphT& main = main_of(def);
    main.operators[0]->outputs[0] = main.operators[2]->inputs[1];  // op 2's weights
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "op 0 (FULLY_CONNECTED) writes tensor"));
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "which is a constant"));
}

TEST(Dataflow, OperatorReadingItsOwnOutput) {
  auto bytes = edited(kHelloWorld, [](ModelDef& def) {
    fb::OperatorT& op = *main_of(def).operators[1];
    op.inputs[0] = op.outputs[0];
  });
  EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "which is also one of its own inputs"));
}

TEST(Dataflow, ReshapeOptionsWithNegativeOrAbsurdShapes) {
  for (const std::vector<int32_t>& new_shape :
       {std::vector<int32_t>{-2, 3}, std::vector<int32_t>{-1, -1}, std::vector<int32_t>{1 << 30, 4},
        std::vector<int32_t>{65536, 65536, 2}}) {
    auto bytes = edited(kHelloWorld, [&](ModelDef& def) {
      fb::ReshapeOptionsT options;
      options.new_shape = new_shape;
      main_of(def).operators[0]->builtin_options.Set(std::move(options));
    });
    EXPECT_TRUE(fails_with(bytes, StatusCode::kInvalidModel, "new_shape ["));
  }
}

// A clean edit must still load: the corpus breaks models on purpose, not by
// accident of the writer.
TEST(Corpus, UneditedWritesLoad) {
  for (const char* file : {kHelloWorld, kWhile, kNestedWhile, kCallOnce, kCircleWhile}) {
    std::vector<uint8_t> bytes = edited(file, [](ModelDef&) {});
    Status status = load_status(bytes);
    EXPECT_TRUE(status.ok()) << file << ": " << status.message();
  }
}

}  // namespace
}  // namespace gruwb
