#include "views/board_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/curve_plot.h"
#include "views/scrollable.h"

namespace gruwb::views {

BoardPanel::BoardPanel(QWidget* parent) : QWidget(parent) {
  auto* controls = new QWidget;
  auto* column = new QVBoxLayout(controls);
  column->setContentsMargins(0, 0, 0, 0);
  column->addWidget(createConnectionBox());
  column->addWidget(createTrainingBox());
  column->addStretch(1);
  QScrollArea* scroll = scrollable(controls);  // the form never sets the dock's minimum height

  // The titles carry the key, so a short dock keeps the legend's height for the data (the
  // Legend box brings it back).
  loss_plot_ = new CurvePlot(tr("Loss: board (red, dashed) vs host (grey)"), tr("cross entropy"));
  loss_plot_->setObjectName("boardLossPlot");
  loss_plot_->setSmoothing(0);           // the comparison wants the raw figures
  loss_plot_->setXLabel(tr("samples"));  // board and host report per trained sample
  accuracy_plot_ =
      new CurvePlot(tr("Accuracy: board (red, dashed) vs host (grey)"), tr("accuracy"));
  accuracy_plot_->setObjectName("boardAccuracyPlot");
  accuracy_plot_->setSmoothing(0);
  accuracy_plot_->setXLabel(tr("samples"));
  loss_plot_->setLegendVisible(false);
  accuracy_plot_->setLegendVisible(false);
  clearCurves();
  auto* plots = new QSplitter(Qt::Horizontal);
  plots->addWidget(loss_plot_);
  plots->addWidget(accuracy_plot_);

  console_ = new QPlainTextEdit;
  console_->setObjectName("frameConsole");
  console_->setReadOnly(true);
  console_->setMaximumBlockCount(kConsoleRows);
  console_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  console_->setLineWrapMode(QPlainTextEdit::NoWrap);
  console_paused_ = new QCheckBox(tr("Pause"));
  console_skipped_ = new QLabel;
  auto* clear = new QPushButton(tr("Clear"));
  connect(clear, &QPushButton::clicked, this, [this] {
    console_->clear();
    skipped_frames_ = 0;
    console_skipped_->clear();
  });
  auto* console_bar = new QHBoxLayout;
  console_bar->addWidget(new QLabel(tr("Frames (dir  type  seq  bytes  CRC)")));
  console_bar->addStretch(1);
  console_bar->addWidget(console_skipped_);
  console_bar->addWidget(console_paused_);
  console_bar->addWidget(clear);
  auto* console_box = new QWidget;
  auto* console_layout = new QVBoxLayout(console_box);
  console_layout->setContentsMargins(0, 0, 0, 0);
  console_layout->addLayout(console_bar);
  console_layout->addWidget(console_);

  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(plots);
  right->addWidget(console_box);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 1);
  // The plots first: the console's size hint would otherwise take half of a short dock and
  // squeeze the plots to unreadable ticks (issue 20 point 11). Proportions, scaled on show.
  right->setSizes({300, 100});
  console_->setMinimumHeight(3 * console_->fontMetrics().height());

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(scroll);
  split->addWidget(right);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);
  updateButtons();
}

