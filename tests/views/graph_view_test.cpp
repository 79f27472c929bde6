// GraphView on real models: node counts, double-click on WHILE opens its
// body with a breadcrumb back, find selects, clicks select tensors, and the
// PNG/SVG exports are valid files.

#include "views/graph_view.h"

#include <QGraphicsItem>
#include <QImage>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "engine/tools/analyzer.h"
#include "tests/views/loaded_model.h"

using gruwb::tools::AnalyzerReport;
using gruwb::views::GraphNode;
using gruwb::views::GraphView;

namespace {

QString sample(const char* name) {
  return QString(GRUWB_SOURCE_DIR) + "/resources/samples/" + name;
}
QString shared(const char* name) { return QString(GRUWB_SHARED_DIR) + "/data/models/" + name; }

int nodeWithTitle(const GraphView& view, const std::string& title) {
  for (int n = 0; n < view.nodeCount(); ++n) {
    if (view.graph().nodes[n].title == title) return n;
  }
  return -1;
}

}  // namespace

class GraphViewTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir temp_;

 private slots:
  void nodeCountsOfShippedModels_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("nodes");  // inputs + ops + outputs of subgraph 0
    QTest::addColumn<int>("edges");
    // hello world: input, 3 FULLY_CONNECTED, output.
    QTest::newRow("hello_world") << shared("tflite/tflm_hello_world_float.tflite") << 5 << 4;
    // gesture GRU, fused: input, GRUWB_GRU, FULLY_CONNECTED, SOFTMAX, output.
    QTest::newRow("gesture_fused") << sample("gesture_gru_fused.tflite") << 5 << 4;
  }
  void nodeCountsOfShippedModels() {
    QFETCH(QString, path);
    QFETCH(int, nodes);
    QFETCH(int, edges);
    GraphView view;
    view.setReport(gruwb::test::analyze_file(path));
    QCOMPARE(view.nodeCount(), nodes);
    QCOMPARE(static_cast<int>(view.graph().edges.size()), edges);
    int node_items = 0;
    for (QGraphicsItem* item : view.scene()->items()) {
      node_items +=
          item->flags().testFlag(QGraphicsItem::ItemIsSelectable) && !item->parentItem() ? 1 : 0;
    }
    QCOMPARE(node_items, nodes + edges);  // nodes and edges are the selectable items
  }

  void doubleClickOnWhileOpensItsBodyAndTheBreadcrumbLeadsBack() {
    const AnalyzerReport report = gruwb::test::analyze_file(sample("gesture_gru_while.tflite"));
    GraphView view;
    view.resize(900, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setReport(report);
    QSignalSpy shown(&view, &GraphView::subgraphShown);
    const int node = nodeWithTitle(view, "WHILE");
    QVERIFY(node >= 0);
    const int body = view.graph().nodes[node].called_subgraphs[1];

    view.selectNode(node);  // centres it, so it is inside the viewport
    // On the header (the chips below it open cond/body on a single click).
    const QRectF rect = view.nodeRect(node);
    const QPoint at = view.canvas()->mapFromScene(QPointF(rect.center().x(), rect.top() + 6));
    QVERIFY(view.canvas()->viewport()->rect().contains(at));
    QTest::mouseDClick(view.canvas()->viewport(), Qt::LeftButton, Qt::NoModifier, at);

    QTRY_COMPARE(view.currentSubgraph(), body);
    QCOMPARE(shown.count(), 1);
    QCOMPARE(view.breadcrumb().size(), 2);
    QCOMPARE(view.breadcrumb().last(), QString::fromStdString(report.subgraphs[body].name));
    QCOMPARE(view.nodeCount(), static_cast<int>(view.graph().nodes.size()));
    QCOMPARE(view.graph().subgraph, body);
    // The body holds the GRU cell: its FULLY_CONNECTED ops are drawn.
    QVERIFY(nodeWithTitle(view, "FULLY_CONNECTED") >= 0);

    view.goBackTo(0);
    QCOMPARE(view.currentSubgraph(), 0);
    QCOMPARE(view.breadcrumb().size(), 1);
    // A node that calls nothing does not navigate.
    QVERIFY(!view.activateNode(nodeWithTitle(view, "SOFTMAX")));
    QCOMPARE(view.currentSubgraph(), 0);
  }

  void findSelectsAndCyclesThroughMatches() {
    GraphView view;
    view.resize(600, 400);
    view.setReport(gruwb::test::analyze_file(shared("tflite/tflm_hello_world_float.tflite")));
    QCOMPARE(view.find("fully"), 3);
    const int first = view.selectedNode();
    QCOMPARE(view.graph().nodes[first].op, 0);
    QCOMPARE(view.find("fully"), 3);
    QCOMPARE(view.graph().nodes[view.selectedNode()].op, 1);
    QCOMPARE(view.find("nothing like this"), 0);
    // Typing in the field and pressing Enter does the same.
    view.findField()->setText("#2");
    QTest::keyClick(view.findField(), Qt::Key_Return);
    QCOMPARE(view.graph().nodes[view.selectedNode()].op, 2);
  }

  // Issue 20 point 10: find pans (and zooms to a readable scale) so the match is on screen.
  void findBringsAnOffScreenMatchIntoView() {
    GraphView view;
    view.resize(600, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setReport(gruwb::test::analyze_file(shared("real/breizhn_dtln_model_1.tflite")));
    const int last_op = static_cast<int>(view.graph().nodes.size()) - 1;
    int target = -1;  // the last op node: far below the top, where the view opens
    for (int n = last_op; n >= 0 && target < 0; --n) {
      if (view.graph().nodes[n].kind == GraphNode::Kind::kOp) target = n;
    }
    QVERIFY(target >= 0);
    const auto visible = [&view] {
      return view.canvas()->mapToScene(view.canvas()->viewport()->rect()).boundingRect();
    };
    QVERIFY2(!visible().contains(view.nodeRect(target)), "the target must start off screen");
    const QString needle = "#" + QString::number(view.graph().nodes[target].op);
    QCOMPARE(view.find(needle), 1);
    QCOMPARE(view.selectedNode(), target);
    QVERIFY(visible().contains(view.nodeRect(target)));
    // Zoomed out to a stripe, find zooms back in to a readable scale.
    view.canvas()->setZoom(0.05);
    view.find("#0");
    QVERIFY(view.canvas()->zoom() >= GraphView::kReadableZoom);
    QVERIFY(visible().contains(view.nodeRect(view.selectedNode())));
  }

  // Issue 20 point 10: Fit never shrinks labels below kMinLabelPixels. A tall WHILE body (the
  // real wake-word and LSTM models) is fitted to its width at a readable zoom with its top in
  // view, and scrolls; a small graph still fits whole. The view has the graph's size in the
  // window at 1366x768 (678x446).
  void fitKeepsTallGraphsReadable_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("whileBody");  // fit the first WHILE's body, else subgraph 0
    QTest::newRow("hey_mycroft body")
        << shared("real/mycroftai_plugin_wake_word_precise_lite_hey_mycroft.tflite") << true;
    QTest::newRow("networkfilter_lstm body")
        << shared("real/casonka_networkfilter_lstm.tflite") << true;
    QTest::newRow("dtln main") << shared("real/breizhn_dtln_model_1.tflite") << false;
  }
  void fitKeepsTallGraphsReadable() {
    QFETCH(QString, path);
    QFETCH(bool, whileBody);
    GraphView view;
    view.resize(678, 446 + 30);  // the canvas plus the find bar
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setReport(gruwb::test::analyze_file(path));
    if (whileBody) {
      const int loop = nodeWithTitle(view, "WHILE");
      QVERIFY(loop >= 0);
      QVERIFY(view.activateNode(loop));
    }
    const QRectF scene = view.scene()->sceneRect();
    const QSize viewport = view.canvas()->viewport()->size();
    const double whole =
        std::min(viewport.width() / scene.width(), viewport.height() / scene.height());
    QVERIFY2(whole < view.minimumReadableZoom(), "the graph must be too tall to fit readably");
    QVERIFY(view.labelPixelHeight() >= GraphView::kMinLabelPixels);  // as it opens
    view.canvas()->setZoom(1.0);
    view.fitToView();
    QVERIFY2(view.labelPixelHeight() >= GraphView::kMinLabelPixels,
             qPrintable(QString("labels %1 px").arg(view.labelPixelHeight())));
    const QRectF visible =
        view.canvas()->mapToScene(view.canvas()->viewport()->rect()).boundingRect();
    QVERIFY(visible.top() <= scene.top() + 1);  // the graph's top, where its inputs are

    // A small graph still fits whole.
    view.setReport(gruwb::test::analyze_file(shared("tflite/tflm_hello_world_float.tflite")));
    view.fitToView();
    const QRectF small =
        view.canvas()->mapToScene(view.canvas()->viewport()->rect()).boundingRect();
    QVERIFY(small.adjusted(-1, -1, 1, 1).contains(view.scene()->sceneRect()));
  }

  void selectingNodesAndEdgesNamesTensorsAndOps() {
    const AnalyzerReport report =
        gruwb::test::analyze_file(shared("tflite/tflm_hello_world_float.tflite"));
    GraphView view;
    view.setReport(report);
    QSignalSpy tensors(&view, &GraphView::tensorSelected);
    QSignalSpy ops(&view, &GraphView::opSelected);
    view.selectNode(view.graph().node_of_op(1));
    QCOMPARE(ops.count(), 1);
    QCOMPARE(ops.last().at(1).toInt(), 1);
    // The input terminal stands for the model's input tensor.
    view.selectNode(0);
    QCOMPARE(tensors.count(), 1);
    QCOMPARE(tensors.last().at(1).toInt(), report.subgraphs[0].inputs[0]);
  }

  // Constant float32 weights carry a tick box (the custom trainable set);
  // a click on it ticks the weight by name, a click on its label still shows
  // the tensor. Shape constants and activations are not tickable.
  void weightBadgesAreCheckable() {
    const AnalyzerReport report = gruwb::test::analyze_file(sample("gesture_gru_fused.tflite"));
    GraphView view;
    view.resize(900, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setReport(report);
    QCOMPARE(view.trainableWeightNames(),
             QStringList({"gru/kernel", "gru/recurrent_kernel", "gru/bias", "dense_0/kernel",
                          "dense_0/bias"}));
    QVERIFY(!view.isTrainableWeight(0));  // the input
    QVERIFY(!view.isTrainableWeight(4));  // the GRU's output
    QSignalSpy changed(&view, &GraphView::checkedWeightsChanged);
    QSignalSpy tensors(&view, &GraphView::tensorSelected);
    // Find the chips of gru/bias (T#3) and dense_0/bias (T#6) in the scene.
    const auto click = [&](int tensor, bool on_box) {
      for (QGraphicsItem* item : view.scene()->items()) {
        if (!item->parentItem() || item->toolTip().indexOf(QString("tensor %1 ").arg(tensor)) != 0)
          continue;
        // The tick box sits at the chip's left edge, the label after it.
        const QRectF chip = item->boundingRect().adjusted(1, 1, -1, -1);
        const QPointF local =
            on_box ? QPointF(chip.left() + 4 + chip.height() * 0.33, chip.center().y())
                   : QPointF(chip.right() - 8, chip.center().y());
        view.canvas()->ensureVisible(item);
        const QPoint at = view.canvas()->mapFromScene(item->mapToScene(local));
        QTest::mouseClick(view.canvas()->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        return true;
      }
      return false;
    };
    QVERIFY(click(3, true));
    QVERIFY(click(6, true));
    QCOMPARE(changed.count(), 2);
    QCOMPARE(view.checkedWeights(), QStringList({"gru/bias", "dense_0/bias"}));
    QVERIFY(view.isWeightChecked(3));
    QVERIFY(tensors.isEmpty());  // ticking does not select
    QVERIFY(click(3, true));     // untick
    QCOMPARE(view.checkedWeights(), QStringList({"dense_0/bias"}));
    QVERIFY(click(5, false));  // the label: shows dense_0/kernel, no tick
    QTRY_COMPARE(tensors.count(), 1);
    QCOMPARE(tensors.last().at(1).toInt(), 5);
    QCOMPARE(view.checkedWeights(), QStringList({"dense_0/bias"}));
    QVERIFY(!view.setWeightChecked(4, true));
    // Another model: the names of the old one mean nothing there.
    view.setReport(gruwb::test::analyze_file(shared("tflite/tflm_hello_world_float.tflite")));
    QVERIFY(view.checkedWeights().isEmpty());
  }

  void exportsValidPngAndSvg() {
    QVERIFY(temp_.isValid());
    GraphView view;
    view.setReport(gruwb::test::analyze_file(sample("gesture_gru_while.tflite")));
    view.selectNode(1);
    QString error;
    const QString png = temp_.filePath("graph.png");
    QVERIFY2(view.exportImage(png, &error), qPrintable(error));
    QImage image(png);
    QVERIFY(!image.isNull());
    // 2x the scene, so text stays sharp.
    QCOMPARE(image.width(), qRound(view.scene()->sceneRect().width() * 2));
    // Not blank: the header colours of the nodes are in there.
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3) {
      for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
    }
    QVERIFY(colours.size() > 10);

    const QString svg = temp_.filePath("graph.svg");
    QVERIFY2(view.exportImage(svg, &error), qPrintable(error));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QXmlStreamReader xml(text);
    QString root;
    while (!xml.atEnd()) {
      if (xml.readNext() == QXmlStreamReader::StartElement && root.isEmpty()) {
        root = xml.name().toString();
      }
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QCOMPARE(root, QString("svg"));
    QVERIFY(QSvgRenderer(svg).isValid());
    // The op names are text in the SVG, not pixels.
    QVERIFY(text.contains("WHILE"));
    // The selection is restored after export.
    QCOMPARE(view.selectedNode(), 1);

    QVERIFY(!view.exportImage(temp_.filePath("no/such/dir/graph.png"), &error));
    QVERIFY2(error.contains("graph.png"), qPrintable(error));
  }
};

QTEST_MAIN(GraphViewTest)
#include "graph_view_test.moc"
