// ComparisonTable with the reference run's figures (init 0.34 / 2.55 ->
// fc 0.61 / 0.90 -> all 0.72 / 0.75): deltas, formatting, confusion matrix
// per selected stage, and CSV/HTML exports that parse.

#include "views/comparison_table.h"

#include <QFile>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

using namespace gruwb::views;

namespace {

StageResult stage(const QString& experiment, const QString& name, double acc, double ce,
                  qint64 params, qint64 memory) {
  StageResult r;
  r.experiment = experiment;
  r.stage = name;
  r.accuracy = acc;
  r.cross_entropy = ce;
  r.trainable_parameters = params;
  r.training_memory_bytes = memory;
  r.class_names = {"standing", "running", "walking", "badminton"};
  r.confusion = {{9, 1, 0, 0}, {0, 10, 0, 0}, {3, 0, 7, 0}, {0, 0, 4, 6}};
  return r;
}

}  // namespace

class ComparisonTableTest : public QObject {
  Q_OBJECT

 private slots:
  void deltasFollowEachExperiment() {
    const QVector<StageResult> rows = {
        stage("A", "init", 0.34, 2.55, 0, 0), stage("A", "fc", 0.61, 0.90, 244, 9000),
        stage("B", "init", 0.30, 2.60, 0, 0), stage("A", "all", 0.72, 0.75, 11764, 120000)};
    const QVector<double> d = accuracy_deltas(rows);
    QVERIFY(std::isnan(d[0]));
    QVERIFY(std::abs(d[1] - 0.27) < 1e-12);
    QVERIFY(std::isnan(d[2]));  // B's first stage
    QVERIFY(std::abs(d[3] - 0.11) < 1e-12);
  }

  void showsReferenceRun() {
    ComparisonTable table;
    table.setStageResult(stage("gesture", "init", 0.34, 2.55, 0, 0));
    table.setStageResult(stage("gesture", "fc", 0.61, 0.90, 244, 9216));
    StageResult all = stage("gesture", "all", 0.72, 0.75, 11764, 123456);
    all.seeds = 3;
    all.accuracy_std = 0.021;
    all.cross_entropy_std = 0.05;
    table.setStageResult(all);
    QTableWidget* t = table.stageTable();
    QCOMPARE(t->rowCount(), 3);
    QCOMPARE(t->item(0, ComparisonTable::kAccuracyColumn)->text(), QString("0.340"));
    QCOMPARE(t->item(0, ComparisonTable::kDeltaColumn)->text(), QString("\u2013"));
    QCOMPARE(t->item(1, ComparisonTable::kDeltaColumn)->text(), QString("+0.270"));
    QCOMPARE(t->item(2, ComparisonTable::kAccuracyColumn)->text(), QString("0.720 \u00b1 0.021"));
    QCOMPARE(t->item(2, ComparisonTable::kCrossEntropyColumn)->text(),
             QString("0.750 \u00b1 0.050"));
    QCOMPARE(t->item(2, ComparisonTable::kDeltaColumn)->text(), QString("+0.110"));
    QCOMPARE(t->item(2, ComparisonTable::kParametersColumn)->text(), QString("11764"));
    QCOMPARE(t->item(2, ComparisonTable::kMemoryColumn)->text(), QString("120.6 KiB"));
    QCOMPARE(t->item(0, ComparisonTable::kMemoryColumn)->text(), QString("\u2013"));

    // The newest result is selected and its matrix shown; selecting another
    // row shows that one.
    QCOMPARE(t->currentRow(), 2);
    QCOMPARE(table.confusionView()->matrix(), all.confusion);
    StageResult refined = stage("gesture", "fc", 0.63, 0.88, 244, 9216);
    refined.confusion = {{10, 0, 0, 0}, {0, 10, 0, 0}, {2, 0, 8, 0}, {0, 0, 3, 7}};
    table.setStageResult(refined);  // replaces, does not append
    QCOMPARE(t->rowCount(), 3);
    QCOMPARE(t->item(1, ComparisonTable::kAccuracyColumn)->text(), QString("0.630"));
    QCOMPARE(t->item(2, ComparisonTable::kDeltaColumn)->text(), QString("+0.090"));
    QCOMPARE(table.confusionView()->matrix(), refined.confusion);
    table.selectRow(0);
    QCOMPARE(table.confusionView()->matrix()[2][0], qint64(3));
  }

