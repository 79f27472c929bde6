#pragma once
// Live training curves (loss, accuracy, gradient norms) on QCustomPlot:
// series appended while training runs, TensorBoard's debiased EMA smoothing
// (slider 0-0.999), an x axis by step, epoch or wall time, log scale, hover
// values, a legend below the axis rect (never over the data; toggled by its
// check box or by clicking an entry) and PNG/PDF/CSV export. Appending never
// repaints directly: a single-shot timer coalesces all appends into at most
// one replot per PacedReplot::kIntervalMs.

#include <QColor>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <limits>
#include <vector>

#include "paced_replot.h"

class QCheckBox;
class QCPGraph;
class QCPItemTracer;
class QCustomPlot;
class QLabel;
class QMouseEvent;
class QSettings;
class QSlider;
class QToolButton;

namespace gruwb::views {

// TensorBoard's scalar smoothing: an exponential moving average whose start
// is debiased, so the first points are not pulled towards zero:
//   last = last * w + (1 - w) * v;  n += 1;  smoothed = last / (1 - w^n)
// Non-finite values pass through unchanged and do not enter the average.
// `weight` is clamped to [0, 0.999] like the slider.
std::vector<double> smooth_ema(const std::vector<double>& values, double weight);
// A smoothing weight as the slider allows it: [0, CurvePlot::kMaxSmoothing] (NaN: 0).
double clamp_smoothing(double weight);
// Shows `weight` (clamped) on a smoothing slider (0..1000) and its value label without the
// slider signalling; returns the clamped weight. CurvePlot's and RunList's sliders share it.
double show_smoothing(QSlider* slider, QLabel* label, double weight);

// Incremental form of smooth_ema for live series: push() returns the
// smoothed value of the point just added.
struct EmaState {
  double weight = 0;
  double last = 0;
  int count = 0;
  double push(double value);
};

// What a point's x can be: TensorBoard's step, relative (wall) time, plus
// the epoch a training curve is in.
enum class CurveXAxis { kStep, kEpoch, kWallTime };
QString curve_x_axis_key(CurveXAxis axis);  // "step", "epoch", "wall" (settings)
CurveXAxis curve_x_axis_from_key(const QString& key);

// A point's position for each x axis. The epoch (fractional inside an
// epoch) and the seconds since the run started are NaN when unknown; such
// points use their step on that axis.
struct CurveX {
  double step = 0;
  double epoch = std::numeric_limits<double>::quiet_NaN();
  double seconds = std::numeric_limits<double>::quiet_NaN();
  double on(CurveXAxis axis) const;
};

// Ticks no closer than two text lines up a plot's side and a label's width along its bottom:
// a short or narrow plot (a 1366x768 dock) shows fewer ticks instead of labels that run
// together. Connected to QCustomPlot::beforeReplot by the plots that use it.
void space_ticks(QCustomPlot* plot);

class CurvePlot : public QWidget {
  Q_OBJECT

 public:
  static constexpr double kMaxSmoothing = 0.999;
  // TensorBoard's default, the one every training curve starts with.
  static constexpr double kDefaultSmoothing = 0.6;

  // A series' points and looks, to take it out of the plot and put it back
  // (undoing a delete).
  struct SeriesData {
    QString name;
    QString label;
    QColor color;
    Qt::PenStyle style = Qt::SolidLine;
    bool visible = true;
    QVector<CurveX> x;
    QVector<double> values;
  };

  explicit CurvePlot(const QString& title, const QString& y_label, QWidget* parent = nullptr);
  ~CurvePlot() override;

  // Appends (step, value) to `series`, creating it on first use. Cheap: the
  // plot repaints later, at a bounded rate.
  void addPoint(const QString& series, double step, double value);
  void addPoint(const QString& series, const CurveX& x, double value);
  // Colour and line style of a series (e.g. one colour per stage, validation
  // dashed). Series without a style get the next palette colour.
  void setSeriesStyle(const QString& series, const QColor& color, Qt::PenStyle style);
  // The colour alone, the line style kept.
  void setSeriesColor(const QString& series, const QColor& color);
  QColor seriesColor(const QString& series) const;
  // What the legend, the hover text and the CSV call a series (its name
  // unless set; a renamed run).
  void setSeriesLabel(const QString& series, const QString& label);
  QString seriesLabel(const QString& series) const;
  // Draws the series' smoothed line thicker: the run picked in the run list or the HParams dock.
  void setSeriesHighlighted(const QString& series, bool highlighted);
  bool isSeriesHighlighted(const QString& series) const;
  void removeSeries(const QString& series);
  // Removes `series` and returns all of it; false when there is none.
  bool takeSeries(const QString& series, SeriesData* data);
  // Puts a taken series back (replacing one of the same name).
  void putSeries(const SeriesData& data);
  void clear();

