// Gradient views: the heat map holds ||dL/dh_t|| per (training step, time
// step) with log colours, the histogram plot draws fractions in offset and
// overlay modes and thins a long history, and the container keeps each run's
// statistics apart.

#include "views/gradient_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "views/curve_plot.h"
#include "views/gradient_flow_map.h"
#include "views/gradient_histogram_plot.h"

using namespace gruwb::views;

class GradientViewTest : public QObject {
  Q_OBJECT

 private slots:
  void flowMapStoresColumnsAndLogColours() {
    GradientFlowMap map;
    // Vanishing towards early time steps: 10^-(T-1-t).
    for (int step = 1; step <= 5; ++step) {
      QVector<double> norms;
      for (int t = 0; t < 4; ++t) norms.append(std::pow(10.0, -(3 - t)) * step);
      map.addColumn(step, norms);
    }
    QCOMPARE(map.columnCount(), 5);
    QCOMPARE(map.timeSteps(), 4);
    QCOMPARE(map.columnStep(4), qint64(5));
    QCOMPARE(map.norm(0, 0), 1e-3);
    QVERIFY(std::abs(map.cellValue(0, 0) - -3.0) < 1e-12);
    QVERIFY(std::abs(map.cellValue(1, 3) - std::log10(2.0)) < 1e-12);
    map.flush();
    // The colour map spans the log10 values, low at t=0.
    QCPColorMap* color_map = qobject_cast<QCPColorMap*>(map.plot()->plottable(0));
    QVERIFY(color_map);
    QCOMPARE(color_map->data()->keySize(), 5);
    QCOMPARE(color_map->data()->valueSize(), 4);
    QVERIFY(std::abs(color_map->data()->cell(0, 0) - -3.0) < 1e-12);
    QVERIFY(std::abs(color_map->dataRange().lower - -3.0) < 1e-12);
    QVERIFY(std::abs(color_map->dataRange().upper - std::log10(5.0)) < 1e-12);
    map.setLogColors(false);
    QCOMPARE(map.cellValue(0, 0), 1e-3);
    // A sequence of another length starts afresh.
    map.addColumn(6, {1, 2});
    QCOMPARE(map.columnCount(), 1);
    QCOMPARE(map.timeSteps(), 2);
  }

  void flowMapThinsLongHistory() {
    GradientFlowMap map;
    for (int step = 0; step < GradientFlowMap::kMaxColumns + 1; ++step) {
      map.addColumn(step, {1.0, 2.0});
    }
    QVERIFY(map.columnCount() <= GradientFlowMap::kMaxColumns / 2 + 2);
    QCOMPARE(map.columnStep(0), qint64(0));
    QCOMPARE(map.columnStep(map.columnCount() - 1), qint64(GradientFlowMap::kMaxColumns));
  }

  void histogramFractionsAndBins() {
    GradientHistogram h{7, 0.5, {1, 3, 4, 0}};
    QCOMPARE(histogram_bin_centers(h), (QVector<double>{-0.375, -0.125, 0.125, 0.375}));
    QCOMPARE(histogram_fractions(h), (QVector<double>{0.125, 0.375, 0.5, 0.0}));
    GradientHistogram zeros{0, 0, {0, 0}};
    QCOMPARE(histogram_fractions(zeros), (QVector<double>{0, 0}));
  }

  void histogramModes() {
    GradientHistogramPlot plot;
    for (int step = 0; step < 3; ++step) {
      plot.addHistogram({step, 1.0 + step, {1, 2, 4, 2, 1}});
    }
    plot.flush();
    // Offset: a baseline and a filled ridge per step, newest at row 0.
    QCOMPARE(plot.plot()->graphCount(), 6);
    QCPGraph* newest_base = plot.plot()->graph(4);
    QCOMPARE(newest_base->data()->begin()->value, 0.0);
    QCOMPARE(plot.plot()->graph(0)->data()->begin()->value, 2.0);  // oldest two rows up
    QCOMPARE(plot.plot()->graph(5)->channelFillGraph(), newest_base);
    plot.setMode(GradientHistogramPlot::Mode::kOverlay);
    plot.flush();
    QCOMPARE(plot.plot()->graphCount(), 3);
    // Overlay draws the fractions themselves; x spans the widest range.
    QCOMPARE((plot.plot()->graph(2)->data()->begin() + 2)->value, 0.4);
    QCOMPARE(plot.plot()->xAxis->range().upper, 3.0);
  }

