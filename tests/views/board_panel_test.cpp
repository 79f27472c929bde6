// The Board dock end to end on the simulated board (the firmware's Device on
// a pseudo-terminal, in this process): connect through the termios path, see
// the capabilities, upload the reference model, train one short epoch of a
// BasicMotions slice beside the same run on the host, compare the curves,
// download and load the trained model; a wrong port is named in the error.
// All link work runs on the workspace's worker thread; the test only waits.

#include <qcustomplot.h>

#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cmath>
#include <thread>

#include "app/core/board.h"
#include "app/gui/board_workspace.h"
#include "app/gui/training_workspace.h"
#include "engine/model/model.h"
#include "engine/tools/model_file.h"
#include "serial/firmware/boards/host_pty/host_pty_board.h"
#include "serial/protocol/frame.h"
#include "tests/app/firmware_fixture.h"
#include "views/comparison_table.h"
#include "views/curve_plot.h"
#include "views/firmware_flash_dialog.h"

using gruwb::gui::BoardWorkspace;

namespace {

const QString kModel =
    QStringLiteral(GRUWB_SOURCE_DIR "/resources/samples/gesture_gru_fused.tflite");
const QString kData =
    QStringLiteral(GRUWB_SOURCE_DIR "/resources/samples/BasicMotionsAcc60_TRAIN.ts");

// The simulated board on its own thread, like `gruwb board-sim`.
struct SimulatedBoard {
  SimulatedBoard() : board(gruwb::serial::HostBoardOptions{}) {}
  bool start(std::string* error) {
    if (!board.open(&pty, error)) return false;
    thread = std::thread([this] { board.run(&stop); });
    return true;
  }
  ~SimulatedBoard() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  gruwb::serial::HostPtyBoard board;
  std::string pty;
  std::atomic<bool> stop{false};
  std::thread thread;
};

}  // namespace

class BoardPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void trainsOnTheSimulatedBoardBesideTheHost();
  void cellComparisonBorrowsTheConnectedBoard();
  void wrongPortIsNamed();
  void flashesAnInstalledImageWithTheChosenTool();
  void flashDialogSaysWhyItCannotFlash();
};

// Compare cells with a board connected in the Board dock: the dock lends its port to the
// experiment, each cell's model is timed there (the comparison's board column), and the dock
// connects again when the experiment ends.
void BoardPanelTest::cellComparisonBorrowsTheConnectedBoard() {
  SimulatedBoard sim;
  std::string error;
  QVERIFY2(sim.start(&error), error.c_str());
  BoardWorkspace board;
  gruwb::views::BoardPortSettings port;
  port.port = QString::fromStdString(sim.pty);
  board.connectBoard(port);
  QVERIFY(board.waitForIdle(5000));
  QVERIFY(board.panel()->isConnected());

  gruwb::gui::TrainingWorkspace training;
  training.setBoardLender([&board] { return board.lendPort(); },
                          [&board] { board.takeBackPort(); });
  gruwb::views::ExperimentSettings s;
  s.name = "cells on a board";
  s.build_spec = "cell=gru,units=4";
  s.dataset_path = kData;
  s.stages = {"init"};
  s.compare_cells = {"gru", "rnn"};
  training.startExperiment(s);
  QVERIFY(!board.panel()->isConnected());  // lent while the experiment runs
  QVERIFY(training.waitForIdle(60000));
  QVERIFY2(training.lastError().isEmpty(), qPrintable(training.lastError()));
  const auto& cells = training.comparisonTable()->cellResults();
  QCOMPARE(cells.size(), 2);
  for (const auto& c : cells) {
    QVERIFY2(c.board_latency_us > 0, qPrintable(c.cell + ": " + c.board_note));
    QCOMPARE(c.board, QString("host-sim"));
    QCOMPARE(c.board_cycles, 0);  // a simulation counts microseconds
  }
  QVERIFY(board.waitForIdle(5000));
  QVERIFY2(board.panel()->isConnected(), qPrintable(board.lastError()));
}

