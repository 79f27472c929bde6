// `gruwb plugins` and plugins seen by every command, running the built gruwb as a user
// would, with GRUWB_PLUGIN_PATH naming the test plugins' folders. The build's plugin folder
// (the tsv_reader example) is searched too, since this gruwb runs from its build tree.

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include "app/core/dataset.h"
#include "engine/tools/npy.h"

namespace {

const QString kCellDir = QStringLiteral(GRUWB_TEST_PLUGIN_DIR "/cell");
const QString kSdk999Dir = QStringLiteral(GRUWB_TEST_PLUGIN_DIR "/sdk999");
const QString kTsvTrain = QStringLiteral(
    GRUWB_SOURCE_DIR "/tests/fixtures/datasets/BasicMotionsAccX/BasicMotionsAccX_TRAIN.tsv");

struct CliRun {
  int exit_code = -1;
  QString out, err;
};

CliRun gruwb(const QStringList& args, const QString& plugin_path) {
  QProcess process;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("GRUWB_PLUGIN_PATH", plugin_path);
  process.setProcessEnvironment(env);
  process.start(QStringLiteral(GRUWB_CLI), args);
  CliRun run;
  if (!process.waitForFinished(120000) || process.exitStatus() != QProcess::NormalExit) {
    ADD_FAILURE() << "gruwb did not finish normally: " << args.join(' ').toStdString();
    process.kill();
    return run;
  }
  run.exit_code = process.exitCode();
  run.out = QString::fromUtf8(process.readAllStandardOutput());
  run.err = QString::fromUtf8(process.readAllStandardError());
  return run;
}

QJsonObject plugin_named(const QJsonObject& listing, const QString& name) {
  for (const QJsonValue& p : listing["plugins"].toArray()) {
    if (p.toObject()["name"].toString() == name) return p.toObject();
  }
  return {};
}

TEST(GruwbPlugins, ListsLoadedAndRefusedPluginsAsJson) {
  const CliRun run = gruwb({"plugins", "--json"}, kCellDir + ":" + kSdk999Dir);
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  // The refusal is one line on stderr, before any command runs.
  EXPECT_EQ(run.err, "gruwb: plugin sdk999_plugin built for SDK 999; this gruwb has SDK 1 (" +
                         kSdk999Dir + "/sdk999_plugin.so)\n");
  const QJsonObject listing = QJsonDocument::fromJson(run.out.toUtf8()).object();
  EXPECT_EQ(listing["sdk"].toInt(), 1);
  const QJsonArray folders = listing["folders"].toArray();
  ASSERT_GE(folders.size(), 3);
  EXPECT_EQ(folders[0].toString(), kCellDir);
  EXPECT_EQ(folders[1].toString(), kSdk999Dir);
  EXPECT_EQ(folders.last().toString(), GRUWB_BUILD_PLUGIN_DIR);

  const QJsonObject cell = plugin_named(listing, "gru_plugin_test");
  EXPECT_TRUE(cell["loaded"].toBool());
  EXPECT_EQ(cell["sdk"].toInt(), 1);
  EXPECT_EQ(cell["version"].toString(), "0.1");
  EXPECT_EQ(cell["path"].toString(), kCellDir + "/gru_plugin_test.so");
  EXPECT_EQ(cell["cells"].toArray(), QJsonArray{"gru_plugin_test (op GRUWB_GRU_PLUGIN_TEST)"});
  const QJsonObject tsv = plugin_named(listing, "tsv_reader");
  EXPECT_TRUE(tsv["loaded"].toBool());
  EXPECT_EQ(tsv["dataset_formats"].toArray(), QJsonArray{".tsv"});
  const QJsonObject tcp = plugin_named(listing, "tcp_transport");
  EXPECT_TRUE(tcp["loaded"].toBool());
  EXPECT_EQ(tcp["transports"].toArray(), QJsonArray{"tcp"});
  const QJsonObject refused = plugin_named(listing, "sdk999_plugin");
  EXPECT_FALSE(refused["loaded"].toBool());
  EXPECT_EQ(refused["sdk"].toInt(), 999);
  EXPECT_TRUE(refused["problem"].toString().startsWith("plugin sdk999_plugin built for SDK 999"));
}

TEST(GruwbPlugins, TextListingAndHelp) {
  const CliRun run = gruwb({"plugins"}, kCellDir);
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.err.isEmpty()) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("3 loaded, 0 refused")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("  cells: gru_plugin_test (op GRUWB_GRU_PLUGIN_TEST)"));
  EXPECT_TRUE(run.out.contains("  dataset formats: .tsv"));
  EXPECT_TRUE(run.out.contains("  transports: tcp://"));
  // Help texts list the registered cells, the plugin's among them.
  const CliRun help = gruwb({"build", "--help"}, kCellDir);
  EXPECT_TRUE(help.out.contains("gru_plugin_test")) << help.out.toStdString();
  EXPECT_FALSE(gruwb({"build", "--help"}, "").out.contains("gru_plugin_test"));
  EXPECT_EQ(gruwb({"plugins", "extra"}, "").exit_code, 2);
}

