#pragma once
// One tensor or op in detail: name, shape, type, quantization, buffer, who writes
// and reads it, its stored values in a lazily filled table, their statistics
// (min/max/mean/std/sparsity, Netron's metrics) and a histogram, and saving
// the values as .npy. Activation tensors have no stored values; the view says
// so instead of showing an empty table.

#include <QAbstractTableModel>
#include <QWidget>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/tools/analyzer.h"

class QCustomPlot;
class QLabel;
class QPushButton;
class QTableView;
class QTreeWidget;

namespace gruwb::views {

// Statistics of a tensor's stored values (raw stored numbers; quantized
// tensors are not dequantized). Every figure the inspector shows comes from here.
struct TensorStats {
  bool valid = false;  // false: no stored data, or a type without numbers
  uint64_t count = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double std = 0;          // population standard deviation
  double sparsity = 0;     // fraction of values equal to zero
  uint64_t nonfinite = 0;  // NaN/Inf values, left out of the other figures
  double bin_start = 0;    // histogram over [min, max] in equal bins
  double bin_width = 0;
  std::vector<uint64_t> histogram;
};

// Whether tensor values of `type` can be shown and counted.
bool tensor_type_is_numeric(TensorType type);
// Value `i` (flat, C order) of the tensor's stored data.
double tensor_value(const TensorView& tensor, uint64_t i);
TensorStats tensor_stats(const TensorView& tensor, int bins = 40);

// Writes the stored values of `tensor` to `path` as .npy (atomically).
bool save_tensor_npy(const TensorView& tensor, const std::string& path, std::string* error);

// The values table: last dimension across, all leading dimensions down
// (row headers carry their indices). Values are decoded when painted, so
// large tensors cost nothing up front.
class TensorValuesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  void setTensor(const TensorView* tensor);  // null: empty
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  TensorView tensor_;
  bool has_tensor_ = false;
  int64_t rows_ = 0;
  int64_t columns_ = 0;
};

class TensorInspector : public QWidget {
  Q_OBJECT

 public:
  explicit TensorInspector(QWidget* parent = nullptr);

  // `model` must outlive the inspector or the next setModel()/clear().
  void setModel(const Model* model, const tools::AnalyzerReport& report);
  void clear();
  // Shows tensor `tensor` of subgraph `subgraph`; false when out of range.
  bool showTensor(int subgraph, int tensor);

  // Shows op `op` of subgraph `subgraph`: its decoded attributes (builtin options or a custom
  // op's FlexBuffer map), called subgraphs, MACs and its inputs by role; a row's tensor opens
  // on double-click. False when out of range.
  bool showOp(int subgraph, int op);

  int subgraph() const { return subgraph_; }
  int op() const { return op_; }  // the op shown, or -1 (a tensor or nothing)
  int tensor() const { return tensor_; }
  const TensorStats& stats() const { return stats_; }
  QTreeWidget* properties() const { return properties_; }
  QTableView* valuesTable() const { return table_; }
  QCustomPlot* histogram() const { return histogram_; }
  QPushButton* saveButton() const { return save_; }
  // The properties row named `name` ("Shape", "Type", ...), or "".
  QString property(const QString& name) const;
  bool saveNpy(const QString& path, QString* error) const;

 signals:
  // A producer/consumer row was activated: show that op (e.g. in the graph).
  void opActivated(int subgraph, int op);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // Names as wide as the longest (at most 45% of the table), values in the rest, wrapped.
  void fitPropertyColumns();
  static QString nothingSelected();  // the title while nothing is shown
  void addProperty(const QString& name, const QString& value);
  void showHistogram();
  void saveWithDialog();

  const Model* model_ = nullptr;
  tools::AnalyzerReport report_;
  int subgraph_ = -1;
  int tensor_ = -1;
  int op_ = -1;
  static constexpr int kTensorRole = Qt::UserRole + 1;
  TensorStats stats_;
  QLabel* title_ = nullptr;
  QTreeWidget* properties_ = nullptr;
  QLabel* stats_label_ = nullptr;
  QTableView* table_ = nullptr;
  TensorValuesModel* values_ = nullptr;
  QCustomPlot* histogram_ = nullptr;
  QPushButton* save_ = nullptr;
  QWidget* values_page_ = nullptr;
  QLabel* no_values_ = nullptr;
};

}  // namespace gruwb::views
