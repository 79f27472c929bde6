#include "views/graph_view.h"

#include <QApplication>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsSceneMouseEvent>
#include <QHBoxLayout>
#include <QImage>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPainterPath>
#include <QSaveFile>
#include <QScrollBar>
#include <QSvgGenerator>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <set>

namespace gruwb::views {

// ---------------------------------------------------------------------------
// Drawing constants and colours (Netron's palette for op categories).

namespace {

QColor headerColor(const std::string& op) {
  static const std::set<std::string> layer = {"FULLY_CONNECTED",
                                              "CONV_2D",
                                              "DEPTHWISE_CONV_2D",
                                              "TRANSPOSE_CONV",
                                              "GRU",
                                              "GRUWB_GRU",
                                              "UNIDIRECTIONAL_SEQUENCE_LSTM",
                                              "UNIDIRECTIONAL_SEQUENCE_RNN",
                                              "BIDIRECTIONAL_SEQUENCE_LSTM",
                                              "LSTM",
                                              "RNN",
                                              "SVDF",
                                              "BATCH_MATMUL",
                                              "EMBEDDING_LOOKUP"};
  static const std::set<std::string> activation = {
      "LOGISTIC",    "TANH",       "RELU", "RELU6", "RELU_N1_TO_1", "SOFTMAX",
      "LOG_SOFTMAX", "HARD_SWISH", "ELU",  "PRELU", "LEAKY_RELU",   "GELU"};
  static const std::set<std::string> control = {"WHILE", "IF", "CALL_ONCE"};
  static const std::set<std::string> shape = {
      "RESHAPE",     "TRANSPOSE", "GATHER",        "GATHER_ND", "SLICE",   "STRIDED_SLICE",
      "UNPACK",      "PACK",      "CONCATENATION", "SPLIT",     "SPLIT_V", "SQUEEZE",
      "EXPAND_DIMS", "FILL",      "SHAPE",         "TILE"};
  if (layer.count(op) || op.rfind("GRUWB", 0) == 0) return QColor(0x33, 0x55, 0x88);
  if (activation.count(op)) return QColor(0x70, 0x29, 0x21);
  if (control.count(op)) return QColor(0x55, 0x3f, 0x8f);
  if (shape.count(op)) return QColor(0x6c, 0x4f, 0x47);
  return QColor(0x4a, 0x4a, 0x4a);
}

const QColor kSelection(0x1e, 0x88, 0xe5);
const QColor kNote(0xe0, 0x8a, 0x00);
const QColor kEdge(0x70, 0x70, 0x70);

QString elide(const std::string& text, int max_chars) {
  const QString q = QString::fromStdString(text);
  return q.size() <= max_chars ? q : q.left(max_chars / 2 - 1) + "…" + q.right(max_chars / 2);
}

struct Metrics {
  QFont font;
  QFont bold;
  QFont small;
  double line = 14;  // font height
  double pad = 7;
};

Metrics metricsFor(const QFont& base) {
  Metrics m;
  m.font = base;
  m.bold = base;
  m.bold.setBold(true);
  m.small = base;
  m.small.setPointSizeF(base.pointSizeF() > 0 ? base.pointSizeF() * 0.9 : 8);
  m.line = QFontMetricsF(base).height();
  m.pad = std::round(m.line * 0.5);
  return m;
}

}  // namespace

// ---------------------------------------------------------------------------
// Scene items.

// A clickable chip inside a node: a constant weight (shows it in the tensor
// inspector) or a called subgraph (opens it).
class GraphChipItem : public QGraphicsItem {
 public:
  GraphChipItem(GraphView* owner, QGraphicsItem* parent, const QRectF& rect, QString text,
                const QFont& font, int tensor, int subgraph, bool variable, bool checkable = false)
      : QGraphicsItem(parent),
        owner_(owner),
        rect_(rect),
        text_(std::move(text)),
        font_(font),
        tensor_(tensor),
        subgraph_(subgraph),
        variable_(variable),
        checkable_(checkable) {
    setCursor(Qt::PointingHandCursor);
  }
  QRectF boundingRect() const override { return rect_.adjusted(-1, -1, 1, 1); }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    const bool link = subgraph_ >= 0;
    painter->setPen(QPen(link ? QColor(0x55, 0x3f, 0x8f) : QColor(0xb0, 0xb0, 0xb0), 1));
    painter->setBrush(link        ? QColor(0xee, 0xe9, 0xf8)
                      : variable_ ? QColor(0xfd, 0xf3, 0xdc)
                                  : QColor(0xf2, 0xf2, 0xf2));
    painter->drawRoundedRect(rect_, 3, 3);
    double text_left = 5;
    if (checkable_) {
      // The custom trainable set: a tick box in front of the weight's label.
      const QRectF box = checkBox();
      const bool checked = owner_->isWeightChecked(tensor_);
      painter->setPen(QPen(checked ? kSelection : QColor(0x80, 0x80, 0x80), 1));
      painter->setBrush(checked ? kSelection : Qt::white);
      painter->drawRect(box);
      if (checked) {
        painter->setPen(QPen(Qt::white, std::max(1.5, box.width() / 6)));
        painter->drawPolyline(
            QPolygonF{box.topLeft() + QPointF(box.width() * 0.2, box.height() * 0.52),
                      box.topLeft() + QPointF(box.width() * 0.42, box.height() * 0.74),
                      box.topLeft() + QPointF(box.width() * 0.8, box.height() * 0.28)});
      }
      text_left = box.right() - rect_.left() + 4;
    }
    painter->setFont(font_);
    painter->setPen(link ? QColor(0x3b, 0x2a, 0x70) : QColor(0x30, 0x30, 0x30));
    painter->drawText(rect_.adjusted(text_left, 0, -5, 0), Qt::AlignVCenter | Qt::AlignLeft, text_);
  }
  int tensor() const { return tensor_; }
  bool checkable() const { return checkable_; }
  // The tick box, in item coordinates (tests click its centre).
  QRectF checkBox() const {
    const double side = std::round(rect_.height() * 0.66);
    return QRectF(rect_.left() + 4, rect_.center().y() - side / 2, side, side);
  }

 protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override {
    if (event->button() != Qt::LeftButton) return QGraphicsItem::mousePressEvent(event);
    if (checkable_ && event->pos().x() <= checkBox().right() + 2) {
      owner_->setWeightChecked(tensor_, !owner_->isWeightChecked(tensor_));
      update();
      event->accept();
      return;
    }
    // Queued: opening a subgraph rebuilds the scene, which deletes this item.
    GraphView* owner = owner_;
    const int subgraph = subgraph_;
    const int tensor = tensor_;
    QMetaObject::invokeMethod(
        owner,
        [owner, subgraph, tensor] {
          if (subgraph >= 0) {
            owner->openSubgraph(subgraph);
          } else {
            owner->tensorClicked(tensor);
          }
        },
        Qt::QueuedConnection);
    event->accept();
  }

 private:
  GraphView* owner_;
  QRectF rect_;
  QString text_;
  QFont font_;
  int tensor_;
  int subgraph_;
  bool variable_;
  bool checkable_;
};

class GraphNodeItem : public QGraphicsItem {
 public:
  GraphNodeItem(GraphView* owner, int index, const GraphNode& node, const Metrics& m,
                const QString& note)
      : owner_(owner), index_(index), node_(node), metrics_(m), note_(note) {
    setFlag(ItemIsSelectable);
    measure();
  }

