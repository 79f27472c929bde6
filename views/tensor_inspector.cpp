#include "views/tensor_inspector.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"
#include "views/curve_plot.h"
#include "views/graph_model.h"
#include "views/wrapped_text_delegate.h"

namespace gruwb::views {
namespace {

template <typename T>
T load(const uint8_t* data, uint64_t i) {
  T value;
  std::memcpy(&value, data + i * sizeof(T), sizeof(T));
  return value;
}

QString formatValue(double value) { return QString::number(value, 'g', 7); }

QString bytesText(uint64_t bytes) {
  if (bytes < 10 * 1024) return QString("%1 bytes").arg(bytes);
  return QString("%1 bytes (%2 KiB)").arg(bytes).arg(bytes / 1024.0, 0, 'f', 1);
}

}  // namespace

bool tensor_type_is_numeric(TensorType type) {
  switch (type) {
    case TensorType::FLOAT32:
    case TensorType::FLOAT64:
    case TensorType::INT8:
    case TensorType::UINT8:
    case TensorType::INT16:
    case TensorType::INT32:
    case TensorType::INT64:
    case TensorType::BOOL: return true;
    default: return false;
  }
}

double tensor_value(const TensorView& tensor, uint64_t i) {
  const uint8_t* d = tensor.data.data;
  switch (tensor.type) {
    case TensorType::FLOAT32: return load<float>(d, i);
    case TensorType::FLOAT64: return load<double>(d, i);
    case TensorType::INT8: return load<int8_t>(d, i);
    case TensorType::UINT8: return load<uint8_t>(d, i);
    case TensorType::INT16: return load<int16_t>(d, i);
    case TensorType::INT32: return load<int32_t>(d, i);
    case TensorType::INT64: return static_cast<double>(load<int64_t>(d, i));
    case TensorType::BOOL: return d[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

TensorStats tensor_stats(const TensorView& tensor, int bins) {
  TensorStats stats;
  if (!tensor.is_constant() || !tensor_type_is_numeric(tensor.type)) return stats;
  const uint64_t count = tensor.element_count();
  // Two passes (mean, then squared deviations) for a std that does not lose
  // precision on large weights with a non-zero mean.
  double sum = 0;
  uint64_t finite = 0;
  uint64_t zeros = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const double v = tensor_value(tensor, i);
    if (!std::isfinite(v)) {
      ++stats.nonfinite;
      continue;
    }
    if (finite == 0 || v < stats.min) stats.min = v;
    if (finite == 0 || v > stats.max) stats.max = v;
    sum += v;
    zeros += v == 0 ? 1 : 0;
    ++finite;
  }
  stats.valid = true;
  stats.count = count;
  if (finite == 0) return stats;
  stats.mean = sum / static_cast<double>(finite);
  stats.sparsity = static_cast<double>(zeros) / static_cast<double>(finite);
  double squares = 0;
  bins = std::max(bins, 1);
  stats.histogram.assign(bins, 0);
  stats.bin_start = stats.min;
  stats.bin_width = stats.max > stats.min ? (stats.max - stats.min) / bins : 1.0;
  for (uint64_t i = 0; i < count; ++i) {
    const double v = tensor_value(tensor, i);
    if (!std::isfinite(v)) continue;
    squares += (v - stats.mean) * (v - stats.mean);
    const int bin = static_cast<int>((v - stats.bin_start) / stats.bin_width);
    ++stats.histogram[std::clamp(bin, 0, bins - 1)];
  }
  stats.std = std::sqrt(squares / static_cast<double>(finite));
  return stats;
}

bool save_tensor_npy(const TensorView& tensor, const std::string& path, std::string* error) {
  if (!tensor.is_constant()) {
    *error = "tensor " + std::to_string(tensor.index) + " '" + tensor.name +
             "' has no stored values (it is computed at run time)";
    return false;
  }
  tools::NpyArray array;
  array.dtype = tools::npy_dtype_for(tensor.type);
  if (array.dtype.empty() || tools::npy_dtype_size(array.dtype) == 0) {
    *error = "tensor " + std::to_string(tensor.index) + " '" + tensor.name + "': type " +
             tensor_type_name(tensor.type) + " has no .npy form";
    return false;
  }
  for (int32_t d : tensor.shape) array.shape.push_back(d);
  array.data.assign(tensor.data.begin(), tensor.data.end());
  return tools::write_npy(path, array, error);
}

// ---------------------------------------------------------------------------

void TensorValuesModel::setTensor(const TensorView* tensor) {
  beginResetModel();
  has_tensor_ = tensor && tensor->is_constant() && tensor_type_is_numeric(tensor->type);
  rows_ = columns_ = 0;
  if (has_tensor_) {
    tensor_ = *tensor;
    const uint64_t count = tensor_.element_count();
    columns_ =
        tensor_.shape.size >= 1 ? std::max<int32_t>(tensor_.shape[tensor_.shape.size - 1], 1) : 1;
    if (tensor_.shape.size < 2) columns_ = tensor_.shape.size == 1 && count <= 16 ? columns_ : 1;
    rows_ = static_cast<int64_t>(count) / columns_;
  }
  endResetModel();
}

int TensorValuesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(std::min<int64_t>(rows_, INT32_MAX));
}

int TensorValuesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(std::min<int64_t>(columns_, INT32_MAX));
}

QVariant TensorValuesModel::data(const QModelIndex& index, int role) const {
  if (!has_tensor_ || !index.isValid()) return {};
  const uint64_t flat = static_cast<uint64_t>(index.row()) * columns_ + index.column();
  if (role == Qt::DisplayRole) return formatValue(tensor_value(tensor_, flat));
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant TensorValuesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || !has_tensor_) return {};
  if (orientation == Qt::Horizontal) return section;
  // Row `section` covers the leading dimensions: show their indices.
  const int rank = static_cast<int>(tensor_.shape.size);
  if (rank < 2 || columns_ == 1) return section;
  QStringList parts;
  int64_t rest = section;
  for (int d = rank - 2; d >= 0; --d) {
    const int64_t extent = std::max<int32_t>(tensor_.shape[d], 1);
    parts.prepend(QString::number(rest % extent));
    rest /= extent;
  }
  return "[" + parts.join(",") + "]";
}

