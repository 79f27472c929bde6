#pragma once
// The model graph: one subgraph at a time, ops as nodes and activation
// tensors as edges, laid out top-down by layout_graph(). A node shows its op,
// fused activation, output shape and its constant weights as badges; WHILE,
// IF and CALL_ONCE nodes open their subgraphs on double-click, and the
// breadcrumb above the drawing leads back. Find (Ctrl+F in the main window)
// centres and selects matching nodes; the wheel zooms, dragging pans, and the
// drawing exports to PNG or SVG.

#include <QGraphicsView>
#include <QWidget>
#include <vector>

#include "engine/tools/analyzer.h"
#include "views/graph_layout.h"
#include "views/graph_model.h"

class QGraphicsScene;
class QHBoxLayout;
class QLabel;
class QLineEdit;

namespace gruwb::views {

// QGraphicsView with wheel zoom around the cursor and drag-to-pan.
class GraphCanvas : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphCanvas(QWidget* parent = nullptr);
  double zoom() const { return transform().m11(); }
  void setZoom(double zoom);
  static constexpr double kMinZoom = 0.02;
  static constexpr double kMaxZoom = 8.0;

 protected:
  void wheelEvent(QWheelEvent* event) override;
};

class GraphView : public QWidget {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Shows subgraph 0 of `report` and resets the breadcrumb.
  void setReport(const tools::AnalyzerReport& report);
  void clear();

  // Opens subgraph `index` below the current one in the breadcrumb (what a
  // double-click on a WHILE node does). False when out of range.
  bool openSubgraph(int index);
  // Goes back to breadcrumb entry `depth` (0 = the main subgraph).
  void goBackTo(int depth);
  int currentSubgraph() const;
  QStringList breadcrumb() const;  // subgraph names, outermost first
  QList<int> breadcrumbIndices() const;

  // What a double-click on `node` does; false when the node calls no subgraph.
  bool activateNode(int node);

  // Selects and centres the next node matching `text` (op name, "#index",
  // tensor name); returns the number of matches (0: nothing selected).
  // Below kReadableZoom it first zooms to actual size.
  int find(const QString& text);
  static constexpr double kReadableZoom = 0.75;
  void focusFind();
  // Fits the whole graph in the view, but never below the zoom at which node labels are
  // kMinLabelPixels high: a taller graph (a WHILE body, an unrolled RNN) is fitted to its
  // width at a readable zoom (at most actual size) with its top in view, and scrolls.
  void fitToView();
  static constexpr double kMinLabelPixels = 8.0;
  // The zoom at which a node label's line is kMinLabelPixels high.
  double minimumReadableZoom() const;
  // Height in pixels of one node label line at the current zoom.
  double labelPixelHeight() const;
  // Writes the whole drawing to `path`: .svg as vector graphics, anything
  // else as a PNG at 2x (reduced for huge graphs). False with `error` set.
  bool exportImage(const QString& path, QString* error) const;

  // Draws a note on the op's node (e.g. "GRU cell: fuse to one GRU op"), for
  // the RNN detector's findings; cleared when the report changes.
  void setOpNote(int subgraph, int op, const QString& note);

  // Weight checkboxes: constant float32 badges (what the trainer can train
  // by name) carry a tick box; the ticked names form the experiment panel's
  // custom stage. Names, since a WHILE body's weights live in other subgraphs.
  bool isTrainableWeight(int tensor) const;  // tensor of the current subgraph
  QString tensorName(int tensor) const;      // of the current subgraph
  QStringList trainableWeightNames() const;  // all subgraphs, model order
  bool isWeightChecked(int tensor) const;
  // What clicking a badge's tick box does; false when `tensor` is no weight.
  bool setWeightChecked(int tensor, bool checked);
  QStringList checkedWeights() const { return checked_weights_; }
  void setCheckedWeights(const QStringList& names);  // no signal

  const GraphModel& graph() const { return graph_; }
  const GraphLayout& layout() const { return layout_; }
  int nodeCount() const { return static_cast<int>(graph_.nodes.size()); }
  int selectedNode() const;
  void selectNode(int node, bool center = true);
  QRectF nodeRect(int node) const;  // scene coordinates
  GraphCanvas* canvas() const { return canvas_; }
  QGraphicsScene* scene() const { return scene_; }
  QLineEdit* findField() const { return find_field_; }

  // Called by the scene items.
  void itemActivated(int node);
  void noteClicked(int node);  // the note strip of an op node: noteActivated()
  void tensorClicked(int tensor);

 signals:
  void tensorSelected(int subgraph, int tensor);
  void opSelected(int subgraph, int op);
  void subgraphShown(int subgraph);
  // The note of an op (setOpNote) was clicked: the note offers an action.
  void noteActivated(int subgraph, int op);
  // The user ticked or unticked a weight badge.
  void checkedWeightsChanged(const QStringList& names);

 private:
  void rebuildScene();
  void rebuildBreadcrumb();
  // fitToView() with the zoom capped at `max_zoom` (a graph opens at most at actual size).
  void fit(double max_zoom);
  void onSelectionChanged();

  tools::AnalyzerReport report_;
  bool has_report_ = false;
  std::vector<int> stack_;  // breadcrumb: subgraph indices
  GraphModel graph_;
  GraphLayout layout_;
  std::vector<class GraphNodeItem*> node_items_;
  std::vector<std::vector<std::pair<int, QString>>> notes_;  // per subgraph: (op, note)
  QStringList checked_weights_;
  QString last_find_;
  int find_cursor_ = -1;

  GraphCanvas* canvas_ = nullptr;
  QGraphicsScene* scene_ = nullptr;
  QHBoxLayout* crumbs_ = nullptr;
  QLineEdit* find_field_ = nullptr;
  QLabel* find_status_ = nullptr;
};

}  // namespace gruwb::views
