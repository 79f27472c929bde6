#pragma once
// A dataset at a glance, shown when one is chosen: samples per class in each split (the
// balance), the split sizes, and one sample of each class plotted per channel. Plain data in
// (DatasetPreview, filled by the main window from app/core/dataset.h's prepared splits), so
// the view stays free of the application layer.

#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

class QCustomPlot;
class QLabel;
class QTableWidget;

namespace gruwb::views {

struct DatasetPreview {
  QString name;
  QString source;
  int channels = 0;
  QStringList class_names;
  // Samples per class (same order as class_names) in each split; empty = no such split.
  std::vector<int> train, validation, test;
  struct Example {
    int label = 0;
    int length = 0;
    std::vector<float> values;  // [t][c], time-major
  };
  std::vector<Example> examples;  // one per class, from the training split
  QStringList notes;              // what preparing did ("length: ...")
};

class DatasetView : public QWidget {
  Q_OBJECT

 public:
  explicit DatasetView(QWidget* parent = nullptr);

  void setPreview(const DatasetPreview& preview);
  void clear();

  // The counts table: one row per class, columns train / validation / test / total.
  QTableWidget* countsTable() const { return counts_; }
  // The per-class count the table shows for `split` ("train", "validation", "test").
  int shownCount(const QString& split, int class_index) const;
  QCustomPlot* samplesPlot() const { return plot_; }
  const DatasetPreview& preview() const { return preview_; }

 private:
  void plotExamples();

  DatasetPreview preview_;
  QLabel* title_ = nullptr;
  QTableWidget* counts_ = nullptr;
  QCustomPlot* plot_ = nullptr;
};

}  // namespace gruwb::views