  QStringList seriesNames() const;  // in creation order
  QVector<double> steps(const QString& series) const;
  // The x of each point on the current x axis (what the plot draws).
  QVector<double> keys(const QString& series) const;
  QVector<double> values(const QString& series) const;
  QVector<double> smoothedValues(const QString& series) const;

  // What the step axis counts ("step" unless set, e.g. "samples"): its label
  // and the first line of the hover text.
  void setXLabel(const QString& label);
  void setXAxis(CurveXAxis axis);
  CurveXAxis xAxis() const { return x_axis_; }

  // The legend sits below the axis rect, in as many columns as fit.
  void setLegendVisible(bool visible);
  bool legendVisible() const { return legend_wanted_; }
  // Hides the smoothing slider when something else (the Curves dock's run
  // list) sets the smoothing of several plots at once.
  void setSmoothingControlVisible(bool visible);

  void setSmoothing(double weight);  // clamped to [0, kMaxSmoothing]
  double smoothing() const { return smoothing_; }
  void setLogScale(bool on);
  bool logScale() const { return log_scale_; }
  void setSeriesVisible(const QString& series, bool visible);
  bool isSeriesVisible(const QString& series) const;

  // What the hover tooltip shows at `step`: the step, then one line per
  // visible series with the nearest point's raw and smoothed value.
  QString hoverText(double step) const;

  // Exports; false with `error` naming the file and the problem. CSV is the
  // long form "series,step,value,smoothed" with every series in one file.
  bool exportPng(const QString& path, int width, int height, QString* error) const;
  bool exportPdf(const QString& path, int width, int height, QString* error) const;
  bool exportCsv(const QString& path, QString* error) const;

  // Smoothing, log scale, x axis, legend and hidden series under `group`.
  void saveSettings(QSettings& settings, const QString& group) const;
  void restoreSettings(QSettings& settings, const QString& group);

  QCustomPlot* plot() const { return plot_; }
  QSlider* smoothingSlider() const { return smoothing_slider_; }
  QCheckBox* logScaleBox() const { return log_box_; }
  QCheckBox* legendBox() const { return legend_box_; }
  int replotCount() const { return replot_count_; }
  bool replotPending() const { return replot_.pending(); }
  // Repaints now if anything changed (tests, screenshots).
  void flush();

 signals:
  void replotted();
  // The user switched a series on or off by clicking its legend entry.
  void seriesToggled(const QString& series, bool visible);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  struct Series {
    QString name;
    QString label;
    QColor color;
    Qt::PenStyle style = Qt::SolidLine;
    QVector<CurveX> x;
    QVector<double> keys;  // x on the current axis (QCustomPlot's data)
    QVector<double> values;
    QVector<double> smoothed;
    EmaState ema;
    QCPGraph* raw = nullptr;     // faint, behind
    QCPGraph* smooth = nullptr;  // bold, in the legend
    bool visible = true;
    bool highlighted = false;
  };

  Series& seriesFor(const QString& name);
  const Series* find(const QString& name) const;
  void resmooth(Series& series);
  void applyVisibility(Series& series);
  void placeLegend();
  void scheduleReplot();
  void replotNow();
  void rescale();
  void showHover(QMouseEvent* event);
  void exportWithDialog();

  QCustomPlot* plot_ = nullptr;
  QSlider* smoothing_slider_ = nullptr;
  QLabel* smoothing_label_ = nullptr;
  QCheckBox* log_box_ = nullptr;
  QCheckBox* legend_box_ = nullptr;
  QWidget* smoothing_controls_ = nullptr;
  QToolButton* export_button_ = nullptr;
  QCPItemTracer* tracer_ = nullptr;
  std::vector<Series> series_;
  QHash<QString, int> index_;  // name -> position in series_
  QStringList hidden_names_;   // restored as hidden before they exist
  double smoothing_ = kDefaultSmoothing;
  bool log_scale_ = false;
  bool legend_wanted_ = true;
  CurveXAxis x_axis_ = CurveXAxis::kStep;
  PacedReplot replot_;
  int replot_count_ = 0;
  QString title_;
  QString x_label_ = tr("step");
};

}  // namespace gruwb::views
