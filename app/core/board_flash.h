#pragma once
// `gruwb board flash`: writes a board's firmware image with Debian's openocd, st-flash
// (stlink-tools) or stm32flash. Each image sits beside its manifest gruwb_fw_<board>.json,
// which the firmware build writes from the board's CMakeLists.txt (cortex_m/firmware.cmake):
// CPU, flash and RAM, the tools that can write it, openocd's board config, QEMU's arguments.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gruwb::app {

struct FirmwareImage {
  std::string board;  // nucleo_f446re
  std::string cpu;    // cortex-m4f
  std::string elf;    // absolute paths
  std::string bin;
  uint32_t flash_origin = 0;
  int flash_kb = 0;
  int ram_kb = 0;
  std::vector<std::string> tools;  // openocd, st-flash, stm32flash; empty: QEMU only
  std::string openocd_config;      // board/st_nucleo_f4.cfg
  std::vector<std::string> qemu;   // -M netduinoplus2 -serial null -serial pty
  // What the image's link measured ("memory" in the manifest; 0 and empty when the manifest
  // has none): flash used (text + data), the RAM pool for model + dataset + arena, the op
  // table it was built with, each kernel object's flash and the object each op needs.
  uint64_t flash_used = 0;
  uint64_t pool_bytes = 0;
  std::string op_table;
  std::map<std::string, uint64_t> kernel_object_bytes;
  std::map<std::string, std::string> op_objects;
};

// The folders searched for <board>/gruwb_fw_<board>.json: $GRUWB_FIRMWARE_DIR alone when set,
// else the installed <prefix>/share/gru-workbench/firmware of the binary's <prefix>/bin, then,
// for a binary run from its build tree, that build's firmware/ (first match wins). `gruwb
// board flash` and `board fit` find images only through this.
std::vector<std::string> firmware_folders();
// "a, b, c" ("none" when empty): boards, folders and tools in messages.
std::string joined(const std::vector<std::string>& items);
// Every image in those folders, by board name.
std::vector<FirmwareImage> find_firmware_images();
// Reads one manifest; false with *err naming the file and the problem.
bool read_firmware_manifest(const std::string& json_path, FirmwareImage* image, std::string* err);

// The Debian package that installs a flash tool (st-flash: stlink-tools).
std::string debian_package(const std::string& tool);

struct FlashRequest {
  std::string board;  // a board name, or "" with `image`
  std::string image;  // an explicit gruwb_fw_<board>.elf (its manifest beside it)
  std::string tool;   // "" = the first of the board's tools that is installed
  std::string port;   // stm32flash: the serial port of the STM32's system bootloader
  bool dry_run = false;
  int timeout_s = 180;
};

// The program and arguments that write `image` with `tool`; false with *err when the board
// cannot be written that way (a QEMU machine, a tool it does not list, stm32flash without a port).
bool flash_command(const FirmwareImage& image, const std::string& tool, const std::string& port,
                   std::vector<std::string>* argv, std::string* err);

// Finds the image, picks and checks the tool, runs it (or with dry_run prints the command).
// Exit codes: kExitOk; kExitBadInput (no such board or image, tool not installed, bad option);
// kExitFailure (the tool ran and failed: board absent, locked, ...) with its last line.
int board_flash(const FlashRequest& request,
                const std::function<void(const std::string&)>& progress, std::string* out,
                std::string* err);

}  // namespace gruwb::app