QWidget* BoardPanel::createConnectionBox() {
  auto* box = new QGroupBox(tr("Board"));
  auto* form = new QFormLayout(box);
  port_ = new QComboBox;
  port_->setObjectName("boardPort");
  port_->setEditable(true);  // ptys of board-sim and QEMU are not listed: type /dev/pts/N
  port_->lineEdit()->setPlaceholderText("/dev/ttyACM0 or /dev/pts/N");
  port_->setMinimumContentsLength(16);
  refresh_ = new QPushButton(tr("Refresh"));
  refresh_->setToolTip(tr("List the serial ports again"));
  connect(refresh_, &QPushButton::clicked, this, &BoardPanel::refreshPortsRequested);
  auto* port_row = new QHBoxLayout;
  port_row->addWidget(port_, 1);
  port_row->addWidget(refresh_);
  form->addRow(tr("Port"), port_row);
  baud_ = new QComboBox;
  baud_->setEditable(true);  // any rate
  for (int rate : {9600, 57600, 115200, 230400, 460800, 921600, 1000000})
    baud_->addItem(QString::number(rate));
  baud_->setCurrentText("115200");
  dtr_ = new QCheckBox(tr("DTR (resets Arduino-class boards)"));
  dtr_->setChecked(true);
  auto* baud_row = new QHBoxLayout;
  baud_row->addWidget(baud_);
  baud_row->addWidget(dtr_, 1);
  form->addRow(tr("Baud"), baud_row);
  connect_ = new QPushButton(tr("Connect"));
  connect_->setObjectName("boardConnect");
  connect(connect_, &QPushButton::clicked, this, [this] {
    if (connected_) {
      emit disconnectRequested();
    } else {
      emit connectRequested(portSettings());
    }
  });
  flash_ = new QPushButton(tr("Flash firmware..."));
  flash_->setObjectName("boardFlash");
  flash_->setToolTip(
      tr("Write GRU Workbench's firmware to a board (openocd, st-flash or "
         "stm32flash), as gruwb board flash does"));
  connect(flash_, &QPushButton::clicked, this, &BoardPanel::flashRequested);
  auto* connect_row = new QHBoxLayout;
  connect_row->addWidget(connect_, 1);
  connect_row->addWidget(flash_);
  form->addRow(connect_row);
  capabilities_ = new QTableWidget(0, 2);
  capabilities_->setObjectName("boardCapabilities");
  capabilities_->horizontalHeader()->setVisible(false);
  capabilities_->verticalHeader()->setVisible(false);
  capabilities_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  capabilities_->horizontalHeader()->setStretchLastSection(true);
  capabilities_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  // All nine HELLO rows without a scroll bar.
  const int row = capabilities_->fontMetrics().height() + 6;
  capabilities_->verticalHeader()->setDefaultSectionSize(row);
  capabilities_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  capabilities_->setMinimumHeight(9 * row + 2 * capabilities_->frameWidth());
  capabilities_->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  form->addRow(capabilities_);
  return box;
}

QWidget* BoardPanel::createTrainingBox() {
  auto* box = new QGroupBox(tr("Train on the board"));
  auto* form = new QFormLayout(box);
  files_ = new QLabel(tr("no model or dataset open"));
  files_->setWordWrap(true);
  form->addRow(files_);
  stage_ = new QComboBox;
  stage_->addItem(tr("fc (last dense layers)"), "fc");
  stage_->addItem(tr("all (FC + GRU)"), "all");
  stage_->setCurrentIndex(1);
  optimizer_ = new QComboBox;
  optimizer_->addItems({"adam", "sgd"});
  auto* stage_row = new QHBoxLayout;
  stage_row->addWidget(stage_, 1);
  stage_row->addWidget(optimizer_);
  form->addRow(tr("Stage"), stage_row);
  learning_rate_ = new QDoubleSpinBox;
  learning_rate_->setDecimals(5);
  learning_rate_->setRange(1e-5, 10);
  learning_rate_->setSingleStep(1e-3);
  learning_rate_->setValue(1e-3);
  batch_ = new QSpinBox;
  batch_->setRange(1, 4096);
  batch_->setValue(16);
  auto* lr_row = new QHBoxLayout;
  lr_row->addWidget(learning_rate_, 1);
  lr_row->addWidget(new QLabel(tr("batch")));
  lr_row->addWidget(batch_);
  form->addRow(tr("Learning rate"), lr_row);
  epochs_ = new QSpinBox;
  epochs_->setRange(1, 100000);
  epochs_->setValue(1);
  seed_ = new QSpinBox;
  seed_->setRange(0, 1 << 30);
  seed_->setValue(1);
  auto* epoch_row = new QHBoxLayout;
  epoch_row->addWidget(epochs_, 1);
  epoch_row->addWidget(new QLabel(tr("seed")));
  epoch_row->addWidget(seed_);
  form->addRow(tr("Epochs"), epoch_row);
  samples_ = new QSpinBox;
  samples_->setRange(0, 1 << 24);
  samples_->setSpecialValueText(tr("all"));
  metric_every_ = new QSpinBox;
  metric_every_->setRange(0, 1 << 24);
  metric_every_->setValue(8);
  metric_every_->setSpecialValueText(tr("epoch"));
  metric_every_->setToolTip(tr("The board reports loss and accuracy every N samples"));
  auto* samples_row = new QHBoxLayout;
  samples_row->addWidget(samples_, 1);
  samples_row->addWidget(new QLabel(tr("report every")));
  samples_row->addWidget(metric_every_);
  form->addRow(tr("Samples"), samples_row);
  checkpoint_every_ = new QSpinBox;
  checkpoint_every_->setRange(0, 1 << 24);
  checkpoint_every_->setSpecialValueText(tr("each epoch end"));
  checkpoint_every_->setToolTip(
      tr("The host keeps a run checkpoint every N samples; after a board reset the run "
         "continues from it"));
  from_experiments_ = new QPushButton(tr("From Experiments"));
  from_experiments_->setToolTip(
      tr("Take stage, optimizer, learning rate, batch, epochs and seed "
         "from the Experiments panel"));
  connect(from_experiments_, &QPushButton::clicked, this,
          &BoardPanel::stageFromExperimentsRequested);
  auto* checkpoint_row = new QHBoxLayout;
  checkpoint_row->addWidget(checkpoint_every_, 1);
  checkpoint_row->addWidget(from_experiments_);
  form->addRow(tr("Checkpoint every"), checkpoint_row);

  upload_ = new QPushButton(tr("Upload model"));
  upload_->setObjectName("boardUpload");
  train_ = new QPushButton(tr("Train"));
  train_->setObjectName("boardTrain");
  stop_ = new QPushButton(tr("Stop"));
  download_ = new QPushButton(tr("Download..."));
  download_->setObjectName("boardDownload");
  download_->setToolTip(tr("Save the board's model with its trained weights"));
  bench_ = new QPushButton(tr("Bench"));
  bench_->setObjectName("boardBench");
  bench_->setToolTip(
      tr("Time 100 inferences of the model on the board (uploaded first if needed) and the "
         "same on this computer"));
  connect(upload_, &QPushButton::clicked, this, &BoardPanel::uploadRequested);
  connect(train_, &QPushButton::clicked, this, [this] { emit trainRequested(stageSettings()); });
  connect(stop_, &QPushButton::clicked, this, &BoardPanel::stopRequested);
  connect(download_, &QPushButton::clicked, this, &BoardPanel::downloadRequested);
  connect(bench_, &QPushButton::clicked, this, &BoardPanel::benchRequested);
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {upload_, train_, stop_, download_, bench_}) buttons->addWidget(b);
  form->addRow(buttons);
  progress_ = new QProgressBar;
  progress_->setObjectName("boardProgress");
  progress_->setTextVisible(true);
  progress_->setFormat(tr("idle"));
  progress_->setValue(0);
  form->addRow(progress_);
  status_ = new QLabel;
  status_->setObjectName("boardStatus");
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow(status_);
  return box;
}

