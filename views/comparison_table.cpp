#include "views/comparison_table.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QJsonArray>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <iterator>

namespace gruwb::views {
namespace {

QString figure(double value, int decimals = 3) { return QString::number(value, 'f', decimals); }

QString withStd(double mean, double std, int seeds) {
  return seeds > 1 ? QStringLiteral("%1 \u00b1 %2").arg(figure(mean), figure(std)) : figure(mean);
}

QString delta(double d) {
  if (std::isnan(d)) return QStringLiteral("\u2013");
  return (d >= 0 ? QStringLiteral("+") : QString()) + figure(d);
}

QString bytesText(qint64 bytes) {
  if (bytes <= 0) return QStringLiteral("\u2013");
  if (bytes < 1024) return QStringLiteral("%1 B").arg(bytes);
  return QStringLiteral("%1 KiB").arg(bytes / 1024.0, 0, 'f', 1);
}

QTableWidgetItem* cell(const QString& text, bool number) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

const char* const kStageHeaders[] = {"Experiment",      "Stage",           "Accuracy",
                                     "Cross entropy",   "\u0394 accuracy", "Trainable params",
                                     "Training memory", "Deployed model"};
// In ComparisonTable::CellColumn order.
const char* const kCellHeaders[] = {
    "Cell / model",   "Model used", "Accuracy",      "Parameters", "Fused model", "WHILE model",
    "Unrolled model", "Latency",    "Board latency", "Arena",      "Note"};
static_assert(std::size(kCellHeaders) == ComparisonTable::kCellColumnCount);

}  // namespace

// Against the previous evaluated stage of the same experiment; none for a stage without results.
QVector<double> accuracy_deltas(const QVector<StageResult>& rows) {
  QVector<double> deltas;
  for (int i = 0; i < rows.size(); ++i) {
    int previous = -1;
    for (int j = i - 1; j >= 0 && rows[i].seeds > 0; --j) {
      if (rows[j].experiment == rows[i].experiment && rows[j].seeds > 0) {
        previous = j;
        break;
      }
    }
    deltas.append(previous < 0 ? std::nan("") : rows[i].accuracy - rows[previous].accuracy);
  }
  return deltas;
}

// ---- ConfusionMatrixView -----------------------------------------------------

ConfusionMatrixView::ConfusionMatrixView(QWidget* parent) : QWidget(parent) {
  setObjectName("confusionMatrix");
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ConfusionMatrixView::setMatrix(const QVector<QVector<qint64>>& confusion,
                                    const QStringList& class_names) {
  confusion_ = confusion;
  class_names_ = class_names;
  updateGeometry();
  update();
}

QString ConfusionMatrixView::className(int i) const {
  return i < class_names_.size() ? class_names_[i] : QString::number(i);
}

QSize ConfusionMatrixView::sizeHint() const { return QSize(320, 300); }
QSize ConfusionMatrixView::minimumSizeHint() const { return QSize(160, 140); }

ConfusionMatrixView::Layout ConfusionMatrixView::layout() const {
  Layout l;
  const int n = confusion_.size();
  const QFontMetrics metrics(font());
  int name_width = 0;
  for (int i = 0; i < n; ++i)
    name_width = std::max(name_width, metrics.horizontalAdvance(className(i)));
  l.label_width = std::max(metrics.horizontalAdvance(tr("true")), name_width) + 10;
  const auto side_for = [&](int header) {
    return std::max(8, std::min((width() - l.label_width - 4) / std::max(n, 1),
                                (height() - header - 4) / std::max(n, 1)));
  };
  l.header = metrics.height() * 2 + 6;
  int side = side_for(l.header);
  if (name_width > side - 2) {
    // Upright names need the height of the longest, at most two fifths of the view's.
    l.upright = true;
    l.header = metrics.height() + 8 + std::min(name_width, height() * 2 / 5);
    side = side_for(l.header);
  }
  l.grid = QRect(l.label_width, l.header, side * n, side * n);
  return l;
}

QStringList ConfusionMatrixView::columnLabels() const {
  const Layout l = layout();
  const QFontMetrics metrics(font());
  const int n = confusion_.size();
  const int room =
      l.upright ? l.header - metrics.height() - 6 : l.grid.width() / std::max(n, 1) - 2;
  QStringList labels;
  for (int i = 0; i < n; ++i) labels << metrics.elidedText(className(i), Qt::ElideRight, room);
  return labels;
}

bool ConfusionMatrixView::columnLabelsUpright() const { return layout().upright; }

QString ConfusionMatrixView::toolTipAt(const QPoint& pos) const {
  const int n = confusion_.size();
  if (n == 0) return {};
  const Layout l = layout();
  const int side = l.grid.width() / n;
  const int column = pos.x() >= l.grid.left() ? (pos.x() - l.grid.left()) / side : -1;
  const int row = pos.y() >= l.grid.top() ? (pos.y() - l.grid.top()) / side : -1;
  if (column >= 0 && column < n && row >= 0 && row < n && row < confusion_.size() &&
      column < confusion_[row].size()) {
    qint64 total = 0;
    for (qint64 c : confusion_[row]) total += c;
    return tr("true %1, predicted %2: %3 of %4 (%5%)")
        .arg(className(row), className(column))
        .arg(confusion_[row][column])
        .arg(total)
        .arg(total > 0 ? 100.0 * confusion_[row][column] / total : 0.0, 0, 'f', 1);
  }
  if (column >= 0 && column < n && pos.y() < l.grid.top()) {
    return tr("predicted %1").arg(className(column));
  }
  if (row >= 0 && row < n && pos.x() < l.grid.left()) return tr("true %1").arg(className(row));
  return {};
}

bool ConfusionMatrixView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = toolTipAt(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
      event->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(event);
}

void ConfusionMatrixView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  const int n = confusion_.size();
  if (n == 0) {
    painter.setPen(palette().color(QPalette::Disabled, QPalette::Text));
    painter.drawText(rect(), Qt::AlignCenter, tr("No confusion matrix yet"));
    return;
  }
  const QFontMetrics metrics(font());
  const Layout l = layout();
  const QRect& grid = l.grid;
  const int side = grid.width() / n;
  const int label_width = l.label_width;

  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRect(grid.left(), 0, grid.width(), metrics.height()), Qt::AlignCenter,
                   tr("predicted"));
  painter.drawText(QRect(0, 0, label_width, l.header), Qt::AlignLeft | Qt::AlignBottom, tr("true"));
  const QStringList labels = columnLabels();
  for (int i = 0; i < n; ++i) {
    if (l.upright) {
      // Read bottom to top, ending just above its column.
      painter.save();
      painter.translate(grid.left() + i * side + side / 2 + metrics.ascent() / 2 - 1, l.header - 4);
      painter.rotate(-90);
      painter.drawText(0, 0, labels[i]);
      painter.restore();
    } else {
      painter.drawText(QRect(grid.left() + i * side, metrics.height() + 2, side, metrics.height()),
                       Qt::AlignCenter, labels[i]);
    }
    painter.drawText(QRect(0, grid.top() + i * side, label_width - 6, side),
                     Qt::AlignRight | Qt::AlignVCenter, className(i));
  }
  for (int r = 0; r < n; ++r) {
    qint64 total = 0;
    for (qint64 c : confusion_[r]) total += c;
    for (int c = 0; c < n && c < confusion_[r].size(); ++c) {
      const double fraction = total > 0 ? double(confusion_[r][c]) / total : 0;
      // Blue for the diagonal (right), red off it (wrong), by row fraction.
      const QColor full = r == c ? QColor(0x1f, 0x77, 0xb4) : QColor(0xd6, 0x27, 0x28);
      QColor shade = full;
      shade.setAlphaF(0.08 + 0.85 * fraction);
      const QRect box(grid.left() + c * side, grid.top() + r * side, side, side);
      painter.fillRect(box, Qt::white);
      painter.fillRect(box, shade);
      painter.setPen(QColor(200, 200, 200));
      painter.drawRect(box.adjusted(0, 0, -1, -1));
      painter.setPen(fraction > 0.55 ? Qt::white : Qt::black);
      if (side >= metrics.height()) {
        painter.drawText(box, Qt::AlignCenter, QString::number(confusion_[r][c]));
      }
    }
  }
}

