#pragma once
// Scrolling a panel with the wheel must not change the spin boxes and combo boxes the pointer
// passes over (issue 20: "Epochs 10 -> 1"). The guard, installed once on the application, lets
// such a widget take wheel events only while it has keyboard focus; otherwise the event goes
// on to its parent, so the scroll area around it scrolls.

#include <QObject>

namespace gruwb::views {

class WheelGuard : public QObject {
 public:
  explicit WheelGuard(QObject* parent = nullptr) : QObject(parent) {}
  // On qApp: every spin box and combo box of the application.
  static void install();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace gruwb::views
