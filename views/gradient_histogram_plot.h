#pragma once
// Histograms of one tensor's gradients over training, in TensorBoard's two
// modes: offset (one ridge per recorded step, oldest at the back and top,
// newest in front) and overlay (all on one baseline, older ones fainter).
// Counts are drawn as fractions of the tensor's elements so steps compare.

#include <QString>
#include <QVector>
#include <QWidget>

#include "paced_replot.h"

class QCustomPlot;

namespace gruwb::views {

struct GradientHistogram {
  qint64 step = 0;
  double range = 0;        // bins cover [-range, +range] in equal widths
  QVector<double> counts;  // elements per bin
};

// x of bin centres and y as fractions of all elements (what is drawn).
QVector<double> histogram_bin_centers(const GradientHistogram& histogram);
QVector<double> histogram_fractions(const GradientHistogram& histogram);

class GradientHistogramPlot : public QWidget {
  Q_OBJECT

 public:
  enum class Mode { kOffset, kOverlay };
  // Drawn ridges at most; the stored history is thinned evenly beyond this.
  static constexpr int kMaxShown = 24;
  static constexpr int kMaxStored = 1024;

  explicit GradientHistogramPlot(QWidget* parent = nullptr);

  void addHistogram(const GradientHistogram& histogram);
  void clear();
  void setTitle(const QString& title);

  void setMode(Mode mode);
  Mode mode() const { return mode_; }

  int histogramCount() const { return histograms_.size(); }
  const GradientHistogram& histogram(int i) const { return histograms_[i]; }
  // Indices into the stored history that are drawn (evenly spaced, newest
  // always included), oldest first.
  QVector<int> shownIndices() const;

  QCustomPlot* plot() const { return plot_; }
  int replotCount() const { return replot_count_; }
  void flush();

 signals:
  void replotted();

 private:
  void scheduleReplot();
  void rebuild();

  QCustomPlot* plot_ = nullptr;
  QVector<GradientHistogram> histograms_;
  Mode mode_ = Mode::kOffset;
  PacedReplot replot_;
  int replot_count_ = 0;
};

}  // namespace gruwb::views
