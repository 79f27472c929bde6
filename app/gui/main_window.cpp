#include "app/gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QLayout>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QShowEvent>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTableWidget>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

#include "app/core/bundled_files.h"
#include "app/core/dataset.h"
#include "app/core/experiment.h"
#include "app/core/fuse.h"
#include "app/core/inspect.h"
#include "app/core/model_document.h"
#include "app/core/plugin_manager.h"
#include "app/core/quantize.h"
#include "app/gui/bench_runner.h"
#include "app/gui/board_workspace.h"
#include "app/gui/model_export.h"
#include "app/gui/project_file.h"
#include "app/gui/sweep_window.h"
#include "app/gui/training_workspace.h"
#include "engine/tools/analyzer.h"
#include "engine/tools/model_writer.h"
#include "engine/tools/rnn_detector.h"
#include "views/dataset_view.h"
#include "views/fuse_view.h"
#include "views/graph_view.h"
#include "views/model_report_view.h"
#include "views/plugin_list_view.h"
#include "views/scrollable.h"
#include "views/size_view.h"
#include "views/tensor_inspector.h"
#include "views/welcome_page.h"
#include "views/wheel_guard.h"

namespace gruwb::gui {
namespace {

constexpr char kRecentFilesKey[] = "recentFiles";
constexpr char kOpenDirKey[] = "openDirectory";
constexpr char kGeometryKey[] = "mainWindow/geometry";
constexpr char kStateKey[] = "mainWindow/state";
constexpr char kSplitterKey[] = "mainWindow/reportSplitter";

// The first local file among the dragged URLs that the window can open, or "".
QString openableFileFrom(const QMimeData* mime) {
  if (!mime || !mime->hasUrls()) return {};
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile() && MainWindow::isOpenableFileName(url.toLocalFile())) {
      return url.toLocalFile();
    }
  }
  return {};
}

QString firstLocalFile(const QMimeData* mime) {
  if (!mime || !mime->hasUrls()) return {};
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile()) return url.toLocalFile();
  }
  return {};
}

QString suffixOf(const QString& path) { return QFileInfo(path).suffix().toLower(); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  views::WheelGuard::install();  // scrolling a panel never changes its spin boxes
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  createCentralArea();
  createActions();
  createDocks();
  createWorkspaces();
  connectViews();
  path_label_ = new QLabel;
  dataset_label_ = new QLabel;
  statusBar()->addPermanentWidget(dataset_label_);
  statusBar()->addPermanentWidget(path_label_);
  statusBar()->showMessage(tr("Open a model with File > Open (Ctrl+O) or drop one on the window."));
  updateTitle();
  restoreSettings();
}

MainWindow::~MainWindow() = default;

void MainWindow::createCentralArea() {
  // A banner instead of a modal box: the user can keep reading the model that
  // is still open while the error stays visible until dismissed.
  error_banner_ = new QWidget;
  error_banner_->setObjectName("errorBanner");
  error_banner_->setAttribute(Qt::WA_StyledBackground);
  auto* icon = banner_icon_ = new QLabel;
  error_label_ = new QLabel;
  error_label_->setWordWrap(true);
  error_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* dismiss = new QToolButton;
  dismiss->setText(tr("Dismiss"));
  dismiss->setAutoRaise(true);
  connect(dismiss, &QToolButton::clicked, this, &MainWindow::hideError);
  auto* banner_layout = new QHBoxLayout(error_banner_);
  banner_layout->setContentsMargins(8, 4, 4, 4);
  banner_layout->addWidget(icon, 0, Qt::AlignTop);
  banner_layout->addWidget(error_label_, 1);
  banner_layout->addWidget(dismiss, 0, Qt::AlignTop);
  error_banner_->hide();

  // No model open: the welcome page (samples, recent files, a button per job).
  welcome_ = new views::WelcomePage;
  welcome_->setObjectName("welcomePage");
  std::vector<views::WelcomeFile> samples;
  for (const QString& path : app::bundled_samples()) {
    samples.push_back({path, app::sample_description(QFileInfo(path).fileName())});
  }
  welcome_->setSamples(samples, app::samples_folder());

  graph_view_ = new views::GraphView;
  pages_ = new QStackedWidget;
  pages_->addWidget(welcome_);
  pages_->addWidget(graph_view_);

  auto* central = new QWidget;
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(4, 4, 4, 0);
  layout->addWidget(error_banner_);
  layout->addWidget(pages_, 1);
  setCentralWidget(central);
}

