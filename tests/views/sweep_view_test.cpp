// The sweep window (File > Open Sweep) on a real sweep folder: 4 runs of
// BasicMotions (GRU and SimpleRNN, 4 and 24 units, 20 steps, 2 epochs), three
// of them run. The table sorts numbers as numbers and filters on any column,
// the scatter has one point per finished run on either axis, picking a run
// shows its curves, and a folder that is no sweep keeps the previous one.

#include <qcustomplot.h>

#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "app/core/sweep.h"
#include "app/gui/sweep_window.h"
#include "views/curve_plot.h"

using namespace gruwb;

class SweepViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    dir_ = tmp_.filePath("sweep");
    const std::string text =
        "{\"format\": \"gruwb-sweep-1\", \"name\": \"cells\", \"experiment\": {\"build\": "
        "\"cell=gru,units=8\", \"data\": \"" GRUWB_SOURCE_DIR
        "/resources/samples/BasicMotions_TRAIN.ts\", \"timesteps\": 20, \"stages\": \"all\"}, "
        "\"fixed\": {\"epochs\": 2}, \"grid\": [{\"cell\": [\"gru\", \"rnn\"]}, {\"units\": [4, "
        "24]}]}";
    app::SweepSpec spec;
    std::string error;
    QVERIFY2(app::parse_sweep_spec(text, "s.json", "/", &spec, &error), error.c_str());
    QVERIFY2(app::prepare_sweep_folder(dir_.toStdString(), spec, &error), error.c_str());
    for (int i : {0, 1, 2}) {
      QCOMPARE(app::run_sweep_task(dir_.toStdString(), spec, i, nullptr, nullptr).status,
               app::ExperimentStatus::kCompleted);
    }
  }

  void tableSortsAndFilters() {
    gui::SweepWindow window;
    QString error;
    QVERIFY2(window.open(dir_, &error), qPrintable(error));
    views::SweepView* view = window.view();
    QCOMPARE(view->visibleRows(), 4);
    // Columns: run, cell, units, state, test accuracy, cross entropy, parameters, model bytes.
    const int accuracy = 4, bytes = 7;
    // Best first on opening; the run not run sorts last with "-".
    QCOMPARE(view->cellText(3, 3), QString("pending"));
    QVERIFY(view->cellText(0, accuracy).toDouble() >= view->cellText(1, accuracy).toDouble());
    QCOMPARE(view->shownRun(), view->cellText(0, 0).toInt());
    // Model bytes as numbers: the 4-unit GRU (3 KB) before the 24-unit one (10 KB+).
    // ("-" of the run not run sorts below every number.)
    view->sortBy(bytes, Qt::AscendingOrder);
    QCOMPARE(view->cellText(0, 3), QString("pending"));
    QCOMPARE(view->cellText(1, 2), QString("4"));
    QVERIFY(view->cellText(1, bytes).toInt() < view->cellText(2, bytes).toInt());
    QVERIFY(view->cellText(2, bytes).toInt() < view->cellText(3, bytes).toInt());
    view->setFilter("rnn");
    QCOMPARE(view->visibleRows(), 2);
    QCOMPARE(view->cellText(0, 1), QString("rnn"));
    view->setFilter("PENDING");
    QCOMPARE(view->visibleRows(), 1);
    QCOMPARE(view->cellText(0, 0), QString("3"));
    view->setFilter("");
    QCOMPARE(view->visibleRows(), 4);
  }

  void scatterAndCurves() {
    gui::SweepWindow window;
    QString error;
    QVERIFY2(window.open(dir_, &error), qPrintable(error));
    views::SweepView* view = window.view();
    const auto points = [&] {
      int n = 0;
      for (int g = 0; g < view->scatter()->graphCount(); ++g) {
        n += view->scatter()->graph(g)->dataCount();
      }
      return n;
    };
    QCOMPARE(view->scatter()->graphCount(), 2);  // cell=gru, cell=rnn
    QCOMPARE(points(), 3);
    view->setScatterAxis("latency_us");
    QCOMPARE(points(), 3);
    QCOMPARE(view->scatter()->xAxis->label(), QString("latency of one inference (µs)"));
    QVERIFY(view->showRun(2));
    QCOMPARE(view->shownRun(), 2);
    const QStringList series = view->curves()->seriesNames();
    QVERIFY2(series.contains("all seed 1 train loss"), qPrintable(series.join(", ")));
    QCOMPARE(view->curves()->steps("all seed 1 train loss").size(), 3);  // epochs 0, 1, 2
    QCOMPARE(view->table()->currentIndex().siblingAtColumn(0).data().toString(), QString("2"));
    QVERIFY(view->showRun(3));  // not run: no curves
    QVERIFY(view->curves()->seriesNames().isEmpty());
    QVERIFY(!view->showRun(9));
  }

  void notASweepKeepsTheOpenOne() {
    gui::SweepWindow window;
    QString error;
    QVERIFY(window.open(dir_, &error));
    QVERIFY(!window.open(tmp_.path(), &error));
    QVERIFY2(error.startsWith(tmp_.path() + "/sweep.json: "), qPrintable(error));
    QCOMPARE(window.view()->visibleRows(), 4);
  }

 private:
  QTemporaryDir tmp_;
  QString dir_;
};

QTEST_MAIN(SweepViewTest)
#include "sweep_view_test.moc"
