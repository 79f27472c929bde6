// The plugin manager with real plugins: the tsv_reader example (a dataset format, against the
// real BasicMotions data), the gru_plugin_test cell plugin (a cell type and its op), a plugin
// built for SDK 999 and broken library files. One manager for the whole process, as in gruwb:
// registries (cells, ops, readers) are process-wide.

#include "app/core/plugin_manager.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <cmath>

#include "app/core/dataset.h"
#include "engine/runtime/op_resolver.h"
#include "engine/tools/cells/cell_registry.h"
#include "serial/link/transport.h"

namespace gruwb::app {
namespace {

const QString kTsvReader = QStringLiteral(GRUWB_BUILD_PLUGIN_DIR "/tsv_reader.so");
const QString kCellPlugin = QStringLiteral(GRUWB_TEST_PLUGIN_DIR "/cell/gru_plugin_test.so");
const QString kSdk999Plugin = QStringLiteral(GRUWB_TEST_PLUGIN_DIR "/sdk999/sdk999_plugin.so");
const std::string kTsvDir = GRUWB_SOURCE_DIR "/tests/fixtures/datasets/BasicMotionsAccX";
const std::string kBasicMotions = GRUWB_SHARED_DIR "/data/datasets/BasicMotions";

PluginManager& manager() {
  static PluginManager* m = [] {
    auto* created = new PluginManager("gruwb");
    created->loadFile(kTsvReader);
    created->loadFile(kCellPlugin);
    return created;
  }();
  return *m;
}

const PluginRecord* record(const QString& name) {
  for (const PluginRecord& r : manager().records()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::string write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  QFile file(dir.filePath(name));
  EXPECT_TRUE(file.open(QIODevice::WriteOnly));
  file.write(bytes);
  return dir.filePath(name).toStdString();
}

TEST(PluginManager, LoadsTheExampleDatasetReader) {
  const PluginRecord* tsv = record("tsv_reader");
  ASSERT_NE(tsv, nullptr);
  EXPECT_TRUE(tsv->loaded) << tsv->problem.toStdString();
  EXPECT_EQ(tsv->sdk, 1);
  EXPECT_EQ(tsv->version, "1.0");
  EXPECT_EQ(tsv->dataset_formats, QStringList{".tsv"});
  EXPECT_TRUE(tsv->warnings.isEmpty()) << tsv->warnings.join('\n').toStdString();
  EXPECT_TRUE(tsv->cells.isEmpty());
}

// The UCR-format copy of BasicMotions' first channel reads back as the built-in .ts loader
// reads that channel: same cases, labels, lengths and floats.
TEST(TsvReaderPlugin, ReadsTheUcrFormatAsTheTsLoaderReadsTheSameData) {
  manager();
  DatasetFiles tsv;
  std::string error;
  ASSERT_TRUE(load_dataset(kTsvDir + "/BasicMotionsAccX_TRAIN.tsv", &tsv, &error)) << error;
  ASSERT_TRUE(tsv.has_test());  // the _TEST sibling came along
  DatasetFiles ts;
  ASSERT_TRUE(load_dataset(kBasicMotions, &ts, &error)) << error;
  EXPECT_EQ(tsv.train.name, "BasicMotionsAccX");
  EXPECT_EQ(tsv.train.channels, 1);
  EXPECT_EQ(tsv.train.class_names, (std::vector<std::string>{"1", "2", "3", "4"}));
  for (auto [from_tsv, from_ts] : {std::pair{&tsv.train, &ts.train}, {&tsv.test, &ts.test}}) {
    ASSERT_EQ(from_tsv->size(), from_ts->size());
    ASSERT_EQ(from_tsv->size(), 40);
    for (int i = 0; i < from_tsv->size(); ++i) {
      // Labels 1..4 are BasicMotions' classes in @classLabel order.
      EXPECT_EQ(from_tsv->class_names[from_tsv->labels[i]], std::to_string(from_ts->labels[i] + 1));
      ASSERT_EQ(from_tsv->lengths[i], from_ts->lengths[i]);
      const std::vector<float>& a = from_tsv->series[i];
      const std::vector<float>& b = from_ts->series[i];
      for (int t = 0; t < from_tsv->lengths[i]; ++t) {
        ASSERT_EQ(a[t], b[t * from_ts->channels]) << "case " << i << " step " << t;
      }
    }
  }
  // A folder holding NAME_TRAIN.tsv loads too.
  DatasetFiles folder;
  ASSERT_TRUE(load_dataset(kTsvDir, &folder, &error)) << error;
  EXPECT_EQ(folder.train.size(), 40);
  EXPECT_EQ(folder.test.size(), 40);
}

TEST(TsvReaderPlugin, BadLinesNameFileLineAndColumn) {
  manager();
  QTemporaryDir dir;
  Dataset d;
  std::string error;
  const auto load = [&](const std::string& path) {
    const DatasetReader* reader = nullptr;
    for (const DatasetReader& r : dataset_readers()) {
      if (r.name == "tsv_reader plugin") reader = &r;
    }
    EXPECT_NE(reader, nullptr);
    return reader && reader->load(path, &d, &error);
  };
  std::string path = write_file(dir, "bad.tsv", "1\t0.5\t0.25\n2\t0.5\tabc\t1\n");
  EXPECT_FALSE(load(path));
  EXPECT_EQ(error, path + ":2:7: 'abc' is not a number");
  path = write_file(dir, "empty.tsv", "\n\n");
  EXPECT_FALSE(load(path));
  EXPECT_EQ(error, path + ": no cases (empty file)");
  path = write_file(dir, "comma.tsv", "1,0.5,0.25\n");
  EXPECT_FALSE(load(path));
  EXPECT_EQ(error,
            path + ":1: no tab after the label (a UCR .tsv line is: label TAB value TAB ...)");
  path = write_file(dir, "nan.tsv", "1\tNaN\tNaN\n");
  EXPECT_FALSE(load(path));
  EXPECT_EQ(error, path + ":1: case '1' has no values");
  // UCR pads variable-length series with NaN: trimmed; a NaN inside is a missing value.
  path = write_file(dir, "ragged.tsv", "-1\t1\tNaN\t3\tNaN\n1\t4\t5\t6\t7\r\n");
  ASSERT_TRUE(load(path)) << error;
  EXPECT_EQ(d.lengths, (std::vector<int>{3, 4}));
  EXPECT_EQ(d.missing_values, 1);
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"-1", "1"}));
  EXPECT_EQ(d.labels, (std::vector<int>{0, 1}));
}