// ---- JSON ---------------------------------------------------------------------

QJsonObject stage_result_to_json(const StageResult& r) {
  QJsonObject o;
  o["experiment"] = r.experiment;
  o["stage"] = r.stage;
  o["seeds"] = r.seeds;
  o["accuracy"] = r.accuracy;
  o["accuracy_std"] = r.accuracy_std;
  if (!r.outcome.isEmpty()) o["outcome"] = r.outcome;
  o["cross_entropy"] = r.cross_entropy;
  o["cross_entropy_std"] = r.cross_entropy_std;
  o["trainable_parameters"] = double(r.trainable_parameters);
  o["training_memory_bytes"] = double(r.training_memory_bytes);
  o["class_names"] = QJsonArray::fromStringList(r.class_names);
  QJsonArray confusion;
  for (const auto& row : r.confusion) {
    QJsonArray counts;
    for (qint64 c : row) counts.append(double(c));
    confusion.append(counts);
  }
  o["confusion"] = confusion;
  if (r.quantized) {
    QJsonObject q;
    q["from"] = r.quantized_from;
    q["model_bytes_before"] = double(r.model_bytes_before);
    q["model_bytes_after"] = double(r.model_bytes_after);
    q["arena_bytes_before"] = double(r.arena_bytes_before);
    q["arena_bytes_after"] = double(r.arena_bytes_after);
    q["latency_us_before"] = r.latency_us_before;
    q["latency_us_after"] = r.latency_us_after;
    q["kept_float"] = QJsonArray::fromStringList(r.kept_float);
    o["quantization"] = q;
  }
  return o;
}

