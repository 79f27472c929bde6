#pragma once
// The gru-workbench main window. The graph of the open model fills the
// centre; the model tree/report, tensor inspector and size view are dock
// panels whose layout persists (QSettings) and travels in .gruwb project
// files. Models (.tflite/.circle), datasets (.ts/.arff/.csv/.npy/.npz) and
// projects (.gruwb) open from File > Open, recent files (Ctrl+1..9),
// drag-and-drop and the command line. A file that fails to load never
// replaces what is open: the error goes to the status bar and a banner.
//
// Workspaces (e.g. training) plug in through addDock(), viewMenu(),
// addProjectSection() and the modelChanged()/datasetChanged() signals; see
// createWorkspaces() in main_window.cpp for where they are constructed.

#include <QJsonValue>
#include <QMainWindow>
#include <QStringList>
#include <functional>
#include <memory>
#include <vector>

#include "app/core/model_document.h"

class QAction;
class QDialog;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QStackedWidget;

namespace gruwb::views {
class FuseView;
class GraphView;
class ModelReportView;
class PluginListView;
class SizeView;
class TensorInspector;
class WelcomePage;
class DatasetView;
}  // namespace gruwb::views

namespace gruwb::gui {

class BenchRunner;
class SweepWindow;
class TrainingWorkspace;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr int kMaxRecentFiles = 9;
  // Bump when the dock set changes so an old saved layout is not applied.
  static constexpr int kLayoutVersion = 2;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads `path` and shows it. On failure returns false, shows the one-line
  // error and keeps the current model.
  bool openModel(const QString& path);
  // Loads the current model's file again (it may have changed on disk).
  bool reloadModel();
  // Remembers `path` as the session's dataset (checked by the dataset
  // loader); false with the error shown when it cannot be read.
  bool openDataset(const QString& path);
  // Opens a model, dataset or project by its file name.
  bool openFile(const QString& path);
  // Project files: the open model, dataset, graph place, layout and sections.
  bool saveProject(const QString& path);
  bool openProject(const QString& path);

  static bool isModelFileName(const QString& path);    // .tflite, .circle
  static bool isDatasetFileName(const QString& path);  // .ts, .arff, .csv, .npy, .npz
  static bool isProjectFileName(const QString& path);  // .gruwb
  static bool isOpenableFileName(const QString& path);

  QString currentPath() const;  // "" when no model is open
  QString datasetPath() const { return dataset_path_; }
  QString projectPath() const { return project_path_; }
  QStringList recentFiles() const;
  QString errorText() const;   // the banner's text; "" when no error is shown
  QString noticeText() const;  // the banner's text when it confirms something ("" otherwise)

  // File > Export Model: the open model written to `path` in the type its
  // extension names (.tflite, .circle, .h/.cc C array, a folder name for the
  // firmware library), by the code `gruwb export` runs. The banner says what
  // was written, or the one-line error; false on failure.
  bool exportModel(const QString& path);
  // Tools > Fuse: fuses the open model's recurrent cells into `output_path`
  // (app::fuse_file, as `gruwb fuse`), then shows the fuser's report, the
  // sizes before and after and the fused graph beside the original, which
  // stays open. False with the error in the banner.
  bool fuseModel(const QString& output_path);
  // Tools > Quantize: post-training quantization of the open model (`mode`: "int8",
  // "int16x8" or "dynamic"), calibrated on the chosen dataset, written to `output_path`
  // (app::run_quantize, as `gruwb quantize`); the report (ops quantized, kept float and why,
  // sizes, arena and the largest float-vs-quantized difference) is shown beside the model,
  // which stays open. False with the error in the banner (no dataset chosen, a model or data
  // that do not fit, an unwritable file).
  bool quantizeModel(const QString& output_path, const QString& mode = "int8");
  QPlainTextEdit* quantizeReport() const { return quantize_report_; }
  QDialog* quantizeDialog() const { return quantize_dialog_; }
  QAction* quantizeAction() const { return quantize_action_; }
  views::FuseView* fuseView() const { return fuse_view_; }
  QDialog* fuseDialog() const { return fuse_dialog_; }
  // Opens `path` in a new main window (a second document); it deletes itself on close.
  MainWindow* openInNewWindow(const QString& path);
  // File > Open Sweep: a sweep folder or its collected sweep-result.json in
  // the sweep window; false with the error shown (the window keeps its sweep).
  bool openSweep(const QString& path);
  SweepWindow* sweepWindow() const { return sweep_window_; }
  // Help > Plugins: the plugins loaded and refused (app::plugins_json), in a dialog.
  void showPluginsDialog();
  // Help > Keyboard Shortcuts: every menu action's shortcut ("Edit > Find", "Ctrl+F").
  QList<QPair<QString, QString>> shortcutList() const;
  void showShortcutsDialog();
  QDialog* shortcutsDialog() const { return shortcuts_dialog_; }
  views::WelcomePage* welcomePage() const { return welcome_; }
  bool welcomeShown() const;
  // A welcome-page job button: "inspect", "fuse", "train", "compare", "build", "board", "export".
  void startJob(const QString& job);
  // The Dataset dock: classes per split, samples per channel of `path` (what openDataset shows).
  bool showDatasetPreview(const QString& path);
  views::DatasetView* datasetView() const { return dataset_view_; }