void BoardPanel::clearCurves() {
  // Host solid grey under the board's dashed red: where they agree (they
  // should, to float rounding) both stay visible.
  for (CurvePlot* plot : {loss_plot_, accuracy_plot_}) {
    plot->clear();
    const QString what = plot == loss_plot_ ? " loss" : " accuracy";
    plot->setSeriesStyle("host" + what, QColor(0x70, 0x70, 0x70), Qt::SolidLine);
    plot->setSeriesStyle("board" + what, QColor(0xd6, 0x27, 0x28), Qt::DashLine);
  }
}

void BoardPanel::setPorts(const QStringList& ports) {
  const QString typed = port_->currentText();
  port_->clear();
  port_->addItems(ports);
  port_->setCurrentText(typed.isEmpty() && !ports.isEmpty() ? ports.first() : typed);
}

BoardPortSettings BoardPanel::portSettings() const {
  BoardPortSettings s;
  s.port = port_->currentText().trimmed();
  bool ok = false;
  const int baud = baud_->currentText().toInt(&ok);
  s.baud = ok && baud > 0 ? baud : 115200;
  s.dtr = dtr_->isChecked();
  return s;
}

void BoardPanel::setPortSettings(const BoardPortSettings& s) {
  port_->setCurrentText(s.port);
  baud_->setCurrentText(QString::number(s.baud));
  dtr_->setChecked(s.dtr);
}

BoardStageSettings BoardPanel::stageSettings() const {
  BoardStageSettings s;
  s.stage = stage_->currentData().toString();
  s.optimizer = optimizer_->currentText();
  s.learning_rate = learning_rate_->value();
  s.batch_size = batch_->value();
  s.epochs = epochs_->value();
  s.seed = seed_->value();
  s.samples = samples_->value();
  s.metric_every = metric_every_->value();
  s.checkpoint_every = checkpoint_every_->value();
  return s;
}

void BoardPanel::setStageSettings(const BoardStageSettings& s) {
  const int stage = stage_->findData(s.stage);
  if (stage >= 0) stage_->setCurrentIndex(stage);
  optimizer_->setCurrentText(s.optimizer);
  learning_rate_->setValue(s.learning_rate);
  batch_->setValue(s.batch_size);
  epochs_->setValue(s.epochs);
  seed_->setValue(s.seed);
  samples_->setValue(s.samples);
  metric_every_->setValue(s.metric_every);
  checkpoint_every_->setValue(s.checkpoint_every);
}