  QSizeF size() const { return size_; }
  QRectF boundingRect() const override {
    return QRectF(QPointF(0, 0), size_).adjusted(-3, -3, 3, 3);
  }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    const QRectF box(QPointF(0, 0), size_);
    const Metrics& m = metrics_;
    painter->setRenderHint(QPainter::Antialiasing);
    if (node_.kind != GraphNode::Kind::kOp) {
      // Terminals: a grey pill with the tensor's name and shape.
      painter->setPen(
          QPen(isSelected() ? kSelection : QColor(0x90, 0x90, 0x90), isSelected() ? 2.5 : 1));
      painter->setBrush(node_.kind == GraphNode::Kind::kInput ? QColor(0xe8, 0xee, 0xf4)
                                                              : QColor(0xee, 0xf4, 0xe8));
      painter->drawRoundedRect(box, box.height() / 2, box.height() / 2);
      painter->setPen(Qt::black);
      painter->setFont(m.bold);
      const QString role = node_.kind == GraphNode::Kind::kInput ? "input" : "output";
      painter->drawText(box.adjusted(m.pad * 1.5, 0, -m.pad, -box.height() / 2),
                        Qt::AlignLeft | Qt::AlignBottom, role + "  " + elide(node_.title, 40));
      painter->setFont(m.font);
      painter->setPen(QColor(0x40, 0x40, 0x40));
      painter->drawText(box.adjusted(m.pad * 1.5, box.height() / 2, -m.pad, 0),
                        Qt::AlignLeft | Qt::AlignTop, QString::fromStdString(node_.shape));
      return;
    }
    const QColor header = headerColor(node_.title);
    const QColor outline = isSelected() ? kSelection : !note_.isEmpty() ? kNote : header;
    painter->setPen(QPen(outline, isSelected() || !note_.isEmpty() ? 2.5 : 1));
    painter->setBrush(Qt::white);
    painter->drawRoundedRect(box, 4, 4);
    // Header band with the op name and its index.
    // Rounded top corners, square bottom edge.
    painter->setPen(Qt::NoPen);
    painter->setBrush(header);
    painter->drawRoundedRect(QRectF(0, 0, size_.width(), header_h_), 4, 4);
    painter->drawRect(QRectF(0, header_h_ / 2, size_.width(), header_h_ / 2));
    painter->setPen(Qt::white);
    painter->setFont(m.bold);
    painter->drawText(QRectF(m.pad, 0, size_.width() - 2 * m.pad, header_h_),
                      Qt::AlignVCenter | Qt::AlignLeft, elide(node_.title, 32));
    painter->setFont(m.small);
    painter->setPen(QColor(0xdd, 0xdd, 0xdd));
    painter->drawText(QRectF(m.pad, 0, size_.width() - 2 * m.pad, header_h_),
                      Qt::AlignVCenter | Qt::AlignRight, QString("#%1").arg(node_.op));
    double y = header_h_;
    if (!node_.activation.empty()) {
      // Fused activation as its own strip in the activation colour, so it
      // reads like the chained node Netron draws.
      const QRectF strip(0, y, size_.width(), m.line * 1.2);
      painter->fillRect(strip.adjusted(1, 0, -1, 0), QColor(0x70, 0x29, 0x21));
      painter->setPen(Qt::white);
      painter->setFont(m.small);
      painter->drawText(strip.adjusted(m.pad, 0, -m.pad, 0), Qt::AlignVCenter | Qt::AlignLeft,
                        QString::fromStdString(node_.activation));
      y += strip.height();
    }
    painter->setFont(m.font);
    painter->setPen(QColor(0x20, 0x20, 0x20));
    painter->drawText(QRectF(m.pad, y, size_.width() - 2 * m.pad, m.line * 1.3),
                      Qt::AlignVCenter | Qt::AlignLeft, QString::fromStdString(node_.shape));
    if (!note_.isEmpty()) {
      const QRectF strip(1, size_.height() - m.line * 1.3, size_.width() - 2, m.line * 1.3 - 1);
      painter->fillRect(strip, QColor(0xff, 0xf0, 0xd0));
      painter->setPen(QColor(0x80, 0x4a, 0x00));
      QFont link = m.small;  // clickable: drawn as a link
      link.setUnderline(true);
      painter->setFont(link);
      painter->drawText(strip.adjusted(m.pad, 0, -m.pad, 0), Qt::AlignVCenter | Qt::AlignLeft,
                        note_);
    }
  }

  void addChips(GraphView* owner) {
    const Metrics& m = metrics_;
    double y = chips_top_;
    const double chip_h = m.line * 1.2;
    const double width = size_.width() - 2 * m.pad;
    for (size_t i = 0; i < node_.called_subgraphs.size(); ++i) {
      new GraphChipItem(owner, this, QRectF(m.pad, y, width, chip_h),
                        QString::fromStdString(node_.called_labels[i]) + "  ▸", m.small, -1,
                        node_.called_subgraphs[i], false);
      y += chip_h + 3;
    }
    for (const GraphBadge& badge : node_.badges) {
      const bool checkable = owner->isTrainableWeight(badge.tensor);
      auto* chip = new GraphChipItem(owner, this, QRectF(m.pad, y, width, chip_h),
                                     QString::fromStdString(badge.label), m.small, badge.tensor, -1,
                                     badge.variable, checkable);
      chip->setToolTip(checkable
                           ? GraphView::tr("tensor %1 %2\nTick to train it in the custom stage")
                                 .arg(badge.tensor)
                                 .arg(owner->tensorName(badge.tensor))
                           : QString("tensor %1").arg(badge.tensor));
      y += chip_h + 3;
    }
  }

 protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override {
    // The note strip is a link: it runs what the note offers (e.g. Fuse).
    if (!note_.isEmpty() && event->button() == Qt::LeftButton &&
        event->pos().y() >= size_.height() - metrics_.line * 1.3) {
      GraphView* owner = owner_;
      const int index = index_;
      QMetaObject::invokeMethod(
          owner, [owner, index] { owner->noteClicked(index); }, Qt::QueuedConnection);
      event->accept();
      return;
    }
    QGraphicsItem::mousePressEvent(event);
  }

  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override {
    // Queued: opening a subgraph rebuilds the scene, which deletes this item.
    GraphView* owner = owner_;
    const int index = index_;
    QMetaObject::invokeMethod(
        owner, [owner, index] { owner->itemActivated(index); }, Qt::QueuedConnection);
    event->accept();
  }

 private:
  void measure() {
    const Metrics& m = metrics_;
    const QFontMetricsF bold(m.bold), plain(m.font), small(m.small);
    if (node_.kind != GraphNode::Kind::kOp) {
      const double w = std::max(bold.horizontalAdvance("output  " + elide(node_.title, 40)),
                                plain.horizontalAdvance(QString::fromStdString(node_.shape)));
      size_ = QSizeF(std::ceil(w + 3 * m.pad), std::ceil(m.line * 2.4));
      return;
    }
    header_h_ = std::ceil(m.line * 1.5);
    double w = bold.horizontalAdvance(elide(node_.title, 32)) +
               small.horizontalAdvance(QString("#%1").arg(node_.op)) + 3 * m.pad;
    w = std::max(w, plain.horizontalAdvance(QString::fromStdString(node_.shape)) + 2 * m.pad);
    double h = header_h_ + m.line * 1.3;
    if (!node_.activation.empty()) h += m.line * 1.2;
    chips_top_ = h;
    const double chip_h = m.line * 1.2;
    for (const std::string& label : node_.called_labels) {
      w = std::max(w,
                   small.horizontalAdvance(QString::fromStdString(label) + "  ▸") + 10 + 2 * m.pad);
      h += chip_h + 3;
    }
    for (const GraphBadge& badge : node_.badges) {
      // Room for the tick box of a trainable weight.
      const double box =
          owner_->isTrainableWeight(badge.tensor) ? std::round(chip_h * 0.66) + 4 : 0;
      w = std::max(
          w, small.horizontalAdvance(QString::fromStdString(badge.label)) + 10 + box + 2 * m.pad);
      h += chip_h + 3;
    }
    if (!node_.badges.empty() || !node_.called_labels.empty()) h += m.pad - 3;
    if (!note_.isEmpty()) {
      w = std::max(w, small.horizontalAdvance(note_) + 2 * m.pad);
      h += m.line * 1.3;
    }
    size_ = QSizeF(std::ceil(std::max(w, m.line * 8)), std::ceil(h));
  }

  GraphView* owner_;
  int index_;
  GraphNode node_;
  Metrics metrics_;
  QString note_;
  QSizeF size_;
  double header_h_ = 0;
  double chips_top_ = 0;
};

