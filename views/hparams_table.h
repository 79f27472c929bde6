#pragma once
// A table of runs as TensorBoard's HParams dashboard lists them: one row per run, its settings
// and figures in columns, sorted by clicking a header (numbers as numbers, "-" below every
// figure), a filter over every column, rows keyed by their run. Columns fit their contents;
// when they do not fit the width, text columns (run, model) give way first, elided with the
// full text on hover, so the figures stay whole. The sweep window and the
// HParams dock show their tables with it; the rows arrive as plain text (app/core's
// hparams_table_row, sweep_table_row), the table computes nothing itself.

#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTableView;

namespace gruwb::views {

class HparamsTable : public QWidget {
  Q_OBJECT

 public:
  struct Row {
    QString key;  // the run (unique)
    QStringList cells;
    QString tooltip;      // on every cell; "" = the row's first cell
    bool dimmed = false;  // greyed (a run hidden in the Curves dock)
  };

  explicit HparamsTable(QWidget* parent = nullptr);

  // Replaces the rows; the sort column, the filter and the current run stay.
  void setRows(const QStringList& header, const QVector<Row>& rows);
  // Rows where any column contains `text` (case-insensitive).
  void setFilter(const QString& text);
  void setPlaceholder(const QString& text);  // shown while there are no rows
  void sortBy(int column, Qt::SortOrder order);
  int columnOf(const QString& title) const;  // -1 when absent

  int rowCount() const;                                 // all rows
  int visibleRows() const;                              // as filtered
  QString cellText(int visible_row, int column) const;  // as sorted and filtered
  QString keyAt(int visible_row) const;
  QStringList visibleKeys() const;  // in the order shown
  // Selects the run's row; false when it is filtered out or absent.
  bool selectKey(const QString& key);
  QString currentKey() const;
  // Sizes the columns to their contents, then narrows the widest text columns until the table
  // fits its width (never below a minimum); the user may resize them after.
  void fitColumns();

  QTableView* table() const { return table_; }
  QLineEdit* filterEdit() const { return filter_; }
  // The row above the table (the filter first): owners add their buttons here.
  QHBoxLayout* toolbar() const { return toolbar_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 signals:
  void currentKeyChanged(const QString& key);
  void keyActivated(const QString& key);  // double-click or Enter on a row

 private:
  QHBoxLayout* toolbar_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QLabel* placeholder_ = nullptr;
  QTableView* table_ = nullptr;
  QStandardItemModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QVector<bool> text_columns_;  // a column holding other than numbers and "-"
};

}  // namespace gruwb::views