void BoardPanel::setModelAndDataset(const QString& model_path, const QString& dataset_path) {
  const auto name = [](const QString& path) {
    return path.isEmpty() ? tr("none") : path.section('/', -1);
  };
  files_->setText(tr("Model: %1\nDataset: %2").arg(name(model_path), name(dataset_path)));
  files_->setToolTip(model_path + "\n" + dataset_path);
}

void BoardPanel::setConnected(bool connected, const QString& description) {
  connected_ = connected;
  connect_->setText(connected ? tr("Disconnect") : tr("Connect"));
  if (!connected) setCapabilities({});
  if (!description.isEmpty()) showMessage(description);
  updateButtons();
}

void BoardPanel::setCapabilities(const QVector<QPair<QString, QString>>& rows) {
  capabilities_->setRowCount(rows.size());
  for (int i = 0; i < rows.size(); ++i) {
    capabilities_->setItem(i, 0, new QTableWidgetItem(rows[i].first));
    auto* value = new QTableWidgetItem(rows[i].second);
    value->setToolTip(rows[i].second);
    capabilities_->setItem(i, 1, value);
  }
}

QString BoardPanel::capability(const QString& label) const {
  for (int i = 0; i < capabilities_->rowCount(); ++i) {
    if (capabilities_->item(i, 0)->text() == label) return capabilities_->item(i, 1)->text();
  }
  return QString();
}

void BoardPanel::setUploadProgress(qint64 done, qint64 total, double kb_per_s) {
  progress_->setRange(0, 1000);
  progress_->setValue(total > 0 ? static_cast<int>(1000 * done / total) : 0);
  progress_->setFormat(tr("%1 / %2 bytes, %3 KB/s")
                           .arg(done)
                           .arg(total)
                           .arg(kb_per_s, 0, 'f', kb_per_s < 10 ? 2 : 1));
}

void BoardPanel::setBusy(const QString& what) {
  busy_ = what;
  if (what.isEmpty() && progress_->format().endsWith("...")) progress_->setFormat(tr("idle"));
  if (!what.isEmpty() && what != "uploading") progress_->setFormat(what + "...");
  updateButtons();
}

void BoardPanel::showMessage(const QString& text) {
  status_->setStyleSheet(QString());
  status_->setText(text);
}

void BoardPanel::showError(const QString& text) {
  status_->setStyleSheet("color: #b00020;");
  status_->setText(text);
}

QString BoardPanel::statusText() const { return status_->text(); }

void BoardPanel::addFrames(const QVector<BoardFrameRow>& frames) {
  if (console_paused_->isChecked()) {
    skipped_frames_ += frames.size();
    console_skipped_->setText(tr("%1 frames not shown").arg(skipped_frames_));
    return;
  }
  QString text;
  for (const BoardFrameRow& f : frames) {
    if (!text.isEmpty()) text += '\n';
    text += QString("%1 %2 %3 %4 %5")
                .arg(f.outgoing ? "->" : "<-")
                .arg(f.type, -16)
                .arg(f.sequence, 5)
                .arg(f.length, 5)
                .arg(f.crc_ok ? "ok" : "BAD");
  }
  if (!text.isEmpty()) console_->appendPlainText(text);
}

int BoardPanel::consoleRows() const {
  return console_->toPlainText().isEmpty() ? 0 : console_->blockCount();
}

QString BoardPanel::consoleText() const { return console_->toPlainText(); }

void BoardPanel::setConsolePaused(bool paused) { console_paused_->setChecked(paused); }

void BoardPanel::updateButtons() {
  const bool idle = busy_.isEmpty();
  port_->setEnabled(!connected_ && idle);
  baud_->setEnabled(!connected_ && idle);
  dtr_->setEnabled(!connected_ && idle);
  refresh_->setEnabled(!connected_ && idle);
  connect_->setEnabled(idle || connected_);  // Disconnect also stops a run
  flash_->setEnabled(idle);
  upload_->setEnabled(connected_ && idle);
  train_->setEnabled(connected_ && idle);
  download_->setEnabled(connected_ && idle);
  bench_->setEnabled(connected_ && idle);
  stop_->setEnabled(connected_ && busy_ == "training");
}

}  // namespace gruwb::views
