#pragma once
// File > Open Sweep: a sweep folder (collected on opening) or its collected
// sweep-result.json in a window of its own: the hparams table, the accuracy
// vs bytes / latency scatter and any run's curves (views/sweep_view.h).

#include <QWidget>

#include "app/core/sweep.h"
#include "views/sweep_view.h"

namespace gruwb::gui {

// What the view shows of a result: the table rows of sweep_table_row and
// each finished run's curves per stage and seed.
views::SweepViewData sweep_view_data(const app::SweepResult& result);

class SweepWindow : public QWidget {
  Q_OBJECT

 public:
  explicit SweepWindow(QWidget* parent = nullptr);
  // A folder or a collected JSON file; false with `error` (one line) and
  // the previous sweep kept.
  bool open(const QString& path, QString* error);
  views::SweepView* view() const { return view_; }

 private:
  views::SweepView* view_ = nullptr;
};

}  // namespace gruwb::gui
