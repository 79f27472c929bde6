// Exporters: the C array pair compiles (as C and C++) into the model's exact,
// 16-byte-aligned bytes; .tflite <-> .circle conversions compute the same
// outputs and refuse what a format cannot hold; a fused LSTM written as
// .tflite has Keras' 24-input layout; weights come out as .npy with the
// file's exact bytes.

#include "engine/tools/exporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine/tools/fuser.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "tests/engine/test_models.h"
#include "tests/tools/model_def_util.h"

namespace gruwb::tools {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read(const std::string& path) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(read_file_bytes(path, &bytes, &error)) << error;
  return bytes;
}

std::string sample(const char* file) {
  return std::string(GRUWB_SOURCE_DIR) + "/resources/samples/" + file;
}

fs::path temp_dir(const char* name) {
  fs::path dir =
      fs::temp_directory_path() / ("gruwb_exporter_test_" + std::to_string(::getpid())) / name;
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(ExporterTest, CIdentifierFollowsXxd) {
  EXPECT_EQ(c_identifier("gesture_gru_fused.tflite"), "gesture_gru_fused_tflite");
  EXPECT_EQ(c_identifier("2-layer gru.circle"), "_2_layer_gru_circle");
  EXPECT_EQ(c_identifier(""), "_");
}

// The generated pair, compiled with the host compiler as C++ and as C, links
// into a program that checks length, alignment and every byte.
TEST(ExporterTest, CArrayCompilesToTheModelBytes) {
  const std::string model = sample("tflm_hello_world_float.tflite");
  const std::vector<uint8_t> bytes = read(model);
  CArrayFiles pair = c_array_files(bytes, "gesture_model", "gesture_model.h");
  EXPECT_NE(pair.source.find("alignas(16) const unsigned char gesture_model[] = {"),
            std::string::npos);
  EXPECT_NE(pair.source.find(
                "const unsigned int gesture_model_len = " + std::to_string(bytes.size()) + ";"),
            std::string::npos);
  EXPECT_NE(pair.header.find("extern const unsigned char gesture_model[];"), std::string::npos);
  const fs::path dir = temp_dir("c_array");
  write_text(dir / "gesture_model.h", pair.header);
  write_text(dir / "gesture_model.cc", pair.source);
  write_text(dir / "gesture_model.c", pair.source);
  write_text(dir / "check.cc",
             "#include <cstdio>\n#include <cstdint>\n#include \"gesture_model.h\"\n"
             "int main(int argc, char** argv) {\n"
             "  if (argc < 2) return 10;\n"
             "  FILE* f = std::fopen(argv[1], \"rb\");\n"
             "  if (!f) return 11;\n"
             "  unsigned n = 0; int c;\n"
             "  while ((c = std::fgetc(f)) != EOF) {\n"
             "    if (n >= gesture_model_len || gesture_model[n] != c) return 12;\n"
             "    ++n;\n"
             "  }\n"
             "  if (n != gesture_model_len) return 13;\n"
             "  if (reinterpret_cast<std::uintptr_t>(gesture_model) % 16 != 0) return 14;\n"
             "  return 0;\n"
             "}\n");
  const std::string cxx = GRUWB_CXX_COMPILER;
  for (const char* variant : {"cxx", "c"}) {
    SCOPED_TRACE(variant);
    const std::string array_object = (dir / (std::string(variant) + "_array.o")).string();
    const std::string compile_array =
        std::string(variant) == "c"
            ? cxx + " -x c -std=c11 -Wall -Werror -c " + (dir / "gesture_model.c").string() +
                  " -o " + array_object
            : cxx + " -std=c++11 -Wall -Werror -c " + (dir / "gesture_model.cc").string() + " -o " +
                  array_object;
    ASSERT_EQ(std::system(compile_array.c_str()), 0) << compile_array;
    const std::string program = (dir / (std::string(variant) + "_check")).string();
    const std::string link = cxx + " -std=c++11 -I" + dir.string() + " " +
                             (dir / "check.cc").string() + " " + array_object + " -o " + program;
    ASSERT_EQ(std::system(link.c_str()), 0) << link;
    EXPECT_EQ(std::system((program + " " + model).c_str()), 0);
  }
  fs::remove_all(dir.parent_path());
}

TEST(ExporterTest, CircleGruBecomesTheCustomOpInTflite) {
  for (const std::string& path :
       {test::model_path("gru_float.circle"), sample("gesture_gru.circle")}) {
    SCOPED_TRACE(path);
    const std::vector<uint8_t> circle = read(path);
    std::vector<uint8_t> tflite;
    std::vector<std::string> notes;
    std::string error;
    ASSERT_TRUE(convert_model(circle, ModelFormat::kTflite, &tflite, &notes, &error)) << error;
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("GRUWB_GRU"), std::string::npos);
    EXPECT_EQ(std::memcmp(tflite.data() + 4, "TFL3", 4), 0);
    ModelDef def = unpack(tflite);
    bool custom = false;
    for (const auto& code : def.operator_codes) {
      EXPECT_NE(code->builtin_code, BuiltinOperator::GRU);
      custom |= code->custom_code == "GRUWB_GRU";
    }
    EXPECT_TRUE(custom);
    double diff = -1;
    ASSERT_TRUE(compare_models(circle, tflite, 3, 5, &diff, &error)) << error;
    EXPECT_LE(diff, 1e-6);
    // And back: the .tflite as .circle runs the same.
    std::vector<uint8_t> again;
    ASSERT_TRUE(convert_model(tflite, ModelFormat::kCircle, &again, &notes, &error)) << error;
    EXPECT_EQ(std::memcmp(again.data() + 4, "CIR0", 4), 0);
    ASSERT_TRUE(compare_models(circle, again, 2, 6, &diff, &error)) << error;
    EXPECT_LE(diff, 1e-6);
  }
}

