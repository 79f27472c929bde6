#include "views/sweep_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QVBoxLayout>

#include "views/curve_plot.h"
#include "views/hparams_table.h"

namespace gruwb::views {
namespace {

const QColor kPalette[] = {QColor("#1f77b4"), QColor("#d62728"), QColor("#2ca02c"),
                           QColor("#ff7f0e"), QColor("#9467bd"), QColor("#8c564b"),
                           QColor("#e377c2"), QColor("#17becf")};

}  // namespace

SweepView::SweepView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel;
  table_ = new HparamsTable;
  table_->filterEdit()->setPlaceholderText(tr("Filter runs (any column, e.g. lstm or failed)"));

  axis_ = new QComboBox;
  axis_->addItem(tr("Accuracy vs model bytes"), "model_bytes");
  axis_->addItem(tr("Accuracy vs latency"), "latency_us");
  scatter_ = new QCustomPlot;
  scatter_->setMinimumHeight(200);
  scatter_->legend->setVisible(true);
  scatter_->legend->setFont(QFont(font().family(), 8));
  scatter_->yAxis->setLabel(tr("test accuracy"));
  curves_ = new CurvePlot(tr("Run curves"), tr("value"));
  curves_->setXLabel(tr("epoch"));
  curves_->setSmoothing(0);

  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(title_);
  left_layout->addWidget(table_);
  auto* right = new QSplitter(Qt::Vertical);
  auto* scatter_box = new QWidget;
  auto* scatter_layout = new QVBoxLayout(scatter_box);
  scatter_layout->setContentsMargins(0, 0, 0, 0);
  scatter_layout->addWidget(axis_);
  scatter_layout->addWidget(scatter_);
  right->addWidget(scatter_box);
  right->addWidget(curves_);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);

  connect(axis_, &QComboBox::currentIndexChanged, this, [this] { replotScatter(); });
  connect(table_, &HparamsTable::currentKeyChanged, this,
          [this](const QString& key) { showRun(key.toInt()); });
  connect(scatter_, &QCustomPlot::plottableClick, this,
          [this](QCPAbstractPlottable* plottable, int point, QMouseEvent*) {
            const QVariant runs = plottable->property("runs");
            const QVector<int> list = runs.value<QVector<int>>();
            if (point >= 0 && point < list.size()) showRun(list[point]);
          });
}

void SweepView::setData(const SweepViewData& data) {
  data_ = data;
  shown_run_ = -1;
  title_->setText(data.title);
  QVector<HparamsTable::Row> rows;
  for (const SweepViewRun& run : data.runs)
    rows.append({QString::number(run.run), run.cells, run.label});
  table_->setRows(data.header, rows);
  replotScatter();
  curves_->clear();
  // Best first, and its curves shown, until the user sorts or picks another.
  const int accuracy = data.header.indexOf("test accuracy");
  if (accuracy >= 0) sortBy(accuracy, Qt::DescendingOrder);
  if (table_->visibleRows() > 0) showRun(table_->keyAt(0).toInt());
}

void SweepView::setFilter(const QString& text) { table_->setFilter(text); }

void SweepView::setScatterAxis(const QString& axis) {
  const int index = axis_->findData(axis);
  if (index >= 0) axis_->setCurrentIndex(index);
}

void SweepView::replotScatter() {
  scatter_->clearPlottables();
  const bool bytes = axis_->currentData().toString() == "model_bytes";
  QStringList groups;
  QMap<QString, QCPGraph*> graphs;
  for (const SweepViewRun& run : data_.runs) {
    const double x = bytes ? run.model_bytes : run.latency_us;
    if (!run.finished || !(x > 0)) continue;
    if (!graphs.contains(run.group)) {
      QCPGraph* graph = scatter_->addGraph();
      const QColor color = kPalette[groups.size() % 8];
      groups.append(run.group);
      graph->setName(run.group.isEmpty() ? tr("runs") : run.group);
      graph->setLineStyle(QCPGraph::lsNone);
      graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 8));
      graph->setSelectable(QCP::stSingleData);
      graphs[run.group] = graph;
    }
    QCPGraph* graph = graphs[run.group];
    // Points sorted by x inside a graph: remember which run each one is.
    QVector<int> runs = graph->property("runs").value<QVector<int>>();
    QVector<double> xs, ys;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
      xs.append(it->key), ys.append(it->value);
    }
    int at = 0;
    while (at < xs.size() && xs[at] <= x) ++at;
    xs.insert(at, x), ys.insert(at, run.accuracy), runs.insert(at, run.run);
    graph->setData(xs, ys, true);
    graph->setProperty("runs", QVariant::fromValue(runs));
  }
  scatter_->xAxis->setLabel(bytes ? tr("model bytes") : tr("latency of one inference (µs)"));
  scatter_->rescaleAxes();
  QCPRange x = scatter_->xAxis->range();
  const double pad = std::max(x.size() * 0.08, 1.0);
  scatter_->xAxis->setRange(x.lower - pad, x.upper + pad);
  scatter_->yAxis->setRange(0, 1.02);
  scatter_->setInteractions(QCP::iSelectPlottables);
  scatter_->replot();
}

bool SweepView::showRun(int run) {
  const SweepViewRun* found = nullptr;
  for (const SweepViewRun& r : data_.runs) {
    if (r.run == run) found = &r;
  }
  if (!found) return false;
  shown_run_ = run;
  curves_->clear();
  for (auto it = found->curves.constBegin(); it != found->curves.constEnd(); ++it) {
    for (const QPointF& p : it.value()) curves_->addPoint(it.key(), p.x(), p.y());
  }
  curves_->flush();
  table_->selectKey(QString::number(run));
  emit runShown(run);
  return true;
}

int SweepView::visibleRows() const { return table_->visibleRows(); }

QString SweepView::cellText(int visible_row, int column) const {
  return table_->cellText(visible_row, column);
}

void SweepView::sortBy(int column, Qt::SortOrder order) { table_->sortBy(column, order); }

QTableView* SweepView::table() const { return table_->table(); }

QLineEdit* SweepView::filterEdit() const { return table_->filterEdit(); }

}  // namespace gruwb::views