void MainWindow::createActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));

  QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::showOpenDialog);
  open->setShortcut(QKeySequence::Open);

  file->addAction(tr("Open &Sweep…"), this, [this] {
    // A sweep folder's sweep.json stands for the folder (collected now).
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Sweep"), QString(),
        tr("Sweeps (sweep.json sweep-result.json);;JSON files (*.json)"));
    if (path.isEmpty()) return;
    openSweep(QFileInfo(path).fileName() == "sweep.json" ? QFileInfo(path).absolutePath() : path);
  });

  recent_menu_ = file->addMenu(tr("Open &Recent"));
  rebuildRecentMenu();

  reload_action_ = file->addAction(tr("Re&load"), this, [this] { reloadModel(); });
  reload_action_->setShortcut(QKeySequence(Qt::Key_F5));
  reload_action_->setEnabled(false);

  file->addSeparator();
  QAction* save = file->addAction(tr("&Save Project"), this, [this] {
    if (project_path_.isEmpty()) {
      showSaveProjectDialog();
    } else {
      saveProject(project_path_);
    }
  });
  save->setShortcut(QKeySequence::Save);
  QAction* save_as =
      file->addAction(tr("Save Project &As…"), this, &MainWindow::showSaveProjectDialog);
  save_as->setShortcut(QKeySequence("Ctrl+Shift+S"));

  file->addSeparator();
  export_action_ = file->addAction(tr("&Export Graph…"), this, &MainWindow::showExportDialog);
  export_action_->setShortcut(QKeySequence("Ctrl+Shift+E"));
  export_action_->setEnabled(false);
  // The experiment comparison (the training workspace's report), as HTML,
  // PDF, CSV or JSON; Ctrl+Shift+E stays the graph export, as in Netron.
  export_report_action_ = file->addAction(tr("Export &Report…"), this, [this] {
    if (training_) training_->showExportReportDialog(this);
  });
  export_report_action_->setShortcut(QKeySequence("Ctrl+Shift+R"));
  // Every run of the session with its settings and figures (the HParams dock's rows).
  QAction* export_hparams = file->addAction(tr("Export &HParams Table…"), this, [this] {
    if (training_) training_->showExportHparamsDialog(this);
  });
  export_hparams->setObjectName("exportHparamsAction");
  export_hparams->setStatusTip(tr("Save the HParams dock's rows, as filtered and sorted, as CSV"));
  // The model itself, in the type the file name's extension names (as gruwb export).
  export_model_action_ =
      file->addAction(tr("Export &Model…"), this, &MainWindow::showExportModelDialog);
  export_model_action_->setObjectName("exportModelAction");
  export_model_action_->setShortcut(QKeySequence("Ctrl+E"));
  export_model_action_->setStatusTip(
      tr("Save the open model as .tflite, .circle, a C array (.h/.cc) or a firmware library"));
  export_model_action_->setEnabled(false);
  // A finished stage's trained weights: the row selected in the Comparison dock.
  QAction* export_trained = file->addAction(tr("Export &Trained Model…"), this, [this] {
    if (training_) training_->showExportStageModelDialog(this);
  });
  export_trained->setObjectName("exportTrainedModelAction");
  export_trained->setStatusTip(
      tr("Save the model a finished Experiments stage trained (the Comparison dock's selected "
         "row)"));

  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  find_action_ = edit->addAction(tr("&Find…"), this, [this] { graph_view_->focusFind(); });
  find_action_->setShortcut(QKeySequence::Find);

  // Tools, before View so View stays the last menu (its dock list grows).
  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  bench_action_ =
      tools->addAction(tr("&Benchmark Model on This Host"), this, &MainWindow::benchmarkModel);
  bench_action_->setObjectName("benchmarkAction");
  bench_action_->setShortcut(QKeySequence("Ctrl+Shift+B"));
  bench_action_->setEnabled(false);
  fuse_action_ = tools->addAction(tr("&Fuse Recurrent Cells…"), this, &MainWindow::showFuseDialog);
  fuse_action_->setObjectName("fuseAction");
  fuse_action_->setShortcut(QKeySequence("Ctrl+Shift+U"));
  fuse_action_->setStatusTip(
      tr("Rewrite the WHILE-loop or unrolled recurrent cells into one op each (gruwb fuse) and "
         "show the fused model beside this one"));
  fuse_action_->setEnabled(false);
  quantize_action_ =
      tools->addAction(tr("&Quantize Model…"), this, &MainWindow::showQuantizeDialog);
  quantize_action_->setObjectName("quantizeAction");
  quantize_action_->setShortcut(QKeySequence("Ctrl+Shift+Q"));
  quantize_action_->setStatusTip(
      tr("Post-training quantization (int8, int16x8 or dynamic range) calibrated on the chosen "
         "dataset (gruwb quantize); the report shows what was quantized and what stayed float"));
  quantize_action_->setEnabled(false);
  bench_ = new BenchRunner(this);
  connect(bench_, &BenchRunner::finished, this, &MainWindow::showBenchResult);

  view_menu_ = menuBar()->addMenu(tr("&View"));
  QAction* fit =
      view_menu_->addAction(tr("&Fit Graph"), this, [this] { graph_view_->fitToView(); });
  fit->setShortcut(QKeySequence("Ctrl+0"));
  QAction* zoom_in = view_menu_->addAction(tr("Zoom &In"), this, [this] {
    graph_view_->canvas()->setZoom(graph_view_->canvas()->zoom() * 1.25);
  });
  zoom_in->setShortcut(QKeySequence("Shift+Up"));
  QAction* zoom_out = view_menu_->addAction(tr("Zoom &Out"), this, [this] {
    graph_view_->canvas()->setZoom(graph_view_->canvas()->zoom() / 1.25);
  });
  zoom_out->setShortcut(QKeySequence("Shift+Down"));
  QAction* actual = view_menu_->addAction(tr("&Actual Size"), this,
                                          [this] { graph_view_->canvas()->setZoom(1.0); });
  actual->setShortcut(QKeySequence("Shift+Backspace"));
  view_menu_->addSeparator();

  // Help goes after View, the last menu by convention (createWorkspaces adds docks to View).
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* docs = help->addAction(tr("&Documentation"), this, [this] {
    // The installed docs (or the source tree's): the GUI guide, which links the others.
    const QString folder = app::docs_folder();
    if (folder.isEmpty()) {
      showError(tr("The documentation was not found (set GRUWB_DOCS_DIR to its folder)."));
      return;
    }
    QDesktopServices::openUrl(QUrl::fromLocalFile(folder + "/gui.md"));
  });
  docs->setObjectName("documentationAction");
  docs->setShortcut(QKeySequence::HelpContents);
  help->addAction(tr("&README"), this,
                  [this] {
                    const QString folder =
                        app::docs_folder();  // README.md sits beside the docs folder
                    if (folder.isEmpty() || !QFileInfo::exists(folder + "/../README.md")) {
                      showError(tr("README.md was not found beside the documentation."));
                      return;
                    }
                    QDesktopServices::openUrl(
                        QUrl::fromLocalFile(QDir::cleanPath(folder + "/../README.md")));
                  })
      ->setObjectName("readmeAction");
  QAction* shortcuts =
      help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcutsDialog);
  shortcuts->setObjectName("shortcutsAction");
  shortcuts->setShortcut(QKeySequence("Ctrl+/"));
  help->addAction(tr("&Welcome Page"), this, [this] { pages_->setCurrentWidget(welcome_); })
      ->setObjectName("welcomeAction");
  help->addSeparator();
  QAction* plugins = help->addAction(tr("&Plugins…"), this, &MainWindow::showPluginsDialog);
  plugins->setObjectName("pluginsAction");
  // The version main() set: the project's, with the commit for a development build.
  QAction* about = help->addAction(tr("&About GRU Workbench"), this, [this] {
    QMessageBox::about(this, tr("About GRU Workbench"),
                       tr("<b>GRU Workbench %1</b><p>Inspect, train and deploy small recurrent "
                          "networks (GRU/LSTM) for microcontrollers.</p><p>Qt %2</p>")
                           .arg(QApplication::applicationVersion(), qVersion()));
  });
  about->setObjectName("aboutAction");
}

bool MainWindow::openSweep(const QString& path) {
  if (!sweep_window_) sweep_window_ = new SweepWindow(this);
  QString error;
  if (!sweep_window_->open(path, &error)) {
    showError(error);
    return false;
  }
  sweep_window_->show();
  sweep_window_->raise();
  return true;
}