// An activation tensor from its writer to one reader; selecting it shows the
// tensor in the inspector.
class GraphEdgeItem : public QGraphicsPathItem {
 public:
  GraphEdgeItem(const std::vector<LayoutPoint>& points, int tensor) : tensor_(tensor) {
    QPainterPath path(QPointF(points[0].x, points[0].y));
    for (size_t i = 1; i < points.size(); ++i) {
      const QPointF a(points[i - 1].x, points[i - 1].y);
      const QPointF b(points[i].x, points[i].y);
      if (std::abs(a.x() - b.x()) < 0.5) {
        path.lineTo(b);
      } else {
        const double dy = (b.y() - a.y()) / 2;
        path.cubicTo(QPointF(a.x(), a.y() + dy), QPointF(b.x(), b.y() - dy), b);
      }
    }
    setPath(path);
    end_ = QPointF(points.back().x, points.back().y);
    setPen(QPen(kEdge, 1.3));
    setFlag(ItemIsSelectable);
    setZValue(-1);
  }
  int tensor() const { return tensor_; }
  QRectF boundingRect() const override {
    return QGraphicsPathItem::boundingRect().adjusted(-6, -8, 6, 2);
  }
  QPainterPath shape() const override {
    QPainterPathStroker stroker;
    stroker.setWidth(8);  // easy to click
    return stroker.createStroke(path());
  }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    const QColor color = isSelected() ? kSelection : kEdge;
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(QPen(color, isSelected() ? 2.5 : 1.3));
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path());
    QPolygonF arrow;
    arrow << end_ << end_ + QPointF(-4, -8) << end_ + QPointF(4, -8);
    painter->setPen(Qt::NoPen);
    painter->setBrush(color);
    painter->drawPolygon(arrow);
  }

 private:
  int tensor_;
  QPointF end_;
};

