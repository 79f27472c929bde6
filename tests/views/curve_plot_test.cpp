// CurvePlot: TensorBoard smoothing against hand-computed values, bounded
// repaint, legend toggles, hover text, exports that other tools can read, and
// settings that survive a restart.

#include "views/curve_plot.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QFile>
#include <QImage>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

using gruwb::views::CurvePlot;
using gruwb::views::EmaState;
using gruwb::views::smooth_ema;

namespace {

// Entries, not cells: a legend wrapped into columns has empty cells.
int legendEntries(const QCPLegend* legend) {
  int entries = 0;
  for (int i = 0; i < legend->itemCount(); ++i) entries += legend->item(i) != nullptr;
  return entries;
}

}  // namespace

class CurvePlotTest : public QObject {
  Q_OBJECT

 private slots:
  // Issue 20, point 8: an empty plot has no legend box and a 0..1 axis, not QCustomPlot's 0..5;
  // the legend appears with the first series.
  void emptyPlotHasNoLegendAndAUnitAxis() {
    gruwb::views::CurvePlot plot("Accuracy", "accuracy");
    plot.flush();
    QVERIFY(!plot.plot()->legend->visible());
    QCOMPARE(plot.plot()->yAxis->range().lower, 0.0);
    QCOMPARE(plot.plot()->yAxis->range().upper, 1.0);
    plot.addPoint("run train accuracy", 0, 0.5);
    plot.flush();
    QVERIFY(plot.plot()->legend->visible());
    plot.clear();
    plot.flush();
    QVERIFY(!plot.plot()->legend->visible());
  }

  // Issue 20 point 9: a short plot spaces its tick labels instead of running them together.
  // The Gradients dock's norm plot at 1366x768 (log scale, norms from 1.2 down to 0.0006 over
  // 60 steps, as after the bundled gesture run) had "1 0.1 0.01 0.001" in 40 px.
  void shortPlotsSpaceTheirTickLabels() {
    gruwb::views::CurvePlot plot("Gradient norm per weight", "||grad||");
    plot.resize(680, 150);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.setLogScale(true);
    for (int step = 1; step <= 60; ++step) {
      plot.addPoint("gru/kernel", step, 1.2 * std::pow(0.88, step));
    }
    plot.flush();
    plot.plot()->replot();  // the axis rect's size of the first layout sets the tick counts
    QCustomPlot* p = plot.plot();
    const int line = QFontMetrics(p->font()).height();
    const auto gaps = [](QCPAxis* axis) {
      QVector<double> pixels;
      for (double tick : axis->tickVector()) {
        if (axis->range().contains(tick)) pixels << axis->coordToPixel(tick);
      }
      std::sort(pixels.begin(), pixels.end());
      double smallest = 1e9;
      for (int i = 1; i < pixels.size(); ++i)
        smallest = std::min(smallest, pixels[i] - pixels[i - 1]);
      return std::make_pair(static_cast<int>(pixels.size()), smallest);
    };
    const auto [y_ticks, y_gap] = gaps(p->yAxis);
    QVERIFY2(y_ticks >= 2, qPrintable(QString::number(y_ticks)));
    QVERIFY2(y_gap >= line,
             qPrintable(QString("y ticks %1 px apart, text %2 px").arg(y_gap).arg(line)));
    const auto [x_ticks, x_gap] = gaps(p->xAxis);
    QVERIFY(x_ticks >= 2);
    QVERIFY(x_gap >= QFontMetrics(p->font()).horizontalAdvance("60") + 4);
  }

  void smoothingIsTensorBoardsDebiasedEma() {
    // By hand, w = 0.6:
    //   n=1: last = 0.4*1            = 0.4    / (1-0.6)    = 1
    //   n=2: last = 0.24 + 0.4*3     = 1.44   / (1-0.36)   = 2.25
    //   n=3: last = 0.864 + 0.4*2    = 1.664  / (1-0.216)  = 2.12244898
    //   n=4: last = 0.9984 + 0.4*10  = 4.9984 / (1-0.1296) = 5.74264706
    const std::vector<double> smoothed = smooth_ema({1, 3, 2, 10}, 0.6);
    QCOMPARE(int(smoothed.size()), 4);
    QCOMPARE(smoothed[0], 1.0);
    QVERIFY(std::abs(smoothed[1] - 2.25) < 1e-12);
    QVERIFY(std::abs(smoothed[2] - 1.664 / 0.784) < 1e-12);
    QVERIFY(std::abs(smoothed[3] - 4.9984 / 0.8704) < 1e-12);
    QVERIFY(std::abs(smoothed[3] - 5.74264706) < 1e-8);
  }

