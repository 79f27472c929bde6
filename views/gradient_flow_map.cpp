#include "views/gradient_flow_map.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <cmath>

#include "views/curve_plot.h"

namespace gruwb::views {

GradientFlowMap::GradientFlowMap(QWidget* parent)
    : QWidget(parent), replot_([this] { rebuild(); }) {
  plot_ = new QCustomPlot;
  connect(plot_, &QCustomPlot::beforeReplot, plot_, [plot = plot_] { space_ticks(plot); });
  plot_->setObjectName("gradientFlowMap");
  plot_->setMinimumSize(200, 140);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0,
                                  new QCPTextElement(plot_, tr("Gradient flow ||dL/dh_t||"),
                                                     QFont(font().family(), -1, QFont::Bold)));
  plot_->xAxis->setLabel(tr("training step"));
  plot_->yAxis->setLabel(tr("time step t"));
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
  map_->setInterpolate(false);
  scale_ = new QCPColorScale(plot_);
  plot_->plotLayout()->addElement(1, 1, scale_);
  scale_->setType(QCPAxis::atRight);
  scale_->setBarWidth(12);
  map_->setColorScale(scale_);
  // Dark = vanished, bright = large: vanishing gradients read as a dark band
  // at early time steps.
  map_->setGradient(QCPColorGradient::gpThermal);
  auto* margins = new QCPMarginGroup(plot_);
  plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  scale_->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  setLogColors(true);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
}

void GradientFlowMap::setTitle(const QString& title) {
  if (auto* text = qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0))) {
    text->setText(title);
  }
  scheduleReplot();
}

void GradientFlowMap::addColumn(qint64 step, const QVector<double>& norms) {
  if (norms.isEmpty()) return;
  if (norms.size() != time_steps_) clear();
  time_steps_ = norms.size();
  steps_.append(step);
  columns_.append(norms);
  if (columns_.size() > kMaxColumns) {
    // Keep the newest column and every other older one.
    QVector<qint64> steps;
    QVector<QVector<double>> columns;
    for (int i = 0; i < columns_.size(); ++i) {
      if (i % 2 == 0 || i == columns_.size() - 1) {
        steps.append(steps_[i]);
        columns.append(columns_[i]);
      }
    }
    steps_.swap(steps);
    columns_.swap(columns);
  }
  scheduleReplot();
}

void GradientFlowMap::clear() {
  steps_.clear();
  columns_.clear();
  time_steps_ = 0;
  scheduleReplot();
}

void GradientFlowMap::setLogColors(bool on) {
  log_colors_ = on;
  scale_->axis()->setLabel(on ? tr("log10 ||dL/dh_t||") : tr("||dL/dh_t||"));
  scheduleReplot();
}

double GradientFlowMap::cellValue(int column, int time_step) const {
  const double v = columns_[column][time_step];
  if (!log_colors_) return v;
  // Exact zeros (a dead path) get the floor of the scale, not -inf.
  return v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN();
}

void GradientFlowMap::scheduleReplot() { replot_.schedule(); }

void GradientFlowMap::flush() { replot_.flush(); }

void GradientFlowMap::rebuild() {
  const int nx = columns_.size();
  const int ny = time_steps_;
  if (nx == 0 || ny == 0) {
    map_->data()->clear();
  } else {
    // Cells are centred on their step and time index; a single column still
    // gets a visible width.
    const double first = double(steps_.first());
    const double last = nx > 1 ? double(steps_.last()) : first + 1;
    map_->data()->setSize(nx, ny);
    map_->data()->setRange(QCPRange(first, last), QCPRange(0, ny - 1));
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (int x = 0; x < nx; ++x) {
      for (int y = 0; y < ny; ++y) {
        const double v = cellValue(x, y);
        if (std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
    if (!(lo <= hi)) lo = hi = 0;
    for (int x = 0; x < nx; ++x) {
      for (int y = 0; y < ny; ++y) {
        const double v = cellValue(x, y);
        map_->data()->setCell(x, y, std::isfinite(v) ? v : lo);
      }
    }
    map_->setDataRange(QCPRange(lo, hi > lo ? hi : lo + 1e-6));
    plot_->rescaleAxes();
  }
  plot_->replot(QCustomPlot::rpQueuedRefresh);
  ++replot_count_;
  emit replotted();
}

}  // namespace gruwb::views
