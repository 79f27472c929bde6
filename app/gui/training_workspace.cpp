#include "app/gui/training_workspace.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QMainWindow>
#include <QMap>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTableWidget>
#include <QThread>
#include <algorithm>
#include <atomic>

#include "app/core/experiment.h"
#include "app/core/hparams.h"
#include "app/core/report.h"
#include "app/core/training_session.h"
#include "app/gui/model_export.h"
#include "engine/tools/cells/cell_registry.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_writer.h"
#include "engine/train/loss_output.h"
#include "views/curve_plot.h"
#include "views/hparams_table.h"
#include "views/run_list.h"
#include "views/scrollable.h"

namespace gruwb::gui {
namespace {

using views::ExperimentPanel;
using Status = ExperimentPanel::Status;

const QColor kStagePalette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                                QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                                QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                QColor(0xe3, 0x77, 0xc2), QColor(0x17, 0xbe, 0xcf)};

QString q(const std::string& text) { return QString::fromStdString(text); }

bool isTerminal(Status status) {
  return status == Status::kFinished || status == Status::kCancelled || status == Status::kFailed;
}

// The panel's settings as the application layer's experiment spec.
bool toSpec(const views::ExperimentSettings& s, app::ExperimentSpec* spec, std::string* error) {
  spec->name = s.name.toStdString();
  spec->model_path = s.model_path.toStdString();
  // A model file's cell comparison builds the cells from the spec beside it.
  spec->build = s.model_path.isEmpty() || !s.compare_cells.isEmpty() ? s.build_spec.toStdString()
                                                                     : std::string();
  spec->data_path = s.dataset_path.toStdString();
  spec->loss_output = s.model_path.isEmpty() ? std::string() : s.loss_output.toStdString();
  // A validation split gives the val curves; the file's test split (or a
  // held-out one) gives the table's figures.
  spec->validation_fraction = 0.2;
  spec->seeds = s.seeds;
  spec->first_seed = uint64_t(s.first_seed);
  spec->compare_cells.clear();
  for (const QString& cell : s.compare_cells) spec->compare_cells.push_back(cell.toStdString());
  spec->compare_models.clear();
  for (const QString& path : s.compare_models) spec->compare_models.push_back(path.toStdString());
  spec->as_written = s.as_written;
  spec->batched_passes = s.batched_passes;
  app::StageSpec defaults;
  defaults.optimizer = s.optimizer == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
  defaults.learning_rate = float(s.learning_rate);
  defaults.batch_size = s.batch_size;
  defaults.epochs = s.epochs;
  spec->stages.clear();
  for (const QString& stage : s.stages) {
    app::StageSpec st = defaults;
    if (stage.startsWith("names:")) {
      st.name = "custom";
      // The runner separates tensor names with ';' (names may hold commas).
      st.scope = "names:" + stage.mid(6).split(',', Qt::SkipEmptyParts).join(';').toStdString();
    } else {
      st.name = stage.toStdString();
      st.scope = st.name;
    }
    spec->stages.push_back(st);
  }
  return app::check_experiment_spec(*spec, error);
}

// Collects what a worker sees and posts it in batches, at most one post per
// kPostIntervalMs (plus one at every run's end), so a fast training loop
// cannot flood the GUI thread's event queue.
class Batcher {
 public:
  using Post = std::function<void(WorkerBatch)>;
  explicit Batcher(Post post) : post_(std::move(post)) { timer_.start(); }

  WorkerBatch& batch() { return batch_; }
  void maybeFlush() {
    if (timer_.elapsed() >= TrainingWorkspace::kPostIntervalMs) flush();
  }
  void flush() {
    WorkerBatch next;
    next.status = batch_.status;
    next.stage = batch_.stage;
    next.progress = batch_.progress;
    post_(std::move(batch_));
    batch_ = std::move(next);
    timer_.restart();
  }

 private:
  Post post_;
  WorkerBatch batch_;
  QElapsedTimer timer_;
};

}  // namespace

struct TrainingWorkspace::Run {
  int id = 0;
  views::ExperimentSettings settings;
  app::ExperimentSpec spec;
  std::atomic<bool> cancel{false};
  std::atomic<bool> paused{false};
  std::unique_ptr<QThread> thread;
  Status status = Status::kQueued;
  std::shared_ptr<const app::ExperimentResult> result;  // set when it ends
  std::vector<app::StageRun> finished_runs;             // until then: the runs done so far
  bool borrowed_board = false;                          // spec.board_port came from the Board dock
};

namespace {

// The worker: runs the experiment through the application layer and turns
// its events into curve points, gradient samples and table rows.
void runOnWorker(const std::shared_ptr<TrainingWorkspace::Run>& run_ptr, Batcher* batcher);

}  // namespace

TrainingWorkspace::TrainingWorkspace(QObject* parent) : QObject(parent) { createWidgets(); }

