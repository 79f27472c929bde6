#include "views/model_report_view.h"

#include <QApplication>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QResizeEvent>
#include <QSplitter>
#include <QStyle>
#include <QTextBlock>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <algorithm>

namespace gruwb::views {
namespace {

using tools::AnalyzerReport;
using tools::OpReport;
using tools::SubgraphReport;
using tools::TensorReport;
using RowKind = ModelReportView::RowKind;

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Plain digits, as in the text report, so a figure found in one pane can be
// searched for in the other.
QString number(uint64_t value) { return QString::number(static_cast<qulonglong>(value)); }

QString bytes(uint64_t value) { return number(value) + " bytes"; }

// "1780 bytes (56.26%)": the share is only a presentation of two analyzer figures.
QString bytesWithShare(uint64_t value, uint64_t total) {
  if (total == 0) return bytes(value);
  return QString("%1 (%2%)").arg(bytes(value)).arg(100.0 * value / total, 0, 'f', 2);
}

QString tensorList(const std::vector<int32_t>& indices) {
  QStringList parts;
  for (int32_t index : indices) parts << (index < 0 ? QString("-") : QString("T#%1").arg(index));
  return parts.join(", ");
}

QString shapeText(const std::vector<int32_t>& shape) {
  QStringList dims;
  for (int32_t dim : shape) dims << QString::number(dim);
  return "[" + dims.join(",") + "]";
}

QTreeWidgetItem* addRow(QTreeWidgetItem* parent, RowKind kind, const QStringList& columns) {
  auto* item = new QTreeWidgetItem(parent, columns);
  item->setData(0, ModelReportView::kKindRole, static_cast<int>(kind));
  return item;
}

QTreeWidgetItem* addSummaryRow(QTreeWidgetItem* parent, const QString& name, const QString& value,
                               const QString& details = {}) {
  return addRow(parent, RowKind::kSummaryRow, {name, value, QString(), details});
}

void addOperator(QTreeWidgetItem* group, const AnalyzerReport& report, int subgraph,
                 const OpReport& op) {
  // Called subgraphs first: for WHILE/IF/CALL_ONCE they matter more than options.
  QStringList details;
  if (!op.called_subgraphs.empty()) {
    QStringList called;
    for (int32_t index : op.called_subgraphs) {
      QString name = QString("Subgraph#%1").arg(index);
      if (index >= 0 && index < static_cast<int>(report.subgraphs.size()) &&
          !report.subgraphs[index].name.empty()) {
        name += " " + qs(report.subgraphs[index].name);
      }
      called << name;
    }
    details << "calls " + called.join(", ");
  }
  if (!op.options.empty()) details << qs(op.options);
  QString macs = op.macs > 0 ? number(op.macs) + " MACs" : QString();
  auto* item =
      addRow(group, RowKind::kOperator,
             {QString("Op#%1 %2").arg(op.index).arg(qs(op.name)),
              tensorList(op.inputs) + " -> " + tensorList(op.outputs), macs, details.join("; ")});
  item->setData(0, ModelReportView::kSubgraphRole, subgraph);
  item->setData(0, ModelReportView::kIndexRole, op.index);
  item->setToolTip(ModelReportView::kDetailsColumn, details.join("\n"));
  if (!op.macs_formula.empty()) item->setToolTip(ModelReportView::kCostColumn, qs(op.macs_formula));
  item->setData(0, ModelReportView::kRunnableRole, op.engine_supported);
  if (op.engine_supported) {
    // A blank icon of the same size keeps op names aligned with marked ones.
    static const QIcon blank = [] {
      QPixmap pixmap(16, 16);
      pixmap.fill(Qt::transparent);
      return QIcon(pixmap);
    }();
    item->setIcon(0, blank);
  } else {
    // Users decide from this mark whether the model can run or train here.
    QString why = QString("The GRU Workbench engine cannot run %1 yet.").arg(qs(op.name));
    item->setIcon(0, qApp->style()->standardIcon(QStyle::SP_MessageBoxWarning));
    item->setForeground(0, QColor(0xb0, 0x3a, 0x2e));
    item->setToolTip(ModelReportView::kItemColumn, why);
    item->setToolTip(ModelReportView::kValueColumn, why);
  }
}

void addTensor(QTreeWidgetItem* group, int subgraph, const TensorReport& tensor) {
  QString kind = tensor.is_constant   ? bytes(tensor.data_bytes)
                 : tensor.is_variable ? QString("variable")
                                      : QString();
  QString details = qs(tensor.quantization);
  if (!tensor.shape_signature.empty() && tensor.shape_signature != tensor.shape) {
    details = (details.isEmpty() ? QString() : details + "; ") + "signature " +
              shapeText(tensor.shape_signature);
  }
  auto* item = addRow(group, RowKind::kTensor,
                      {QString("T#%1 %2").arg(tensor.index).arg(qs(tensor.name)),
                       shapeText(tensor.shape) + " " + qs(tensor.type), kind, details});
  item->setData(0, ModelReportView::kSubgraphRole, subgraph);
  item->setData(0, ModelReportView::kIndexRole, tensor.index);
  item->setToolTip(0, qs(tensor.name));
  if (!tensor.data_preview.empty()) item->setToolTip(2, qs(tensor.data_preview));
  if (!details.isEmpty()) item->setToolTip(3, details);
}

// Index of the first text block at or after `from` whose text, without
// leading blanks, starts with `prefix` followed by a non-digit; -1 if none
// before a block starting with `stop`.
int findBlock(const QTextDocument* document, int from, const QString& prefix, const QString& stop) {
  for (QTextBlock block = document->findBlockByNumber(from); block.isValid();
       block = block.next()) {
    const QString text = block.text().trimmed();
    if (block.blockNumber() > from && !stop.isEmpty() && text.startsWith(stop)) return -1;
    if (text.startsWith(prefix) &&
        (text.size() == prefix.size() || !text.at(prefix.size()).isDigit())) {
      return block.blockNumber();
    }
  }
  return -1;
}

}  // namespace

ModelReportView::ModelReportView(QWidget* parent) : QWidget(parent) {
  tree_ = new QTreeWidget;
  tree_->setColumnCount(kColumnCount);
  tree_->setHeaderLabels({tr("Item"), tr("Value"), tr("Size / MACs"), tr("Details")});
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->setAcceptDrops(false);  // model files dropped here go to the main window
  tree_->header()->setStretchLastSection(true);
  tree_->viewport()->installEventFilter(this);

  text_ = new QPlainTextEdit;
  text_->setReadOnly(true);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setAcceptDrops(false);
  text_->viewport()->setAcceptDrops(false);

  splitter_ = new QSplitter(Qt::Horizontal);
  splitter_->addWidget(tree_);
  splitter_->addWidget(text_);
  splitter_->setStretchFactor(0, 3);
  splitter_->setStretchFactor(1, 2);
  splitter_->setChildrenCollapsible(false);

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(splitter_);

  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    showTextLineFor(item);
    if (!item || selecting_) return;
    const int subgraph = item->data(0, kSubgraphRole).toInt();
    const int index = item->data(0, kIndexRole).toInt();
    const auto kind = static_cast<RowKind>(item->data(0, kKindRole).toInt());
    if (kind == RowKind::kTensor) emit tensorSelected(subgraph, index);
    if (kind == RowKind::kOperator) emit opSelected(subgraph, index);
  });
}

