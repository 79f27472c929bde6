// `gruwb corpus`'s rows on the licensed real models: each column is what the engine, the
// fuser and the trainer really do with that file, against real TFLite's outputs.

#include "app/core/corpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/engine/test_models.h"
#include "tests/tools/converter_variants.h"

namespace gruwb::app {
namespace {

std::map<std::string, CorpusRow> rows_by_stem() {
  CorpusRequest request;
  request.folder = test::shared_dir() + "/data/models/real";
  std::vector<CorpusRow> rows;
  std::string error;
  EXPECT_TRUE(corpus_rows(request, &rows, &error)) << error;
  std::map<std::string, CorpusRow> by_stem;
  for (const CorpusRow& r : rows) by_stem[r.file.substr(0, r.file.rfind('.'))] = r;
  return by_stem;
}

TEST(CorpusTest, RealModelsRow) {
  const std::map<std::string, CorpusRow> rows = rows_by_stem();
  ASSERT_EQ(rows.size(), 10u);
  const CorpusRow& gru = rows.at("mycroftai_plugin_wake_word_precise_lite_hey_mycroft");
  EXPECT_TRUE(gru.runs);
  EXPECT_EQ(gru.golden, "equal");
  EXPECT_EQ(gru.cells_fused, 1);
  EXPECT_LT(gru.bytes_after, gru.bytes_before);
  EXPECT_TRUE(gru.trains) << gru.train_error;
  EXPECT_TRUE(gru.runs_fused);  // what gruwb run runs: the fused form, equal to TFLite too
  EXPECT_EQ(gru.fused_golden, "equal") << gru.fused_golden_error;
  const CorpusRow& flex = rows.at("casonka_networkfilter_lstm");
  EXPECT_TRUE(flex.runs) << flex.run_error;
  EXPECT_EQ(flex.golden, "");  // no TFLite here runs Flex ops
  EXPECT_EQ(flex.cells_fused, 2);
  EXPECT_TRUE(flex.trains) << flex.train_error;
  const CorpusRow& lstm = rows.at("breizhn_dtln_model_1_3d37fdf");
  EXPECT_EQ(lstm.golden, "equal");
  EXPECT_EQ(lstm.cells_found, 2);
  EXPECT_NE(lstm.fuse_note.find("zero state"), std::string::npos) << lstm.fuse_note;
  EXPECT_EQ(lstm.stateful_fused, 2);  // the streaming state stays inside the fused ops
  const CorpusRow& hybrid = rows.at("breizhn_dtln_model_quant_1");
  EXPECT_EQ(hybrid.golden, "equal");
  EXPECT_TRUE(hybrid.trains) << hybrid.train_error;  // float32 copies of its INT8 weights
  EXPECT_GT(hybrid.dequantized_weights, 0);
  for (const char* stem : {"tensorflow_tflite_micro_micro_speech_lstm",
                           "tensorflow_tflite_micro_dtln_noise_suppression",
                           "google_coral_test_data_keras_lstm_mnist_ptq"}) {
    const CorpusRow& int8 = rows.at(stem);  // the int8 LSTM kernel
    EXPECT_TRUE(int8.runs) << stem << ": " << int8.run_error;
    EXPECT_EQ(int8.golden, "equal") << stem;
  }
}

// Every WHILE-loop structure of converter-variants.md, as `gruwb corpus` sees a folder of
// them: each runs, equals the double-precision reference, has every cell fused, and trains.
TEST(CorpusTest, EveryConverterVariantRunsFusesAndTrains) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "gruwb_corpus_variants").string();
  std::filesystem::remove_all(dir);
  std::string error;
  ASSERT_TRUE(test::write_variant_folder(dir, &error)) << error;
  CorpusRequest request;
  request.folder = dir;
  std::vector<CorpusRow> rows;
  ASSERT_TRUE(corpus_rows(request, &rows, &error)) << error;
  const std::vector<test::ConverterVariant> variants = test::converter_variants();
  ASSERT_EQ(rows.size(), variants.size());
  std::map<std::string, CorpusRow> by_name;
  for (const CorpusRow& r : rows) by_name[r.file] = r;
  for (const test::ConverterVariant& v : variants) {
    const CorpusRow& r = by_name[v.name + ".tflite"];
    SCOPED_TRACE(v.name + ": " + v.structure);
    EXPECT_TRUE(r.runs) << r.run_error;
    EXPECT_EQ(r.golden, v.hybrid == test::ConverterVariant::Hybrid::kNone ? "equal" : "");
    EXPECT_TRUE(r.trains) << r.train_error;
    if (!v.unfused_reason.empty()) {
      EXPECT_EQ(r.cells_fused, 0);
      EXPECT_EQ(r.bytes_after, r.bytes_before);
      EXPECT_NE(r.fuse_note.find(v.unfused_reason), std::string::npos) << r.fuse_note;
      continue;
    }
    EXPECT_EQ(r.cells_found, test::cell_count(v));
    EXPECT_EQ(r.cells_fused, r.cells_found) << r.fuse_note;
    EXPECT_LT(r.bytes_after, r.bytes_before);
  }
  std::filesystem::remove_all(dir);
}

TEST(CorpusTest, UnreadableFolderIsOneLine) {
  CorpusRequest request;
  request.folder = "/nonexistent/models";
  std::string out, err;
  EXPECT_EQ(run_corpus(request, &out, &err), 2);
  EXPECT_NE(err.find("/nonexistent/models"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

}  // namespace
}  // namespace gruwb::app