void MainWindow::showPluginsDialog() {
  if (!plugins_dialog_) {
    plugins_dialog_ = new QDialog(this);
    plugins_dialog_->setObjectName("pluginsDialog");
    plugins_dialog_->setWindowTitle(tr("Plugins"));
    plugin_list_ = new views::PluginListView;
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, plugins_dialog_, &QDialog::hide);
    auto* layout = new QVBoxLayout(plugins_dialog_);
    layout->addWidget(plugin_list_);
    layout->addWidget(buttons);
    plugins_dialog_->resize(1180, 440);
  }
  plugin_list_->setReport(app::plugins_json(app::plugin_manager(), app::plugin_folders()));
  plugins_dialog_->show();
  plugins_dialog_->raise();
}

void MainWindow::benchmarkModel() {
  if (!document_.loaded || !bench_->start(currentPath())) return;
  bench_action_->setEnabled(false);
  statusBar()->showMessage(
      tr("Benchmarking %1 on this host (inference, then training)…").arg(currentPath()));
}

void MainWindow::showBenchResult(const QString& path, const QString& report,
                                 const QString& problem) {
  bench_action_->setEnabled(document_.loaded != nullptr);
  statusBar()->clearMessage();
  const QString name = QFileInfo(path).fileName();
  if (report.isEmpty()) {
    showError(tr("Benchmark of %1 failed: %2").arg(name, problem));
    return;
  }
  if (!bench_dialog_) {  // one non-modal window, reused: keep it open beside the next run
    bench_dialog_ = new QDialog(this);
    bench_dialog_->setObjectName("benchDialog");
    bench_text_ = new QPlainTextEdit;
    bench_text_->setObjectName("benchText");
    bench_text_->setReadOnly(true);
    bench_text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, bench_dialog_, &QDialog::hide);
    auto* layout = new QVBoxLayout(bench_dialog_);
    layout->addWidget(bench_text_);
    layout->addWidget(buttons);
    bench_dialog_->resize(700, 540);
  }
  QString text = tr("Timed with the workbench engine on this host (the same code as `gruwb bench`; "
                    "figures depend on the machine and its load).\n\n") +
                 report;
  if (!problem.isEmpty()) text += "\n" + problem + "\n";
  bench_text_->setPlainText(text);
  bench_dialog_->setWindowTitle(tr("Benchmark: %1").arg(name));
  bench_dialog_->show();
  bench_dialog_->raise();
}

QDockWidget* MainWindow::addDock(QWidget* widget, const QString& title, const QString& object_name,
                                 Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(object_name);  // saveState()/restoreState() key
  dock->setWidget(widget);
  addDockWidget(area, dock);
  view_menu_->addAction(dock->toggleViewAction());
  return dock;
}

QDockWidget* MainWindow::dock(const QString& object_name) const {
  return findChild<QDockWidget*>(object_name, Qt::FindDirectChildrenOnly);
}

void MainWindow::createDocks() {
  report_view_ = new views::ModelReportView;
  inspector_ = new views::TensorInspector;
  size_view_ = new views::SizeView;
  addDock(report_view_, tr("Model"), "modelDock", Qt::LeftDockWidgetArea);
  QDockWidget* tensor = addDock(inspector_, tr("Tensor"), "tensorDock", Qt::RightDockWidgetArea);
  QDockWidget* size =
      addDock(views::scrollable(size_view_), tr("Size"), "sizeDock", Qt::RightDockWidgetArea);
  tabifyDockWidget(tensor, size);
  tensor->raise();  // sized at the first show: applyDefaultDockSizes()
}

void MainWindow::createWorkspaces() {
  // Workspaces install their own docks here, after the built-in docks and
  // before the saved layout is restored.
  training_ = new TrainingWorkspace(this);
  auto* board = new BoardWorkspace(this);  // the Board dock, tabbed with the curves
  // The chosen dataset at a glance (classes, split, samples), tabbed with the curves.
  dataset_view_ = new views::DatasetView;
  QDockWidget* dataset =
      addDock(dataset_view_, tr("Dataset"), "datasetDock", Qt::BottomDockWidgetArea);
  if (QDockWidget* curves = this->dock("curvesDock")) {
    tabifyDockWidget(curves, dataset);
    curves->raise();  // the curves stay in front; choosing a dataset raises its dock
  }
  // A cell comparison times each row on the connected board (its board columns).
  training_->setBoardLender([board] { return board->lendPort(); },
                            [board] { board->takeBackPort(); });
  addProjectSection(
      "training", [this] { return training_->projectSection(); },
      [this](const QJsonValue& value) { training_->loadProjectSection(value); });
  // Each plugin's own state, under its name (plugins that are not loaded keep theirs).
  addProjectSection(
      "plugins", [] { return QJsonValue(app::plugin_manager().saveState()); },
      [](const QJsonValue& value) { app::plugin_manager().restoreState(value.toObject()); });
  connect(training_, &TrainingWorkspace::notice, this, [this](const QString& message, bool error) {
    error ? showError(message) : showNotice(message);
  });
  // Weight badges on the graph and the custom stage's list are one set.
  connect(graph_view_, &views::GraphView::checkedWeightsChanged, training_->panel(),
          &views::ExperimentPanel::setCheckedWeights);
  connect(training_->panel(), &views::ExperimentPanel::checkedWeightsChanged, graph_view_,
          &views::GraphView::setCheckedWeights);
  connect(training_->panel(), &views::ExperimentPanel::datasetChosen, this,
          [this](const QString& path) {
            if (showDatasetPreview(path)) {
              if (QDockWidget* d = dock("datasetDock")) d->raise();
            }
          });
  // Every dock, also those a workspace added itself, can be shown again
  // from the View menu.
  for (QDockWidget* d : findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
    if (!view_menu_->actions().contains(d->toggleViewAction())) {
      view_menu_->addAction(d->toggleViewAction());
    }
  }
}

void MainWindow::addProjectSection(const QString& key, std::function<QJsonValue()> save,
                                   std::function<void(const QJsonValue&)> load) {
  sections_.push_back(ProjectSection{key, std::move(save), std::move(load)});
}

