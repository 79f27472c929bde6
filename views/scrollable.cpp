#include "views/scrollable.h"

#include <QEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

namespace gruwb::views {
namespace {

// Scrolls vertically only; its minimum width follows the content's (a view that fills later,
// like the size view, widens its dock instead of being clipped), its minimum height is small.
class VerticalScrollArea : public QScrollArea {
 public:
  void watch(QWidget* content) { content->installEventFilter(this); }
  // The content's layout changed (a model was opened): ask the dock for the new width.
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == widget() && event->type() == QEvent::LayoutRequest) updateGeometry();
    return QScrollArea::eventFilter(watched, event);
  }
  QSize minimumSizeHint() const override {
    const int content = widget() ? widget()->minimumSizeHint().width() : 0;
    return {content + verticalScrollBar()->sizeHint().width() + 2 * frameWidth(),
            QScrollArea::minimumSizeHint().height()};
  }
};

}  // namespace

QScrollArea* scrollable(QWidget* widget) {
  auto* scroll = new VerticalScrollArea;
  scroll->setWidget(widget);
  scroll->watch(widget);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  return scroll;
}

QWidget* scrollable(QWidget* widget, QWidget* footer) {
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(scrollable(widget), 1);
  layout->addWidget(footer);
  return box;
}

}  // namespace gruwb::views