TrainingWorkspace::TrainingWorkspace(QMainWindow* window) : QObject(window), window_(window) {
  createWidgets();
  owns_widgets_ = false;
  const auto add_dock = [window](QWidget* widget, const QString& title, const char* name,
                                 Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(name);  // the saved layout refers to it
    dock->setWidget(widget);
    window->addDockWidget(area, dock);
    return dock;
  };
  QDockWidget* experiments = add_dock(views::scrollable(panel_, panel_->takeActionBar()),
                                      tr("Experiments"), "experimentsDock", Qt::LeftDockWidgetArea);
  // A tab beside the model dock: stacked, the two need more height than a
  // 1366x768 screen has.
  if (auto* model = window->findChild<QDockWidget*>("modelDock", Qt::FindDirectChildrenOnly)) {
    window->tabifyDockWidget(model, experiments);
  }
  experiments->raise();
  QDockWidget* curves =
      add_dock(curves_panel_, tr("Curves"), "curvesDock", Qt::BottomDockWidgetArea);
  QDockWidget* gradients = add_dock(scrollable(gradient_view_), tr("Gradients"), "gradientsDock",
                                    Qt::BottomDockWidgetArea);
  QDockWidget* comparison =
      add_dock(comparison_, tr("Comparison"), "comparisonDock", Qt::BottomDockWidgetArea);
  QDockWidget* hparams = add_dock(hparams_, tr("HParams"), "hparamsDock", Qt::BottomDockWidgetArea);
  window->tabifyDockWidget(curves, gradients);
  window->tabifyDockWidget(gradients, comparison);
  window->tabifyDockWidget(comparison, hparams);
  curves->raise();
  window->resizeDocks({curves}, {300}, Qt::Vertical);
  window->installEventFilter(this);  // saves the settings on close
  // The main window's document signals, when it has them (string-based so
  // the workspace does not depend on one main window class).
  const QMetaObject* meta = window->metaObject();
  if (meta->indexOfSignal("modelChanged(QString)") >= 0) {
    connect(window, SIGNAL(modelChanged(QString)), this, SLOT(onModelChanged(QString)));
  }
  if (meta->indexOfSignal("datasetChanged(QString)") >= 0) {
    connect(window, SIGNAL(datasetChanged(QString)), this, SLOT(onDatasetChanged(QString)));
  }
  QSettings settings;
  restoreSettings(settings);
}

void TrainingWorkspace::onModelChanged(const QString& path) {
  panel_->setModelPath(path);
  showModelOutputs(path);
}

void TrainingWorkspace::showModelOutputs(const QString& path) {
  tools::LoadedModel loaded;
  std::string error;
  if (!tools::load_model_file(QFile::encodeName(path).toStdString(), &loaded, &error)) return;
  QStringList names, labels;
  for (const app::ModelOutputInfo& o : app::model_outputs(loaded.model)) {
    QStringList dims;
    for (int32_t d : o.shape) dims << QString::number(d);
    QString label = QStringLiteral("'%1' [%2]").arg(q(o.name), dims.join(','));
    if (o.activation_fed) label += tr(" (softmax/logistic)");
    if (!o.is_float) label += tr(" (not float)");
    names << q(o.name);
    labels << label;
  }
  int32_t automatic = -1;
  const gruwb::Status chosen = choose_loss_output(loaded.model, LossOutputRequest(), &automatic);
  panel_->setModelOutputs(path, names, labels, chosen.ok() ? names.value(automatic) : QString());
}

// The loss output of a model file, checked before a worker starts: an
// unknown name, or an automatic choice the model alone cannot make, is one
// line in the status bar instead of a run. (The worker decides again with
// the data's classes.)
bool TrainingWorkspace::checkLossOutput(const views::ExperimentSettings& settings,
                                        QString* error) const {
  if (settings.model_path.isEmpty()) return true;
  tools::LoadedModel loaded;
  std::string problem;
  if (!tools::load_model_file(QFile::encodeName(settings.model_path).toStdString(), &loaded,
                              &problem)) {
    return true;  // the worker reports an unreadable file as the run's failure
  }
  const QByteArray name = settings.loss_output.toUtf8();
  LossOutputRequest request;
  request.name = name.constData();
  int32_t output = -1;
  const gruwb::Status chosen = choose_loss_output(loaded.model, request, &output);
  if (chosen.ok()) return true;
  *error = q(settings.model_path.toStdString() + ": " + chosen.message())
               .replace("with --output NAME", tr("in the panel's Loss on output"));
  return false;
}

void TrainingWorkspace::onDatasetChanged(const QString& path) { panel_->setDatasetPath(path); }

TrainingWorkspace::~TrainingWorkspace() {
  for (const auto& run : runs_) {
    run->cancel = true;
    run->paused = false;
  }
  for (const auto& run : runs_) {
    if (run->thread) run->thread->wait();
  }
  // In a main window the docks own the widgets (settings were saved when the
  // window closed: the docks may be gone by now).
  if (!owns_widgets_) return;
  delete panel_;
  delete curves_panel_;
  delete gradient_view_;
  delete comparison_;
  delete hparams_;
}

bool TrainingWorkspace::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Close) {
    QSettings settings;
    saveSettings(settings);
  }
  return QObject::eventFilter(watched, event);
}

QWidget* TrainingWorkspace::curvesWidget() const { return curves_panel_; }

