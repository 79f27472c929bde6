#include "views/curve_plot.h"

#include <qcustomplot.h>

#include <QBuffer>
#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSettings>
#include <QSlider>
#include <QTextStream>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace gruwb::views {
namespace {

// Tableau 10: distinct on screen and in print, and what matplotlib users know.
const QColor kPalette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                           QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                           QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                           QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f),
                           QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf)};

QString formatValue(double value) { return QString::number(value, 'g', 5); }

// A log axis cannot show values <= 0: they become gaps instead of dragging
// the range to minus infinity.
QVector<double> forAxis(const QVector<double>& values, bool log_scale) {
  if (!log_scale) return values;
  QVector<double> out = values;
  for (double& v : out) {
    if (!(v > 0)) v = std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

// QCustomPlot clips a legend entry to its text's bounding box, which cuts off
// the underscores of names like "dense_0/kernel": room below the text keeps them.
constexpr int kLegendItemBottomMargin = 3;

QString legendTip() {
  return CurvePlot::tr("Show the legend below the plot (click an entry to hide its curve).");
}

bool fail(QString* error, const QString& path, const QString& why) {
  if (error) *error = QStringLiteral("%1: %2").arg(path, why);
  return false;
}

}  // namespace

QString curve_x_axis_key(CurveXAxis axis) {
  switch (axis) {
    case CurveXAxis::kEpoch: return QStringLiteral("epoch");
    case CurveXAxis::kWallTime: return QStringLiteral("wall");
    case CurveXAxis::kStep: break;
  }
  return QStringLiteral("step");
}

CurveXAxis curve_x_axis_from_key(const QString& key) {
  if (key == "epoch") return CurveXAxis::kEpoch;
  if (key == "wall") return CurveXAxis::kWallTime;
  return CurveXAxis::kStep;
}

double CurveX::on(CurveXAxis axis) const {
  const double x = axis == CurveXAxis::kEpoch      ? epoch
                   : axis == CurveXAxis::kWallTime ? seconds
                                                   : step;
  return std::isfinite(x) ? x : step;
}

double EmaState::push(double value) {
  if (!std::isfinite(value)) return value;
  last = last * weight + (1 - weight) * value;
  ++count;
  const double debias = weight == 1 ? 1 : 1 - std::pow(weight, count);
  return last / debias;
}

std::vector<double> smooth_ema(const std::vector<double>& values, double weight) {
  EmaState ema;
  ema.weight = clamp_smoothing(weight);
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(ema.push(v));
  return out;
}

double clamp_smoothing(double weight) {
  if (!(weight > 0)) return 0;  // also NaN
  return std::min(weight, CurvePlot::kMaxSmoothing);
}

double show_smoothing(QSlider* slider, QLabel* label, double weight) {
  weight = clamp_smoothing(weight);
  label->setText(QString::number(weight, 'f', 3));
  const int slider_value = qRound(weight * 1000);
  if (slider->value() != slider_value) {
    const QSignalBlocker block(slider);
    slider->setValue(slider_value);
  }
  return weight;
}

void space_ticks(QCustomPlot* plot) {
  const QFontMetrics metrics(plot->font());
  const int across = 2 * metrics.height();
  const int along = metrics.horizontalAdvance(QStringLiteral("-0.000")) + metrics.height();
  for (QCPAxisRect* rect : plot->axisRects()) {
    for (QCPAxis* axis : rect->axes()) {
      const bool vertical = axis->orientation() == Qt::Vertical;
      const int length = vertical ? rect->height() : rect->width();
      if (length <= 0) continue;
      axis->ticker()->setTickCount(std::clamp(length / (vertical ? across : along), 2, 6));
    }
  }
}

CurvePlot::CurvePlot(const QString& title, const QString& y_label, QWidget* parent)
    : QWidget(parent), replot_([this] { replotNow(); }), title_(title) {
  plot_ = new QCustomPlot;
  plot_->setObjectName("curvePlot");
  plot_->setMinimumSize(200, 140);
  plot_->plotLayout()->insertRow(0);
  auto* title_element = new QCPTextElement(plot_, title, QFont(font().family(), -1, QFont::Bold));
  plot_->plotLayout()->addElement(0, 0, title_element);
  plot_->xAxis->setLabel(x_label_);
  plot_->yAxis->setLabel(y_label);
  // An empty plot shows 0..1 (QCustomPlot's 0..5 read as an accuracy of 5).
  plot_->xAxis->setRange(0, 1);
  plot_->yAxis->setRange(0, 1);
  // The legend goes below the axis rect (placeLegend), never over the data.
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  plot_->legend->setVisible(false);  // shown once it has a series (replotNow)
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->legend->setBrush(Qt::NoBrush);
  plot_->legend->setIconSize(18, 8);
  plot_->legend->setMargins(QMargins(4, 0, 4, 2));
  plot_->legend->setRowSpacing(0);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->setNoAntialiasingOnDrag(true);
  plot_->setPlottingHint(QCP::phFastPolylines, true);
  tracer_ = new QCPItemTracer(plot_);
  tracer_->setStyle(QCPItemTracer::tsCircle);
  tracer_->setSize(8);
  tracer_->setVisible(false);
  plot_->setMouseTracking(true);
  plot_->installEventFilter(this);
  connect(plot_, &QCustomPlot::beforeReplot, plot_, [this] { space_ticks(plot_); });

  smoothing_controls_ = new QWidget;
  smoothing_slider_ = new QSlider(Qt::Horizontal);
  smoothing_slider_->setObjectName("smoothingSlider");
  smoothing_slider_->setRange(0, 999);
  smoothing_slider_->setValue(qRound(smoothing_ * 1000));
  smoothing_slider_->setToolTip(
      tr("Exponential moving average with debiasing (TensorBoard's smoothing)."));
  smoothing_label_ = new QLabel;
  smoothing_label_->setMinimumWidth(smoothing_label_->fontMetrics().horizontalAdvance("0.999 "));
  log_box_ = new QCheckBox(tr("Log scale"));
  log_box_->setObjectName("logScaleBox");
  legend_box_ = new QCheckBox(tr("Legend"));
  legend_box_->setObjectName("legendBox");
  legend_box_->setChecked(legend_wanted_);
  legend_box_->setToolTip(legendTip());
  export_button_ = new QToolButton;
  export_button_->setText(tr("Export"));
  export_button_->setToolTip(tr("Save the plot as PNG or PDF, or every series as CSV."));
  connect(export_button_, &QToolButton::clicked, this, &CurvePlot::exportWithDialog);

  auto* smoothing_row = new QHBoxLayout(smoothing_controls_);
  smoothing_row->setContentsMargins(0, 0, 0, 0);
  smoothing_row->addWidget(new QLabel(tr("Smoothing")));
  smoothing_row->addWidget(smoothing_slider_, 1);
  smoothing_row->addWidget(smoothing_label_);
  auto* controls = new QHBoxLayout;
  controls->setContentsMargins(4, 0, 4, 0);
  controls->addWidget(smoothing_controls_, 1);
  controls->addSpacing(8);
  controls->addStretch(0);
  controls->addWidget(log_box_);
  controls->addWidget(legend_box_);
  controls->addWidget(export_button_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(controls);
  layout->addWidget(plot_, 1);
  smoothing_label_->setText(QString::number(smoothing_, 'f', 3));

  connect(smoothing_slider_, &QSlider::valueChanged, this,
          [this](int value) { setSmoothing(value / 1000.0); });
  connect(log_box_, &QCheckBox::toggled, this, &CurvePlot::setLogScale);
  connect(legend_box_, &QCheckBox::toggled, this, &CurvePlot::setLegendVisible);
  connect(plot_, &QCustomPlot::mouseMove, this, &CurvePlot::showHover);
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) {
    rescale();
    plot_->replot();
  });
  connect(plot_, &QCustomPlot::legendClick, this,
          [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
            auto* plottable_item = qobject_cast<QCPPlottableLegendItem*>(item);
            if (!plottable_item) return;
            for (Series& s : series_) {
              if (s.smooth == plottable_item->plottable()) {
                const QString name = s.name;
                const bool visible = !s.visible;
                setSeriesVisible(name, visible);
                emit seriesToggled(name, visible);
                return;
              }
            }
          });
}

