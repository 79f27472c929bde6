#include "views/dataset_view.h"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "views/curve_plot.h"

namespace gruwb::views {
namespace {

const QStringList kSplits = {"train", "validation", "test"};

int sum(const std::vector<int>& counts) { return std::accumulate(counts.begin(), counts.end(), 0); }

QColor channel_colour(int channel, int channels) {
  return QColor::fromHsv((channel * 360 / std::max(channels, 1) + 210) % 360, 200, 200);
}

}  // namespace

DatasetView::DatasetView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel;
  title_->setWordWrap(true);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  counts_ = new QTableWidget(0, 5);
  counts_->setHorizontalHeaderLabels(
      {tr("Class"), tr("Train"), tr("Validation"), tr("Test"), tr("Total")});
  counts_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  counts_->verticalHeader()->hide();
  counts_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  plot_ = new QCustomPlot;
  connect(plot_, &QCustomPlot::beforeReplot, plot_, [plot = plot_] { space_ticks(plot); });
  plot_->setMinimumHeight(160);
  // The table as wide as its columns, the plots take the rest.
  counts_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  counts_->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Expanding);
  auto* row = new QHBoxLayout;
  row->addWidget(counts_);
  row->addWidget(plot_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(title_);
  layout->addLayout(row, 1);
  clear();
}

void DatasetView::clear() {
  preview_ = DatasetPreview();
  title_->setText(
      tr("No dataset: choose one in the Experiments dock or open a .ts, .arff, "
         ".csv, .npy or .npz file."));
  counts_->setRowCount(0);
  plot_->clearPlottables();
  plot_->plotLayout()->clear();
  plot_->replot();
}

void DatasetView::setPreview(const DatasetPreview& preview) {
  clear();
  preview_ = preview;
  const int train = sum(preview.train), validation = sum(preview.validation),
            test = sum(preview.test);
  QString text = tr("<b>%1</b> — %2 classes, %3 channels; split: train %4, validation %5, test %6")
                     .arg(preview.name.toHtmlEscaped())
                     .arg(preview.class_names.size())
                     .arg(preview.channels)
                     .arg(train)
                     .arg(validation)
                     .arg(test);
  text += tr("<br>Plotted: the first training sample of each class, as stored; channels:");
  for (int c = 0; c < preview.channels && c < 32; ++c) {
    text += QString(" <span style='color:%1'>&#9632; %2</span>")
                .arg(channel_colour(c, preview.channels).name())
                .arg(c);
  }
  if (!preview.notes.isEmpty()) text += "<br>" + preview.notes.join("; ").toHtmlEscaped();
  title_->setText(text);
  title_->setToolTip(preview.source);
  counts_->setRowCount(static_cast<int>(preview.class_names.size()) + 1);
  const auto count = [](const std::vector<int>& counts, int c) {
    return c < static_cast<int>(counts.size()) ? counts[c] : 0;
  };
  for (int c = 0; c <= preview.class_names.size(); ++c) {
    const bool total_row = c == preview.class_names.size();
    const int values[] = {
        total_row ? train : count(preview.train, c),
        total_row ? validation : count(preview.validation, c),
        total_row ? test : count(preview.test, c),
    };
    counts_->setItem(c, 0, new QTableWidgetItem(total_row ? tr("all") : preview.class_names[c]));
    for (int s = 0; s < 3; ++s) {
      auto* item = new QTableWidgetItem(QString::number(values[s]));
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      counts_->setItem(c, s + 1, item);
    }
    auto* total = new QTableWidgetItem(QString::number(values[0] + values[1] + values[2]));
    total->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    counts_->setItem(c, 4, total);
  }
  plotExamples();
}

int DatasetView::shownCount(const QString& split, int class_index) const {
  const int column = static_cast<int>(kSplits.indexOf(split)) + 1;
  if (column <= 0 || class_index < 0 || class_index >= counts_->rowCount()) return -1;
  const QTableWidgetItem* item = counts_->item(class_index, column);
  return item ? item->text().toInt() : -1;
}

void DatasetView::plotExamples() {
  // One small plot per example (class), its channels as lines in the same colours throughout.
  plot_->plotLayout()->clear();
  const int examples = static_cast<int>(preview_.examples.size());
  if (examples == 0 || preview_.channels <= 0) {
    plot_->replot();
    return;
  }
  // One row while it fits (up to 6 classes), then rows of 6.
  const int columns = examples <= 6 ? examples : 6;
  for (int e = 0; e < examples; ++e) {
    const DatasetPreview::Example& example = preview_.examples[e];
    auto* rect = new QCPAxisRect(plot_);
    plot_->plotLayout()->addElement(e / columns, e % columns, rect);
    const QString label = example.label >= 0 && example.label < preview_.class_names.size()
                              ? preview_.class_names[example.label]
                              : QString::number(example.label);
    rect->axis(QCPAxis::atTop)->setVisible(true);
    rect->axis(QCPAxis::atTop)->setTicks(false);
    rect->axis(QCPAxis::atTop)->setTickLabels(false);
    rect->axis(QCPAxis::atTop)->setLabel(label);
    for (int c = 0; c < preview_.channels; ++c) {
      auto* graph = plot_->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
      graph->setPen(QPen(channel_colour(c, preview_.channels)));
      QVector<double> t, v;
      for (int step = 0; step < example.length; ++step) {
        const size_t at = static_cast<size_t>(step) * preview_.channels + c;
        if (at >= example.values.size() || std::isnan(example.values[at])) continue;
        t << step;
        v << example.values[at];
      }
      graph->setData(t, v, true);
      graph->setName(tr("ch %1").arg(c));
    }
    rect->axis(QCPAxis::atBottom)
        ->setLabel(e / columns == (examples - 1) / columns ? tr("step") : QString());
    for (QCPAxis* axis : rect->axes()) axis->setTickLabelFont(font());
  }
  plot_->rescaleAxes();
  plot_->replot();
}

}  // namespace gruwb::views
