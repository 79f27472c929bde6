// The HParams dock (issue 20, point 8): every run of the session in one table, as TensorBoard's
// HParams dashboard lists them. Two real experiments on the bundled BasicMotions (a GRU(4) over
// two seeds, 9 and 10, and an LSTM(5)) fill it with the settings they ran with and the figures
// they ended with; headers sort numbers as numbers (seed 10 after 9), the filter narrows the
// rows, Export CSV writes what is shown, the Curves dock's rename/hide/delete and a reopened
// project carry over.

#include "views/hparams_table.h"

#include <QFile>
#include <QHeaderView>
#include <QJsonValue>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "app/core/hparams.h"
#include "app/gui/training_workspace.h"
#include "views/comparison_table.h"
#include "views/curve_plot.h"
#include "views/run_list.h"

using gruwb::gui::TrainingWorkspace;
using gruwb::views::ExperimentSettings;
using gruwb::views::HparamsTable;

namespace {

const QString kData = QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotions_TRAIN.ts";

ExperimentSettings gruTwoSeeds() {
  ExperimentSettings s;
  s.name = "gru4";
  s.build_spec = "cell=gru,units=4";
  s.dataset_path = kData;
  s.stages = {"init", "fc"};
  s.optimizer = "adam";
  s.learning_rate = 0.01;
  s.batch_size = 8;
  s.epochs = 2;
  s.seeds = 2;
  s.first_seed = 9;  // seeds 9 and 10: a string sort puts 10 first
  return s;
}

ExperimentSettings lstmOneSeed() {
  ExperimentSettings s;
  s.name = "lstm5";
  s.build_spec = "cell=lstm,units=5";
  s.dataset_path = kData;
  s.stages = {"all"};
  s.optimizer = "sgd";
  s.learning_rate = 0.005;
  s.batch_size = 4;
  s.epochs = 1;
  s.first_seed = 3;
  return s;
}

// The visible row whose run column is `run`; -1 when none.
int rowOf(const HparamsTable* table, const QString& run) {
  for (int r = 0; r < table->visibleRows(); ++r) {
    if (table->cellText(r, 0) == run) return r;
  }
  return -1;
}

bool isNumber(const QString& text) {
  bool ok = false;
  text.toDouble(&ok);
  return ok;
}

}  // namespace

class HparamsTableTest : public QObject {
  Q_OBJECT

 private slots:
  // The shared table itself (the sweep window's too): numbers sort as numbers.
  void numbersSortAsNumbers() {
    HparamsTable table;
    QVector<HparamsTable::Row> rows;
    rows.append({"a", {"a", "0.85", "9"}, "", false});
    rows.append({"b", {"b", "0.9", "10"}, "", false});
    rows.append({"c", {"c", "-", "100"}, "", false});
    table.setRows({"run", "accuracy", "seed"}, rows);
    table.sortBy(1, Qt::DescendingOrder);
    QCOMPARE(table.cellText(0, 1), QString("0.9"));
    QCOMPARE(table.cellText(1, 1), QString("0.85"));
    QCOMPARE(table.cellText(2, 1), QString("-"));  // unknown below every figure
    table.sortBy(2, Qt::AscendingOrder);
    QCOMPARE(table.visibleKeys(), QStringList({"a", "b", "c"}));  // 9, 10, 100
    // New rows keep the sort.
    rows.append({"d", {"d", "0.5", "50"}, "", false});
    table.setRows({"run", "accuracy", "seed"}, rows);
    QCOMPARE(table.visibleKeys(), QStringList({"a", "b", "d", "c"}));
  }

  // A run's row comes when the run ends, not when its experiment does: the init row is there
  // while the long FC stage still trains (then Stop).
  void rowsComeAsRunsEnd() {
    TrainingWorkspace workspace;
    ExperimentSettings s = gruTwoSeeds();
    s.seeds = 1;
    s.epochs = 400;
    const int id = workspace.startExperiment(s);
    QTRY_VERIFY_WITH_TIMEOUT(workspace.hparamsTable()->rowCount() >= 1, 60000);
    QVERIFY2(workspace.isRunning(), "the FC stage ended before the init row came");
    QCOMPARE(workspace.hparamsTable()->rowCount(), 1);
    QCOMPARE(workspace.hparamsTable()->cellText(0, 0), QString("gru4 / init"));
    QCOMPARE(workspace.hparamsTable()->cellText(0, workspace.hparamsTable()->columnOf("state")),
             QString("finished"));
    workspace.stopExperiment(id);
    QVERIFY(workspace.waitForIdle(60000));
    // The stopped stage: a row that says so, with no figures.
    QCOMPARE(workspace.hparamsTable()->rowCount(), 2);
    const int fc = rowOf(workspace.hparamsTable(), "gru4 / fc");
    QVERIFY(fc >= 0);
    QCOMPARE(workspace.hparamsTable()->cellText(fc, workspace.hparamsTable()->columnOf("state")),
             QString("stopped"));
    QCOMPARE(workspace.hparamsTable()->cellText(fc, workspace.hparamsTable()->columnOf("accuracy")),
             QString("-"));
  }

