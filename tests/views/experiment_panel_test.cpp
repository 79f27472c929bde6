// ExperimentPanel: the staging checkboxes become the runner's stage keys,
// Start refuses incomplete settings and says why, Pause/Stop follow the
// selected experiment's state, and the settings survive a restart.

#include "views/experiment_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QWheelEvent>
#include <QtTest>

#include "views/wheel_guard.h"

using gruwb::views::ExperimentPanel;
using gruwb::views::ExperimentSettings;
using Status = ExperimentPanel::Status;

namespace {

ExperimentSettings gesture() {
  ExperimentSettings s;
  s.name = "gesture";
  s.model_path = QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite";
  s.dataset_path = QString(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotions_TRAIN.ts";
  s.stages = {"init", "fc", "all", "last:2", "names:gru/kernel,dense/bias"};
  s.optimizer = "sgd";
  s.learning_rate = 0.05;
  s.batch_size = 8;
  s.epochs = 3;
  s.seeds = 3;
  s.first_seed = 7;
  return s;
}

}  // namespace

class ExperimentPanelTest : public QObject {
  Q_OBJECT

 private slots:
  // Issue 20, point 3: the wheel over an unfocused spin box scrolls the panel instead of
  // changing the value ("Epochs 10 -> 1"); with focus the box takes it.
  void wheelLeavesUnfocusedSpinBoxesAlone() {
    gruwb::views::WheelGuard::install();
    QScrollArea area;
    auto* panel = new ExperimentPanel;
    panel->setSettings(gesture());
    area.setWidget(panel);
    area.setWidgetResizable(true);
    area.resize(400, 300);
    area.show();
    QVERIFY(QTest::qWaitForWindowExposed(&area));
    QSpinBox* box = nullptr;
    for (QSpinBox* spin : panel->findChildren<QSpinBox*>()) {
      if (spin->value() == gesture().epochs) box = spin;
    }
    QVERIFY(box);
    const auto wheel = [&] {
      const QPointF at(box->width() / 2.0, box->height() / 2.0);
      QWheelEvent event(at, box->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                        Qt::NoModifier, Qt::NoScrollPhase, false);
      QApplication::sendEvent(box, &event);
    };
    const int before = box->value();
    box->clearFocus();
    wheel();
    QCOMPARE(box->value(), before);
    box->setFocus();
    QTRY_VERIFY(box->hasFocus());
    wheel();
    QCOMPARE(box->value(), before - 1);
  }

  void settingsRoundTripThroughTheForm() {
    ExperimentPanel panel;
    panel.setWeightNames({"gru/kernel", "gru/recurrent_kernel", "dense/kernel", "dense/bias"});
    panel.setSettings(gesture());
    const ExperimentSettings s = panel.settings();
    QCOMPARE(s.name, QString("gesture"));
    QCOMPARE(s.model_path, gesture().model_path);
    QCOMPARE(s.stages, gesture().stages);
    QCOMPARE(s.optimizer, QString("sgd"));
    QCOMPARE(s.learning_rate, 0.05);
    QCOMPARE(s.batch_size, 8);
    QCOMPARE(s.epochs, 3);
    QCOMPARE(s.seeds, 3);
    QCOMPARE(s.first_seed, 7);
    QVERIFY(!s.as_written);  // loops run fused unless asked
  }

  // The loops-as-written choice (gruwb --as-written) goes through the form and
  // the project file, and is off by default.
  void asWrittenRoundTrips() {
    ExperimentPanel panel;
    QVERIFY(!panel.asWrittenBox()->isChecked());
    ExperimentSettings settings = gesture();
    settings.as_written = true;
    panel.setSettings(settings);
    QVERIFY(panel.asWrittenBox()->isChecked());
    QVERIFY(panel.settings().as_written);
    QVERIFY(gruwb::views::settings_from_json(gruwb::views::settings_to_json(panel.settings()))
                .as_written);
    panel.asWrittenBox()->setChecked(false);
    QVERIFY(!gruwb::views::settings_from_json(gruwb::views::settings_to_json(panel.settings()))
                 .as_written);
  }

