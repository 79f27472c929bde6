// `gruwb board flash` without a board: the command lines it would run for each tool, the tool
// actually run (a stand-in script on PATH that records its arguments, or fails as st-flash does
// with no ST-LINK plugged in), and one-line errors for a missing tool, a QEMU-only board, an
// unknown board and stm32flash without its port. The manifests are written as the firmware
// build writes them (serial/firmware/boards/cortex_m/firmware.cmake); CI's firmware stage runs
// a dry run on the real nucleo_f446re build.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "tests/app/cli_test_util.h"
#include "tests/app/firmware_fixture.h"

namespace {

using gruwb::test::CliResult;
using gruwb::test::run_gruwb;

class BoardFlashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    firmware_ = dir_.path() + "/firmware";
    tools_ = dir_.path() + "/bin";
    QDir().mkpath(tools_);
    ASSERT_TRUE(gruwb::test::add_firmware_board(firmware_, "nucleo_f446re", "0x08000000",
                                                R"("openocd", "st-flash", "stm32flash")",
                                                R"("-M", "netduinoplus2")"));
    ASSERT_TRUE(gruwb::test::add_firmware_board(firmware_, "mps2_an386", "0x00000000", "",
                                                R"("-M", "mps2-an386", "-serial", "pty")"));
    old_path_ = qgetenv("PATH");
    qputenv("GRUWB_FIRMWARE_DIR", firmware_.toUtf8());
    qputenv("PATH", tools_.toUtf8());  // only the stand-ins below
  }
  void TearDown() override {
    qputenv("PATH", old_path_);
    qunsetenv("GRUWB_FIRMWARE_DIR");
  }
  QString image(const char* ext) const {
    return firmware_ + "/nucleo_f446re/gruwb_fw_nucleo_f446re." + ext;
  }
  // A stand-in flash tool: records its arguments one per line, prints `say`, exits `code`.
  void fake_tool(const QString& name, int code, const QString& say) {
    ASSERT_TRUE(gruwb::test::add_fake_tool(tools_, dir_.path(), name, code, say));
  }
  QStringList recorded_args(const QString& name) const {
    return gruwb::test::fake_tool_args(dir_.path(), name);
  }

  QTemporaryDir dir_;
  QString firmware_, tools_;
  QByteArray old_path_;
};

TEST_F(BoardFlashTest, DryRunPrintsEachToolsCommandLine) {
  const struct {
    QStringList extra;
    QString line;
  } cases[] = {
      {{"--tool", "openocd"},
       "openocd -f board/st_nucleo_f4.cfg -c 'program " + image("elf") + " verify reset exit'"},
      {{"--tool", "st-flash"}, "st-flash --reset write " + image("bin") + " 0x08000000"},
      {{"--tool", "stm32flash", "--port", "/dev/ttyUSB0"},
       "stm32flash -w " + image("bin") + " -v -S 0x08000000 -g 0x08000000 /dev/ttyUSB0"},
  };
  for (const auto& c : cases) {
    const CliResult run =
        run_gruwb(QStringList{"board", "flash", "--board", "nucleo_f446re", "--dry-run"} + c.extra);
    EXPECT_EQ(run.exit_code, 0) << run.err.toStdString();
    EXPECT_EQ(run.out.trimmed(), c.line);
  }
}

TEST_F(BoardFlashTest, RunsTheFirstInstalledToolWithTheImage) {
  fake_tool("st-flash", 0, "Flash written and verified! jolly good!");
  const CliResult run = run_gruwb({"board", "flash", "--board", "nucleo_f446re"});
  ASSERT_EQ(run.exit_code, 0) << run.err.toStdString();
  EXPECT_EQ(recorded_args("st-flash"),
            QStringList({"--reset", "write", image("bin"), "0x08000000"}));
  EXPECT_TRUE(run.out.contains("st-flash: Flash written and verified!")) << run.out.toStdString();
  EXPECT_TRUE(run.out.contains("flashed nucleo_f446re with st-flash")) << run.out.toStdString();
}

