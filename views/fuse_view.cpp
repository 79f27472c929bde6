#include "views/fuse_view.h"

#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/graph_view.h"

namespace gruwb::views {

QString size_difference_text(qint64 before, qint64 after) {
  const qint64 change = after - before;
  if (change == 0) return QStringLiteral("0");
  const QLocale locale(QLocale::English);
  QString text = (change > 0 ? QStringLiteral("+") : QStringLiteral("-")) +
                 locale.toString(change > 0 ? change : -change);
  if (before > 0) {
    const double percent = 100.0 * double(change) / double(before);
    text += QStringLiteral(" (%1%2 %)")
                .arg(percent > 0 ? QStringLiteral("+") : QString())
                .arg(percent, 0, 'f', 1);
  }
  return text;
}

FuseView::FuseView(QWidget* parent) : QWidget(parent) {
  headline_ = new QLabel;
  headline_->setObjectName("fuseHeadline");
  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  sizes_ = new QTableWidget(kRowCount, kColumnCount);
  sizes_->setObjectName("fuseSizes");
  sizes_->setHorizontalHeaderLabels({tr("Original"), tr("Fused"), tr("Difference")});
  sizes_->setVerticalHeaderLabels({tr("Model bytes"), tr("Data bytes"), tr("Subgraphs"), tr("Ops"),
                                   tr("Tensors"), tr("Arena bytes")});
  sizes_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  sizes_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  sizes_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

  report_ = new QPlainTextEdit;
  report_->setObjectName("fuseReport");
  report_->setReadOnly(true);
  report_->setLineWrapMode(QPlainTextEdit::NoWrap);
  report_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

  graph_ = new GraphView;
  graph_->setObjectName("fusedGraph");

  open_button_ = new QPushButton(tr("Open in a New Window"));
  open_button_->setObjectName("openFused");
  open_button_->setToolTip(tr("The fused model as a document of its own, beside the original"));
  connect(open_button_, &QPushButton::clicked, this, [this] { emit openRequested(fused_path_); });
  compare_button_ = new QPushButton(tr("Compare in Experiments"));
  compare_button_->setObjectName("compareFused");
  compare_button_->setToolTip(
      tr("Add the fused model to the Experiments panel's Compare with list: trained and timed "
         "as a row beside the original"));
  connect(compare_button_, &QPushButton::clicked, this,
          [this] { emit compareRequested(fused_path_); });

  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(headline_);
  left_layout->addWidget(sizes_);
  left_layout->addWidget(new QLabel(tr("<b>Fuser report</b>")));
  left_layout->addWidget(report_, 1);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(open_button_);
  buttons->addWidget(compare_button_);
  buttons->addStretch(1);
  left_layout->addLayout(buttons);

  auto* right = new QWidget;
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addWidget(new QLabel(tr("<b>Fused model</b>")));
  right_layout->addWidget(graph_, 1);

  auto* splitter = new QSplitter;
  splitter->addWidget(left);
  splitter->addWidget(right);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(splitter);
}

void FuseView::setResult(const QString& original_path, const QString& fused_path, int fused_cells,
                         int cells, const tools::ModelSizeFigures& before,
                         const tools::ModelSizeFigures& after, const QString& report,
                         const tools::AnalyzerReport& fused) {
  fused_path_ = fused_path;
  headline_->setText(
      tr("<b>%1</b> \u2192 <b>%2</b>: %3 of %4 recurrent cells fused; the model goes from "
         "%5 to %6 bytes (%7)")
          .arg(QFileInfo(original_path).fileName().toHtmlEscaped(),
               QFileInfo(fused_path).fileName().toHtmlEscaped())
          .arg(fused_cells)
          .arg(cells)
          .arg(QLocale(QLocale::English).toString(qulonglong(before.bytes)),
               QLocale(QLocale::English).toString(qulonglong(after.bytes)),
               size_difference_text(qint64(before.bytes), qint64(after.bytes))));
  headline_->setToolTip(tr("%1\n\u2192 %2").arg(original_path, fused_path));
  const qint64 values[kRowCount][2] = {{qint64(before.bytes), qint64(after.bytes)},
                                       {qint64(before.data_bytes), qint64(after.data_bytes)},
                                       {qint64(before.subgraphs), qint64(after.subgraphs)},
                                       {qint64(before.ops), qint64(after.ops)},
                                       {qint64(before.tensors), qint64(after.tensors)},
                                       {qint64(before.arena_bytes), qint64(after.arena_bytes)}};
  const QLocale locale(QLocale::English);
  for (int row = 0; row < kRowCount; ++row) {
    const auto item = [](const QString& text) {
      auto* i = new QTableWidgetItem(text);
      i->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      return i;
    };
    sizes_->setItem(row, kBeforeColumn, item(locale.toString(values[row][0])));
    sizes_->setItem(row, kAfterColumn, item(locale.toString(values[row][1])));
    sizes_->setItem(row, kDifferenceColumn,
                    item(size_difference_text(values[row][0], values[row][1])));
  }
  if (!after.arena_error.empty()) {
    sizes_->item(kArenaBytes, kAfterColumn)->setToolTip(QString::fromStdString(after.arena_error));
  }
  sizes_->setFixedHeight(sizes_->horizontalHeader()->sizeHint().height() +
                         sizes_->verticalHeader()->length() + 2 * sizes_->frameWidth() + 2);
  report_->setPlainText(report);
  graph_->setReport(fused);
  graph_->fitToView();
}

}  // namespace gruwb::views