  void smoothingEdgeCases() {
    // 0 is the raw curve; a constant stays constant (the debias term).
    QCOMPARE(smooth_ema({5, -1, 7}, 0), (std::vector<double>{5, -1, 7}));
    for (double v : smooth_ema({0.25, 0.25, 0.25, 0.25}, 0.99)) QVERIFY(std::abs(v - 0.25) < 1e-12);
    // NaN passes through and does not poison the average.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> with_nan = smooth_ema({1, nan, 3}, 0.6);
    QVERIFY(std::isnan(with_nan[1]));
    QVERIFY(std::abs(with_nan[2] - 2.25) < 1e-12);
    // Weights above the slider's 0.999 (1.0 would freeze the curve) clamp.
    QCOMPARE(smooth_ema({1, 2, 3}, 1.5), smooth_ema({1, 2, 3}, 0.999));
    EmaState ema;
    ema.weight = 0.6;
    QCOMPARE(ema.push(1), 1.0);
    QVERIFY(std::abs(ema.push(3) - 2.25) < 1e-12);
  }

  void sliderResmoothsEverySeries() {
    CurvePlot plot("Loss", "loss");
    const std::vector<double> loss = {2.5, 1.9, 1.4, 1.5, 0.9, 0.8, 0.85, 0.6};
    for (size_t i = 0; i < loss.size(); ++i) {
      plot.addPoint("fc / train", double(i), loss[i]);
      plot.addPoint("fc / val", double(i), loss[i] + 0.1);
    }
    plot.smoothingSlider()->setValue(900);  // the user drags to 0.9
    QCOMPARE(plot.smoothing(), 0.9);
    const std::vector<double> expected = smooth_ema(loss, 0.9);
    const QVector<double> got = plot.smoothedValues("fc / train");
    QCOMPARE(got.size(), int(expected.size()));
    for (int i = 0; i < got.size(); ++i) QVERIFY(std::abs(got[i] - expected[i]) < 1e-12);
    QCOMPARE(plot.values("fc / val").last(), 0.7);
    // Live appends continue the same EMA.
    plot.addPoint("fc / train", 8, 0.5);
    std::vector<double> longer = loss;
    longer.push_back(0.5);
    QVERIFY(std::abs(plot.smoothedValues("fc / train").last() - smooth_ema(longer, 0.9).back()) <
            1e-12);
  }

  void appendsCoalesceIntoOneReplot() {
    CurvePlot plot("Loss", "loss");
    plot.resize(500, 300);
    plot.show();
    QSignalSpy replots(&plot, &CurvePlot::replotted);
    for (int i = 0; i < 2000; ++i) plot.addPoint("all / train", i, 1.0 / (1 + i));
    QCOMPARE(plot.replotCount(), 0);  // nothing painted synchronously
    QVERIFY(plot.replotPending());
    QVERIFY(replots.wait(2000));
    QCOMPARE(plot.replotCount(), 1);
    QCOMPARE(plot.plot()->graph(1)->dataCount(), 2000);
  }

  void viewsDueTogetherReplotInSeparatePasses() {
    // Loss and accuracy fall due at the same moment; the GUI thread must get
    // back to its event loop between the two replots.
    CurvePlot loss("Loss", "loss");
    CurvePlot accuracy("Accuracy", "accuracy");
    QSignalSpy loss_replots(&loss, &CurvePlot::replotted);
    QSignalSpy accuracy_replots(&accuracy, &CurvePlot::replotted);
    // After the first replot an event is posted; if the second replot runs
    // in a later pass, the event loop has delivered it by then.
    bool first_done = false;
    bool loop_ran_between = false;
    bool second_saw_loop = false;
    auto on_replot = [&] {
      if (!first_done) {
        first_done = true;
        QMetaObject::invokeMethod(
            &loss, [&] { loop_ran_between = true; }, Qt::QueuedConnection);
      } else {
        second_saw_loop = loop_ran_between;
      }
    };
    connect(&loss, &CurvePlot::replotted, on_replot);
    connect(&accuracy, &CurvePlot::replotted, on_replot);
    for (int i = 0; i < 500; ++i) {
      loss.addPoint("fc / train", i, 1.0 / (1 + i));
      accuracy.addPoint("fc / train", i, i / 500.0);
    }
    QTRY_VERIFY_WITH_TIMEOUT(loss_replots.size() == 1 && accuracy_replots.size() == 1, 2000);
    QVERIFY2(second_saw_loop, "both replots ran in one event-loop pass");
  }