StageResult stage_result_from_json(const QJsonObject& o) {
  StageResult r;
  r.experiment = o["experiment"].toString();
  r.stage = o["stage"].toString();
  r.seeds = o["seeds"].toInt(1);
  r.accuracy = o["accuracy"].toDouble();
  r.accuracy_std = o["accuracy_std"].toDouble();
  r.outcome = o["outcome"].toString();
  r.cross_entropy = o["cross_entropy"].toDouble();
  r.cross_entropy_std = o["cross_entropy_std"].toDouble();
  r.trainable_parameters = qint64(o["trainable_parameters"].toDouble());
  r.training_memory_bytes = qint64(o["training_memory_bytes"].toDouble());
  for (const QJsonValue& name : o["class_names"].toArray()) r.class_names << name.toString();
  for (const QJsonValue& row : o["confusion"].toArray()) {
    QVector<qint64> counts;
    for (const QJsonValue& c : row.toArray()) counts << qint64(c.toDouble());
    r.confusion << counts;
  }
  if (o.contains("quantization")) {
    const QJsonObject q = o["quantization"].toObject();
    r.quantized = true;
    r.quantized_from = q["from"].toString();
    r.model_bytes_before = qint64(q["model_bytes_before"].toDouble());
    r.model_bytes_after = qint64(q["model_bytes_after"].toDouble());
    r.arena_bytes_before = qint64(q["arena_bytes_before"].toDouble());
    r.arena_bytes_after = qint64(q["arena_bytes_after"].toDouble());
    r.latency_us_before = q["latency_us_before"].toDouble();
    r.latency_us_after = q["latency_us_after"].toDouble();
    for (const QJsonValue& k : q["kept_float"].toArray()) r.kept_float << k.toString();
  }
  return r;
}

QJsonObject cell_result_to_json(const CellResult& c) {
  QJsonObject o;
  o["cell"] = c.cell;
  o["accuracy"] = c.accuracy;
  o["accuracy_std"] = c.accuracy_std;
  o["parameters"] = double(c.parameters);
  o["fused_bytes"] = double(c.fused_bytes);
  o["while_bytes"] = double(c.while_bytes);
  o["unrolled_bytes"] = double(c.unrolled_bytes);
  o["latency_us"] = c.latency_us;
  if (!c.model_path.isEmpty()) o["model_path"] = c.model_path;
  if (!c.model.isEmpty()) o["model"] = c.model;
  o["arena_bytes"] = double(c.arena_bytes);
  o["board_latency_us"] = c.board_latency_us;
  if (c.board_cycles) o["board_cycles"] = double(c.board_cycles);
  if (!c.board.isEmpty()) o["board"] = c.board;
  if (!c.board_note.isEmpty()) o["board_note"] = c.board_note;
  if (!c.note.isEmpty()) o["note"] = c.note;
  if (!c.error.isEmpty()) o["error"] = c.error;
  return o;
}

