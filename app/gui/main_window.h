#pragma once
// The gru-workbench main window: opens .tflite/.circle models (File > Open,
// recent files, drag-and-drop, command line) and shows their analyzer report.
// A file that fails to load never replaces the model already open: the error
// goes to the status bar and to a dismissible banner above the report.

#include <QMainWindow>
#include <QStringList>
#include <memory>

#include "engine/tools/model_file.h"

class QAction;
class QLabel;
class QMenu;
class QStackedWidget;

namespace gruwb::views {
class ModelReportView;
}

namespace gruwb::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr int kMaxRecentFiles = 9;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads `path` and shows it. On failure returns false, shows the one-line
  // error and keeps the current model.
  bool openModel(const QString& path);
  // Loads the current model's file again (it may have changed on disk).
  bool reloadModel();

  // True for the file names the window opens (.tflite, .circle).
  static bool isModelFileName(const QString& path);

  QString currentPath() const;  // "" when no model is open
  QStringList recentFiles() const;
  QString errorText() const;  // the banner's text; "" when no error is shown
  views::ModelReportView* reportView() const { return report_view_; }
  QMenu* recentMenu() const { return recent_menu_; }
  QAction* reloadAction() const { return reload_action_; }

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dragMoveEvent(QDragMoveEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void createActions();
  void createCentralArea();
  void showOpenDialog();
  void showError(const QString& message);
  void hideError();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void updateTitle();

  std::unique_ptr<tools::LoadedModel> model_;  // the open document; null when none
  views::ModelReportView* report_view_ = nullptr;
  QStackedWidget* pages_ = nullptr;  // placeholder until a model is open, then the report
  QWidget* error_banner_ = nullptr;
  QLabel* error_label_ = nullptr;
  QLabel* path_label_ = nullptr;  // permanent status-bar field with the open file
  QMenu* recent_menu_ = nullptr;
  QAction* reload_action_ = nullptr;
};

}  // namespace gruwb::gui