  // Single-sample passes (gruwb --single-sample-passes) go through the form and
  // the project file, and are off by default: batches train in one pass.
  void singleSamplePassesRoundTrip() {
    ExperimentPanel panel;
    QVERIFY(!panel.singleSamplePassesBox()->isChecked());
    QVERIFY(panel.settings().batched_passes);
    ExperimentSettings settings = gesture();
    settings.batched_passes = false;
    panel.setSettings(settings);
    QVERIFY(panel.singleSamplePassesBox()->isChecked());
    QVERIFY(!gruwb::views::settings_from_json(gruwb::views::settings_to_json(panel.settings()))
                 .batched_passes);
    panel.singleSamplePassesBox()->setChecked(false);
    QVERIFY(gruwb::views::settings_from_json(gruwb::views::settings_to_json(panel.settings()))
                .batched_passes);
  }

  // Comparing cells builds each one from the build spec, in either mode: with
  // a model file the file is a row beside the cells (issue 20 point 7); the
  // settings (with the cells) survive the project file's JSON.
  void cellComparisonNeedsABuildSpecAndRoundTrips() {
    ExperimentPanel panel;
    auto* cells = panel.findChild<QCheckBox*>("compareCells");
    QVERIFY(cells);
    panel.setSettings(gesture());
    QVERIFY(cells->isEnabled());
    cells->setChecked(true);
    const ExperimentSettings own = panel.settings();
    QCOMPARE(own.model_path, gesture().model_path);
    QVERIFY(!own.build_spec.isEmpty());
    QVERIFY(own.compare_cells.size() >= 3);
    ExperimentSettings s = gesture();
    s.model_path.clear();
    s.build_spec = "cell=lstm,units=8";
    s.compare_cells = {"gru", "lstm", "rnn"};
    panel.setSettings(s);
    QVERIFY(cells->isEnabled());
    QVERIFY(cells->isChecked());
    const ExperimentSettings form = panel.settings();
    QCOMPARE(form.compare_cells, s.compare_cells);
    QCOMPARE(form.build_spec, QString("cell=lstm,units=8"));
    const ExperimentSettings back =
        gruwb::views::settings_from_json(gruwb::views::settings_to_json(form));
    QCOMPARE(back.name, form.name);
    QCOMPARE(back.build_spec, form.build_spec);
    QCOMPARE(back.model_path, QString());
    QCOMPARE(back.dataset_path, form.dataset_path);
    QCOMPARE(back.stages, form.stages);
    QCOMPARE(back.optimizer, form.optimizer);
    QCOMPARE(back.learning_rate, form.learning_rate);
    QCOMPARE(back.batch_size, form.batch_size);
    QCOMPARE(back.epochs, form.epochs);
    QCOMPARE(back.seeds, form.seeds);
    QCOMPARE(back.first_seed, form.first_seed);
    QCOMPARE(back.compare_cells, form.compare_cells);
  }