TEST(ExporterTest, TfliteModelsConvertToCircleUnchanged) {
  for (const std::string& path :
       {sample("gesture_gru_fused.tflite"), sample("gesture_gru_while.tflite"),
        test::model_path("tflm_mnist_fused_lstm_float.tflite")}) {
    SCOPED_TRACE(path);
    const std::vector<uint8_t> tflite = read(path);
    std::vector<uint8_t> circle;
    std::vector<std::string> notes;
    std::string error;
    ASSERT_TRUE(convert_model(tflite, ModelFormat::kCircle, &circle, &notes, &error)) << error;
    double diff = -1;
    ASSERT_TRUE(compare_models(tflite, circle, 2, 3, &diff, &error)) << error;
    EXPECT_EQ(diff, 0.0);
  }
}

TEST(ExporterTest, UnrepresentableCircleGruIsAClearError) {
  ModelDef def = unpack(read(test::model_path("gru_float.circle")));
  bool changed = false;
  for (auto& op : def.subgraphs[0]->operators) {
    if (auto* options = op->builtin_options.AsGRUOptions()) {
      options->fused_activation_function = fb::ActivationFunctionType::RELU;
      changed = true;
    }
  }
  ASSERT_TRUE(changed);
  std::vector<uint8_t> circle, tflite;
  std::vector<std::string> notes;
  std::string error;
  ASSERT_TRUE(write_model(def, ModelFormat::kCircle, &circle, &error)) << error;
  EXPECT_FALSE(convert_model(circle, ModelFormat::kTflite, &tflite, &notes, &error));
  EXPECT_NE(error.find("not representable in .tflite"), std::string::npos) << error;
  EXPECT_NE(error.find("fused activation"), std::string::npos) << error;
}

