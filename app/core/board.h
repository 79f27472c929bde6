#pragma once
// `board`: training on a microcontroller over the serial protocol
// (docs/serial-protocol.md). The CLI (`gruwb board ...`) and, later, the GUI
// board panel call these; they talk to the board through serial/link.

#include <functional>
#include <string>

#include "serial/protocol/messages.h"

namespace gruwb::app {

struct BoardConnection {
  std::string port;  // /dev/ttyACM0, /dev/pts/N (board-sim, QEMU), a symlink
  int baud = 115200;
  bool dtr = true;
  std::string transport = "auto";  // auto | libserialport | termios
  int timeout_ms = 1000;           // per request attempt
  int reconnect_ms = 0;            // keep trying to reopen a vanished port this long
};

// Progress lines (upload %, metrics as they arrive) go here while a command runs.
using LineSink = std::function<void(const std::string& line)>;

int board_list(std::string* out, std::string* err);
int board_info(const BoardConnection& connection, std::string* out, std::string* err);
int board_upload(const BoardConnection& connection, const std::string& model_path,
                 const LineSink& progress, std::string* out, std::string* err);

struct BoardTrainRequest {
  BoardConnection connection;
  std::string model_path;  // uploaded first when given; else the board's model is used
  std::string data_path;   // .ts (UEA) dataset
  uint32_t samples = 0;    // first N samples (0 = all)
  serial::TrainingSettings settings;
  bool compare_host = false;  // run the same training on the host and compare (<= 1e-4)
  std::string output_path;    // download the trained model here when given
  int run_timeout_s = 600;
};
int board_train(const BoardTrainRequest& request, const LineSink& progress, std::string* out,
                std::string* err);

// Writes the board's model with its trained weights to `output_path`.
int board_download(const BoardConnection& connection, const std::string& output_path,
                   std::string* out, std::string* err);

}  // namespace gruwb::app
