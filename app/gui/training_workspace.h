#pragma once
// The training side of gru-workbench: experiment staging, live loss and
// accuracy curves, gradient views and the stage comparison, as dock panels
// of the main window. Each experiment runs on its own worker thread through
// the application layer's TrainingSession (app/core/training_session.h); the
// worker batches what it sees (step losses, epoch metrics, the engine
// observer's gradient statistics) and posts it to the GUI thread at most
// every kPostIntervalMs, so the UI stays responsive however fast training is.

#include <QHash>
#include <QJsonValue>
#include <QObject>
#include <QString>
#include <QVector>
#include <functional>
#include <memory>
#include <utility>

#include "app/core/hparams.h"
#include "views/comparison_table.h"
#include "views/curve_plot.h"
#include "views/experiment_panel.h"
#include "views/gradient_view.h"

class QMainWindow;
class QSettings;
class QSplitter;
class QThread;
class QWidget;

class QPushButton;

namespace gruwb::views {
class CurvePlot;
class HparamsTable;
class RunList;
}  // namespace gruwb::views
namespace gruwb::app {
struct ExperimentResult;
}

namespace gruwb::gui {

// One point of a curve. Its series is "run split" ("exp / stage train");
// the run is a row of the Curves dock's run list.
struct CurvePoint {
  QString run;            // "exp / stage" (+ the cell, + "sN" with several seeds)
  QString split;          // "train" or "val"
  bool accuracy = false;  // accuracy plot, else loss
  double step = 0;        // optimizer steps so far
  double epoch = 0;       // epochs so far, fractional inside an epoch
  double seconds = 0;     // wall time since the run started
  double value = 0;
  QString series() const { return run + ' ' + split; }
  // The run of a series name: all but its last word (the split).
  static QString runOf(const QString& series) { return series.left(series.lastIndexOf(' ')); }
};

// What a worker posts to the GUI thread in one go.
struct WorkerBatch {
  QVector<CurvePoint> points;
  QVector<views::WeightGradientSample> weight_gradients;
  QVector<views::StateGradientSample> state_gradients;
  QVector<views::StageResult> stage_results;
  QVector<views::CellResult> cell_results;  // a cell comparison's table
  // Runs finished since the last post (without their trained model bytes): the HParams rows of
  // an experiment still running.
  std::vector<app::StageRun> finished_runs;
  // Everything the run produced (the report writers' input); at the end.
  std::shared_ptr<const app::ExperimentResult> result;
  bool has_state = false;
  views::ExperimentPanel::Status status = views::ExperimentPanel::Status::kRunning;
  QString stage;
  QString progress;
  QString error;  // a failure, one line naming the culprit
};

class TrainingWorkspace : public QObject {
  Q_OBJECT

 public:
  static constexpr int kPostIntervalMs = 50;
  struct Run;  // one experiment: settings, worker thread, pause/cancel flags

  // The widgets, not yet in a window (tests use them directly).
  explicit TrainingWorkspace(QObject* parent = nullptr);
  // Adds the docks to `window` (tabbed at the bottom, staging on the left)
  // and follows its modelChanged(QString)/datasetChanged(QString) signals
  // when it has them.
  explicit TrainingWorkspace(QMainWindow* window);
  bool eventFilter(QObject* watched, QEvent* event) override;
  ~TrainingWorkspace() override;  // stops running experiments and joins them

  // Starts `settings` as a new experiment on a worker thread; its id, or
  // -1 when the loss output cannot be chosen (an unknown name, several
  // candidates and no choice): then the one-line reason goes to the status
  // bar, lastError() and startRefused().
  int startExperiment(const views::ExperimentSettings& settings);
  // Where a cell comparison gets a board for its board columns: `borrow` returns a port the
  // experiment may open ("" = none), `give_back` is called when that experiment ends.
  void setBoardLender(std::function<QString()> borrow, std::function<void()> give_back);
  void pauseExperiment(int id, bool pause);
  void stopExperiment(int id);
  bool isRunning() const;
  // Processes events until no experiment runs or `timeout_ms` passed.
  bool waitForIdle(int timeout_ms);

  views::ExperimentPanel* panel() const { return panel_; }
  views::CurvePlot* lossPlot() const { return loss_plot_; }
  views::CurvePlot* accuracyPlot() const { return accuracy_plot_; }
  QWidget* curvesWidget() const;  // the run list, then the loss and accuracy plots side by side
  views::RunList* runList() const { return run_list_; }
  views::GradientView* gradientView() const { return gradient_view_; }
  views::ComparisonTable* comparisonTable() const { return comparison_; }
  // The HParams dock: one row per run of every experiment of the session (app::hparams_rows),
  // renamed, greyed and left out as the Curves dock's run list renames, hides and deletes them.
  // A row's run is the run list's current run (its curves drawn thicker); double-click shows it.
  views::HparamsTable* hparamsTable() const { return hparams_; }
  QPushButton* hparamsExportButton() const { return hparams_export_; }
  QString lastError() const { return last_error_; }