// ---------------------------------------------------------------------------

GraphCanvas::GraphCanvas(QWidget* parent) : QGraphicsView(parent) {
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setBackgroundBrush(QColor(0xfb, 0xfb, 0xfb));
}

void GraphCanvas::setZoom(double zoom) {
  zoom = std::clamp(zoom, kMinZoom, kMaxZoom);
  QTransform t;
  t.scale(zoom, zoom);
  setTransform(t);
}

void GraphCanvas::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) return QGraphicsView::wheelEvent(event);
  const double factor = std::pow(1.15, steps);
  const double target = std::clamp(zoom() * factor, kMinZoom, kMaxZoom);
  scale(target / zoom(), target / zoom());
  event->accept();
}

GraphView::GraphView(QWidget* parent) : QWidget(parent) {
  crumbs_ = new QHBoxLayout;
  crumbs_->setSpacing(2);
  find_field_ = new QLineEdit;
  find_field_->setPlaceholderText(tr("Find op or tensor (Ctrl+F)"));
  find_field_->setClearButtonEnabled(true);
  find_field_->setMaximumWidth(320);
  find_status_ = new QLabel;
  connect(find_field_, &QLineEdit::returnPressed, this, [this] { find(find_field_->text()); });
  auto* fit = new QToolButton;
  fit->setText(tr("Fit"));
  fit->setToolTip(tr("Fit the whole graph in the view"));
  connect(fit, &QToolButton::clicked, this, &GraphView::fitToView);
  auto* actual = new QToolButton;
  actual->setText(tr("100%"));
  actual->setToolTip(tr("Actual size"));
  connect(actual, &QToolButton::clicked, this, [this] { canvas_->setZoom(1.0); });

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 2, 4, 2);
  bar->addLayout(crumbs_);
  bar->addStretch(1);
  bar->addWidget(find_status_);
  bar->addWidget(find_field_, 1);
  bar->addWidget(fit);
  bar->addWidget(actual);

  scene_ = new QGraphicsScene(this);
  canvas_ = new GraphCanvas;
  canvas_->setScene(scene_);
  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(bar);
  layout->addWidget(canvas_, 1);
}

// The scene is a child: QWidget's destructor deletes it after this object is no longer a
// GraphView, and clearing its items emits selectionChanged into onSelectionChanged.
GraphView::~GraphView() { scene_->disconnect(this); }

void GraphView::setReport(const tools::AnalyzerReport& report) {
  report_ = report;
  // Names of another model mean nothing here.
  checked_weights_.clear();
  has_report_ = true;
  notes_.assign(report_.subgraphs.size(), {});
  stack_ = {0};
  rebuildScene();
  rebuildBreadcrumb();
  emit subgraphShown(0);
}

void GraphView::clear() {
  report_ = tools::AnalyzerReport();
  has_report_ = false;
  stack_.clear();
  notes_.clear();
  graph_ = GraphModel();
  layout_ = GraphLayout();
  node_items_.clear();
  scene_->clear();
  rebuildBreadcrumb();
}

