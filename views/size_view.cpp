#include "views/size_view.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "views/graph_model.h"
#include "views/wrapped_text_delegate.h"

namespace gruwb::views {
namespace {

QString bytes(uint64_t n) {
  if (n < 10 * 1024) return QString("%1 B").arg(n);
  if (n < 10 * 1024 * 1024) return QString("%1 KiB").arg(n / 1024.0, 0, 'f', 1);
  return QString("%1 MiB").arg(n / (1024.0 * 1024.0), 0, 'f', 2);
}

QString exact(uint64_t n) { return QString::number(n); }

}  // namespace

std::vector<TensorSize> largest_tensors(const tools::AnalyzerReport& report, size_t count) {
  std::vector<TensorSize> all;
  for (const tools::SubgraphReport& subgraph : report.subgraphs) {
    for (const tools::TensorReport& tensor : subgraph.tensors) {
      if (tensor.data_bytes == 0) continue;
      all.push_back(TensorSize{subgraph.index, tensor.index, tensor.name, shape_text(tensor.shape),
                               tensor.type, tensor.data_bytes});
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const TensorSize& a, const TensorSize& b) { return a.bytes > b.bytes; });
  if (all.size() > count) all.resize(count);
  return all;
}

SizeView::SizeView(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel;
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setWordWrap(true);

  bars_ = new QCustomPlot;
  bars_->setMinimumHeight(90);
  bars_->xAxis->setLabel(tr("stored bytes"));
  // Each bar's label carries its bytes; numbers under a narrow dock's axis ran together.
  bars_->xAxis->setTickLabels(false);

  arena_table_ = new QTreeWidget;
  arena_table_->setHeaderLabels({tr("Arena (RAM)"), tr("Bytes"), tr("")});
  new WrappedTextDelegate(arena_table_);
  arena_table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  arena_table_->header()->setMinimumSectionSize(24);
  arena_table_->setMinimumHeight(160);
  arena_table_->setIndentation(12);
  arena_table_->header()->setStretchLastSection(false);  // fitColumns() sizes the notes
  arena_table_->viewport()->installEventFilter(this);

  tensor_table_ = new QTreeWidget;
  tensor_table_->setRootIsDecorated(false);
  tensor_table_->setHeaderLabels(
      {tr("Largest tensors"), tr("Bytes"), tr("Shape"), tr("Type"), tr("Subgraph")});
  tensor_table_->setMinimumHeight(140);
  tensor_table_->viewport()->installEventFilter(this);
  connect(tensor_table_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    emit tensorActivated(item->data(0, Qt::UserRole).toInt(),
                         item->data(0, Qt::UserRole + 1).toInt());
  });

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(bars_);
  split->addWidget(arena_table_);
  split->addWidget(tensor_table_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  split->setStretchFactor(2, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
  clear();
}

bool SizeView::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize &&
      (watched == arena_table_->viewport() || watched == tensor_table_->viewport())) {
    fitColumns();
  }
  return QWidget::eventFilter(watched, event);
}

void SizeView::fitColumns() {
  const int arena = arena_table_->viewport()->width();
  arena_table_->resizeColumnToContents(0);
  arena_table_->resizeColumnToContents(1);
  const int bytes_width = arena_table_->columnWidth(1);
  // The notes keep at least 60 px (they wrap); the names take the rest they need.
  arena_table_->setColumnWidth(
      0, std::min(arena_table_->columnWidth(0), std::max(60, arena - bytes_width - 60)));
  arena_table_->setColumnWidth(
      2, std::max(60, arena - arena_table_->columnWidth(0) - arena_table_->columnWidth(1)));
  arena_table_->doItemsLayout();  // row heights for the new widths
  const int tensors = tensor_table_->viewport()->width();
  for (int c = 0; c < 5; ++c) tensor_table_->resizeColumnToContents(c);
  tensor_table_->setColumnWidth(0, std::min(tensor_table_->columnWidth(0), tensors * 45 / 100));
}

void SizeView::clear() {
  arenas_ = ArenaFigures();
  summary_->setText(tr("No model open."));
  bars_->clearPlottables();
  bars_->replot();
  arena_table_->clear();
  tensor_table_->clear();
}

