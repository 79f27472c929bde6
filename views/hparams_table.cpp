#include "views/hparams_table.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

namespace gruwb::views {
namespace {

constexpr int kKeyRole = Qt::UserRole + 1;
constexpr int kSortRole = Qt::UserRole + 2;

}  // namespace

HparamsTable::HparamsTable(QWidget* parent) : QWidget(parent) {
  filter_ = new QLineEdit;
  filter_->setPlaceholderText(tr("Filter runs (any column)"));
  filter_->setClearButtonEnabled(true);
  placeholder_ = new QLabel;
  placeholder_->setWordWrap(true);
  placeholder_->hide();
  model_ = new QStandardItemModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(kSortRole);
  proxy_->setFilterKeyColumn(-1);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  table_ = new QTableView;
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  // Compact rows: more runs in a dock at 1366x768.
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->setTextElideMode(Qt::ElideRight);
  // Unsorted until the owner or the user picks a column (rows in the order they came).
  table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);

  toolbar_ = new QHBoxLayout;
  toolbar_->setContentsMargins(0, 0, 0, 0);
  toolbar_->addWidget(filter_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(toolbar_);
  layout->addWidget(placeholder_);
  layout->addWidget(table_, 1);

  connect(filter_, &QLineEdit::textChanged, this, &HparamsTable::setFilter);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (current.isValid()) emit currentKeyChanged(keyAt(current.row()));
          });
  connect(table_, &QTableView::activated, this,
          [this](const QModelIndex& index) { emit keyActivated(keyAt(index.row())); });
}

void HparamsTable::setRows(const QStringList& header, const QVector<Row>& rows) {
  const QString current = currentKey();
  const QSignalBlocker block(table_->selectionModel());
  model_->clear();
  model_->setHorizontalHeaderLabels(header);
  const QPalette palette = table_->palette();
  text_columns_.fill(false, header.size());
  for (const Row& row : rows) {
    QList<QStandardItem*> items;
    for (const QString& text : row.cells) {
      auto* item = new QStandardItem(text);
      bool number = false;
      const double value = text.toDouble(&number);
      if (!number && text != "-" && items.size() < text_columns_.size()) {
        text_columns_[items.size()] = true;
      }
      // Numbers sort as numbers (10 after 9), and "-" (unknown) below every figure.
      item->setData(number        ? QVariant(value)
                    : text == "-" ? QVariant(-std::numeric_limits<double>::infinity())
                                  : QVariant(text),
                    kSortRole);
      if (number || text == "-") item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      item->setData(row.key, kKeyRole);
      // The full text first: a narrowed column elides it.
      item->setToolTip(row.tooltip.isEmpty() ? text : text + "\n" + row.tooltip);
      if (row.dimmed) item->setForeground(palette.color(QPalette::Disabled, QPalette::Text));
      items.append(item);
    }
    model_->appendRow(items);
  }
  placeholder_->setVisible(rows.isEmpty() && !placeholder_->text().isEmpty());
  if (!current.isEmpty()) selectKey(current);
  fitColumns();
}

void HparamsTable::fitColumns() {
  constexpr int kMinTextWidth = 70;
  QHeaderView* header = table_->horizontalHeader();
  table_->resizeColumnsToContents();
  int excess = -table_->viewport()->width();
  for (int c = 0; c < header->count(); ++c) excess += header->sectionSize(c);
  while (excess > 0) {
    // The widest text column gives way, down to the next widest (or the minimum).
    int widest = -1, next = kMinTextWidth;
    for (int c = 0; c < text_columns_.size() && c < header->count(); ++c) {
      if (!text_columns_[c] || header->sectionSize(c) <= kMinTextWidth) continue;
      if (widest < 0 || header->sectionSize(c) > header->sectionSize(widest)) {
        if (widest >= 0) next = std::max(next, header->sectionSize(widest));
        widest = c;
      } else {
        next = std::max(next, header->sectionSize(c));
      }
    }
    if (widest < 0) break;
    const int width = header->sectionSize(widest);
    const int narrower = std::max(next, width - excess);
    header->resizeSection(widest, narrower == width ? width - 1 : narrower);
    excess -= width - header->sectionSize(widest);
  }
}

void HparamsTable::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitColumns();
}

void HparamsTable::setFilter(const QString& text) {
  if (filter_->text() != text) filter_->setText(text);  // comes back here through textChanged
  proxy_->setFilterFixedString(text);
}

void HparamsTable::setPlaceholder(const QString& text) {
  placeholder_->setText(text);
  placeholder_->setVisible(model_->rowCount() == 0 && !text.isEmpty());
}

void HparamsTable::sortBy(int column, Qt::SortOrder order) { table_->sortByColumn(column, order); }

int HparamsTable::columnOf(const QString& title) const {
  for (int c = 0; c < model_->columnCount(); ++c) {
    if (model_->headerData(c, Qt::Horizontal).toString() == title) return c;
  }
  return -1;
}

int HparamsTable::rowCount() const { return model_->rowCount(); }

int HparamsTable::visibleRows() const { return proxy_->rowCount(); }

QString HparamsTable::cellText(int visible_row, int column) const {
  return proxy_->data(proxy_->index(visible_row, column)).toString();
}

QString HparamsTable::keyAt(int visible_row) const {
  return proxy_->data(proxy_->index(visible_row, 0), kKeyRole).toString();
}

QStringList HparamsTable::visibleKeys() const {
  QStringList keys;
  for (int row = 0; row < proxy_->rowCount(); ++row) keys << keyAt(row);
  return keys;
}

bool HparamsTable::selectKey(const QString& key) {
  for (int row = 0; row < proxy_->rowCount(); ++row) {
    if (keyAt(row) != key) continue;
    if (table_->currentIndex().row() != row) table_->selectRow(row);
    return true;
  }
  return false;
}

QString HparamsTable::currentKey() const {
  const QModelIndex current = table_->currentIndex();
  return current.isValid() ? keyAt(current.row()) : QString();
}

}  // namespace gruwb::views