CellResult cell_result_from_json(const QJsonObject& o) {
  CellResult c;
  c.cell = o["cell"].toString();
  c.accuracy = o["accuracy"].toDouble();
  c.accuracy_std = o["accuracy_std"].toDouble();
  c.parameters = qint64(o["parameters"].toDouble());
  c.fused_bytes = qint64(o["fused_bytes"].toDouble());
  c.while_bytes = qint64(o["while_bytes"].toDouble());
  c.unrolled_bytes = qint64(o["unrolled_bytes"].toDouble());
  c.latency_us = o["latency_us"].toDouble();
  // Absent in projects saved before model rows and board latency.
  c.model_path = o["model_path"].toString();
  c.model = o["model"].toString();
  c.arena_bytes = qint64(o["arena_bytes"].toDouble());
  c.board_latency_us = o["board_latency_us"].toDouble();
  c.board_cycles = qint64(o["board_cycles"].toDouble());
  c.board = o["board"].toString();
  c.board_note = o["board_note"].toString();
  c.note = o["note"].toString();
  c.error = o["error"].toString();
  return c;
}

// ---- ComparisonTable ---------------------------------------------------------

ComparisonTable::ComparisonTable(QWidget* parent) : QWidget(parent) {
  stage_table_ = new QTableWidget(0, kColumnCount);
  stage_table_->setObjectName("stageTable");
  QStringList headers;
  for (const char* h : kStageHeaders) headers << tr(h);
  stage_table_->setHorizontalHeaderLabels(headers);
  stage_table_->horizontalHeaderItem(kDeltaColumn)
      ->setToolTip(tr("Accuracy minus the previous stage's in the same experiment"));
  stage_table_->horizontalHeaderItem(kMemoryColumn)
      ->setToolTip(tr("Engine arena for training: weights, gradients, optimizer state, "
                      "activations and tapes"));
  stage_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  stage_table_->setSelectionMode(QAbstractItemView::SingleSelection);
  stage_table_->verticalHeader()->hide();
  stage_table_->horizontalHeader()->setStretchLastSection(true);
  stage_table_->setAlternatingRowColors(true);

  cell_table_ = new QTableWidget(0, static_cast<int>(std::size(kCellHeaders)));
  cell_table_->setObjectName("cellTable");
  headers.clear();
  for (const char* h : kCellHeaders) headers << tr(h);
  cell_table_->setHorizontalHeaderLabels(headers);
  cell_table_->verticalHeader()->hide();
  cell_table_->horizontalHeader()->setStretchLastSection(true);
  cell_table_->setWordWrap(false);
  cell_table_->setTextElideMode(
      Qt::ElideMiddle);  // one line per row; long texts have their tooltip
  cell_title_ = new QLabel(tr("<b>Cell comparison</b>"));
  cell_title_->hide();
  cell_table_->hide();

  auto* export_button = new QPushButton(tr("Export report\u2026"));
  export_button->setObjectName("exportReport");
  export_button->setToolTip(
      tr("Save the selected experiment's report: HTML, PDF, CSV of every curve, or JSON"));
  connect(export_button, &QPushButton::clicked, this, &ComparisonTable::exportRequested);
  auto* export_model_button = new QPushButton(tr("Export model\u2026"));
  export_model_button->setObjectName("exportStageModel");
  export_model_button->setToolTip(
      tr("Save the model the selected stage trained: .tflite, .circle, a C array (.h/.cc) or a "
         "firmware library"));
  connect(export_model_button, &QPushButton::clicked, this, &ComparisonTable::exportModelRequested);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("<b>Stages</b> (mean \u00b1 std over seeds)")));
  top->addStretch(1);
  top->addWidget(export_model_button);
  top->addWidget(export_button);

  auto* tables = new QWidget;
  auto* tables_layout = new QVBoxLayout(tables);
  tables_layout->setContentsMargins(0, 0, 0, 0);
  tables_layout->addLayout(top);
  tables_layout->addWidget(stage_table_, 2);
  tables_layout->addWidget(cell_title_);
  tables_layout->addWidget(cell_table_, 1);

  confusion_title_ = new QLabel(tr("<b>Confusion matrix</b>"));
  confusion_title_->setWordWrap(true);
  confusion_ = new ConfusionMatrixView;
  auto* matrix = new QWidget;
  auto* matrix_layout = new QVBoxLayout(matrix);
  matrix_layout->setContentsMargins(0, 0, 0, 0);
  matrix_layout->addWidget(confusion_title_);
  matrix_layout->addWidget(confusion_, 1);

  splitter_ = new QSplitter(Qt::Horizontal);
  splitter_->addWidget(tables);
  splitter_->addWidget(matrix);
  splitter_->setStretchFactor(0, 3);
  splitter_->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter_);

  connect(stage_table_, &QTableWidget::currentCellChanged, this,
          [this](int row, int, int, int) { showConfusion(row); });
}

