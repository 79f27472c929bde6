#pragma once
// The board side of gru-workbench: the Board dock (views/board_panel) and
// the link behind it. Every link call runs on a worker thread, one operation
// at a time (connect, upload, train, download, bench), through the application
// layer's board functions (app/core/board.h) and serial/link's training run
// with checkpoints and resume; the worker batches what it sees (frames,
// curve points, progress) and posts it to the GUI thread at most every
// kPostIntervalMs, the training workspace's pattern.

#include <QObject>
#include <QString>
#include <functional>
#include <memory>

#include "views/board_panel.h"

class QMainWindow;
class QThread;

namespace gruwb::gui {

struct BoardBatch;
class BoardPoster;

class BoardWorkspace : public QObject {
  Q_OBJECT

 public:
  static constexpr int kPostIntervalMs = 50;
  struct Link;  // the BoardClient and the flags the worker watches

  explicit BoardWorkspace(QObject* parent = nullptr);  // the panel alone (tests)
  // Adds the "Board" dock to `window` (tabbed with the curves) and follows
  // its modelChanged/datasetChanged signals.
  explicit BoardWorkspace(QMainWindow* window);
  ~BoardWorkspace() override;  // stops the operation and joins the worker

  views::BoardPanel* panel() const { return panel_; }
  void setModelPath(const QString& path);
  void setDatasetPath(const QString& path);

  void refreshPorts();
  void connectBoard(const views::BoardPortSettings& settings);
  void disconnectBoard();
  void uploadModel();
  void train(const views::BoardStageSettings& settings);
  void stop();
  void downloadModel(const QString& path);
  // Uploads the model if the board lacks it, then BENCH: the one-line
  // result (app::board_bench_line) goes to the status line.
  void bench(int runs = 100);

  // Board > Flash firmware: the images `gruwb board flash` finds, in a dialog; then flash().
  void chooseAndFlash();
  // Writes `board`'s installed image with `tool` ("" = the first installed one of the board's
  // tools) through app::board_flash on the worker thread; its lines go to the status line and
  // the result (or the tool's own reason it failed) too. `port`: stm32flash's serial port.
  void flash(const QString& board, const QString& tool, const QString& port = QString());

  // A cell comparison borrows the connected board for its BENCHes (one process owns a port):
  // lendPort() closes the link when the board is connected and idle and returns its port
  // ("" otherwise); takeBackPort() connects again with the same settings.
  QString lendPort();
  void takeBackPort();

  bool isBusy() const;
  // Processes events until no operation runs or `timeout_ms` passed.
  bool waitForIdle(int timeout_ms);
  QString lastError() const { return last_error_; }

 signals:
  void operationFinished(const QString& operation, bool ok);

 private slots:
  void onModelChanged(const QString& path) { setModelPath(path); }
  void onDatasetChanged(const QString& path) { setDatasetPath(path); }

 private:
  void createPanel();
  // Runs `work` on the worker thread; it returns "" or the error.
  void start(const QString& operation, std::function<QString(BoardPoster&)> work);
  void apply(const BoardBatch& batch);
  void copyExperimentSettings();

  views::BoardPanel* panel_ = nullptr;
  QMainWindow* window_ = nullptr;
  std::shared_ptr<Link> link_;
  std::unique_ptr<QThread> worker_;
  views::BoardPortSettings port_settings_;  // of the last connectBoard
  views::BoardPortSettings lent_;           // the settings of a lent port (lendPort)
  QString operation_;
  QString model_path_, dataset_path_;
  QString port_;
  QString last_error_;
  bool owns_panel_ = true;
};

}  // namespace gruwb::gui
