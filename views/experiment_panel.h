#pragma once
// Experiment staging: the model (open file or a build spec), the dataset,
// the stages to compare from the same initial weights (init, FC only,
// FC + recurrent, last N layers, a custom set of weight tensors), the
// optimizer settings and seeds, the cells and model files to compare (each
// file a row beside the cells, in either mode); Start adds an experiment,
// Pause and Stop act on the selected one. Several experiments run side by
// side, one row each.
// The panel only stages and shows state: the workspace runs them.

#include <QJsonObject>
#include <QStringList>
#include <QWidget>
#include <functional>

class QBoxLayout;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSettings;
class QSpinBox;
class QTreeWidget;
class QTreeWidgetItem;

namespace gruwb::views {

struct ExperimentSettings {
  QString name;
  QString model_path;  // "" = build from `build_spec`
  QString build_spec;  // e.g. "cell=gru,units=60" (gruwb experiment --build)
  QString dataset_path;
  // The model output the loss goes on (its tensor name); "" = automatic
  // (the only output, the one fed by SOFTMAX/LOGISTIC, ...).
  QString loss_output;
  // In order, e.g. {"init", "fc", "all", "last:2", "names:dense/kernel,dense/bias"}.
  QStringList stages;
  QString optimizer = "adam";  // "adam" | "sgd"
  double learning_rate = 1e-3;
  int batch_size = 16;
  int epochs = 10;
  int seeds = 1;
  int first_seed = 1;
  // Cell comparison: the same data and stages through each cell (registered
  // names, engine/tools/cells/cell_registry.h; build spec only). Empty = the
  // model or build spec's cell.
  QStringList compare_cells;
  // Model files compared beside the cells (or the model): each one a row,
  // trained through the same stages and seeds (gruwb --compare-models).
  QStringList compare_models;
  // Run a WHILE-loop or unrolled RNN model as its file is written instead of
  // its checked fused form (gruwb --as-written; app/core/loop_plan.h).
  bool as_written = false;
  // A batch in one pass of its rows (ExperimentSpec::batched_passes); false:
  // single-sample passes as a board trains (gruwb --single-sample-passes).
  bool batched_passes = true;
};

// The settings as JSON (project files) and back; unknown or missing keys
// keep their defaults.
QJsonObject settings_to_json(const ExperimentSettings& settings);
ExperimentSettings settings_from_json(const QJsonObject& json);

// Stage keys the runner understands, built from the staging checkboxes.
// "names:" + comma-separated weight tensor names for a custom set.
QString custom_stage(const QStringList& weight_names);

class ExperimentPanel : public QWidget {
  Q_OBJECT

 public:
  enum class Status { kQueued, kRunning, kPaused, kFinished, kCancelled, kFailed };
  static QString statusText(Status status);

  explicit ExperimentPanel(QWidget* parent = nullptr);
  // As narrow as the Stages and Training groups stacked: a narrow dock (1366x768) leaves the
  // graph its space; the groups sit side by side once the panel is wide enough for both.
  QSize minimumSizeHint() const override;
  bool groupsSideBySide() const;

  ExperimentSettings settings() const;
  void setSettings(const ExperimentSettings& settings);
  // "" when the settings can start an experiment, else what is missing.
  QString validate() const;

  // The open model (the main window's document) and its trainable weight
  // names, offered as the custom tensor set.
  void setModelPath(const QString& path);
  // Switches the model source to Build (a build spec instead of the open file) and focuses
  // the spec: the welcome page's "Build a model" and "Compare cells".
  void showBuildMode();
  void setWeightNames(const QStringList& names);
  // The outputs of the model at `model_path`: tensor names and what the
  // choice shows for each (e.g. "'Identity' [1,4] (softmax)"), and what
  // the automatic choice picks ("" = it cannot decide). With several
  // outputs the "Loss on output" row shows them; a choice that the model
  // does not have goes back to automatic.
  void setModelOutputs(const QString& model_path, const QStringList& names,
                       const QStringList& labels, const QString& automatic);
  QComboBox* lossOutputBox() const { return loss_output_box_; }
  // Ticks exactly `names` in the custom set (adding unknown ones) and turns
  // the custom stage on when any is ticked (the graph's weight checkboxes).
  void setCheckedWeights(const QStringList& names);
  QStringList checkedWeights() const;
  void setDatasetPath(const QString& path);

  // Checks the workspace supplies (the application layer's own): the settings
  // as the runner reads them (build spec, cells; "" = fine), shown before
  // Start, and a dataset the Browse button picks against the staged model
  // (data path, model path or "" in Build mode; "" = it fits). A dataset that
  // fails keeps the previous one and shows the whole reason under the form.
  void setSpecChecker(std::function<QString(const ExperimentSettings&)> check);
  void setDatasetChecker(std::function<QString(const QString&, const QString&)> check);
  // Takes `path` as the dataset when the checker accepts it; false with the
  // reason shown (datasetError()) and the previous dataset kept.
  bool chooseDataset(const QString& path);
  QString datasetError() const;
  QCheckBox* compareCellsBox() const { return cells_box_; }
  QCheckBox* asWrittenBox() const { return as_written_box_; }
  QCheckBox* singleSamplePassesBox() const { return single_sample_box_; }