void BoardPanelTest::trainsOnTheSimulatedBoardBesideTheHost() {
  SimulatedBoard sim;
  std::string error;
  QVERIFY2(sim.start(&error), error.c_str());
  BoardWorkspace workspace;
  workspace.setModelPath(kModel);
  workspace.setDatasetPath(kData);
  gruwb::views::BoardPanel* panel = workspace.panel();
  // A simulated board that announced its pty (as `gruwb board-sim` does) is in the port list
  // (issue 20, point 11: libserialport lists no ptys).
  const std::string announcement = gruwb::app::announce_simulated_board(sim.pty);
  QVERIFY(!announcement.empty());
  workspace.refreshPorts();
  QComboBox* ports = panel->findChild<QComboBox*>("boardPort");
  QVERIFY(ports);
  QVERIFY(ports->findText(QString::fromStdString(sim.pty)) >= 0);
  gruwb::app::withdraw_simulated_board(announcement);

  gruwb::views::BoardPortSettings port;
  port.port = QString::fromStdString(sim.pty);
  panel->setPortSettings(port);
  workspace.connectBoard(panel->portSettings());
  QVERIFY(workspace.waitForIdle(5000));
  QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
  QVERIFY(panel->isConnected());
  QCOMPARE(panel->capability("protocol version"), QString::number(gruwb::serial::kProtocolVersion));
  QCOMPARE(panel->capability("engine version"), QString("gruwb-0.1"));
  QCOMPARE(panel->capability("RAM for arena"), QString("524288 bytes"));
  QCOMPARE(panel->capability("session id").size(), 8);
  QVERIFY(panel->capability("ops").contains("builtin"));
  QVERIFY(panel->capability("link").contains(port.port));

  workspace.uploadModel();
  QVERIFY(workspace.waitForIdle(5000));
  QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
  QVERIFY2(panel->statusText().startsWith("uploaded 49088 bytes"), qPrintable(panel->statusText()));

  // Bench: the model is on the board already; the status line gets the one-line result.
  QPushButton* bench = panel->findChild<QPushButton*>("boardBench");
  QVERIFY(bench && bench->isEnabled());
  workspace.bench(10);
  QVERIFY(workspace.waitForIdle(5000));
  QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
  QVERIFY2(QRegularExpression("^board host-sim \\(simulated: this computer's clock\\): "
                              "gesture_gru_fused.tflite, 10 inferences, median [0-9,]+ us .*"
                              "output equals the host's bit for bit$")
               .match(panel->statusText())
               .hasMatch(),
           qPrintable(panel->statusText()));

  gruwb::views::BoardStageSettings stage;
  stage.stage = "all";
  stage.batch_size = 4;
  stage.epochs = 1;
  stage.seed = 3;
  stage.samples = 16;
  stage.metric_every = 4;
  panel->setStageSettings(stage);
  workspace.train(panel->stageSettings());
  QVERIFY(workspace.waitForIdle(9000));
  QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
  for (gruwb::views::CurvePlot* plot : {panel->lossPlot(), panel->accuracyPlot()}) {
    const QString what = plot == panel->lossPlot() ? "loss" : "accuracy";
    const QVector<double> board_x = plot->steps("board " + what);
    const QVector<double> host_x = plot->steps("host " + what);
    QCOMPARE(board_x, QVector<double>({4, 8, 12, 16}));  // a METRIC every 4 samples
    QCOMPARE(plot->plot()->xAxis->label(), QString("samples"));
    QCOMPARE(host_x, board_x);
    const QVector<double> board = plot->values("board " + what);
    const QVector<double> host = plot->values("host " + what);
    for (int i = 0; i < board.size(); ++i) {
      const double scale = std::max({std::fabs(board[i]), std::fabs(host[i]), 1e-6});
      QVERIFY2(std::fabs(board[i] - host[i]) / scale <= 1e-4,
               qPrintable(QString("%1 at %2: board %3 host %4")
                              .arg(what)
                              .arg(board_x[i])
                              .arg(board[i])
                              .arg(host[i])));
    }
  }
  QVERIFY(panel->lossPlot()->values("board loss").first() > 0);
  // The verdict of serial::compare_runs, the CLI's rule: all four METRICs matched.
  QVERIFY2(panel->statusText().contains("over 4 metrics, 1 of 1 epoch ends (agree to 1e-4)"),
           qPrintable(panel->statusText()));
  // The board timed its steps (the simulation in microseconds).
  QVERIFY2(QRegularExpression("; per sample [0-9]+ us").match(panel->statusText()).hasMatch(),
           qPrintable(panel->statusText()));
  QVERIFY(panel->consoleRows() > 10);
  QVERIFY(panel->consoleRows() <= gruwb::views::BoardPanel::kConsoleRows);
  QVERIFY(panel->consoleText().contains("METRIC"));
  QVERIFY(panel->consoleText().contains("-> UPLOAD_CHUNK"));

  // docs/screenshots/board_panel.png: GRUWB_BOARD_SCREENSHOT=path, under Xvfb.
  const QString shot = qEnvironmentVariable("GRUWB_BOARD_SCREENSHOT");
  if (!shot.isEmpty()) {
    panel->resize(1366, 660);
    panel->show();
    QTest::qWait(300);  // paced replots and layout
    QVERIFY(panel->grab().save(shot));
  }

  QTemporaryDir dir;
  const QString out = dir.filePath("trained.tflite");
  workspace.downloadModel(out);
  QVERIFY(workspace.waitForIdle(5000));
  QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
  std::vector<uint8_t> trained, original;
  QVERIFY(gruwb::tools::read_file_bytes(out.toStdString(), &trained, &error));
  QVERIFY(gruwb::tools::read_file_bytes(kModel.toStdString(), &original, &error));
  gruwb::Model model;
  const gruwb::Status loaded = gruwb::Model::load(trained.data(), trained.size(), &model);
  QVERIFY2(loaded.ok(), loaded.message());
  QCOMPARE(trained.size(), original.size());
  QVERIFY(trained != original);  // the weights moved

  workspace.disconnectBoard();
  QVERIFY(!panel->isConnected());
}