CurvePlot::~CurvePlot() {
  // A hidden legend is out of every layout, so QCustomPlot would not delete it.
  if (plot_->legend && !plot_->legend->layout()) delete plot_->legend;
}

CurvePlot::Series& CurvePlot::seriesFor(const QString& name) {
  auto it = index_.find(name);
  if (it != index_.end()) return series_[*it];
  Series s;
  s.name = name;
  s.label = name;
  s.ema.weight = smoothing_;
  s.visible = !hidden_names_.contains(name);
  const QColor color = kPalette[series_.size() % (sizeof kPalette / sizeof kPalette[0])];
  s.raw = plot_->addGraph();
  s.raw->removeFromLegend();
  s.smooth = plot_->addGraph();
  s.smooth->setName(name);
  if (QCPPlottableLegendItem* item = plot_->legend->itemWithPlottable(s.smooth)) {
    item->setMargins(QMargins(0, 0, 0, kLegendItemBottomMargin));
  }
  index_.insert(name, int(series_.size()));
  series_.push_back(s);
  setSeriesStyle(name, color, Qt::SolidLine);
  return series_.back();
}

const CurvePlot::Series* CurvePlot::find(const QString& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &series_[*it];
}

void CurvePlot::setSeriesStyle(const QString& name, const QColor& color, Qt::PenStyle style) {
  Series& s = seriesFor(name);
  s.color = color;
  s.style = style;
  QColor faint = color;
  faint.setAlpha(60);
  s.raw->setPen(QPen(faint, 1, style));
  s.smooth->setPen(QPen(color, s.highlighted ? 4 : 2, style));
  scheduleReplot();
}