  // Model files compared beside the cells: added in either mode (Model file
  // and Build), listed by file name with the path as tooltip, in the started
  // settings, the project JSON and QSettings; Remove drops the selected ones.
  void modelFilesCompareInBothModes() {
    const QString samples = QString(GRUWB_SOURCE_DIR) + "/resources/samples/";
    const QStringList files = {samples + "gesture_gru_fused.tflite",
                               samples + "gesture_gru_while.tflite"};
    ExperimentPanel panel;
    panel.show();
    auto* add = panel.findChild<QPushButton*>("addModelFile");
    auto* list = panel.findChild<QListWidget*>("compareModels");
    QVERIFY(add && list);
    QVERIFY(add->text().startsWith("Add model file"));
    panel.setSettings(gesture());  // Model file mode
    QVERIFY(add->isEnabled() && add->isVisible() && list->isVisible());
    panel.addCompareModels(files);
    panel.addCompareModels({files[0]});  // once each
    QCOMPARE(list->count(), 2);
    QCOMPARE(list->item(1)->text(), QString("gesture_gru_while.tflite"));
    QCOMPARE(list->item(1)->toolTip(), files[1]);
    QCOMPARE(panel.settings().compare_models, files);

    ExperimentSettings build = panel.settings();
    build.model_path.clear();
    build.build_spec = "cell=gru,units=8";
    build.compare_cells = {"gru", "lstm"};
    panel.setSettings(build);  // Build mode
    QVERIFY(add->isEnabled() && add->isVisible() && list->isVisible());
    QCOMPARE(list->count(), 2);
    QSignalSpy started(&panel, &ExperimentPanel::startRequested);
    panel.startButton()->click();
    QCOMPARE(started.count(), 1);
    const auto s = started[0][0].value<ExperimentSettings>();
    QCOMPARE(s.compare_models, files);
    QVERIFY(!s.compare_cells.isEmpty());
    QCOMPARE(gruwb::views::settings_from_json(gruwb::views::settings_to_json(s)).compare_models,
             files);

    QTemporaryDir dir;
    QSettings settings(dir.filePath("s.ini"), QSettings::IniFormat);
    panel.saveSettings(settings, "experiment");
    ExperimentPanel restored;
    restored.restoreSettings(settings, "experiment");
    QCOMPARE(restored.settings().compare_models, files);

    auto* remove = panel.findChild<QPushButton*>("removeModelFile");
    QVERIFY(!remove->isEnabled());
    list->item(0)->setSelected(true);
    QVERIFY(remove->isEnabled());
    remove->click();
    QCOMPARE(panel.settings().compare_models, QStringList{files[1]});
  }

  void startNeedsModelDataAndStages() {
    ExperimentPanel panel;
    QSignalSpy started(&panel, &ExperimentPanel::startRequested);
    QVERIFY(!panel.startButton()->isEnabled());
    QCOMPARE(panel.validate(), QString("Choose a model or a build spec."));
    panel.setModelPath(gesture().model_path);
    QCOMPARE(panel.validate(), QString("Choose a dataset."));
    panel.setDatasetPath(gesture().dataset_path);
    QVERIFY(panel.validate().isEmpty());
    QVERIFY(panel.startButton()->isEnabled());
    for (QCheckBox* box : panel.findChildren<QCheckBox*>()) box->setChecked(false);
    QCOMPARE(panel.validate(), QString("Pick at least one stage."));
    QVERIFY(!panel.startButton()->isEnabled());
    for (QCheckBox* box : panel.findChildren<QCheckBox*>()) {
      if (box->text().startsWith("FC only")) box->setChecked(true);
    }
    panel.startButton()->click();
    QCOMPARE(started.count(), 1);
    const auto s = started[0][0].value<ExperimentSettings>();
    QCOMPARE(s.stages, QStringList{"fc"});
    QCOMPARE(s.name, QString("experiment 1"));
    panel.startButton()->click();
    QCOMPARE(started[1][0].value<ExperimentSettings>().name, QString("experiment 2"));
  }

  void pauseAndStopFollowTheSelectedExperiment() {
    ExperimentPanel panel;
    QSignalSpy paused(&panel, &ExperimentPanel::pauseRequested);
    QSignalSpy stopped(&panel, &ExperimentPanel::stopRequested);
    panel.addExperiment(1, "A", {"init", "fc"});
    panel.addExperiment(2, "B", {"all"});
    QCOMPARE(panel.experimentCount(), 2);
    QCOMPARE(panel.selectedExperiment(), 2);
    QVERIFY(!panel.pauseButton()->isEnabled());  // queued
    QVERIFY(panel.stopButton()->isEnabled());
    panel.setExperimentState(2, Status::kRunning, "all", "epoch 1/3");
    QVERIFY(panel.pauseButton()->isEnabled());
    panel.pauseButton()->click();
    QCOMPARE(paused.count(), 1);
    QCOMPARE(paused[0][0].toInt(), 2);
    QCOMPARE(paused[0][1].toBool(), true);
    panel.setExperimentState(2, Status::kPaused, "all", "epoch 1/3");
    QCOMPARE(panel.pauseButton()->text(), QString("Resume"));
    panel.pauseButton()->click();
    QCOMPARE(paused[1][1].toBool(), false);
    panel.selectExperiment(1);
    panel.setExperimentState(1, Status::kFinished, "fc", "2/2 stages");
    QVERIFY(!panel.stopButton()->isEnabled());
    panel.selectExperiment(2);
    panel.stopButton()->click();
    QCOMPARE(stopped.count(), 1);
    QCOMPARE(stopped[0][0].toInt(), 2);
    QCOMPARE(panel.experimentList()->topLevelItem(0)->text(3), QString("finished"));
    QCOMPARE(panel.experimentProgress(2), QString("epoch 1/3"));
  }