// A cell type from a plugin builds (build_and_measure prepares the model, so the plugin's
// op must be in the table) and its fused op, the plugin's kernel, computes what the WHILE
// layout computes with the engine's own ops, on real data (BasicMotions' first case).
TEST(GruwbPlugins, BuildsAndRunsAPluginCell) {
  QTemporaryDir dir;
  const auto build = [&](const QString& layout) {
    return QStringList{"build",
                       "--cell",
                       "gru_plugin_test",
                       "--layout",
                       layout,
                       "--timesteps",
                       "12",
                       "--features",
                       "3",
                       "--units",
                       "8",
                       "--classes",
                       "4",
                       "--seed",
                       "7",
                       "-o",
                       dir.filePath(layout + ".tflite")};
  };
  for (const QString layout : {"fused", "while"}) {
    const CliRun built = gruwb(build(layout), kCellDir);
    ASSERT_EQ(built.exit_code, 0) << built.err.toStdString() << built.out.toStdString();
  }
  QFile fused_file(dir.filePath("fused.tflite"));
  ASSERT_TRUE(fused_file.open(QIODevice::ReadOnly));
  EXPECT_TRUE(fused_file.readAll().contains("GRUWB_GRU_PLUGIN_TEST"));

  gruwb::app::DatasetFiles data;
  std::string error;
  ASSERT_TRUE(
      gruwb::app::load_dataset(GRUWB_SHARED_DIR "/data/datasets/BasicMotions", &data, &error))
      << error;
  gruwb::tools::NpyArray window;
  window.dtype = "<f4";
  window.shape = {1, 12, 3};
  std::vector<float> values;
  for (int t = 0; t < 12; ++t) {
    for (int c = 0; c < 3; ++c) values.push_back(data.train.series[0][t * 6 + c]);
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  window.data.assign(bytes, bytes + values.size() * sizeof(float));
  const std::string input = dir.filePath("window.npy").toStdString();
  ASSERT_TRUE(gruwb::tools::write_npy(input, window, &error)) << error;
  std::vector<double> outputs[2];
  int k = 0;
  for (const QString layout : {"fused", "while"}) {
    const CliRun ran = gruwb({"run", dir.filePath(layout + ".tflite"), "--input",
                           QString::fromStdString(input), "--json"},
                          kCellDir);
    ASSERT_EQ(ran.exit_code, 0) << ran.err.toStdString();
    const QJsonObject json = QJsonDocument::fromJson(ran.out.toUtf8()).object();
    for (const QJsonValue& v : json["outputs"].toArray()[0].toObject()["data"].toArray()) {
      outputs[k].push_back(v.toDouble());
    }
    ++k;
  }
  ASSERT_EQ(outputs[0].size(), 4u);
  ASSERT_EQ(outputs[1].size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(outputs[0][i], outputs[1][i], 1e-5) << i;

  // Without the plugin the cell is unknown and its op has no kernel.
  const CliRun no_cell = gruwb(build("fused"), "");
  EXPECT_EQ(no_cell.exit_code, 2);
  EXPECT_TRUE(no_cell.err.contains("gru_plugin_test")) << no_cell.err.toStdString();
  const CliRun no_op =
      gruwb({"run", dir.filePath("fused.tflite"), "--input", QString::fromStdString(input)}, "");
  EXPECT_EQ(no_op.exit_code, 2);
  EXPECT_TRUE(no_op.err.contains("GRUWB_GRU_PLUGIN_TEST")) << no_op.err.toStdString();
}

TEST(GruwbPlugins, DataCommandReadsAPluginFormat) {
  const CliRun run = gruwb({"data", kTsvTrain}, "");
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_TRUE(run.out.contains("BasicMotionsAccX")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("40")) << run.out.toStdString();
}

TEST(GruwbPlugins, ABrokenPluginIsOneLineAndTheCommandStillRuns) {
  QTemporaryDir dir;
  QFile broken(dir.filePath("libbroken.so"));
  ASSERT_TRUE(broken.open(QIODevice::WriteOnly));
  broken.write(QByteArray(2048, '\x01'));
  broken.close();
  const CliRun run = gruwb({"plugins", "--json"}, dir.path());
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
  EXPECT_EQ(run.err, "gruwb: " + dir.filePath("libbroken.so") +
                         ": cannot read plugin metadata: the file is not a valid ELF object "
                         "(invalid signature)\n")
      << run.err.toStdString();
}

}  // namespace
