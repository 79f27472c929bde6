#include "views/firmware_flash_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace gruwb::views {

FirmwareFlashDialog::FirmwareFlashDialog(const QVector<FirmwareChoice>& images,
                                         const QString& folders, QWidget* parent)
    : QDialog(parent), images_(images) {
  setWindowTitle(tr("Flash Firmware"));
  board_ = new QComboBox;
  board_->setObjectName("flashBoard");
  for (const FirmwareChoice& image : images_) board_->addItem(image.board);
  tool_ = new QComboBox;
  tool_->setObjectName("flashTool");
  port_ = new QLineEdit;
  port_->setObjectName("flashPort");
  port_->setPlaceholderText("/dev/ttyUSB0");
  port_->setToolTip(tr("stm32flash writes through the STM32's serial bootloader (BOOT0 high)"));
  details_ = new QLabel;
  details_->setObjectName("flashDetails");
  details_->setWordWrap(true);
  problem_ = new QLabel;
  problem_->setObjectName("flashProblem");
  problem_->setWordWrap(true);
  problem_->setStyleSheet("color: #b00020");
  auto* source = new QLabel(tr("Images from %1").arg(folders));
  source->setWordWrap(true);
  source->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* form = new QFormLayout;
  form->addRow(tr("Board"), board_);
  form->addRow(QString(), details_);
  form->addRow(tr("Tool"), tool_);
  form->addRow(tr("Port"), port_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
  flash_ = buttons->addButton(tr("Flash"), QDialogButtonBox::AcceptRole);
  flash_->setObjectName("flashButton");
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(problem_);
  layout->addWidget(source);
  layout->addWidget(buttons);

  connect(board_, &QComboBox::currentIndexChanged, this, [this] { boardChanged(); });
  connect(tool_, &QComboBox::currentIndexChanged, this, [this] { update(); });
  connect(port_, &QLineEdit::textChanged, this, [this] { update(); });
  boardChanged();
}

QString FirmwareFlashDialog::board() const { return board_->currentText(); }
QString FirmwareFlashDialog::tool() const { return tool_->currentData().toString(); }
QString FirmwareFlashDialog::port() const {
  return tool() == "stm32flash" ? port_->text().trimmed() : QString();
}
QString FirmwareFlashDialog::problem() const { return problem_->text(); }

void FirmwareFlashDialog::select(const QString& board, const QString& tool) {
  board_->setCurrentText(board);
  if (!tool.isEmpty()) tool_->setCurrentIndex(tool_->findData(tool));
}

void FirmwareFlashDialog::boardChanged() {
  tool_->clear();
  const int index = board_->currentIndex();
  if (index < 0) {
    update();
    return;
  }
  const FirmwareChoice& image = images_[index];
  details_->setText(
      tr("%1, %2 KB flash, %3 KB RAM").arg(image.cpu).arg(image.flash_kb).arg(image.ram_kb));
  // Installed tools first: the first one is what `gruwb board flash` picks by itself.
  for (const QString& t : image.tools) {
    if (image.installed.contains(t)) tool_->addItem(t, t);
  }
  for (const QString& t : image.tools) {
    if (!image.installed.contains(t)) tool_->addItem(tr("%1 (not installed)").arg(t), t);
  }
  update();
}

void FirmwareFlashDialog::update() {
  const int index = board_->currentIndex();
  QString problem;
  if (index < 0) {
    problem = tr("No firmware images found.");
  } else if (images_[index].tools.isEmpty()) {
    problem = tr("%1 is a QEMU machine: run its image with the Board dock's QEMU port, there is "
                 "nothing to flash.")
                  .arg(images_[index].board);
  } else if (!images_[index].installed.contains(tool())) {
    const FirmwareChoice& image = images_[index];
    const int t = image.tools.indexOf(tool());
    problem = tr("%1 is not installed (Debian: apt install %2).")
                  .arg(tool(), t < image.packages.size() ? image.packages[t] : tool());
  } else if (tool() == "stm32flash" && port().isEmpty()) {
    problem = tr("stm32flash needs the port of the board's serial bootloader.");
  }
  port_->setEnabled(tool() == "stm32flash");
  tool_->setEnabled(index >= 0 && !images_[index].tools.isEmpty());
  problem_->setText(problem);
  problem_->setVisible(!problem.isEmpty());
  flash_->setEnabled(problem.isEmpty());
}

}  // namespace gruwb::views
