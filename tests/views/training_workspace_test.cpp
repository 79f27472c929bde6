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

#include <qcustomplot.h>

#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "engine/tools/model_builder.h"
#include "engine/tools/model_writer.h"
#include "views/comparison_table.h"
#include "views/curve_plot.h"
#include "views/gradient_flow_map.h"
#include "views/gradient_view.h"
#include "views/run_list.h"

using gruwb::gui::TrainingWorkspace;
using gruwb::views::CurvePlot;
using gruwb::views::ExperimentPanel;
using gruwb::views::ExperimentSettings;
using gruwb::views::RunList;

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

// The smoothed (legend) graph of a series by the name it shows; null when none.
QCPGraph* graphNamed(const CurvePlot* plot, const QString& name) {
  for (int i = 0; i < plot->plot()->graphCount(); ++i) {
    if (plot->plot()->graph(i)->name() == name) return plot->plot()->graph(i);
  }
  return nullptr;
}

QVector<double> graphKeys(const CurvePlot* plot, const QString& name) {
  QVector<double> keys;
  const QCPGraph* graph = graphNamed(plot, name);
  if (!graph) return keys;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
    keys << it->key;
  return keys;
}

int hiddenRows(const RunList* runs) {
  int hidden = 0;
  for (int i = 0; i < runs->list()->count(); ++i) hidden += runs->list()->item(i)->isHidden();
  return hidden;
}

