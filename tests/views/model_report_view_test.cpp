// ModelReportView on real models: the tree mirrors the analyzer report and
// the text pane holds report_to_text verbatim.

#include "views/model_report_view.h"

#include <QPlainTextEdit>
#include <QSplitter>
#include <QTextBlock>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

#include "engine/tools/analyzer.h"
#include "tests/views/loaded_model.h"

using gruwb::tools::AnalyzerReport;
using gruwb::views::ModelReportView;
using RowKind = ModelReportView::RowKind;

namespace {

QString modelPath(const char* name) {
  return QString(GRUWB_SHARED_DIR) + "/data/models/tflite/" + name;
}

AnalyzerReport analyze(const char* name) { return gruwb::test::analyze_file(modelPath(name)); }

RowKind kindOf(const QTreeWidgetItem* item) {
  return static_cast<RowKind>(item->data(0, ModelReportView::kKindRole).toInt());
}

QTreeWidgetItem* childOfKind(QTreeWidgetItem* parent, RowKind kind) {
  for (int i = 0; i < parent->childCount(); ++i) {
    if (kindOf(parent->child(i)) == kind) return parent->child(i);
  }
  return nullptr;
}

// Value column of the summary row named `name`, or "" when absent.
QString summaryValue(const ModelReportView& view, const QString& name) {
  QTreeWidgetItem* summary = view.summaryItem();
  for (int i = 0; summary && i < summary->childCount(); ++i) {
    if (summary->child(i)->text(ModelReportView::kItemColumn) == name) {
      return summary->child(i)->text(ModelReportView::kValueColumn);
    }
  }
  return {};
}

}  // namespace

class ModelReportViewTest : public QObject {
  Q_OBJECT

 private slots:
  void showsSummaryOfHelloWorld() {
    const AnalyzerReport report = analyze("tflm_hello_world_float.tflite");
    ModelReportView view;
    view.setReport(report);

    QVERIFY(view.summaryItem());
    QCOMPARE(summaryValue(view, "Size"), QString("3164 bytes"));
    QVERIFY(summaryValue(view, "Non-data").startsWith("1780 bytes (56.26%)"));
    QVERIFY(summaryValue(view, "Data").startsWith("1384 bytes (43.74%)"));
    QCOMPARE(summaryValue(view, "Zero buffers"), QString("0 bytes"));
    QVERIFY(summaryValue(view, "Format").startsWith("tflite"));
    QCOMPARE(summaryValue(view, "Parameters"), QString::number(report.parameters));
    QCOMPARE(summaryValue(view, "MACs"), QString::number(report.macs));
  }

  void listsOperatorsAndTensorsOfEachSubgraph() {
    const AnalyzerReport report = analyze("tflm_hello_world_float.tflite");
    ModelReportView view;
    view.setReport(report);

    QCOMPARE(view.subgraphCount(), 1);
    QTreeWidgetItem* subgraph = view.subgraphItem(0);
    QVERIFY(subgraph);
    QTreeWidgetItem* ops = childOfKind(subgraph, RowKind::kOperators);
    QTreeWidgetItem* tensors = childOfKind(subgraph, RowKind::kTensors);
    QVERIFY(ops && tensors);
    QCOMPARE(ops->childCount(), 3);  // hello_world: three FULLY_CONNECTED
    QCOMPARE(tensors->childCount(), static_cast<int>(report.subgraphs[0].tensors.size()));
    for (int i = 0; i < ops->childCount(); ++i) {
      QCOMPARE(ops->child(i)->text(0), QString("Op#%1 FULLY_CONNECTED").arg(i));
      QCOMPARE(ops->child(i)->data(0, ModelReportView::kIndexRole).toInt(), i);
    }
    // Inputs -> outputs in the analyzer's T#k notation.
    const auto& op0 = report.subgraphs[0].ops[0];
    QVERIFY(ops->child(0)->text(1).contains(QString("-> T#%1").arg(op0.outputs[0])));
    // A tensor row carries its shape and type.
    const auto& t0 = report.subgraphs[0].tensors[0];
    QVERIFY(tensors->child(0)->text(0).startsWith(
        QString("T#0 %1").arg(QString::fromStdString(t0.name))));
    QVERIFY(tensors->child(0)->text(1).endsWith(QString::fromStdString(t0.type)));
  }

  void textPaneHoldsTheAnalyzerText() {
    const AnalyzerReport report = analyze("tflm_hello_world_float.tflite");
    ModelReportView view;
    view.setReport(report);
    QCOMPARE(view.textView()->toPlainText(),
             QString::fromStdString(gruwb::tools::report_to_text(report)));
    QVERIFY(view.textView()->isReadOnly());
    // Monospace, so the analyzer's columns line up (fixedPitch() is unreliable
    // with fontconfig, so measure).
    const QFontMetrics metrics(view.textView()->font());
    QCOMPARE(metrics.horizontalAdvance("iiii"), metrics.horizontalAdvance("MMMM"));
  }