  // The HParams dock's rows as filtered and sorted, as CSV (app::hparams_csv), written
  // atomically to `path`. False with a one-line `error`.
  bool exportHparams(const QString& path, QString* error) const;
  // Asks for a file name and exports; the outcome goes out as notice().
  void showExportHparamsDialog(QWidget* parent);

  // The experiment whose report File > Export Report writes: the selected
  // one when it has results, else the latest that has; -1 when none.
  int reportExperiment() const;
  // Writes that experiment's report through the application layer's
  // writers (by extension: .html self-contained, .pdf, .csv of every
  // curve, .json, .md), atomically. False with a one-line `error`.
  bool exportReport(const QString& path, QString* error) const;
  // Asks for a file name (parent for the dialog) and exports; errors are
  // shown in a message box.
  void showExportReportDialog(QWidget* parent);

  // The model a finished stage trained (the Comparison dock's stage row `row`;
  // its first seed's weights), written to `path` in the type the extension
  // names (.tflite, .circle, .h/.cc, a folder for the firmware library), as
  // `gruwb export` writes. True with "Saved ..." in `message`, else the
  // one-line reason (no such stage in this session, a stage that did not
  // train, a file that cannot be written).
  bool exportStageModel(int row, const QString& path, QString* message) const;
  // The stage row the export applies to: the selected one, else the last; -1 when none.
  int exportStageRow() const;
  // Asks for a file name and exports; the outcome goes out as notice().
  void showExportStageModelDialog(QWidget* parent);

  // Checks a dataset against the staged model before the panel takes it
  // (app::check_dataset_for_model); "" when it fits, else the full reason.
  QString checkDataset(const QString& data_path, const QString& model_path) const;

  // The project file's "training" section: the staging form, every
  // experiment's settings, state and result (experiment_result_json, so
  // reopened experiments export their reports), and the comparison rows;
  // loading it replaces what is shown (running experiments go on).
  QJsonValue projectSection() const;
  void loadProjectSection(const QJsonValue& value);

  void saveSettings(QSettings& settings) const;
  void restoreSettings(QSettings& settings);

 signals:
  void experimentFinished(int id, views::ExperimentPanel::Status status);
  void startRefused(const QString& reason);
  // A confirmation or an error the window shows in its message banner.
  void notice(const QString& message, bool error);

 private slots:
  void onModelChanged(const QString& path);
  void onDatasetChanged(const QString& path);

 private:
  void createWidgets();
  void showModelOutputs(const QString& path);
  bool checkLossOutput(const views::ExperimentSettings& settings, QString* error) const;
  void apply(int id, const WorkerBatch& batch);
  void addCurvePoint(int id, const CurvePoint& point);
  // The run list's state (shown, name, colour) onto every series of both plots.
  void applyRuns();
  void refreshHparams();  // the HParams dock's rows from every result and the run list
  void highlightRun(const QString& run);  // the run list's current run, thicker in both plots
  void takeRun(const QString& run);       // a deleted run's series out of the plots, kept for undo
  void putRunBack(const QString& run);

  views::ExperimentPanel* panel_ = nullptr;
  views::CurvePlot* loss_plot_ = nullptr;
  views::CurvePlot* accuracy_plot_ = nullptr;
  QSplitter* curves_ = nullptr;        // the two plots
  QSplitter* curves_panel_ = nullptr;  // the run list beside them: the Curves dock
  views::RunList* run_list_ = nullptr;
  QHash<QString, int> run_experiment_;  // run -> the experiment that made it
  struct TakenSeries {
    bool accuracy = false;
    views::CurvePlot::SeriesData data;
  };
  QHash<QString, QVector<TakenSeries>> taken_;  // deleted runs' series, for undo
  views::GradientView* gradient_view_ = nullptr;
  views::ComparisonTable* comparison_ = nullptr;
  views::HparamsTable* hparams_ = nullptr;
  QPushButton* hparams_export_ = nullptr;
  QVector<std::pair<QString, app::HparamsRow>> hparams_rows_;  // run -> its row, as shown
  QHash<int, std::shared_ptr<Run>> runs_;
  QHash<QString, int> stage_colors_;  // "exp / stage" -> palette index
  int next_id_ = 1;
  QString last_error_;
  std::function<QString()> borrow_board_;
  std::function<void()> give_back_board_;
  bool owns_widgets_ = true;  // false once docks own them
  QMainWindow* window_ = nullptr;
};

}  // namespace gruwb::gui