void MainWindow::connectViews() {
  connect(welcome_, &views::WelcomePage::fileActivated, this,
          [this](const QString& path) { openFile(path); });
  connect(welcome_, &views::WelcomePage::jobRequested, this, &MainWindow::startJob);
  // Everything that selects a tensor shows it in the inspector; ops follow
  // between the graph and the model tree.
  const auto show_tensor = [this](int subgraph, int tensor) {
    if (inspector_->showTensor(subgraph, tensor)) {
      if (QDockWidget* d = dock("tensorDock")) d->raise();
    }
  };
  connect(graph_view_, &views::GraphView::tensorSelected, this, show_tensor);
  connect(report_view_, &views::ModelReportView::tensorSelected, this, show_tensor);
  connect(size_view_, &views::SizeView::tensorActivated, this, show_tensor);
  connect(graph_view_, &views::GraphView::opSelected, this, &MainWindow::selectReportRow);
  // A clicked op shows its attributes (Netron's node properties) in the inspector.
  connect(graph_view_, &views::GraphView::opSelected, this, [this](int subgraph, int op) {
    if (inspector_->showOp(subgraph, op)) {
      if (QDockWidget* d = dock("tensorDock")) d->raise();
    }
  });
  connect(report_view_, &views::ModelReportView::opSelected, this, [this](int subgraph, int op) {
    if (graph_view_->currentSubgraph() != subgraph) {
      graph_view_->goBackTo(0);
      if (subgraph != 0) graph_view_->openSubgraph(subgraph);
    }
    graph_view_->selectNode(graph_view_->graph().node_of_op(op));
  });
  // A fusable cell's note on the graph is a link to Tools > Fuse.
  connect(graph_view_, &views::GraphView::noteActivated, this, [this] {
    if (fuse_action_->isEnabled()) fuse_action_->trigger();
  });
  connect(inspector_, &views::TensorInspector::opActivated, this, [this](int subgraph, int op) {
    if (graph_view_->currentSubgraph() == subgraph) {
      graph_view_->selectNode(graph_view_->graph().node_of_op(op));
    }
  });
}

void MainWindow::selectReportRow(int subgraph, int op) {
  report_view_->selectRow(views::ModelReportView::RowKind::kOperator, subgraph, op);
  statusBar()->showMessage(
      tr("Op#%1 %2")
          .arg(op)
          .arg(QString::fromStdString(document_.report.subgraphs[subgraph].ops[op].name)),
      4000);
}

bool MainWindow::isModelFileName(const QString& path) {
  const QString suffix = suffixOf(path);
  return suffix == "tflite" || suffix == "circle";
}

bool MainWindow::isDatasetFileName(const QString& path) {
  const QString suffix = suffixOf(path);
  if (suffix == "ts" || suffix == "arff" || suffix == "csv" || suffix == "npy" || suffix == "npz") {
    return true;
  }
  for (const app::DatasetReader& reader : app::dataset_readers()) {  // plugins' formats
    for (const std::string& extension : reader.extensions) {
      if (path.toLower().endsWith(QString::fromStdString(extension))) return true;
    }
  }
  return false;
}

bool MainWindow::isProjectFileName(const QString& path) { return suffixOf(path) == "gruwb"; }

bool MainWindow::isOpenableFileName(const QString& path) {
  return isModelFileName(path) || isDatasetFileName(path) || isProjectFileName(path);
}

bool MainWindow::openFile(const QString& path) {
  if (isProjectFileName(path)) return openProject(path);
  if (isDatasetFileName(path)) return openDataset(path);
  return openModel(path);
}

bool MainWindow::openModel(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  app::ModelDocument opened;
  std::string error;
  if (!app::open_model_document(QFile::encodeName(absolute).toStdString(), &opened, &error)) {
    showError(QString::fromStdString(error));
    return false;
  }
  document_ = std::move(opened);
  report_view_->setReport(document_.report);
  inspector_->setModel(&document_.model(), document_.report);
  size_view_->setModel(document_.model(), document_.report);
  pages_->setCurrentWidget(graph_view_);
  graph_view_->setReport(document_.report);
  markRnnCells(document_.fusion);
  // The custom stage offers the weights the graph shows as tick boxes.
  training_->panel()->setWeightNames(graph_view_->trainableWeightNames());
  graph_view_->setCheckedWeights(training_->panel()->checkedWeights());
  hideError();
  reload_action_->setEnabled(true);
  export_action_->setEnabled(true);
  export_model_action_->setEnabled(true);
  fuse_action_->setEnabled(true);
  quantize_action_->setEnabled(true);
  bench_action_->setEnabled(!bench_->running());
  addRecentFile(absolute);
  updateTitle();

  int ops = 0;
  for (const tools::SubgraphReport& subgraph : document_.report.subgraphs) {
    ops += static_cast<int>(subgraph.ops.size());
  }
  statusBar()->showMessage(
      tr("Opened %1: %2 bytes, %3, %4")
          .arg(QFileInfo(absolute).fileName())
          .arg(document_.report.model_bytes)
          .arg(tr("%n subgraph(s)", nullptr, static_cast<int>(document_.report.subgraphs.size())))
          .arg(tr("%n op(s)", nullptr, ops)));
  emit modelChanged(absolute);
  return true;
}

namespace {

// The first clause of the fuser's reason, short enough for a graph node (the Model panel's
// Can fuse row and gruwb fuse give it whole).
QString shortReason(const std::string& reason) {
  QString text = QString::fromStdString(reason).section(',', 0, 0).section(';', 0, 0);
  return text.size() > 48 ? text.left(47) + QChar(0x2026) : text;
}

}  // namespace

void MainWindow::markRnnCells(const tools::FuseResult& fused) {
  // RNN cells the converter spelled out op by op (WHILE loop or unrolled
  // chain): say on the graph whether the fuser turns each into one op.
  for (const tools::CellOutcome& outcome : fused.cells) {
    const tools::DetectedCell& cell = outcome.cell;
    const QString what = tr("%1 cell (%2)")
                             .arg(QString::fromStdString(cell.summary).section(',', 0, 0))
                             .arg(tools::cell_form_name(cell.form));
    graph_view_->setOpNote(
        cell.subgraph, cell.op,
        outcome.fused ? tr("%1: click to fuse into one %2")
                            .arg(what, QString::fromStdString(outcome.fused_op))
                      : tr("%1: stays a loop (%2)").arg(what, shortReason(outcome.reason)));
  }
}

bool MainWindow::reloadModel() {
  if (!document_.loaded) return false;
  return openModel(QFile::decodeName(document_.loaded->path.c_str()));
}