// ---------------------------------------------------------------------------

QString TensorInspector::nothingSelected() {
  return tr(
      "Select a tensor or an op: an edge, weight badge or node in the graph, or a row in "
      "the model tree.");
}

TensorInspector::TensorInspector(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(nothingSelected());
  title_->setWordWrap(true);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  properties_ = new QTreeWidget;
  properties_->setColumnCount(2);
  properties_->setHeaderLabels({tr("Property"), tr("Value")});
  properties_->setRootIsDecorated(false);
  // Whole values in a narrow dock: the value column takes the width left and its text wraps.
  new WrappedTextDelegate(properties_);
  properties_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  properties_->header()->setStretchLastSection(true);
  properties_->header()->setMinimumSectionSize(24);
  properties_->viewport()->installEventFilter(this);
  connect(properties_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    const QVariant op = item->data(1, Qt::UserRole);
    if (op.isValid()) emit opActivated(subgraph_, op.toInt());
    // An op's input/output row leads to that tensor.
    const QVariant tensor = item->data(1, kTensorRole);
    if (tensor.isValid()) showTensor(subgraph_, tensor.toInt());
  });

  stats_label_ = new QLabel;
  stats_label_->setWordWrap(true);
  stats_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  values_ = new TensorValuesModel(this);
  table_ = new QTableView;
  table_->setModel(values_);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 4);
  table_->horizontalHeader()->setDefaultSectionSize(
      table_->fontMetrics().horizontalAdvance("-0.0000000e+00") + 8);

  histogram_ = new QCustomPlot;
  connect(histogram_, &QCustomPlot::beforeReplot, histogram_,
          [plot = histogram_] { space_ticks(plot); });
  histogram_->setMinimumHeight(120);
  histogram_->xAxis->setLabel(tr("value"));
  histogram_->yAxis->setLabel(tr("count"));

  save_ = new QPushButton(tr("Save as .npy…"));
  save_->setEnabled(false);
  connect(save_, &QPushButton::clicked, this, &TensorInspector::saveWithDialog);

  no_values_ = new QLabel;
  no_values_->setWordWrap(true);
  no_values_->setEnabled(false);

  auto* values_split = new QSplitter(Qt::Vertical);
  values_split->addWidget(table_);
  values_split->addWidget(histogram_);
  values_split->setStretchFactor(0, 3);
  values_split->setStretchFactor(1, 2);
  values_page_ = values_split;

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(properties_);
  split->addWidget(values_page_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(title_);
  layout->addWidget(split, 1);
  layout->addWidget(no_values_);
  layout->addWidget(stats_label_);
  layout->addWidget(save_, 0, Qt::AlignRight);
  clear();
}