// A WHILE LSTM fused (into .circle, then exported to .tflite) reads back with
// the 24-input layout: the 15 used inputs and -1 for the 9 optional ones.
TEST(ExporterTest, FusedLstmExportsWithThe24InputLayout) {
  BuildSpec spec;
  spec.cell = find_cell("lstm");
  spec.layout = RnnLayout::kWhile;
  spec.timesteps = 6;
  spec.features = 3;
  spec.units = 5;
  spec.classes = 2;
  ModelDef built;
  std::string error;
  ASSERT_TRUE(build_model(spec, &built, &error)) << error;
  std::vector<uint8_t> loop;
  ASSERT_TRUE(write_model(built, ModelFormat::kTflite, &loop, &error)) << error;
  FuseOptions options;
  options.format = ModelFormat::kCircle;
  FuseResult fused;
  ASSERT_TRUE(fuse_model(loop, options, &fused, &error)) << error;
  ASSERT_EQ(fused.fused_count(), 1);
  std::vector<uint8_t> tflite;
  std::vector<std::string> notes;
  ASSERT_TRUE(convert_model(fused.bytes, ModelFormat::kTflite, &tflite, &notes, &error)) << error;
  LoadedModel loaded;
  ASSERT_TRUE(load_model_bytes(tflite, "lstm.tflite", &loaded, &error)) << error;
  ModelDef def = unpack(loaded.bytes);
  const fb::OperatorT* lstm = nullptr;
  for (const auto& op : def.subgraphs[0]->operators) {
    if (def.operator_codes[op->opcode_index]->builtin_code ==
        BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM) {
      lstm = op.get();
    }
  }
  ASSERT_NE(lstm, nullptr);
  ASSERT_EQ(lstm->inputs.size(), 24u);
  int used = 0;
  for (int i = 0; i < 24; ++i) {
    const bool optional = (i >= 9 && i <= 11) || i == 16 || i == 17 || (i >= 20 && i <= 23);
    if (optional) {
      EXPECT_EQ(lstm->inputs[static_cast<size_t>(i)], -1) << "input " << i;
    } else {
      EXPECT_GE(lstm->inputs[static_cast<size_t>(i)], 0) << "input " << i;
      ++used;
    }
  }
  EXPECT_EQ(used, 15);
  for (int state : {18, 19}) {
    EXPECT_TRUE(def.subgraphs[0]->tensors[static_cast<size_t>(lstm->inputs[state])]->is_variable);
  }
  const auto* o = lstm->builtin_options.AsUnidirectionalSequenceLSTMOptions();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->fused_activation_function, fb::ActivationFunctionType::TANH);
  double diff = -1;
  ASSERT_TRUE(compare_models(loop, tflite, 3, 9, &diff, &error)) << error;
  EXPECT_LE(diff, 1e-5);
}

TEST(ExporterTest, WeightArraysHoldTheTensorsBytes) {
  const std::vector<uint8_t> bytes = read(sample("gesture_gru_fused.tflite"));
  std::vector<WeightArray> arrays;
  std::vector<std::string> skipped;
  std::string error;
  ASSERT_TRUE(weight_arrays(bytes, &arrays, &skipped, &error)) << error;
  EXPECT_TRUE(skipped.empty());
  ModelDef def = unpack(bytes);
  uint64_t values = 0;
  std::set<std::string> files;
  for (const WeightArray& w : arrays) {
    SCOPED_TRACE(w.tensor_name);
    const fb::TensorT& t =
        *def.subgraphs[static_cast<size_t>(w.subgraph)]->tensors[static_cast<size_t>(w.tensor)];
    EXPECT_EQ(w.array.data, def.buffers[t.buffer]->data);
    EXPECT_EQ(w.array.shape, std::vector<int64_t>(t.shape.begin(), t.shape.end()));
    EXPECT_EQ(w.file_name.find('/'), std::string::npos);
    EXPECT_TRUE(files.insert(w.file_name).second);
    values += static_cast<uint64_t>(w.array.elements());
  }
  EXPECT_EQ(values, 11944u);  // every trainable value of the reference GRU(60) model
  const std::string manifest = weight_manifest_json("gesture_gru_fused.tflite", arrays, skipped);
  EXPECT_NE(manifest.find("\"file\": \"" + arrays[0].file_name + "\""), std::string::npos);
}

TEST(ExporterTest, QuantizedWeightsKeepTheirScalesInTheManifest) {
  const std::vector<uint8_t> bytes = read(test::model_path("tflm_mnist_fused_lstm_int8.tflite"));
  std::vector<WeightArray> arrays;
  std::vector<std::string> skipped;
  std::string error;
  ASSERT_TRUE(weight_arrays(bytes, &arrays, &skipped, &error)) << error;
  int int8 = 0;
  for (const WeightArray& w : arrays) {
    if (w.array.dtype == "|i1") {
      ++int8;
      EXPECT_FALSE(w.scales.empty()) << w.tensor_name;
    }
  }
  EXPECT_GE(int8, 8);  // the LSTM's 8 weight matrices at least
  EXPECT_NE(weight_manifest_json("m", arrays, skipped).find("\"scales\""), std::string::npos);
}

}  // namespace
}  // namespace gruwb::tools