bool MainWindow::openDataset(const QString& path) {
  const QFileInfo info(path);
  if (!info.exists() || !info.isReadable()) {
    showError(tr("%1: No such file or not readable").arg(info.fileName()));
    return false;
  }
  // Read now and fitted to the open model (channels, classes, its T), as an
  // experiment would: a bad file never replaces the dataset in use.
  std::string summary, error;
  QApplication::setOverrideCursor(Qt::WaitCursor);
  const bool ok = app::check_dataset_for_model(
      QFile::encodeName(info.absoluteFilePath()).toStdString(),
      document_.loaded ? document_.loaded->path : std::string(), &summary, &error);
  QApplication::restoreOverrideCursor();
  if (!ok) {
    showError(
        tr("Dataset not opened (the previous one stays): %1").arg(QString::fromStdString(error)));
    return false;
  }
  dataset_path_ = info.absoluteFilePath();
  hideError();
  addRecentFile(dataset_path_);
  updateTitle();
  dataset_label_->setToolTip(QString::fromStdString(summary));
  statusBar()->showMessage(tr("Dataset %1 selected").arg(info.fileName()), 5000);
  emit datasetChanged(dataset_path_);
  showDatasetPreview(dataset_path_);
  return true;
}

bool MainWindow::showDatasetPreview(const QString& path) {
  app::DatasetFiles files;
  std::string error;
  if (!app::load_dataset(QFile::encodeName(path).toStdString(), &files, &error)) {
    dataset_view_->clear();
    return false;
  }
  views::DatasetPreview preview;
  preview.name = QString::fromStdString(files.train.name);
  preview.source = path;
  preview.channels = files.train.channels;
  for (const std::string& name : files.train.class_names) {
    preview.class_names << QString::fromStdString(name);
  }
  // The splits an experiment with default settings would train on (its validation share and
  // seed; a test share when the file has no test split).
  const app::ExperimentSpec defaults;
  app::PrepareOptions options;
  options.length_policy = defaults.length_policy;
  options.validation_fraction = defaults.validation_fraction;
  options.seed = defaults.first_seed;
  app::PreparedData prepared;
  const size_t classes = files.train.class_names.size();
  if (app::prepare_dataset(files, options, &prepared, &error)) {
    preview.train = app::split_class_counts(prepared.train, classes);
    preview.validation = app::split_class_counts(prepared.validation, classes);
    preview.test = app::split_class_counts(prepared.test, classes);
    for (const std::string& note : prepared.notes) preview.notes << QString::fromStdString(note);
  } else {  // the file's own splits, and why they are not prepared
    preview.train = files.train.class_counts();
    preview.test = files.test.class_counts();
    preview.notes << QString::fromStdString(error);
  }
  // The first sample of each class, as stored (before normalisation).
  std::vector<bool> shown(classes, false);
  for (int i = 0; i < files.train.size(); ++i) {
    const int label = files.train.labels[i];
    if (label < 0 || static_cast<size_t>(label) >= classes || shown[label]) continue;
    shown[label] = true;
    preview.examples.push_back({label, files.train.lengths[i], files.train.series[i]});
  }
  dataset_view_->setPreview(preview);
  return true;
}

bool MainWindow::saveProject(const QString& path) {
  ProjectFile project;
  project.model = currentPath();
  project.dataset = dataset_path_;
  project.graph_path = graph_view_->breadcrumbIndices();
  project.window_state = saveState(kLayoutVersion);
  project.geometry = saveGeometry();
  for (const ProjectSection& section : sections_) {
    if (section.save) project.sections[section.key] = section.save();
  }
  QString error;
  if (!write_project_file(path, project, &error)) {
    showError(error);
    return false;
  }
  project_path_ = QFileInfo(path).absoluteFilePath();
  addRecentFile(project_path_);
  updateTitle();
  statusBar()->showMessage(tr("Saved project %1").arg(QFileInfo(path).fileName()), 5000);
  return true;
}

bool MainWindow::openProject(const QString& path) {
  ProjectFile project;
  QString error;
  if (!read_project_file(path, &project, &error)) {
    showError(error);
    return false;
  }
  // Open everything first; a missing model or dataset is reported but the
  // rest of the project (layout, sections) still applies.
  bool ok = true;
  if (!project.model.isEmpty()) ok = openModel(project.model) && ok;
  if (!project.dataset.isEmpty()) ok = openDataset(project.dataset) && ok;
  if (document_.loaded && !project.graph_path.isEmpty() && project.graph_path.first() == 0) {
    for (int i = 1; i < project.graph_path.size(); ++i) {
      graph_view_->openSubgraph(project.graph_path[i]);
    }
  }
  if (!project.window_state.isEmpty()) restoreState(project.window_state, kLayoutVersion);
  if (!project.geometry.isEmpty()) restoreGeometry(project.geometry);
  for (const ProjectSection& section : sections_) {
    if (section.load) section.load(project.sections.value(section.key));
  }
  project_path_ = QFileInfo(path).absoluteFilePath();
  addRecentFile(project_path_);
  updateTitle();
  if (ok) statusBar()->showMessage(tr("Opened project %1").arg(QFileInfo(path).fileName()), 5000);
  return ok;
}

QString MainWindow::currentPath() const {
  return document_.loaded ? QFile::decodeName(document_.loaded->path.c_str()) : QString();
}

QString MainWindow::errorText() const {
  return error_banner_->isVisibleTo(this) && banner_is_error_ ? error_label_->text() : QString();
}

QString MainWindow::noticeText() const {
  return error_banner_->isVisibleTo(this) && !banner_is_error_ ? error_label_->text() : QString();
}

void MainWindow::showError(const QString& message) {
  statusBar()->showMessage(message);
  banner_is_error_ = true;
  error_banner_->setStyleSheet(
      "#errorBanner { background: #fdecea; border: 1px solid #e8a29a; border-radius: 3px; }"
      "#errorBanner QLabel { color: #5f1c14; }");
  banner_icon_->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxCritical).pixmap(20, 20));
  error_label_->setText(message);
  error_banner_->show();
}

void MainWindow::showNotice(const QString& message) {
  statusBar()->showMessage(message, 8000);
  banner_is_error_ = false;
  error_banner_->setStyleSheet(
      "#errorBanner { background: #e9f6ec; border: 1px solid #9ccfa8; border-radius: 3px; }"
      "#errorBanner QLabel { color: #1b4d26; }");
  banner_icon_->setPixmap(style()->standardIcon(QStyle::SP_DialogApplyButton).pixmap(20, 20));
  error_label_->setText(message);
  error_banner_->show();
}

