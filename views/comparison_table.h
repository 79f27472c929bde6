#pragma once
// The comparison of stages like the reference run (init 0.34 -> fc 0.61 ->
// all 0.72): stage, accuracy, cross entropy, delta vs the previous stage,
// trainable parameters and training memory, one row per experiment stage
// (mean +- std over seeds), a confusion matrix for the selected row, and the
// cell-comparison table (GRU/LSTM/RNN and compared model files) when that
// mode ran. Exports CSV/HTML.

#include <QJsonObject>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QLabel;
class QSplitter;
class QTableWidget;

namespace gruwb::views {

struct StageResult {
  QString experiment;
  QString stage;        // "init", "fc", "all", "last:2", ...
  int seeds = 1;        // seeds evaluated; 0: the stage has no results (`outcome` says why)
  QString outcome{};    // "stopped", "failed: ..." when seeds is 0
  double accuracy = 0;  // mean over seeds (test split, else validation)
  double accuracy_std = 0;
  double cross_entropy = 0;
  double cross_entropy_std = 0;
  qint64 trainable_parameters = 0;
  qint64 training_memory_bytes = 0;  // engine arena for training
  QStringList class_names;
  QVector<QVector<qint64>> confusion;  // rows: true class, columns: predicted
  // Quantization stages (int8, ...): the model before and after.
  bool quantized = false;
  QString quantized_from;  // the stage whose model was quantized
  qint64 model_bytes_before = 0, model_bytes_after = 0;
  qint64 arena_bytes_before = 0, arena_bytes_after = 0;
  double latency_us_before = 0, latency_us_after = 0;
  QStringList kept_float;  // ops left in float
};

struct CellResult {
  QString cell;  // "GRU", "LSTM", "SimpleRNN", or a model file's name
  double accuracy = 0;
  double accuracy_std = 0;
  qint64 parameters = 0;
  qint64 fused_bytes = 0;     // model file, fused op
  qint64 while_bytes = 0;     // model file, WHILE loop
  double latency_us = 0;      // one inference on the host
  qint64 unrolled_bytes = 0;  // model file, unrolled steps (0: not measured)
  // Added later, with initialisers so that braced rows may leave them out.
  QString model_path{};         // a model file's row: the file ("" for a built cell)
  qint64 arena_bytes = 0;       // inference arena of the fused form
  double board_latency_us = 0;  // one inference on a board (0: not measured)
  qint64 board_cycles = 0;      // the same in its cycles (0: a simulated board)
  QString board{};              // the board's name
  QString board_note{};         // why the board figure is missing
  QString note{};               // why a model file's fused column is empty
  QString error{};              // the row could not run
  QString model{};  // which model the row trained: "built cell=lstm,units=60, ..." or the file
};

// Rows as JSON (project files) and back.
QJsonObject stage_result_to_json(const StageResult& result);
StageResult stage_result_from_json(const QJsonObject& json);
QJsonObject cell_result_to_json(const CellResult& result);
CellResult cell_result_from_json(const QJsonObject& json);

// Accuracy minus the previous stage's of the same experiment; NaN for an
// experiment's first stage.
QVector<double> accuracy_deltas(const QVector<StageResult>& rows);

// Paints a confusion matrix: counts in cells, shade by the fraction of the
// true class (row), true classes down, predicted across.
class ConfusionMatrixView : public QWidget {
  Q_OBJECT

 public:
  explicit ConfusionMatrixView(QWidget* parent = nullptr);
  void setMatrix(const QVector<QVector<qint64>>& confusion, const QStringList& class_names);
  const QVector<QVector<qint64>>& matrix() const { return confusion_; }
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  // The column (predicted class) labels as painted at the current size: class names that do
  // not fit across a column are turned upright rather than cut ("Stand… Runni…").
  QStringList columnLabels() const;
  bool columnLabelsUpright() const;
  // What hovering `pos` shows: the cell's true and predicted class with its count and share
  // of the row, or a label's full class name; "" elsewhere.
  QString toolTipAt(const QPoint& pos) const;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct Layout {
    int label_width = 0;  // row labels (true classes) left of the grid
    int header = 0;       // "predicted" and the column labels above it
    bool upright = false;
    QRect grid;
  };
  Layout layout() const;
  QString className(int i) const;
  QVector<QVector<qint64>> confusion_;
  QStringList class_names_;
};

class ComparisonTable : public QWidget {
  Q_OBJECT

 public:
  enum Column {
    kExperimentColumn,
    kStageColumn,
    kAccuracyColumn,
    kCrossEntropyColumn,
    kDeltaColumn,
    kParametersColumn,
    kMemoryColumn,
    kDeployColumn,  // quantization stages: model bytes and latency before -> after
    kColumnCount
  };

  // The cell table's columns; every row says which model it used (a file, or
  // "built cell=lstm,units=60, input [1,60,3]").
  enum CellColumn {
    kCellNameColumn,
    kCellModelColumn,
    kCellAccuracyColumn,
    kCellParametersColumn,
    kCellFusedColumn,
    kCellWhileColumn,
    kCellUnrolledColumn,
    kCellLatencyColumn,
    kCellBoardColumn,
    kCellArenaColumn,
    kCellNoteColumn,
    kCellColumnCount
  };

  explicit ComparisonTable(QWidget* parent = nullptr);

  // Adds a row, or replaces the row of the same experiment and stage (a
  // stage's result gets refined as seeds finish).
  void setStageResult(const StageResult& result);
  void setCellResults(const QVector<CellResult>& cells);
  void clear();

  const QVector<StageResult>& stageResults() const { return rows_; }
  const QVector<CellResult>& cellResults() const { return cells_; }
  QTableWidget* stageTable() const { return stage_table_; }
  QTableWidget* cellTable() const { return cell_table_; }
  ConfusionMatrixView* confusionView() const { return confusion_; }
  void selectRow(int row);

 signals:
  // The Export button: the workspace writes the experiment's report
  // (HTML/PDF/CSV/JSON) through the application layer's report writers.
  void exportRequested();
  // The Export model button: the workspace saves the selected stage's trained model.
  void exportModelRequested();

 private:
  void refreshStageTable();
  void showConfusion(int row);

  QVector<StageResult> rows_;
  QVector<CellResult> cells_;
  QTableWidget* stage_table_ = nullptr;
  QTableWidget* cell_table_ = nullptr;
  QLabel* cell_title_ = nullptr;
  QLabel* confusion_title_ = nullptr;
  ConfusionMatrixView* confusion_ = nullptr;
  QSplitter* splitter_ = nullptr;
};

}  // namespace gruwb::views
