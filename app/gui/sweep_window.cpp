#include "app/gui/sweep_window.h"

#include <QVBoxLayout>

namespace gruwb::gui {

views::SweepViewData sweep_view_data(const app::SweepResult& result) {
  views::SweepViewData data;
  data.title = QString::fromStdString(result.name) +
               QStringLiteral(": %1 runs, %2 finished, %3 failed, %4 pending")
                   .arg(result.rows.size())
                   .arg(result.finished)
                   .arg(result.failed)
                   .arg(result.pending);
  for (const std::string& column : app::sweep_table_header(result)) {
    data.header.append(QString::fromStdString(column));
  }
  for (const app::SweepRow& row : result.rows) {
    views::SweepViewRun run;
    run.run = row.index;
    run.label = QString::fromStdString(row.label);
    if (!row.params.empty()) {
      run.group = QString::fromStdString(row.params[0].name + "=" + row.params[0].value);
    }
    for (const std::string& cell : app::sweep_table_row(row, false)) {
      run.cells.append(QString::fromStdString(cell));
    }
    run.finished = row.state == app::SweepRunState::kFinished;
    run.accuracy = row.accuracy;
    run.model_bytes = static_cast<double>(row.model_bytes);
    run.latency_us = row.latency_us;
    for (const app::StageRun& stage : result.merged.runs) {
      if (stage.cell != row.label || stage.training.epochs.size() < 2) continue;
      const QString prefix =
          QString::fromStdString(stage.stage) + QStringLiteral(" seed %1 ").arg(stage.seed);
      for (const app::EpochMetrics& e : stage.training.epochs) {
        run.curves[prefix + "train loss"].append(QPointF(e.epoch, e.train_loss));
        if (e.has_accuracy) {
          run.curves[prefix + "train accuracy"].append(QPointF(e.epoch, e.train_accuracy));
        }
        if (e.has_val) run.curves[prefix + "val loss"].append(QPointF(e.epoch, e.val_loss));
      }
    }
    data.runs.append(run);
  }
  return data;
}

SweepWindow::SweepWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
  setObjectName("sweepWindow");
  view_ = new views::SweepView;
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_);
  resize(1366, 768);
}

bool SweepWindow::open(const QString& path, QString* error) {
  app::SweepResult result;
  std::string problem;
  if (!app::open_sweep_result(path.toStdString(), &result, &problem)) {
    *error = QString::fromStdString(problem);
    return false;
  }
  view_->setData(sweep_view_data(result));
  setWindowTitle(tr("Sweep: %1 - GRU Workbench").arg(QString::fromStdString(result.name)));
  return true;
}

}  // namespace gruwb::gui
