#include "views/wrapped_text_delegate.h"

#include <QApplication>
#include <QHeaderView>
#include <QPainter>
#include <QTextLayout>
#include <QTreeView>
#include <algorithm>
#include <cmath>

namespace gruwb::views {
namespace {

QTextOption wrapping() {
  QTextOption option;
  option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  return option;
}

int textMargin(const QWidget* widget) {
  const QStyle* style = widget ? widget->style() : QApplication::style();
  return style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
}

}  // namespace

WrappedTextDelegate::WrappedTextDelegate(QTreeView* view) : QStyledItemDelegate(view), view_(view) {
  view->setItemDelegate(this);
  view->setWordWrap(true);
  connect(view->header(), &QHeaderView::sectionResized, view, [view] { view->doItemsLayout(); });
}

int WrappedTextDelegate::wrappedHeight(const QFont& font, int width, const QString& text) {
  QTextLayout layout(text, font);
  layout.setTextOption(wrapping());
  layout.beginLayout();
  double height = 0;
  for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
    line.setLineWidth(std::max(1, width));
    height += line.height();
  }
  layout.endLayout();
  return static_cast<int>(std::ceil(height));
}

int WrappedTextDelegate::textWidth(int column) const {
  return view_->columnWidth(column) - 2 * textMargin(view_);
}

QSize WrappedTextDelegate::sizeHint(const QStyleOptionViewItem& option,
                                    const QModelIndex& index) const {
  QSize size = QStyledItemDelegate::sizeHint(option, index);
  const QString text = index.data(Qt::DisplayRole).toString();
  if (text.isEmpty()) return size;
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  int width = textWidth(index.column());
  if (index.column() == 0) {
    // Column 0 starts after the tree's indentation (and the branch arrows of a decorated root).
    int depth = view_->rootIsDecorated() ? 1 : 0;
    for (QModelIndex parent = index.parent(); parent.isValid(); parent = parent.parent()) ++depth;
    width -= depth * view_->indentation();
    if (!opt.icon.isNull()) width -= opt.decorationSize.width() + 4;
  }
  const int height = wrappedHeight(opt.font, width, text) + 4;
  size.setHeight(std::max(size.height(), height));
  return size;
}

void WrappedTextDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                const QModelIndex& index) const {
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
  const int margin = textMargin(opt.widget);
  const QRect box = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, opt.widget)
                        .adjusted(margin, 2, -margin, 0);
  const QString text = opt.text;
  opt.text.clear();  // the style draws the background, selection and icon; the text is ours
  style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, opt.widget);
  painter->save();
  painter->setFont(opt.font);
  const bool selected = opt.state & QStyle::State_Selected;
  painter->setPen(
      opt.palette.color(opt.state & QStyle::State_Enabled ? QPalette::Normal : QPalette::Disabled,
                        selected ? QPalette::HighlightedText : QPalette::Text));
  if (!selected) {
    const QVariant foreground = index.data(Qt::ForegroundRole);
    if (foreground.canConvert<QBrush>()) painter->setPen(foreground.value<QBrush>().color());
  }
  painter->drawText(QRectF(box), text, wrapping());
  painter->restore();
}

}  // namespace gruwb::views