void BoardPanelTest::wrongPortIsNamed() {
  BoardWorkspace workspace;
  gruwb::views::BoardPortSettings port;
  port.port = "/dev/gruwb-no-such-port";
  workspace.connectBoard(port);
  QVERIFY(workspace.waitForIdle(5000));
  QVERIFY2(workspace.lastError().contains("/dev/gruwb-no-such-port"),
           qPrintable(workspace.lastError()));
  QVERIFY(workspace.panel()->statusText().contains("/dev/gruwb-no-such-port"));
  QVERIFY(!workspace.panel()->isConnected());
}

// Images where `gruwb board flash` looks (GRUWB_FIRMWARE_DIR) and stand-in tools on PATH.
struct FirmwareSetup {
  FirmwareSetup() {
    firmware = dir.path() + "/firmware";
    bin = dir.path() + "/bin";
    QDir().mkpath(bin);
    ok = gruwb::test::add_firmware_board(firmware, "nucleo_f446re", "0x08000000",
                                         R"("openocd", "st-flash", "stm32flash")",
                                         R"("-M", "netduinoplus2")") &&
         gruwb::test::add_firmware_board(firmware, "mps2_an386", "0x00000000", "",
                                         R"("-M", "mps2-an386")");
    old_path = qgetenv("PATH");
    qputenv("GRUWB_FIRMWARE_DIR", firmware.toUtf8());
    qputenv("PATH", bin.toUtf8());
  }
  ~FirmwareSetup() {
    qputenv("PATH", old_path);
    qunsetenv("GRUWB_FIRMWARE_DIR");
  }
  QTemporaryDir dir;
  QString firmware, bin;
  QByteArray old_path;
  bool ok = false;
};