void TrainingWorkspace::createWidgets() {
  panel_ = new views::ExperimentPanel;
  panel_->setObjectName("experimentPanel");
  loss_plot_ = new views::CurvePlot(tr("Loss"), tr("cross entropy"));
  loss_plot_->setObjectName("lossPlot");
  accuracy_plot_ = new views::CurvePlot(tr("Accuracy"), tr("accuracy"));
  accuracy_plot_->setObjectName("accuracyPlot");
  run_list_ = new views::RunList;
  run_list_->setObjectName("runList");
  for (views::CurvePlot* plot : {loss_plot_, accuracy_plot_}) {
    // The run list is the legend and holds the one smoothing slider of both.
    plot->setLegendVisible(false);
    plot->setSmoothingControlVisible(false);
    plot->setSmoothing(run_list_->smoothing());
  }
  curves_ = new QSplitter(Qt::Horizontal);
  curves_->setObjectName("curves");
  curves_->addWidget(loss_plot_);
  curves_->addWidget(accuracy_plot_);
  curves_panel_ = new QSplitter(Qt::Horizontal);
  curves_panel_->setObjectName("curvesPanel");
  curves_panel_->addWidget(run_list_);
  curves_panel_->addWidget(curves_);
  curves_panel_->setStretchFactor(1, 1);
  curves_panel_->setSizes({230, 1000});
  connect(run_list_, &views::RunList::runsChanged, this, &TrainingWorkspace::applyRuns);
  for (views::CurvePlot* plot : {loss_plot_, accuracy_plot_}) {
    // A legend click is the run's tick box: both splits, both plots.
    connect(plot, &views::CurvePlot::seriesToggled, this,
            [this](const QString& series, bool visible) {
              run_list_->setChecked(CurvePoint::runOf(series), visible);
            });
  }
  connect(run_list_, &views::RunList::runRemoved, this, &TrainingWorkspace::takeRun);
  connect(run_list_, &views::RunList::runRestored, this, &TrainingWorkspace::putRunBack);
  connect(run_list_, &views::RunList::xAxisChanged, this, [this](views::CurveXAxis axis) {
    loss_plot_->setXAxis(axis);
    accuracy_plot_->setXAxis(axis);
  });
  connect(run_list_, &views::RunList::smoothingChanged, this, [this](double weight) {
    loss_plot_->setSmoothing(weight);
    accuracy_plot_->setSmoothing(weight);
  });
  gradient_view_ = new views::GradientView;
  gradient_view_->setObjectName("gradientView");
  comparison_ = new views::ComparisonTable;
  comparison_->setObjectName("comparisonTable");
  hparams_ = new views::HparamsTable;
  hparams_->setObjectName("hparamsTable");
  hparams_->setPlaceholder(
      tr("One row per run (stage, cell and seed) of every experiment: start one in the "
         "Experiments panel. Click a header to sort, double-click a run to show its curves."));
  hparams_export_ = new QPushButton(tr("Export CSV…"));
  hparams_export_->setObjectName("hparamsExportButton");
  hparams_export_->setToolTip(tr("The rows as filtered and sorted, as CSV"));
  hparams_->toolbar()->addWidget(hparams_export_);
  connect(hparams_export_, &QPushButton::clicked, this,
          [this] { showExportHparamsDialog(hparams_); });
  connect(hparams_, &views::HparamsTable::currentKeyChanged, run_list_,
          &views::RunList::setCurrentRun);
  connect(hparams_, &views::HparamsTable::keyActivated, this, [this](const QString& run) {
    if (!run_list_->contains(run)) return;  // an init stage: no curves
    run_list_->setChecked(run, true);
    run_list_->setCurrentRun(run);
    if (auto* dock = window_ ? window_->findChild<QDockWidget*>("curvesDock") : nullptr) {
      dock->show();
      dock->raise();
    }
  });
  connect(run_list_, &views::RunList::currentRunChanged, this, [this](const QString& run) {
    highlightRun(run);
    if (!run.isEmpty()) hparams_->selectKey(run);
  });
  for (auto signal : {&views::RunList::runRemoved, &views::RunList::runRestored}) {
    connect(run_list_, signal, this, [this] { refreshHparams(); });
  }
  connect(run_list_, &views::RunList::runsChanged, this, &TrainingWorkspace::refreshHparams);
  refreshHparams();
  connect(panel_, &views::ExperimentPanel::startRequested, this,
          [this](const views::ExperimentSettings& s) { startExperiment(s); });
  connect(panel_, &views::ExperimentPanel::pauseRequested, this,
          &TrainingWorkspace::pauseExperiment);
  connect(panel_, &views::ExperimentPanel::stopRequested, this, &TrainingWorkspace::stopExperiment);
  connect(comparison_, &views::ComparisonTable::exportRequested, this,
          [this] { showExportReportDialog(comparison_); });
  connect(comparison_, &views::ComparisonTable::exportModelRequested, this,
          [this] { showExportStageModelDialog(comparison_); });
  // The panel's checks: the spec as the runner reads it, the dataset against the model.
  panel_->setSpecChecker([](const views::ExperimentSettings& s) {
    app::ExperimentSpec spec;
    std::string error;
    return toSpec(s, &spec, &error) ? QString() : q(error);
  });
  panel_->setDatasetChecker(
      [this](const QString& data, const QString& model) { return checkDataset(data, model); });
}

QString TrainingWorkspace::checkDataset(const QString& data_path, const QString& model_path) const {
  std::string summary, error;
  if (app::check_dataset_for_model(QFile::encodeName(data_path).toStdString(),
                                   QFile::encodeName(model_path).toStdString(), &summary, &error)) {
    return QString();
  }
  return q(error);
}

int TrainingWorkspace::exportStageRow() const {
  const int rows = int(comparison_->stageResults().size());
  const int current = comparison_->stageTable()->currentRow();
  return current >= 0 && current < rows ? current : rows - 1;
}

bool TrainingWorkspace::exportStageModel(int row, const QString& path, QString* message) const {
  const QVector<views::StageResult>& rows = comparison_->stageResults();
  if (row < 0 || row >= rows.size()) {
    *message =
        tr("no finished stage to export: run an experiment, then pick its stage in the "
           "Comparison dock");
    return false;
  }
  const views::StageResult& wanted = rows[row];
  for (const auto& run : runs_) {
    if (!run->result) continue;
    const app::ExperimentResult& result = *run->result;
    for (const app::StageRun& sr : result.runs) {
      // The table's experiment column: the name, and the cell in a comparison.
      const QString experiment =
          q(result.spec.name) +
          (sr.cell.empty() || sr.cell == "model" ? QString() : " " + q(sr.cell));
      if (experiment != wanted.experiment || q(sr.stage) != wanted.stage) continue;
      if (sr.trained_model.empty()) {
        *message = tr("%1 / %2 has no trained model in this session (%3)")
                       .arg(wanted.experiment, wanted.stage,
                            sr.error.empty() ? tr("reopened from a project, or not trained")
                                             : q(sr.error));
        return false;
      }
      QString name = wanted.experiment + "_" + wanted.stage;
      name.replace(QRegularExpression("[^A-Za-z0-9_]+"), "_");
      const bool circle = tools::format_for_path(result.spec.model_path) == ModelFormat::kCircle &&
                          !result.spec.model_path.empty();
      const QString label = name + (circle ? ".circle" : ".tflite");
      if (!exportModelBytes(path, label, sr.trained_model, message)) return false;
      *message += tr(" — %1 / %2, seed %3").arg(wanted.experiment, wanted.stage).arg(sr.seed);
      return true;
    }
  }
  *message = tr("%1 / %2: its trained model is not in this session (reopened from a project)")
                 .arg(wanted.experiment, wanted.stage);
  return false;
}