// Nanoseconds this thread has waited on a run queue (-1 when unknown).
qint64 runQueueWaitNs() {
  QFile file("/proc/thread-self/schedstat");
  if (!file.open(QIODevice::ReadOnly)) return -1;
  const QList<QByteArray> fields = file.readAll().split(' ');
  return fields.size() >= 2 ? fields[1].trimmed().toLongLong() : -1;
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

  // The Training box's single-sample passes reach the runner: the stage trains
  // in the memory of batch 1, less than one pass of the batch's 8 rows needs.
  void singleSamplePassesTrainInLessMemory() {
    qint64 memory[2] = {};
    for (int single = 0; single < 2; ++single) {
      TrainingWorkspace workspace;
      ExperimentSettings s = gestureOnBasicMotions(single ? "single" : "batched", 1);
      s.stages = {"all"};
      s.batched_passes = single == 0;
      workspace.startExperiment(s);
      QVERIFY2(workspace.waitForIdle(90000), "experiment did not finish in 90 s");
      QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
      const auto& rows = workspace.comparisonTable()->stageResults();
      QCOMPARE(rows.size(), 1);
      memory[single] = rows[0].training_memory_bytes;
    }
    QVERIFY(memory[1] > 0);
    QVERIFY2(
        memory[1] < memory[0],
        qPrintable(QString("single-sample %1 bytes, one pass %2").arg(memory[1]).arg(memory[0])));
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
  }

  // Issue 20, point 8: one smoothing default and one slider for both plots.
  void bothPlotsSmoothTheSame() {
    TrainingWorkspace workspace;
    QCOMPARE(workspace.lossPlot()->smoothing(), CurvePlot::kDefaultSmoothing);
    QCOMPARE(workspace.accuracyPlot()->smoothing(), CurvePlot::kDefaultSmoothing);
    QCOMPARE(workspace.runList()->smoothing(), CurvePlot::kDefaultSmoothing);
    workspace.runList()->smoothingSlider()->setValue(250);
    QCOMPARE(workspace.lossPlot()->smoothing(), 0.25);
    QCOMPARE(workspace.accuracyPlot()->smoothing(), 0.25);
    // The run list is the legend: the plots' own legends start hidden, their sliders too.
    QVERIFY(!workspace.lossPlot()->legendVisible());
    QVERIFY(!workspace.lossPlot()->smoothingSlider()->isVisibleTo(workspace.lossPlot()));
  }

  // Issue 20, point 8: two real experiments, one row per run; hide, rename, colour, filter,
  // delete and undo change what both plots draw, and the x axis moves every point to its
  // epoch or wall time. Then the dock's state survives a restart.
  void runListManagesBothPlots() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath("settings.ini"), QSettings::IniFormat);
    {
      TrainingWorkspace workspace;
      ExperimentSettings a = gestureOnBasicMotions("alpha", 2);
      ExperimentSettings b = gestureOnBasicMotions("beta", 2);
      a.stages = b.stages = QStringList{"fc"};
      workspace.startExperiment(a);
      workspace.startExperiment(b);
      QVERIFY2(workspace.waitForIdle(120000), "experiments did not finish in 120 s");
      QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
      RunList* runs = workspace.runList();
      CurvePlot* loss = workspace.lossPlot();
      CurvePlot* accuracy = workspace.accuracyPlot();
      const auto flush = [&] {
        loss->flush();
        accuracy->flush();
      };
      QStringList keys = runs->runs();
      keys.sort();
      QCOMPARE(keys, (QStringList{"alpha / fc", "beta / fc"}));
      QCOMPARE(runs->list()->count(), 2);
      flush();
      QVERIFY(graphNamed(loss, "alpha / fc train")->visible());
      QVERIFY(graphNamed(accuracy, "alpha / fc val")->visible());

      // Hide: both plots, both splits; the other run stays.
      runs->setChecked("alpha / fc", false);
      flush();
      QVERIFY(!graphNamed(loss, "alpha / fc train")->visible());
      QVERIFY(!graphNamed(loss, "alpha / fc val")->visible());
      QVERIFY(!graphNamed(accuracy, "alpha / fc train")->visible());
      QVERIFY(graphNamed(loss, "beta / fc train")->visible());
      runs->setChecked("alpha / fc", true);
      flush();
      QVERIFY(graphNamed(accuracy, "alpha / fc train")->visible());
      // A click on a legend entry is the run's tick box.
      loss->setLegendVisible(true);
      flush();
      QCPAbstractLegendItem* entry =
          loss->plot()->legend->itemWithPlottable(graphNamed(loss, "alpha / fc train"));
      QVERIFY(entry);
      emit loss->plot()->legendClick(loss->plot()->legend, entry, nullptr);
      QVERIFY(!runs->isChecked("alpha / fc"));
      flush();
      QVERIFY(!graphNamed(accuracy, "alpha / fc val")->visible());
      runs->setChecked("alpha / fc", true);
      loss->setLegendVisible(false);

      // Rename: the plots' names follow, underscores and all.
      runs->rename("beta / fc", "beta_lr0.01");
      flush();
      QVERIFY(graphNamed(loss, "beta_lr0.01 train"));
      QVERIFY(graphNamed(accuracy, "beta_lr0.01 val"));
      QVERIFY(!graphNamed(loss, "beta / fc train"));
      QVERIFY(loss->hoverText(1).contains("beta_lr0.01 train: "));

      // Colour: every series of the run, validation still dashed.
      runs->setColor("alpha / fc", QColor("#123456"));
      flush();
      QCOMPARE(graphNamed(loss, "alpha / fc train")->pen().color(), QColor("#123456"));
      QCOMPARE(graphNamed(accuracy, "alpha / fc val")->pen().color(), QColor("#123456"));
      QCOMPARE(graphNamed(accuracy, "alpha / fc val")->pen().style(), Qt::DashLine);

      // Filter: a regex over the names shown; a broken one matches as text.
      runs->filterEdit()->setText("^BETA_");
      flush();
      QVERIFY(!graphNamed(loss, "alpha / fc train")->visible());
      QVERIFY(graphNamed(loss, "beta_lr0.01 train")->visible());
      QCOMPARE(hiddenRows(runs), 1);
      runs->filterEdit()->setText("(alpha");
      flush();
      QVERIFY(!graphNamed(loss, "alpha / fc train")->visible());
      QVERIFY(!graphNamed(loss, "beta_lr0.01 train")->visible());
      runs->filterEdit()->clear();
      flush();
      QVERIFY(graphNamed(loss, "alpha / fc train")->visible());
      QCOMPARE(hiddenRows(runs), 0);

      // Delete takes the run's four graphs out of each plot; Undo puts them back as they were.
      const int loss_graphs = loss->plot()->graphCount();
      const QVector<double> alpha_loss = loss->values("alpha / fc train");
      runs->list()->setCurrentRow(runs->runs().indexOf("alpha / fc"));
      runs->deleteButton()->click();
      flush();
      QCOMPARE(runs->runs(), QStringList{"beta / fc"});
      QCOMPARE(loss->plot()->graphCount(), loss_graphs - 4);
      QVERIFY(!graphNamed(loss, "alpha / fc train"));
      QVERIFY(!accuracy->seriesNames().contains("alpha / fc val"));
      QVERIFY(runs->undoButton()->isEnabled());
      runs->undoButton()->click();
      flush();
      QCOMPARE(loss->plot()->graphCount(), loss_graphs);
      QCOMPARE(loss->values("alpha / fc train"), alpha_loss);
      QVERIFY(graphNamed(loss, "alpha / fc train")->visible());
      QCOMPARE(graphNamed(loss, "alpha / fc train")->pen().color(), QColor("#123456"));
      QVERIFY(!runs->undoButton()->isEnabled());

      // X axis: steps, then epochs (2 of them, fractional inside), then seconds.
      const QVector<double> steps = graphKeys(loss, "alpha / fc train");
      QVERIFY(steps.last() > 2);
      runs->xAxisBox()->setCurrentIndex(runs->xAxisBox()->findText("Epoch"));
      flush();
      const QVector<double> epochs = graphKeys(loss, "alpha / fc train");
      QCOMPARE(epochs.size(), steps.size());
      QCOMPARE(epochs.last(), 2.0);
      // Epoch 0 is the initial evaluation; steps inside the first epoch are fractions of it.
      QCOMPARE(epochs.first(), 0.0);
      QVERIFY(std::any_of(epochs.begin(), epochs.end(), [](double e) { return e > 0 && e < 1; }));
      QVERIFY(std::is_sorted(epochs.begin(), epochs.end()));
      QCOMPARE(graphKeys(accuracy, "alpha / fc val"), (QVector<double>{0, 1, 2}));
      QCOMPARE(loss->plot()->xAxis->label(), QString("epoch"));
      runs->setXAxis(gruwb::views::CurveXAxis::kWallTime);
      flush();
      const QVector<double> seconds = graphKeys(loss, "alpha / fc train");
      QVERIFY(std::is_sorted(seconds.begin(), seconds.end()));
      QVERIFY(seconds.first() >= 0 && seconds.last() > seconds.first());
      QVERIFY(seconds.last() < 120);
      QCOMPARE(accuracy->xAxis(), gruwb::views::CurveXAxis::kWallTime);

      runs->setChecked("alpha / fc", false);
      runs->setFilter("fc");
      runs->setSmoothing(0.3);
      workspace.saveSettings(settings);
    }
    settings.sync();
    TrainingWorkspace restored;
    restored.restoreSettings(settings);
    RunList* runs = restored.runList();
    QCOMPARE(runs->filter(), QString("fc"));
    QCOMPARE(runs->filterEdit()->text(), QString("fc"));
    QCOMPARE(runs->xAxis(), gruwb::views::CurveXAxis::kWallTime);
    QCOMPARE(restored.lossPlot()->xAxis(), gruwb::views::CurveXAxis::kWallTime);
    QCOMPARE(restored.accuracyPlot()->smoothing(), 0.3);
    QCOMPARE(restored.lossPlot()->smoothing(), 0.3);
    // Runs of those names come back hidden, renamed and coloured as they were.
    runs->addRun("alpha / fc", Qt::red);
    runs->addRun("beta / fc", Qt::red);
    QVERIFY(!runs->isChecked("alpha / fc"));
    QCOMPARE(runs->color("alpha / fc"), QColor("#123456"));
    QCOMPARE(runs->label("beta / fc"), QString("beta_lr0.01"));
    QCOMPARE(runs->color("beta / fc"), QColor(Qt::red));
  }

  // A run deleted while it trains keeps collecting its points: Undo brings back every step.
  void deletedRunStillTrainingComesBackWhole() {
    TrainingWorkspace workspace;
    ExperimentSettings s = gestureOnBasicMotions("long", 40);
    s.stages = QStringList{"fc"};
    workspace.startExperiment(s);
    const QString series = "long / fc train";
    QTRY_VERIFY_WITH_TIMEOUT(workspace.lossPlot()->values(series).size() >= 2, 60000);
    workspace.runList()->removeRun("long / fc");
    const bool deleted_while_running = workspace.isRunning();
    QVERIFY(!workspace.lossPlot()->seriesNames().contains(series));
    QVERIFY2(workspace.waitForIdle(120000), "experiment did not finish in 120 s");
    QVERIFY(!workspace.lossPlot()->seriesNames().contains(series));
    QVERIFY(workspace.runList()->undoRemove());
    const QVector<double> steps = workspace.lossPlot()->steps(series);
    QVERIFY(deleted_while_running);
    // Step 0 (the initial evaluation), then every optimizer step, none missing.
    for (int i = 0; i < steps.size(); ++i) QCOMPARE(steps[i], double(i));
    QVERIFY(steps.size() > 40);
    QCOMPARE(workspace.accuracyPlot()->values("long / fc val").size(), 41);  // epochs 0..40
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
    // The stopped stage says so, with no made-up figures (issue 20, point 5); the stage before
    // it keeps its results.
    const auto& rows = workspace.comparisonTable()->stageResults();
    QTableWidget* table = workspace.comparisonTable()->stageTable();
    bool seen_stopped = false;
    for (int i = 0; i < rows.size(); ++i) {
      if (!rows[i].experiment.startsWith("long")) continue;
      const QString accuracy = table->item(i, 2)->text();
      if (rows[i].stage == "init") {
        QCOMPARE(rows[i].seeds, 1);
        QVERIFY2(accuracy.startsWith("0."), qPrintable(accuracy));
      } else {
        QCOMPARE(rows[i].seeds, 0);
        QCOMPARE(rows[i].outcome, QString("stopped"));
        QCOMPARE(accuracy, QString("stopped"));
        QCOMPARE(table->item(i, 3)->text(), QString("\u2013"));  // no cross entropy
        QCOMPARE(table->item(i, 4)->text(), QString("\u2013"));  // no delta
        seen_stopped = true;
      }
    }
    QVERIFY(seen_stopped);
  }

  // File > Export Report: the finished experiment through the application
  // layer's report writers, each file valid in its format.
  void exportReportWritesValidFiles() {
    QTemporaryDir dir;
    TrainingWorkspace workspace;
    QString error;
    QVERIFY(!workspace.exportReport(dir.filePath("none.html"), &error));
    QVERIFY2(error.contains("no experiment has finished"), qPrintable(error));
    const int id = workspace.startExperiment(gestureOnBasicMotions("export", 2));
    QVERIFY(workspace.waitForIdle(90000));
    QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
    QCOMPARE(workspace.reportExperiment(), id);

    const auto read = [&](const QString& name) {
      QFile file(dir.filePath(name));
      return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    };
    for (const char* name : {"r.html", "r.pdf", "r.csv", "r.json"}) {
      QVERIFY2(workspace.exportReport(dir.filePath(name), &error), qPrintable(error));
    }
    // HTML: self-contained (no external links), the headline rows with the
    // table's figures: FC-only trains 8x4 + 4 Dense parameters.
    const QByteArray html = read("r.html");
    QVERIFY(html.startsWith("<!DOCTYPE html>"));
    QVERIFY(html.contains("<tr><td>init</td>"));
    QVERIFY(html.contains("<tr><td>fc</td>"));
    QVERIFY(html.contains("<td>36</td>"));
    QVERIFY(html.contains("<svg"));
    QVERIFY(!html.contains("src=\"http") && !html.contains("href=\"http"));
    QVERIFY(read("r.pdf").startsWith("%PDF-"));
    // CSV: one row per epoch of every run, both stages.
    const QList<QByteArray> lines = read("r.csv").trimmed().split('\n');
    QVERIFY(lines[0].startsWith("cell,stage,seed,epoch"));
    int fc_rows = 0;
    for (const QByteArray& line : lines.mid(1)) fc_rows += line.split(',').value(1) == "fc";
    QVERIFY2(fc_rows >= 2, qPrintable(QString::number(fc_rows)));
    // JSON: the same summary as the table.
    const QJsonObject json = QJsonDocument::fromJson(read("r.json")).object();
    const QJsonArray summary = json["summary"].toArray();
    QCOMPARE(summary.size(), 2);
    const auto& rows = workspace.comparisonTable()->stageResults();
    QCOMPARE(summary[1].toObject()["test_accuracy"].toObject()["mean"].toDouble(),
             rows[1].accuracy);
    // A bad format or place is an error naming the file.
    QVERIFY(!workspace.exportReport(dir.filePath("r.docx"), &error));
    QVERIFY2(error.contains("r.docx"), qPrintable(error));
    QVERIFY(!workspace.exportReport(dir.filePath("no/such/r.html"), &error));
    QVERIFY2(error.contains("r.html"), qPrintable(error));
  }

  // Cell comparison: the same data through a fresh GRU, LSTM, SimpleRNN and the plugin cells
  // FastGRNN and MGU (4 units, 1 epoch); the cell table gets accuracy, sizes and latency.
  void cellComparisonFillsTheCellTable() {
    TrainingWorkspace workspace;
    ExperimentSettings s = gestureOnBasicMotions("cells", 1);
    s.build_spec = "cell=gru,units=4";
    s.dataset_path = QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotionsAcc60_TRAIN.ts";
    s.stages = {"all"};
    s.compare_cells = {"gru", "lstm", "rnn", "fastgrnn", "mgu"};
    workspace.startExperiment(s);
    QVERIFY(workspace.waitForIdle(90000));
    QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
    const auto& cells = workspace.comparisonTable()->cellResults();
    QCOMPARE(cells.size(), 5);
    QCOMPARE(cells[0].cell, QString("GRU"));
    QCOMPARE(cells[1].cell, QString("LSTM"));
    QCOMPARE(cells[2].cell, QString("SimpleRNN"));
    QCOMPARE(cells[3].cell, QString("FastGRNN"));
    QCOMPARE(cells[4].cell, QString("MGU"));
    // Parameters from the cell equations (F=3 inputs, H=4 units, C=4
    // classes, Dense 4x4+4): GRU 3H(F+H)+2*3H (reset_after biases), LSTM
    // 4H(F+H)+4H, SimpleRNN H(F+H)+H, FastGRNN H(F+H)+2H+2 (b_z, b_h, zeta,
    // nu), MGU 2H(F+H)+2H.
    const qint64 dense = 4 * 4 + 4;
    QCOMPARE(cells[0].parameters, 3 * 4 * (3 + 4) + 2 * 3 * 4 + dense);
    QCOMPARE(cells[1].parameters, 4 * 4 * (3 + 4) + 4 * 4 + dense);
    QCOMPARE(cells[2].parameters, 4 * (3 + 4) + 4 + dense);
    QCOMPARE(cells[3].parameters, 4 * (3 + 4) + 2 * 4 + 2 + dense);
    QCOMPARE(cells[4].parameters, 2 * 4 * (3 + 4) + 2 * 4 + dense);
    for (const auto& c : cells) {
      QVERIFY(c.accuracy >= 0 && c.accuracy <= 1);
      QVERIFY(c.fused_bytes > 0);
      QVERIFY2(c.while_bytes > c.fused_bytes, qPrintable(c.cell));     // the loop spells it out
      QVERIFY2(c.unrolled_bytes > c.while_bytes, qPrintable(c.cell));  // a copy per step
      QVERIFY(c.latency_us > 0);
    }
    QVERIFY(workspace.comparisonTable()->cellTable()->isVisibleTo(workspace.comparisonTable()));
    QCOMPARE(workspace.comparisonTable()->cellTable()->rowCount(), 5);
    // One stage row per cell too.
    QCOMPARE(workspace.comparisonTable()->stageResults().size(), 5);
  }

  // Model files beside a built cell (gruwb --compare-models): each file is a
  // row saying which file it used; one that does not fit the data has its
  // error in its row and the experiment fails with it, the others complete.
  void modelFilesAreRowsOfTheCellTable() {
    TrainingWorkspace workspace;
    const QString samples = QString(GRUWB_SOURCE_DIR) + "/resources/samples/";
    ExperimentSettings s = gestureOnBasicMotions("models", 1);
    s.model_path.clear();
    s.build_spec = "cell=gru,units=4";
    s.dataset_path = samples + "BasicMotionsAcc60_TRAIN.ts";
    s.stages = {"fc"};
    s.compare_models = {samples + "gesture_gru_while.tflite", samples + "gru_float.circle"};
    workspace.startExperiment(s);
    QVERIFY(workspace.waitForIdle(90000));
    QVERIFY2(workspace.lastError().contains("gru_float.circle"), qPrintable(workspace.lastError()));
    const auto& cells = workspace.comparisonTable()->cellResults();
    QCOMPARE(cells.size(), 3);
    QCOMPARE(cells[0].cell, QString("GRU"));
    QVERIFY(cells[0].model_path.isEmpty());
    QCOMPARE(cells[1].cell, QString("gesture_gru_while.tflite"));
    QCOMPARE(cells[1].model_path, s.compare_models[0]);
    QCOMPARE(cells[1].while_bytes, QFileInfo(s.compare_models[0]).size());
    QVERIFY(cells[1].fused_bytes > 0 && cells[1].fused_bytes < cells[1].while_bytes);
    QVERIFY(cells[1].error.isEmpty());
    QCOMPARE(cells[1].board_latency_us, 0.0);
    QVERIFY(!cells[2].error.isEmpty());
    QTableWidget* table = workspace.comparisonTable()->cellTable();
    QCOMPARE(table->item(1, 0)->toolTip(), s.compare_models[0]);
    QVERIFY(table->item(2, gruwb::views::ComparisonTable::kCellNoteColumn)
                ->text()
                .startsWith("error: "));
    // The stage rows name the file too.
    bool named = false;
    for (const auto& row : workspace.comparisonTable()->stageResults())
      named |= row.experiment.endsWith("gesture_gru_while.tflite");
    QVERIFY(named);
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

  // A model whose outputs are a GRU state and the logits (both [1,3], no
  // SOFTMAX output): the panel offers both, and Start without a choice is
  // one line in lastError()/startRefused() instead of a run.
  void undecidableLossOutputRefusesToStart() {
    QTemporaryDir dir;
    gruwb::tools::BuildSpec spec;
    spec.timesteps = 100;
    spec.features = 6;
    spec.units = 3;
    spec.classes = 3;
    gruwb::tools::ModelDef def;
    std::string error;
    QVERIFY2(gruwb::tools::build_model(spec, &def, &error), error.c_str());
    auto& graph = *def.subgraphs[0];
    int32_t logits = -1, state = -1;
    for (const auto& op : graph.operators) {
      const int code = static_cast<int>(def.operator_codes[op->opcode_index]->builtin_code);
      if (code == static_cast<int>(gruwb::BuiltinOperator::SOFTMAX)) logits = op->inputs[0];
    }
    for (const auto& op : graph.operators) {
      if (!op->outputs.empty() && op->outputs[0] == logits) state = op->inputs[0];
    }
    QVERIFY(logits >= 0 && state >= 0);
    graph.outputs = {state, logits};
    def.signature_defs.clear();
    const QString path = dir.filePath("two_outputs.tflite");
    QVERIFY2(gruwb::tools::save_model(def, gruwb::ModelFormat::kTflite, path.toStdString(), &error),
             error.c_str());

    TrainingWorkspace workspace;
    QVERIFY(QMetaObject::invokeMethod(&workspace, "onModelChanged", Q_ARG(QString, path)));
    QComboBox* box = workspace.panel()->lossOutputBox();
    QCOMPARE(box->count(), 3);
    QVERIFY(box->itemText(0).contains("choose"));

    ExperimentSettings s = gestureOnBasicMotions("two outputs", 1);
    s.build_spec.clear();
    s.model_path = path;
    QSignalSpy refused(&workspace, &TrainingWorkspace::startRefused);
    QCOMPARE(workspace.startExperiment(s), -1);
    QCOMPARE(refused.count(), 1);
    QCOMPARE(workspace.panel()->experimentCount(), 0);
    const QString message = workspace.lastError();
    QVERIFY2(!message.contains('\n'), qPrintable(message));
    QVERIFY2(message.contains("[1,3], '") && message.contains("Loss on output"),
             qPrintable(message));
    s.loss_output = "1";  // the logits: the run starts
    const int id = workspace.startExperiment(s);
    QVERIFY(id >= 0);
    workspace.stopExperiment(id);
    QVERIFY(workspace.waitForIdle(60000));
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
    // Long enough for 20 or more 10 ms ticks in a plain build (150 epochs each took about 150 ms
    // by 2026-12-04, close to the 10 ticks the test needs), not so long that a sanitized build
    // under load meets a rare stall in hundreds of them.
    workspace.startExperiment(gestureOnBasicMotions("a", 300));
    workspace.startExperiment(gestureOnBasicMotions("b", 300));
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
