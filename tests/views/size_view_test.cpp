// SizeView on real models: the analyzer's figures, a bar per subgraph, the
// largest tensors in order, and arena bytes that match what the engine's
// planners ask for (inference via ModelRunner, training via Trainer).

#include "views/size_view.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

#include "engine/tools/analyzer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "tests/views/loaded_model.h"
#include "views/wrapped_text_delegate.h"

using gruwb::views::SizeView;

namespace {

QString sample(const char* name) {
  return QString(GRUWB_SOURCE_DIR) + "/resources/samples/" + name;
}

std::unique_ptr<gruwb::test::LoadedWithReport> load(const QString& path) {
  return gruwb::test::load_with_report(path);
}

}  // namespace

class SizeViewTest : public QObject {
  Q_OBJECT

 private slots:
  void fusedGruFigures() {
    const auto loaded = load(sample("gesture_gru_fused.tflite"));
    SizeView view;
    view.setModel(loaded->model.model, loaded->report);

    // The summary shows the analyzer's exact byte count.
    QVERIFY(view.summary()->text().contains(QString::number(loaded->report.model_bytes)));
    QCOMPARE(view.subgraphBars()->plottableCount(), 1);
    auto* bars = qobject_cast<QCPBars*>(view.subgraphBars()->plottable(0));
    QVERIFY(bars);
    QCOMPARE(bars->data()->size(), 1);
    QCOMPARE(bars->data()->at(0)->value, double(loaded->report.subgraphs[0].data_bytes));

    // Inference arena: the same figure ModelRunner plans.
    gruwb::tools::ModelRunner runner;
    std::string error;
    QVERIFY(runner.prepare(loaded->model.model, &error));
    const gruwb::views::ArenaFigures& arenas = view.arenas();
    QVERIFY(arenas.inference_ok);
    QCOMPARE(arenas.inference_bytes, runner.arena_bytes());
    QCOMPARE(view.arenaTable()->topLevelItem(0)->text(1), QString::number(runner.arena_bytes()));

    // Training: fc trains the last Dense only; all adds the GRU's weights,
    // their gradients, Adam state and the BPTT tape, so it needs more.
    QVERIFY2(arenas.training_fc.ok, arenas.training_fc.error.c_str());
    QVERIFY2(arenas.training_all.ok, arenas.training_all.error.c_str());
    QCOMPARE(arenas.training_fc.weight_tensors, 2);  // kernel + bias
    QVERIFY(arenas.training_all.weight_tensors > arenas.training_fc.weight_tensors);
    const auto& fc = arenas.training_fc.memory;
    const auto& all = arenas.training_all.memory;
    QVERIFY(all.total > fc.total);
    QVERIFY(fc.total > arenas.inference_bytes);
    // Adam keeps two slots per trainable weight value.
    QCOMPARE(fc.optimizer_bytes, 2 * fc.weight_bytes);
    QCOMPARE(fc.weight_bytes + fc.gradient_bytes + fc.optimizer_bytes + fc.activation_bytes +
                 fc.other_bytes,
             fc.total);
    QCOMPARE(view.arenaTable()->topLevelItemCount(), 3);
  }

  // Issue 20 point 9: in the Size dock at its 1366x768 width (262 px inside the 270-px dock) every
  // arena figure and note is shown whole: the three columns fit the table and each row is as tall
  // as its wrapped text (the bytes and notes were cut at the dock's edge).
  void arenaFiguresAreWholeInANarrowDock() {
    const auto loaded = load(sample("gesture_gru_while.tflite"));
    SizeView view;
    view.resize(262, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setModel(loaded->model.model, loaded->report);
    QTest::qWait(20);
    QTreeWidget* tree = view.arenaTable();
    QVERIFY(tree->columnWidth(0) + tree->columnWidth(1) + tree->columnWidth(2) <=
            tree->viewport()->width());
    auto* delegate = qobject_cast<gruwb::views::WrappedTextDelegate*>(tree->itemDelegate());
    QVERIFY(delegate);
    int rows = 0;
    for (QTreeWidgetItemIterator it(tree); *it; ++it, ++rows) {
      const int height = tree->visualItemRect(*it).height();
      const QString bytes = (*it)->text(1);
      QVERIFY2(tree->fontMetrics().horizontalAdvance(bytes) <= delegate->textWidth(1),
               qPrintable(bytes));
      const QString note = (*it)->text(2);
      const int needed = gruwb::views::WrappedTextDelegate::wrappedHeight(
          tree->font(), delegate->textWidth(2), note);
      QVERIFY2(
          height >= needed,
          qPrintable(QString("'%1': row %2 px, text %3 px").arg(note).arg(height).arg(needed)));
      QCOMPARE((*it)->toolTip(2), note);
    }
    QVERIFY(rows >= 9);  // inference and two training scopes with their parts
    // The bar chart's axis carries no numbers to run together; each bar's label has its bytes.
    QVERIFY(!view.subgraphBars()->xAxis->tickLabels());
  }

  void largestTensorsComeFirstAndEachSubgraphGetsABar() {
    const auto loaded = load(sample("gesture_gru_while.tflite"));
    SizeView view;
    view.setModel(loaded->model.model, loaded->report);
    auto* bars = qobject_cast<QCPBars*>(view.subgraphBars()->plottable(0));
    QCOMPARE(bars->data()->size(), 3);

    const auto top = gruwb::views::largest_tensors(loaded->report, 100);
    QVERIFY(!top.empty());
    uint64_t all_constant = 0;
    for (const auto& subgraph : loaded->report.subgraphs) {
      for (const auto& tensor : subgraph.tensors) all_constant += tensor.data_bytes > 0 ? 1 : 0;
    }
    QCOMPARE(top.size(), std::min<size_t>(all_constant, 100));
    for (size_t i = 1; i < top.size(); ++i) QVERIFY(top[i - 1].bytes >= top[i].bytes);
    // The GRU's recurrent kernel [180,60] float32 lives in the body.
    QCOMPARE(top[0].bytes, uint64_t{180 * 60 * 4});
    QVERIFY(top[0].subgraph > 0);
    QCOMPARE(view.tensorTable()->topLevelItemCount(),
             static_cast<int>(std::min(top.size(), SizeView::kTopTensors)));
  }

  void modelsTheEngineCannotTrainSayWhy() {
    const auto loaded = load(QString(GRUWB_SHARED_DIR) +
                             "/data/models/tflite/tflm_keyword_scrambled_svdf_int8.tflite");
    SizeView view;
    view.setModel(loaded->model.model, loaded->report);
    const auto& arenas = view.arenas();
    if (!arenas.training_all.ok) {
      QVERIFY(!arenas.training_all.error.empty());
      bool shown = false;
      for (int i = 0; i < view.arenaTable()->topLevelItemCount(); ++i) {
        shown |= view.arenaTable()->topLevelItem(i)->text(2) ==
                 QString::fromStdString(arenas.training_all.error);
      }
      QVERIFY(shown);
    }
    if (!arenas.inference_ok) QVERIFY(!arenas.inference_error.empty());
  }
};

QTEST_MAIN(SizeViewTest)
#include "size_view_test.moc"
