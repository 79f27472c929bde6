#pragma once
// Board > Flash firmware: which board's image to write and with which tool. A view only: it is
// given the images `gruwb board flash` would find (app/core/board_flash.h) and returns the
// choice; the Board workspace runs the tool on its worker thread.

#include <QDialog>
#include <QString>
#include <QStringList>
#include <QVector>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace gruwb::views {

struct FirmwareChoice {
  QString board;  // nucleo_f446re
  QString cpu;    // cortex-m4f
  int flash_kb = 0;
  int ram_kb = 0;
  QStringList tools;      // openocd, st-flash, stm32flash; empty: a QEMU machine only
  QStringList installed;  // those of `tools` found on PATH
  QStringList packages;   // the Debian package of each of `tools`
};

class FirmwareFlashDialog : public QDialog {
  Q_OBJECT

 public:
  // `folders`: where the images were found, shown so the user knows which build they come from.
  FirmwareFlashDialog(const QVector<FirmwareChoice>& images, const QString& folders,
                      QWidget* parent = nullptr);

  QString board() const;
  QString tool() const;
  QString port() const;  // stm32flash only: the serial port of the STM32's bootloader
  void select(const QString& board, const QString& tool = QString());
  // Why Flash is disabled ("" when it is enabled).
  QString problem() const;

 private:
  void boardChanged();
  void update();

  QVector<FirmwareChoice> images_;
  QComboBox* board_ = nullptr;
  QComboBox* tool_ = nullptr;
  QLineEdit* port_ = nullptr;
  QLabel* details_ = nullptr;
  QLabel* problem_ = nullptr;
  QPushButton* flash_ = nullptr;
};

}  // namespace gruwb::views
