// gru-workbench: the desktop workbench. `gru-workbench [FILES...]` opens
// models, datasets or a project at start; `--screenshot PNG` renders the
// window to a file and exits (used for docs and for a smoke test that needs
// no display); --subgraph/--tensor/--dock/--find/--run/--fuse/--quantize set the scene for it.

#include <QApplication>
#include <QCommandLineParser>
#include <QDialog>
#include <QDockWidget>
#include <QTimer>
#include <cstdio>

#include "app/core/plugin_manager.h"
#include "app/gui/main_window.h"
#include "app/gui/sweep_window.h"
#include "app/gui/training_workspace.h"
#include "views/experiment_panel.h"
#include "views/graph_view.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("GRU Workbench");
  QApplication::setApplicationName("gru-workbench");
  QApplication::setApplicationVersion(GRUWB_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "GRU Workbench: inspect, train and deploy small recurrent networks for microcontrollers.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(
      "files",
      "Models (.tflite, .circle), datasets (.ts, .arff, .csv, .npy) or a project (.gruwb) to open.",
      "[files...]");
  QCommandLineOption screenshot("screenshot", "Render the window to <png> and exit.", "png");
  QCommandLineOption size("size", "Window size for --screenshot, e.g. 1366x768.", "WxH",
                          "1280x800");
  QCommandLineOption subgraph("subgraph", "Show subgraph <n> in the graph view.", "n");
  QCommandLineOption tensor("tensor", "Show tensor <s:t> (subgraph:tensor) in the inspector.",
                            "s:t");
  QCommandLineOption dock("dock", "Bring dock <name> (model, tensor, size, ...) to the front.",
                          "name");
  QCommandLineOption find("find", "Find and select <text> in the graph.", "text");
  parser.addOption(screenshot);
  parser.addOption(size);
  parser.addOption(subgraph);
  parser.addOption(tensor);
  parser.addOption(dock);
  QCommandLineOption run("run",
                         "Start the staged experiment (the open model and dataset, or a "
                         "project's staging) and, with --screenshot, wait until it ends; "
                         "given n times, n experiments.");
  parser.addOption(find);
  parser.addOption(run);
  QCommandLineOption plugins("plugins", "Open Help > Plugins (for screenshots).");
  parser.addOption(plugins);
  QCommandLineOption sweep("sweep",
                           "Open a sweep folder or its collected sweep-result.json (File > Open "
                           "Sweep); with --screenshot, the sweep window is grabbed.",
                           "path");
  parser.addOption(sweep);
  QCommandLineOption fuse("fuse",
                          "Fuse the open model into <out> (Tools > Fuse) and show the result; "
                          "with --screenshot, the fuse window is grabbed.",
                          "out");
  parser.addOption(fuse);
  QCommandLineOption quantize("quantize",
                              "Quantize the open model (int8, calibrated on the dataset given) "
                              "into <out> (Tools > Quantize) and show the report; with "
                              "--screenshot, the report window is grabbed.",
                              "out");
  parser.addOption(quantize);
  parser.process(app);

  // Plugins before the window, so its panels list their cells and formats; a refused plugin
  // is one line on stderr (and in Help > Plugins).
  for (const QString& problem : gruwb::app::load_plugins("gru-workbench")) {
    std::fprintf(stderr, "gru-workbench: %s\n", qPrintable(problem));
  }

  gruwb::gui::MainWindow window;
  if (parser.isSet(screenshot)) {
    // Sized and shown before anything opens, so the graph fits the final view.
    const QStringList wh = parser.value(size).split('x');
    if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
    window.show();
    QApplication::processEvents();
  }
  bool opened = true;
  for (const QString& file : parser.positionalArguments()) opened = window.openFile(file) && opened;
  if (parser.isSet(subgraph)) window.graphView()->openSubgraph(parser.value(subgraph).toInt());
  if (parser.isSet(tensor)) {
    const QStringList st = parser.value(tensor).split(':');
    if (st.size() == 2) emit window.graphView()->tensorSelected(st[0].toInt(), st[1].toInt());
  }
  if (parser.isSet(find)) window.graphView()->find(parser.value(find));
  if (parser.isSet(run)) {
    gruwb::gui::TrainingWorkspace* training = window.trainingWorkspace();
    const QString problem = training->panel()->validate();
    if (!problem.isEmpty()) {
      std::fprintf(stderr, "--run: %s\n", qPrintable(problem));
      return 2;
    }
    // --run given n times starts the staged experiment n times ("name 2", ... with the next
    // seeds), so the Curves dock shows several experiments.
    const int experiments = int(parser.optionNames().count("run"));
    for (int k = 0; k < experiments; ++k) {
      gruwb::views::ExperimentSettings settings = training->panel()->settings();
      if (k > 0) {
        settings.name += QStringLiteral(" %1").arg(k + 1);
        settings.first_seed += k;
      }
      training->startExperiment(settings);
    }
    if (parser.isSet(screenshot)) {
      training->waitForIdle(15 * 60 * 1000);
      if (!training->lastError().isEmpty()) {
        std::fprintf(stderr, "--run: %s\n", qPrintable(training->lastError()));
        opened = false;
      }
    }
  }
  if (parser.isSet(plugins)) window.showPluginsDialog();
  QWidget* grabbed = &window;
  if (parser.isSet(fuse)) {
    opened = window.fuseModel(parser.value(fuse)) && opened;
    if (opened && parser.isSet(screenshot)) grabbed = window.fuseDialog();
  }
  if (parser.isSet(quantize)) {
    opened = window.quantizeModel(parser.value(quantize)) && opened;
    if (opened && parser.isSet(screenshot)) grabbed = window.quantizeDialog();
  }
  if (parser.isSet(sweep)) {
    opened = window.openSweep(parser.value(sweep)) && opened;
    if (opened && parser.isSet(screenshot)) {
      grabbed = window.sweepWindow();
      const QStringList wh = parser.value(size).split('x');
      if (wh.size() == 2) grabbed->resize(wh[0].toInt(), wh[1].toInt());
    }
  }
  if (parser.isSet(dock)) {
    if (QDockWidget* d = window.dock(parser.value(dock) + "Dock")) {
      d->show();
      d->raise();
    }
  }

  if (parser.isSet(screenshot)) {
    // Let layouts settle before grabbing; exit 2 when the model did not open,
    // like `gruwb inspect` does for bad input.
    QTimer::singleShot(200, &window, [&] {
      const bool saved = grabbed->grab().save(parser.value(screenshot));
      if (!saved) std::fprintf(stderr, "cannot write %s\n", qPrintable(parser.value(screenshot)));
      if (!opened) std::fprintf(stderr, "%s\n", qPrintable(window.errorText()));
      QApplication::exit(!saved ? 1 : opened ? 0 : 2);
    });
    return QApplication::exec();
  }

  window.show();
  return QApplication::exec();
}
