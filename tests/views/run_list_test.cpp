// RunList, the Curves dock's runs: the filter (regex, or text when the
// pattern is not one), check boxes and renames made in the list itself, the
// undo stack of deletes, and the state kept in the settings for runs that
// come later.

#include "views/run_list.h"

#include <QComboBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using gruwb::views::CurveXAxis;
using gruwb::views::RunList;

class RunListTest : public QObject {
  Q_OBJECT

 private slots:
  void filterIsARegexOrText() {
    RunList runs;
    runs.addRun("gesture / fc", Qt::blue);
    runs.addRun("gesture / all", Qt::red);
    runs.addRun("cells / fc gru", Qt::green);
    QVERIFY(!runs.addRun("gesture / fc", Qt::black));  // listed once
    QCOMPARE(runs.color("gesture / fc"), QColor(Qt::blue));
    QSignalSpy changed(&runs, &RunList::runsChanged);
    runs.filterEdit()->setText("/ fc$");
    QCOMPARE(changed.count(), 1);
    QVERIFY(runs.isShown("gesture / fc"));
    QVERIFY(!runs.isShown("gesture / all"));
    QVERIFY(!runs.isShown("cells / fc gru"));
    QVERIFY(runs.list()->item(1)->isHidden());
    // Case-insensitive; "[gru" is no regex, so it matches as text.
    runs.setFilter("GESTURE");
    QVERIFY(runs.isShown("gesture / all"));
    runs.setFilter("fc [gru");
    QVERIFY(!runs.isShown("cells / fc gru"));
    runs.rename("cells / fc gru", "fc [gru] lr 0.01");
    QVERIFY(runs.isShown("cells / fc gru"));
    runs.setFilter("");
    // Unticked in the list: not shown whatever the filter.
    runs.list()->item(0)->setCheckState(Qt::Unchecked);
    QVERIFY(!runs.isChecked("gesture / fc"));
    QVERIFY(!runs.isShown("gesture / fc"));
  }

  void renameInTheListAndBack() {
    RunList runs;
    runs.addRun("gesture / fc", Qt::blue);
    runs.list()->item(0)->setText("fc_only");  // what editing the row does
    QCOMPARE(runs.label("gesture / fc"), QString("fc_only"));
    runs.rename("gesture / fc", "");
    QCOMPARE(runs.label("gesture / fc"), QString("gesture / fc"));
    QCOMPARE(runs.list()->item(0)->text(), QString("gesture / fc"));
  }

  void deletesUndoLastFirstAtTheirRow() {
    RunList runs;
    for (const char* key : {"a", "b", "c"}) runs.addRun(key, Qt::blue);
    QSignalSpy removed(&runs, &RunList::runRemoved);
    QSignalSpy restored(&runs, &RunList::runRestored);
    QVERIFY(!runs.undoButton()->isEnabled());
    QVERIFY(!runs.deleteButton()->isEnabled());  // nothing selected
    runs.list()->setCurrentRow(1);
    runs.deleteButton()->click();
    runs.removeRun("a");
    QCOMPARE(runs.runs(), QStringList{"c"});
    QCOMPARE(removed.count(), 2);
    QVERIFY(runs.isRemoved("b"));
    QVERIFY(runs.undoRemove());
    QCOMPARE(restored.takeFirst().at(0).toString(), QString("a"));
    QCOMPARE(runs.runs(), (QStringList{"a", "c"}));
    runs.undoButton()->click();
    QCOMPARE(runs.runs(), (QStringList{"a", "b", "c"}));
    QCOMPARE(runs.list()->item(1)->text(), QString("b"));
    QVERIFY(!runs.undoRemove());
    QVERIFY(!runs.undoButton()->isEnabled());
  }

  void settingsApplyToRunsThatComeLater() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath("settings.ini"), QSettings::IniFormat);
    {
      RunList runs;
      runs.addRun("gesture / fc", Qt::blue);
      runs.addRun("gesture / all", Qt::red);
      runs.setChecked("gesture / all", false);
      runs.rename("gesture / fc", "fc_only");
      runs.setColor("gesture / fc", QColor("#abcdef"));
      runs.setFilter("gesture");
      runs.setXAxis(CurveXAxis::kEpoch);
      runs.setSmoothing(0.9);
      runs.saveSettings(settings, "training/runs");
    }
    settings.sync();
    RunList runs;
    runs.restoreSettings(settings, "training/runs");
    QCOMPARE(runs.filterEdit()->text(), QString("gesture"));
    QCOMPARE(runs.xAxis(), CurveXAxis::kEpoch);
    QCOMPARE(runs.xAxisBox()->currentText(), QString("Epoch"));
    QCOMPARE(runs.smoothing(), 0.9);
    runs.addRun("gesture / fc", Qt::green);
    runs.addRun("gesture / all", Qt::green);
    QCOMPARE(runs.label("gesture / fc"), QString("fc_only"));
    QCOMPARE(runs.color("gesture / fc"), QColor("#abcdef"));
    QCOMPARE(runs.color("gesture / all"), QColor(Qt::green));
    QVERIFY(!runs.isChecked("gesture / all"));
    QVERIFY(runs.isChecked("gesture / fc"));
  }
};

QTEST_MAIN(RunListTest)
#include "run_list_test.moc"