void TrainingWorkspace::showExportStageModelDialog(QWidget* parent) {
  const int row = exportStageRow();
  QString message;
  if (row < 0) {
    exportStageModel(row, QString(), &message);
    emit notice(tr("Export Trained Model: %1").arg(message), true);
    return;
  }
  const views::StageResult& r = comparison_->stageResults()[row];
  QSettings settings;
  QString name = r.experiment + "_" + r.stage;
  name.replace(QRegularExpression("[^A-Za-z0-9_.-]+"), "_");
  const QString dir = settings.value("training/modelDirectory", QDir::homePath()).toString();
  const QString path = chooseModelExportPath(
      parent, tr("Export the Model %1 / %2 Trained").arg(r.experiment, r.stage),
      dir + "/" + name + ".tflite");
  if (path.isEmpty()) return;
  settings.setValue("training/modelDirectory", QFileInfo(path).absolutePath());
  const bool ok = exportStageModel(row, path, &message);
  emit notice(ok ? message : tr("Export Trained Model: %1").arg(message), !ok);
}

int TrainingWorkspace::startExperiment(const views::ExperimentSettings& settings) {
  QString refused;
  if (!checkLossOutput(settings, &refused)) {
    last_error_ = refused;
    if (window_) window_->statusBar()->showMessage(refused);
    emit startRefused(refused);
    return -1;
  }
  auto run = std::make_shared<Run>();
  run->id = next_id_++;
  run->settings = settings;
  panel_->addExperiment(run->id, settings.name, settings.stages);
  runs_.insert(run->id, run);
  std::string error;
  if (!toSpec(settings, &run->spec, &error)) {
    WorkerBatch failed;
    failed.status = Status::kFailed;
    failed.error = q(error);
    apply(run->id, failed);
    return run->id;
  }
  if ((!run->spec.compare_cells.empty() || !run->spec.compare_models.empty()) && borrow_board_) {
    const QString port = borrow_board_();
    run->spec.board_port = port.toStdString();
    run->borrowed_board = !port.isEmpty();
  }
  const int id = run->id;
  // The worker posts to this object; the destructor joins every worker
  // before the object goes, so the pointer outlives all posts.
  TrainingWorkspace* self = this;
  run->thread.reset(QThread::create([run, self, id] {
    Batcher batcher([self, id](WorkerBatch batch) {
      QMetaObject::invokeMethod(
          self, [self, id, batch = std::move(batch)] { self->apply(id, batch); },
          Qt::QueuedConnection);
    });
    runOnWorker(run, &batcher);
  }));
  run->thread->setObjectName(QStringLiteral("experiment %1").arg(id));
  run->status = Status::kRunning;
  panel_->setExperimentState(id, Status::kRunning, settings.stages.value(0), tr("starting"));
  run->thread->start(QThread::LowPriority);
  return id;
}

void TrainingWorkspace::pauseExperiment(int id, bool pause) {
  auto it = runs_.find(id);
  if (it == runs_.end() || isTerminal((*it)->status)) return;
  (*it)->paused = pause;
  (*it)->status = pause ? Status::kPaused : Status::kRunning;
  panel_->setExperimentState(id, (*it)->status, QString(), panel_->experimentProgress(id));
}

void TrainingWorkspace::stopExperiment(int id) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  (*it)->cancel = true;
  (*it)->paused = false;
}

bool TrainingWorkspace::isRunning() const {
  for (const auto& run : runs_) {
    if (!isTerminal(run->status)) return true;
  }
  return false;
}

bool TrainingWorkspace::waitForIdle(int timeout_ms) {
  QDeadlineTimer deadline(timeout_ms);
  while (isRunning() && !deadline.hasExpired()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(1);
  }
  return !isRunning();
}

void TrainingWorkspace::apply(int id, const WorkerBatch& batch) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  Run& run = **it;
  for (const CurvePoint& p : batch.points) addCurvePoint(id, p);
  for (const auto& g : batch.weight_gradients) gradient_view_->addWeightGradient(g);
  for (const auto& g : batch.state_gradients) gradient_view_->addStateGradient(g);
  for (const auto& r : batch.stage_results) comparison_->setStageResult(r);
  if (!batch.cell_results.isEmpty()) comparison_->setCellResults(batch.cell_results);
  if (!batch.finished_runs.empty()) {
    run.finished_runs.insert(run.finished_runs.end(), batch.finished_runs.begin(),
                             batch.finished_runs.end());
  }
  if (batch.result) run.result = batch.result;
  if (batch.result || !batch.finished_runs.empty()) refreshHparams();
  if (!batch.error.isEmpty()) last_error_ = batch.error;
  // A pause the user asked for wins over the worker's "running".
  Status status = batch.status;
  if (run.paused && status == Status::kRunning) status = Status::kPaused;
  const bool finished = isTerminal(status) && !isTerminal(run.status);
  run.status = status;
  const QString progress = batch.error.isEmpty() ? batch.progress : batch.error;
  panel_->setExperimentState(id, status, batch.stage, progress);
  if (finished && run.borrowed_board && give_back_board_) {
    run.borrowed_board = false;
    give_back_board_();
  }
  if (finished) emit experimentFinished(id, status);
}