  void legendClickTogglesSeries() {
    CurvePlot plot("Accuracy", "accuracy");
    plot.addPoint("init", 0, 0.34);
    plot.addPoint("fc", 0, 0.61);
    plot.setSeriesVisible("init", false);
    plot.flush();
    QVERIFY(!plot.isSeriesVisible("init"));
    QVERIFY(plot.isSeriesVisible("fc"));
    // The legend keeps the hidden series (greyed) so it can come back.
    QCOMPARE(plot.plot()->legend->itemCount(), 2);
    QVERIFY(!plot.hoverText(0).contains("init"));
    QVERIFY(plot.hoverText(0).contains("fc: 0.61"));
  }

  void hoverTextNamesNearestPoints() {
    CurvePlot plot("Loss", "loss");
    plot.setSmoothing(0);
    plot.addPoint("train", 0, 2.0);
    plot.addPoint("train", 10, 1.0);
    plot.addPoint("val", 0, 2.5);
    plot.addPoint("val", 10, 1.5);
    QCOMPARE(plot.hoverText(9), QString("step 9\ntrain: 1 at 10\nval: 1.5 at 10"));
    QCOMPARE(plot.hoverText(0), QString("step 0\ntrain: 2\nval: 2.5"));
    plot.setSmoothing(0.5);
    QVERIFY(plot.hoverText(10).contains("train: 1 (smoothed 1.3333)"));
    plot.setXLabel("samples");  // what the axis counts names the hover's first line
    QVERIFY(plot.hoverText(9).startsWith("samples 9\n"));
    QCOMPARE(plot.plot()->xAxis->label(), QString("samples"));
  }

