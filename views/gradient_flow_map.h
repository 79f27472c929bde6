#pragma once
// RNN gradient flow as a heat map: x = training step, y = time step t of the
// sequence, colour = ||dL/dh_t|| (log10 by default, since norms span
// decades when gradients vanish or explode). One column per reported
// training step; repaints are timer-coalesced like CurvePlot's.

#include <QString>
#include <QVector>
#include <QWidget>

#include "paced_replot.h"

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;

namespace gruwb::views {

class GradientFlowMap : public QWidget {
  Q_OBJECT

 public:
  // Older columns are thinned (every other one dropped) beyond this many, so
  // a long run keeps its whole history at a bounded cost.
  static constexpr int kMaxColumns = 512;

  explicit GradientFlowMap(QWidget* parent = nullptr);

  // ||dL/dh_t|| for t = 0..T-1 after training step `step`. A column with a
  // different T than the previous ones starts the map afresh.
  void addColumn(qint64 step, const QVector<double>& norms);
  void clear();
  void setTitle(const QString& title);

  void setLogColors(bool on);
  bool logColors() const { return log_colors_; }

  int columnCount() const { return columns_.size(); }
  int timeSteps() const { return time_steps_; }
  qint64 columnStep(int column) const { return steps_[column]; }
  double norm(int column, int time_step) const { return columns_[column][time_step]; }
  // The colour value drawn for a cell (log10 of the norm when log colours).
  double cellValue(int column, int time_step) const;

  QCustomPlot* plot() const { return plot_; }
  int replotCount() const { return replot_count_; }
  void flush();

 signals:
  void replotted();

 private:
  void scheduleReplot();
  void rebuild();

  QCustomPlot* plot_ = nullptr;
  QCPColorMap* map_ = nullptr;
  QCPColorScale* scale_ = nullptr;
  QVector<qint64> steps_;
  QVector<QVector<double>> columns_;
  int time_steps_ = 0;
  bool log_colors_ = true;
  PacedReplot replot_;
  int replot_count_ = 0;
};

}  // namespace gruwb::views