void SizeView::setModel(const Model& model, const tools::AnalyzerReport& report) {
  clear();
  const auto percent = [&](uint64_t part) {
    return report.model_bytes ? QString("%1%").arg(100.0 * part / report.model_bytes, 0, 'f', 1)
                              : QString();
  };
  summary_->setText(
      tr("<table cellspacing=6>"
         "<tr><td>Model</td><td align=right><b>%1</b></td><td>%2 bytes</td></tr>"
         "<tr><td>Non-data</td><td align=right>%3</td><td>%4</td></tr>"
         "<tr><td>Data</td><td align=right>%5</td><td>%6</td></tr>"
         "<tr><td>Zero buffers</td><td align=right>%7</td><td>%8</td></tr>"
         "<tr><td>Parameters</td><td align=right>%9</td><td>MACs %10</td></tr></table>")
          .arg(bytes(report.model_bytes), exact(report.model_bytes), bytes(report.non_data_bytes),
               percent(report.non_data_bytes), bytes(report.data_bytes), percent(report.data_bytes),
               bytes(report.zero_value_buffers), percent(report.zero_value_buffers),
               exact(report.parameters))
          .arg(exact(report.macs)));
  showSubgraphBars(report);
  arenas_ = measure_arenas(model);
  showArenas();
  for (const TensorSize& t : largest_tensors(report, kTopTensors)) {
    auto* item = new QTreeWidgetItem(
        tensor_table_, {QString("T#%1 %2").arg(t.tensor).arg(QString::fromStdString(t.name)),
                        bytes(t.bytes), QString::fromStdString(t.shape),
                        QString::fromStdString(t.type), QString::number(t.subgraph)});
    item->setToolTip(0, QString::fromStdString(t.name));
    item->setToolTip(1, tr("%1 bytes, %2 of the model").arg(t.bytes).arg(percent(t.bytes)));
    item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    item->setData(0, Qt::UserRole, t.subgraph);
    item->setData(0, Qt::UserRole + 1, t.tensor);
  }
  fitColumns();
}

void SizeView::showSubgraphBars(const tools::AnalyzerReport& report) {
  auto* bars = new QCPBars(bars_->yAxis, bars_->xAxis);  // horizontal: keys on the y axis
  QVector<double> keys, values;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const int n = static_cast<int>(report.subgraphs.size());
  for (int i = 0; i < n; ++i) {
    const tools::SubgraphReport& s = report.subgraphs[i];
    // Subgraph 0 on top, like the report tree.
    const double key = n - i;
    keys << key;
    values << static_cast<double>(s.data_bytes);
    const QString name =
        s.name.empty() ? QString("subgraph %1").arg(i) : QString::fromStdString(s.name);
    ticker->addTick(key, QString("%1  %2").arg(name.left(28), bytes(s.data_bytes)));
  }
  bars->setData(keys, values);
  bars->setWidth(0.6);
  bars->setPen(Qt::NoPen);
  bars->setBrush(QColor(0x33, 0x55, 0x88));
  bars_->yAxis->setTicker(ticker);
  bars_->yAxis->setRange(0.4, n + 0.6);
  double top = 1;
  for (double v : values) top = std::max(top, v);
  bars_->xAxis->setRange(0, top * 1.05);
  bars_->setMinimumHeight(std::max(90, 30 + 26 * n));
  bars_->replot();
}

void SizeView::showArenas() {
  // The rows `gruwb inspect --arena` prints (tools::arena_rows): one source for both.
  QTreeWidgetItem* top = nullptr;
  for (const tools::ArenaRow& r : tools::arena_rows(arenas_)) {
    const QString label = QString::fromStdString(r.label);
    const QString note = QString::fromStdString(r.note);
    if (!r.ok) {
      auto* item = new QTreeWidgetItem(arena_table_, {label, "—", note});
      item->setToolTip(2, note);
      top = nullptr;
      continue;
    }
    QString shown = note;
    if (r.depth == 0) shown = note.isEmpty() ? bytes(r.bytes) : bytes(r.bytes) + ", " + note;
    QTreeWidgetItem* item = r.depth == 0 || !top
                                ? new QTreeWidgetItem(arena_table_, {label, exact(r.bytes), shown})
                                : new QTreeWidgetItem(top, {label, exact(r.bytes), shown});
    item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(0, label);
    item->setToolTip(1, bytes(r.bytes));
    item->setToolTip(2, shown);
    if (r.depth == 0) top = item;
  }
  arena_table_->expandAll();
  fitColumns();
}

}  // namespace gruwb::views
