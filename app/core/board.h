#pragma once
// `board`: training on a microcontroller over the serial protocol
// (docs/serial-protocol.md). The CLI (`gruwb board ...`) and, later, the GUI
// board panel call these; they talk to the board through serial/link.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/core/dataset.h"
#include "serial/protocol/messages.h"

namespace gruwb::serial {
class BoardClient;
struct LinkStats;
}  // namespace gruwb::serial

namespace gruwb::app {

struct BoardConnection {
  std::string port;  // /dev/ttyACM0, /dev/pts/N (board-sim, QEMU), a symlink
  int baud = 115200;
  bool dtr = true;
  std::string transport = "auto";  // auto | libserialport | termios
  int timeout_ms = 1000;           // per request attempt
  int reconnect_ms = 0;            // keep trying to reopen a vanished port this long
  // No single request, upload or download may take longer, however noisy
  // the line (serial::ClientOptions::operation_limit_ms).
  int operation_limit_ms = 600000;
};

// Progress lines (upload %, metrics as they arrive) go here while a command runs.
using LineSink = std::function<void(const std::string& line)>;

// ---- Pieces the CLI commands and the GUI's board panel share ----
// Opens the port and says HELLO; nullptr with *err naming the port. *note
// says which transport and why.
std::unique_ptr<serial::BoardClient> open_board(const BoardConnection& connection,
                                                std::string* note, std::string* err,
                                                int* exit_code = nullptr);
// HELLO's capabilities as "label: value" lines.
std::string describe_capabilities(const serial::Capabilities& caps);
// One "link: ..." line: frames, garbled frames, requests sent again, events
// fetched again or lost, the frame size the line allows now.
std::string describe_link(const serial::LinkStats& stats);
// What a board trains on: the desktop's training split of a dataset, prepared
// as an experiment prepares it for a model file (dataset.h: any reader of the
// registry, the length policy to the model's T, per-channel normalisation with
// the training split's statistics, the test and validation splits held out,
// seeded), so a board run and the Experiments run of the same stage see the same
// samples in the same order.
struct BoardData {
  std::string path;      // anything load_dataset reads
  uint32_t samples = 0;  // the first N of the training split (0 = all)
  LengthPolicy length_policy = LengthPolicy::kResample;
  double validation_fraction = 0.0;
  bool normalize = true;  // `gruwb experiment`'s default for a model file
  uint64_t seed = 1;      // the split's (an experiment's first seed)
};
// The GWDS blob of `data` for the model's [1, T, F] input; *note lists what
// the preparation did (one line each).
bool board_dataset_blob(const BoardData& data, const std::vector<uint8_t>& model,
                        std::vector<uint8_t>* blob, std::string* note, std::string* err);
// The board's model with its trained weights, written atomically to `path` in the
// type its extension names (export_target_for_path: .tflite, .circle, a C array,
// a firmware library folder); `bytes` gets the bytes written.
bool download_trained_model(serial::BoardClient& client, const std::string& path, size_t* bytes,
                            std::string* err);

// `gruwb board-sim` announces its pty (a file named by its pid in $XDG_RUNTIME_DIR/gruwb/
// board-sim, else /tmp/gruwb-<uid>/board-sim) so `board list` and the Board dock can offer it;
// ptys are invisible to libserialport. announce returns the file to withdraw at exit ("" when
// it could not be written: the board still serves).
std::string announce_simulated_board(const std::string& pty);
void withdraw_simulated_board(const std::string& announcement);
// The ptys of simulated boards still running (announcements of ended processes are removed).
std::vector<std::string> simulated_board_ports();

int board_list(std::string* out, std::string* err);
int board_info(const BoardConnection& connection, std::string* out, std::string* err);
int board_upload(const BoardConnection& connection, const std::string& model_path,
                 const LineSink& progress, std::string* out, std::string* err);

struct BoardTrainRequest {
  BoardConnection connection;
  std::string model_path;  // uploaded first when given; else the board's model is used
  BoardData data;          // data.seed: settings.seed unless set apart
  serial::TrainingSettings settings;
  // The output the loss goes on (tensor name or position); "" = automatic
  // with the dataset's classes. Sent as settings.config.loss_output.
  std::string loss_output;
  // A reset during training: continue from the last run checkpoint the host
  // downloaded (every `checkpoint_every` samples, 0 = each epoch end), or
  // with resume off stop with a message.
  bool resume = true;
  uint32_t checkpoint_every = 0;
  bool compare_host = false;  // run the same training on the host and compare (<= 1e-4)
  std::string output_path;    // download the trained model here when given
  int run_timeout_s = 600;
};
int board_train(const BoardTrainRequest& request, const LineSink& progress, std::string* out,
                std::string* err);

// ---- Inference latency on the board (BENCH) ----
// A board's time figure (BenchReply, Metric::step_cycles: cycles at
// `clock_hz`, microseconds when it is 0) in microseconds.
double board_microseconds(uint64_t cycles, uint32_t clock_hz);
// Under QEMU (a board named "qemu-..."; run with -icount shift=0, 1 instruction
// = 1 ns) the instructions those cycles took; 0 on real boards.
uint64_t qemu_instructions(uint64_t cycles, uint32_t clock_hz, const std::string& board);
// "DWT" or "SysTick": what counted a board's cycles ("" for a host simulation).
const char* cycle_counter_name(const serial::Capabilities& caps);

// "per sample 1,234,567 cycles = 49.4 ms" (a METRIC's step_cycles; "per sample
// 812 us" on a host simulation; "" from a board that did not time its steps).
std::string board_step_text(const serial::Metric& metric, uint32_t clock_hz);

struct BoardBenchResult {
  std::string board;          // HELLO's name
  uint32_t clock_hz = 0;      // 0: a host simulation (its clock is this computer's)
  std::string cycle_counter;  // cycle_counter_name()
  std::string model_label;    // the model file's name
  serial::BenchReply reply;
  double host_median_us = 0;         // the same runs on this computer (bench_on_host)
  bool outputs_identical = false;    // output 0 bit for bit (CRC-32) as on the host
  double max_output_difference = 0;  // over the output values the board sent
};
// The board's BENCH of the model it has (`model` = the same bytes, for the
// host's run of the same inputs, timed the same way); fails when the outputs
// differ by more than 1e-4 (the board did not run this model). Shared by the
// CLI and the GUI's Board dock.
bool bench_on_board(serial::BoardClient& client, const std::vector<uint8_t>& model,
                    const std::string& model_label, uint32_t runs, BoardBenchResult* result,
                    std::string* err);
// One line: "board NAME (CLOCK): MODEL, N inferences, median C cycles = U us
// ..., arena B B; host H us (Rx faster); outputs equal the host's". Under QEMU
// (-icount shift=0) the median is also given in instructions.
std::string board_bench_line(const BoardBenchResult& result);
std::string board_bench_json(const BoardBenchResult& result);

struct BoardBenchRequest {
  BoardConnection connection;
  std::string model_path;  // uploaded first (resumed, i.e. skipped, when the board has it)
  uint32_t runs = 100;
  bool json = false;
};
int board_bench(const BoardBenchRequest& request, const LineSink& progress, std::string* out,
                std::string* err);

// Writes the board's model with its trained weights to `output_path`.
int board_download(const BoardConnection& connection, const std::string& output_path,
                   std::string* out, std::string* err);

}  // namespace gruwb::app
