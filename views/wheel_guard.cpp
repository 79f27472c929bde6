#include "views/wheel_guard.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>

namespace gruwb::views {

void WheelGuard::install() {
  static WheelGuard* guard = nullptr;
  if (!guard && qApp) {
    guard = new WheelGuard(qApp);
    qApp->installEventFilter(guard);
  }
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::Wheel) return false;
  auto* widget = qobject_cast<QWidget*>(watched);
  if (!widget || !(qobject_cast<QAbstractSpinBox*>(widget) || qobject_cast<QComboBox*>(widget)))
    return false;
  if (widget->hasFocus()) return false;
  // Not ours: QApplication hands an ignored wheel event on to the parent (the scroll area).
  event->ignore();
  return true;
}

}  // namespace gruwb::views