void TrainingWorkspace::addCurvePoint(int id, const CurvePoint& p) {
  const QString series = p.series();
  views::CurveX x;
  x.step = p.step;
  x.epoch = p.epoch;
  x.seconds = p.seconds;
  if (run_list_->isRemoved(p.run)) {
    if (run_experiment_.value(p.run) == id) {
      // A deleted run still training: its points wait with the rest of it for an undo.
      QVector<TakenSeries>& taken = taken_[p.run];
      auto it = std::find_if(taken.begin(), taken.end(), [&](const TakenSeries& t) {
        return t.accuracy == p.accuracy && t.data.name == series;
      });
      if (it == taken.end()) {
        TakenSeries t;
        t.accuracy = p.accuracy;
        t.data.name = series;
        t.data.style = p.split == "val" ? Qt::DashLine : Qt::SolidLine;
        it = taken.insert(taken.end(), t);
      }
      it->data.x.append(x);
      it->data.values.append(p.value);
      return;
    }
    // A new experiment of the same name: the deleted one is gone for good.
    run_list_->forgetRemoved(p.run);
    taken_.remove(p.run);
  }
  views::CurvePlot* plot = p.accuracy ? accuracy_plot_ : loss_plot_;
  if (!plot->seriesNames().contains(series)) {
    // One colour per run; validation dashed.
    if (!stage_colors_.contains(p.run)) stage_colors_.insert(p.run, stage_colors_.size());
    const QColor color =
        kStagePalette[stage_colors_[p.run] % (sizeof kStagePalette / sizeof kStagePalette[0])];
    run_list_->addRun(p.run, color);
    run_experiment_.insert(p.run, id);
    plot->setSeriesStyle(series, run_list_->color(p.run),
                         p.split == "val" ? Qt::DashLine : Qt::SolidLine);
    plot->setSeriesLabel(series, run_list_->label(p.run) + ' ' + p.split);
    plot->setSeriesVisible(series, run_list_->isShown(p.run));
    plot->setSeriesHighlighted(series, run_list_->currentRun() == p.run);
  }
  plot->addPoint(series, x, p.value);
}

void TrainingWorkspace::applyRuns() {
  for (views::CurvePlot* plot : {loss_plot_, accuracy_plot_}) {
    for (const QString& series : plot->seriesNames()) {
      const QString run = CurvePoint::runOf(series);
      plot->setSeriesVisible(series, run_list_->isShown(run));
      plot->setSeriesLabel(series, run_list_->label(run) + series.mid(run.size()));
      plot->setSeriesColor(series, run_list_->color(run));
    }
  }
}

void TrainingWorkspace::takeRun(const QString& run) {
  QVector<TakenSeries>& taken = taken_[run];
  for (views::CurvePlot* plot : {loss_plot_, accuracy_plot_}) {
    for (const QString& series : plot->seriesNames()) {
      if (CurvePoint::runOf(series) != run) continue;
      TakenSeries t;
      t.accuracy = plot == accuracy_plot_;
      if (plot->takeSeries(series, &t.data)) taken.append(t);
    }
  }
}

void TrainingWorkspace::putRunBack(const QString& run) {
  for (const TakenSeries& t : taken_.take(run)) {
    (t.accuracy ? accuracy_plot_ : loss_plot_)->putSeries(t.data);
  }
  applyRuns();
}

void TrainingWorkspace::refreshHparams() {
  hparams_rows_.clear();
  QVector<views::HparamsTable::Row> rows;
  QVector<int> ids = runs_.keys().toVector();
  std::sort(ids.begin(), ids.end());  // experiments in the order they started
  for (const int id : ids) {
    const std::shared_ptr<Run>& run = runs_[id];
    // A running experiment: the runs it has finished so far.
    app::ExperimentResult so_far;
    if (!run->result) {
      so_far.spec = run->spec;
      so_far.runs = run->finished_runs;
    }
    for (app::HparamsRow row : app::hparams_rows(run->result ? *run->result : so_far)) {
      const QString key = q(row.run);
      if (run_list_->isRemoved(key)) continue;  // deleted in the Curves dock
      if (run_list_->contains(key)) row.run = run_list_->label(key).toStdString();
      views::HparamsTable::Row shown;
      shown.key = key;
      for (const std::string& cell : app::hparams_table_row(row, false)) shown.cells << q(cell);
      shown.tooltip = key + " — " + q(row.state);
      shown.dimmed = run_list_->contains(key) && !run_list_->isShown(key);
      rows.append(shown);
      hparams_rows_.append({key, row});
    }
  }
  QStringList header;
  for (const std::string& column : app::hparams_table_header(false)) header << q(column);
  hparams_->setRows(header, rows);
  hparams_export_->setEnabled(!rows.isEmpty());
}

void TrainingWorkspace::highlightRun(const QString& run) {
  for (views::CurvePlot* plot : {loss_plot_, accuracy_plot_}) {
    for (const QString& series : plot->seriesNames()) {
      plot->setSeriesHighlighted(series, !run.isEmpty() && CurvePoint::runOf(series) == run);
    }
  }
}

bool TrainingWorkspace::exportHparams(const QString& path, QString* error) const {
  std::vector<app::HparamsRow> rows;
  for (const QString& key : hparams_->visibleKeys()) {
    for (const auto& [run, row] : hparams_rows_) {
      if (run == key) rows.push_back(row);
    }
  }
  if (rows.empty()) {
    *error = hparams_rows_.isEmpty()
                 ? tr("no run has finished in this session: start an experiment first")
                 : tr("the filter '%1' matches no run").arg(hparams_->filterEdit()->text());
    return false;
  }
  std::string message;
  if (!app::save_text_atomically(QFile::encodeName(path).toStdString(), app::hparams_csv(rows),
                                 &message)) {
    *error = q(message);
    return false;
  }
  return true;
}

