#include "app/core/board_flash.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <algorithm>
#include <cstdlib>

#include "app/core/bundled_files.h"
#include "app/core/inspect.h"

namespace gruwb::app {

std::string debian_package(const std::string& tool) {
  return tool == "st-flash" ? "stlink-tools" : tool;  // openocd and stm32flash are their own
}

namespace {

// A tool's line that says what went wrong.
const QRegularExpression kProblem("error|fail|couldn't|cannot|unable|not found",
                                  QRegularExpression::CaseInsensitiveOption);

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

std::string quoted_command(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\"'$\\") == std::string::npos;
    line += plain ? arg : "'" + arg + "'";
  }
  return line;
}

std::vector<std::string> strings(const QJsonValue& value) {
  std::vector<std::string> list;
  for (const QJsonValue& item : value.toArray()) list.push_back(item.toString().toStdString());
  return list;
}

}  // namespace

std::string joined(const std::vector<std::string>& items) {
  std::string list;
  for (const std::string& item : items) list += (list.empty() ? "" : ", ") + item;
  return list.empty() ? "none" : list;
}

std::vector<std::string> firmware_folders() {
  // An explicit folder is the only one: what the user set is what gets flashed.
  if (const char* dir = std::getenv("GRUWB_FIRMWARE_DIR"); dir && *dir) return {dir};
  std::vector<std::string> folders;
  const QString binary_dir = program_folder();
  if (!binary_dir.isEmpty()) {
    // Installed: <prefix>/bin/gruwb and <prefix>/share/gru-workbench/firmware, wherever the
    // prefix is (a package unpacked elsewhere finds its own images).
    folders.push_back(
        QDir::cleanPath(binary_dir + "/" GRUWB_INSTALLED_FIRMWARE_FROM_BINDIR).toStdString());
  }
  // A gruwb or gru-workbench run from its build tree: the images that build made.
  if (run_from_build_tree()) folders.push_back(GRUWB_BUILD_FIRMWARE_DIR);
  return folders;
}

bool read_firmware_manifest(const std::string& json_path, FirmwareImage* image, std::string* err) {
  QFile file(QString::fromStdString(json_path));
  if (!file.open(QIODevice::ReadOnly)) {
    *err = json_path + ": cannot read the firmware manifest";
    return false;
  }
  QJsonParseError parse;
  const QJsonDocument doc = QJsonDocument::fromJson(file.read(1 << 16), &parse);
  if (parse.error != QJsonParseError::NoError || !doc.isObject()) {
    *err = json_path + ": not a firmware manifest (" + parse.errorString().toStdString() + ")";
    return false;
  }
  const QJsonObject o = doc.object();
  const QDir folder = QFileInfo(file).absoluteDir();
  *image = FirmwareImage();
  image->board = o["board"].toString().toStdString();
  image->cpu = o["cpu"].toString().toStdString();
  image->elf = folder.filePath(o["image"].toString()).toStdString();
  image->bin = folder.filePath(o["binary"].toString()).toStdString();
  bool origin_ok = false;
  image->flash_origin = o["flash_origin"].toString().toUInt(&origin_ok, 16);
  image->flash_kb = o["flash_kb"].toInt();
  image->ram_kb = o["ram_kb"].toInt();
  image->tools = strings(o["tools"]);
  image->openocd_config = o["openocd_config"].toString().toStdString();
  image->qemu = strings(o["qemu"]);
  const QJsonObject memory = o["memory"].toObject();
  image->flash_used = static_cast<uint64_t>(std::max(0.0, memory["flash_used"].toDouble()));
  image->pool_bytes = static_cast<uint64_t>(std::max(0.0, memory["pool_bytes"].toDouble()));
  image->op_table = memory["op_table"].toString().toStdString();
  const QJsonObject objects = memory["kernel_objects"].toObject();
  for (auto i = objects.begin(); i != objects.end(); ++i)
    image->kernel_object_bytes[i.key().toStdString()] =
        static_cast<uint64_t>(std::max(0.0, i.value().toDouble()));
  const QJsonObject ops = memory["op_objects"].toObject();
  for (auto i = ops.begin(); i != ops.end(); ++i)
    image->op_objects[i.key().toStdString()] = i.value().toString().toStdString();
  if (image->board.empty() || o["image"].toString().isEmpty() || !origin_ok ||
      image->flash_kb <= 0 || image->ram_kb <= 0) {
    *err = json_path + ": firmware manifest without board, image, flash origin or sizes";
    return false;
  }
  return true;
}

std::vector<FirmwareImage> find_firmware_images() {
  std::vector<FirmwareImage> images;
  for (const std::string& folder : firmware_folders()) {
    const QDir dir(QString::fromStdString(folder));
    for (const QString& board : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
      FirmwareImage image;
      std::string ignored;
      const QString manifest = dir.filePath(board + "/gruwb_fw_" + board + ".json");
      if (!QFileInfo::exists(manifest) ||
          !read_firmware_manifest(manifest.toStdString(), &image, &ignored)) {
        continue;
      }
      const bool seen = std::any_of(images.begin(), images.end(),
                                    [&](const FirmwareImage& i) { return i.board == image.board; });
      if (!seen) images.push_back(image);
    }
  }
  return images;
}