  void settingsSurviveRestart() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath("s.ini"), QSettings::IniFormat);
    {
      ExperimentPanel panel;
      panel.setWeightNames({"gru/kernel", "dense/bias"});
      panel.setSettings(gesture());
      panel.saveSettings(settings, "experiment");
    }
    ExperimentPanel restored;
    restored.restoreSettings(settings, "experiment");
    const ExperimentSettings s = restored.settings();
    QCOMPARE(s.dataset_path, gesture().dataset_path);
    QCOMPARE(s.model_path, gesture().model_path);
    QCOMPARE(s.stages, gesture().stages);
    QCOMPARE(s.learning_rate, 0.05);
    QCOMPARE(s.seeds, 3);
    QCOMPARE(restored.findChild<QListWidget*>("customTensors")->count(), 2);
  }

  // "Loss on output": shown for a model file with several outputs, its
  // choice in the settings, the project JSON and QSettings; gone for a
  // model with one output or a build spec.
  void lossOutputChoice() {
    ExperimentPanel panel;
    panel.setSettings(gesture());
    QComboBox* box = panel.findChild<QComboBox*>("lossOutput");
    QVERIFY(box);
    QVERIFY(!box->isVisibleTo(&panel));  // outputs unknown
    const QString model = gesture().model_path;
    panel.setModelOutputs(model, {"state", "probs"},
                          {"'state' [1,60]", "'probs' [1,4] (softmax/logistic)"}, "probs");
    QVERIFY(box->isVisibleTo(&panel));
    QCOMPARE(box->count(), 3);
    QVERIFY(box->itemText(0).contains("probs"));
    QCOMPARE(panel.settings().loss_output, QString());  // automatic
    box->setCurrentIndex(1);
    emit box->activated(1);
    QCOMPARE(panel.settings().loss_output, QString("state"));
    const ExperimentSettings from_json =
        gruwb::views::settings_from_json(gruwb::views::settings_to_json(panel.settings()));
    QCOMPARE(from_json.loss_output, QString("state"));

    QTemporaryDir dir;
    QSettings settings(dir.filePath("s.ini"), QSettings::IniFormat);
    panel.saveSettings(settings, "experiment");
    ExperimentPanel restored;
    restored.restoreSettings(settings, "experiment");
    QCOMPARE(restored.settings().loss_output, QString("state"));  // kept until outputs arrive
    restored.setModelOutputs(model, {"state", "probs"}, {"s", "p"}, "probs");
    QCOMPARE(restored.findChild<QComboBox*>("lossOutput")->currentIndex(), 1);

    // A model without that output: back to automatic; one output: no row.
    panel.setModelOutputs(model, {"Identity"}, {"'Identity' [1,4]"}, "Identity");
    QVERIFY(!box->isVisibleTo(&panel));
    QCOMPARE(panel.settings().loss_output, QString());
    // The row belongs to the listed model only.
    panel.setModelOutputs(model, {"a", "b"}, {"a", "b"}, QString());
    QVERIFY(box->itemText(0).contains("choose"));
    QVERIFY(box->isVisibleTo(&panel));
    panel.setModelPath(model + ".other.tflite");
    QVERIFY(!box->isVisibleTo(&panel));
  }
};

QTEST_MAIN(ExperimentPanelTest)
#include "experiment_panel_test.moc"