void CurvePlot::setSeriesHighlighted(const QString& name, bool highlighted) {
  const Series* s = find(name);
  if (!s || s->highlighted == highlighted) return;
  const QColor color = s->color;
  const Qt::PenStyle style = s->style;
  seriesFor(name).highlighted = highlighted;
  setSeriesStyle(name, color, style);
}

bool CurvePlot::isSeriesHighlighted(const QString& name) const {
  const Series* s = find(name);
  return s && s->highlighted;
}

void CurvePlot::setSeriesColor(const QString& name, const QColor& color) {
  const Series* s = find(name);
  setSeriesStyle(name, color, s ? s->style : Qt::SolidLine);
}

QColor CurvePlot::seriesColor(const QString& name) const {
  const Series* s = find(name);
  return s ? s->color : QColor();
}

void CurvePlot::setSeriesLabel(const QString& name, const QString& label) {
  Series& s = seriesFor(name);
  s.label = label.isEmpty() ? name : label;
  s.smooth->setName(s.label);
  scheduleReplot();
}

QString CurvePlot::seriesLabel(const QString& name) const {
  const Series* s = find(name);
  return s ? s->label : QString();
}

void CurvePlot::addPoint(const QString& name, double step, double value) {
  CurveX x;
  x.step = step;
  addPoint(name, x, value);
}

