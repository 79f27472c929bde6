#include "app/gui/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

#include "engine/tools/analyzer.h"
#include "views/model_report_view.h"

namespace gruwb::gui {
namespace {

constexpr char kRecentFilesKey[] = "recentFiles";
constexpr char kOpenDirKey[] = "openDirectory";
constexpr char kGeometryKey[] = "mainWindow/geometry";
constexpr char kSplitterKey[] = "mainWindow/reportSplitter";

// The first local model file among the dragged URLs, or "" if there is none.
QString modelFileFrom(const QMimeData* mime) {
  if (!mime || !mime->hasUrls()) return {};
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile() && MainWindow::isModelFileName(url.toLocalFile())) {
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

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setAcceptDrops(true);
  createCentralArea();
  createActions();
  path_label_ = new QLabel;
  statusBar()->addPermanentWidget(path_label_);
  statusBar()->showMessage(tr("Open a model with File > Open (Ctrl+O) or drop one on the window."));
  updateTitle();

  QSettings settings;
  if (!restoreGeometry(settings.value(kGeometryKey).toByteArray())) resize(1280, 800);
  report_view_->splitter()->restoreState(settings.value(kSplitterKey).toByteArray());
}

MainWindow::~MainWindow() = default;

void MainWindow::createCentralArea() {
  // A banner instead of a modal box: the user can keep reading the model that
  // is still open while the error stays visible until dismissed.
  error_banner_ = new QWidget;
  error_banner_->setObjectName("errorBanner");
  error_banner_->setAttribute(Qt::WA_StyledBackground);
  error_banner_->setStyleSheet(
      "#errorBanner { background: #fdecea; border: 1px solid #e8a29a; border-radius: 3px; }"
      "#errorBanner QLabel { color: #5f1c14; }");
  auto* icon = new QLabel;
  icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxCritical).pixmap(20, 20));
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

  auto* placeholder = new QLabel(tr(
      "<p style='font-size:16pt'>No model open</p>"
      "<p>Drop a <b>.tflite</b> or <b>.circle</b> file here, or use File &gt; Open (Ctrl+O).</p>"));
  placeholder->setAlignment(Qt::AlignCenter);
  placeholder->setEnabled(false);

  report_view_ = new views::ModelReportView;
  pages_ = new QStackedWidget;
  pages_->addWidget(placeholder);
  pages_->addWidget(report_view_);

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

  recent_menu_ = file->addMenu(tr("Open &Recent"));
  rebuildRecentMenu();

  reload_action_ = file->addAction(tr("Re&load"), this, [this] { reloadModel(); });
  reload_action_->setShortcut(QKeySequence(Qt::Key_F5));
  reload_action_->setEnabled(false);

  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);
}

bool MainWindow::isModelFileName(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  return suffix == "tflite" || suffix == "circle";
}

bool MainWindow::openModel(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  auto loaded = std::make_unique<tools::LoadedModel>();
  std::string error;
  if (!tools::load_model_file(QFile::encodeName(absolute).toStdString(), loaded.get(), &error)) {
    showError(QString::fromStdString(error));
    return false;
  }
  const tools::AnalyzerReport report = tools::analyze_model(loaded->model, loaded->path);
  model_ = std::move(loaded);
  report_view_->setReport(report);
  pages_->setCurrentWidget(report_view_);
  hideError();
  reload_action_->setEnabled(true);
  addRecentFile(absolute);
  updateTitle();

  int ops = 0;
  for (const tools::SubgraphReport& subgraph : report.subgraphs) {
    ops += static_cast<int>(subgraph.ops.size());
  }
  statusBar()->showMessage(
      tr("Opened %1: %2 bytes, %3, %4")
          .arg(QFileInfo(absolute).fileName())
          .arg(report.model_bytes)
          .arg(tr("%n subgraph(s)", nullptr, static_cast<int>(report.subgraphs.size())))
          .arg(tr("%n op(s)", nullptr, ops)));
  return true;
}

bool MainWindow::reloadModel() {
  if (!model_) return false;
  return openModel(QFile::decodeName(model_->path.c_str()));
}

QString MainWindow::currentPath() const {
  return model_ ? QFile::decodeName(model_->path.c_str()) : QString();
}

QString MainWindow::errorText() const {
  return error_banner_->isVisibleTo(this) ? error_label_->text() : QString();
}

void MainWindow::showError(const QString& message) {
  statusBar()->showMessage(message);
  error_label_->setText(message);
  error_banner_->show();
}

void MainWindow::hideError() {
  error_banner_->hide();
  error_label_->clear();
}

void MainWindow::showOpenDialog() {
  QSettings settings;
  const QString start = model_ ? QFileInfo(currentPath()).absolutePath()
                               : settings.value(kOpenDirKey, QDir::homePath()).toString();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open Model"), start, tr("Models (*.tflite *.circle);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(kOpenDirKey, QFileInfo(path).absolutePath());
  openModel(path);
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
  recent_menu_->clear();
  const QStringList files = recentFiles();
  for (int i = 0; i < files.size() && i < kMaxRecentFiles; ++i) {
    const QString path = files[i];
    QAction* action =
        recent_menu_->addAction(QString("&%1  %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                                [this, path] { openModel(path); });
    action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    action->setToolTip(path);
    action->setStatusTip(path);
  }
  if (files.isEmpty()) recent_menu_->addAction(tr("No recent files"))->setEnabled(false);
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
  setWindowTitle(model_ ? QString("%1 — %2").arg(QFileInfo(currentPath()).fileName(), app) : app);
  path_label_->setText(currentPath());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!modelFileFrom(event->mimeData()).isEmpty()) {
    event->acceptProposedAction();
    return;
  }
  // Refused here, Qt never delivers the drop; the forbidden cursor alone
  // would not say why.
  event->ignore();
  const QString other = firstLocalFile(event->mimeData());
  if (!other.isEmpty()) {
    statusBar()->showMessage(tr("%1: not a model file (GRU Workbench opens .tflite and .circle)")
                                 .arg(QFileInfo(other).fileName()),
                             5000);
  }
}

void MainWindow::dragMoveEvent(QDragMoveEvent* event) {
  if (!modelFileFrom(event->mimeData()).isEmpty()) {
    event->acceptProposedAction();
  } else {
    event->ignore();
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = modelFileFrom(event->mimeData());
  if (path.isEmpty()) {
    // Refused at drag-enter already; only a synthetic drop gets here.
    event->ignore();
    return;
  }
  event->acceptProposedAction();
  openModel(path);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings settings;
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kSplitterKey, report_view_->splitter()->saveState());
  QMainWindow::closeEvent(event);
}

}  // namespace gruwb::gui
