// gru-workbench: the desktop workbench. `gru-workbench [MODEL]` opens MODEL at
// start; `--screenshot PNG` renders the window to a file and exits (used for
// docs and for a smoke test that needs no display).

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>
#include <cstdio>

#include "app/gui/main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("GRU Workbench");
  QApplication::setApplicationName("gru-workbench");
  QApplication::setApplicationVersion(PROJECT_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "GRU Workbench: inspect, train and deploy small recurrent networks for microcontrollers.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("model", "A .tflite or .circle model to open.", "[model]");
  QCommandLineOption screenshot("screenshot", "Render the window to <png> and exit.", "png");
  QCommandLineOption size("size", "Window size for --screenshot, e.g. 1366x768.", "WxH",
                          "1280x800");
  parser.addOption(screenshot);
  parser.addOption(size);
  parser.process(app);

  gruwb::gui::MainWindow window;
  bool opened = true;
  const QStringList models = parser.positionalArguments();
  if (!models.isEmpty()) opened = window.openModel(models.first());

  if (parser.isSet(screenshot)) {
    const QStringList wh = parser.value(size).split('x');
    if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
    window.show();
    // Let layouts settle before grabbing; exit 2 when the model did not open,
    // like `gruwb inspect` does for bad input.
    QTimer::singleShot(200, &window, [&] {
      const bool saved = window.grab().save(parser.value(screenshot));
      if (!saved) std::fprintf(stderr, "cannot write %s\n", qPrintable(parser.value(screenshot)));
      if (!opened) std::fprintf(stderr, "%s\n", qPrintable(window.errorText()));
      QApplication::exit(!saved ? 1 : opened ? 0 : 2);
    });
    return QApplication::exec();
  }

  window.show();
  return QApplication::exec();
}