void TensorInspector::setModel(const Model* model, const tools::AnalyzerReport& report) {
  model_ = model;
  report_ = report;
  subgraph_ = tensor_ = -1;
  clear();
}

void TensorInspector::clear() {
  subgraph_ = tensor_ = op_ = -1;
  stats_ = TensorStats();
  properties_->clear();
  values_->setTensor(nullptr);
  histogram_->clearPlottables();
  histogram_->replot();
  stats_label_->clear();
  no_values_->hide();
  values_page_->setVisible(false);
  save_->setEnabled(false);
  title_->setText(nothingSelected());
}

void TensorInspector::addProperty(const QString& name, const QString& value) {
  auto* item = new QTreeWidgetItem(properties_, {name, value});
  item->setToolTip(1, value);
}

bool TensorInspector::eventFilter(QObject* watched, QEvent* event) {
  if (watched == properties_->viewport() && event->type() == QEvent::Resize) fitPropertyColumns();
  return QWidget::eventFilter(watched, event);
}

void TensorInspector::fitPropertyColumns() {
  const int available = properties_->viewport()->width();
  int names = properties_->header()->sectionSizeHint(0);
  for (int i = 0; i < properties_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = properties_->topLevelItem(i);
    names = std::max(names, properties_->fontMetrics().horizontalAdvance(item->text(0)) + 12);
    item->setToolTip(0, item->text(0));  // a name cut at 45% of the width, whole on hover
  }
  properties_->setColumnWidth(0, std::min(names, available * 45 / 100));
}

QString TensorInspector::property(const QString& name) const {
  for (int i = 0; i < properties_->topLevelItemCount(); ++i) {
    if (properties_->topLevelItem(i)->text(0) == name) return properties_->topLevelItem(i)->text(1);
  }
  return {};
}

