#include "views/experiment_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QResizeEvent>
#include <QSettings>
#include <QSpinBox>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/tools/cells/cell_registry.h"

namespace gruwb::views {
namespace {

constexpr int kIdRole = Qt::UserRole;
constexpr int kStatusRole = Qt::UserRole + 1;
enum ListColumn { kNameColumn, kStageColumn, kProgressColumn, kStatusColumn };

bool isActive(ExperimentPanel::Status status) {
  return status == ExperimentPanel::Status::kQueued ||
         status == ExperimentPanel::Status::kRunning || status == ExperimentPanel::Status::kPaused;
}

}  // namespace

QString custom_stage(const QStringList& weight_names) {
  return QStringLiteral("names:") + weight_names.join(',');
}

QJsonObject settings_to_json(const ExperimentSettings& s) {
  QJsonObject o;
  o["name"] = s.name;
  o["model"] = s.model_path;
  o["build"] = s.build_spec;
  o["dataset"] = s.dataset_path;
  o["loss_output"] = s.loss_output;
  o["stages"] = QJsonArray::fromStringList(s.stages);
  o["optimizer"] = s.optimizer;
  o["learning_rate"] = s.learning_rate;
  o["batch_size"] = s.batch_size;
  o["epochs"] = s.epochs;
  o["seeds"] = s.seeds;
  o["first_seed"] = s.first_seed;
  o["compare_cells"] = QJsonArray::fromStringList(s.compare_cells);
  o["compare_models"] = QJsonArray::fromStringList(s.compare_models);
  if (s.as_written) o["as_written"] = true;
  if (!s.batched_passes) o["batched_passes"] = false;  // as in an experiment spec
  return o;
}

ExperimentSettings settings_from_json(const QJsonObject& o) {
  const auto strings = [](const QJsonValue& v) {
    QStringList out;
    for (const QJsonValue& item : v.toArray()) out << item.toString();
    return out;
  };
  ExperimentSettings s;
  s.name = o["name"].toString();
  s.model_path = o["model"].toString();
  s.build_spec = o["build"].toString();
  s.dataset_path = o["dataset"].toString();
  s.loss_output = o["loss_output"].toString();
  s.stages = strings(o["stages"]);
  s.optimizer = o["optimizer"].toString(s.optimizer);
  s.learning_rate = o["learning_rate"].toDouble(s.learning_rate);
  s.batch_size = o["batch_size"].toInt(s.batch_size);
  s.epochs = o["epochs"].toInt(s.epochs);
  s.seeds = o["seeds"].toInt(s.seeds);
  s.first_seed = o["first_seed"].toInt(s.first_seed);
  s.compare_cells = strings(o["compare_cells"]);
  s.compare_models = strings(o["compare_models"]);
  s.as_written = o["as_written"].toBool(false);
  s.batched_passes = o["batched_passes"].toBool(true);
  return s;
}

QString ExperimentPanel::statusText(Status status) {
  switch (status) {
    case Status::kQueued: return tr("queued");
    case Status::kRunning: return tr("running");
    case Status::kPaused: return tr("paused");
    case Status::kFinished: return tr("finished");
    case Status::kCancelled: return tr("stopped");
    case Status::kFailed: return tr("failed");
  }
  return {};
}

ExperimentPanel::ExperimentPanel(QWidget* parent) : QWidget(parent) {
  name_edit_ = new QLineEdit;
  name_edit_->setPlaceholderText(tr("experiment %1").arg(next_number_));
  model_source_ = new QComboBox;
  model_source_->addItem(tr("Model file"));
  model_source_->addItem(tr("Build"));
  model_source_->setToolTip(tr("Train the open model, or a fresh one from a build spec"));
  model_edit_ = new QLineEdit;
  model_edit_->setObjectName("modelPath");
  model_edit_->setPlaceholderText(tr(".tflite or .circle"));
  build_edit_ = new QLineEdit("cell=gru,units=60");
  build_edit_->setObjectName("buildSpec");
  build_edit_->setToolTip(
      tr("As for gruwb experiment --build, e.g. cell=lstm,units=32; with a "
         "model file and Compare cells: how the cells are built"));
  build_edit_->hide();
  auto* model_browse = new QToolButton;
  model_browse->setText(tr("\u2026"));
  connect(model_browse, &QToolButton::clicked, this, &ExperimentPanel::browseModel);
  auto* model_row = new QHBoxLayout;
  model_row->addWidget(model_source_);
  model_row->addWidget(model_edit_, 1);
  model_row->addWidget(build_edit_, 1);
  model_row->addWidget(model_browse);
  QStringList cell_names;
  for (const tools::CellDescriptor* cell : tools::registered_cells())
    cell_names << QString::fromUtf8(cell->display_name);
  // The count only: the names (in the tooltip) would set the narrowest the dock can be.
  cells_box_ = new QCheckBox(tr("Compare cells (%1 types)").arg(cell_names.size()));
  cells_box_->setObjectName("compareCells");
  cells_box_->setToolTip(
      tr("Run the same data and stages through a fresh model of each registered cell (%1) "
         "built from the Build spec; with a model file, that model is a row beside them (the "
         "cells take its T). The comparison shows accuracy, model sizes and latency per row "
         "and which model each row used")
          .arg(cell_names.join(", ")));
  // The build spec shows whenever cells are built: in Build mode, and beside a
  // model file when Compare cells is ticked.
  const auto show_source = [=] {
    const bool file = model_source_->currentIndex() == 0;
    model_edit_->setVisible(file);
    model_browse->setVisible(file);
    build_edit_->setVisible(!file || cells_box_->isChecked());
  };
  connect(cells_box_, &QCheckBox::toggled, this, [=] {
    show_source();
    updateButtons();
  });
  connect(model_source_, &QComboBox::currentIndexChanged, this, [=] {
    show_source();
    updateLossOutputRow();
    updateButtons();
  });

  // Model files as rows beside the cells (or the model), in either mode.
  models_list_ = new QListWidget;
  models_list_->setObjectName("compareModels");
  models_list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  models_list_->setMaximumHeight(52);
  models_list_->setToolTip(
      tr("Model files compared as rows beside the cells: the same data, stages and seeds; "
         "their sizes, fused size (when the fuser fuses them), arena and latency"));
  add_model_button_ = new QPushButton(tr("Add model file\u2026"));
  add_model_button_->setObjectName("addModelFile");
  connect(add_model_button_, &QPushButton::clicked, this, &ExperimentPanel::browseCompareModels);
  remove_model_button_ = new QPushButton(tr("Remove"));
  remove_model_button_->setObjectName("removeModelFile");
  remove_model_button_->setEnabled(false);
  connect(remove_model_button_, &QPushButton::clicked, this, [this] {
    qDeleteAll(models_list_->selectedItems());
    remove_model_button_->setEnabled(!models_list_->selectedItems().isEmpty());
  });
  connect(models_list_, &QListWidget::itemSelectionChanged, this,
          [this] { remove_model_button_->setEnabled(!models_list_->selectedItems().isEmpty()); });
  auto* models_buttons = new QVBoxLayout;
  models_buttons->setSpacing(2);
  models_buttons->addWidget(add_model_button_);
  models_buttons->addWidget(remove_model_button_);
  models_buttons->addStretch(1);
  auto* models_row = new QHBoxLayout;
  models_row->addWidget(models_list_, 1);
  models_row->addLayout(models_buttons);

  dataset_edit_ = new QLineEdit;
  dataset_edit_->setObjectName("datasetPath");
  dataset_edit_->setPlaceholderText(tr(".ts, .arff, .csv, .npz or a folder"));
  auto* dataset_browse = new QToolButton;
  dataset_browse->setText(tr("\u2026"));
  connect(dataset_browse, &QToolButton::clicked, this, &ExperimentPanel::browseDataset);
  auto* dataset_row = new QHBoxLayout;
  dataset_row->addWidget(dataset_edit_, 1);
  dataset_row->addWidget(dataset_browse);

  loss_output_box_ = new QComboBox;
  loss_output_box_->setObjectName("lossOutput");
  loss_output_box_->setToolTip(
      tr("The model output the loss goes on (gruwb --output NAME). Automatic: the only output, "
         "the one fed by SOFTMAX/LOGISTIC, else the only float output with the data's classes"));
  loss_output_box_->addItem(tr("Automatic"), QString());
  connect(loss_output_box_, &QComboBox::activated, this,
          [this](int index) { loss_output_ = loss_output_box_->itemData(index).toString(); });
  loss_output_label_ = new QLabel(tr("Loss on output"));

  as_written_box_ = new QCheckBox(tr("Run loops as written (not fused)"));
  as_written_box_->setObjectName("asWritten");
  as_written_box_->setToolTip(
      tr("A WHILE-loop or unrolled RNN model normally runs and trains in its fused form once the "
         "fused form's outputs are checked to agree with the file's (gruwb prints which form ran). "
         "Tick to run the file exactly as written (gruwb --as-written): slower, and the trained "
         "model is saved in the loop form"));

  auto* source = new QFormLayout;
  source->addRow(tr("Name"), name_edit_);
  source->addRow(tr("Model"), model_row);
  source->addRow(QString(), cells_box_);
  source->addRow(tr("Compare with"), models_row);
  source->addRow(loss_output_label_, loss_output_box_);
  source->addRow(tr("Data"), dataset_row);
  source->addRow(QString(), as_written_box_);

  // Stages, all from the same initial weights.
  init_box_ = new QCheckBox(tr("Initial (evaluate only)"));
  fc_box_ = new QCheckBox(tr("FC only (last Dense)"));
  all_box_ = new QCheckBox(tr("FC + recurrent (all)"));
  init_box_->setChecked(true);
  fc_box_->setChecked(true);
  all_box_->setChecked(true);
  last_box_ = new QCheckBox(tr("Last N layers"));
  last_spin_ = new QSpinBox;
  last_spin_->setRange(1, 64);
  last_spin_->setValue(2);
  custom_box_ = new QCheckBox(tr("Custom tensors"));
  custom_list_ = new QListWidget;
  custom_list_->setObjectName("customTensors");
  custom_list_->setMaximumHeight(90);
  custom_list_->setEnabled(false);
  connect(custom_box_, &QCheckBox::toggled, custom_list_, &QWidget::setEnabled);
  auto* last_row = new QHBoxLayout;
  last_row->addWidget(last_box_);
  last_row->addWidget(last_spin_);
  last_row->addStretch(1);
  quantize_box_ = new QCheckBox(tr("Then quantize"));
  quantize_box_->setObjectName("quantizeStage");
  quantize_box_->setToolTip(
      tr("Post-training quantization of the last training stage's model, calibrated on the "
         "training split and scored on the test split: the accuracy it costs, the bytes, arena "
         "and latency it saves (gruwb quantize)"));
  quantize_mode_box_ = new QComboBox;
  quantize_mode_box_->setObjectName("quantizeMode");
  quantize_mode_box_->addItem(tr("int8"), "int8");
  quantize_mode_box_->addItem(tr("int16x8"), "int16x8");
  quantize_mode_box_->addItem(tr("dynamic range"), "dynamic");
  quantize_mode_box_->setEnabled(false);
  connect(quantize_box_, &QCheckBox::toggled, quantize_mode_box_, &QWidget::setEnabled);
  auto* quantize_row = new QHBoxLayout;
  quantize_row->addWidget(quantize_box_);
  quantize_row->addWidget(quantize_mode_box_);
  quantize_row->addStretch(1);
  auto* stages = new QGroupBox(tr("Stages"));
  auto* stages_layout = new QVBoxLayout(stages);
  stages_layout->setSpacing(2);
  stages_layout->addWidget(init_box_);
  stages_layout->addWidget(fc_box_);
  stages_layout->addWidget(all_box_);
  stages_layout->addLayout(last_row);
  stages_layout->addWidget(custom_box_);
  stages_layout->addWidget(custom_list_);
  stages_layout->addLayout(quantize_row);

  optimizer_box_ = new QComboBox;
  optimizer_box_->addItem("Adam", "adam");
  optimizer_box_->addItem("SGD", "sgd");
  lr_spin_ = new QDoubleSpinBox;
  lr_spin_->setDecimals(5);
  lr_spin_->setRange(1e-5, 10);
  lr_spin_->setSingleStep(1e-4);
  lr_spin_->setValue(1e-3);
  batch_spin_ = new QSpinBox;
  batch_spin_->setRange(1, 4096);
  batch_spin_->setValue(16);
  epochs_spin_ = new QSpinBox;
  epochs_spin_->setRange(1, 10000);
  epochs_spin_->setValue(10);
  seeds_spin_ = new QSpinBox;
  seeds_spin_->setRange(1, 100);
  seeds_spin_->setToolTip(tr("Runs per stage with different initial weights: mean \u00b1 std"));
  first_seed_spin_ = new QSpinBox;
  first_seed_spin_->setRange(0, 1000000);
  first_seed_spin_->setValue(1);
  auto* training = new QGroupBox(tr("Training"));
  auto* training_form = new QFormLayout(training);
  training_form->addRow(tr("Optimizer"), optimizer_box_);
  training_form->addRow(tr("Learning rate"), lr_spin_);
  training_form->addRow(tr("Batch"), batch_spin_);
  single_sample_box_ = new QCheckBox(tr("One sample per pass"));
  single_sample_box_->setObjectName("singleSamplePasses");
  single_sample_box_->setToolTip(
      tr("A batch normally trains in one pass of its rows through the batched kernels: several "
         "times faster, equal within float rounding, but its memory grows with the batch. Tick "
         "to train each batch one sample at a time, as a board does: the memory of batch 1 and a "
         "board run's weights (gruwb --single-sample-passes)"));
  training_form->addRow(QString(), single_sample_box_);
  training_form->addRow(tr("Epochs"), epochs_spin_);
  auto* seeds_row = new QHBoxLayout;
  seeds_row->addWidget(seeds_spin_);
  seeds_row->addWidget(new QLabel(tr("from")));
  seeds_row->addWidget(first_seed_spin_);
  training_form->addRow(tr("Seeds"), seeds_row);

  problem_label_ = new QLabel;
  problem_label_->setObjectName("experimentProblem");
  problem_label_->setWordWrap(true);
  problem_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problem_label_->setStyleSheet("color: #8a5a00");
  dataset_error_label_ = new QLabel;
  dataset_error_label_->setObjectName("datasetError");
  dataset_error_label_->setWordWrap(true);
  dataset_error_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  dataset_error_label_->setStyleSheet("color: #a01c10");
  dataset_error_label_->hide();
  start_button_ = new QPushButton(tr("Start"));
  start_button_->setObjectName("startExperiment");
  start_button_->setToolTip(tr("Run these stages as a new experiment (others keep running)"));
  pause_button_ = new QPushButton(tr("Pause"));
  pause_button_->setObjectName("pauseExperiment");
  stop_button_ = new QPushButton(tr("Stop"));
  stop_button_->setObjectName("stopExperiment");
  stop_button_->setToolTip(tr("Stop the selected experiment; results so far are kept"));
  action_bar_ = new QWidget;
  action_bar_->setObjectName("experimentActions");
  auto* buttons = new QHBoxLayout(action_bar_);
  buttons->setContentsMargins(4, 4, 4, 4);
  buttons->addWidget(start_button_);
  buttons->addWidget(pause_button_);
  buttons->addWidget(stop_button_);

  experiments_ = new QTreeWidget;
  experiments_->setObjectName("experimentList");
  experiments_->setRootIsDecorated(false);
  experiments_->setHeaderLabels({tr("Experiment"), tr("Stage"), tr("Progress"), tr("Status")});
  experiments_->header()->setStretchLastSection(true);
  experiments_->setMinimumHeight(80);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(source);
  // What stops Start, right under the fields it is about (the panel scrolls below).
  layout->addWidget(dataset_error_label_);
  layout->addWidget(problem_label_);
  groups_ = new QBoxLayout(QBoxLayout::TopToBottom);
  groups_->addWidget(stages, 1);
  groups_->addWidget(training, 1);
  layout->addLayout(groups_);
  layout->addWidget(action_bar_);
  layout->addWidget(experiments_, 1);

  connect(start_button_, &QPushButton::clicked, this, &ExperimentPanel::start);
  connect(pause_button_, &QPushButton::clicked, this, [this] {
    const int id = selectedExperiment();
    if (id >= 0) emit pauseRequested(id, experimentStatus(id) != Status::kPaused);
  });
  connect(stop_button_, &QPushButton::clicked, this, [this] {
    const int id = selectedExperiment();
    if (id >= 0) emit stopRequested(id);
  });
  connect(experiments_, &QTreeWidget::currentItemChanged, this, &ExperimentPanel::updateButtons);
  for (QCheckBox* box : {init_box_, fc_box_, all_box_, last_box_, custom_box_}) {
    connect(box, &QCheckBox::toggled, this, &ExperimentPanel::updateButtons);
  }
  connect(model_edit_, &QLineEdit::textChanged, this, &ExperimentPanel::updateButtons);
  connect(model_edit_, &QLineEdit::textChanged, this, &ExperimentPanel::updateLossOutputRow);
  connect(build_edit_, &QLineEdit::textChanged, this, &ExperimentPanel::updateButtons);
  connect(dataset_edit_, &QLineEdit::textChanged, this, &ExperimentPanel::updateButtons);
  connect(custom_list_, &QListWidget::itemChanged, this, [this] {
    updateButtons();
    if (!syncing_) emit checkedWeightsChanged(checkedWeights());
  });
  updateLossOutputRow();
  updateButtons();
}

void ExperimentPanel::setModelOutputs(const QString& model_path, const QStringList& names,
                                      const QStringList& labels, const QString& automatic) {
  outputs_model_ = model_path;
  loss_output_box_->clear();
  loss_output_box_->addItem(automatic.isEmpty() ? tr("Automatic (cannot tell: choose one)")
                                                : tr("Automatic: %1").arg(automatic),
                            QString());
  for (int i = 0; i < names.size(); ++i) loss_output_box_->addItem(labels.value(i), names[i]);
  const int chosen = loss_output_.isEmpty() ? 0 : loss_output_box_->findData(loss_output_);
  if (chosen < 0) loss_output_.clear();  // that model has no such output
  loss_output_box_->setCurrentIndex(chosen < 0 ? 0 : chosen);
  updateLossOutputRow();
}

// The choice matters only for a model file with several outputs.
void ExperimentPanel::updateLossOutputRow() {
  const bool file = model_source_->currentIndex() == 0;
  const bool listed = file && !outputs_model_.isEmpty() &&
                      model_edit_->text().trimmed() == outputs_model_ &&
                      loss_output_box_->count() > 2;
  loss_output_box_->setVisible(listed);
  loss_output_label_->setVisible(listed);
}

ExperimentSettings ExperimentPanel::settings() const {
  ExperimentSettings s;
  s.name = name_edit_->text().trimmed();
  if (s.name.isEmpty()) s.name = name_edit_->placeholderText();
  if (model_source_->currentIndex() == 0) {
    s.model_path = model_edit_->text().trimmed();
    // A choice for another model than the listed one does not carry over.
    if (outputs_model_.isEmpty() || s.model_path == outputs_model_) s.loss_output = loss_output_;
  }
  // The cells of a comparison are built from the spec in either mode.
  if (model_source_->currentIndex() == 1 || cells_box_->isChecked()) {
    s.build_spec = build_edit_->text().trimmed();
    if (cells_box_->isChecked()) {
      s.compare_cells = loaded_cells_;
      if (s.compare_cells.isEmpty()) {
        for (const tools::CellDescriptor* cell : tools::registered_cells())
          s.compare_cells << QString::fromUtf8(cell->name);
      }
    }
  }
  s.compare_models = compareModels();
  s.dataset_path = dataset_edit_->text().trimmed();
  if (init_box_->isChecked()) s.stages << "init";
  if (fc_box_->isChecked()) s.stages << "fc";
  if (all_box_->isChecked()) s.stages << "all";
  if (last_box_->isChecked()) s.stages << QStringLiteral("last:%1").arg(last_spin_->value());
  if (custom_box_->isChecked()) {
    const QStringList names = checkedWeights();
    if (!names.isEmpty()) s.stages << custom_stage(names);
  }
  if (quantize_box_->isChecked()) s.stages << quantize_mode_box_->currentData().toString();
  s.optimizer = optimizer_box_->currentData().toString();
  s.learning_rate = lr_spin_->value();
  s.batch_size = batch_spin_->value();
  s.epochs = epochs_spin_->value();
  s.seeds = seeds_spin_->value();
  s.first_seed = first_seed_spin_->value();
  s.as_written = as_written_box_->isChecked();
  s.batched_passes = !single_sample_box_->isChecked();
  return s;
}

void ExperimentPanel::setSettings(const ExperimentSettings& s) {
  name_edit_->setText(s.name);
  model_source_->setCurrentIndex(s.model_path.isEmpty() && !s.build_spec.isEmpty() ? 1 : 0);
  model_edit_->setText(s.model_path);
  if (!s.build_spec.isEmpty()) build_edit_->setText(s.build_spec);
  dataset_edit_->setText(s.dataset_path);
  loss_output_ = s.loss_output;
  const int chosen = loss_output_.isEmpty() ? 0 : loss_output_box_->findData(loss_output_);
  loss_output_box_->setCurrentIndex(chosen < 0 ? 0 : chosen);
  updateLossOutputRow();
  loaded_cells_ = s.compare_cells;
  cells_box_->setChecked(!s.compare_cells.isEmpty());
  as_written_box_->setChecked(s.as_written);
  single_sample_box_->setChecked(!s.batched_passes);
  models_list_->clear();
  addCompareModels(s.compare_models);
  init_box_->setChecked(s.stages.contains("init"));
  fc_box_->setChecked(s.stages.contains("fc"));
  all_box_->setChecked(s.stages.contains("all"));
  last_box_->setChecked(false);
  custom_box_->setChecked(false);
  quantize_box_->setChecked(false);
  for (const QString& stage : s.stages) {
    const int mode = quantize_mode_box_->findData(stage);
    if (mode >= 0) {
      quantize_box_->setChecked(true);
      quantize_mode_box_->setCurrentIndex(mode);
    } else if (stage.startsWith("last:")) {
      last_box_->setChecked(true);
      last_spin_->setValue(stage.mid(5).toInt());
    } else if (stage.startsWith("names:")) {
      custom_box_->setChecked(true);
      setCheckedWeights(stage.mid(6).split(',', Qt::SkipEmptyParts));
    }
  }
  optimizer_box_->setCurrentIndex(s.optimizer == "sgd" ? 1 : 0);
  lr_spin_->setValue(s.learning_rate);
  batch_spin_->setValue(s.batch_size);
  epochs_spin_->setValue(s.epochs);
  seeds_spin_->setValue(s.seeds);
  first_seed_spin_->setValue(s.first_seed);
  updateButtons();
}

QString ExperimentPanel::validate() const {
  const ExperimentSettings s = settings();
  if (s.model_path.isEmpty() && s.build_spec.isEmpty())
    return tr("Choose a model or a build spec.");
  if (s.dataset_path.isEmpty()) return tr("Choose a dataset.");
  if (s.stages.isEmpty()) {
    return custom_box_->isChecked() ? tr("Tick at least one tensor of the custom set.")
                                    : tr("Pick at least one stage.");
  }
  return spec_checker_ ? spec_checker_(s) : QString();
}

void ExperimentPanel::setSpecChecker(std::function<QString(const ExperimentSettings&)> check) {
  spec_checker_ = std::move(check);
  updateButtons();
}

void ExperimentPanel::setDatasetChecker(
    std::function<QString(const QString&, const QString&)> check) {
  dataset_checker_ = std::move(check);
}

bool ExperimentPanel::chooseDataset(const QString& path) {
  const QString model = model_source_->currentIndex() == 0 ? model_edit_->text().trimmed() : "";
  const QString error = dataset_checker_ ? dataset_checker_(path, model) : QString();
  dataset_error_label_->setText(
      error.isEmpty() ? QString()
                      : tr("Dataset not taken (the previous one stays): %1").arg(error));
  dataset_error_label_->setVisible(!error.isEmpty());
  if (!error.isEmpty()) return false;
  dataset_edit_->setText(path);
  emit datasetChosen(path);
  return true;
}

QString ExperimentPanel::datasetError() const { return dataset_error_label_->text(); }

void ExperimentPanel::showBuildMode() {
  model_source_->setCurrentIndex(1);
  build_edit_->setFocus(Qt::OtherFocusReason);
}

void ExperimentPanel::setModelPath(const QString& path) {
  model_source_->setCurrentIndex(0);
  model_edit_->setText(path);
}

void ExperimentPanel::setWeightNames(const QStringList& names) {
  const QStringList checked = checkedWeights();
  syncing_ = true;
  custom_list_->clear();
  for (const QString& name : names) {
    auto* item = new QListWidgetItem(name, custom_list_);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(checked.contains(name) ? Qt::Checked : Qt::Unchecked);
  }
  syncing_ = false;
  updateButtons();
  if (checkedWeights() != checked) emit checkedWeightsChanged(checkedWeights());
}

QStringList ExperimentPanel::checkedWeights() const {
  QStringList names;
  for (int i = 0; i < custom_list_->count(); ++i) {
    if (custom_list_->item(i)->checkState() == Qt::Checked) names << custom_list_->item(i)->text();
  }
  return names;
}

void ExperimentPanel::setCheckedWeights(const QStringList& names) {
  const QStringList before = checkedWeights();
  syncing_ = true;
  for (const QString& name : names) {
    if (custom_list_->findItems(name, Qt::MatchExactly).isEmpty()) {
      auto* item = new QListWidgetItem(name, custom_list_);
      item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    }
  }
  for (int i = 0; i < custom_list_->count(); ++i) {
    QListWidgetItem* item = custom_list_->item(i);
    item->setCheckState(names.contains(item->text()) ? Qt::Checked : Qt::Unchecked);
  }
  if (!names.isEmpty()) custom_box_->setChecked(true);
  syncing_ = false;
  updateButtons();
  // One signal for the whole change, not one per list item.
  if (checkedWeights() != before) emit checkedWeightsChanged(checkedWeights());
}

void ExperimentPanel::setDatasetPath(const QString& path) {
  // The window checked it already.
  dataset_edit_->setText(path);
  dataset_error_label_->clear();
  dataset_error_label_->hide();
}

void ExperimentPanel::addCompareModels(const QStringList& paths) {
  for (const QString& path : paths) {
    if (path.isEmpty() || compareModels().contains(path)) continue;
    auto* item = new QListWidgetItem(QFileInfo(path).fileName(), models_list_);
    item->setData(Qt::UserRole, path);
    item->setToolTip(path);
  }
}

QStringList ExperimentPanel::compareModels() const {
  QStringList paths;
  for (int i = 0; i < models_list_->count(); ++i)
    paths << models_list_->item(i)->data(Qt::UserRole).toString();
  return paths;
}

void ExperimentPanel::browseCompareModels() {
  const QStringList paths = QFileDialog::getOpenFileNames(
      this, tr("Model files to compare"), model_edit_->text(), tr("Models (*.tflite *.circle)"));
  addCompareModels(paths);
}

void ExperimentPanel::start() {
  if (!validate().isEmpty()) return;
  ExperimentSettings s = settings();
  // A fresh default name for the next one; an explicit name is the user's.
  ++next_number_;
  name_edit_->setPlaceholderText(tr("experiment %1").arg(next_number_));
  if (name_edit_->text().trimmed() == s.name) name_edit_->clear();
  emit startRequested(s);
}

QSize ExperimentPanel::minimumSizeHint() const {
  QSize hint = QWidget::minimumSizeHint();  // the layout's, in its current direction
  if (!groupsSideBySide()) return hint;
  // Side by side now, but the panel may narrow again: the widest row with the groups stacked.
  int width = 0;
  for (int i = 0; i < layout()->count(); ++i) {
    QLayoutItem* item = layout()->itemAt(i);
    if (item->layout() != groups_) width = std::max(width, item->minimumSize().width());
  }
  for (int i = 0; i < groups_->count(); ++i) {
    width = std::max(width, groups_->itemAt(i)->minimumSize().width());
  }
  const QMargins margins = layout()->contentsMargins();
  hint.setWidth(width + margins.left() + margins.right());
  return hint;
}

bool ExperimentPanel::groupsSideBySide() const {
  return groups_->direction() == QBoxLayout::LeftToRight;
}

int ExperimentPanel::sideBySideWidth() const {
  int width = groups_->spacing();
  for (int i = 0; i < groups_->count(); ++i) width += groups_->itemAt(i)->minimumSize().width();
  const QMargins margins = layout()->contentsMargins();
  return width + margins.left() + margins.right();
}

void ExperimentPanel::resizeEvent(QResizeEvent* event) {
  const auto direction = event->size().width() >= sideBySideWidth() ? QBoxLayout::LeftToRight
                                                                    : QBoxLayout::TopToBottom;
  if (groups_->direction() != direction) {
    groups_->setDirection(direction);
    updateGeometry();
  }
  QWidget::resizeEvent(event);
}

QTreeWidgetItem* ExperimentPanel::itemFor(int id) const {
  for (int i = 0; i < experiments_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = experiments_->topLevelItem(i);
    if (item->data(kNameColumn, kIdRole).toInt() == id) return item;
  }
  return nullptr;
}

void ExperimentPanel::addExperiment(int id, const QString& name, const QStringList& stages) {
  auto* item = new QTreeWidgetItem(experiments_);
  item->setText(kNameColumn, name);
  item->setToolTip(kNameColumn, tr("Stages: %1").arg(stages.join(", ")));
  item->setData(kNameColumn, kIdRole, id);
  setExperimentState(id, Status::kQueued, stages.value(0), QString());
  experiments_->setCurrentItem(item);
  experiments_->resizeColumnToContents(kNameColumn);
}

void ExperimentPanel::setExperimentState(int id, Status status, const QString& stage,
                                         const QString& progress) {
  QTreeWidgetItem* item = itemFor(id);
  if (!item) return;
  item->setData(kNameColumn, kStatusRole, int(status));
  item->setText(kStageColumn, stage);
  item->setText(kProgressColumn, progress);
  item->setToolTip(kProgressColumn, progress);  // an error is longer than the column
  item->setText(kStatusColumn, statusText(status));
  item->setForeground(kStatusColumn, status == Status::kFailed ? QColor(0xb0, 0x20, 0x20)
                                     : status == Status::kFinished
                                         ? QColor(0x1b, 0x7a, 0x1b)
                                         : palette().color(QPalette::Text));
  updateButtons();
}

ExperimentPanel::Status ExperimentPanel::experimentStatus(int id) const {
  QTreeWidgetItem* item = itemFor(id);
  return item ? Status(item->data(kNameColumn, kStatusRole).toInt()) : Status::kFailed;
}

QString ExperimentPanel::experimentProgress(int id) const {
  QTreeWidgetItem* item = itemFor(id);
  return item ? item->text(kProgressColumn) : QString();
}

int ExperimentPanel::experimentCount() const { return experiments_->topLevelItemCount(); }

QList<int> ExperimentPanel::experimentIds() const {
  QList<int> ids;
  for (int i = 0; i < experiments_->topLevelItemCount(); ++i) {
    ids << experiments_->topLevelItem(i)->data(kNameColumn, kIdRole).toInt();
  }
  return ids;
}

int ExperimentPanel::selectedExperiment() const {
  QTreeWidgetItem* item = experiments_->currentItem();
  return item ? item->data(kNameColumn, kIdRole).toInt() : -1;
}

void ExperimentPanel::selectExperiment(int id) {
  if (QTreeWidgetItem* item = itemFor(id)) experiments_->setCurrentItem(item);
}

void ExperimentPanel::updateButtons() {
  const QString problem = validate();
  problem_label_->setText(problem);
  problem_label_->setVisible(!problem.isEmpty());
  start_button_->setEnabled(problem.isEmpty());
  const int id = selectedExperiment();
  const Status status = id >= 0 ? experimentStatus(id) : Status::kFinished;
  pause_button_->setEnabled(id >= 0 && (status == Status::kRunning || status == Status::kPaused));
  pause_button_->setText(status == Status::kPaused ? tr("Resume") : tr("Pause"));
  stop_button_->setEnabled(id >= 0 && isActive(status));
}

void ExperimentPanel::browseModel() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Model to train"), model_edit_->text(),
                                                    tr("Models (*.tflite *.circle)"));
  if (!path.isEmpty()) model_edit_->setText(path);
}