void TrainingWorkspace::showExportHparamsDialog(QWidget* parent) {
  if (hparams_rows_.isEmpty()) {
    emit notice(tr("Export HParams: no run has finished in this session: start an experiment "
                   "first"),
                true);
    return;
  }
  QSettings settings;
  const QString dir = settings.value("training/reportDirectory", QDir::homePath()).toString();
  const QString path = QFileDialog::getSaveFileName(parent, tr("Export the HParams Table"),
                                                    dir + "/hparams.csv", tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  settings.setValue("training/reportDirectory", QFileInfo(path).absolutePath());
  QString error;
  if (exportHparams(path, &error)) {
    emit notice(tr("Saved %1 runs to %2").arg(hparams_->visibleRows()).arg(path), false);
  } else {
    emit notice(tr("Export HParams: %1").arg(error), true);
  }
}

void TrainingWorkspace::setBoardLender(std::function<QString()> borrow,
                                       std::function<void()> give_back) {
  borrow_board_ = std::move(borrow);
  give_back_board_ = std::move(give_back);
}

int TrainingWorkspace::reportExperiment() const {
  const auto selected = runs_.find(panel_->selectedExperiment());
  if (selected != runs_.end() && (*selected)->result) return (*selected)->id;
  int latest = -1;
  for (const auto& run : runs_) {
    if (run->result && run->id > latest) latest = run->id;
  }
  return latest;
}

bool TrainingWorkspace::exportReport(const QString& path, QString* error) const {
  const int id = reportExperiment();
  if (id < 0) {
    *error = tr("no experiment has finished in this session: start one, then export its report");
    return false;
  }
  std::string message;
  if (!app::write_report(QFile::encodeName(path).toStdString(), *runs_[id]->result, &message)) {
    *error = q(message);
    return false;
  }
  return true;
}

void TrainingWorkspace::showExportReportDialog(QWidget* parent) {
  const int id = reportExperiment();
  if (id < 0) {
    QMessageBox::information(
        parent, tr("Export Report"),
        tr("No experiment has finished in this session yet: start one, then export its report."));
    return;
  }
  QSettings settings;
  const QString dir = settings.value("training/reportDirectory", QDir::homePath()).toString();
  QString name = runs_[id]->settings.name;
  name.replace(QRegularExpression("[^A-Za-z0-9_.-]+"), "_");
  const QString path = QFileDialog::getSaveFileName(
      parent, tr("Export Report of %1").arg(runs_[id]->settings.name), dir + "/" + name + ".html",
      tr("HTML, self-contained (*.html);;PDF (*.pdf);;CSV of every curve (*.csv);;JSON "
         "(*.json);;Markdown (*.md)"));
  if (path.isEmpty()) return;
  settings.setValue("training/reportDirectory", QFileInfo(path).absolutePath());
  QString error;
  if (!exportReport(path, &error)) QMessageBox::warning(parent, tr("Export Report"), error);
}

namespace {

const char* statusKey(Status status) {
  switch (status) {
    case Status::kFinished: return "finished";
    case Status::kFailed: return "failed";
    default: return "stopped";  // a run in progress does not survive a reopen
  }
}

Status statusFromKey(const QString& key) {
  if (key == "finished") return Status::kFinished;
  if (key == "failed") return Status::kFailed;
  return Status::kCancelled;
}

}  // namespace

QJsonValue TrainingWorkspace::projectSection() const {
  QJsonObject section;
  section["staging"] = views::settings_to_json(panel_->settings());
  QJsonArray experiments;
  for (const int id : panel_->experimentIds()) {
    const auto it = runs_.find(id);
    if (it == runs_.end()) continue;
    QJsonObject e = views::settings_to_json((*it)->settings);
    e["status"] = statusKey((*it)->status);
    e["progress"] = panel_->experimentProgress(id);
    // Everything the report writers need, so a reopened project exports.
    if ((*it)->result) {
      e["result"] = QJsonDocument::fromJson(
                        QByteArray::fromStdString(app::experiment_result_json(*(*it)->result)))
                        .object();
    }
    experiments.append(e);
  }
  section["experiments"] = experiments;
  QJsonArray stages;
  for (const views::StageResult& r : comparison_->stageResults())
    stages.append(views::stage_result_to_json(r));
  section["stages"] = stages;
  QJsonArray cells;
  for (const views::CellResult& c : comparison_->cellResults())
    cells.append(views::cell_result_to_json(c));
  section["cells"] = cells;
  return section;
}

void TrainingWorkspace::loadProjectSection(const QJsonValue& value) {
  const QJsonObject section = value.toObject();
  if (section.isEmpty()) return;
  if (section.contains("staging")) {
    panel_->setSettings(views::settings_from_json(section["staging"].toObject()));
  }
  for (const QJsonValue& v : section["experiments"].toArray()) {
    const QJsonObject e = v.toObject();
    auto run = std::make_shared<Run>();
    run->id = next_id_++;
    run->settings = views::settings_from_json(e);
    run->status = statusFromKey(e["status"].toString());
    QString progress = e["progress"].toString();
    // Projects saved before results travelled have none: those rows cannot export.
    if (e.contains("result")) {
      const QByteArray text = QJsonDocument(e["result"].toObject()).toJson(QJsonDocument::Compact);
      app::ExperimentResult result;
      std::string error;
      if (app::parse_experiment_result(text.toStdString(),
                                       "experiment '" + run->settings.name.toStdString() + "'",
                                       &result, &error)) {
        run->result = std::make_shared<const app::ExperimentResult>(std::move(result));
      } else {
        last_error_ = progress = q(error);
      }
    }
    runs_.insert(run->id, run);
    panel_->addExperiment(run->id, run->settings.name, run->settings.stages);
    panel_->setExperimentState(run->id, run->status, QString(), progress);
  }
  comparison_->clear();
  for (const QJsonValue& v : section["stages"].toArray()) {
    comparison_->setStageResult(views::stage_result_from_json(v.toObject()));
  }
  QVector<views::CellResult> cells;
  for (const QJsonValue& v : section["cells"].toArray()) {
    cells.append(views::cell_result_from_json(v.toObject()));
  }
  comparison_->setCellResults(cells);
  refreshHparams();
}

void TrainingWorkspace::saveSettings(QSettings& settings) const {
  panel_->saveSettings(settings, "training/experiment");
  loss_plot_->saveSettings(settings, "training/loss");
  accuracy_plot_->saveSettings(settings, "training/accuracy");
  gradient_view_->saveSettings(settings, "training/gradients");
  run_list_->saveSettings(settings, "training/runs");
  settings.setValue("training/curvesSplitter", curves_->saveState());
  settings.setValue("training/curvesPanelSplitter", curves_panel_->saveState());
}

void TrainingWorkspace::restoreSettings(QSettings& settings) {
  panel_->restoreSettings(settings, "training/experiment");
  loss_plot_->restoreSettings(settings, "training/loss");
  accuracy_plot_->restoreSettings(settings, "training/accuracy");
  gradient_view_->restoreSettings(settings, "training/gradients");
  run_list_->restoreSettings(settings, "training/runs");
  // The run list's x axis and smoothing are the plots' (one slider, one default).
  for (views::CurvePlot* plot : {loss_plot_, accuracy_plot_}) {
    plot->setXAxis(run_list_->xAxis());
    plot->setSmoothing(run_list_->smoothing());
  }
  curves_->restoreState(settings.value("training/curvesSplitter").toByteArray());
  if (settings.contains("training/curvesPanelSplitter")) {
    curves_panel_->restoreState(settings.value("training/curvesPanelSplitter").toByteArray());
  }
}

namespace {

// "exp / stage" (+ the cell in a cell comparison, + the seed when there
// are several) from the runner's "cell stage seed N" message.
QString runLabel(const app::ExperimentSpec& spec, const app::ExperimentEvent& event,
                 QString* stage) {
  // From the end: a model file's name may hold spaces.
  const QStringList words = q(event.message).split(' ', Qt::SkipEmptyParts);
  const int n = int(words.size());
  *stage = words.value(n - 3);
  const QString cell = QStringList(words.mid(0, qMax(0, n - 3))).join(' ');
  return q(app::hparams_run_name(spec, cell.toStdString(), stage->toStdString(),
                                 words.value(n - 1).toULongLong()));
}

// The engine observer of a worker: every optimizer step, each trainable
// weight's gradient statistics (norm, min/max, histogram) and, per recurrent
// op, ||dL/dh_t|| averaged over the step's samples, into the worker's batch.
// Runs on the worker thread, like the experiment's events.
class GradientCollector : public TrainingObserver {
 public:
  GradientCollector(Batcher* batcher, const QString* run_label)
      : batcher_(batcher), run_label_(run_label) {}

  void on_weight_gradient(const GradientStats& g) override {
    views::WeightGradientSample s;
    s.run = *run_label_;
    s.step = g.step;
    s.weight = QString::fromUtf8(g.name);
    s.norm = g.norm;
    s.min = g.min;
    s.max = g.max;
    s.range = g.range;
    for (uint32_t count : g.histogram) s.histogram.append(double(count));
    batcher_->batch().weight_gradients.append(s);
  }
  void on_state_gradient(int32_t /*subgraph*/, int32_t op, const char* op_name, int32_t step,
                         float norm) override {
    if (step < 0) return;
    QVector<double>& norms = pending_[QStringLiteral("op %1 %2").arg(op).arg(op_name)];
    if (norms.size() <= step) norms.resize(step + 1);
    norms[step] += norm;
  }
  void on_step(const StepMetrics& m) override {
    const double samples = m.samples > 0 ? m.samples : 1;
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      views::StateGradientSample s;
      s.run = *run_label_;
      s.step = m.step;
      s.op = it.key();
      s.norms = it.value();
      for (double& n : s.norms) n /= samples;
      batcher_->batch().state_gradients.append(s);
    }
    pending_.clear();
  }

 private:
  Batcher* batcher_;
  const QString* run_label_;
  QMap<QString, QVector<double>> pending_;
};

void runOnWorker(const std::shared_ptr<TrainingWorkspace::Run>& run_ptr, Batcher* batcher) {
  TrainingWorkspace::Run& run = *run_ptr;
  const app::ExperimentSpec& spec = run.spec;
  QString label;  // "exp / stage [seed]" of the run in progress
  QString stage;
  QElapsedTimer run_clock;  // the wall-time axis: seconds since the run started
  const auto point = [&](const QString& split, bool accuracy, double step, double epoch,
                         double value) {
    CurvePoint p;
    p.run = label;
    p.split = split;
    p.accuracy = accuracy;
    p.step = step;
    p.epoch = epoch;
    p.seconds = run_clock.isValid() ? run_clock.nsecsElapsed() / 1e9 : 0;
    p.value = value;
    return p;
  };
  const auto on_event = [&](const app::ExperimentEvent& event) {
    // Pausing blocks the worker between steps; stopping ends the pause.
    while (run.paused && !run.cancel) QThread::msleep(20);
    WorkerBatch& b = batcher->batch();
    b.status = Status::kRunning;
    switch (event.kind) {
      case app::ExperimentEvent::Kind::kRunStarted:
        label = runLabel(spec, event, &stage);
        run_clock.start();
        b.stage = stage;
        b.progress = QStringLiteral("run %1/%2").arg(event.run + 1).arg(event.runs);
        break;
      case app::ExperimentEvent::Kind::kTraining: {
        const app::TrainingEvent& t = event.training;
        // "init" only evaluates: its figures go to the table, not the curves.
        if (stage == "init") break;
        if (t.kind == app::TrainingEvent::Kind::kStep) {
          // Where in its epoch the step ends (epochs count from 1 while training).
          const double done =
              t.epoch_samples > 0 ? double(t.epoch_samples_done) / double(t.epoch_samples) : 1;
          b.points.append(point("train", false, double(t.step), t.epoch - 1 + done, t.step_loss));
          b.progress = QStringLiteral("run %1/%2, epoch %3/%4")
                           .arg(event.run + 1)
                           .arg(event.runs)
                           .arg(t.epoch)
                           .arg(t.epochs);
        } else if (t.kind == app::TrainingEvent::Kind::kEpoch) {
          const app::EpochMetrics& m = t.metrics;
          const double step = double(m.steps);
          const double epoch = m.epoch;
          if (m.epoch == 0) b.points.append(point("train", false, step, epoch, m.train_loss));
          if (m.has_accuracy) {
            b.points.append(point("train", true, step, epoch, m.train_accuracy));
          }
          if (m.has_val) {
            b.points.append(point("val", false, step, epoch, m.val_loss));
            if (m.has_accuracy) b.points.append(point("val", true, step, epoch, m.val_accuracy));
          }
        }
        break;
      }
      case app::ExperimentEvent::Kind::kRunFinished:
        if (event.stage_run) {
          app::StageRun done = *event.stage_run;
          done.trained_model.clear();  // the table needs its figures, not its weights
          b.finished_runs.push_back(std::move(done));
        }
        batcher->flush();
        break;
      default: break;
    }
    batcher->maybeFlush();
  };
  GradientCollector gradients(batcher, &label);
  const app::ExperimentResult result =
      app::run_experiment(spec, on_event, &run.cancel, "", &gradients);

  // The table: one row per stage (mean +- std over seeds) with the summed
  // confusion matrix of its seeds.
  WorkerBatch& b = batcher->batch();
  for (const app::StageSummary& s : result.summary) {
    views::StageResult r;
    r.experiment =
        q(spec.name) + (s.cell.empty() || s.cell == "model" ? QString() : " " + q(s.cell));
    r.stage = q(s.stage);
    r.seeds = s.accuracy.count;
    if (r.seeds == 0) {  // no seed of the stage was evaluated: say why, show no figures
      for (const app::StageRun& sr : result.runs) {
        if (sr.stage != s.stage || sr.cell != s.cell) continue;
        if (sr.training.outcome == app::TrainingOutcome::kCancelled) r.outcome = "stopped";
        if (!sr.error.empty() && r.outcome.isEmpty()) r.outcome = "failed: " + q(sr.error);
      }
      if (r.outcome.isEmpty()) r.outcome = "stopped";
    }
    r.accuracy = s.accuracy.mean;
    r.accuracy_std = s.accuracy.std;
    r.cross_entropy = s.loss.mean;
    r.cross_entropy_std = s.loss.std;
    r.trainable_parameters = s.trainable_parameters;
    r.training_memory_bytes = qint64(s.training_memory_bytes);
    if (s.quantized) {
      const app::QuantizationFigures& qf = s.quantization;
      r.quantized = true;
      r.quantized_from = q(qf.source_stage);
      r.model_bytes_before = qint64(qf.source.model_bytes);
      r.model_bytes_after = qint64(qf.quantized.model_bytes);
      r.arena_bytes_before = qint64(qf.source.arena_bytes);
      r.arena_bytes_after = qint64(qf.quantized.arena_bytes);
      r.latency_us_before = qf.source.latency_us;
      r.latency_us_after = qf.quantized.latency_us;
      for (const std::string& k : qf.kept_float) r.kept_float << q(k);
    }
    for (const std::string& name : result.class_names) r.class_names << q(name);
    for (const app::StageRun& sr : result.runs) {
      if (sr.stage != s.stage || sr.cell != s.cell || !sr.evaluated) continue;
      const auto& confusion = sr.test_classes.confusion;
      if (r.confusion.isEmpty()) {
        r.confusion.resize(int(confusion.size()));
        for (int i = 0; i < r.confusion.size(); ++i)
          r.confusion[i].resize(int(confusion[i].size()));
      }
      for (size_t i = 0; i < confusion.size() && int(i) < r.confusion.size(); ++i) {
        for (size_t j = 0; j < confusion[i].size() && int(j) < r.confusion[i].size(); ++j) {
          r.confusion[i][j] += confusion[i][j];
        }
      }
    }
    b.stage_results.append(r);
  }
  // The cell comparison: one row per cell, by its registered display name.
  for (const app::CellSummary& c : result.cells) {
    views::CellResult r;
    const tools::CellDescriptor* type = tools::find_cell(c.cell);
    r.cell = type ? QString::fromUtf8(type->display_name) : q(c.cell);
    r.accuracy = c.accuracy.mean;
    r.accuracy_std = c.accuracy.std;
    r.parameters = qint64(c.parameters);
    r.fused_bytes = qint64(c.fused_bytes);
    r.while_bytes = qint64(c.while_bytes);
    r.unrolled_bytes = qint64(c.unrolled_bytes);
    r.latency_us = c.latency_us;
    r.model_path = q(c.model_path);
    r.model = q(c.model);
    r.arena_bytes = qint64(c.arena_bytes);
    r.board_latency_us = c.board_latency_us;
    r.board_cycles = qint64(c.board_cycles);
    r.board = q(c.board);
    r.board_note = q(c.board_note);
    r.note = q(c.fuse_note);
    r.error = q(c.error);
    b.cell_results.append(r);
  }
  b.result = std::make_shared<const app::ExperimentResult>(result);
  switch (result.status) {
    case app::ExperimentStatus::kCompleted: b.status = Status::kFinished; break;
    case app::ExperimentStatus::kCancelled: b.status = Status::kCancelled; break;
    default: b.status = Status::kFailed; break;
  }
  b.error = q(result.error);
  b.stage = QString();
  b.progress =
      QStringLiteral("%1 runs, %2 s").arg(result.runs.size()).arg(result.seconds, 0, 'f', 1);
  batcher->flush();
}

}  // namespace

}  // namespace gruwb::gui