  // The open model (null when none) and its analyzer report.
  const tools::LoadedModel* model() const { return document_.loaded.get(); }
  const tools::AnalyzerReport& report() const { return document_.report; }

  // --- Hooks for workspaces -------------------------------------------------
  // Wraps `widget` in a dock named `object_name` (stable: the saved layout
  // refers to it), adds its toggle to the View menu and returns the dock.
  QDockWidget* addDock(QWidget* widget, const QString& title, const QString& object_name,
                       Qt::DockWidgetArea area);
  QMenu* viewMenu() const { return view_menu_; }
  // `save` is called when a project is saved, its value stored under `key`;
  // `load` gets that value back when a project opens (Null when absent).
  void addProjectSection(const QString& key, std::function<QJsonValue()> save,
                         std::function<void(const QJsonValue&)> load);

  views::GraphView* graphView() const { return graph_view_; }
  views::ModelReportView* reportView() const { return report_view_; }
  views::TensorInspector* tensorInspector() const { return inspector_; }
  views::SizeView* sizeView() const { return size_view_; }
  QDockWidget* dock(const QString& object_name) const;
  QMenu* recentMenu() const { return recent_menu_; }
  QAction* reloadAction() const { return reload_action_; }
  QAction* findAction() const { return find_action_; }
  QAction* exportAction() const { return export_action_; }
  QAction* exportReportAction() const { return export_report_action_; }
  QAction* exportModelAction() const { return export_model_action_; }
  QAction* fuseAction() const { return fuse_action_; }
  TrainingWorkspace* trainingWorkspace() const { return training_; }

  // Applies/records the layout the way closing and reopening the app does.
  void saveSettings();
  void restoreSettings();
  // Without a saved layout: dock sizes as shares of the window, so the graph gets the space
  // (at 1366x768 the docks' own hints left it 513x389 px) and the Tensor dock reads an op.
  void applyDefaultDockSizes();
  bool default_layout_pending_ = false;

 signals:
  void modelChanged(const QString& path);
  void datasetChanged(const QString& path);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dragMoveEvent(QDragMoveEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  struct ProjectSection {
    QString key;
    std::function<QJsonValue()> save;
    std::function<void(const QJsonValue&)> load;
  };

  void createActions();
  void createCentralArea();
  void createDocks();
  void createWorkspaces();
  void connectViews();
  void showOpenDialog();
  void showSaveProjectDialog();
  void showExportDialog();
  void showExportModelDialog();
  void showFuseDialog();
  void showQuantizeDialog();
  // A save dialog for a model derived from the open one (BASE<name_suffix>.EXT beside it):
  // "" when cancelled or when it names the open file (`job` says so in the banner).
  QString askNewModelPath(const QString& job, const QString& title, const QString& name_suffix);
  void showError(const QString& message);
  void showNotice(const QString& message);  // the banner, as a confirmation
  void hideError();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void updateTitle();
  void selectReportRow(int subgraph, int op);
  void markRnnCells(const tools::FuseResult& fused);
  void benchmarkModel();
  void showBenchResult(const QString& path, const QString& report, const QString& problem);

  app::ModelDocument document_;  // the open model; its `loaded` is null when none
  QString dataset_path_;
  QString project_path_;
  std::vector<ProjectSection> sections_;

  views::GraphView* graph_view_ = nullptr;
  views::ModelReportView* report_view_ = nullptr;
  views::TensorInspector* inspector_ = nullptr;
  views::SizeView* size_view_ = nullptr;
  views::WelcomePage* welcome_ = nullptr;
  views::DatasetView* dataset_view_ = nullptr;
  QDialog* shortcuts_dialog_ = nullptr;
  QStackedWidget* pages_ = nullptr;  // placeholder until a model is open, then the graph
  QWidget* error_banner_ = nullptr;
  QLabel* error_label_ = nullptr;
  QLabel* path_label_ = nullptr;     // permanent status-bar field with the open file
  QLabel* dataset_label_ = nullptr;  // permanent status-bar field with the dataset
  QMenu* view_menu_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QAction* reload_action_ = nullptr;
  QAction* find_action_ = nullptr;
  QAction* export_action_ = nullptr;
  QAction* export_report_action_ = nullptr;
  QAction* export_model_action_ = nullptr;
  QAction* fuse_action_ = nullptr;
  QDialog* fuse_dialog_ = nullptr;
  QAction* quantize_action_ = nullptr;
  QDialog* quantize_dialog_ = nullptr;
  QPlainTextEdit* quantize_report_ = nullptr;
  QString quantized_path_;  // the last quantized model, for the dialog's Open button
  views::FuseView* fuse_view_ = nullptr;
  bool banner_is_error_ = false;
  QLabel* banner_icon_ = nullptr;
  QAction* bench_action_ = nullptr;
  BenchRunner* bench_ = nullptr;
  SweepWindow* sweep_window_ = nullptr;
  QDialog* bench_dialog_ = nullptr;
  QDialog* plugins_dialog_ = nullptr;
  views::PluginListView* plugin_list_ = nullptr;
  QPlainTextEdit* bench_text_ = nullptr;
  TrainingWorkspace* training_ = nullptr;
};

}  // namespace gruwb::gui
