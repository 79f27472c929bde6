// TrainingWorkspace on real data: a short experiment (a built GRU(8) on
// the bundled BasicMotions) fills the curves and the comparison table from a
// worker thread, Stop ends a run and keeps its results, and the GUI thread
// never stalls over 50 ms while training runs.
//
// The stall test is the one timing assert the issue asks for. It measures
// the gaps between ticks of a 10 ms QTimer, and from each gap subtracts the
// time the GUI thread was runnable but waiting for a CPU (the kernel's
// run_delay in /proc/thread-self/schedstat): on a loaded CI machine other
// processes may hold the cores, which is no stall of ours.

#include "app/gui/training_workspace.h"

#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTimer>
#include <QtTest>

#include "views/comparison_table.h"
#include "views/curve_plot.h"
#include "views/gradient_flow_map.h"
#include "views/gradient_view.h"

using gruwb::gui::TrainingWorkspace;
using gruwb::views::ExperimentPanel;
using gruwb::views::ExperimentSettings;

namespace {

ExperimentSettings gestureOnBasicMotions(const QString& name, int epochs) {
  ExperimentSettings s;
  s.name = name;
  // BasicMotions has 6 channels: a fresh GRU(8) built for the data.
  s.build_spec = "cell=gru,units=8";
  s.dataset_path = QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotions_TRAIN.ts";
  s.stages = {"init", "fc"};
  s.optimizer = "adam";
  s.learning_rate = 0.01;
  s.batch_size = 8;
  s.epochs = epochs;
  return s;
}

// Nanoseconds this thread has waited on a run queue (-1 when unknown).
qint64 runQueueWaitNs() {
  QFile file("/proc/thread-self/schedstat");
  if (!file.open(QIODevice::ReadOnly)) return -1;
  const QList<QByteArray> fields = file.readAll().split(' ');
  return fields.size() >= 2 ? fields[1].trimmed().toLongLong() : -1;
}

// GRUWB_SCREENSHOT_DIR=docs/screenshots: the views after the real run, for
// the docs (not part of the assertions). 1366x768 as is; run again with
// QT_SCALE_FACTOR=2 for 3840x2160 (1920x1080 logical, as a 4K desktop
// scales it). Files are named by their pixel size.
void saveScreenshots(TrainingWorkspace& workspace) {
  const QString dir = qEnvironmentVariable("GRUWB_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  const bool hidpi = qEnvironmentVariableIntValue("QT_SCALE_FACTOR") >= 2;
  const QSize size = hidpi ? QSize(1920, 1080) : QSize(1366, 768);
  const struct {
    const char* name;
    QWidget* widget;
  } views[] = {{"curves", workspace.curvesWidget()},
               {"gradients", workspace.gradientView()},
               {"comparison", workspace.comparisonTable()},
               {"experiments", workspace.panel()}};
  for (const auto& view : views) {
    QWidget* w = view.widget;
    w->resize(view.widget == workspace.panel() ? QSize(size.width() / 3, size.height()) : size);
    w->show();
    QTest::qWait(100);
    workspace.lossPlot()->flush();
    workspace.accuracyPlot()->flush();
    workspace.gradientView()->flush();
    const QPixmap shot = w->grab();
    const QString path = QStringLiteral("%1/%2_%3x%4.png")
                             .arg(dir, view.name)
                             .arg(size.width() * (hidpi ? 2 : 1))
                             .arg(size.height() * (hidpi ? 2 : 1));
    if (!shot.save(path)) qWarning("cannot write %s", qPrintable(path));
    w->hide();
  }
}

}  // namespace

class TrainingWorkspaceTest : public QObject {
  Q_OBJECT

 private slots:
  // FC + GRU training feeds the gradient views from the engine observer:
  // per-step weight statistics and the ||dL/dh_t|| heat map (one column per
  // optimizer step, one row per time step of the sequence).
  void fcPlusGruFeedsTheGradientFlowMap() {
    TrainingWorkspace workspace;
    ExperimentSettings s = gestureOnBasicMotions("flow", 1);
    s.stages = {"all"};
    workspace.startExperiment(s);
    QVERIFY2(workspace.waitForIdle(90000), "experiment did not finish in 90 s");
    QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
    workspace.gradientView()->flush();
    const gruwb::views::GradientFlowMap* map = workspace.gradientView()->flowMap();
    QVERIFY(map->columnCount() > 0);
    QCOMPARE(map->timeSteps(), 100);  // BasicMotions series: 100 steps
    int positive = 0;
    for (int t = 0; t < map->timeSteps(); ++t) positive += map->norm(0, t) > 0;
    QCOMPARE(positive, map->timeSteps());
    // GRU kernel, recurrent kernel, bias and the Dense weights and bias.
    QCOMPARE(workspace.gradientView()->weights().size(), 5);
  }