bool GraphView::openSubgraph(int index) {
  if (!has_report_ || index < 0 || index >= static_cast<int>(report_.subgraphs.size())) {
    return false;
  }
  stack_.push_back(index);
  rebuildScene();
  rebuildBreadcrumb();
  emit subgraphShown(index);
  return true;
}

void GraphView::goBackTo(int depth) {
  if (depth < 0 || depth >= static_cast<int>(stack_.size())) return;
  stack_.resize(depth + 1);
  rebuildScene();
  rebuildBreadcrumb();
  emit subgraphShown(stack_.back());
}

int GraphView::currentSubgraph() const { return stack_.empty() ? -1 : stack_.back(); }

QStringList GraphView::breadcrumb() const {
  QStringList names;
  for (int index : stack_) {
    const std::string& name = report_.subgraphs[index].name;
    names << (name.empty() ? QString("subgraph %1").arg(index) : QString::fromStdString(name));
  }
  return names;
}

QList<int> GraphView::breadcrumbIndices() const { return QList<int>(stack_.begin(), stack_.end()); }

bool GraphView::activateNode(int node) {
  if (node < 0 || node >= nodeCount()) return false;
  const int target = primary_called_subgraph(graph_.nodes[node]);
  return target >= 0 && openSubgraph(target);
}

void GraphView::itemActivated(int node) { activateNode(node); }

void GraphView::noteClicked(int node) {
  if (node < 0 || node >= nodeCount()) return;
  emit noteActivated(currentSubgraph(), graph_.nodes[node].op);
}

void GraphView::tensorClicked(int tensor) {
  scene_->clearSelection();
  emit tensorSelected(currentSubgraph(), tensor);
}

bool GraphView::isTrainableWeight(int tensor) const {
  const int index = currentSubgraph();
  if (!has_report_ || index < 0) return false;
  const auto& tensors = report_.subgraphs[index].tensors;
  if (tensor < 0 || tensor >= static_cast<int>(tensors.size())) return false;
  const tools::TensorReport& t = tensors[tensor];
  // The kernel list's weight inputs (the trainer's scopes use the same fact).
  return t.trainable_weight && !t.name.empty();
}

QString GraphView::tensorName(int tensor) const {
  const int index = currentSubgraph();
  if (!has_report_ || index < 0) return {};
  const auto& tensors = report_.subgraphs[index].tensors;
  if (tensor < 0 || tensor >= static_cast<int>(tensors.size())) return {};
  return QString::fromStdString(tensors[tensor].name);
}

QStringList GraphView::trainableWeightNames() const {
  QStringList names;
  for (const tools::SubgraphReport& subgraph : report_.subgraphs) {
    for (const tools::TensorReport& t : subgraph.tensors) {
      const QString name = QString::fromStdString(t.name);
      if (t.trainable_weight && !name.isEmpty() && !names.contains(name)) {
        names << name;
      }
    }
  }
  return names;
}

bool GraphView::isWeightChecked(int tensor) const {
  return isTrainableWeight(tensor) && checked_weights_.contains(tensorName(tensor));
}

bool GraphView::setWeightChecked(int tensor, bool checked) {
  if (!isTrainableWeight(tensor)) return false;
  const QString name = tensorName(tensor);
  if (checked == checked_weights_.contains(name)) return true;
  if (checked) {
    checked_weights_ << name;
  } else {
    checked_weights_.removeAll(name);
  }
  scene_->update();
  emit checkedWeightsChanged(checked_weights_);
  return true;
}

void GraphView::setCheckedWeights(const QStringList& names) {
  checked_weights_ = names;
  scene_->update();
}

void GraphView::setOpNote(int subgraph, int op, const QString& note) {
  if (subgraph < 0 || subgraph >= static_cast<int>(notes_.size())) return;
  notes_[subgraph].emplace_back(op, note);
  if (subgraph == currentSubgraph()) rebuildScene();
}

