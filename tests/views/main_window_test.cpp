// The gru-workbench main window: opening, dropping, reloading and recent
// files on real models, and bad input that must never replace the open model.

#include "app/gui/main_window.h"

#include <qcustomplot.h>

#include <QAction>
#include <QBuffer>
#include <QDialog>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonObject>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeWidget>
#include <QUrl>
#include <QtTest>

#include "app/core/bundled_files.h"
#include "app/core/dataset.h"
#include "app/gui/project_file.h"
#include "app/gui/training_workspace.h"
#include "views/comparison_table.h"
#include "views/dataset_view.h"
#include "views/experiment_panel.h"
#include "views/graph_view.h"
#include "views/model_report_view.h"
#include "views/size_view.h"
#include "views/tensor_inspector.h"
#include "views/welcome_page.h"

using gruwb::gui::MainWindow;
using gruwb::views::ModelReportView;

namespace {

QString modelPath(const char* name) {
  return QString(GRUWB_SHARED_DIR) + "/data/models/tflite/" + name;
}

const QString kHello = modelPath("tflm_hello_world_float.tflite");
const QString kWhile = modelPath("litert_multi_subgraphs_while.tflite");

int opCount(const ModelReportView* view, int subgraph) {
  QTreeWidgetItem* item = view->subgraphItem(subgraph);
  for (int i = 0; item && i < item->childCount(); ++i) {
    if (item->child(i)->text(0) == "Operators") return item->child(i)->childCount();
  }
  return -1;
}

// True when some summary row shows `text`.
bool summaryShows(const ModelReportView* view, const QString& text) {
  QTreeWidgetItem* summary = view->summaryItem();
  for (int i = 0; summary && i < summary->childCount(); ++i) {
    for (int c = 0; c < ModelReportView::kColumnCount; ++c) {
      if (summary->child(i)->text(c).contains(text)) return true;
    }
  }
  return false;
}

// The headline table of the report `training` exports for its selected
// experiment (or why there is none).
QString exportedHeadline(const gruwb::gui::TrainingWorkspace* training, const QString& path) {
  QString error;
  if (!training->exportReport(path, &error)) return "export failed: " + error;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return QString();
  const QString html = QString::fromUtf8(file.readAll());
  const qsizetype start = html.indexOf("<h2>Results on the test split</h2>");
  return start < 0 ? QString() : html.mid(start, html.indexOf("</table>", start) - start);
}

bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

QByteArray readFile(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Sends drag-enter and, if `drop`, a drop of `path` onto the window, the way
// a file manager would. Returns whether the drag-enter was accepted.
bool dragFile(MainWindow* window, const QString& path, bool drop = true) {
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(path)});
  const QPoint where = window->rect().center();
  QDragEnterEvent enter(where, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window, &enter);
  if (drop) {
    QDropEvent event(QPointF(where), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window, &event);
  }
  return enter.isAccepted();
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir temp_;

