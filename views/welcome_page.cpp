#include "views/welcome_page.h"

#include <QFileInfo>
#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>
#include <functional>

namespace gruwb::views {
namespace {

QLabel* heading(const QString& text) {
  auto* label = new QLabel(text);
  QFont font = label->font();
  font.setBold(true);
  font.setPointSizeF(font.pointSizeF() * 1.15);
  label->setFont(font);
  return label;
}

void clear_layout(QVBoxLayout* layout) {
  while (QLayoutItem* item = layout->takeAt(0)) {
    delete item->widget();
    delete item;
  }
}

// A link-like button for a file: its name, the line or the folder in grey beside it.
QWidget* file_row(const QString& path, const QString& line, QObject* receiver,
                  const std::function<void()>& open) {
  auto* row = new QWidget;
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* button = new QToolButton;
  button->setText(QFileInfo(path).fileName());
  button->setToolTip(path);
  button->setAutoRaise(true);
  button->setCursor(Qt::PointingHandCursor);
  QObject::connect(button, &QToolButton::clicked, receiver, open);
  auto* note = new QLabel(line.isEmpty() ? QFileInfo(path).absolutePath() : line);
  note->setStyleSheet("color: #666");
  note->setToolTip(path);
  layout->addWidget(button);
  layout->addWidget(note, 1);
  return row;
}

}  // namespace

WelcomePage::WelcomePage(QWidget* parent) : QWidget(parent) {
  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(24, 16, 24, 16);
  auto* title =
      new QLabel(tr("<span style='font-size:18pt'>GRU Workbench</span><br>"
                    "Inspect, fuse, train and deploy small recurrent networks. "
                    "Drop a <b>.tflite</b>/<b>.circle</b> model or a dataset "
                    "(.ts, .arff, .csv, .npy) on the window, or use File &gt; Open "
                    "(Ctrl+O)."));
  title->setWordWrap(true);
  column->addWidget(title);

  // The samples and recent files first: on a 1366x768 screen they stay above the fold, and a
  // click on one is the quickest start; the jobs, one line each, follow.
  column->addWidget(heading(tr("Samples")));
  samples_ = new QVBoxLayout;
  samples_->setSpacing(0);
  column->addLayout(samples_);
  column->addWidget(heading(tr("Recent files")));
  recent_ = new QVBoxLayout;
  recent_->setSpacing(0);
  column->addLayout(recent_);
  // One line and one button per job: what it is and where it lives in the window.
  column->addWidget(heading(tr("Jobs")));
  struct Job {
    const char* id;
    QString button;
    QString line;
  };
  const Job jobs[] = {
      {"inspect", tr("Inspect a model"),
       tr("Graph, Model tree, tensor and op inspector, Size panel (gruwb inspect)")},
      {"fuse", tr("Fuse a WHILE-loop GRU"),
       tr("Tools > Fuse Recurrent Cells: one op per cell, size before and after (gruwb fuse)")},
      {"train", tr("Train stages"),
       tr("Experiments dock: FC-only vs FC+GRU stages on a dataset, live curves (gruwb "
          "experiment)")},
      {"compare", tr("Compare cells"),
       tr("Experiments dock, Build mode, \"Compare cells\": GRU, LSTM, ... on the same data")},
      {"quantize", tr("Quantize a model"),
       tr("Tools > Quantize Model: int8, int16x8 or dynamic range, calibrated on your dataset "
          "(gruwb quantize)")},
      {"board", tr("Train on a board"),
       tr("Board dock: connect over serial, flash the firmware, train on the device")},
      {"export", tr("Export a model"),
       tr("File > Export Model: .tflite, .circle, C array or firmware library (gruwb export)")},
      {"build", tr("Build a model"),
       tr("No model file? Experiments dock > Model: Build, with a spec like "
          "cell=gru,units=60")},
  };
  auto* grid = new QGridLayout;
  int row = 0;
  for (const Job& job : jobs) {
    auto* button = new QPushButton(job.button);
    button->setObjectName(QString("job_%1").arg(job.id));
    const QString id = job.id;
    connect(button, &QPushButton::clicked, this, [this, id] { emit jobRequested(id); });
    auto* line = new QLabel(job.line);
    line->setWordWrap(true);
    grid->addWidget(button, row, 0);
    grid->addWidget(line, row, 1);
    ++row;
  }
  grid->setColumnStretch(1, 1);
  column->addLayout(grid);

  column->addStretch(1);

  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll);
  setRecentFiles({});
  setSamples({}, QString());
}

void WelcomePage::setRecentFiles(const QStringList& paths) {
  clear_layout(recent_);
  recent_paths_ = paths;
  for (const QString& path : paths) {
    recent_->addWidget(file_row(path, QString(), this, [this, path] { emit fileActivated(path); }));
  }
  if (paths.isEmpty()) recent_->addWidget(new QLabel(tr("None yet.")));
}

void WelcomePage::setSamples(const std::vector<WelcomeFile>& samples, const QString& folder) {
  clear_layout(samples_);
  sample_paths_.clear();
  for (const WelcomeFile& sample : samples) {
    sample_paths_ << sample.path;
    const QString path = sample.path;
    samples_->addWidget(
        file_row(path, sample.description, this, [this, path] { emit fileActivated(path); }));
  }
  samples_->addWidget(new QLabel(folder.isEmpty() ? tr("The bundled samples were not found (set "
                                                       "GRUWB_SAMPLES_DIR to their folder).")
                                                  : tr("In %1").arg(folder)));
}

QStringList WelcomePage::samplePaths() const { return sample_paths_; }
QStringList WelcomePage::recentPaths() const { return recent_paths_; }

}  // namespace gruwb::views
