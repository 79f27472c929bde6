#pragma once
// A sweep's runs (gruwb sweep, app/core/sweep.h): the hparams table (HparamsTable: sortable,
// numbers as numbers; a filter over every column), a scatter of test accuracy
// against model bytes or latency (one colour per value of the first setting),
// and the curves of the run selected in either. The data arrive as plain rows
// (app/gui fills them from a SweepResult); the view computes nothing itself.

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QTableView;

namespace gruwb::views {

class CurvePlot;
class HparamsTable;

struct SweepViewRun {
  int run = 0;
  QString label;      // "r3 cell=gru units=16 seed=2"
  QString group;      // the first setting's value, e.g. "cell=gru"
  QStringList cells;  // the table row (the header's columns)
  bool finished = false;
  double accuracy = 0, model_bytes = 0, latency_us = 0;
  // Its curves: series name ("all seed 1 train loss") -> (epoch, value) points.
  QMap<QString, QVector<QPointF>> curves;
};

struct SweepViewData {
  QString title;  // "cells x units: 8 runs, 8 finished, 0 failed, 0 pending"
  QStringList header;
  QVector<SweepViewRun> runs;
};

class SweepView : public QWidget {
  Q_OBJECT

 public:
  explicit SweepView(QWidget* parent = nullptr);

  void setData(const SweepViewData& data);
  // The table filter: rows where any column contains `text` (case-insensitive).
  void setFilter(const QString& text);
  // "model_bytes" or "latency_us".
  void setScatterAxis(const QString& axis);
  // Shows run `run`'s curves and selects its row; false when there is no such run.
  bool showRun(int run);

  int visibleRows() const;
  QString cellText(int visible_row, int column) const;  // as sorted and filtered
  void sortBy(int column, Qt::SortOrder order);
  int shownRun() const { return shown_run_; }
  QTableView* table() const;
  QCustomPlot* scatter() const { return scatter_; }
  CurvePlot* curves() const { return curves_; }
  QLineEdit* filterEdit() const;

 signals:
  void runShown(int run);

 private:
  void replotScatter();

  SweepViewData data_;
  QLabel* title_ = nullptr;
  HparamsTable* table_ = nullptr;
  QComboBox* axis_ = nullptr;
  QCustomPlot* scatter_ = nullptr;
  CurvePlot* curves_ = nullptr;
  int shown_run_ = -1;
};

}  // namespace gruwb::views
