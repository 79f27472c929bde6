#pragma once
// The result of fusing the open model (Tools > Fuse, app::fuse_file): the
// sizes before and after with their difference, the fuser's report (what was
// fused, what was not and why) and the fused model's graph, shown beside the
// original that stays open in the main window.

#include <QString>
#include <QWidget>

#include "engine/tools/analyzer.h"
#include "engine/tools/fuser.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace gruwb::views {

class GraphView;

// "-12,345 (-41.2 %)", "+16 (+0.9 %)", "0": a size change as the fuse view shows it.
QString size_difference_text(qint64 before, qint64 after);

class FuseView : public QWidget {
  Q_OBJECT

 public:
  enum Row { kBytes, kDataBytes, kSubgraphs, kOps, kTensors, kArenaBytes, kRowCount };
  enum Column { kBeforeColumn, kAfterColumn, kDifferenceColumn, kColumnCount };

  explicit FuseView(QWidget* parent = nullptr);

  // `report` is the fuser's text (app::fuse_report_text); `fused` the
  // analyzer's report of the written model, drawn as a graph.
  void setResult(const QString& original_path, const QString& fused_path, int fused_cells,
                 int cells, const tools::ModelSizeFigures& before,
                 const tools::ModelSizeFigures& after, const QString& report,
                 const tools::AnalyzerReport& fused);

  QString fusedPath() const { return fused_path_; }
  QLabel* headline() const { return headline_; }
  QTableWidget* sizeTable() const { return sizes_; }
  QPlainTextEdit* reportText() const { return report_; }
  GraphView* graphView() const { return graph_; }
  QPushButton* openButton() const { return open_button_; }
  QPushButton* compareButton() const { return compare_button_; }

 signals:
  // "Open in a new window": the fused model as a document of its own.
  void openRequested(const QString& path);
  // "Compare in Experiments": the fused model as a row beside the original.
  void compareRequested(const QString& path);

 private:
  QString fused_path_;
  QLabel* headline_ = nullptr;
  QTableWidget* sizes_ = nullptr;
  QPlainTextEdit* report_ = nullptr;
  GraphView* graph_ = nullptr;
  QPushButton* open_button_ = nullptr;
  QPushButton* compare_button_ = nullptr;
};

}  // namespace gruwb::views