void ExperimentPanel::browseDataset() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Dataset"), dataset_edit_->text(),
                                   tr("Datasets (*.ts *.arff *.csv *.npz *.npy);;All files (*)"));
  if (!path.isEmpty()) chooseDataset(path);
}

void ExperimentPanel::saveSettings(QSettings& settings, const QString& group) const {
  const ExperimentSettings s = this->settings();
  settings.beginGroup(group);
  settings.setValue("modelSource", model_source_->currentIndex());
  settings.setValue("modelPath", model_edit_->text());
  settings.setValue("buildSpec", build_edit_->text());
  settings.setValue("datasetPath", s.dataset_path);
  settings.setValue("lossOutput", s.loss_output);
  settings.setValue("stages", s.stages);
  settings.setValue("lastN", last_spin_->value());
  settings.setValue("optimizer", s.optimizer);
  settings.setValue("learningRate", s.learning_rate);
  settings.setValue("batchSize", s.batch_size);
  settings.setValue("epochs", s.epochs);
  settings.setValue("seeds", s.seeds);
  settings.setValue("firstSeed", s.first_seed);
  settings.setValue("compareCells", cells_box_->isChecked());
  settings.setValue("compareModels", s.compare_models);
  settings.endGroup();
}

void ExperimentPanel::restoreSettings(QSettings& settings, const QString& group) {
  settings.beginGroup(group);
  if (!settings.contains("stages")) {
    settings.endGroup();
    return;
  }
  ExperimentSettings s;
  s.model_path = settings.value("modelPath").toString();
  s.build_spec = settings.value("buildSpec").toString();
  s.dataset_path = settings.value("datasetPath").toString();
  s.loss_output = settings.value("lossOutput").toString();
  s.stages = settings.value("stages").toStringList();
  s.optimizer = settings.value("optimizer", s.optimizer).toString();
  s.learning_rate = settings.value("learningRate", s.learning_rate).toDouble();
  s.batch_size = settings.value("batchSize", s.batch_size).toInt();
  s.epochs = settings.value("epochs", s.epochs).toInt();
  s.seeds = settings.value("seeds", s.seeds).toInt();
  s.first_seed = settings.value("firstSeed", s.first_seed).toInt();
  s.compare_models = settings.value("compareModels").toStringList();
  const int source = settings.value("modelSource", 0).toInt();
  last_spin_->setValue(settings.value("lastN", last_spin_->value()).toInt());
  const bool compare_cells = settings.value("compareCells", false).toBool();
  settings.endGroup();
  setSettings(s);
  model_source_->setCurrentIndex(source == 1 ? 1 : 0);
  cells_box_->setChecked(compare_cells);
}

QWidget* ExperimentPanel::takeActionBar() {
  layout()->removeWidget(action_bar_);
  action_bar_->setParent(nullptr);
  return action_bar_;
}

}  // namespace gruwb::views
