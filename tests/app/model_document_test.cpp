// One model document for `gruwb inspect` and the GUI (app/core/model_document.h): a real WHILE-loop
// GRU opens with its loop found and fusable, the report `gruwb inspect` prints is the document's,
// and a damaged file gives one line naming the file and leaves the caller's document as it was.

#include "app/core/model_document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/core/inspect.h"

namespace gruwb::app {
namespace {

namespace fs = std::filesystem;

const fs::path kMycroft =
    fs::path(GRUWB_SHARED_DIR) /
    "data/models/real/mycroftai_plugin_wake_word_precise_lite_hey_mycroft.tflite";

TEST(ModelDocumentTest, RealWhileGruOpensWithItsCellFoundAndFusable) {
  ModelDocument document;
  std::string error;
  ASSERT_TRUE(open_model_document(kMycroft.string(), &document, &error)) << error;
  ASSERT_NE(document.loaded, nullptr);
  EXPECT_EQ(document.path(), kMycroft.string());
  EXPECT_EQ(document.report.model_bytes, fs::file_size(kMycroft));
  EXPECT_GT(document.report.subgraphs.size(), 1u);  // main, the loop's cond and body
  ASSERT_EQ(document.fusion.cells.size(), 1u);
  EXPECT_TRUE(document.fusion.cells[0].fused) << document.fusion.cells[0].reason;
  EXPECT_EQ(document.report.recurrent_cells, 1);
  EXPECT_EQ(document.report.fusable_cells, 1);
}

TEST(ModelDocumentTest, InspectPrintsTheDocumentsReport) {
  ModelDocument document;
  std::string error;
  ASSERT_TRUE(open_model_document(kMycroft.string(), &document, &error)) << error;
  std::string out, err;
  ASSERT_EQ(run_inspect(kMycroft.string(), /*json=*/true, &out, &err), kExitOk) << err;
  EXPECT_EQ(out, tools::report_to_json(document.report));
}

TEST(ModelDocumentTest, DamagedFileGivesOneLineAndKeepsTheOpenDocument) {
  ModelDocument document;
  std::string error;
  ASSERT_TRUE(open_model_document(kMycroft.string(), &document, &error)) << error;

  const fs::path damaged = fs::path(testing::TempDir()) / "damaged\nname.tflite";
  {
    std::ifstream in(kMycroft, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(damaged, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  EXPECT_FALSE(open_model_document(damaged.string(), &document, &error));
  fs::remove(damaged);
  EXPECT_NE(error.find("name.tflite"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  ASSERT_NE(document.loaded, nullptr);  // the document opened before is still there
  EXPECT_EQ(document.path(), kMycroft.string());
}

}  // namespace
}  // namespace gruwb::app