bool flash_command(const FirmwareImage& image, const std::string& tool, const std::string& port,
                   std::vector<std::string>* argv, std::string* err) {
  if (image.tools.empty()) {
    std::string qemu = "qemu-system-arm";
    for (const std::string& arg : image.qemu) qemu += " " + arg;
    *err =
        image.board + " is a QEMU machine, nothing to flash: run " + qemu + " -kernel " + image.elf;
    return false;
  }
  if (std::find(image.tools.begin(), image.tools.end(), tool) == image.tools.end()) {
    *err = image.board + " is written with " + joined(image.tools) + ", not '" + tool + "'";
    return false;
  }
  if (tool == "openocd") {
    // program: erase the sectors it needs, write, read back, reset into the firmware.
    *argv = {"openocd", "-f", image.openocd_config, "-c",
             "program " + image.elf + " verify reset exit"};
  } else if (tool == "st-flash") {
    *argv = {"st-flash", "--reset", "write", image.bin, hex(image.flash_origin)};
  } else if (tool == "stm32flash") {
    // The STM32's ROM bootloader on a USART (BOOT0 high): write, verify, then start the image.
    if (port.empty()) {
      *err = "stm32flash writes through the STM32's serial bootloader: give its --port";
      return false;
    }
    *argv = {"stm32flash", "-w",
             image.bin,    "-v",
             "-S",         hex(image.flash_origin),
             "-g",         hex(image.flash_origin),
             port};
  } else {
    *err = "unknown flash tool '" + tool + "' (openocd, st-flash or stm32flash)";
    return false;
  }
  return true;
}

int board_flash(const FlashRequest& request,
                const std::function<void(const std::string&)>& progress, std::string* out,
                std::string* err) {
  FirmwareImage image;
  if (!request.image.empty()) {
    const QFileInfo elf(QString::fromStdString(request.image));
    const QString manifest = elf.absolutePath() + "/" + elf.completeBaseName() + ".json";
    if (!elf.exists()) {
      *err = request.image + ": no such firmware image";
      return kExitBadInput;
    }
    if (!read_firmware_manifest(manifest.toStdString(), &image, err)) return kExitBadInput;
    if (!request.board.empty() && request.board != image.board) {
      *err = request.image + " is the firmware of " + image.board + ", not " + request.board;
      return kExitBadInput;
    }
  } else {
    const std::vector<FirmwareImage> images = find_firmware_images();
    const auto found = std::find_if(images.begin(), images.end(), [&](const FirmwareImage& i) {
      return i.board == request.board;
    });
    if (found == images.end()) {
      std::vector<std::string> boards;
      for (const FirmwareImage& i : images) boards.push_back(i.board);
      *err = (request.board.empty() ? std::string("missing --board NAME")
                                    : "no firmware image for board '" + request.board + "'") +
             " (images: " + joined(boards) + "; searched " + joined(firmware_folders()) + ")";
      return kExitBadInput;
    }
    image = *found;
  }

  // The tool: the one asked for, else the first of the board's tools that is installed.
  std::string tool = request.tool;
  if (tool.empty()) {
    for (const std::string& t : image.tools) {
      if (!QStandardPaths::findExecutable(QString::fromStdString(t)).isEmpty()) {
        tool = t;
        break;
      }
    }
    if (tool.empty() && !image.tools.empty()) tool = image.tools.front();
  }
  std::vector<std::string> argv;
  if (!flash_command(image, tool, request.port, &argv, err)) return kExitBadInput;
  const std::string& file = tool == "openocd" ? image.elf : image.bin;
  if (!QFileInfo::exists(QString::fromStdString(file))) {
    *err = file + ": the firmware image is missing beside its manifest";
    return kExitBadInput;
  }
  if (request.dry_run) {
    *out += quoted_command(argv) + "\n";
    return kExitOk;
  }
  const QString program = QStandardPaths::findExecutable(QString::fromStdString(argv[0]));
  if (program.isEmpty()) {
    *err = argv[0] + " not found (Debian: apt install " + debian_package(argv[0]) + ")";
    return kExitBadInput;
  }

  progress(quoted_command(argv));
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  QStringList arguments;
  for (size_t i = 1; i < argv.size(); ++i) arguments << QString::fromStdString(argv[i]);
  process.start(program, arguments);
  if (!process.waitForStarted(10000)) {
    *err = argv[0] + " did not start: " + process.errorString().toStdString();
    return kExitFailure;
  }
  // Its lines as they come; the failure is named by its first and last lines that say what
  // went wrong ("Error: open failed" ... "** OpenOCD init failed **"), else its last line.
  std::string last_line, pending;
  std::vector<std::string> problems;
  QElapsedTimer clock;
  clock.start();
  const auto drain = [&]() {
    pending += process.readAll().toStdString();
    size_t end;
    while ((end = pending.find_first_of("\r\n")) != std::string::npos) {
      const std::string line = pending.substr(0, end);
      pending.erase(0, end + 1);
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      last_line = line;
      if (QString::fromStdString(line).contains(kProblem)) problems.push_back(line);
      progress(argv[0] + ": " + line);
    }
  };
  while (!process.waitForFinished(200)) {
    drain();
    if (process.state() == QProcess::NotRunning) break;
    if (clock.elapsed() > request.timeout_s * 1000LL) {
      process.kill();
      process.waitForFinished(5000);
      *err = argv[0] + " did not finish within " + std::to_string(request.timeout_s) +
             " s (is the board connected and powered?)";
      return kExitFailure;
    }
  }
  drain();
  if (!pending.empty()) last_line = pending;
  if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
    std::string why = last_line;
    if (!problems.empty()) {
      why = problems.front();
      if (problems.size() > 1) why += "; " + problems.back();
    }
    *err = argv[0] + " failed (exit " + std::to_string(process.exitCode()) + ")" +
           (why.empty() ? "" : ": " + why);
    return kExitFailure;
  }
  *out += "flashed " + image.board + " with " + argv[0] + ": " + file + "\n";
  return kExitOk;
}

}  // namespace gruwb::app
