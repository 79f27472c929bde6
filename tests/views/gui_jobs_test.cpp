// Issue 20, points 1, 2, 4 and 7: every job of the CLI in the window. Export
// Model (the open model and a finished stage's trained weights, the type from
// the extension), Fuse (report, sizes, the fused model beside the original),
// datasets and build specs checked when chosen (the error in full, the previous
// dataset kept), and the user's own model in the cell comparison.

#include <QCheckBox>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "app/core/export.h"
#include "app/gui/main_window.h"
#include "app/gui/model_export.h"
#include "app/gui/training_workspace.h"
#include "engine/tools/model_file.h"
#include "views/comparison_table.h"
#include "views/experiment_panel.h"
#include "views/fuse_view.h"
#include "views/graph_view.h"

using gruwb::gui::MainWindow;
using gruwb::gui::TrainingWorkspace;
using gruwb::views::ExperimentPanel;
using gruwb::views::ExperimentSettings;
using gruwb::views::FuseView;

namespace {

const QString kSamples = QString(GRUWB_SOURCE_DIR) + "/resources/samples/";
const QString kFused = kSamples + "gesture_gru_fused.tflite";  // input [1,60,3], 4 classes
const QString kWhile = kSamples + "gesture_gru_while.tflite";
const QString kAcc60 = kSamples + "BasicMotionsAcc60_TRAIN.ts";  // 3 channels, 60 steps
const QString kSixChannels = kSamples + "BasicMotions_TRAIN.ts";

QByteArray readAll(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The flatbuffer file identifier: "TFL3" or "CIR0".
QByteArray identifier(const QString& path) { return readAll(path).mid(4, 4); }

bool loads(const QString& path) {
  gruwb::tools::LoadedModel model;
  std::string error;
  return gruwb::tools::load_model_file(QFile::encodeName(path).toStdString(), &model, &error);
}

}  // namespace

class GuiJobsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir temp_;