  void whileModelShowsThreeSubgraphsAndCalledBodies() {
    const AnalyzerReport report = analyze("litert_multi_subgraphs_while.tflite");
    ModelReportView view;
    view.setReport(report);
    QCOMPARE(view.subgraphCount(), 3);
    QTreeWidgetItem* ops = childOfKind(view.subgraphItem(0), RowKind::kOperators);
    QVERIFY(ops);
    bool found_while = false;
    for (int i = 0; i < ops->childCount(); ++i) {
      if (ops->child(i)->text(0).endsWith(" WHILE")) {
        found_while = true;
        QVERIFY2(ops->child(i)->text(ModelReportView::kDetailsColumn).contains("calls Subgraph#1"),
                 qPrintable(ops->child(i)->text(ModelReportView::kDetailsColumn)));
      }
    }
    QVERIFY(found_while);
    for (int s = 0; s < 3; ++s) {
      QTreeWidgetItem* subgraph_ops = childOfKind(view.subgraphItem(s), RowKind::kOperators);
      QCOMPARE(subgraph_ops->childCount(), static_cast<int>(report.subgraphs[s].ops.size()));
    }
  }

  void marksOpsTheEngineCannotRun() {
    AnalyzerReport report = analyze("tflm_hello_world_float.tflite");
    // Which ops the engine runs changes as kernels land; pin one of each.
    report.subgraphs[0].ops[0].engine_supported = true;
    report.subgraphs[0].ops[1].engine_supported = false;
    report.subgraphs[0].ops[2].engine_supported = true;
    ModelReportView view;
    view.setReport(report);
    QTreeWidgetItem* ops = childOfKind(view.subgraphItem(0), RowKind::kOperators);
    QVERIFY(ops->child(0)->data(0, ModelReportView::kRunnableRole).toBool());
    QVERIFY(!ops->child(0)->toolTip(0).contains("cannot run"));  // its name, in full
    QVERIFY(!ops->child(1)->data(0, ModelReportView::kRunnableRole).toBool());
    QVERIFY(ops->child(1)->toolTip(0).contains("cannot run FULLY_CONNECTED"));
    QVERIFY(ops->child(0)->icon(0).cacheKey() != ops->child(1)->icon(0).cacheKey());
    QCOMPARE(ops->text(ModelReportView::kValueColumn), QString("3, 1 not runnable"));
  }

  void newReportReplacesTheOldOne() {
    ModelReportView view;
    view.setReport(analyze("litert_multi_subgraphs_while.tflite"));
    view.setReport(analyze("tflm_hello_world_float.tflite"));
    QCOMPARE(view.subgraphCount(), 1);
    QCOMPARE(view.tree()->topLevelItemCount(), 2);  // Model + Subgraph#0
    view.clear();
    QCOMPARE(view.tree()->topLevelItemCount(), 0);
    QVERIFY(view.textView()->toPlainText().isEmpty());
  }

  // Issue 20 point 9: in a left dock at its 1366x768 width (about 370 px) the tree's Item and
  // Value columns fit side by side (the text report goes below the tree), and a cell too
  // narrow for its text carries the full text on hover.
  void columnsFitANarrowDockWithFullTextOnHover() {
    ModelReportView view;
    view.resize(372, 435);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setReport(gruwb::test::analyze_file(
        QString(GRUWB_SHARED_DIR) + "/data/models/real/casonka_networkfilter_lstm.tflite"));
    QTest::qWait(20);
    QCOMPARE(view.splitter()->orientation(), Qt::Vertical);
    QTreeWidget* tree = view.tree();
    const int viewport = tree->viewport()->width();
    const int item = tree->columnWidth(ModelReportView::kItemColumn);
    const int value = tree->columnWidth(ModelReportView::kValueColumn);
    QVERIFY2(item + value <= viewport,
             qPrintable(QString("item %1 + value %2 > %3").arg(item).arg(value).arg(viewport)));
    int elided = 0;
    for (QTreeWidgetItemIterator it(tree); *it; ++it) {
      for (int column : {ModelReportView::kItemColumn, ModelReportView::kValueColumn}) {
        const QString text = (*it)->text(column);
        const int room = tree->visualItemRect(*it).width() > 0 ? tree->columnWidth(column) : 0;
        if (tree->fontMetrics().horizontalAdvance(text) + 8 <= room) continue;
        ++elided;
        QVERIFY2(!(*it)->toolTip(column).isEmpty(), qPrintable(text));
      }
    }
    QVERIFY(elided > 0);  // converter names such as serving_default_input_1:0 are long
    // Wide enough, the text report goes back beside the tree.
    view.resize(ModelReportView::kSideBySideWidth + 100, 435);
    QTest::qWait(20);
    QCOMPARE(view.splitter()->orientation(), Qt::Horizontal);
  }

  void selectingAnOpScrollsTheTextToIt() {
    const AnalyzerReport report = analyze("litert_multi_subgraphs_while.tflite");
    ModelReportView view;
    view.setReport(report);
    QTreeWidgetItem* ops = childOfKind(view.subgraphItem(2), RowKind::kOperators);
    QVERIFY(ops && ops->childCount() > 0);
    QTreeWidgetItem* last = ops->child(ops->childCount() - 1);
    view.tree()->setCurrentItem(last);
    const QString line = view.textView()->textCursor().block().text();
    QVERIFY2(line.contains(QString("Op#%1").arg(ops->childCount() - 1)), qPrintable(line));
    QVERIFY2(line.contains(QString::fromStdString(report.subgraphs[2].ops.back().name)),
             qPrintable(line));
  }
};

QTEST_MAIN(ModelReportViewTest)
#include "model_report_view_test.moc"
