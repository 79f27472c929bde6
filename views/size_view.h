#pragma once
// Where a model's bytes go: the analyzer's size figures (model, non-data,
// data, zero buffers), a bar per subgraph, the largest tensors, and the RAM
// the engine's arena needs for inference and for training (scope "fc": only
// the last Dense layer; scope "all": every weight). The arena figures come
// from the engine's own planner (Interpreter / Trainer arena_bytes_needed), so
// they are what a board has to provide, not estimates.

#include <QWidget>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/tools/analyzer.h"
#include "engine/tools/arena_figures.h"

class QCustomPlot;
class QLabel;
class QTreeWidget;

namespace gruwb::views {

// The arena figures come from engine/tools (arena_figures.h): a view shows
// them, it does not plan models itself (docs/architecture.md).
using tools::ArenaFigures;
using tools::measure_arenas;
using tools::TrainingArena;

struct TensorSize {
  int subgraph = 0;
  int tensor = 0;
  std::string name;
  std::string shape;
  std::string type;
  uint64_t bytes = 0;  // stored (constant) bytes in the file
};

// The `count` tensors with the most stored bytes, largest first (ties: model order).
std::vector<TensorSize> largest_tensors(const tools::AnalyzerReport& report, size_t count);

class SizeView : public QWidget {
  Q_OBJECT

 public:
  static constexpr size_t kTopTensors = 20;

  explicit SizeView(QWidget* parent = nullptr);

  // `model` is only read during the call.
  void setModel(const Model& model, const tools::AnalyzerReport& report);
  void clear();

  const ArenaFigures& arenas() const { return arenas_; }
  QCustomPlot* subgraphBars() const { return bars_; }
  QTreeWidget* arenaTable() const { return arena_table_; }
  QTreeWidget* tensorTable() const { return tensor_table_; }
  QLabel* summary() const { return summary_; }

 signals:
  void tensorActivated(int subgraph, int tensor);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // Arena: the bytes whole, the row names and notes wrapped in the rest. Largest tensors: the
  // name up to 45% of the width, the other columns whole (they scroll sideways when narrow).
  void fitColumns();
  void showSubgraphBars(const tools::AnalyzerReport& report);
  void showArenas();

  ArenaFigures arenas_;
  QLabel* summary_ = nullptr;
  QCustomPlot* bars_ = nullptr;
  QTreeWidget* arena_table_ = nullptr;
  QTreeWidget* tensor_table_ = nullptr;
};

}  // namespace gruwb::views