  void shortRealExperimentFillsCurvesAndTable() {
    TrainingWorkspace workspace;
    QSignalSpy finished(&workspace, &TrainingWorkspace::experimentFinished);
    const int id = workspace.startExperiment(gestureOnBasicMotions("gesture", 2));
    QVERIFY(workspace.isRunning());
    QVERIFY2(workspace.waitForIdle(90000), "experiment did not finish in 90 s");
    QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
    QCOMPARE(finished.count(), 1);
    QCOMPARE(workspace.panel()->experimentStatus(id), ExperimentPanel::Status::kFinished);

    // Loss: per-step training loss plus per-epoch validation loss for the
    // trained stage; accuracy per epoch.
    const QStringList loss_series = workspace.lossPlot()->seriesNames();
    QString train;
    for (const QString& s : loss_series) {
      if (s.startsWith("gesture") && s.endsWith(" train") && s.contains("fc")) train = s;
    }
    QVERIFY2(!train.isEmpty(), qPrintable(loss_series.join(" | ")));
    const QVector<double> losses = workspace.lossPlot()->values(train);
    QVERIFY(losses.size() >= 3);
    for (double v : losses) QVERIFY(std::isfinite(v) && v > 0);
    QVERIFY(!workspace.accuracyPlot()->seriesNames().isEmpty());
    for (const QString& s : workspace.accuracyPlot()->seriesNames()) {
      for (double v : workspace.accuracyPlot()->values(s)) QVERIFY(v >= 0 && v <= 1);
    }

    // The table: init and fc rows, FC-only trains only the Dense weights.
    const auto& rows = workspace.comparisonTable()->stageResults();
    QCOMPARE(rows.size(), 2);
    QCOMPARE(rows[0].stage, QString("init"));
    QCOMPARE(rows[1].stage, QString("fc"));
    QCOMPARE(rows[1].trainable_parameters, qint64(8 * 4 + 4));
    QVERIFY(rows[1].training_memory_bytes > 0);
    qint64 evaluated = 0;
    for (const auto& row : rows[1].confusion) {
      for (qint64 c : row) evaluated += c;
    }
    QVERIFY(evaluated > 0);
    QCOMPARE(rows[1].confusion.size(), 4);  // BasicMotions: 4 classes
    QVERIFY(!workspace.gradientView()->runs().isEmpty());
    saveScreenshots(workspace);
  }

  void stopKeepsResultsAndOthersRunOn() {
    TrainingWorkspace workspace;
    const int slow = workspace.startExperiment(gestureOnBasicMotions("long", 200));
    const int quick = workspace.startExperiment(gestureOnBasicMotions("quick", 1));
    QTRY_VERIFY_WITH_TIMEOUT(!workspace.lossPlot()->seriesNames().isEmpty(), 60000);
    workspace.stopExperiment(slow);
    QVERIFY(workspace.waitForIdle(90000));
    QCOMPARE(workspace.panel()->experimentStatus(slow), ExperimentPanel::Status::kCancelled);
    QCOMPARE(workspace.panel()->experimentStatus(quick), ExperimentPanel::Status::kFinished);
  }

  void badInputFailsWithTheCulprit() {
    TrainingWorkspace workspace;
    ExperimentSettings s = gestureOnBasicMotions("broken", 1);
    s.dataset_path = QString(GRUWB_SOURCE_DIR) + "/resources/samples/no_such_data.ts";
    const int id = workspace.startExperiment(s);
    QVERIFY(workspace.waitForIdle(30000));
    QCOMPARE(workspace.panel()->experimentStatus(id), ExperimentPanel::Status::kFailed);
    QVERIFY2(workspace.lastError().contains("no_such_data.ts"), qPrintable(workspace.lastError()));
  }

  void guiNeverStallsWhileTraining() {
    TrainingWorkspace workspace;
    // Visible widgets, so replots really paint (offscreen platform).
    workspace.curvesWidget()->resize(1000, 400);
    workspace.curvesWidget()->show();
    workspace.gradientView()->resize(800, 500);
    workspace.gradientView()->show();
    QTimer tick;
    tick.setInterval(10);
    QElapsedTimer clock;
    qint64 last_ns = 0;
    qint64 last_wait_ns = runQueueWaitNs();
    qint64 worst_gap_ns = 0;
    qint64 worst_own_ns = 0;  // gap minus the time spent waiting for a CPU
    int ticks = 0;
    connect(&tick, &QTimer::timeout, [&] {
      const qint64 now = clock.nsecsElapsed();
      const qint64 wait = runQueueWaitNs();
      if (ticks++ > 0) {
        const qint64 gap = now - last_ns;
        const qint64 own = wait >= 0 && last_wait_ns >= 0 ? gap - (wait - last_wait_ns) : gap;
        worst_gap_ns = std::max(worst_gap_ns, gap);
        worst_own_ns = std::max(worst_own_ns, own);
      }
      last_ns = now;
      last_wait_ns = wait;
    });
    clock.start();
    tick.start();
    workspace.startExperiment(gestureOnBasicMotions("a", 150));
    workspace.startExperiment(gestureOnBasicMotions("b", 150));
    QVERIFY(workspace.waitForIdle(120000));
    tick.stop();
    const double gap_ms = worst_gap_ns / 1e6;
    const double own_ms = worst_own_ns / 1e6;
    qInfo("%d ticks; worst gap %.1f ms, of which %.1f ms not waiting for a CPU", ticks, gap_ms,
          own_ms);
    QVERIFY(ticks > 10);
    QVERIFY(workspace.lossPlot()->replotCount() > 0);
    QVERIFY2(own_ms < 50, qPrintable(QString("GUI thread stalled %1 ms").arg(own_ms)));
  }
};

QTEST_MAIN(TrainingWorkspaceTest)
#include "training_workspace_test.moc"