TEST(PluginManager, StateRoundTripsAndKeepsStatesOfAbsentPlugins) {
  QJsonObject state = manager().saveState();
  EXPECT_EQ(state["tsv_reader"].toObject()["trim_trailing_nan"].toBool(false), true);
  state["tsv_reader"] = QJsonObject{{"trim_trailing_nan", false}};
  state["gru_plugin_test"] = QJsonObject{{"note", "kept"}};
  state["not_installed_here"] = QJsonObject{{"x", 1}};
  manager().restoreState(state);
  const QJsonObject saved = manager().saveState();
  EXPECT_EQ(saved, state);
  // The restored setting is in effect: the NaN pad stays.
  QTemporaryDir dir;
  DatasetFiles files;
  std::string error;
  ASSERT_TRUE(load_dataset(write_file(dir, "pad.tsv", "1\t1\t2\tNaN\n"), &files, &error)) << error;
  EXPECT_EQ(files.train.lengths, std::vector<int>{3});
  manager().restoreState(QJsonObject{{"tsv_reader", QJsonObject{{"trim_trailing_nan", true}}}});
  ASSERT_TRUE(load_dataset(dir.filePath("pad.tsv").toStdString(), &files, &error)) << error;
  EXPECT_EQ(files.train.lengths, std::vector<int>{2});
}

TEST(PluginManager, CellPluginRegistersItsCellAndItsOp) {
  const PluginRecord* cell = record("gru_plugin_test");
  ASSERT_NE(cell, nullptr);
  ASSERT_TRUE(cell->loaded) << cell->problem.toStdString();
  EXPECT_EQ(cell->cells, QStringList{"gru_plugin_test (op GRUWB_GRU_PLUGIN_TEST)"});
  const tools::CellDescriptor* d = tools::find_cell("gru_plugin_test");
  ASSERT_NE(d, nullptr);
  EXPECT_STREQ(d->display_name, "GRU (plugin test)");
  EXPECT_NE(tools::cell_names_text().find("gru_plugin_test"), std::string::npos);
  const KernelRegistration* kernel = default_op_resolver().find(kOpCustom, "GRUWB_GRU_PLUGIN_TEST");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->eval, default_op_resolver().find(kOpCustom, "GRUWB_GRU")->eval);
  EXPECT_EQ(default_op_resolver().count, kAllOpCount + 1);
  EXPECT_EQ(all_ops().find(kOpCustom, "GRUWB_GRU_PLUGIN_TEST"), nullptr);  // the engine's own
}

TEST(PluginManager, RefusesAPluginBuiltForAnotherSdkWithoutRunningIt) {
  PluginManager other("gruwb");
  const PluginRecord& r = other.loadFile(kSdk999Plugin);  // its constructor would abort
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.sdk, 999);
  EXPECT_EQ(r.problem.toStdString(),
            "plugin sdk999_plugin built for SDK 999; this gruwb has SDK 1 (" +
                kSdk999Plugin.toStdString() + ")");
  EXPECT_EQ(other.problems(), QStringList{r.problem});
}