void CurvePlot::addPoint(const QString& name, const CurveX& x, double value) {
  Series& s = seriesFor(name);
  const double key = x.on(x_axis_);
  s.x.append(x);
  s.keys.append(key);
  s.values.append(value);
  s.smoothed.append(s.ema.push(value));
  const bool hidden_on_log = log_scale_ && !(value > 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.raw->addData(key, hidden_on_log ? nan : value);
  s.smooth->addData(key, hidden_on_log ? nan : s.smoothed.back());
  scheduleReplot();
}

void CurvePlot::removeSeries(const QString& name) {
  auto it = index_.find(name);
  if (it == index_.end()) return;
  const int at = *it;
  if (tracer_->graph() == series_[at].smooth) {
    tracer_->setGraph(nullptr);
    tracer_->setVisible(false);
  }
  plot_->removeGraph(series_[at].raw);
  plot_->removeGraph(series_[at].smooth);
  series_.erase(series_.begin() + at);
  index_.clear();
  for (int i = 0; i < int(series_.size()); ++i) index_.insert(series_[i].name, i);
  scheduleReplot();
}

bool CurvePlot::takeSeries(const QString& name, SeriesData* data) {
  const Series* s = find(name);
  if (!s) return false;
  data->name = s->name;
  data->label = s->label;
  data->color = s->color;
  data->style = s->style;
  data->visible = s->visible;
  data->x = s->x;
  data->values = s->values;
  removeSeries(name);
  return true;
}

void CurvePlot::putSeries(const SeriesData& data) {
  removeSeries(data.name);
  Series& s = seriesFor(data.name);
  s.visible = data.visible;
  s.x = data.x;
  s.values = data.values;
  s.keys.clear();
  for (const CurveX& x : data.x) s.keys.append(x.on(x_axis_));
  s.smoothed.resize(s.values.size());
  resmooth(s);
  setSeriesStyle(data.name, data.color, data.style);
  setSeriesLabel(data.name, data.label);
}

void CurvePlot::clear() {
  for (Series& s : series_) {
    plot_->removeGraph(s.raw);
    plot_->removeGraph(s.smooth);
  }
  series_.clear();
  index_.clear();
  tracer_->setGraph(nullptr);
  tracer_->setVisible(false);
  scheduleReplot();
}

QStringList CurvePlot::seriesNames() const {
  QStringList names;
  for (const Series& s : series_) names << s.name;
  return names;
}

QVector<double> CurvePlot::steps(const QString& name) const {
  const Series* s = find(name);
  QVector<double> steps;
  if (s) {
    for (const CurveX& x : s->x) steps.append(x.step);
  }
  return steps;
}

QVector<double> CurvePlot::keys(const QString& name) const {
  const Series* s = find(name);
  return s ? s->keys : QVector<double>();
}

QVector<double> CurvePlot::values(const QString& name) const {
  const Series* s = find(name);
  return s ? s->values : QVector<double>();
}

QVector<double> CurvePlot::smoothedValues(const QString& name) const {
  const Series* s = find(name);
  return s ? s->smoothed : QVector<double>();
}

void CurvePlot::resmooth(Series& s) {
  s.ema = EmaState();
  s.ema.weight = smoothing_;
  for (int i = 0; i < s.values.size(); ++i) s.smoothed[i] = s.ema.push(s.values[i]);
  const bool sorted = std::is_sorted(s.keys.begin(), s.keys.end());
  s.raw->setData(s.keys, forAxis(s.values, log_scale_), sorted);
  s.smooth->setData(s.keys, forAxis(s.smoothed, log_scale_), sorted);
}

void CurvePlot::setSmoothing(double weight) {
  weight = show_smoothing(smoothing_slider_, smoothing_label_, weight);
  if (weight == smoothing_) return;
  smoothing_ = weight;
  for (Series& s : series_) resmooth(s);
  scheduleReplot();
}

void CurvePlot::setLogScale(bool on) {
  if (log_box_->isChecked() != on) {
    const QSignalBlocker block(log_box_);
    log_box_->setChecked(on);
  }
  if (on == log_scale_) return;
  log_scale_ = on;
  if (on) {
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  } else {
    plot_->yAxis->setScaleType(QCPAxis::stLinear);
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
  for (Series& s : series_) resmooth(s);
  scheduleReplot();
}

void CurvePlot::setXAxis(CurveXAxis axis) {
  if (axis == x_axis_) return;
  x_axis_ = axis;
  plot_->xAxis->setLabel(axis == CurveXAxis::kEpoch      ? tr("epoch")
                         : axis == CurveXAxis::kWallTime ? tr("wall time (s)")
                                                         : x_label_);
  for (Series& s : series_) {
    for (int i = 0; i < s.x.size(); ++i) s.keys[i] = s.x[i].on(axis);
    // The keys may now be in another order (a point without an epoch).
    resmooth(s);
  }
  tracer_->setVisible(false);
  scheduleReplot();
}

void CurvePlot::setLegendVisible(bool visible) {
  if (legend_box_->isChecked() != visible) {
    const QSignalBlocker block(legend_box_);
    legend_box_->setChecked(visible);
  }
  if (visible == legend_wanted_) return;
  legend_wanted_ = visible;
  scheduleReplot();
}

void CurvePlot::setSmoothingControlVisible(bool visible) {
  smoothing_controls_->setVisible(visible);
}

void CurvePlot::placeLegend() {
  QCPLegend* legend = plot_->legend;
  QCPLayoutGrid* grid = plot_->plotLayout();
  // A wrapped grid has empty cells: item(i) is null there.
  int items = 0;
  int widest = 1;
  int tallest = 1;
  for (int i = 0; i < legend->itemCount(); ++i) {
    if (const QCPAbstractLegendItem* item = legend->item(i)) {
      ++items;
      widest = std::max(widest, item->minimumOuterSizeHint().width());
      tallest = std::max(tallest, item->minimumOuterSizeHint().height());
    }
  }
  // As many columns as fit across the plot; a legend that would take more
  // than a third of the height (a sweep's many runs) is left out instead of
  // squashing the axes: the hover text names every curve.
  const int columns = std::clamp(
      std::max(1, plot_->width() - 16) / (widest + legend->columnSpacing()), 1, std::max(1, items));
  const int rows = (items + columns - 1) / columns;
  const bool fits = rows * (tallest + legend->rowSpacing()) <= plot_->height() / 3;
  legend_box_->setToolTip(
      fits || !legend_wanted_
          ? legendTip()
          : tr("%1 curves: too many for a legend here; hover the plot for their values.")
                .arg(items));
  const bool show = legend_wanted_ && items > 0 && fits;
  const bool placed = legend->layout() != nullptr;
  if (show && !placed) {
    grid->addElement(grid->rowCount(), 0, legend);  // below the title and the axis rect
    grid->setRowStretchFactor(grid->rowCount() - 1, 0.001);
  } else if (!show && placed) {
    grid->take(legend);
    grid->simplify();
  }
  legend->setVisible(show);
  if (!show) return;
  legend->setWrap(columns);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
}

void CurvePlot::applyVisibility(Series& s) {
  s.raw->setVisible(s.visible && smoothing_ > 0);
  s.smooth->setVisible(s.visible);
  // The legend entry stays so the series can be switched back on; grey text
  // says it is off.
  if (QCPPlottableLegendItem* item = plot_->legend->itemWithPlottable(s.smooth)) {
    item->setTextColor(s.visible ? Qt::black : QColor(160, 160, 160));
  }
}

void CurvePlot::setSeriesVisible(const QString& name, bool visible) {
  auto it = index_.find(name);
  if (it == index_.end()) return;
  series_[*it].visible = visible;
  scheduleReplot();
}

bool CurvePlot::isSeriesVisible(const QString& name) const {
  const Series* s = find(name);
  return s && s->visible;
}

void CurvePlot::scheduleReplot() { replot_.schedule(); }

void CurvePlot::flush() { replot_.flush(); }

void CurvePlot::rescale() {
  bool any = false;
  for (const Series& s : series_) any = any || (s.visible && !s.values.isEmpty());
  if (!any) return;
  plot_->rescaleAxes(true);
  // Breathing room so a flat curve or the last point is not on the frame.
  const QCPRange y = plot_->yAxis->range();
  if (log_scale_) {
    plot_->yAxis->setRange(y.lower / 1.3, y.upper * 1.3);
  } else {
    const double pad = y.size() > 0 ? 0.05 * y.size() : std::max(1e-3, std::abs(y.center()) * 0.05);
    plot_->yAxis->setRange(y.lower - pad, y.upper + pad);
  }
}

void CurvePlot::replotNow() {
  for (Series& s : series_) applyVisibility(s);
  placeLegend();
  rescale();
  plot_->replot(QCustomPlot::rpQueuedRefresh);
  ++replot_count_;
  emit replotted();
}

void CurvePlot::setXLabel(const QString& label) {
  x_label_ = label;
  if (x_axis_ == CurveXAxis::kStep) plot_->xAxis->setLabel(label);
  scheduleReplot();
}

QString CurvePlot::hoverText(double key) const {
  // Steps are whole; epochs and seconds are not.
  const bool whole = x_axis_ == CurveXAxis::kStep;
  const double at = whole ? std::round(key) : key;
  const QString position = x_axis_ == CurveXAxis::kEpoch      ? tr("epoch %1")
                           : x_axis_ == CurveXAxis::kWallTime ? tr("%1 s")
                                                              : x_label_ + " %1";
  QStringList lines;
  lines << position.arg(whole ? formatValue(at) : QString::number(at, 'f', 2));
  for (const Series& s : series_) {
    if (!s.visible || s.keys.isEmpty()) continue;
    auto it = std::lower_bound(s.keys.begin(), s.keys.end(), key);
    int i = int(it - s.keys.begin());
    if (i == s.keys.size() || (i > 0 && key - s.keys[i - 1] < s.keys[i] - key)) --i;
    QString line = QStringLiteral("%1: %2").arg(s.label, formatValue(s.values[i]));
    if (smoothing_ > 0) line += tr(" (smoothed %1)").arg(formatValue(s.smoothed[i]));
    if (whole && s.keys[i] != at) line += tr(" at %1").arg(formatValue(s.keys[i]));
    lines << line;
  }
  return lines.join('\n');
}

void CurvePlot::showHover(QMouseEvent* event) {
  const QPointF pos = event->position();
  if (!plot_->axisRect()->rect().contains(pos.toPoint())) {
    tracer_->setVisible(false);
    QToolTip::hideText();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  const double step = plot_->xAxis->pixelToCoord(pos.x());
  const Series* first = nullptr;
  for (const Series& s : series_) {
    if (s.visible && !s.keys.isEmpty()) {
      first = &s;
      break;
    }
  }
  if (!first) return;
  tracer_->setGraph(first->smooth);
  tracer_->setGraphKey(step);
  tracer_->setInterpolating(false);
  tracer_->setPen(first->smooth->pen());
  tracer_->setVisible(true);
  QToolTip::showText(event->globalPosition().toPoint() + QPoint(14, 14), hoverText(step), plot_);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool CurvePlot::eventFilter(QObject* watched, QEvent* event) {
  // The legend's columns follow the width (QCustomPlot lays out after this).
  if (watched == plot_ && event->type() == QEvent::Resize) placeLegend();
  if (watched == plot_ && event->type() == QEvent::Leave && tracer_->visible()) {
    tracer_->setVisible(false);
    plot_->replot(QCustomPlot::rpQueuedReplot);
  }
  return QWidget::eventFilter(watched, event);
}

bool CurvePlot::exportPng(const QString& path, int width, int height, QString* error) const {
  const QPixmap pixmap = plot_->toPixmap(width, height);
  if (pixmap.isNull()) return fail(error, path, tr("cannot render %1x%2").arg(width).arg(height));
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return fail(error, path, file.errorString());
  if (!pixmap.save(&file, "PNG")) return fail(error, path, tr("PNG encoding failed"));
  if (!file.commit()) return fail(error, path, file.errorString());
  return true;
}

bool CurvePlot::exportPdf(const QString& path, int width, int height, QString* error) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return fail(error, path, file.errorString());
  {
    // One point per pixel so the page is the plot's size, like savePdf does.
    QPdfWriter writer(&file);
    writer.setResolution(72);
    writer.setPageSize(QPageSize(QSizeF(width, height), QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    writer.setCreator("gru-workbench");
    writer.setTitle(title_);
    QCPPainter painter;
    if (!painter.begin(&writer)) return fail(error, path, tr("cannot start the PDF"));
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    plot_->toPainter(&painter, width, height);
    painter.end();
  }
  if (!file.commit()) return fail(error, path, file.errorString());
  return true;
}

bool CurvePlot::exportCsv(const QString& path, QString* error) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
    return fail(error, path, file.errorString());
  }
  QTextStream out(&file);
  out << "series,step,value,smoothed\n";
  for (const Series& s : series_) {
    QString name = s.label;
    if (name.contains(',') || name.contains('"')) {
      name = '"' + QString(name).replace('"', "\"\"") + '"';
    }
    for (int i = 0; i < s.x.size(); ++i) {
      out << name << ',' << QString::number(s.x[i].step, 'g', 10) << ','
          << QString::number(s.values[i], 'g', 9) << ',' << QString::number(s.smoothed[i], 'g', 9)
          << '\n';
    }
  }
  out.flush();
  if (!file.commit()) return fail(error, path, file.errorString());
  return true;
}

void CurvePlot::exportWithDialog() {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export %1").arg(title_), title_.toLower().replace(' ', '_') + ".png",
      tr("PNG image (*.png);;PDF document (*.pdf);;CSV of every series (*.csv)"));
  if (path.isEmpty()) return;
  const QString suffix = QFileInfo(path).suffix().toLower();
  QString error;
  bool ok;
  if (suffix == "pdf") {
    ok = exportPdf(path, plot_->width(), plot_->height(), &error);
  } else if (suffix == "csv") {
    ok = exportCsv(path, &error);
  } else {
    ok = exportPng(path, plot_->width(), plot_->height(), &error);
  }
  if (!ok) QToolTip::showText(export_button_->mapToGlobal(QPoint(0, 0)), error, export_button_);
}

void CurvePlot::saveSettings(QSettings& settings, const QString& group) const {
  settings.beginGroup(group);
  settings.setValue("smoothing", smoothing_);
  settings.setValue("logScale", log_scale_);
  settings.setValue("xAxis", curve_x_axis_key(x_axis_));
  settings.setValue("legend", legend_wanted_);
  QStringList hidden;
  for (const Series& s : series_) {
    if (!s.visible) hidden << s.name;
  }
  for (const QString& name : hidden_names_) {
    if (!index_.contains(name)) hidden << name;
  }
  settings.setValue("hiddenSeries", hidden);
  settings.endGroup();
}

void CurvePlot::restoreSettings(QSettings& settings, const QString& group) {
  settings.beginGroup(group);
  setSmoothing(settings.value("smoothing", smoothing_).toDouble());
  setLogScale(settings.value("logScale", log_scale_).toBool());
  setXAxis(curve_x_axis_from_key(settings.value("xAxis", curve_x_axis_key(x_axis_)).toString()));
  setLegendVisible(settings.value("legend", legend_wanted_).toBool());
  // Series that do not exist yet are hidden when they appear.
  hidden_names_ = settings.value("hiddenSeries").toStringList();
  settings.endGroup();
  for (Series& s : series_) s.visible = !hidden_names_.contains(s.name);
  scheduleReplot();
}

}  // namespace gruwb::views
