#pragma once
// The board panel: connect to a training board (a real port, `gruwb
// board-sim` or QEMU on /dev/pts/N), see what it can do, upload the model,
// train a stage on it beside the same run on the host, download the trained
// model, time its inference (Bench), and watch the raw frames. A view only: it emits requests and
// shows what it is given; the link runs elsewhere (app/gui/board_workspace) on a worker thread, so
// nothing here can block on a port.

#include <QPair>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace gruwb::views {

class CurvePlot;

struct BoardPortSettings {
  QString port;
  int baud = 115200;
  bool dtr = true;
};

// The Experiments panel's stage settings, for one stage on the board.
struct BoardStageSettings {
  QString stage = "all";  // "fc" | "all"
  QString optimizer = "adam";
  double learning_rate = 1e-3;
  int batch_size = 16;
  int epochs = 1;
  int seed = 1;
  int samples = 0;           // first N samples of the dataset (0 = all)
  int metric_every = 8;      // METRIC every N samples (curve resolution)
  int checkpoint_every = 0;  // run checkpoint every N samples (0 = each epoch end)
};

struct BoardFrameRow {
  bool outgoing = false;
  QString type;  // "HELLO", "METRIC", ... ("?" for a rejected frame)
  int sequence = 0;
  int length = 0;
  bool crc_ok = true;
};

class BoardPanel : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kConsoleRows = 500;  // older frames scroll away

  explicit BoardPanel(QWidget* parent = nullptr);

  void setPorts(const QStringList& ports);
  BoardPortSettings portSettings() const;
  void setPortSettings(const BoardPortSettings& settings);
  BoardStageSettings stageSettings() const;
  void setStageSettings(const BoardStageSettings& settings);
  void setModelAndDataset(const QString& model_path, const QString& dataset_path);

  void setConnected(bool connected, const QString& description);
  bool isConnected() const { return connected_; }
  // HELLO's fields as (label, value) rows; empty clears them.
  void setCapabilities(const QVector<QPair<QString, QString>>& rows);
  QString capability(const QString& label) const;
  void setUploadProgress(qint64 done, qint64 total, double kb_per_s);
  // What runs now ("connecting", "uploading", "training"); "" = idle.
  void setBusy(const QString& what);
  void showMessage(const QString& text);
  void showError(const QString& text);  // one line, in red, naming the port
  QString statusText() const;

  // Appends to the raw console unless it is paused (then only counted).
  void addFrames(const QVector<BoardFrameRow>& frames);
  int consoleRows() const;
  QString consoleText() const;
  void setConsolePaused(bool paused);

  // Empties both plots, keeping the host/board series styles.
  void clearCurves();
  CurvePlot* lossPlot() const { return loss_plot_; }
  CurvePlot* accuracyPlot() const { return accuracy_plot_; }

 signals:
  void refreshPortsRequested();
  void connectRequested(const BoardPortSettings& settings);
  void disconnectRequested();
  void uploadRequested();
  void trainRequested(const BoardStageSettings& settings);
  void stopRequested();
  void downloadRequested();
  void benchRequested();
  void flashRequested();  // write a firmware image to a board (Board > Flash firmware)
  void stageFromExperimentsRequested();

 private:
  QWidget* createConnectionBox();
  QWidget* createTrainingBox();
  void updateButtons();

  QComboBox* port_ = nullptr;
  QComboBox* baud_ = nullptr;
  QCheckBox* dtr_ = nullptr;
  QPushButton* refresh_ = nullptr;
  QPushButton* connect_ = nullptr;
  QPushButton* flash_ = nullptr;
  QTableWidget* capabilities_ = nullptr;
  QLabel* files_ = nullptr;
  QComboBox* stage_ = nullptr;
  QComboBox* optimizer_ = nullptr;
  QDoubleSpinBox* learning_rate_ = nullptr;
  QSpinBox* batch_ = nullptr;
  QSpinBox* epochs_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QSpinBox* samples_ = nullptr;
  QSpinBox* metric_every_ = nullptr;
  QSpinBox* checkpoint_every_ = nullptr;
  QPushButton* from_experiments_ = nullptr;
  QPushButton* upload_ = nullptr;
  QPushButton* train_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* download_ = nullptr;
  QPushButton* bench_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  CurvePlot* loss_plot_ = nullptr;
  CurvePlot* accuracy_plot_ = nullptr;
  QPlainTextEdit* console_ = nullptr;
  QCheckBox* console_paused_ = nullptr;
  QLabel* console_skipped_ = nullptr;
  int skipped_frames_ = 0;
  bool connected_ = false;
  QString busy_;
};

}  // namespace gruwb::views