void ComparisonTable::setStageResult(const StageResult& result) {
  int at = -1;
  for (int i = 0; i < rows_.size(); ++i) {
    if (rows_[i].experiment == result.experiment && rows_[i].stage == result.stage) at = i;
  }
  if (at < 0) {
    rows_.append(result);
    at = rows_.size() - 1;
  } else {
    rows_[at] = result;
  }
  refreshStageTable();
  // The newest result is what the user waits for; show its matrix.
  selectRow(at);
}

void ComparisonTable::selectRow(int row) {
  stage_table_->setCurrentCell(row, kStageColumn);
  showConfusion(row);
}

void ComparisonTable::refreshStageTable() {
  const QVector<double> deltas = accuracy_deltas(rows_);
  const QSignalBlocker block(stage_table_);
  stage_table_->setRowCount(rows_.size());
  for (int i = 0; i < rows_.size(); ++i) {
    const StageResult& r = rows_[i];
    stage_table_->setItem(i, kExperimentColumn, cell(r.experiment, false));
    stage_table_->setItem(i, kStageColumn, cell(r.stage, false));
    if (r.seeds > 0) {
      stage_table_->setItem(i, kAccuracyColumn,
                            cell(withStd(r.accuracy, r.accuracy_std, r.seeds), true));
      stage_table_->setItem(i, kCrossEntropyColumn,
                            cell(withStd(r.cross_entropy, r.cross_entropy_std, r.seeds), true));
    } else {  // no made-up figures for a stage that was stopped or failed
      const QString why = r.outcome.isEmpty() ? tr("no result") : r.outcome;
      QTableWidgetItem* outcome = cell(why.section(':', 0, 0), true);
      outcome->setToolTip(why);
      stage_table_->setItem(i, kAccuracyColumn, outcome);
      stage_table_->setItem(i, kCrossEntropyColumn, cell(QStringLiteral("\u2013"), true));
    }
    QTableWidgetItem* d = cell(delta(deltas[i]), true);
    if (!std::isnan(deltas[i])) {
      d->setForeground(deltas[i] >= 0 ? QColor(0x1b, 0x7a, 0x1b) : QColor(0xb0, 0x20, 0x20));
    }
    stage_table_->setItem(i, kDeltaColumn, d);
    stage_table_->setItem(i, kParametersColumn,
                          cell(QString::number(r.trainable_parameters), true));
    QTableWidgetItem* memory = cell(bytesText(r.training_memory_bytes), true);
    memory->setToolTip(tr("%1 bytes").arg(r.training_memory_bytes));
    stage_table_->setItem(i, kMemoryColumn, memory);
    QTableWidgetItem* deploy = cell(QStringLiteral("\u2013"), true);
    if (r.quantized) {
      deploy->setText(QStringLiteral("%1 \u2192 %2, %3 \u2192 %4 \u00b5s")
                          .arg(bytesText(r.model_bytes_before), bytesText(r.model_bytes_after))
                          .arg(r.latency_us_before, 0, 'f', 1)
                          .arg(r.latency_us_after, 0, 'f', 1));
      deploy->setToolTip(
          tr("Quantized from stage %1\nModel: %2 \u2192 %3 bytes\nArena: %4 \u2192 %5 bytes\n"
             "Latency (one inference, this machine): %6 \u2192 %7 \u00b5s\nKept in float: %8")
              .arg(r.quantized_from)
              .arg(r.model_bytes_before)
              .arg(r.model_bytes_after)
              .arg(r.arena_bytes_before)
              .arg(r.arena_bytes_after)
              .arg(r.latency_us_before, 0, 'f', 1)
              .arg(r.latency_us_after, 0, 'f', 1)
              .arg(r.kept_float.isEmpty() ? tr("nothing") : r.kept_float.join("; ")));
    }
    stage_table_->setItem(i, kDeployColumn, deploy);
  }
  stage_table_->resizeColumnsToContents();
}

void ComparisonTable::showConfusion(int row) {
  if (row < 0 || row >= rows_.size()) {
    confusion_title_->setText(tr("<b>Confusion matrix</b>"));
    confusion_->setMatrix({}, {});
    return;
  }
  const StageResult& r = rows_[row];
  confusion_title_->setText(tr("<b>Confusion matrix</b>: %1 / %2")
                                .arg(r.experiment.toHtmlEscaped(), r.stage.toHtmlEscaped()));
  confusion_->setMatrix(r.confusion, r.class_names);
}

