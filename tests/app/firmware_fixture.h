#pragma once
// Firmware images without a cross build, for the tests of `gruwb board flash` and the Board
// dock's Flash firmware: a board folder as the firmware build leaves it (image, raw binary,
// manifest; serial/firmware/boards/cortex_m/firmware.cmake writes the real ones) and stand-in
// flash tools that record their arguments.

#include <QDir>
#include <QFile>
#include <QString>
#include <QStringList>

namespace gruwb::test {

inline bool write_test_file(const QString& path, const QByteArray& bytes, bool executable = false) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return false;
  file.write(bytes);
  file.close();
  return !executable || file.setPermissions(file.permissions() | QFile::ExeOwner);
}

// <root>/<board>/gruwb_fw_<board>.{elf,bin,json}. `tools` and `qemu` are JSON array bodies.
inline bool add_firmware_board(const QString& root, const QString& board, const QString& origin,
                               const QString& tools, const QString& qemu) {
  QDir(root).mkpath(board);
  const QString base = root + "/" + board + "/gruwb_fw_" + board;
  return write_test_file(base + ".elf",
                         "\x7f"
                         "ELF stand-in") &&
         write_test_file(base + ".bin", "image bytes") &&
         write_test_file(base + ".json", QString(R"({
  "board": "%1",
  "cpu": "cortex-m4f",
  "image": "gruwb_fw_%1.elf",
  "binary": "gruwb_fw_%1.bin",
  "flash_origin": "%2",
  "flash_kb": 512,
  "ram_origin": "0x20000000",
  "ram_kb": 128,
  "tools": [%3],
  "openocd_config": "board/st_nucleo_f4.cfg",
  "qemu": [%4]
}
)")
                                             .arg(board, origin, tools, qemu)
                                             .toUtf8());
}

// A stand-in flash tool in `bin`: writes its arguments one per line to <record>/<name>.args,
// prints `say` and exits `code`.
inline bool add_fake_tool(const QString& bin, const QString& record, const QString& name, int code,
                          const QString& say) {
  return write_test_file(bin + "/" + name,
                         QString("#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > '%1/%2.args'\n"
                                 "echo '%3'\nexit %4\n")
                             .arg(record, name, say)
                             .arg(code)
                             .toUtf8(),
                         true);
}

inline QStringList fake_tool_args(const QString& record, const QString& name) {
  QFile file(record + "/" + name + ".args");
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
}

}  // namespace gruwb::test