 private slots:
  void initTestCase() {
    QVERIFY(temp_.isValid());
    // Keep the user's recent files out of it: settings go to the temp dir.
    QCoreApplication::setOrganizationName("GRU Workbench Tests");
    QCoreApplication::setApplicationName("main_window_test");
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, temp_.path());
  }

  void init() { QSettings().clear(); }

  // Issue 20, point 3: a 1366x768 laptop screen (less a 32-px panel and the title bar) holds
  // the whole window, status bar included, with a model open and every dock shown.
  void fitsALaptopScreen() {
    MainWindow window;
    QVERIFY(window.openModel(kHello));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QSize minimum = window.minimumSizeHint().expandedTo(window.minimumSize());
    QVERIFY2(minimum.width() <= 1366 && minimum.height() <= 700,
             qPrintable(QString("minimum %1x%2").arg(minimum.width()).arg(minimum.height())));
    // Start/Pause/Stop stay visible below the Experiments form, which scrolls (point 3: they
    // were below the fold at 1366x768).
    window.resize(1366, 705);  // a laptop screen less the desktop's panel and title bar
    auto* experiments = window.findChild<QDockWidget*>("experimentsDock");
    QVERIFY(experiments);
    experiments->raise();
    QTest::qWait(50);
    for (const char* name : {"startExperiment", "pauseExperiment", "stopExperiment"}) {
      auto* button = experiments->findChild<QPushButton*>(name);
      QVERIFY2(button && button->isVisible(), name);
      const QRect visible = button->visibleRegion().boundingRect();
      QVERIFY2(visible.size() == button->size(), qPrintable(QString("%1: %2x%3 of %4x%5 visible")
                                                                .arg(name)
                                                                .arg(visible.width())
                                                                .arg(visible.height())
                                                                .arg(button->width())
                                                                .arg(button->height())));
    }
  }

  // A first start (no saved geometry) opens at 1366x768, and a caller's resize to it holds:
  // the window's minimum was the layout's before the docks were filled, 1389 px, so the
  // window came out wider than a 1366-pixel screen.
  void firstStartFitsALaptopScreen() {
    MainWindow window;
    QCOMPARE(window.size(), QSize(1366, 768));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY2(window.minimumSizeHint().width() <= 1366,
             qPrintable(QString("minimum width %1").arg(window.minimumSizeHint().width())));
    MainWindow other;
    other.resize(1366, 768);
    QCOMPARE(other.width(), 1366);
  }

  // At 1920x1080 the Experiments form has room for Stages and Training side by side (a long
  // check box label in Training once stacked them and squeezed the experiment list).
  void experimentGroupsSideBySideOnAWideScreen() {
    MainWindow window;
    window.resize(1920, 1080);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.dock("experimentsDock")->raise();
    QTest::qWait(50);
    QVERIFY(window.trainingWorkspace()->panel()->groupsSideBySide());
  }

  // Issue 20 point 10: at 1366x768 the graph gets the space (it was 513x389 px, the docks
  // took the rest), and the Tensor dock is wide enough for an op's attributes.
  void graphGetsTheSpaceAtLaptopSize() {
    MainWindow window;
    window.resize(1366, 768);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openModel(QString(GRUWB_SOURCE_DIR) +
                             "/resources/samples/gesture_gru_while.tflite"));
    QTest::qWait(50);
    const QSize graph = window.graphView()->canvas()->viewport()->size();
    QVERIFY2(graph.width() >= 640 && graph.height() >= 430,
             qPrintable(QString("graph %1x%2").arg(graph.width()).arg(graph.height())));
    QVERIFY(window.dock("tensorDock")->width() >= 260);
  }

  // The welcome page's bundled samples are all in sight at 1366x768, without scrolling (they
  // were below the jobs, under the fold).
  void welcomeSamplesAreVisibleAtLaptopSize() {
    MainWindow window;
    window.resize(1366, 768);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.welcomeShown());
    const QStringList samples = window.welcomePage()->samplePaths();
    QVERIFY(samples.size() >= 5);
    int seen = 0;
    for (QToolButton* button : window.welcomePage()->findChildren<QToolButton*>()) {
      if (!samples.contains(button->toolTip())) continue;
      ++seen;
      const QRect visible = button->visibleRegion().boundingRect();
      QVERIFY2(button->isVisible() && visible.size() == button->size(),
               qPrintable(QString("%1: %2x%3 of %4x%5 visible")
                              .arg(button->text())
                              .arg(visible.width())
                              .arg(visible.height())
                              .arg(button->width())
                              .arg(button->height())));
      const QRect in_window(button->mapTo(&window, QPoint(0, 0)), button->size());
      QVERIFY(window.rect().contains(in_window));
    }
    QCOMPARE(seen, samples.size());
  }

  void startsEmptyWithTheAppTitle() {
    MainWindow window;
    QVERIFY(window.windowTitle().contains("GRU Workbench"));
    QVERIFY(window.currentPath().isEmpty());
    QVERIFY(!window.reloadAction()->isEnabled());
    QVERIFY(window.acceptDrops());
  }

  void openingARealModelFillsTheReport() {
    MainWindow window;
    QVERIFY(window.openModel(kHello));
    QCOMPARE(window.currentPath(), kHello);
    QCOMPARE(window.reportView()->subgraphCount(), 1);
    QCOMPARE(opCount(window.reportView(), 0), 3);
    QVERIFY(summaryShows(window.reportView(), "3164"));
    QVERIFY(window.windowTitle().contains("tflm_hello_world_float.tflite"));
    QVERIFY(window.statusBar()->currentMessage().contains("Opened tflm_hello_world_float.tflite"));
    QVERIFY(window.errorText().isEmpty());
    QVERIFY(window.reloadAction()->isEnabled());
  }

  void droppingAModelOpensIt() {
    MainWindow window;
    QVERIFY(window.openModel(kHello));
    QVERIFY(dragFile(&window, kWhile));
    QCOMPARE(window.currentPath(), kWhile);
    QCOMPARE(window.reportView()->subgraphCount(), 3);
    QVERIFY(summaryShows(window.reportView(), "2120"));
  }

  void droppingANonModelFileIsRejected() {
    MainWindow window;
    QVERIFY(window.openModel(kHello));
    const QString readme = QString(GRUWB_SHARED_DIR) + "/data/models/tflite/README.md";
    QVERIFY(!dragFile(&window, readme, /*drop=*/false));  // refused at drag-enter
    QVERIFY2(window.statusBar()->currentMessage().contains(
                 "README.md: not a model, dataset or project file"),
             qPrintable(window.statusBar()->currentMessage()));
    dragFile(&window, readme);  // a drop that arrives anyway changes nothing
    QCOMPARE(window.currentPath(), kHello);
    QCOMPARE(opCount(window.reportView(), 0), 3);
    QVERIFY(window.errorText().isEmpty());
  }

  void corruptFileKeepsThePreviousModel() {
    MainWindow window;
    QVERIFY(window.openModel(kHello));
    const QString truncated = temp_.filePath("truncated.tflite");
    QVERIFY(writeFile(truncated, readFile(kHello).left(600)));

    QVERIFY(!window.openModel(truncated));
    QCOMPARE(window.currentPath(), kHello);
    QCOMPARE(window.reportView()->subgraphCount(), 1);
    QCOMPARE(opCount(window.reportView(), 0), 3);
    QVERIFY(summaryShows(window.reportView(), "3164"));
    const QString message = window.statusBar()->currentMessage();
    QVERIFY2(message.contains("truncated.tflite"), qPrintable(message));
    QVERIFY(!message.contains('\n'));
    QCOMPARE(window.errorText(), message);  // the banner repeats it
    QVERIFY(!window.recentFiles().contains(truncated));
  }

  void pngRenamedAndMissingFilesAreErrorsToo() {
    MainWindow window;
    QVERIFY(window.openModel(kWhile));

    QImage image(8, 8, QImage::Format_RGB32);
    image.fill(Qt::red);
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    QVERIFY(image.save(&buffer, "PNG"));
    const QString fake = temp_.filePath("picture.tflite");
    QVERIFY(writeFile(fake, png));
    QVERIFY(!window.openModel(fake));
    QVERIFY(window.statusBar()->currentMessage().contains("picture.tflite"));
    QCOMPARE(window.currentPath(), kWhile);

    const QString missing = temp_.filePath("missing.circle");
    QVERIFY(!window.openModel(missing));
    QVERIFY(window.statusBar()->currentMessage().contains("missing.circle"));
    QCOMPARE(window.currentPath(), kWhile);
    QCOMPARE(window.reportView()->subgraphCount(), 3);

    // A good model clears the error banner.
    QVERIFY(!window.errorText().isEmpty());
    QVERIFY(window.openModel(kHello));
    QVERIFY(window.errorText().isEmpty());
  }

  void corruptFileAsFirstModelLeavesTheWindowEmpty() {
    MainWindow window;
    const QString empty = temp_.filePath("empty.tflite");
    QVERIFY(writeFile(empty, QByteArray()));
    QVERIFY(!window.openModel(empty));
    QVERIFY(window.currentPath().isEmpty());
    QVERIFY(!window.reloadAction()->isEnabled());
    QVERIFY(window.statusBar()->currentMessage().contains("empty.tflite"));
  }

  void reloadReadsTheFileAgainAndSurvivesBreakage() {
    MainWindow window;
    const QString path = temp_.filePath("changing.tflite");
    QVERIFY(writeFile(path, readFile(kHello)));
    QVERIFY(window.openModel(path));
    QCOMPARE(window.reportView()->subgraphCount(), 1);

    QVERIFY(writeFile(path, readFile(kWhile)));
    window.reloadAction()->trigger();
    QCOMPARE(window.reportView()->subgraphCount(), 3);

    QVERIFY(writeFile(path, QByteArray("TFL3 but not a flatbuffer")));
    QVERIFY(!window.reloadModel());
    QCOMPARE(window.reportView()->subgraphCount(), 3);
    QCOMPARE(window.currentPath(), path);
    QVERIFY(window.statusBar()->currentMessage().contains("changing.tflite"));
  }

  void droppedModelFillsGraphInspectorAndSizeView() {
    MainWindow window;
    QSignalSpy changed(&window, &MainWindow::modelChanged);
    const QString gesture =
        QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_while.tflite";
    QVERIFY(dragFile(&window, gesture));
    QCOMPARE(window.currentPath(), gesture);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.last().at(0).toString(), gesture);
    QCOMPARE(window.graphView()->currentSubgraph(), 0);
    const auto& main = window.report().subgraphs[0];
    QCOMPARE(window.graphView()->nodeCount(),
             static_cast<int>(main.inputs.size() + main.ops.size() + main.outputs.size()));
    QVERIFY(window.sizeView()->arenas().inference_ok);
    // A tensor chosen in the model tree shows in the inspector.
    emit window.reportView()->tensorSelected(0, main.outputs[0]);
    QCOMPARE(window.tensorInspector()->tensor(), main.outputs[0]);
  }

  void droppedDatasetIsRemembered() {
    MainWindow window;
    QSignalSpy changed(&window, &MainWindow::datasetChanged);
    const QString data = QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotions_TRAIN.ts";
    QVERIFY(dragFile(&window, data));
    QCOMPARE(window.datasetPath(), data);
    QCOMPARE(changed.count(), 1);
    QVERIFY(window.recentFiles().contains(data));
    QVERIFY(window.currentPath().isEmpty());  // a dataset does not replace the model
    QVERIFY(!window.openDataset(temp_.filePath("missing.csv")));
    QCOMPARE(window.datasetPath(), data);
    QVERIFY(window.errorText().contains("missing.csv"));
  }

  void shortcutsExist() {
    MainWindow window;
    QCOMPARE(window.findAction()->shortcut(), QKeySequence(QKeySequence::Find));
    QCOMPARE(window.exportAction()->shortcut(), QKeySequence("Ctrl+Shift+E"));
    QCOMPARE(window.reloadAction()->shortcut(), QKeySequence(Qt::Key_F5));
    QVERIFY(!window.exportAction()->isEnabled());
    QVERIFY(window.openModel(kWhile));
    QVERIFY(window.exportAction()->isEnabled());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.findAction()->trigger();
    QVERIFY(window.graphView()->findField()->hasFocus());
  }

  // Issue 20 point 12: with no model open the window shows the welcome page with the bundled
  // samples; clicking one opens it (the graph replaces the page).
  void welcomePageListsTheSamplesAndOpensOne() {
    MainWindow window;
    QVERIFY(window.welcomeShown());
    const QStringList samples = window.welcomePage()->samplePaths();
    const QString fused = QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite";
    QVERIFY2(samples.contains(QFileInfo(fused).absoluteFilePath()), qPrintable(samples.join(",")));
    QVERIFY(
        samples.contains(QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotions_TRAIN.ts"));
    emit window.welcomePage()->fileActivated(fused);
    QVERIFY(window.model());
    QVERIFY(!window.welcomeShown());
    QCOMPARE(window.report().subgraphs[0].ops[0].name, std::string("CUSTOM:GRUWB_GRU"));
    // It is a recent file now, and the page lists it.
    QCOMPARE(window.welcomePage()->recentPaths().value(0), fused);
    // The Build job switches the experiment panel to a build spec.
    window.startJob("build");
    QVERIFY(window.trainingWorkspace()->panel()->settings().model_path.isEmpty());
  }

  // Issue 20 point 12: Help > Keyboard Shortcuts lists every menu action's shortcut.
  void helpListsEveryShortcut() {
    MainWindow window;
    const QList<QPair<QString, QString>> rows = window.shortcutList();
    const auto shortcut_of = [&rows](const QString& action) {
      for (const auto& row : rows) {
        if (row.first == action) return row.second;
      }
      return QString();
    };
    QCOMPARE(shortcut_of("Edit > Find"),
             QKeySequence(QKeySequence::Find).toString(QKeySequence::NativeText));
    QCOMPARE(shortcut_of("File > Reload"), QString("F5"));
    QCOMPARE(shortcut_of("Help > Keyboard Shortcuts"), QString("Ctrl+/"));
    QVERIFY(!shortcut_of("Tools > Fuse Recurrent Cells").isEmpty());
    window.showShortcutsDialog();
    QVERIFY(window.shortcutsDialog()->isVisible());
    // Help > Documentation and README open files that exist (the build tree's here).
    QVERIFY(QFileInfo::exists(gruwb::app::docs_folder() + "/gui.md"));
    QVERIFY(QFileInfo::exists(gruwb::app::docs_folder() + "/../README.md"));
    QVERIFY(window.findChild<QAction*>("documentationAction"));
    QVERIFY(window.findChild<QAction*>("readmeAction"));
  }

  // Issue 20 point 10: clicking an op in the graph shows its attributes in the inspector.
  void clickingAnOpShowsItsAttributes() {
    MainWindow window;
    QVERIFY(window.openModel(kHello));
    window.graphView()->selectNode(window.graphView()->graph().node_of_op(0));
    QCOMPARE(window.tensorInspector()->op(), 0);
    QCOMPARE(window.tensorInspector()->property("fused_activation_function"), QString("RELU"));
  }

  // Issue 20 point 12: a chosen dataset shows in the Dataset dock: per-class counts of each
  // split equal the file's, and one sample per class is plotted per channel.
  void datasetViewCountsTheClasses() {
    const QString path = QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotions_TRAIN.ts";
    gruwb::app::DatasetFiles files;
    std::string error;
    QVERIFY2(gruwb::app::load_dataset(path.toStdString(), &files, &error), error.c_str());
    MainWindow window;
    QVERIFY(window.datasetView()->countsTable()->rowCount() == 0);
    // Chosen in the Experiments panel (its Browse button's path).
    QVERIFY(window.trainingWorkspace()->panel()->chooseDataset(path));
    const std::vector<int> train = files.train.class_counts();
    const std::vector<int> test = files.test.class_counts();
    QCOMPARE(static_cast<int>(train.size()), 4);
    for (int c = 0; c < 4; ++c) {
      QCOMPARE(window.datasetView()->shownCount("train", c), train[c]);
      QCOMPARE(window.datasetView()->shownCount("test", c), test[c]);
      QCOMPARE(window.datasetView()->countsTable()->item(c, 0)->text(),
               QString::fromStdString(files.train.class_names[c]));
    }
    // One example per class, 6 channels each.
    QCOMPARE(static_cast<int>(window.datasetView()->preview().examples.size()), 4);
    QCOMPARE(window.datasetView()->samplesPlot()->graphCount(), 4 * 6);
  }

  void dockLayoutPersistsAcrossWindows() {
    {
      MainWindow window;
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      QVERIFY(window.dock("modelDock") && window.dock("tensorDock") && window.dock("sizeDock"));
      window.dock("sizeDock")->hide();
      window.dock("modelDock")->setFloating(true);
      window.close();  // saves like quitting the app does
    }
    MainWindow again;
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    QVERIFY(again.dock("sizeDock")->isHidden());
    QVERIFY(again.dock("modelDock")->isFloating());
    QVERIFY(!again.dock("tensorDock")->isHidden());
  }

  void projectFileRoundTrip() {
    const QString project = temp_.filePath("session.gruwb");
    const QString data = QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotions_TRAIN.ts";
    {
      MainWindow window;
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      int saved_calls = 0;
      window.addProjectSection(
          "experiments",
          [&] {
            ++saved_calls;
            return QJsonValue(QJsonArray{QJsonObject{{"name", "fc only"}, {"lr", 0.01}}});
          },
          nullptr);
      QVERIFY(window.openModel(kWhile));
      QVERIFY(window.openDataset(data));
      QVERIFY(window.graphView()->activateNode([&] {
        for (int n = 0; n < window.graphView()->nodeCount(); ++n) {
          if (window.graphView()->graph().nodes[n].title == "WHILE") return n;
        }
        return -1;
      }()));
      window.dock("tensorDock")->hide();
      QVERIFY(window.saveProject(project));
      QCOMPARE(saved_calls, 1);
      QCOMPARE(window.projectPath(), project);
    }
    // The file is JSON with paths relative to it.
    gruwb::gui::ProjectFile read;
    QString error;
    QVERIFY2(gruwb::gui::read_project_file(project, &read, &error), qPrintable(error));
    QCOMPARE(read.model, kWhile);
    QCOMPARE(read.dataset, data);
    QCOMPARE(read.graph_path.size(), 2);
    QFile raw(project);
    QVERIFY(raw.open(QIODevice::ReadOnly));
    QVERIFY(!raw.readAll().contains(QFile::encodeName(temp_.path())));

    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QJsonValue loaded;
    window.addProjectSection("experiments", nullptr, [&](const QJsonValue& v) { loaded = v; });
    QVERIFY(window.openFile(project));
    QCOMPARE(window.currentPath(), kWhile);
    QCOMPARE(window.datasetPath(), data);
    QCOMPARE(window.graphView()->breadcrumbIndices(), read.graph_path);
    QVERIFY(window.dock("tensorDock")->isHidden());
    QCOMPARE(loaded.toArray().at(0).toObject().value("name").toString(), QString("fc only"));
    QVERIFY(window.windowTitle().contains("session.gruwb"));
  }

  // The training section of a project: the staging form, the experiments
  // (settings, state and results) and their comparison rows come back on
  // reopen, and the selected experiment's report exports as before.
  void experimentsTravelInTheProjectFile() {
    const QString project = temp_.filePath("experiments.gruwb");
    const QString model = QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite";
    const QString data =
        QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotionsAcc60_TRAIN.ts";
    QVector<gruwb::views::StageResult> rows;
    gruwb::views::ExperimentSettings ran;
    QStringList headlines;  // of each experiment's exported report
    {
      MainWindow window;
      QVERIFY(window.openModel(model));
      QVERIFY(window.openDataset(data));
      gruwb::gui::TrainingWorkspace* training = window.trainingWorkspace();
      ran = training->panel()->settings();
      QCOMPARE(ran.model_path, model);  // the open model and data are staged
      QCOMPARE(ran.dataset_path, data);
      ran.name = "fc only";
      ran.stages = {"init", "fc"};
      ran.epochs = 1;
      ran.batch_size = 8;
      ran.learning_rate = 0.01;
      training->startExperiment(ran);
      QVERIFY(training->waitForIdle(90000));
      QVERIFY2(training->lastError().isEmpty(), qPrintable(training->lastError()));
      rows = training->comparisonTable()->stageResults();
      QCOMPARE(rows.size(), 2);
      gruwb::views::ExperimentSettings init_only = ran;
      init_only.name = "init only";
      init_only.stages = {"init"};
      training->startExperiment(init_only);
      QVERIFY(training->waitForIdle(90000));
      QVERIFY2(training->lastError().isEmpty(), qPrintable(training->lastError()));
      for (const int id : training->panel()->experimentIds()) {
        training->panel()->selectExperiment(id);
        headlines << exportedHeadline(training, temp_.filePath("before.html"));
      }
      // The form holds the next experiment's settings.
      gruwb::views::ExperimentSettings next = ran;
      next.name = "next";
      next.learning_rate = 0.02;
      next.stages = {"all", "names:dense_0/bias"};
      training->panel()->setSettings(next);
      QVERIFY(window.saveProject(project));
    }
    MainWindow window;
    QVERIFY(window.openProject(project));
    gruwb::gui::TrainingWorkspace* training = window.trainingWorkspace();
    const gruwb::views::ExperimentSettings staged = training->panel()->settings();
    QCOMPARE(staged.name, QString("next"));
    QCOMPARE(staged.learning_rate, 0.02);
    QCOMPARE(staged.stages, QStringList({"all", "names:dense_0/bias"}));
    QCOMPARE(window.graphView()->checkedWeights(), QStringList({"dense_0/bias"}));
    QCOMPARE(training->panel()->experimentCount(), 2);
    const int id = training->panel()->experimentIds().first();
    QCOMPARE(training->panel()->experimentStatus(id),
             gruwb::views::ExperimentPanel::Status::kFinished);
    QStringList reopened;
    for (const int experiment : training->panel()->experimentIds()) {
      training->panel()->selectExperiment(experiment);
      reopened << exportedHeadline(training, temp_.filePath("after.html"));
    }
    QCOMPARE(reopened, headlines);
    QVERIFY(headlines[0].contains("<td>fc</td>"));
    QVERIFY(!headlines[1].contains("<td>fc</td>"));
    const auto& restored = training->comparisonTable()->stageResults();
    QCOMPARE(restored.size(), rows.size() + 1);
    for (int i = 0; i < rows.size(); ++i) {
      QCOMPARE(restored[i].experiment, rows[i].experiment);
      QCOMPARE(restored[i].stage, rows[i].stage);
      QCOMPARE(restored[i].accuracy, rows[i].accuracy);
      QCOMPARE(restored[i].cross_entropy, rows[i].cross_entropy);
      QCOMPARE(restored[i].trainable_parameters, rows[i].trainable_parameters);
      QCOMPARE(restored[i].training_memory_bytes, rows[i].training_memory_bytes);
      QCOMPARE(restored[i].confusion, rows[i].confusion);
      QCOMPARE(restored[i].class_names, rows[i].class_names);
    }
  }

  // A project saved before results travelled opens with its experiments,
  // which then cannot export (the usual message), rather than failing.
  void projectWithoutResultsOpens() {
    gruwb::views::ExperimentSettings settings;
    settings.name = "yesterday";
    settings.stages = {"init", "fc"};
    QJsonObject experiment = gruwb::views::settings_to_json(settings);
    experiment["status"] = "finished";
    gruwb::gui::ProjectFile file;
    file.sections["training"] = QJsonObject{{"experiments", QJsonArray{experiment}}};
    const QString old = temp_.filePath("old.gruwb");
    QString error;
    QVERIFY2(gruwb::gui::write_project_file(old, file, &error), qPrintable(error));
    MainWindow window;
    QVERIFY(window.openProject(old));
    gruwb::gui::TrainingWorkspace* training = window.trainingWorkspace();
    QCOMPARE(training->panel()->experimentCount(), 1);
    QVERIFY(training->lastError().isEmpty());
    QVERIFY(!training->exportReport(temp_.filePath("old.html"), &error));
    QVERIFY2(error.contains("no experiment has finished"), qPrintable(error));
  }

  // Tools > Benchmark Model times the open model off the GUI thread and shows
  // gruwb bench's table; a model that runs but cannot train (an LSTM with a
  // projection has no backward kernel) still gets its inference figures and
  // the reason.
  void benchmarkShowsInferenceAndTraining() {
    MainWindow window;
    auto* action = window.findChild<QAction*>("benchmarkAction");
    QVERIFY(action);
    QVERIFY(!action->isEnabled());  // no model yet
    QVERIFY(window.openModel(QString(GRUWB_SOURCE_DIR) +
                             "/resources/samples/gesture_gru_fused.tflite"));
    QVERIFY(action->isEnabled());
    action->trigger();
    QVERIFY(!action->isEnabled());  // one run at a time
    QDialog* dialog = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        (dialog = window.findChild<QDialog*>("benchDialog")) && dialog->isVisible(), 30000);
    QVERIFY(action->isEnabled());
    auto* text = dialog->findChild<QPlainTextEdit*>("benchText");
    QVERIFY(text);
    const QString fused = text->toPlainText();
    QVERIFY2(fused.contains("Arena    10176 bytes"),
             qPrintable(fused));  // gruwb run --arena's figure
    QVERIFY2(fused.contains("inference µs/sequence"), qPrintable(fused));
    QVERIFY2(fused.contains("training samples/s"), qPrintable(fused));
    QVERIFY2(fused.contains("11944 trainable parameters"), qPrintable(fused));

    dialog->hide();
    const QString projection = modelPath("litert_unidirectional_sequence_lstm_24inputs.tflite");
    QVERIFY(window.openModel(projection));
    action->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(dialog->isVisible(), 30000);
    const QString lstm = text->toPlainText();
    QVERIFY2(lstm.contains("inference µs/sequence"), qPrintable(lstm));
    QVERIFY2(!lstm.contains("training samples/s"), qPrintable(lstm));
    QVERIFY2(lstm.contains("training: ") && lstm.contains("projection"), qPrintable(lstm));
    QVERIFY(dialog->windowTitle().contains("litert_unidirectional_sequence_lstm_24inputs"));
  }

  // Ticking two weight badges on the graph makes the panel's custom stage;
  // a 1-epoch run of it trains exactly those tensors' elements.
  void customStageFromGraphCheckboxes() {
    MainWindow window;
    QVERIFY(window.openModel(QString(GRUWB_SOURCE_DIR) +
                             "/resources/samples/gesture_gru_fused.tflite"));
    QVERIFY(window.openDataset(QString(GRUWB_SOURCE_DIR) +
                               "/resources/samples/BasicMotionsAcc60_TRAIN.ts"));
    gruwb::views::GraphView* graph = window.graphView();
    gruwb::gui::TrainingWorkspace* training = window.trainingWorkspace();
    QVERIFY(graph->setWeightChecked(3, true));  // gru/bias [2,180]
    QVERIFY(graph->setWeightChecked(6, true));  // dense_0/bias [4]
    QCOMPARE(training->panel()->checkedWeights(), QStringList({"gru/bias", "dense_0/bias"}));
    gruwb::views::ExperimentSettings s = training->panel()->settings();
    QVERIFY(s.stages.contains("names:gru/bias,dense_0/bias"));
    gruwb::views::ExperimentSettings only_custom = s;
    only_custom.stages = {"names:gru/bias,dense_0/bias"};
    only_custom.epochs = 1;
    only_custom.batch_size = 8;
    training->startExperiment(only_custom);
    QVERIFY(training->waitForIdle(90000));
    QVERIFY2(training->lastError().isEmpty(), qPrintable(training->lastError()));
    const auto& rows = training->comparisonTable()->stageResults();
    QCOMPARE(rows.size(), 1);
    QCOMPARE(rows[0].stage, QString("custom"));
    QCOMPARE(rows[0].trainable_parameters, qint64(2 * 180 + 4));
    // And back: the panel's list drives the badges.
    training->panel()->setCheckedWeights({"dense_0/bias"});
    QCOMPARE(graph->checkedWeights(), QStringList({"dense_0/bias"}));
    auto* list = training->panel()->findChild<QListWidget*>("customTensors");
    QVERIFY(list);
    list->findItems("dense_0/bias", Qt::MatchExactly).first()->setCheckState(Qt::Unchecked);
    QCOMPARE(graph->checkedWeights(), QStringList());
  }

  // Every dock, the training workspace's too, is in the View menu, and
  // which are shown survives a restart.
  void viewMenuListsEveryDock() {
    {
      MainWindow window;
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      const QList<QDockWidget*> docks =
          window.findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly);
      QStringList names;
      for (QDockWidget* d : docks) {
        names << d->objectName();
        QVERIFY2(window.viewMenu()->actions().contains(d->toggleViewAction()),
                 qPrintable(d->objectName()));
      }
      for (const char* name : {"modelDock", "tensorDock", "sizeDock", "experimentsDock",
                               "curvesDock", "gradientsDock", "comparisonDock"}) {
        QVERIFY2(names.contains(name), name);
      }
      window.dock("gradientsDock")->toggleViewAction()->trigger();  // hide
      QVERIFY(window.dock("gradientsDock")->isHidden());
      window.close();
    }
    MainWindow again;
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    QVERIFY(again.dock("gradientsDock")->isHidden());
    QVERIFY(!again.dock("curvesDock")->isHidden());
  }

  void badProjectFilesAreErrors() {
    MainWindow window;
    QVERIFY(window.openModel(kHello));
    const QString junk = temp_.filePath("junk.gruwb");
    QVERIFY(writeFile(junk, "{\"format\": \"something-else\"}"));
    QVERIFY(!window.openProject(junk));
    QVERIFY2(window.errorText().contains("junk.gruwb: not a project file"),
             qPrintable(window.errorText()));
    const QString broken = temp_.filePath("broken.gruwb");
    QVERIFY(writeFile(broken, "{\"format\": "));
    QVERIFY(!window.openProject(broken));
    QVERIFY(window.errorText().contains("broken.gruwb"));
    QCOMPARE(window.currentPath(), kHello);
  }

  void recentFilesKeepTheLastNineNewestFirst() {
    MainWindow window;
    QStringList copies;
    for (int i = 0; i < MainWindow::kMaxRecentFiles + 2; ++i) {
      copies << temp_.filePath(QString("model_%1.tflite").arg(i));
      QVERIFY(writeFile(copies.last(), readFile(kHello)));
      QVERIFY(window.openModel(copies.last()));
    }
    QVERIFY(window.openModel(copies[5]));  // reopening moves it to the front
    const QStringList recent = window.recentFiles();
    QCOMPARE(recent.size(), MainWindow::kMaxRecentFiles);
    QCOMPARE(recent.first(), copies[5]);
    QCOMPARE(recent[1], copies.last());
    QCOMPARE(recent.count(copies[5]), 1);
    QVERIFY(!recent.contains(copies[0]));

    // Ctrl+1..9 belong to the recent entries; triggering one opens it.
    QList<QAction*> entries;
    for (QAction* action : window.recentMenu()->actions()) {
      if (!action->shortcut().isEmpty()) entries << action;
    }
    QCOMPARE(entries.size(), MainWindow::kMaxRecentFiles);
    QCOMPARE(entries[0]->shortcut(), QKeySequence("Ctrl+1"));
    QCOMPARE(entries[8]->shortcut(), QKeySequence("Ctrl+9"));
    entries[2]->trigger();
    QCOMPARE(window.currentPath(), recent[2]);

    // A new window sees the same list (it lives in QSettings).
    MainWindow other;
    QCOMPARE(other.recentFiles().first(), recent[2]);
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