  // Issue 20 point 9: the bundled sample's class names head the confusion matrix whole (they
  // were cut to "Stand… Runni…" in the Comparison dock), and hovering names the cell in full.
  void confusionLabelsAreWholeWithTheCellOnHover() {
    QFile ts(QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotionsAcc60_TRAIN.ts");
    QVERIFY(ts.open(QIODevice::ReadOnly));
    QStringList classes;
    while (!ts.atEnd() && classes.isEmpty()) {
      const QString line = QString::fromUtf8(ts.readLine()).trimmed();
      if (line.startsWith("@classLabel true ")) classes = line.mid(17).split(' ');
    }
    QCOMPARE(classes.size(), 4);
    ConfusionMatrixView view;
    view.resize(290, 200);  // its size in the Comparison dock at 1366x768
    view.setMatrix({{10, 0, 0, 0}, {0, 10, 0, 0}, {3, 0, 7, 0}, {0, 0, 4, 6}}, classes);
    QCOMPARE(view.columnLabels(), classes);
    QVERIFY(view.columnLabelsUpright());  // "Badminton" is wider than a column
    // Row 2 (Walking), column 0 (Standing): 3 of 10, and the last column's label, found by
    // hovering over the whole view.
    QStringList tips;
    for (int y = 0; y < view.height(); y += 2) {
      for (int x = 0; x < view.width(); x += 2) tips << view.toolTipAt(QPoint(x, y));
    }
    QVERIFY(tips.contains(
        QString("true %1, predicted %2: 3 of 10 (30.0%)").arg(classes[2], classes[0])));
    QVERIFY(tips.contains("predicted " + classes[3]));
    QVERIFY(tips.contains("true " + classes[3]));
    // A roomy view keeps the names across.
    view.resize(900, 700);
    QCOMPARE(view.columnLabels(), classes);
    QVERIFY(!view.columnLabelsUpright());
  }

  void cellComparisonAppearsWhenItRan() {
    ComparisonTable table;
    table.show();
    QVERIFY(!table.cellTable()->isVisible());
    table.setCellResults({{"GRU", 0.72, 0.02, 11764, 50000, 61000, 820.5, 0},
                          {"LSTM", 0.70, 0.03, 15604, 66000, 80000, 1010, 4200000}});
    QVERIFY(table.cellTable()->isVisible());
    QCOMPARE(table.cellTable()->rowCount(), 2);
    QCOMPARE(table.cellTable()->item(0, ComparisonTable::kCellAccuracyColumn)->text(),
             QString("0.720 \u00b1 0.020"));
    QCOMPARE(table.cellTable()->item(0, ComparisonTable::kCellUnrolledColumn)->text(),
             QString("-"));  // not measured
    QVERIFY(table.cellTable()->item(1, ComparisonTable::kCellUnrolledColumn)->text() !=
            QString("-"));
    QCOMPARE(table.cellTable()->item(1, ComparisonTable::kCellLatencyColumn)->text(),
             QString("1010.0 \u00b5s"));
  }

  // A model file's row says which file it used (tooltip), shows "-" where the
  // file has no such form and for the board latency still to come, its note,
  // and a row that could not run shows its error; the JSON keeps it all.
  void modelRowsShowTheirFileAndError() {
    ComparisonTable table;
    gruwb::views::CellResult file{"mine_while.tflite", 0.6, 0, 11944, 0, 54080, 900.0, 0};
    file.model_path = "/data/mine_while.tflite";
    file.note = "not fused: masked (SELECT_V2)";
    file.arena_bytes = 4096;
    gruwb::views::CellResult bad{"bad.circle"};
    bad.model_path = "/data/bad.circle";
    bad.error = "3 channels, model /data/bad.circle takes 6";
    table.setCellResults({file, bad});
    QTableWidget* t = table.cellTable();
    QCOMPARE(t->rowCount(), 2);
    QCOMPARE(t->item(0, 0)->text(), QString("mine_while.tflite"));
    QCOMPARE(t->item(0, 0)->toolTip(), QString("/data/mine_while.tflite"));
    QCOMPARE(t->item(0, ComparisonTable::kCellFusedColumn)->text(), QString("-"));  // no fused form
    QVERIFY(t->item(0, ComparisonTable::kCellWhileColumn)->text() != QString("-"));
    QCOMPARE(t->item(0, ComparisonTable::kCellBoardColumn)->text(), QString("-"));  // board latency
    QCOMPARE(t->item(0, ComparisonTable::kCellNoteColumn)->text(), file.note);
    QCOMPARE(t->horizontalHeaderItem(ComparisonTable::kCellBoardColumn)->text(),
             QString("Board latency"));
    QCOMPARE(t->item(1, ComparisonTable::kCellAccuracyColumn)->text(), QString("-"));
    QVERIFY(t->item(1, ComparisonTable::kCellNoteColumn)->text().contains("takes 6"));
    // Every row says which model it used (issue 20 point 7).
    QCOMPARE(t->horizontalHeaderItem(ComparisonTable::kCellModelColumn)->text(),
             QString("Model used"));
    QCOMPARE(t->item(0, ComparisonTable::kCellModelColumn)->text(),
             QString("/data/mine_while.tflite"));
    QCOMPARE(t->item(1, ComparisonTable::kCellModelColumn)->text(), QString("/data/bad.circle"));
    const auto back = gruwb::views::cell_result_from_json(gruwb::views::cell_result_to_json(bad));
    QCOMPARE(back.error, bad.error);
    QCOMPARE(back.model_path, bad.model_path);
    // A project saved before model rows: no model_path, error or board latency.
    const auto old = gruwb::views::cell_result_from_json(
        QJsonObject{{"cell", "GRU"}, {"accuracy", 0.7}, {"fused_bytes", 100.0}});
    QCOMPARE(old.fused_bytes, qint64(100));
    QVERIFY(old.model_path.isEmpty() && old.error.isEmpty());
    QCOMPARE(old.board_latency_us, 0.0);
  }
};

QTEST_MAIN(ComparisonTableTest)
#include "comparison_table_test.moc"
