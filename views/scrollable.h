#pragma once
// A dock's content in a vertical scroll area, so its form or plots never set the main window's
// minimum height above a 1366x768 screen (issue 20): it keeps its full width and scrolls when
// the dock is shorter than the content's minimum.

class QScrollArea;
class QWidget;

namespace gruwb::views {

QScrollArea* scrollable(QWidget* widget);

}  // namespace gruwb::views