  // Rows of the experiments list, keyed by the id the workspace gives.
  void addExperiment(int id, const QString& name, const QStringList& stages);
  void setExperimentState(int id, Status status, const QString& stage, const QString& progress);
  Status experimentStatus(int id) const;
  QString experimentProgress(int id) const;
  int experimentCount() const;
  QList<int> experimentIds() const;  // in list order
  int selectedExperiment() const;    // -1 when none
  void selectExperiment(int id);

  // The model files compared beside the cells or the model (both modes).
  void addCompareModels(const QStringList& paths);
  QStringList compareModels() const;
  QListWidget* compareModelList() const { return models_list_; }
  QPushButton* addModelButton() const { return add_model_button_; }
  QPushButton* removeModelButton() const { return remove_model_button_; }

  QPushButton* startButton() const { return start_button_; }
  // Start / Pause / Stop, in the panel until a dock pins them below its scrolling form
  // (takeActionBar: the panel lets go of the row and the caller places it).
  QWidget* takeActionBar();
  QPushButton* pauseButton() const { return pause_button_; }
  QPushButton* stopButton() const { return stop_button_; }
  QTreeWidget* experimentList() const { return experiments_; }

  void saveSettings(QSettings& settings, const QString& group) const;
  void restoreSettings(QSettings& settings, const QString& group);

 signals:
  void startRequested(const gruwb::views::ExperimentSettings& settings);
  void pauseRequested(int id, bool pause);
  void stopRequested(int id);
  // The custom set changed (a tick in the list, setCheckedWeights(),
  // setSettings() or names dropped by setWeightNames()).
  void checkedWeightsChanged(const QStringList& names);
  // chooseDataset() took `path` (Browse): the window shows it in the Dataset dock.
  void datasetChosen(const QString& path);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  int sideBySideWidth() const;  // the width the groups need side by side
  QBoxLayout* groups_ = nullptr;
  QTreeWidgetItem* itemFor(int id) const;
  void updateButtons();
  void browseModel();
  void browseDataset();
  void start();

  QLineEdit* name_edit_ = nullptr;
  QComboBox* model_source_ = nullptr;  // open model file | build spec
  QLineEdit* model_edit_ = nullptr;
  QLineEdit* build_edit_ = nullptr;
  QLineEdit* dataset_edit_ = nullptr;
  QCheckBox* init_box_ = nullptr;
  QCheckBox* fc_box_ = nullptr;
  QCheckBox* all_box_ = nullptr;
  QCheckBox* last_box_ = nullptr;
  QSpinBox* last_spin_ = nullptr;
  QCheckBox* custom_box_ = nullptr;
  QCheckBox* quantize_box_ = nullptr;  // a last stage: int8, int16x8 or dynamic
  QComboBox* quantize_mode_box_ = nullptr;
  QListWidget* custom_list_ = nullptr;
  QCheckBox* as_written_box_ = nullptr;     // loops as written, not fused
  QCheckBox* single_sample_box_ = nullptr;  // batches as single-sample passes
  QCheckBox* cells_box_ = nullptr;          // compare every registered cell (build spec only)
  QStringList loaded_cells_;                // a project's own choice of cells, kept as it was saved
  QListWidget* models_list_ = nullptr;      // model files compared as rows (both modes)
  QPushButton* add_model_button_ = nullptr;
  QPushButton* remove_model_button_ = nullptr;
  void browseCompareModels();
  QComboBox* loss_output_box_ = nullptr;  // "" = automatic, else an output name
  QLabel* loss_output_label_ = nullptr;
  QString outputs_model_;  // the model the box lists the outputs of
  QString loss_output_;    // the choice (kept until that model's outputs are known)
  void updateLossOutputRow();
  bool syncing_ = false;  // list rebuilt by code: one signal at the end
  QComboBox* optimizer_box_ = nullptr;
  QDoubleSpinBox* lr_spin_ = nullptr;
  QSpinBox* batch_spin_ = nullptr;
  QSpinBox* epochs_spin_ = nullptr;
  QSpinBox* seeds_spin_ = nullptr;
  QSpinBox* first_seed_spin_ = nullptr;
  QLabel* problem_label_ = nullptr;
  QLabel* dataset_error_label_ = nullptr;
  std::function<QString(const ExperimentSettings&)> spec_checker_;
  std::function<QString(const QString&, const QString&)> dataset_checker_;
  QWidget* action_bar_ = nullptr;
  QPushButton* start_button_ = nullptr;
  QPushButton* pause_button_ = nullptr;
  QPushButton* stop_button_ = nullptr;
  QTreeWidget* experiments_ = nullptr;
  int next_number_ = 1;
};

}  // namespace gruwb::views

Q_DECLARE_METATYPE(gruwb::views::ExperimentSettings)
