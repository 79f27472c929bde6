#include "views/gradient_histogram_plot.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <algorithm>

#include "views/curve_plot.h"

namespace gruwb::views {
namespace {

// Old = light orange, new = deep red-brown: TensorBoard's histogram palette
// reads the same way (time runs towards the viewer).
QColor ageColor(double age) {  // age 0 = oldest, 1 = newest
  const QColor old_color(0xfd, 0xd4, 0x9e);
  const QColor new_color(0xb3, 0x30, 0x00);
  auto mix = [age](int a, int b) { return int(a + (b - a) * age); };
  return QColor(mix(old_color.red(), new_color.red()), mix(old_color.green(), new_color.green()),
                mix(old_color.blue(), new_color.blue()));
}

}  // namespace

QVector<double> histogram_bin_centers(const GradientHistogram& h) {
  QVector<double> x;
  const int bins = h.counts.size();
  for (int i = 0; i < bins; ++i) x.append(-h.range + (2 * i + 1) * h.range / bins);
  return x;
}

QVector<double> histogram_fractions(const GradientHistogram& h) {
  double total = 0;
  for (double c : h.counts) total += c;
  QVector<double> y;
  for (double c : h.counts) y.append(total > 0 ? c / total : 0);
  return y;
}

GradientHistogramPlot::GradientHistogramPlot(QWidget* parent)
    : QWidget(parent), replot_([this] { rebuild(); }) {
  plot_ = new QCustomPlot;
  connect(plot_, &QCustomPlot::beforeReplot, plot_, [plot = plot_] { space_ticks(plot); });
  plot_->setObjectName("gradientHistogramPlot");
  plot_->setMinimumSize(200, 140);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(
      0, 0,
      new QCPTextElement(plot_, tr("Gradient histogram"), QFont(font().family(), -1, QFont::Bold)));
  plot_->xAxis->setLabel(tr("gradient value"));
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->setPlottingHint(QCP::phFastPolylines, true);
  plot_->setNotAntialiasedElements(QCP::aeFills);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  setMode(Mode::kOffset);
}

void GradientHistogramPlot::setTitle(const QString& title) {
  if (auto* text = qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0))) {
    text->setText(title);
  }
  scheduleReplot();
}

void GradientHistogramPlot::addHistogram(const GradientHistogram& histogram) {
  if (histogram.counts.isEmpty()) return;
  histograms_.append(histogram);
  if (histograms_.size() > kMaxStored) {
    QVector<GradientHistogram> kept;
    for (int i = 0; i < histograms_.size(); ++i) {
      if (i % 2 == 0 || i == histograms_.size() - 1) kept.append(histograms_[i]);
    }
    histograms_.swap(kept);
  }
  scheduleReplot();
}

void GradientHistogramPlot::clear() {
  histograms_.clear();
  scheduleReplot();
}

void GradientHistogramPlot::setMode(Mode mode) {
  mode_ = mode;
  plot_->yAxis->setLabel(mode == Mode::kOffset ? tr("training step") : tr("fraction of elements"));
  scheduleReplot();
}

QVector<int> GradientHistogramPlot::shownIndices() const {
  QVector<int> shown;
  const int n = histograms_.size();
  if (n <= kMaxShown) {
    for (int i = 0; i < n; ++i) shown.append(i);
    return shown;
  }
  for (int k = 0; k < kMaxShown; ++k) {
    // Evenly spaced from the oldest to the newest, both included.
    shown.append(int(qint64(k) * (n - 1) / (kMaxShown - 1)));
  }
  return shown;
}

void GradientHistogramPlot::scheduleReplot() { replot_.schedule(); }

void GradientHistogramPlot::flush() { replot_.flush(); }

void GradientHistogramPlot::rebuild() {
  plot_->clearGraphs();
  const QVector<int> shown = shownIndices();
  double peak = 0;
  for (int i : shown) {
    for (double f : histogram_fractions(histograms_[i])) peak = std::max(peak, f);
  }
  if (peak <= 0) peak = 1;
  // Offset mode: each ridge is scaled to 2.5 rows so neighbours overlap a
  // little, as in TensorBoard; rows are spaced 1 apart, newest at 0.
  const double ridge_height = 2.5;
  const int n = shown.size();
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  double max_range = 0;
  for (int k = 0; k < n; ++k) {
    const GradientHistogram& h = histograms_[shown[k]];
    max_range = std::max(max_range, h.range);
    const double age = n > 1 ? double(k) / (n - 1) : 1.0;
    const QColor color = ageColor(age);
    QVector<double> x = histogram_bin_centers(h);
    QVector<double> y = histogram_fractions(h);
    if (mode_ == Mode::kOffset) {
      const double base = n - 1 - k;
      for (double& v : y) v = base + v / peak * ridge_height;
      // A baseline graph to fill down to, so newer ridges hide older ones.
      QCPGraph* baseline = plot_->addGraph();
      baseline->setData(x, QVector<double>(x.size(), base), true);
      baseline->setPen(Qt::NoPen);
      QCPGraph* ridge = plot_->addGraph();
      ridge->setData(x, y, true);
      ridge->setPen(QPen(color.darker(130), 1.2));
      ridge->setBrush(color);
      ridge->setChannelFillGraph(baseline);
      ridge->setName(tr("step %1").arg(h.step));
      // Label about six rows so the axis stays readable.
      if (k == n - 1 || (n - 1 - k) % std::max(1, n / 6) == 0)
        ticker->addTick(base, QString::number(h.step));
    } else {
      QCPGraph* graph = plot_->addGraph();
      graph->setData(x, y, true);
      graph->setPen(QPen(color, k == n - 1 ? 2.2 : 1.2));
      graph->setLineStyle(QCPGraph::lsStepCenter);
      graph->setName(tr("step %1").arg(h.step));
    }
  }
  if (mode_ == Mode::kOffset) {
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setRange(-0.3, std::max(1, n - 1) + ridge_height + 0.3);
  } else {
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    plot_->yAxis->setRange(0, peak * 1.08);
  }
  if (max_range > 0) plot_->xAxis->setRange(-max_range, max_range);
  plot_->replot(QCustomPlot::rpQueuedRefresh);
  ++replot_count_;
  emit replotted();
}

}  // namespace gruwb::views