bool TensorInspector::showTensor(int subgraph, int tensor) {
  if (!model_ || subgraph < 0 || subgraph >= static_cast<int>(report_.subgraphs.size()) ||
      subgraph >= model_->subgraph_count()) {
    return false;
  }
  const tools::SubgraphReport& sg = report_.subgraphs[subgraph];
  if (tensor < 0 || tensor >= static_cast<int>(sg.tensors.size())) return false;
  clear();
  subgraph_ = subgraph;
  tensor_ = tensor;
  const tools::TensorReport& info = sg.tensors[tensor];
  const TensorView view = model_->subgraph(subgraph).tensor(tensor);

  title_->setText(QString("<b>T#%1</b> %2 <span style='color:#666'>(subgraph %3)</span>")
                      .arg(tensor)
                      .arg(QString::fromStdString(info.name).toHtmlEscaped())
                      .arg(subgraph));
  QString kind = info.is_variable   ? tr("variable (state)")
                 : info.is_constant ? tr("constant")
                                    : tr("activation");
  for (int32_t t : sg.inputs) kind += t == tensor ? tr(", subgraph input") : QString();
  for (int32_t t : sg.outputs) kind += t == tensor ? tr(", subgraph output") : QString();
  addProperty(tr("Kind"), kind);
  addProperty(tr("Shape"), QString::fromStdString(shape_text(info.shape)));
  if (!info.shape_signature.empty()) {
    addProperty(tr("Signature"), QString::fromStdString(shape_text(info.shape_signature)));
  }
  addProperty(tr("Type"), QString::fromStdString(info.type));
  addProperty(tr("Elements"), QString::number(info.elements));
  addProperty(tr("Quantization"),
              info.quantization.empty() ? tr("none") : QString::fromStdString(info.quantization));
  uint64_t storage = 0;
  tensor_storage_bytes(view.type, info.elements, &storage);
  addProperty(tr("Buffer"),
              info.is_constant
                  ? tr("#%1, %2").arg(info.buffer).arg(bytesText(info.data_bytes))
                  : tr("#%1, no data (%2 at run time)").arg(info.buffer).arg(bytesText(storage)));
  for (const tools::OpReport& op : sg.ops) {
    const auto writes = std::find(op.outputs.begin(), op.outputs.end(), tensor);
    const auto reads = std::find(op.inputs.begin(), op.inputs.end(), tensor);
    if (writes == op.outputs.end() && reads == op.inputs.end()) continue;
    const QString name = writes != op.outputs.end() ? tr("Producer") : tr("Consumer");
    auto* item = new QTreeWidgetItem(
        properties_,
        {name, QString("Op#%1 %2").arg(op.index).arg(QString::fromStdString(op.name))});
    item->setData(1, Qt::UserRole, op.index);
    item->setToolTip(1, tr("Double-click to show this op in the graph"));
  }

  stats_ = tensor_stats(view);
  if (stats_.valid) {
    values_->setTensor(&view);
    values_page_->setVisible(true);
    stats_label_->setText(
        tr("min %1   max %2   mean %3   std %4   sparsity %5%")
            .arg(formatValue(stats_.min), formatValue(stats_.max), formatValue(stats_.mean),
                 formatValue(stats_.std))
            .arg(stats_.sparsity * 100, 0, 'f', 1) +
        (stats_.nonfinite ? tr("   non-finite %1").arg(stats_.nonfinite) : QString()));
    showHistogram();
    save_->setEnabled(!tools::npy_dtype_for(view.type).empty());
  } else {
    no_values_->setText(
        info.is_constant
            ? tr("Values of type %1 are not shown.").arg(QString::fromStdString(info.type))
            : tr("No stored values: this tensor is computed when the model runs."));
    no_values_->show();
  }
  fitPropertyColumns();
  return true;
}

