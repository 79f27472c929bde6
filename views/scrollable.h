#pragma once
// A dock's content in a vertical scroll area, so its form or plots never set the main window's
// minimum height above a 1366x768 screen (issue 20): it keeps its full width and scrolls when
// the dock is shorter than the content's minimum.

class QScrollArea;
class QWidget;

namespace gruwb::views {

QScrollArea* scrollable(QWidget* widget);
// The same with `footer` pinned below the scroll area, always visible however short the dock
// (the Experiments panel's Start/Pause/Stop, issue 20 point 3).
QWidget* scrollable(QWidget* widget, QWidget* footer);

}  // namespace gruwb::views