void ModelReportView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const Qt::Orientation orientation =
      event->size().width() >= kSideBySideWidth ? Qt::Horizontal : Qt::Vertical;
  if (splitter_->orientation() == orientation) return;
  splitter_->setOrientation(orientation);
  // The old sizes ran along the other axis: the tree three fifths, the text the rest.
  const int length = orientation == Qt::Horizontal ? event->size().width() : event->size().height();
  splitter_->setSizes({length * 3 / 5, length - length * 3 / 5});
}

bool ModelReportView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == tree_->viewport() && event->type() == QEvent::Resize) fitColumns();
  return QWidget::eventFilter(watched, event);
}

void ModelReportView::fitColumns() {
  // Converter tensor names run to 80+ characters: content widths, capped by what is visible.
  const int available = tree_->viewport()->width();
  const int char_width = tree_->fontMetrics().averageCharWidth();
  int content[kDetailsColumn];
  for (int column = 0; column < kDetailsColumn; ++column) {
    tree_->resizeColumnToContents(column);
    content[column] = tree_->columnWidth(column);
  }
  const int item = std::min(content[kItemColumn], std::max(available / 2, 12 * char_width));
  const int value = std::min(content[kValueColumn], std::max(available - item, 12 * char_width));
  tree_->setColumnWidth(kItemColumn, item);
  tree_->setColumnWidth(kValueColumn, value);
  tree_->setColumnWidth(kCostColumn, std::min(content[kCostColumn], 16 * char_width));
}