// The dock's Flash firmware runs the chosen tool on the installed image, off the GUI thread,
// and shows the tool's result; a tool that fails is named with its reason.
void BoardPanelTest::flashesAnInstalledImageWithTheChosenTool() {
  FirmwareSetup setup;
  QVERIFY(setup.ok);
  QVERIFY(
      gruwb::test::add_fake_tool(setup.bin, setup.dir.path(), "openocd", 0, "** Verified OK **"));
  BoardWorkspace workspace;
  auto* button = workspace.panel()->findChild<QPushButton*>("boardFlash");
  QVERIFY(button && button->isEnabled());
  workspace.flash("nucleo_f446re", "openocd");
  QVERIFY(workspace.waitForIdle(20000));
  QVERIFY2(workspace.lastError().isEmpty(), qPrintable(workspace.lastError()));
  const QString elf = setup.firmware + "/nucleo_f446re/gruwb_fw_nucleo_f446re.elf";
  QCOMPARE(
      gruwb::test::fake_tool_args(setup.dir.path(), "openocd"),
      QStringList({"-f", "board/st_nucleo_f4.cfg", "-c", "program " + elf + " verify reset exit"}));
  QVERIFY2(workspace.panel()->statusText().contains("flashed nucleo_f446re with openocd"),
           qPrintable(workspace.panel()->statusText()));

  QVERIFY(gruwb::test::add_fake_tool(setup.bin, setup.dir.path(), "st-flash", 255,
                                     "Found 0 stlink programmers"));
  workspace.flash("nucleo_f446re", "st-flash");
  QVERIFY(workspace.waitForIdle(20000));
  QVERIFY2(workspace.lastError().contains("st-flash failed (exit 255)") &&
               workspace.lastError().contains("Found 0 stlink programmers"),
           qPrintable(workspace.lastError()));
  QVERIFY(workspace.panel()->statusText().contains("Found 0 stlink programmers"));
}

// The dialog offers the installed tools first and disables Flash, saying why, for a QEMU-only
// board, a tool that is not installed (with its Debian package) and stm32flash without a port.
void BoardPanelTest::flashDialogSaysWhyItCannotFlash() {
  gruwb::views::FirmwareChoice nucleo;
  nucleo.board = "nucleo_f446re";
  nucleo.cpu = "cortex-m4f";
  nucleo.tools = QStringList{"openocd", "st-flash", "stm32flash"};
  nucleo.packages = QStringList{"openocd", "stlink-tools", "stm32flash"};
  nucleo.installed = QStringList{"stm32flash"};
  gruwb::views::FirmwareChoice qemu;
  qemu.board = "mps2_an386";
  gruwb::views::FirmwareFlashDialog dialog({nucleo, qemu}, "/usr/share/gru-workbench/firmware");
  auto* flash = dialog.findChild<QPushButton*>("flashButton");
  QVERIFY(flash);
  QCOMPARE(dialog.tool(), QString("stm32flash"));  // the installed one first
  QVERIFY(!flash->isEnabled());
  QVERIFY2(dialog.problem().contains("port"), qPrintable(dialog.problem()));
  dialog.findChild<QLineEdit*>("flashPort")->setText("/dev/ttyUSB0");
  QVERIFY(flash->isEnabled());
  QCOMPARE(dialog.port(), QString("/dev/ttyUSB0"));
  dialog.select("nucleo_f446re", "st-flash");
  QVERIFY(!flash->isEnabled());
  QVERIFY2(dialog.problem().contains("apt install stlink-tools"), qPrintable(dialog.problem()));
  QCOMPARE(dialog.port(), QString());  // only stm32flash takes one
  dialog.select("mps2_an386");
  QVERIFY(!flash->isEnabled());
  QVERIFY2(dialog.problem().contains("QEMU"), qPrintable(dialog.problem()));
}

QTEST_MAIN(BoardPanelTest)
#include "board_panel_test.moc"