void GraphView::rebuildScene() {
  node_items_.clear();
  scene_->clear();
  last_find_.clear();
  find_cursor_ = -1;
  find_status_->clear();
  if (!has_report_ || stack_.empty()) return;
  const int index = stack_.back();
  graph_ = build_graph(report_, index);

  const Metrics m = metricsFor(font());
  std::vector<LayoutSize> sizes;
  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    QString note;
    for (const auto& entry : notes_[index]) {
      if (graph_.nodes[n].kind == GraphNode::Kind::kOp && entry.first == graph_.nodes[n].op) {
        note = entry.second;
      }
    }
    auto* item = new GraphNodeItem(this, static_cast<int>(n), graph_.nodes[n], m, note);
    item->addChips(this);
    if (!note.isEmpty()) item->setToolTip(note);
    node_items_.push_back(item);
    sizes.push_back({item->size().width(), item->size().height()});
  }
  std::vector<std::pair<int, int>> edges;
  for (const GraphEdge& edge : graph_.edges) edges.emplace_back(edge.from, edge.to);
  LayoutOptions options;
  options.node_gap = std::round(m.line * 1.6);
  options.layer_gap = std::round(m.line * 2.6);
  layout_ = layout_graph(sizes, edges, options);

  for (size_t n = 0; n < node_items_.size(); ++n) {
    node_items_[n]->setPos(layout_.nodes[n].x, layout_.nodes[n].y);
    scene_->addItem(node_items_[n]);
  }
  const tools::SubgraphReport& subgraph = report_.subgraphs[index];
  for (size_t e = 0; e < graph_.edges.size(); ++e) {
    if (layout_.edges[e].size() < 2) continue;
    auto* item = new GraphEdgeItem(layout_.edges[e], graph_.edges[e].tensor);
    const tools::TensorReport& tensor = subgraph.tensors[graph_.edges[e].tensor];
    item->setToolTip(QString("T#%1 %2\n%3 %4")
                         .arg(tensor.index)
                         .arg(QString::fromStdString(tensor.name),
                              QString::fromStdString(shape_text(tensor.shape)),
                              QString::fromStdString(tensor.type)));
    scene_->addItem(item);
  }
  const double margin = m.line * 2;
  scene_->setSceneRect(-margin, -margin, layout_.width + 2 * margin, layout_.height + 2 * margin);

  // Small graphs fit the view; tall ones (unrolled RNNs, WHILE bodies) open readable at the
  // top instead of shrunk to a stripe.
  fit(1.0);
}