TEST_F(BoardFlashTest, AToolThatFailsGivesItsLastLine) {
  fake_tool("st-flash", 255, "Found 0 stlink programmers");
  const CliResult run = run_gruwb({"board", "flash", "--board", "nucleo_f446re"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
  EXPECT_TRUE(run.err.contains("st-flash failed (exit 255): Found 0 stlink programmers"))
      << run.err.toStdString();
}

TEST_F(BoardFlashTest, OneLineErrors) {
  const struct {
    QStringList args;
    const char* problem;
  } cases[] = {
      {{"--board", "nucleo_f446re", "--tool", "openocd"},
       "openocd not found (Debian: apt install openocd)"},
      {{"--board", "nucleo_f446re", "--tool", "st-flash"},
       "st-flash not found (Debian: apt install stlink-tools)"},
      {{"--board", "nucleo_f446re", "--tool", "stm32flash"}, "give its --port"},
      {{"--board", "nucleo_f446re", "--tool", "jlink"}, "not 'jlink'"},
      {{"--board", "mps2_an386"},
       "mps2_an386 is a QEMU machine, nothing to flash: run qemu-system-arm -M mps2-an386 "
       "-serial pty -kernel "},
      {{"--board", "stm32u5"},
       "no firmware image for board 'stm32u5' (images: mps2_an386, nucleo_f446re;"},
      {{}, "missing --board NAME (images: mps2_an386, nucleo_f446re;"},
      {{"--image", "/nonexistent/gruwb_fw_x.elf"}, "no such firmware image"},
  };
  for (const auto& c : cases) {
    const CliResult run = run_gruwb(QStringList{"board", "flash"} + c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args.join(' ').toStdString();
    EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
    EXPECT_TRUE(run.err.contains(QString::fromUtf8(c.problem))) << run.err.toStdString();
  }
}

// The real tools (CI installs them) with no board plugged in: each fails in one line that
// says so, and none waits for a board.
TEST_F(BoardFlashTest, RealToolsWithoutABoardFailInOneLine) {
  // Never on a machine with an ST-LINK plugged in: it would write the stand-in image.
  for (const QFileInfo& device : QDir("/sys/bus/usb/devices").entryInfoList(QDir::Dirs)) {
    QFile vendor(device.filePath() + "/idVendor");
    if (vendor.open(QIODevice::ReadOnly) && vendor.readAll().trimmed() == "0483")
      GTEST_SKIP() << "an ST USB device is plugged in";
  }
  qputenv("PATH", old_path_);
  // Here (Debian 12's tools, no USB devices) they say "Error: open failed; ** OpenOCD init
  // failed **", "Couldn't find any ST-Link devices" and "Failed to open port"; the wording
  // depends on libusb and the machine, so the test asks for the tool's own reason only.
  const struct {
    QStringList args;
    const char* problem;
  } cases[] = {
      {{"--tool", "openocd"}, "openocd failed (exit "},
      {{"--tool", "st-flash"}, "st-flash failed (exit "},
      {{"--tool", "stm32flash", "--port", dir_.path() + "/ttyUSB9"}, "stm32flash failed (exit "},
  };
  const QRegularExpression reason("\\): .*(error|fail|couldn't|cannot|unable|not found)",
                                  QRegularExpression::CaseInsensitiveOption);
  int ran = 0;
  for (const auto& c : cases) {
    if (QStandardPaths::findExecutable(c.args[1]).isEmpty()) continue;
    ++ran;
    const CliResult run =
        run_gruwb(QStringList{"board", "flash", "--board", "nucleo_f446re"} + c.args);
    EXPECT_EQ(run.exit_code, 1) << run.err.toStdString();
    EXPECT_EQ(run.err.count('\n'), 1) << run.err.toStdString();
    EXPECT_TRUE(run.err.contains(QString::fromUtf8(c.problem))) << run.err.toStdString();
    EXPECT_TRUE(reason.match(run.err).hasMatch()) << run.err.toStdString();
  }
  if (ran == 0) GTEST_SKIP() << "none of openocd, st-flash, stm32flash is installed";
}

TEST_F(BoardFlashTest, AnImageOfAnotherBoardIsRefused) {
  const CliResult run =
      run_gruwb({"board", "flash", "--image", image("elf"), "--board", "mps2_an386", "--dry-run"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.contains("is the firmware of nucleo_f446re, not mps2_an386"))
      << run.err.toStdString();
}

// A gruwb installed under a prefix (as the package puts it: PREFIX/bin/gruwb and
// PREFIX/share/gru-workbench/firmware/BOARD/) finds its images there, wherever the prefix is,
// and, run outside its build tree, searches nothing else.
TEST_F(BoardFlashTest, AnInstalledGruwbFindsTheImagesOfItsPrefix) {
  qunsetenv("GRUWB_FIRMWARE_DIR");
  const QString prefix = dir_.path() + "/usr";
  const QString firmware = prefix + "/share/gru-workbench/firmware";
  QDir().mkpath(prefix + "/bin");
  const QString gruwb = prefix + "/bin/gruwb";
  ASSERT_TRUE(QFile::copy(QStringLiteral(GRUWB_CLI), gruwb));
  QFile::setPermissions(gruwb, QFile::permissions(gruwb) | QFile::ExeOwner);
  ASSERT_TRUE(gruwb::test::add_firmware_board(firmware, "nucleo_f446re", "0x08000000",
                                              R"("st-flash")", R"("-M", "netduinoplus2")"));
  const auto run_installed = [&](const QStringList& args) {
    QProcess process;
    process.start(gruwb, args);
    EXPECT_TRUE(process.waitForFinished(60000));
    return std::make_pair(process.exitCode(), QString::fromUtf8(process.readAllStandardOutput() +
                                                                process.readAllStandardError()));
  };

  const auto [code, out] =
      run_installed({"board", "flash", "--board", "nucleo_f446re", "--dry-run"});
  EXPECT_EQ(code, 0) << out.toStdString();
  EXPECT_EQ(out.trimmed(), "st-flash --reset write " + firmware +
                               "/nucleo_f446re/gruwb_fw_nucleo_f446re.bin " + "0x08000000");

  const auto [missing_code, missing] = run_installed({"board", "flash", "--board", "stm32"});
  EXPECT_EQ(missing_code, 2);
  EXPECT_TRUE(missing.contains("(images: nucleo_f446re; searched " + firmware + ")"))
      << missing.toStdString();
}

}  // namespace
