#pragma once
// An item delegate that wraps a cell's text to its column's width (at word boundaries, or
// anywhere inside a long tensor name) and makes the row as tall as the wrapped text, so a
// narrow dock shows a whole value on more lines instead of cutting it. For views whose rows
// may differ in height (QTreeView with uniformRowHeights off, the default).

#include <QStyledItemDelegate>

class QTreeView;

namespace gruwb::views {

class WrappedTextDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  // Installs itself on `view` and lays the rows out again whenever a column is resized.
  explicit WrappedTextDelegate(QTreeView* view);

  // Height of `text` wrapped to `width` pixels in `font` (the rows' height comes from it).
  static int wrappedHeight(const QFont& font, int width, const QString& text);
  // Pixels the text of a cell in `column` may use: the column less the style's margins.
  int textWidth(int column) const;

  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override;

 private:
  QTreeView* view_;
};

}  // namespace gruwb::views
