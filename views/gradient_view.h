#pragma once
// The gradient view: per-weight gradient norm over training steps (a
// CurvePlot, log scale), RNN gradient flow (heat map of ||dL/dh_t||) and
// histograms of a chosen weight's gradients (offset / overlay). It keeps the
// statistics of every run it is fed and shows one run at a time.
//
// Fed with plain values copied from the engine observer
// (engine/train/observer.h) on the GUI thread.

#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "views/gradient_histogram_plot.h"

class QComboBox;
class QSettings;
class QSplitter;

class QResizeEvent;

namespace gruwb::views {

class CurvePlot;
class GradientFlowMap;

// One trainable weight's mean gradient at one optimizer step.
struct WeightGradientSample {
  QString run;  // e.g. "exp 1 / all / seed 1"
  qint64 step = 0;
  QString weight;  // tensor name
  double norm = 0;
  double min = 0;
  double max = 0;
  double range = 0;           // histogram covers [-range, +range]
  QVector<double> histogram;  // element counts per bin
};

// ||dL/dh_t|| of one recurrent op for t = 0..T-1 at one optimizer step.
struct StateGradientSample {
  QString run;
  qint64 step = 0;
  QString op;  // e.g. "op 1 GRU"
  QVector<double> norms;
};

class GradientView : public QWidget {
  Q_OBJECT

 public:
  explicit GradientView(QWidget* parent = nullptr);
  ~GradientView() override;

  void addWeightGradient(const WeightGradientSample& sample);
  void addStateGradient(const StateGradientSample& sample);
  void clear();

  QStringList runs() const { return run_order_; }
  QString currentRun() const { return current_run_; }
  void setCurrentRun(const QString& run);
  QStringList weights() const;  // of the current run, in model order
  QString currentWeight() const { return current_weight_; }
  void setCurrentWeight(const QString& weight);
  void setHistogramMode(GradientHistogramPlot::Mode mode);
  GradientHistogramPlot::Mode histogramMode() const;

  CurvePlot* normPlot() const { return norm_plot_; }
  GradientFlowMap* flowMap() const { return flow_map_; }
  GradientHistogramPlot* histogramPlot() const { return histogram_plot_; }
  QComboBox* runBox() const { return run_box_; }
  QComboBox* weightBox() const { return weight_box_; }
  QComboBox* modeBox() const { return mode_box_; }
  void flush();

  void saveSettings(QSettings& settings, const QString& group) const;
  void restoreSettings(QSettings& settings, const QString& group);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct RunData {
    QStringList weights;
    QHash<QString, QVector<double>> norm_steps;
    QHash<QString, QVector<double>> norms;
    QHash<QString, QVector<GradientHistogram>> histograms;
    QString state_op;
    QVector<qint64> state_steps;
    QVector<QVector<double>> state_norms;
  };

  RunData& runFor(const QString& run);
  void showRun();
  void showWeight();

  QHash<QString, RunData> data_;
  QStringList run_order_;
  QString current_run_;
  QString current_weight_;
  QComboBox* run_box_ = nullptr;
  QComboBox* weight_box_ = nullptr;
  QComboBox* mode_box_ = nullptr;
  CurvePlot* norm_plot_ = nullptr;
  GradientFlowMap* flow_map_ = nullptr;
  GradientHistogramPlot* histogram_plot_ = nullptr;
  QSplitter* splitter_ = nullptr;
  QSplitter* lower_splitter_ = nullptr;
};

}  // namespace gruwb::views