  void sessionRunsFillTheTable() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TrainingWorkspace workspace;
    HparamsTable* table = workspace.hparamsTable();
    QCOMPARE(table->rowCount(), 0);
    QVERIFY(!workspace.hparamsExportButton()->isEnabled());
    workspace.startExperiment(gruTwoSeeds());
    workspace.startExperiment(lstmOneSeed());
    QVERIFY2(workspace.waitForIdle(110000), "experiments did not finish in 110 s");
    QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));

    // One row per run: 2 stages x 2 seeds, and 1 stage x 1 seed.
    QCOMPARE(table->rowCount(), 5);
    QVERIFY(workspace.hparamsExportButton()->isEnabled());
    std::vector<std::string> titles = gruwb::app::hparams_table_header(false);
    QStringList header;
    for (const std::string& t : titles) header << QString::fromStdString(t);
    const auto column = [&](const char* title) {
      const int c = table->columnOf(title);
      if (c < 0) qWarning("no column '%s'", title);
      return c;
    };
    for (const char* title :
         {"run", "experiment", "stage", "cell", "units", "lr", "batch", "epochs", "seed",
          "accuracy", "CE", "params", "model bytes", "train memory"}) {
      QVERIFY2(column(title) >= 0, title);
    }

    // The LSTM run: the settings it ran with, the figures the Comparison dock shows.
    const int lstm = rowOf(table, "lstm5 / all");
    QVERIFY(lstm >= 0);
    QCOMPARE(table->cellText(lstm, column("experiment")), QString("lstm5"));
    QCOMPARE(table->cellText(lstm, column("cell")), QString("LSTM"));
    QCOMPARE(table->cellText(lstm, column("units")), QString("5"));
    QCOMPARE(table->cellText(lstm, column("optimizer")), QString("sgd"));
    QCOMPARE(table->cellText(lstm, column("lr")), QString("0.005"));
    QCOMPARE(table->cellText(lstm, column("batch")), QString("4"));
    QCOMPARE(table->cellText(lstm, column("epochs")), QString("1"));
    QCOMPARE(table->cellText(lstm, column("seed")), QString("3"));
    QCOMPARE(table->cellText(lstm, column("state")), QString("finished"));
    const gruwb::views::StageResult* stage = nullptr;
    for (const auto& r : workspace.comparisonTable()->stageResults()) {
      if (r.experiment.startsWith("lstm5")) stage = &r;
    }
    QVERIFY(stage);
    QCOMPARE(table->cellText(lstm, column("accuracy")), QString::number(stage->accuracy, 'f', 4));
    QCOMPARE(table->cellText(lstm, column("CE")), QString::number(stage->cross_entropy, 'f', 4));
    QCOMPARE(table->cellText(lstm, column("params")), QString::number(stage->trainable_parameters));
    QCOMPARE(table->cellText(lstm, column("train memory")),
             QString::number(stage->training_memory_bytes));
    // LSTM(5) on 6 channels, Dense 4: 4*5*(6+5) + 4*5 + 5*4 + 4 trainable values ("all").
    QCOMPARE(table->cellText(lstm, column("params")).toInt(), 4 * 5 * 12 + 24);
    QVERIFY(table->cellText(lstm, column("model bytes")).toInt() > 4 * (4 * 5 * 12 + 24));

    // The GRU runs: seeds 9 and 10 named as the Curves dock names them; init trains no epoch.
    for (const QString run :
         {"gru4 / init s9", "gru4 / fc s9", "gru4 / init s10", "gru4 / fc s10"}) {
      const int r = rowOf(table, run);
      QVERIFY2(r >= 0, qPrintable(run));
      QCOMPARE(table->cellText(r, column("cell")), QString("GRU"));
      QCOMPARE(table->cellText(r, column("units")), QString("4"));
      QCOMPARE(table->cellText(r, column("lr")), QString("0.01"));
      QCOMPARE(table->cellText(r, column("batch")), QString("8"));
      QCOMPARE(table->cellText(r, column("epochs")), QString(run.contains("init") ? "0" : "2"));
      QCOMPARE(table->cellText(r, column("seed")), QString(run.endsWith("s9") ? "9" : "10"));
      QVERIFY(isNumber(table->cellText(r, column("accuracy"))));
    }
    QVERIFY(workspace.runList()->contains("gru4 / fc s10"));

    // Every numeric column sorts numerically: 3 < 9 < 10 (a string sort gives "10" < "3").
    table->sortBy(column("seed"), Qt::AscendingOrder);
    QCOMPARE(table->cellText(0, column("seed")), QString("3"));
    QCOMPARE(table->cellText(4, column("seed")), QString("10"));
    for (const char* title :
         {"units", "seed", "accuracy", "CE", "params", "model bytes", "train memory"}) {
      for (Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
        table->sortBy(column(title), order);
        for (int r = 1; r < table->visibleRows(); ++r) {
          const QString a = table->cellText(r - 1, column(title));
          const QString b = table->cellText(r, column(title));
          const double x = a == "-" ? -INFINITY : a.toDouble();
          const double y = b == "-" ? -INFINITY : b.toDouble();
          QVERIFY2(order == Qt::AscendingOrder ? x <= y : x >= y,
                   qPrintable(QString("%1: %2 then %3").arg(title, a, b)));
        }
      }
    }
    // A click on the header sorts the same way.
    const int seed_section = column("seed");
    table->table()->horizontalHeader()->setSortIndicator(seed_section, Qt::DescendingOrder);
    QCOMPARE(table->cellText(0, seed_section), QString("10"));

    // The filter: any column, case-insensitive.
    table->filterEdit()->setText("lstm");
    QCOMPARE(table->visibleRows(), 1);
    table->setFilter("s10");
    QCOMPARE(table->visibleRows(), 2);

    // Export CSV: the rows shown, in their order, plain numbers.
    table->setFilter("gru4");
    table->sortBy(column("seed"), Qt::AscendingOrder);
    const QString csv_path = dir.filePath("hparams.csv");
    QString error;
    QVERIFY2(workspace.exportHparams(csv_path, &error), qPrintable(error));
    QFile csv(csv_path);
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + 4);
    QCOMPARE(lines[0],
             QString("run,experiment,stage,model,cell,units,optimizer,learning_rate,batch_size,"
                     "epochs,seed,state,test_accuracy,test_cross_entropy,trainable_parameters,"
                     "model_bytes,training_memory_bytes,seconds"));
    const QStringList first = lines[1].split(',');
    QCOMPARE(first.size(), 18);
    QVERIFY(first[0].startsWith("gru4 / ") && first[0].endsWith(" s9"));
    QCOMPARE(first[4], QString("GRU"));
    QCOMPARE(first[5], QString("4"));
    QCOMPARE(first[7], QString("0.01"));
    QCOMPARE(first[8], QString("8"));
    QCOMPARE(first[10], QString("9"));
    QCOMPARE(lines[4].split(',')[10], QString("10"));
    // The CSV's figure is the table's, unrounded.
    const int first_row = rowOf(table, first[0]);
    QCOMPARE(QString::number(first[12].toDouble(), 'f', 4),
             table->cellText(first_row, column("accuracy")));
    table->setFilter("no such run");
    QVERIFY(!workspace.exportHparams(dir.filePath("none.csv"), &error));
    QVERIFY2(error.contains("matches no run"), qPrintable(error));
    QVERIFY(!QFile::exists(dir.filePath("none.csv")));
    table->setFilter("");

    // The Curves dock's run list: a row follows rename, hide and delete (and its undo).
    gruwb::views::RunList* runs = workspace.runList();
    runs->rename("lstm5 / all", "lstm five");
    QVERIFY(rowOf(table, "lstm five") >= 0);
    QCOMPARE(rowOf(table, "lstm5 / all"), -1);
    runs->setChecked("lstm5 / all", false);
    const auto* model = qobject_cast<const QAbstractProxyModel*>(table->table()->model());
    QVERIFY(model);
    const QModelIndex hidden = model->index(rowOf(table, "lstm five"), 0);
    QCOMPARE(hidden.data(Qt::ForegroundRole).value<QBrush>().color(),
             table->table()->palette().color(QPalette::Disabled, QPalette::Text));
    runs->removeRun("gru4 / fc s9");
    QCOMPARE(table->rowCount(), 4);
    QVERIFY(runs->undoRemove());
    QCOMPARE(table->rowCount(), 5);

    // Selecting a row picks its run in the Curves dock, whose curves are drawn thicker;
    // double-click shows a hidden run again.
    QVERIFY(table->selectKey("gru4 / fc s10"));
    QCOMPARE(runs->currentRun(), QString("gru4 / fc s10"));
    QVERIFY(workspace.lossPlot()->isSeriesHighlighted("gru4 / fc s10 train"));
    QVERIFY(!workspace.lossPlot()->isSeriesHighlighted("gru4 / fc s9 train"));
    runs->setCurrentRun("gru4 / fc s9");
    QCOMPARE(table->currentKey(), QString("gru4 / fc s9"));
    QVERIFY(!runs->isChecked("lstm5 / all"));
    table->table()->setCurrentIndex(model->index(rowOf(table, "lstm five"), 0));
    emit table->table()->activated(table->table()->currentIndex());
    QVERIFY(runs->isChecked("lstm5 / all"));
    QCOMPARE(runs->currentRun(), QString("lstm5 / all"));

    // A reopened project shows the same table (cell, units and model bytes travel with the
    // results).
    const QJsonValue section = workspace.projectSection();
    TrainingWorkspace reopened;
    reopened.loadProjectSection(section);
    HparamsTable* again = reopened.hparamsTable();
    QCOMPARE(again->rowCount(), 5);
    for (HparamsTable* t : {table, again}) t->sortBy(0, Qt::AscendingOrder);
    table->setFilter("");
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < header.size(); ++c) {
        if (header[c] == "run") continue;  // renamed in the first session's run list only
        QCOMPARE(again->cellText(r, c), table->cellText(r, c));
      }
    }
  }
};

QTEST_MAIN(HparamsTableTest)
#include "hparams_table_test.moc"