bool MainWindow::exportModel(const QString& path) {
  if (!document_.loaded) {
    showError(tr("Export Model: no model is open"));
    return false;
  }
  QString message;
  if (!exportModelBytes(path, currentPath(), document_.loaded->bytes, &message)) {
    showError(tr("Export Model: %1").arg(message));
    return false;
  }
  showNotice(message);
  return true;
}

void MainWindow::showExportModelDialog() {
  if (!document_.loaded) return;
  QSettings settings;
  const QFileInfo current(currentPath());
  // Never the open file itself: a new name beside it (or where the last export went).
  const QString dir = settings.value("modelExportDirectory", current.absolutePath()).toString();
  const QString suggested = dir + "/" + current.completeBaseName() + "_export." + current.suffix();
  const QString path = chooseModelExportPath(this, tr("Export Model"), suggested);
  if (path.isEmpty()) return;
  settings.setValue("modelExportDirectory", QFileInfo(path).absolutePath());
  exportModel(path);
}

bool MainWindow::fuseModel(const QString& output_path) {
  if (!document_.loaded) {
    showError(tr("Fuse: no model is open"));
    return false;
  }
  app::FuseRequest request;
  request.input_path = document_.loaded->path;
  request.output_path = QFile::encodeName(output_path).toStdString();
  tools::FuseResult result;
  std::string error;
  QApplication::setOverrideCursor(Qt::WaitCursor);
  const int code = app::fuse_file(request, &result, &error);
  tools::LoadedModel fused;
  const bool loaded = code == app::kExitOk &&
                      tools::load_model_bytes(result.bytes, request.output_path, &fused, &error);
  QApplication::restoreOverrideCursor();
  if (!loaded) {
    showError(tr("Fuse: %1").arg(QString::fromStdString(error)));
    return false;
  }
  if (!fuse_dialog_) {
    fuse_dialog_ = new QDialog(this);
    fuse_dialog_->setObjectName("fuseDialog");
    fuse_view_ = new views::FuseView;
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, fuse_dialog_, &QDialog::hide);
    auto* layout = new QVBoxLayout(fuse_dialog_);
    layout->addWidget(fuse_view_, 1);
    layout->addWidget(buttons);
    connect(fuse_view_, &views::FuseView::openRequested, this,
            [this](const QString& path) { openInNewWindow(path); });
    connect(fuse_view_, &views::FuseView::compareRequested, this, [this](const QString& path) {
      training_->panel()->addCompareModels({path});
      if (QDockWidget* d = dock("experimentsDock")) d->raise();
      showNotice(tr("%1 added to the Experiments panel's Compare with list")
                     .arg(QFileInfo(path).fileName()));
    });
    // Fits a 1366x768 screen with the window's frame.
    fuse_dialog_->resize(1100, 640);
  }
  const tools::AnalyzerReport report = tools::analyze_model(fused.model, request.output_path);
  fuse_view_->setResult(currentPath(), output_path, result.fused_count(),
                        static_cast<int>(result.cells.size()), result.before, result.after,
                        QString::fromStdString(app::fuse_report_text(request, result)), report);
  fuse_dialog_->setWindowTitle(tr("Fused: %1").arg(QFileInfo(output_path).fileName()));
  fuse_dialog_->show();
  fuse_dialog_->raise();
  showNotice(tr("Fused %1 into %2: %3 of %4 recurrent cells, model %5 bytes")
                 .arg(QFileInfo(currentPath()).fileName(), output_path)
                 .arg(result.fused_count())
                 .arg(result.cells.size())
                 .arg(views::size_difference_text(qint64(result.before.bytes),
                                                  qint64(result.after.bytes))));
  return true;
}

QString MainWindow::askNewModelPath(const QString& job, const QString& title,
                                    const QString& name_suffix) {
  const QFileInfo current(currentPath());
  const QString path =
      QFileDialog::getSaveFileName(this, title,
                                   current.absolutePath() + "/" + current.completeBaseName() +
                                       name_suffix + "." + current.suffix(),
                                   tr("TensorFlow Lite model (*.tflite);;Circle model (*.circle)"));
  if (path.isEmpty()) return QString();
  if (QFileInfo(path).absoluteFilePath() == current.absoluteFilePath()) {
    showError(tr("%1: choose a new file name; the original stays as it is").arg(job));
    return QString();
  }
  return isModelFileName(path) ? path : path + ".tflite";
}

void MainWindow::showFuseDialog() {
  if (!document_.loaded) return;
  const QString path =
      askNewModelPath(tr("Fuse"), tr("Fuse Recurrent Cells: Save the Fused Model As"), "_fused");
  if (!path.isEmpty()) fuseModel(path);
}

bool MainWindow::quantizeModel(const QString& output_path, const QString& mode) {
  if (!document_.loaded) {
    showError(tr("Quantize: no model is open"));
    return false;
  }
  if (dataset_path_.isEmpty()) {
    showError(
        tr("Quantize: choose a dataset first (Experiments > Data); its samples calibrate "
           "the integer ranges"));
    return false;
  }
  app::QuantizeRequest request;
  request.model_path = document_.loaded->path;
  request.data_path = QFile::encodeName(dataset_path_).toStdString();
  request.output_path = QFile::encodeName(output_path).toStdString();
  if (!tools::parse_quantize_mode(mode.toStdString(), &request.options.quantize.mode)) {
    showError(tr("Quantize: unknown mode '%1' (int8, int16x8 or dynamic)").arg(mode));
    return false;
  }
  std::string report, error;
  QApplication::setOverrideCursor(Qt::WaitCursor);
  const int code = app::run_quantize(request, &report, &error);
  QApplication::restoreOverrideCursor();
  if (code != app::kExitOk) {
    showError(tr("Quantize: %1").arg(QString::fromStdString(error)));
    return false;
  }
  quantized_path_ = output_path;
  if (!quantize_dialog_) {
    quantize_dialog_ = new QDialog(this);
    quantize_dialog_->setObjectName("quantizeDialog");
    quantize_report_ = new QPlainTextEdit;
    quantize_report_->setReadOnly(true);
    quantize_report_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QPushButton* open =
        buttons->addButton(tr("Open Quantized Model"), QDialogButtonBox::ActionRole);
    connect(open, &QPushButton::clicked, this, [this] { openInNewWindow(quantized_path_); });
    connect(buttons, &QDialogButtonBox::rejected, quantize_dialog_, &QDialog::hide);
    auto* layout = new QVBoxLayout(quantize_dialog_);
    layout->addWidget(quantize_report_, 1);
    layout->addWidget(buttons);
    quantize_dialog_->resize(860, 420);  // the report is a dozen lines; fits 1366x768
  }
  quantize_report_->setPlainText(QString::fromStdString(report));
  quantize_dialog_->setWindowTitle(tr("Quantized: %1").arg(QFileInfo(output_path).fileName()));
  quantize_dialog_->show();
  quantize_dialog_->raise();
  showNotice(tr("Quantized %1 (%2, calibrated on %3) into %4: %5")
                 .arg(QFileInfo(currentPath()).fileName(), mode,
                      QFileInfo(dataset_path_).fileName(), output_path)
                 .arg(views::size_difference_text(QFileInfo(currentPath()).size(),
                                                  QFileInfo(output_path).size())));
  return true;
}