  void logScaleHidesNonPositiveValues() {
    CurvePlot plot("Gradient norm", "norm");
    plot.addPoint("dense/kernel", 0, 1e-3);
    plot.addPoint("dense/kernel", 1, 0);
    plot.addPoint("dense/kernel", 2, 1e-1);
    plot.logScaleBox()->click();
    QVERIFY(plot.logScale());
    QCOMPARE(plot.plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    // The data keeps the zero; the log axis shows a gap instead of -inf.
    QCOMPARE(plot.values("dense/kernel")[1], 0.0);
    QVERIFY(std::isnan((plot.plot()->graph(0)->data()->begin() + 1)->value));
    QCOMPARE((plot.plot()->graph(0)->data()->begin() + 2)->value, 1e-1);
    plot.flush();
    QVERIFY(plot.plot()->yAxis->range().lower > 0);
    plot.logScaleBox()->click();
    QCOMPARE((plot.plot()->graph(0)->data()->begin() + 1)->value, 0.0);
  }

  void exportsAreReadable() {
    QTemporaryDir dir;
    CurvePlot plot("Loss", "cross entropy");
    for (int i = 0; i < 50; ++i) {
      plot.addPoint("fc / train", i, 2.0 * std::exp(-i / 10.0));
      plot.addPoint("all, seed 1 / \"val\"", i, 2.2 * std::exp(-i / 12.0));
    }
    QString error;
    const QString png = dir.filePath("loss.png");
    QVERIFY2(plot.exportPng(png, 640, 400, &error), qPrintable(error));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(640, 400));

    const QString pdf = dir.filePath("loss.pdf");
    QVERIFY2(plot.exportPdf(pdf, 640, 400, &error), qPrintable(error));
    QFile pdf_file(pdf);
    QVERIFY(pdf_file.open(QIODevice::ReadOnly));
    const QByteArray pdf_bytes = pdf_file.readAll();
    QVERIFY(pdf_bytes.startsWith("%PDF-"));
    QVERIFY(pdf_bytes.contains("/Type /Page"));
    QVERIFY(pdf_bytes.trimmed().endsWith("%%EOF"));

    const QString csv = dir.filePath("loss.csv");
    QVERIFY2(plot.exportCsv(csv, &error), qPrintable(error));
    QFile csv_file(csv);
    QVERIFY(csv_file.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(csv_file.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 101);
    QCOMPARE(lines[0], QString("series,step,value,smoothed"));
    const QStringList first = lines[1].split(',');
    QCOMPARE(first[0], QString("fc / train"));
    QCOMPARE(first[2].toDouble(), 2.0);
    QCOMPARE(first[3].toDouble(), 2.0);  // debiased: the first smoothed value is the value
    // Names with commas and quotes are quoted the CSV way.
    QVERIFY(lines[51].startsWith("\"all, seed 1 / \"\"val\"\"\",0,2.2,"));

    // A folder that does not exist: false and the path in the message.
    const QString bad = dir.filePath("missing/loss.csv");
    QVERIFY(!plot.exportCsv(bad, &error));
    QVERIFY2(error.startsWith(bad), qPrintable(error));
    QVERIFY(!plot.exportPng(dir.filePath("missing/loss.png"), 100, 100, &error));
  }

  // Issue 20, point 8: the x axis by step, epoch or wall time changes the keys the graphs draw;
  // points without an epoch or a time stay at their step.
  void xAxisModeChangesPlottedKeys() {
    CurvePlot plot("Loss", "cross entropy");
    plot.setSmoothing(0);
    for (int step = 1; step <= 4; ++step) {
      gruwb::views::CurveX x;
      x.step = step * 10;
      x.epoch = step * 0.5;
      x.seconds = step * 1.25;
      plot.addPoint("fc train", x, 1.0 / step);
    }
    plot.addPoint("legacy", 7, 0.5);  // a step only
    const auto graphKeys = [&](int graph) {
      QVector<double> keys;
      for (auto it = plot.plot()->graph(graph)->data()->begin();
           it != plot.plot()->graph(graph)->data()->end(); ++it)
        keys << it->key;
      return keys;
    };
    // Graph 1 is "fc train"'s smoothed curve (0 its raw one, behind).
    QCOMPARE(graphKeys(1), (QVector<double>{10, 20, 30, 40}));
    plot.setXAxis(gruwb::views::CurveXAxis::kEpoch);
    QCOMPARE(graphKeys(1), (QVector<double>{0.5, 1, 1.5, 2}));
    QCOMPARE(graphKeys(0), (QVector<double>{0.5, 1, 1.5, 2}));
    QCOMPARE(plot.keys("fc train"), (QVector<double>{0.5, 1, 1.5, 2}));
    QCOMPARE(plot.keys("legacy"), (QVector<double>{7}));
    QCOMPARE(plot.plot()->xAxis->label(), QString("epoch"));
    QVERIFY(plot.hoverText(1.1).startsWith("epoch 1.10\nfc train: 0.5\n"));
    plot.setXAxis(gruwb::views::CurveXAxis::kWallTime);
    QCOMPARE(graphKeys(1), (QVector<double>{1.25, 2.5, 3.75, 5}));
    // Values and steps do not move with the axis.
    QCOMPARE(plot.steps("fc train"), (QVector<double>{10, 20, 30, 40}));
    QCOMPARE(plot.values("fc train")[3], 0.25);
    // Points added on another axis land there.
    gruwb::views::CurveX late;
    late.step = 50;
    late.epoch = 2.5;
    late.seconds = 6;
    plot.addPoint("fc train", late, 0.2);
    QCOMPARE(graphKeys(1).last(), 6.0);
    plot.setXAxis(gruwb::views::CurveXAxis::kStep);
    QCOMPARE(graphKeys(1).last(), 50.0);
  }

  // Issue 20, point 8: with three experiments' curves the legend sits below the axis rect,
  // inside the widget, and covers none of the data.
  void legendNeverCoversTheData() {
    CurvePlot plot("Loss", "cross entropy");
    plot.resize(560, 320);
    for (const char* exp : {"gesture", "gesture 2", "gesture 3"}) {
      for (const char* stage : {"fc", "all"}) {
        for (const char* split : {"train", "val"}) {
          const QString name = QStringLiteral("%1 / %2 %3").arg(exp, stage, split);
          for (int i = 0; i < 20; ++i) plot.addPoint(name, i, 1.5 * std::exp(-i / 8.0));
        }
      }
    }
    plot.flush();
    plot.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const QCPLegend* legend = plot.plot()->legend;
    QVERIFY(legend->visible());
    QCOMPARE(legendEntries(legend), 12);
    const QRect data = plot.plot()->axisRect()->rect();
    QVERIFY2(!legend->outerRect().intersects(data),
             qPrintable(QStringLiteral("legend %1,%2 %3x%4 over the axis rect %5,%6 %7x%8")
                            .arg(legend->outerRect().x())
                            .arg(legend->outerRect().y())
                            .arg(legend->outerRect().width())
                            .arg(legend->outerRect().height())
                            .arg(data.x())
                            .arg(data.y())
                            .arg(data.width())
                            .arg(data.height())));
    QVERIFY(legend->outerRect().bottom() <= plot.plot()->height());
    QVERIFY(legend->outerRect().right() <= plot.plot()->width());
    // Several columns, not one tall list.
    QVERIFY(legend->columnCount() > 1);
    // A count that does not fill the last row leaves empty cells: still laid out.
    plot.removeSeries("gesture 3 / all val");
    plot.flush();
    QCOMPARE(legendEntries(legend), 11);
    // More curves than a third of the height can list (a sweep's runs): no legend rather than
    // squashed axes.
    for (int run = 0; run < 60; ++run) plot.addPoint(QStringLiteral("sweep run %1").arg(run), 0, 1);
    plot.flush();
    plot.plot()->replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(!legend->visible());
    QVERIFY(plot.plot()->axisRect()->rect().height() > plot.plot()->height() / 2);
    for (int run = 0; run < 60; ++run) plot.removeSeries(QStringLiteral("sweep run %1").arg(run));
    plot.flush();
    plot.plot()->replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(legend->visible());
    // Toggled off, the axis rect takes the room back.
    const int with_legend = data.height();
    plot.legendBox()->click();
    QVERIFY(!plot.legendVisible());
    plot.flush();
    plot.plot()->replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(!legend->visible());
    QVERIFY(plot.plot()->axisRect()->rect().height() > with_legend);
  }

  // Issue 20, point 8: "dense_0/kernel" keeps its underscore in the legend (QCustomPlot clipped
  // it to the text's box): a legend entry of underscores differs from one of spaces.
  void legendShowsUnderscores() {
    const auto legendImage = [](const QString& name) {
      CurvePlot plot("Gradient norm", "norm");
      plot.resize(400, 260);
      plot.addPoint(name, 0, 1);
      plot.addPoint(name, 1, 2);
      plot.flush();
      const QPixmap pixmap = plot.plot()->toPixmap(400, 260);
      return pixmap.copy(plot.plot()->legend->outerRect()).toImage();
    };
    const QImage underscore = legendImage("____");
    const QImage space = legendImage("    ");
    QVERIFY(!underscore.isNull());
    QCOMPARE(underscore.size(), space.size());
    QVERIFY(underscore != space);
  }

  void settingsRoundTrip() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath("settings.ini"), QSettings::IniFormat);
    {
      CurvePlot plot("Loss", "loss");
      plot.addPoint("init", 0, 1);
      plot.addPoint("fc", 0, 1);
      plot.setSmoothing(0.95);
      plot.setLogScale(true);
      plot.setSeriesVisible("init", false);
      plot.setXAxis(gruwb::views::CurveXAxis::kEpoch);
      plot.setLegendVisible(false);
      plot.saveSettings(settings, "curves/loss");
    }
    settings.sync();
    CurvePlot restored("Loss", "loss");
    restored.restoreSettings(settings, "curves/loss");
    QCOMPARE(restored.smoothing(), 0.95);
    QCOMPARE(restored.smoothingSlider()->value(), 950);
    QVERIFY(restored.logScale());
    QVERIFY(restored.logScaleBox()->isChecked());
    QCOMPARE(restored.plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(restored.xAxis(), gruwb::views::CurveXAxis::kEpoch);
    QVERIFY(!restored.legendVisible());
    QVERIFY(!restored.legendBox()->isChecked());
    // "init" is hidden as soon as it appears again.
    restored.addPoint("init", 0, 1);
    restored.addPoint("fc", 0, 1);
    QVERIFY(!restored.isSeriesVisible("init"));
    QVERIFY(restored.isSeriesVisible("fc"));
  }
};

QTEST_MAIN(CurvePlotTest)
#include "curve_plot_test.moc"
