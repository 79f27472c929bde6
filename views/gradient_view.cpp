#include "views/gradient_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QSettings>
#include <QSplitter>
#include <QVBoxLayout>

#include "views/curve_plot.h"
#include "views/gradient_flow_map.h"

namespace gruwb::views {
namespace {

constexpr int kMaxHistoryPerWeight = GradientHistogramPlot::kMaxStored;

template <typename T>
void thinOlder(QVector<T>* values) {
  if (values->size() <= kMaxHistoryPerWeight) return;
  QVector<T> kept;
  for (int i = 0; i < values->size(); ++i) {
    if (i % 2 == 0 || i == values->size() - 1) kept.append((*values)[i]);
  }
  values->swap(kept);
}

}  // namespace

GradientView::GradientView(QWidget* parent) : QWidget(parent) {
  run_box_ = new QComboBox;
  run_box_->setObjectName("gradientRunBox");
  run_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  run_box_->setMinimumContentsLength(16);
  weight_box_ = new QComboBox;
  weight_box_->setObjectName("gradientWeightBox");
  weight_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  weight_box_->setMinimumContentsLength(20);
  mode_box_ = new QComboBox;
  mode_box_->setObjectName("histogramModeBox");
  mode_box_->addItem(tr("Offset"));
  mode_box_->addItem(tr("Overlay"));
  mode_box_->setToolTip(
      tr("Offset: one ridge per step, newest in front. Overlay: all on one axis."));

  auto* controls = new QHBoxLayout;
  controls->setContentsMargins(4, 2, 4, 0);
  controls->addWidget(new QLabel(tr("Run")));
  controls->addWidget(run_box_);
  controls->addSpacing(8);
  controls->addWidget(new QLabel(tr("Histogram of")));
  controls->addWidget(weight_box_);
  controls->addWidget(mode_box_);
  controls->addStretch(1);

  norm_plot_ = new CurvePlot(tr("Gradient norm per weight"), tr("||grad||"));
  norm_plot_->setSmoothing(0);
  norm_plot_->setLogScale(true);
  flow_map_ = new GradientFlowMap;
  histogram_plot_ = new GradientHistogramPlot;
  lower_splitter_ = new QSplitter(Qt::Horizontal);
  lower_splitter_->addWidget(flow_map_);
  lower_splitter_->addWidget(histogram_plot_);
  splitter_ = new QSplitter(Qt::Vertical);
  splitter_->addWidget(norm_plot_);
  splitter_->addWidget(lower_splitter_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(controls);
  layout->addWidget(splitter_, 1);

  connect(run_box_, &QComboBox::currentTextChanged, this, &GradientView::setCurrentRun);
  connect(weight_box_, &QComboBox::currentTextChanged, this, &GradientView::setCurrentWeight);
  connect(mode_box_, &QComboBox::currentIndexChanged, this, [this](int index) {
    histogram_plot_->setMode(index == 1 ? GradientHistogramPlot::Mode::kOverlay
                                        : GradientHistogramPlot::Mode::kOffset);
  });
}

GradientView::~GradientView() = default;

GradientView::RunData& GradientView::runFor(const QString& run) {
  auto it = data_.find(run);
  if (it != data_.end()) return *it;
  run_order_.append(run);
  RunData& data = data_[run];
  {
    const QSignalBlocker block(run_box_);
    run_box_->addItem(run);
  }
  // Follow the newest run: that is the one the user just started.
  setCurrentRun(run);
  return data;
}

void GradientView::addWeightGradient(const WeightGradientSample& sample) {
  RunData& run = runFor(sample.run);
  if (!run.weights.contains(sample.weight)) {
    run.weights.append(sample.weight);
    if (sample.run == current_run_) {
      const QSignalBlocker block(weight_box_);
      weight_box_->addItem(sample.weight);
    }
    if (current_weight_.isEmpty() && sample.run == current_run_) setCurrentWeight(sample.weight);
  }
  QVector<double>& steps = run.norm_steps[sample.weight];
  QVector<double>& norms = run.norms[sample.weight];
  steps.append(double(sample.step));
  norms.append(sample.norm);
  thinOlder(&steps);
  thinOlder(&norms);
  GradientHistogram histogram{sample.step, sample.range, sample.histogram};
  QVector<GradientHistogram>& history = run.histograms[sample.weight];
  history.append(histogram);
  thinOlder(&history);
  if (sample.run != current_run_) return;
  norm_plot_->addPoint(sample.weight, double(sample.step), sample.norm);
  if (sample.weight == current_weight_) histogram_plot_->addHistogram(histogram);
}

void GradientView::addStateGradient(const StateGradientSample& sample) {
  RunData& run = runFor(sample.run);
  run.state_op = sample.op;
  run.state_steps.append(sample.step);
  run.state_norms.append(sample.norms);
  thinOlder(&run.state_steps);
  thinOlder(&run.state_norms);
  if (sample.run != current_run_) return;
  flow_map_->setTitle(tr("||dL/dh_t||, %1").arg(sample.op));
  flow_map_->addColumn(sample.step, sample.norms);
}

void GradientView::clear() {
  data_.clear();
  run_order_.clear();
  current_run_.clear();
  current_weight_.clear();
  {
    const QSignalBlocker block(run_box_);
    run_box_->clear();
  }
  showRun();
}

void GradientView::setCurrentRun(const QString& run) {
  if (run == current_run_ || !data_.contains(run)) return;
  current_run_ = run;
  if (run_box_->currentText() != run) {
    const QSignalBlocker block(run_box_);
    run_box_->setCurrentText(run);
  }
  showRun();
}

QStringList GradientView::weights() const {
  auto it = data_.find(current_run_);
  return it == data_.end() ? QStringList() : it->weights;
}

void GradientView::setCurrentWeight(const QString& weight) {
  if (weight == current_weight_) return;
  current_weight_ = weight;
  if (weight_box_->currentText() != weight) {
    const QSignalBlocker block(weight_box_);
    weight_box_->setCurrentText(weight);
  }
  showWeight();
}

void GradientView::setHistogramMode(GradientHistogramPlot::Mode mode) {
  mode_box_->setCurrentIndex(mode == GradientHistogramPlot::Mode::kOverlay ? 1 : 0);
}

GradientHistogramPlot::Mode GradientView::histogramMode() const { return histogram_plot_->mode(); }

void GradientView::showRun() {
  norm_plot_->clear();
  flow_map_->clear();
  const RunData* run = data_.contains(current_run_) ? &data_[current_run_] : nullptr;
  {
    const QSignalBlocker block(weight_box_);
    weight_box_->clear();
    if (run) weight_box_->addItems(run->weights);
  }
  if (run) {
    for (const QString& weight : run->weights) {
      const QVector<double>& steps = run->norm_steps[weight];
      const QVector<double>& norms = run->norms[weight];
      for (int i = 0; i < steps.size(); ++i) norm_plot_->addPoint(weight, steps[i], norms[i]);
    }
    flow_map_->setTitle(run->state_op.isEmpty() ? tr("Gradient flow ||dL/dh_t||")
                                                : tr("||dL/dh_t||, %1").arg(run->state_op));
    for (int i = 0; i < run->state_steps.size(); ++i) {
      flow_map_->addColumn(run->state_steps[i], run->state_norms[i]);
    }
  }
  // Keep the chosen weight when the new run has it (same model, other stage).
  QString weight = current_weight_;
  if (!run || !run->weights.contains(weight))
    weight = run && !run->weights.isEmpty() ? run->weights.first() : QString();
  current_weight_.clear();
  setCurrentWeight(weight);
  if (weight.isEmpty()) showWeight();
}

void GradientView::showWeight() {
  histogram_plot_->clear();
  histogram_plot_->setTitle(current_weight_.isEmpty()
                                ? tr("Gradient histogram")
                                : tr("Gradient histogram: %1").arg(current_weight_));
  auto it = data_.find(current_run_);
  if (it == data_.end()) return;
  for (const GradientHistogram& h : it->histograms.value(current_weight_)) {
    histogram_plot_->addHistogram(h);
  }
}

void GradientView::flush() {
  norm_plot_->flush();
  flow_map_->flush();
  histogram_plot_->flush();
}

void GradientView::saveSettings(QSettings& settings, const QString& group) const {
  norm_plot_->saveSettings(settings, group + "/norms");
  settings.beginGroup(group);
  settings.setValue("histogramMode", mode_box_->currentIndex());
  settings.setValue("splitter", splitter_->saveState());
  settings.setValue("lowerSplitter", lower_splitter_->saveState());
  settings.endGroup();
}

void GradientView::restoreSettings(QSettings& settings, const QString& group) {
  norm_plot_->restoreSettings(settings, group + "/norms");
  settings.beginGroup(group);
  mode_box_->setCurrentIndex(settings.value("histogramMode", 0).toInt() == 1 ? 1 : 0);
  splitter_->restoreState(settings.value("splitter").toByteArray());
  lower_splitter_->restoreState(settings.value("lowerSplitter").toByteArray());
  settings.endGroup();
}

void GradientView::resizeEvent(QResizeEvent* event) {
  // A wide, low dock (the bottom of a 1366x768 window) shows the three plots
  // side by side instead of squeezing them into one column; a tall one
  // stacks the norms above the flow map and the histogram.
  const QSize size = event->size();
  const Qt::Orientation wanted = size.width() > 2 * size.height() ? Qt::Horizontal : Qt::Vertical;
  if (splitter_->orientation() != wanted) splitter_->setOrientation(wanted);
  QWidget::resizeEvent(event);
}

}  // namespace gruwb::views