void MainWindow::showQuantizeDialog() {
  if (!document_.loaded) return;
  QStringList modes;
  for (tools::QuantizeMode mode :
       {tools::QuantizeMode::kInt8, tools::QuantizeMode::kInt16x8, tools::QuantizeMode::kDynamic}) {
    modes << tools::quantize_mode_name(mode);
  }
  bool chosen = false;
  const QString mode = QInputDialog::getItem(this, tr("Quantize Model"),
                                             tr("Quantization (calibrated on the chosen dataset):"),
                                             modes, 0, false, &chosen);
  if (!chosen) return;
  const QString path =
      askNewModelPath(tr("Quantize"), tr("Quantize: Save the Quantized Model As"), "_" + mode);
  if (!path.isEmpty()) quantizeModel(path, mode);
}

MainWindow* MainWindow::openInNewWindow(const QString& path) {
  auto* window = new MainWindow;
  window->setAttribute(Qt::WA_DeleteOnClose);
  if (!window->openModel(path)) {
    showError(window->statusBar()->currentMessage());
    delete window;
    return nullptr;
  }
  window->move(pos() + QPoint(40, 40));
  window->show();
  return window;
}

void MainWindow::hideError() {
  banner_is_error_ = false;
  error_banner_->hide();
  error_label_->clear();
}

void MainWindow::showOpenDialog() {
  QSettings settings;
  const QString start = document_.loaded ? QFileInfo(currentPath()).absolutePath()
                                         : settings.value(kOpenDirKey, QDir::homePath()).toString();
  QString datasets = "*.ts *.arff *.csv *.npy *.npz";
  for (const app::DatasetReader& reader : app::dataset_readers()) {  // plugins' formats
    for (const std::string& extension : reader.extensions) {
      datasets += " *" + QString::fromStdString(extension);
    }
  }
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open"), start,
      tr("Models, datasets and projects (*.tflite *.circle %1 *.gruwb);;Models (*.tflite "
         "*.circle);;Datasets (%1);;Projects (*.gruwb);;All files (*)")
          .arg(datasets));
  if (path.isEmpty()) return;
  settings.setValue(kOpenDirKey, QFileInfo(path).absolutePath());
  openFile(path);
}

void MainWindow::showSaveProjectDialog() {
  QString start = project_path_;
  if (start.isEmpty() && document_.loaded) {
    start = QFileInfo(currentPath()).absolutePath() + "/" +
            QFileInfo(currentPath()).completeBaseName() + ".gruwb";
  }
  QString path =
      QFileDialog::getSaveFileName(this, tr("Save Project"), start, tr("Projects (*.gruwb)"));
  if (path.isEmpty()) return;
  if (!isProjectFileName(path)) path += ".gruwb";
  saveProject(path);
}

void MainWindow::showExportDialog() {
  if (!document_.loaded) return;
  QSettings settings;
  const QString base = QFileInfo(currentPath()).completeBaseName();
  const QString start =
      settings.value("exportDirectory", QFileInfo(currentPath()).absolutePath()).toString() + "/" +
      base + ".png";
  QString selected;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export Graph"), start, tr("PNG image (*.png);;SVG drawing (*.svg)"), &selected);
  if (path.isEmpty()) return;
  settings.setValue("exportDirectory", QFileInfo(path).absolutePath());
  QString error;
  if (!graph_view_->exportImage(path, &error)) {
    showError(error);
    return;
  }
  statusBar()->showMessage(tr("Exported %1").arg(QFileInfo(path).fileName()), 5000);
}

QStringList MainWindow::recentFiles() const {
  return QSettings().value(kRecentFilesKey).toStringList();
}