void ModelReportView::clear() {
  tree_->clear();
  text_->clear();
}

void ModelReportView::setReport(const AnalyzerReport& report) {
  tree_->setUpdatesEnabled(false);
  tree_->clear();
  addSummary(report);
  // Small models read best fully open; big ones start with tensors folded.
  size_t tensor_rows = 0;
  for (const SubgraphReport& subgraph : report.subgraphs) tensor_rows += subgraph.tensors.size();
  for (const SubgraphReport& subgraph : report.subgraphs) {
    addSubgraph(report, subgraph, tensor_rows <= kExpandTensorRows);
  }
  // Every cell's full text on hover, for the columns too narrow for it (names of 80+
  // characters); cells with their own explanation keep it.
  for (QTreeWidgetItemIterator it(tree_); *it; ++it) {
    for (int column = 0; column < kColumnCount; ++column) {
      if ((*it)->toolTip(column).isEmpty()) (*it)->setToolTip(column, (*it)->text(column));
    }
  }
  fitColumns();
  tree_->setUpdatesEnabled(true);
  text_->setPlainText(qs(tools::report_to_text(report)));
}

void ModelReportView::addSummary(const AnalyzerReport& report) {
  // The file name keeps the value column narrow; the full path goes last.
  const QString path = qs(report.path);
  auto* summary = new QTreeWidgetItem(tree_, {tr("Model"), path.section('/', -1), QString(), path});
  summary->setData(0, kKindRole, static_cast<int>(RowKind::kSummary));
  summary->setToolTip(1, path);
  summary->setToolTip(3, path);
  addSummaryRow(summary, tr("Format"),
                QString("%1 (schema version %2)").arg(qs(report.format)).arg(report.version));
  if (!report.description.empty())
    addSummaryRow(summary, tr("Description"), qs(report.description));
  addSummaryRow(summary, tr("Size"), bytes(report.model_bytes));
  addSummaryRow(summary, tr("Non-data"), bytesWithShare(report.non_data_bytes, report.model_bytes));
  addSummaryRow(summary, tr("Data"), bytesWithShare(report.data_bytes, report.model_bytes));
  addSummaryRow(
      summary, tr("Zero buffers"), bytes(report.zero_value_buffers),
      tr("%n all-zero buffer(s)", nullptr, static_cast<int>(report.zero_value_buffer_count)));
  addSummaryRow(summary, tr("Parameters"), number(report.parameters));
  addSummaryRow(summary, tr("MACs"), number(report.macs), tr("multiply-accumulates per inference"));
  addSummaryRow(summary, tr("Subgraphs"), number(report.subgraphs.size()));
  if (report.engine_runs) {
    addSummaryRow(summary, tr("Engine"), tr("Runs"), tr("the engine's prepare succeeds"));
  } else {
    auto* row = addSummaryRow(summary, tr("Not runnable"), qs(report.engine_error),
                              tr("why the engine's prepare fails"));
    row->setIcon(0, style()->standardIcon(QStyle::SP_MessageBoxWarning));
    row->setToolTip(1, qs(report.engine_error));
  }
  if (report.recurrent_cells > 0) {
    auto* row = addSummaryRow(
        summary, tr("Can fuse"),
        tr("%1 of %2 recurrent cells").arg(report.fusable_cells).arg(report.recurrent_cells),
        tr("what gruwb fuse would rewrite into fused ops"));
    if (!report.fuse_note.empty()) row->setToolTip(1, qs(report.fuse_note));
  }
  if (!report.signatures.empty()) {
    QStringList keys;
    for (const std::string& key : report.signatures) keys << qs(key);
    addSummaryRow(summary, tr("Signatures"), keys.join(", "));
  }
  if (!report.metadata.empty()) {
    QStringList names;
    for (const std::string& name : report.metadata) names << qs(name);
    addSummaryRow(summary, tr("Metadata"), names.join(", "));
  }
  summary->setExpanded(true);
}