 private slots:
  void initTestCase() {
    QVERIFY(temp_.isValid());
    QCoreApplication::setOrganizationName("GRU Workbench Tests");
    QCoreApplication::setApplicationName("gui_jobs_test");
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, temp_.path());
  }

  void init() { QSettings().clear(); }

  // Point 1: the file type follows the extension, everywhere a model is saved.
  void extensionPicksTheExportType() {
    using gruwb::app::ExportTarget;
    ExportTarget target{};
    std::string error;
    QVERIFY(gruwb::app::export_target_for_path("a/model.circle", &target, &error));
    QCOMPARE(int(target), int(ExportTarget::kCircle));
    QVERIFY(gruwb::app::export_target_for_path("model.TFLITE", &target, &error));
    QCOMPARE(int(target), int(ExportTarget::kTflite));
    QVERIFY(gruwb::app::export_target_for_path("model_data.h", &target, &error));
    QCOMPARE(int(target), int(ExportTarget::kCArray));
    QVERIFY(gruwb::app::export_target_for_path("out/gesture_lib", &target, &error));
    QCOMPARE(int(target), int(ExportTarget::kFirmwareLib));
    QVERIFY(!gruwb::app::export_target_for_path("model.png", &target, &error));
    QVERIFY2(error.find("'.png'") != std::string::npos, error.c_str());
    // A name typed without an extension gets the chosen filter's.
    const QStringList filters = gruwb::gui::modelExportFilters().split(";;");
    QCOMPARE(gruwb::gui::withExportExtension("/x/m", filters[1]), QString("/x/m.circle"));
    QCOMPARE(gruwb::gui::withExportExtension("/x/m", filters[2]), QString("/x/m.h"));
    QCOMPARE(gruwb::gui::withExportExtension("/x/m", filters[3]), QString("/x/m"));
    QCOMPARE(gruwb::gui::withExportExtension("/x/m.tflite", filters[1]), QString("/x/m.tflite"));
  }

  // Point 1: File > Export Model writes the open model as .tflite, .circle, a
  // C array and a firmware library, says so in the window, and refuses an
  // unknown type with the reason.
  void exportModelWritesEveryType() {
    MainWindow window;
    QVERIFY(!window.exportModelAction()->isEnabled());
    QVERIFY(window.openModel(kFused));
    QVERIFY(window.exportModelAction()->isEnabled());

    const QString circle = temp_.filePath("gesture.circle");
    QVERIFY2(window.exportModel(circle), qPrintable(window.errorText()));
    QCOMPARE(identifier(circle), QByteArray("CIR0"));
    QVERIFY(loads(circle));
    QVERIFY2(window.noticeText().contains("gesture.circle"), qPrintable(window.noticeText()));
    QVERIFY(window.errorText().isEmpty());

    const QString tflite = temp_.filePath("gesture_copy.tflite");
    QVERIFY(window.exportModel(tflite));
    QCOMPARE(identifier(tflite), QByteArray("TFL3"));
    QVERIFY(loads(tflite));

    const QString header = temp_.filePath("model_data.h");
    QVERIFY(window.exportModel(header));
    const QByteArray h = readAll(header);
    QVERIFY(h.contains("extern const unsigned char gesture_gru_fused_tflite[]"));
    const QByteArray cc = readAll(temp_.filePath("model_data.cc"));
    QVERIFY(cc.contains("alignas(16)"));
    QVERIFY(cc.contains(QByteArray::number(QFileInfo(kFused).size())));

    const QString lib = temp_.filePath("gesture_lib");
    QVERIFY2(window.exportModel(lib), qPrintable(window.errorText()));
    QVERIFY(QFileInfo(lib + "/gruwb_model.h").isFile());
    QVERIFY(window.noticeText().contains("firmware-lib"));

    QVERIFY(!window.exportModel(temp_.filePath("gesture.png")));
    QVERIFY2(window.errorText().contains("unknown model file type '.png'"),
             qPrintable(window.errorText()));
    QVERIFY(!QFileInfo::exists(temp_.filePath("gesture.png")));
    QCOMPARE(window.currentPath(), kFused);  // the document is untouched
  }

  // Point 1: a finished stage's trained weights export; a stage that did
  // not train says so instead of writing the initial model.
  void trainedStageExports() {
    TrainingWorkspace workspace;
    ExperimentSettings s;
    s.name = "export me";
    s.model_path = kFused;
    s.dataset_path = kAcc60;
    s.stages = {"init", "fc"};
    s.epochs = 1;
    s.batch_size = 8;
    s.learning_rate = 0.05;
    workspace.startExperiment(s);
    QVERIFY(workspace.waitForIdle(90000));
    QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
    const auto& rows = workspace.comparisonTable()->stageResults();
    QCOMPARE(rows.size(), 2);
    QCOMPARE(rows[1].stage, QString("fc"));

    QString message;
    const QString circle = temp_.filePath("trained_fc.circle");
    QVERIFY2(workspace.exportStageModel(1, circle, &message), qPrintable(message));
    QVERIFY2(message.contains("seed 1"), qPrintable(message));
    QCOMPARE(identifier(circle), QByteArray("CIR0"));
    QVERIFY(loads(circle));
    const QString tflite = temp_.filePath("trained_fc.tflite");
    QVERIFY(workspace.exportStageModel(1, tflite, &message));
    QCOMPARE(identifier(tflite), QByteArray("TFL3"));
    // Trained: other weights than the source's.
    QVERIFY(readAll(tflite) != readAll(kFused));
    QVERIFY(workspace.exportStageModel(1, temp_.filePath("trained_fc.cc"), &message));
    QVERIFY(readAll(temp_.filePath("trained_fc.h")).contains("export_me_fc_tflite"));

    QVERIFY(!workspace.exportStageModel(0, temp_.filePath("init.tflite"), &message));
    QVERIFY2(message.contains("no trained model"), qPrintable(message));
    QVERIFY(!QFileInfo::exists(temp_.filePath("init.tflite")));
    // Selecting a row in the table is what the dialog exports.
    workspace.comparisonTable()->stageTable()->selectRow(1);
    QCOMPARE(workspace.exportStageRow(), 1);
  }

  // Point 2: Fuse runs the fuser on the open model, shows its report and the
  // sizes before/after, and the fused graph beside the original (which stays
  // the window's document); the fused file opens as a second document.
  void fuseShowsTheFusedModelBesideTheOriginal() {
    MainWindow window;
    QVERIFY(!window.fuseAction()->isEnabled());
    QVERIFY(window.openModel(kWhile));
    QVERIFY(window.fuseAction()->isEnabled());
    // The WHILE node's note is a link to Fuse, not a command to type.
    bool linked = false;
    for (QGraphicsItem* item : window.graphView()->scene()->items()) {
      linked |= item->toolTip().contains("click to fuse into one");
      QVERIFY(!item->toolTip().contains("gruwb fuse"));
    }
    QVERIFY(linked);

    const QString fused = temp_.filePath("gesture_fused.tflite");
    QVERIFY2(window.fuseModel(fused), qPrintable(window.errorText()));
    QVERIFY(loads(fused));
    QCOMPARE(window.currentPath(), kWhile);  // the original stays open
    FuseView* view = window.fuseView();
    QVERIFY(view && window.fuseDialog()->isVisible());
    QCOMPARE(view->fusedPath(), fused);
    QVERIFY2(view->headline()->text().contains("1 of 1 recurrent cells fused"),
             qPrintable(view->headline()->text()));
    QTableWidget* sizes = view->sizeTable();
    const auto number = [&](int row, int column) {
      return sizes->item(row, column)->text().remove(',').toLongLong();
    };
    QCOMPARE(number(FuseView::kBytes, FuseView::kBeforeColumn), QFileInfo(kWhile).size());
    QCOMPARE(number(FuseView::kBytes, FuseView::kAfterColumn), QFileInfo(fused).size());
    QVERIFY(number(FuseView::kOps, FuseView::kAfterColumn) <
            number(FuseView::kOps, FuseView::kBeforeColumn));
    QVERIFY(sizes->item(FuseView::kBytes, FuseView::kDifferenceColumn)->text().startsWith("-"));
    QVERIFY(sizes->item(FuseView::kSubgraphs, FuseView::kDifferenceColumn)->text().startsWith("-"));
    QVERIFY(view->reportText()->toPlainText().contains("cell 0:"));
    QVERIFY(view->reportText()->toPlainText().contains("arena bytes"));
    // The fused graph: no WHILE left in the main subgraph.
    QVERIFY(view->graphView()->nodeCount() > 0);
    for (const auto& node : view->graphView()->graph().nodes) QVERIFY(node.title != "WHILE");
    QVERIFY(window.noticeText().contains("gesture_fused.tflite"));

    // Beside the original: a second document, and a row of the comparison.
    MainWindow* second = window.openInNewWindow(fused);
    QVERIFY(second);
    QCOMPARE(second->currentPath(), fused);
    QCOMPARE(window.currentPath(), kWhile);
    second->close();
    emit view->compareRequested(fused);
    QVERIFY(window.trainingWorkspace()->panel()->compareModels().contains(fused));

    // A model the fuser cannot read: the reason in the banner, nothing written.
    QVERIFY(!window.fuseModel(temp_.filePath("nowhere/x.tflite")));
    QVERIFY(!window.errorText().isEmpty());
  }

  // Tools > Quantize (the CLI's `gruwb quantize` in the window): calibrated on the chosen
  // dataset, the report shown beside the model, which stays open; refused without a dataset.
  void quantizeWritesTheIntegerModelAndItsReport() {
    MainWindow window;
    QVERIFY(!window.quantizeAction()->isEnabled());
    QVERIFY(window.openModel(kFused));
    QVERIFY(window.quantizeAction()->isEnabled());
    const QString out = temp_.filePath("gesture_int8.tflite");
    QVERIFY(!window.quantizeModel(out));
    QVERIFY2(window.errorText().contains("choose a dataset"), qPrintable(window.errorText()));
    QVERIFY(!QFileInfo::exists(out));

    QVERIFY(window.openDataset(kAcc60));
    QVERIFY2(window.quantizeModel(out), qPrintable(window.errorText()));
    QVERIFY(loads(out));
    QVERIFY(QFileInfo(out).size() < QFileInfo(kFused).size() / 2);  // int8 weights
    QCOMPARE(window.currentPath(), kFused);
    QVERIFY(window.quantizeDialog()->isVisible());
    const QString report = window.quantizeReport()->toPlainText();
    QVERIFY2(report.contains("quantized: 3 ops, kept float: 0"), qPrintable(report));
    QVERIFY2(report.contains("GRUWB_GRU") && report.contains("max |float - quantized|"),
             qPrintable(report));
    QVERIFY2(window.noticeText().contains("gesture_int8.tflite"), qPrintable(window.noticeText()));

    // dynamic range: float activations, int8 weights; an unknown mode is refused.
    const QString dynamic = temp_.filePath("gesture_dynamic.tflite");
    QVERIFY2(window.quantizeModel(dynamic, "dynamic"), qPrintable(window.errorText()));
    QVERIFY(loads(dynamic));
    QVERIFY(!window.quantizeModel(temp_.filePath("x.tflite"), "int4"));
    QVERIFY(window.errorText().contains("int4"));
  }

  // Point 2: clicking the note of a fusable cell asks for Fuse (the window
  // connects it to Tools > Fuse); a click elsewhere on the node does not.
  void noteClickAsksForFuse() {
    MainWindow window;
    QVERIFY(window.openModel(kWhile));
    gruwb::views::GraphView view;  // a view of its own: the window's would open a file dialog
    view.setReport(window.report());
    int while_node = -1;
    for (int n = 0; n < view.nodeCount(); ++n) {
      if (view.graph().nodes[n].title == "WHILE") while_node = n;
    }
    QVERIFY(while_node >= 0);
    const int op = view.graph().nodes[while_node].op;
    view.setOpNote(0, op, "GRU cell (while): click to fuse into one GRUWB_GRU");
    QSignalSpy asked(&view, &gruwb::views::GraphView::noteActivated);
    view.noteClicked(while_node);
    QCOMPARE(asked.count(), 1);
    QCOMPARE(asked.at(0).at(0).toInt(), 0);
    QCOMPARE(asked.at(0).at(1).toInt(), op);
  }

  void sizeDifferenceText() {
    QCOMPARE(gruwb::views::size_difference_text(20000, 8000), QString("-12,000 (-60.0 %)"));
    QCOMPARE(gruwb::views::size_difference_text(100, 101), QString("+1 (+1.0 %)"));
    QCOMPARE(gruwb::views::size_difference_text(5, 5), QString("0"));
  }

  // Point 4: a dataset is read and fitted to the open model when opened; a
  // file that does not fit keeps the previous dataset and says why in full.
  void datasetCheckedWhenOpened() {
    MainWindow window;
    QVERIFY(window.openModel(kFused));
    QVERIFY2(window.openDataset(kAcc60), qPrintable(window.errorText()));
    QCOMPARE(window.datasetPath(), kAcc60);

    QVERIFY(!window.openDataset(kSixChannels));
    QCOMPARE(window.datasetPath(), kAcc60);
    QCOMPARE(window.trainingWorkspace()->panel()->settings().dataset_path, kAcc60);
    const QString error = window.errorText();
    QVERIFY2(error.contains("BasicMotions_TRAIN.ts: 6 channels, model " + kFused + " takes 3"),
             qPrintable(error));

    const QString corrupt = temp_.filePath("corrupt_TRAIN.ts");
    QFile file(corrupt);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("@problemName x\n@data\n1.0,2.0:walking\nnot a number here at all\n");
    file.close();
    QVERIFY(!window.openDataset(corrupt));
    QCOMPARE(window.datasetPath(), kAcc60);
    QVERIFY2(window.errorText().contains("corrupt_TRAIN.ts"), qPrintable(window.errorText()));
  }

  // Point 4: the panel's own Browse goes through the same check; a build spec
  // is checked before Start, with the reason shown in the panel.
  void panelChecksDatasetAndBuildSpec() {
    TrainingWorkspace workspace;
    ExperimentPanel* panel = workspace.panel();
    panel->setModelPath(kFused);
    QVERIFY(panel->chooseDataset(kAcc60));
    QVERIFY(!panel->chooseDataset(kSixChannels));
    QCOMPARE(panel->settings().dataset_path, kAcc60);
    QVERIFY2(panel->datasetError().contains("6 channels"), qPrintable(panel->datasetError()));
    QVERIFY(panel->startButton()->isEnabled());  // the previous dataset still trains

    ExperimentSettings s = panel->settings();
    s.model_path.clear();
    s.build_spec = kFused;  // a path typed where a build spec goes
    panel->setSettings(s);
    QVERIFY2(panel->validate().contains("is a model file"), qPrintable(panel->validate()));
    QVERIFY(!panel->startButton()->isEnabled());
    s.build_spec = "cell=gru,units=0";
    panel->setSettings(s);
    QVERIFY2(panel->validate().contains("bad item 'units=0'"), qPrintable(panel->validate()));
    QVERIFY(!panel->startButton()->isEnabled());
    s.build_spec = "cell=gru,units=4";
    panel->setSettings(s);
    QVERIFY(panel->validate().isEmpty());
  }

  // Point 7: with a model file staged, Compare cells is on offer; the model
  // is a row beside the built cells and every row says which model it used.
  void ownModelJoinsTheCellComparison() {
    TrainingWorkspace workspace;
    ExperimentPanel* panel = workspace.panel();
    panel->setModelPath(kFused);
    panel->setDatasetPath(kAcc60);
    QVERIFY(panel->compareCellsBox()->isEnabled());
    ExperimentSettings s = panel->settings();
    s.name = "mine vs cells";
    s.build_spec = "cell=gru,units=4";
    s.compare_cells = {"gru", "lstm"};
    s.stages = {"init"};
    panel->setSettings(s);
    const ExperimentSettings staged = panel->settings();
    QCOMPARE(staged.model_path, kFused);
    QCOMPARE(staged.compare_cells.size(), 2);
    QVERIFY2(panel->validate().isEmpty(), qPrintable(panel->validate()));
    workspace.startExperiment(staged);
    QVERIFY(workspace.waitForIdle(120000));
    QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
    const auto& cells = workspace.comparisonTable()->cellResults();
    QCOMPARE(cells.size(), 3);
    QCOMPARE(cells[0].cell, QString("GRU"));
    QCOMPARE(cells[1].cell, QString("LSTM"));
    QCOMPARE(cells[2].cell, QString("gesture_gru_fused.tflite"));
    QCOMPARE(cells[0].model, QString("built cell=gru,units=4, input [1,60,3]"));
    QCOMPARE(cells[1].model, QString("built cell=lstm,units=4, input [1,60,3]"));
    QCOMPARE(cells[2].model, kFused);
    QVERIFY(cells[2].error.isEmpty());
    QVERIFY(cells[2].accuracy >= 0 && cells[2].accuracy <= 1);
    QTableWidget* table = workspace.comparisonTable()->cellTable();
    const int model_column = gruwb::views::ComparisonTable::kCellModelColumn;
    QCOMPARE(table->horizontalHeaderItem(model_column)->text(), QString("Model used"));
    QCOMPARE(table->item(2, model_column)->text(), kFused);
    QVERIFY(table->item(0, model_column)->text().startsWith("built cell=gru"));
  }
};

QTEST_MAIN(GuiJobsTest)
#include "gui_jobs_test.moc"