void MainWindow::addRecentFile(const QString& path) {
  QStringList files = recentFiles();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  QSettings().setValue(kRecentFilesKey, files);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  // Old entries also live on the window (for their shortcuts): drop them.
  for (QAction* action : recent_menu_->actions()) removeAction(action);
  recent_menu_->clear();
  const QStringList files = recentFiles();
  for (int i = 0; i < files.size() && i < kMaxRecentFiles; ++i) {
    const QString path = files[i];
    QAction* action =
        recent_menu_->addAction(QString("&%1  %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                                [this, path] { openFile(path); });
    action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    action->setToolTip(path);
    action->setStatusTip(path);
  }
  if (files.isEmpty()) recent_menu_->addAction(tr("No recent files"))->setEnabled(false);
  if (welcome_) welcome_->setRecentFiles(files.mid(0, kMaxRecentFiles));
  recent_menu_->addSeparator();
  QAction* clear = recent_menu_->addAction(tr("&Clear Recent Files"), this, [this] {
    QSettings().remove(kRecentFilesKey);
    rebuildRecentMenu();
  });
  clear->setEnabled(!files.isEmpty());
  // Shortcuts of actions in a closed submenu only fire when the actions are
  // also known to the window.
  for (QAction* action : recent_menu_->actions()) addAction(action);
}

void MainWindow::updateTitle() {
  const QString app = tr("GRU Workbench");
  QString title = app;
  if (document_.loaded) title = QString("%1 — %2").arg(QFileInfo(currentPath()).fileName(), app);
  if (!project_path_.isEmpty()) {
    title = QString("%1 [%2]").arg(title, QFileInfo(project_path_).fileName());
  }
  setWindowTitle(title);
  path_label_->setText(currentPath());
  dataset_label_->setText(dataset_path_.isEmpty()
                              ? QString()
                              : tr("dataset: %1").arg(QFileInfo(dataset_path_).fileName()));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!openableFileFrom(event->mimeData()).isEmpty()) {
    event->acceptProposedAction();
    return;
  }
  // Refused here, Qt never delivers the drop; the forbidden cursor alone
  // would not say why.
  event->ignore();
  const QString other = firstLocalFile(event->mimeData());
  if (!other.isEmpty()) {
    statusBar()->showMessage(
        tr("%1: not a model, dataset or project file (GRU Workbench opens .tflite, .circle, .ts, "
           ".arff, .csv, .npy, .npz and .gruwb)")
            .arg(QFileInfo(other).fileName()),
        5000);
  }
}

void MainWindow::dragMoveEvent(QDragMoveEvent* event) {
  if (!openableFileFrom(event->mimeData()).isEmpty()) {
    event->acceptProposedAction();
  } else {
    event->ignore();
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = openableFileFrom(event->mimeData());
  if (path.isEmpty()) {
    // Refused at drag-enter already; only a synthetic drop gets here.
    event->ignore();
    return;
  }
  event->acceptProposedAction();
  openFile(path);
}

void MainWindow::saveSettings() {
  QSettings settings;
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState(kLayoutVersion));
  settings.setValue(kSplitterKey, report_view_->splitter()->saveState());
}

void MainWindow::restoreSettings() {
  QSettings settings;
  // The window's minimum width is the layout's at its last activation, which saw the docks
  // before they were filled (1389 px against 1224 now): refreshed, so 1366 is not clamped.
  layout()->activate();
  if (!restoreGeometry(settings.value(kGeometryKey).toByteArray())) resize(1366, 768);
  default_layout_pending_ = !restoreState(settings.value(kStateKey).toByteArray(), kLayoutVersion);
  report_view_->splitter()->restoreState(settings.value(kSplitterKey).toByteArray());
}

void MainWindow::applyDefaultDockSizes() {
  // Shares of the window, bounded: the left docks no narrower than the Experiments form
  // stacked (its minimum); the right one wide enough
  // for an op's attribute names and values; the bottom one the Curves' minimum plus a little.
  const QSize window = size();
  QList<QDockWidget*> docks;
  QList<int> widths;
  const auto add = [&](const char* name, int width) {
    if (QDockWidget* d = dock(name); d && d->isVisible()) {
      docks << d;
      widths << width;
    }
  };
  // A wide screen gives the Experiments form room for its Stages and Training side by side.
  const double left_share = window.width() > 1600 ? 0.3 : 0.28;
  add("experimentsDock", std::clamp(int(window.width() * left_share), 300, 600));
  add("tensorDock", std::clamp(int(window.width() * 0.17), 270, 400));
  if (!docks.isEmpty()) resizeDocks(docks, widths, Qt::Horizontal);
  if (QDockWidget* curves = dock("curvesDock"); curves && curves->isVisible()) {
    resizeDocks({curves}, {std::max(230, int(window.height() * 0.25))}, Qt::Vertical);
  }
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (default_layout_pending_) {
    default_layout_pending_ = false;
    applyDefaultDockSizes();
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveSettings();
  QMainWindow::closeEvent(event);
}

QList<QPair<QString, QString>> MainWindow::shortcutList() const {
  // Every menu action with a shortcut, as "Menu > Action", in menu order.
  QList<QPair<QString, QString>> rows;
  std::function<void(const QMenu*, const QString&)> walk = [&](const QMenu* menu,
                                                               const QString& prefix) {
    for (const QAction* action : menu->actions()) {
      const QString name = prefix + " > " + QString(action->text()).remove('&').remove("…");
      if (action->menu()) {
        walk(action->menu(), name);
      } else if (!action->shortcut().isEmpty()) {
        rows.append({name, action->shortcut().toString(QKeySequence::NativeText)});
      }
    }
  };
  for (const QAction* top : menuBar()->actions()) {
    if (top->menu()) walk(top->menu(), QString(top->text()).remove('&'));
  }
  return rows;
}

void MainWindow::showShortcutsDialog() {
  if (!shortcuts_dialog_) {
    shortcuts_dialog_ = new QDialog(this);
    shortcuts_dialog_->setObjectName("shortcutsDialog");
    shortcuts_dialog_->setWindowTitle(tr("Keyboard Shortcuts"));
    auto* table = new QTableWidget(0, 2);
    table->setObjectName("shortcutsTable");
    table->setHorizontalHeaderLabels({tr("Action"), tr("Shortcut")});
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, shortcuts_dialog_, &QDialog::hide);
    auto* layout = new QVBoxLayout(shortcuts_dialog_);
    layout->addWidget(table);
    layout->addWidget(buttons);
    shortcuts_dialog_->resize(520, 560);
  }
  auto* table = shortcuts_dialog_->findChild<QTableWidget*>("shortcutsTable");
  const QList<QPair<QString, QString>> rows = shortcutList();
  table->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    table->setItem(i, 0, new QTableWidgetItem(rows[i].first));
    table->setItem(i, 1, new QTableWidgetItem(rows[i].second));
  }
  shortcuts_dialog_->show();
  shortcuts_dialog_->raise();
}

bool MainWindow::welcomeShown() const { return pages_->currentWidget() == welcome_; }

void MainWindow::startJob(const QString& job) {
  // The welcome page's buttons: open what the job needs from the samples, then show where the
  // job lives in the window.
  const QString samples = app::samples_folder();
  const auto raise = [this](const char* dock_name) {
    if (QDockWidget* d = dock(dock_name)) {
      d->show();
      d->raise();
    }
  };
  if (job == "inspect") {
    if (!document_.loaded) openFile(samples + "/gesture_gru_fused.tflite");
  } else if (job == "fuse") {
    if (openFile(samples + "/gesture_gru_while.tflite") && fuse_action_->isEnabled()) {
      fuse_action_->trigger();
    }
  } else if (job == "train") {
    if (!document_.loaded) openFile(samples + "/gesture_gru_fused.tflite");
    if (dataset_path_.isEmpty()) openFile(samples + "/BasicMotionsAcc60_TRAIN.ts");
    raise("experimentsDock");
  } else if (job == "compare" || job == "build") {
    training_->panel()->showBuildMode();
    raise("experimentsDock");
  } else if (job == "quantize") {
    if (!document_.loaded) openFile(samples + "/gesture_gru_fused.tflite");
    if (dataset_path_.isEmpty()) openFile(samples + "/BasicMotionsAcc60_TRAIN.ts");
    if (quantize_action_->isEnabled()) quantize_action_->trigger();
  } else if (job == "board") {
    raise("boardDock");
  } else if (job == "export") {
    if (!document_.loaded) openFile(samples + "/gesture_gru_fused.tflite");
    if (export_model_action_->isEnabled()) export_model_action_->trigger();
  }
}

}  // namespace gruwb::gui