TEST(PluginManager, BrokenFilesGiveOneLineEach) {
  QTemporaryDir dir;
  write_file(dir, "libgarbage.so", QByteArray(4096, '\x5a'));
  write_file(dir, "libtext.so", "this is not a library\n");
  write_file(dir, "libempty.so", "");
  QFile real(kTsvReader);
  ASSERT_TRUE(real.open(QIODevice::ReadOnly));
  write_file(dir, "libtruncated.so", real.read(6000));  // ELF header, then nothing
  write_file(dir, "README.txt", "not a library name: not tried\n");
  PluginManager other("gruwb");
  other.loadFolders({dir.path(), dir.path() + "/absent"});
  ASSERT_EQ(other.records().size(), 4u);
  for (const PluginRecord& r : other.records()) {
    EXPECT_FALSE(r.loaded) << r.path.toStdString();
    EXPECT_FALSE(r.problem.isEmpty());
    EXPECT_FALSE(r.problem.contains('\n')) << r.problem.toStdString();
    EXPECT_TRUE(r.problem.startsWith(r.path + ": cannot read plugin metadata: the file "))
        << r.problem.toStdString();
  }
  EXPECT_EQ(other.records()[0].problem,
            dir.filePath("libempty.so") + ": cannot read plugin metadata: the file is empty");
  EXPECT_EQ(other.records()[1].problem,
            dir.filePath("libgarbage.so") +
                ": cannot read plugin metadata: the file is not a valid ELF object (invalid "
                "signature)");
  EXPECT_EQ(other.problems().size(), 4);
}

TEST(PluginManager, ASecondCopyOfALoadedPluginIsSkipped) {
  manager();
  QTemporaryDir dir;
  ASSERT_TRUE(QFile::copy(kTsvReader, dir.filePath("tsv_reader.so")));
  PluginManager other("gruwb");
  other.loadFile(kTsvReader);
  const PluginRecord& copy = other.loadFile(dir.filePath("tsv_reader.so"));
  EXPECT_FALSE(copy.loaded);
  EXPECT_EQ(copy.problem, "plugin tsv_reader (" + dir.filePath("tsv_reader.so") +
                              "): skipped, already loaded from " + kTsvReader);
  // The first copy is loaded, but its format is already registered (by manager()).
  ASSERT_TRUE(other.records()[0].loaded);
  EXPECT_EQ(other.records()[0].warnings.size(), 1);
  EXPECT_TRUE(other.records()[0].warnings[0].contains(".tsv refused"));
}

TEST(PluginManager, ListingsShowLoadedAndRefusedPlugins) {
  PluginManager other("gruwb");
  other.loadFile(kSdk999Plugin);
  const QJsonObject json = plugins_json(other, {"/a", "/b"});
  EXPECT_EQ(json["sdk"].toInt(), 1);
  EXPECT_EQ(json["folders"].toArray().size(), 2);
  const QJsonObject p = json["plugins"].toArray()[0].toObject();
  EXPECT_FALSE(p["loaded"].toBool());
  EXPECT_EQ(p["sdk"].toInt(), 999);
  EXPECT_TRUE(p["problem"].toString().contains("built for SDK 999"));
  const std::string text = plugins_text(other, {"/a"});
  EXPECT_NE(text.find("0 loaded, 1 refused"), std::string::npos) << text;
  EXPECT_NE(text.find("sdk999_plugin  REFUSED"), std::string::npos) << text;
}

TEST(PluginFolders, SearchOrderStartsWithTheEnvironment) {
  qputenv("GRUWB_PLUGIN_PATH", "/first:/second");
  const QStringList folders = plugin_folders();
  qunsetenv("GRUWB_PLUGIN_PATH");
  ASSERT_GE(folders.size(), 4);
  EXPECT_EQ(folders[0], "/first");
  EXPECT_EQ(folders[1], "/second");
  EXPECT_TRUE(folders[2].endsWith("/plugins"));  // the user's
  EXPECT_TRUE(folders.contains(GRUWB_INSTALL_PREFIX "/lib/gru-workbench/plugins"));
  EXPECT_EQ(folders.back(), GRUWB_BUILD_PLUGIN_DIR);  // this test runs from the build tree
}

TEST(TransportSchemes, UnknownSchemeNamesTheKnownOnes) {
  serial::PortOptions port;
  port.path = "nosuch://127.0.0.1:1";
  std::string why, error;
  EXPECT_EQ(serial::open_transport(port, &why, &error), nullptr);
  EXPECT_EQ(error.rfind("nosuch://127.0.0.1:1: no transport for 'nosuch://'", 0), 0u) << error;
}

}  // namespace
}  // namespace gruwb::app