void GraphView::rebuildBreadcrumb() {
  while (QLayoutItem* item = crumbs_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  const QStringList names = breadcrumb();
  for (int i = 0; i < names.size(); ++i) {
    if (i > 0) crumbs_->addWidget(new QLabel("›"));
    auto* button = new QToolButton;
    button->setText(names[i]);
    button->setAutoRaise(true);
    button->setToolTip(i + 1 < names.size() ? tr("Back to %1").arg(names[i]) : QString());
    button->setEnabled(i + 1 < names.size());
    if (i + 1 == names.size()) {
      QFont bold = button->font();
      bold.setBold(true);
      button->setFont(bold);
    }
    connect(button, &QToolButton::clicked, this, [this, i] { goBackTo(i); });
    crumbs_->addWidget(button);
  }
}

int GraphView::selectedNode() const {
  for (size_t n = 0; n < node_items_.size(); ++n) {
    if (node_items_[n]->isSelected()) return static_cast<int>(n);
  }
  return -1;
}

void GraphView::selectNode(int node, bool center) {
  if (node < 0 || node >= static_cast<int>(node_items_.size())) return;
  scene_->clearSelection();
  node_items_[node]->setSelected(true);
  if (center) canvas_->centerOn(node_items_[node]);
}

QRectF GraphView::nodeRect(int node) const {
  if (node < 0 || node >= static_cast<int>(node_items_.size())) return {};
  return QRectF(node_items_[node]->pos(), node_items_[node]->size());
}

void GraphView::onSelectionChanged() {
  const QList<QGraphicsItem*> selected = scene_->selectedItems();
  if (selected.isEmpty()) return;
  if (auto* edge = dynamic_cast<GraphEdgeItem*>(selected.first())) {
    emit tensorSelected(currentSubgraph(), edge->tensor());
    return;
  }
  const int node = selectedNode();
  if (node < 0) return;
  const GraphNode& info = graph_.nodes[node];
  if (info.kind == GraphNode::Kind::kOp) {
    emit opSelected(currentSubgraph(), info.op);
  } else {
    emit tensorSelected(currentSubgraph(), info.tensor);
  }
}

int GraphView::find(const QString& text) {
  if (!has_report_) return 0;
  const std::vector<int> matches =
      find_nodes(graph_, report_.subgraphs[currentSubgraph()], text.trimmed().toStdString());
  if (matches.empty()) {
    find_status_->setText(text.trimmed().isEmpty() ? QString() : tr("no match"));
    return 0;
  }
  // Pressing Enter again with the same text walks through the matches.
  find_cursor_ = text == last_find_ ? (find_cursor_ + 1) % static_cast<int>(matches.size()) : 0;
  last_find_ = text;
  // A match shrunk to a few pixels (after Fit on a long graph) is not found for the user:
  // zoom back to actual size, then centre it.
  if (canvas_->zoom() < kReadableZoom) canvas_->setZoom(1.0);
  selectNode(matches[find_cursor_]);
  find_status_->setText(tr("%1 of %2").arg(find_cursor_ + 1).arg(matches.size()));
  return static_cast<int>(matches.size());
}

void GraphView::focusFind() {
  find_field_->setFocus(Qt::ShortcutFocusReason);
  find_field_->selectAll();
}

void GraphView::fitToView() { fit(GraphCanvas::kMaxZoom); }

double GraphView::minimumReadableZoom() const { return kMinLabelPixels / metricsFor(font()).line; }

double GraphView::labelPixelHeight() const { return canvas_->zoom() * metricsFor(font()).line; }

void GraphView::fit(double max_zoom) {
  const QRectF scene = scene_->sceneRect();
  if (scene.isEmpty()) return;
  const QSize viewport = canvas_->viewport()->size();
  const double whole =
      std::min(viewport.width() / scene.width(), viewport.height() / scene.height());
  if (whole >= minimumReadableZoom()) {
    canvas_->setZoom(std::min(whole, max_zoom));
    canvas_->centerOn(scene.center());
    return;
  }
  // Too tall (or wide) to fit readably: the width at a readable zoom, the top in view.
  const double width_fit = viewport.width() / scene.width();
  canvas_->setZoom(
      std::clamp(width_fit, minimumReadableZoom(), std::max(1.0, minimumReadableZoom())));
  const double half_height = viewport.height() / (2 * canvas_->zoom());
  canvas_->centerOn(scene.center().x(), scene.top() + half_height);
}

bool GraphView::exportImage(const QString& path, QString* error) const {
  if (!has_report_) {
    *error = tr("no graph to export");
    return false;
  }
  const QRectF source = scene_->sceneRect();
  // Selection highlights are view state, not part of the picture.
  const QList<QGraphicsItem*> selected = scene_->selectedItems();
  for (QGraphicsItem* item : selected) item->setSelected(false);
  bool ok = false;
  // QSaveFile: the old file stays intact until the new one is complete.
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    *error = tr("%1: %2").arg(path, file.errorString());
  } else if (QFileInfo(path).suffix().compare("svg", Qt::CaseInsensitive) == 0) {
    QSvgGenerator svg;
    svg.setOutputDevice(&file);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(QString("%1 — %2").arg(QFileInfo(QString::fromStdString(report_.path)).fileName(),
                                        QString::fromStdString(graph_.name)));
    svg.setDescription(tr("Graph exported by GRU Workbench"));
    QPainter painter;
    ok = painter.begin(&svg);
    if (ok) {
      scene_->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
      ok = painter.end() && file.commit();
    }
  } else {
    // 2x for sharp text; huge graphs are scaled down to stay below 16k pixels
    // per side (QImage's practical limit).
    const double scale = std::min(2.0, 16000.0 / std::max(source.width(), source.height()));
    QImage image((source.size() * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) {
      *error = tr("%1: graph too large for an image").arg(path);
    } else {
      image.fill(Qt::white);
      QPainter painter(&image);
      painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
      scene_->render(&painter, QRectF(QPointF(0, 0), image.size()), source);
      painter.end();
      ok = image.save(&file, "PNG") && file.commit();
    }
  }
  for (QGraphicsItem* item : selected) item->setSelected(true);
  if (!ok && error->isEmpty()) *error = tr("%1: cannot write the image").arg(path);
  return ok;
}

}  // namespace gruwb::views