void ComparisonTable::setCellResults(const QVector<CellResult>& cells) {
  cells_ = cells;
  cell_table_->setRowCount(cells.size());
  for (int i = 0; i < cells.size(); ++i) {
    const CellResult& c = cells[i];
    QTableWidgetItem* name = cell(c.cell, false);
    // Every row says which model it used: the file, or the spec a cell was built from.
    const QString model = !c.model.isEmpty() ? c.model : c.model_path;
    if (!model.isEmpty()) name->setToolTip(model);
    cell_table_->setItem(i, kCellNameColumn, name);
    QTableWidgetItem* used = cell(model.isEmpty() ? QStringLiteral("-") : model, false);
    used->setToolTip(model);
    cell_table_->setItem(i, kCellModelColumn, used);
    const QString none = QStringLiteral("-");  // not measured, or no such form
    const auto bytes = [&](qint64 b) { return b > 0 ? bytesText(b) : none; };
    if (!c.error.isEmpty()) {
      for (int column = kCellAccuracyColumn; column < kCellNoteColumn; ++column)
        cell_table_->setItem(i, column, cell(none, true));
      QTableWidgetItem* error = cell(tr("error: %1").arg(c.error), false);
      error->setToolTip(c.error);
      error->setForeground(QColor(0xb0, 0x20, 0x20));
      cell_table_->setItem(i, kCellNoteColumn, error);
      continue;
    }
    cell_table_->setItem(
        i, kCellAccuracyColumn,
        cell(figure(c.accuracy) + (c.accuracy_std > 0
                                       ? QStringLiteral(" \u00b1 ") + figure(c.accuracy_std)
                                       : QString()),
             true));
    cell_table_->setItem(i, kCellParametersColumn, cell(QString::number(c.parameters), true));
    cell_table_->setItem(i, kCellFusedColumn, cell(bytes(c.fused_bytes), true));
    cell_table_->setItem(i, kCellWhileColumn, cell(bytes(c.while_bytes), true));
    cell_table_->setItem(i, kCellUnrolledColumn, cell(bytes(c.unrolled_bytes), true));
    cell_table_->setItem(i, kCellLatencyColumn,
                         cell(QStringLiteral("%1 \u00b5s").arg(c.latency_us, 0, 'f', 1), true));
    QTableWidgetItem* board = cell(
        c.board_latency_us > 0 ? QStringLiteral("%1 \u00b5s").arg(c.board_latency_us, 0, 'f', 1)
                               : none,
        true);
    if (c.board_latency_us > 0) {
      board->setToolTip(
          c.board_cycles > 0
              ? tr("%1: median of 20 inferences, %L2 cycles").arg(c.board).arg(c.board_cycles)
              : tr("%1: median of 20 inferences").arg(c.board));
    } else {
      board->setToolTip(!c.board_note.isEmpty()
                            ? c.board_note
                            : tr("Connect a board in the Board dock before comparing: each "
                                 "row's model is then timed on it"));
    }
    cell_table_->setItem(i, kCellBoardColumn, board);
    cell_table_->setItem(i, kCellArenaColumn, cell(bytes(c.arena_bytes), true));
    QTableWidgetItem* note = cell(c.note, false);
    note->setToolTip(c.note);
    cell_table_->setItem(i, kCellNoteColumn, note);
  }
  cell_table_->resizeColumnsToContents();
  // A path or a build spec: shortened in the middle (the tooltip has it whole), so the figures
  // stay in view.
  cell_table_->setColumnWidth(kCellModelColumn,
                              std::min(cell_table_->columnWidth(kCellModelColumn), 260));
  // All cells in view (three rows): the stage table above scrolls instead.
  const int height = cell_table_->horizontalHeader()->sizeHint().height() +
                     cell_table_->verticalHeader()->length() + 2 * cell_table_->frameWidth() + 2;
  cell_table_->setMinimumHeight(std::min(height, 240));
  cell_table_->setMaximumHeight(height);
  cell_title_->setVisible(!cells.isEmpty());
  cell_table_->setVisible(!cells.isEmpty());
}

void ComparisonTable::clear() {
  rows_.clear();
  refreshStageTable();
  setCellResults({});
  showConfusion(-1);
}

}  // namespace gruwb::views