void ModelReportView::addSubgraph(const AnalyzerReport& report, const SubgraphReport& subgraph,
                                  bool expand_tensors) {
  QString title = QString("Subgraph#%1").arg(subgraph.index);
  if (!subgraph.name.empty()) title += " " + qs(subgraph.name);
  QString details = QString("%1 -> %2; parameters: %3")
                        .arg(tensorList(subgraph.inputs), tensorList(subgraph.outputs),
                             number(subgraph.parameters));
  if (subgraph.macs > 0) details += "; MACs: " + number(subgraph.macs);
  auto* item = new QTreeWidgetItem(
      tree_, {title,
              tr("%n op(s), ", nullptr, static_cast<int>(subgraph.ops.size())) +
                  tr("%n tensor(s)", nullptr, static_cast<int>(subgraph.tensors.size())),
              bytes(subgraph.data_bytes), details});
  item->setData(0, kKindRole, static_cast<int>(RowKind::kSubgraph));
  item->setData(0, kSubgraphRole, subgraph.index);
  item->setToolTip(2, tr("data bytes of the tensors this subgraph lists"));
  item->setToolTip(3, details);

  int unsupported = 0;
  for (const OpReport& op : subgraph.ops) unsupported += op.engine_supported ? 0 : 1;
  QString opsValue = number(subgraph.ops.size());
  if (unsupported > 0) opsValue += tr(", %1 not runnable").arg(unsupported);
  auto* ops = addRow(item, RowKind::kOperators, {tr("Operators"), opsValue});
  ops->setData(0, kSubgraphRole, subgraph.index);
  for (const OpReport& op : subgraph.ops) addOperator(ops, report, subgraph.index, op);

  auto* tensors = addRow(item, RowKind::kTensors, {tr("Tensors"), number(subgraph.tensors.size())});
  tensors->setData(0, kSubgraphRole, subgraph.index);
  for (const TensorReport& tensor : subgraph.tensors) addTensor(tensors, subgraph.index, tensor);

  item->setExpanded(true);
  ops->setExpanded(true);
  tensors->setExpanded(expand_tensors);
}

QTreeWidgetItem* ModelReportView::summaryItem() const {
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = tree_->topLevelItem(i);
    if (item->data(0, kKindRole).toInt() == static_cast<int>(RowKind::kSummary)) return item;
  }
  return nullptr;
}

QTreeWidgetItem* ModelReportView::subgraphItem(int index) const {
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = tree_->topLevelItem(i);
    if (item->data(0, kKindRole).toInt() == static_cast<int>(RowKind::kSubgraph) &&
        item->data(0, kSubgraphRole).toInt() == index) {
      return item;
    }
  }
  return nullptr;
}

int ModelReportView::subgraphCount() const {
  int count = 0;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    if (tree_->topLevelItem(i)->data(0, kKindRole).toInt() ==
        static_cast<int>(RowKind::kSubgraph)) {
      ++count;
    }
  }
  return count;
}

// Selecting a subgraph, op or tensor row scrolls the text report to its line,
// so the two halves read as one document.
void ModelReportView::showTextLineFor(QTreeWidgetItem* item) {
  if (!item) return;
  const auto kind = static_cast<RowKind>(item->data(0, kKindRole).toInt());
  if (kind == RowKind::kSummary || kind == RowKind::kSummaryRow) return;
  const QTextDocument* document = text_->document();
  const int subgraph = item->data(0, kSubgraphRole).toInt();
  int line = findBlock(document, 0, QString("Subgraph#%1").arg(subgraph), QString());
  if (line < 0) return;
  const int index = item->data(0, kIndexRole).toInt();
  int target = line;
  if (kind == RowKind::kOperator) {
    target = findBlock(document, line, QString("Op#%1").arg(index), "Subgraph#");
  } else if (kind == RowKind::kTensor) {
    target = findBlock(document, line, QString("T#%1").arg(index), "Subgraph#");
  }
  if (target < 0) target = line;
  QTextCursor cursor(document->findBlockByNumber(target));
  cursor.select(QTextCursor::LineUnderCursor);
  text_->setTextCursor(cursor);
  text_->centerCursor();
}

bool ModelReportView::selectRow(RowKind kind, int subgraph, int index) {
  for (QTreeWidgetItemIterator it(tree_); *it; ++it) {
    QTreeWidgetItem* item = *it;
    if (static_cast<RowKind>(item->data(0, kKindRole).toInt()) == kind &&
        item->data(0, kSubgraphRole).toInt() == subgraph &&
        item->data(0, kIndexRole).toInt() == index) {
      // Following the graph must not echo back into it.
      selecting_ = true;
      tree_->setCurrentItem(item);
      tree_->scrollToItem(item);
      selecting_ = false;
      return true;
    }
  }
  return false;
}

}  // namespace gruwb::views