bool TensorInspector::showOp(int subgraph, int op) {
  if (subgraph < 0 || subgraph >= static_cast<int>(report_.subgraphs.size())) return false;
  const tools::SubgraphReport& sg = report_.subgraphs[subgraph];
  if (op < 0 || op >= static_cast<int>(sg.ops.size())) return false;
  clear();
  subgraph_ = subgraph;
  op_ = op;
  const tools::OpReport& info = sg.ops[op];
  title_->setText(QString("<b>Op#%1</b> %2 <span style='color:#666'>(subgraph %3)</span>")
                      .arg(op)
                      .arg(QString::fromStdString(info.name).toHtmlEscaped())
                      .arg(subgraph));
  addProperty(tr("Version"), QString::number(info.version));
  if (!info.options_type.empty()) {
    addProperty(tr("Options"), QString::fromStdString(info.options_type));
  }
  // Every decoded attribute, by its schema name (the analyzer's option_values: the same
  // list `gruwb inspect --json` prints).
  for (const tools::OptionValue& value : info.option_values) {
    addProperty(QString::fromStdString(value.key), QString::fromStdString(value.value));
  }
  if (info.option_values.empty() && info.custom_options_bytes > 0) {
    addProperty(tr("Custom options"),
                tr("%1 bytes, not a FlexBuffer map").arg(info.custom_options_bytes));
  }
  for (int32_t called : info.called_subgraphs) {
    const bool known = called >= 0 && called < static_cast<int32_t>(report_.subgraphs.size());
    addProperty(tr("Calls"), known
                                 ? tr("subgraph %1 %2")
                                       .arg(called)
                                       .arg(QString::fromStdString(report_.subgraphs[called].name))
                                 : tr("subgraph %1 (missing)").arg(called));
  }
  // The count in the column (docks are narrow), how it was counted on hover.
  auto* macs = new QTreeWidgetItem(properties_, {tr("MACs"), QString::number(info.macs)});
  macs->setToolTip(1, QString::fromStdString(info.macs_formula));
  addProperty(tr("Engine"), info.engine_supported ? tr("has a kernel") : tr("no kernel"));
  const auto add_tensor_row = [&](const QString& role, int32_t t) {
    QString text = tr("omitted");
    if (t >= 0 && t < static_cast<int32_t>(sg.tensors.size())) {
      const tools::TensorReport& tensor = sg.tensors[t];
      text = QString("T#%1 %2 %3")
                 .arg(t)
                 .arg(QString::fromStdString(shape_text(tensor.shape)),
                      QString::fromStdString(tensor.name));
    }
    auto* item = new QTreeWidgetItem(properties_, {role, text});
    item->setToolTip(1, text);
    if (t >= 0) item->setData(1, kTensorRole, t);
  };
  for (size_t i = 0; i < info.inputs.size(); ++i) {
    add_tensor_row(tr("in %1").arg(QString::fromStdString(op_input_role(info.name, i))),
                   info.inputs[i]);
  }
  for (size_t i = 0; i < info.outputs.size(); ++i) {
    add_tensor_row(tr("out %1").arg(i), info.outputs[i]);
  }
  fitPropertyColumns();
  return true;
}

void TensorInspector::showHistogram() {
  histogram_->clearPlottables();
  auto* bars = new QCPBars(histogram_->xAxis, histogram_->yAxis);
  QVector<double> keys, counts;
  for (size_t i = 0; i < stats_.histogram.size(); ++i) {
    keys << stats_.bin_start + (i + 0.5) * stats_.bin_width;
    counts << static_cast<double>(stats_.histogram[i]);
  }
  bars->setData(keys, counts, true);
  bars->setWidth(stats_.bin_width * 0.9);
  bars->setPen(Qt::NoPen);
  bars->setBrush(QColor(0x33, 0x55, 0x88));
  histogram_->rescaleAxes();
  histogram_->xAxis->setRange(stats_.bin_start - stats_.bin_width,
                              stats_.bin_start + (stats_.histogram.size() + 1) * stats_.bin_width);
  histogram_->yAxis->setRangeLower(0);
  histogram_->replot();
}

bool TensorInspector::saveNpy(const QString& path, QString* error) const {
  if (!model_ || tensor_ < 0) {
    *error = tr("no tensor selected");
    return false;
  }
  std::string message;
  const TensorView view = model_->subgraph(subgraph_).tensor(tensor_);
  if (!save_tensor_npy(view, QFile::encodeName(path).toStdString(), &message)) {
    *error = QString::fromStdString(message);
    return false;
  }
  return true;
}

void TensorInspector::saveWithDialog() {
  if (!model_ || tensor_ < 0) return;
  QSettings settings;
  QString name = QString::fromStdString(report_.subgraphs[subgraph_].tensors[tensor_].name);
  name.replace(QRegularExpression("[^A-Za-z0-9_.-]+"), "_");
  const QString start =
      settings.value("tensorInspector/directory").toString() + "/" + name + ".npy";
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save Tensor"), start, tr("NumPy arrays (*.npy)"));
  if (path.isEmpty()) return;
  settings.setValue("tensorInspector/directory", QFileInfo(path).absolutePath());
  QString error;
  if (!saveNpy(path, &error)) stats_label_->setText(error);
}

}  // namespace gruwb::views
