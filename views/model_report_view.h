#pragma once
// The analyzer report of one model: a tree (model summary, then each subgraph
// with its operators and tensors) beside the analyzer's text report. The view
// only lays out figures; every number comes from gruwb::tools::analyze_model.

#include <QWidget>

#include "engine/tools/analyzer.h"

class QPlainTextEdit;
class QSplitter;
class QTreeWidget;
class QTreeWidgetItem;

namespace gruwb::views {

class ModelReportView : public QWidget {
  Q_OBJECT

 public:
  // What a tree row stands for (stored under kKindRole), so tests and later
  // views (graph, tensor inspector) can map a row back to the model.
  enum class RowKind { kSummary, kSummaryRow, kSubgraph, kOperators, kTensors, kOperator, kTensor };
  static constexpr int kKindRole = Qt::UserRole;          // RowKind as int
  static constexpr int kSubgraphRole = Qt::UserRole + 1;  // subgraph index
  static constexpr int kIndexRole = Qt::UserRole + 2;     // op or tensor index
  static constexpr int kRunnableRole = Qt::UserRole + 3;  // op rows: engine can run it

  enum Column { kItemColumn, kValueColumn, kCostColumn, kDetailsColumn, kColumnCount };
  // Tensor groups start expanded when the whole model has at most this many tensors.
  static constexpr size_t kExpandTensorRows = 40;
  // The text report sits beside the tree from this width on, below it when narrower.
  static constexpr int kSideBySideWidth = 640;

  explicit ModelReportView(QWidget* parent = nullptr);

  // Replaces whatever was shown with `report` and its text form.
  void setReport(const tools::AnalyzerReport& report);
  void clear();

  QTreeWidget* tree() const { return tree_; }
  QPlainTextEdit* textView() const { return text_; }
  QSplitter* splitter() const { return splitter_; }

  // The "Model" summary row, or null when nothing is shown.
  QTreeWidgetItem* summaryItem() const;
  // The top-level row of subgraph `index`, or null.
  QTreeWidgetItem* subgraphItem(int index) const;
  int subgraphCount() const;
  // Makes the op or tensor row current (without emitting the signals below);
  // false when the report has no such row.
  bool selectRow(RowKind kind, int subgraph, int index);

 signals:
  // The user made an op or tensor row current.
  void tensorSelected(int subgraph, int tensor);
  void opSelected(int subgraph, int op);

 protected:
  // Narrower than kSideBySideWidth (a left dock on a laptop), the text report goes below the
  // tree, so the tree's columns get the dock's whole width.
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void addSummary(const tools::AnalyzerReport& report);
  void addSubgraph(const tools::AnalyzerReport& report, const tools::SubgraphReport& subgraph,
                   bool expand_tensors);
  void showTextLineFor(QTreeWidgetItem* item);
  // Item and Value as wide as their text but together within the tree's width (Item at most
  // half of it); what does not fit is elided, the full text on hover.
  void fitColumns();

  QSplitter* splitter_ = nullptr;
  QTreeWidget* tree_ = nullptr;
  QPlainTextEdit* text_ = nullptr;
  bool selecting_ = false;
};

}  // namespace gruwb::views