  void histogramShowsEvenlySpacedSubset() {
    GradientHistogramPlot plot;
    for (int step = 0; step < 100; ++step) plot.addHistogram({step, 1.0, {1, 1}});
    const QVector<int> shown = plot.shownIndices();
    QCOMPARE(shown.size(), GradientHistogramPlot::kMaxShown);
    QCOMPARE(shown.first(), 0);
    QCOMPARE(shown.last(), 99);
    for (int i = 1; i < shown.size(); ++i) QVERIFY(shown[i] > shown[i - 1]);
  }

  void viewKeepsRunsApart() {
    GradientView view;
    auto weight = [](const QString& run, qint64 step, const QString& name, double norm) {
      WeightGradientSample s;
      s.run = run;
      s.step = step;
      s.weight = name;
      s.norm = norm;
      s.range = norm;
      s.histogram = {1, 2, 3, 2};
      return s;
    };
    for (int step = 1; step <= 3; ++step) {
      view.addWeightGradient(weight("exp 1 / fc", step, "dense/kernel", 0.1 * step));
      view.addWeightGradient(weight("exp 1 / fc", step, "dense/bias", 0.01 * step));
      view.addStateGradient({"exp 1 / fc", step, "op 1 GRU", {0.1, 0.2, 0.3}});
    }
    QCOMPARE(view.currentRun(), QString("exp 1 / fc"));
    QCOMPARE(view.weights(), (QStringList{"dense/kernel", "dense/bias"}));
    QCOMPARE(view.currentWeight(), QString("dense/kernel"));
    QCOMPARE(view.normPlot()->values("dense/bias"),
             (QVector<double>{0.01 * 1, 0.01 * 2, 0.01 * 3}));
    QCOMPARE(view.histogramPlot()->histogramCount(), 3);
    QCOMPARE(view.flowMap()->columnCount(), 3);

    // A new run becomes current; the old one's figures come back on demand.
    view.addWeightGradient(weight("exp 1 / all", 1, "gru/kernel", 5.0));
    view.addWeightGradient(weight("exp 1 / all", 1, "dense/kernel", 2.0));
    QCOMPARE(view.currentRun(), QString("exp 1 / all"));
    QCOMPARE(view.normPlot()->seriesNames(), (QStringList{"gru/kernel", "dense/kernel"}));
    QCOMPARE(view.flowMap()->columnCount(), 0);
    view.weightBox()->setCurrentText("dense/kernel");
    QCOMPARE(view.histogramPlot()->histogramCount(), 1);
    QCOMPARE(view.histogramPlot()->histogram(0).range, 2.0);
    view.runBox()->setCurrentText("exp 1 / fc");
    QCOMPARE(view.currentRun(), QString("exp 1 / fc"));
    QCOMPARE(view.currentWeight(), QString("dense/kernel"));  // kept: the run has it
    QCOMPARE(view.histogramPlot()->histogramCount(), 3);
    QCOMPARE(view.flowMap()->columnCount(), 3);
    QCOMPARE(view.normPlot()->values("dense/kernel"), (QVector<double>{0.1 * 1, 0.1 * 2, 0.1 * 3}));
  }

  void settingsRoundTrip() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath("s.ini"), QSettings::IniFormat);
    {
      GradientView view;
      view.setHistogramMode(GradientHistogramPlot::Mode::kOverlay);
      view.normPlot()->setLogScale(false);
      view.saveSettings(settings, "gradients");
    }
    GradientView restored;
    QCOMPARE(restored.histogramMode(), GradientHistogramPlot::Mode::kOffset);
    QVERIFY(restored.normPlot()->logScale());
    restored.restoreSettings(settings, "gradients");
    QCOMPARE(restored.histogramMode(), GradientHistogramPlot::Mode::kOverlay);
    QVERIFY(!restored.normPlot()->logScale());
  }
};

QTEST_MAIN(GradientViewTest)
#include "gradient_view_test.moc"
