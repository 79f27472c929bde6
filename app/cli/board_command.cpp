// gruwb board list | info | upload MODEL | train --data D [options] | download -o OUT |
//             bench MODEL [--runs N] [--json] | flash --board NAME [--tool T] [--dry-run]
// gruwb board-sim [--ram BYTES] [--byte-rate N] [--link PATH] [--noise RATE [--noise-kinds LIST]
//                  [--noise-seed N]] [--disconnect-after BYTES]

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "app/cli/command.h"
#include "app/core/board.h"
#include "app/core/board_fit.h"
#include "app/core/board_flash.h"
#include "app/core/inspect.h"
#include "serial/firmware/boards/host_pty/host_pty_board.h"

namespace gruwb::cli {
namespace {

const std::vector<OptionSpec> kConnectionOptions = {
    {"--port", true},       {"--baud", true},        {"--dtr", true},      {"--transport", true},
    {"--timeout-ms", true}, {"--reconnect-s", true}, {"--give-up-s", true}};

// The float options of the training settings (ParsedArgs::number is double).
bool float_option(const ParsedArgs& p, const char* name, float* out, std::string* message) {
  double v = *out;
  if (!p.number(name, -1e30, 1e30, &v, message)) return false;
  *out = static_cast<float>(v);
  return true;
}

// Fills the connection from --port/--baud/...; returns "" or the usage error
// (prefixed with p.command).
std::string parse_connection(const ParsedArgs& p, app::BoardConnection* c) {
  c->port = p.value("--port", std::getenv("GRUWB_PORT") ? std::getenv("GRUWB_PORT") : "");
  if (c->port.empty()) return p.command + ": missing --port PORT (or set GRUWB_PORT)";
  std::string message;
  int reconnect_s = c->reconnect_ms / 1000;
  int give_up_s = c->operation_limit_ms / 1000;
  if (!p.integer("--baud", 1, 20000000, &c->baud, &message) ||
      !p.integer("--timeout-ms", 10, 600000, &c->timeout_ms, &message) ||
      !p.integer("--reconnect-s", 0, 3600, &reconnect_s, &message) ||
      !p.integer("--give-up-s", 1, 86400, &give_up_s, &message)) {
    return message;
  }
  c->reconnect_ms = reconnect_s * 1000;
  c->operation_limit_ms = give_up_s * 1000;
  if (p.has("--dtr")) {
    const std::string dtr = p.value("--dtr");
    if (dtr != "on" && dtr != "off") return p.command + ": --dtr must be on or off";
    c->dtr = dtr == "on";
  }
  c->transport = p.value("--transport", "auto");
  return "";
}

void print_line(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// Fills the training request; returns "" or the usage error (prefixed with
// p.command).
std::string parse_train_options(const ParsedArgs& p, app::BoardTrainRequest* r) {
  serial::TrainingSettings& s = r->settings;
  std::string message;
  if (!p.integer("--epochs", 1, 100000, &s.epochs, &message) ||
      !p.integer("--batch", 1, 100000, &s.config.batch_size, &message) ||
      !p.integer("--seed", 0, 0xFFFFFFFFLL, &s.seed, &message) ||
      !p.integer("--samples", 1, 1 << 24, &r->data.samples, &message) ||
      !p.number("--validation", 0, 0.9, &r->data.validation_fraction, &message) ||
      !p.integer("--metric-every", 0, 1 << 24, &s.metric_every, &message) ||
      !p.integer("--timeout", 1, 86400 * 7, &r->run_timeout_s, &message) ||
      !p.integer("--checkpoint-every", 0, 1 << 24, &r->checkpoint_every, &message) ||
      !float_option(p, "--lr", &s.config.learning_rate, &message) ||
      !float_option(p, "--momentum", &s.config.momentum, &message) ||
      !float_option(p, "--clip", &s.config.clip_norm, &message)) {
    return message;
  }
  const std::string optimizer = p.value("--optimizer", "adam");
  if (optimizer == "adam") {
    s.config.optimizer = Optimizer::kAdam;
  } else if (optimizer == "sgd") {
    s.config.optimizer = Optimizer::kSgd;
  } else {
    return p.command + ": --optimizer must be adam or sgd";
  }
  const std::string loss = p.value("--loss", "ce");
  if (loss == "ce") {
    s.config.loss = Loss::kCategoricalCrossEntropy;
  } else if (loss == "sparse-ce") {
    s.config.loss = Loss::kSparseCategoricalCrossEntropy;
  } else if (loss == "mse") {
    s.config.loss = Loss::kMeanSquaredError;
  } else if (loss == "mae") {
    s.config.loss = Loss::kMeanAbsoluteError;
  } else {
    return p.command + ": --loss must be ce, sparse-ce, mse or mae";
  }
  const std::string scope = p.value("--scope", "all");
  if (!parse_trainable_scope(scope.c_str(), &s.config)) {
    return p.command + ": --scope must be fc, all or last:N (named tensors stay on the desktop)";
  }
  r->resume = !p.has("--no-resume");
  s.shuffle = p.has("--no-shuffle") ? 0 : 1;
  r->compare_host = p.has("--compare-host");
  r->output_path = p.value("-o");
  r->loss_output = p.value("--output");
  if (p.has("--output") && r->loss_output.empty()) {
    return p.command + ": --output needs an output tensor NAME";
  }
  r->model_path = p.value("--model");
  r->data.path = p.value("--data");
  if (r->data.path.empty()) return p.command + ": missing --data PATH";
  r->data.seed = s.seed;  // the split's, as an experiment's first seed is both
  if (p.has("--length") && !app::parse_length_policy(p.value("--length"), &r->data.length_policy))
    return p.command + ": --length must be exact, crop, pad or resample";
  const std::string normalize = p.value("--normalize", "data");
  if (normalize != "data" && normalize != "none")
    return p.command + ": --normalize must be data or none";
  r->data.normalize = normalize == "data";
  return "";
}

int run_board(const std::vector<std::string>& args) {
  std::vector<OptionSpec> spec = kConnectionOptions;
  for (const char* name : {"--data",         "--model",    "--epochs",     "--batch",
                           "--lr",           "--momentum", "--optimizer",  "--loss",
                           "--scope",        "--clip",     "--seed",       "--samples",
                           "--metric-every", "-o",         "--timeout",    "--checkpoint-every",
                           "--output",       "--runs",     "--board",      "--tool",
                           "--image",        "--length",   "--validation", "--normalize"}) {
    spec.push_back({name, true});
  }
  spec.push_back({"--no-shuffle", false});
  spec.push_back({"--compare-host", false});
  spec.push_back({"--no-resume", false});
  spec.push_back({"--json", false});
  spec.push_back({"--dry-run", false});
  ParsedArgs parsed;
  int exit_code = 0;
  if (!parse_args(kBoardCommand, args, spec, &parsed, &exit_code)) return exit_code;
  if (parsed.positional.empty()) return usage_error("board: missing SUBCOMMAND", &kBoardCommand);
  const std::string sub = parsed.positional[0];
  parsed.command = "board " + sub;  // option errors name the subcommand
  std::string out, err;
  if (sub == "list") return finish(app::board_list(&out, &err), out, err);
  if (sub == "flash") {  // talks to a programmer (or a bootloader port), not to our firmware
    app::FlashRequest request;
    request.board = parsed.value("--board");
    request.image = parsed.value("--image");
    request.tool = parsed.value("--tool");
    request.port = parsed.value("--port");
    request.dry_run = parsed.has("--dry-run");
    if (parsed.positional.size() != 1)
      return usage_error("board flash: the board is --board NAME", &kBoardCommand);
    return finish(app::board_flash(request, print_line, &out, &err), out, err);
  }
  if (sub == "fit") {  // reads firmware manifests; talks to a board only with --port
    if (parsed.positional.size() != 2)
      return usage_error("board fit: give one MODEL", &kBoardCommand);
    app::BoardFitRequest request;
    request.model_path = parsed.positional[1];
    if (parsed.has("--board")) request.boards = comma_list(parsed.value("--board"));
    request.port = parsed.value("--port");
    request.json = parsed.has("--json");
    std::string message;
    if (!parsed.integer("--samples", 0, 1u << 24, &request.samples, &message))
      return usage_error(message, &kBoardCommand);
    return finish(app::board_fit(request, &out, &err), out, err);
  }

  app::BoardConnection connection;
  const std::string problem = parse_connection(parsed, &connection);
  if (!problem.empty()) return usage_error(problem, &kBoardCommand);
  if (sub == "info") return finish(app::board_info(connection, &out, &err), out, err);
  if (sub == "upload") {
    if (parsed.positional.size() != 2)
      return usage_error("board upload: give one MODEL", &kBoardCommand);
    return finish(app::board_upload(connection, parsed.positional[1], print_line, &out, &err), out,
                  err);
  }
  if (sub == "download") {
    if (!parsed.has("-o")) return usage_error("board download: missing -o OUT", &kBoardCommand);
    return finish(app::board_download(connection, parsed.value("-o"), &out, &err), out, err);
  }
  if (sub == "bench") {
    if (parsed.positional.size() != 2)
      return usage_error("board bench: give one MODEL", &kBoardCommand);
    app::BoardBenchRequest request;
    request.connection = connection;
    request.model_path = parsed.positional[1];
    request.json = parsed.has("--json");
    std::string message;
    if (!parsed.integer("--runs", 1, serial::kMaxBenchRuns, &request.runs, &message))
      return usage_error(message, &kBoardCommand);
    return finish(app::board_bench(request, print_line, &out, &err), out, err);
  }
  if (sub == "train") {
    app::BoardTrainRequest request;
    request.connection = connection;
    const std::string train_problem = parse_train_options(parsed, &request);
    if (!train_problem.empty()) return usage_error(train_problem, &kBoardCommand);
    return finish(app::board_train(request, print_line, &out, &err), out, err);
  }
  return usage_error("board: unknown subcommand '" + sub + "'", &kBoardCommand);
}

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

int run_board_sim(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  if (!parse_args(kBoardSimCommand, args,
                  {{"--ram", true},
                   {"--byte-rate", true},
                   {"--link", true},
                   {"--noise", true},
                   {"--noise-kinds", true},
                   {"--noise-seed", true},
                   {"--stall-ms", true},
                   {"--disconnect-after", true}},
                  &parsed, &exit_code)) {
    return exit_code;
  }
  serial::HostBoardOptions options;
  std::string message;
  if (!parsed.integer("--ram", 4096, 1LL << 30, &options.ram_bytes, &message) ||
      !parsed.integer("--byte-rate", 0, 100000000, &options.byte_rate, &message) ||
      !parsed.number("--noise", 0, 1, &options.noise.rate, &message) ||
      !parsed.integer("--noise-seed", 0, 0xFFFFFFFFLL, &options.noise.seed, &message) ||
      !parsed.integer("--stall-ms", 0, 10000, &options.noise.stall_ms, &message) ||
      !parsed.integer("--disconnect-after", 0, 1LL << 40, &options.disconnect_after_bytes,
                      &message)) {
    return usage_error(message, &kBoardSimCommand);
  }
  if (parsed.has("--noise-kinds") &&
      !serial::parse_line_faults(parsed.value("--noise-kinds"), &options.noise, &message)) {
    return usage_error("board-sim: --noise-kinds: " + message, &kBoardSimCommand);
  }
  options.link = parsed.value("--link");
  serial::HostPtyBoard board(options);
  std::string pty, err;
  if (!board.open(&pty, &err)) return finish(app::kExitFailure, "", err);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::printf(
      "board-sim: serving on %s (RAM %zu bytes%s)\n", pty.c_str(), options.ram_bytes,
      options.byte_rate ? (", UART " + std::to_string(options.byte_rate) + " B/s").c_str() : "");
  if (!options.link.empty()) std::printf("board-sim: linked as %s\n", options.link.c_str());
  // `gruwb board list` and the Board dock offer the pty while it serves.
  const std::string announcement = app::announce_simulated_board(pty);
  if (options.noise.rate > 0)
    std::printf("board-sim: line noise %g faults per byte each way\n", options.noise.rate);
  std::fflush(stdout);
  const bool unplugged = board.run(&g_stop);
  app::withdraw_simulated_board(announcement);
  if (options.noise.rate > 0) {
    std::string counts;
    for (int k = 0; k < serial::kLineFaultKinds; ++k) {
      const auto fault = static_cast<serial::LineFault>(k);
      counts += std::string(k ? ", " : "") + serial::line_fault_name(fault) + " " +
                std::to_string(board.faults(fault));
    }
    std::printf("board-sim: line faults injected: %s\n", counts.c_str());
  }
  if (unplugged) {
    std::printf("board-sim: unplugged after %llu bytes received (--disconnect-after)\n",
                static_cast<unsigned long long>(options.disconnect_after_bytes));
  }
  return app::kExitOk;
}

}  // namespace

const Command kBoardCommand = {
    "board", "Train and time models on a microcontroller board over serial (or a simulated one)",
    "Usage: gruwb board list\n"
    "       gruwb board info --port PORT [connection options]\n"
    "       gruwb board upload MODEL --port PORT\n"
    "       gruwb board train --data PATH [--model MODEL] --port PORT [training options]\n"
    "       gruwb board download -o OUT --port PORT\n"
    "       gruwb board bench MODEL --port PORT [--runs N] [--json]\n"
    "       gruwb board flash --board NAME [--tool openocd|st-flash|stm32flash] [--port PORT]\n"
    "                         [--image ELF] [--dry-run]\n"
    "       gruwb board fit MODEL [--board NAME,...|--port PORT] [--samples N] [--json]\n"
    "\n"
    "Talks the GRU Workbench serial protocol (docs/serial-protocol.md) to a board running\n"
    "our firmware: the same engine trains on the board. Real ports go through\n"
    "libserialport; pseudo-terminals (/dev/pts/N of 'gruwb board-sim' or QEMU) through\n"
    "POSIX termios, because libserialport 0.1.1 cannot open them. Uploads resume where\n"
    "an interrupted one stopped. During training the host keeps a run checkpoint (PAUSE,\n"
    "download, START); when the board resets it uploads model, dataset and checkpoint\n"
    "again and the run continues where it was (the result equals an uninterrupted run).\n"
    "\n"
    "Connection options:\n"
    "  --port PORT          Serial port or pty (default: $GRUWB_PORT)\n"
    "  --baud B             Any rate (default 115200), 8N1, no flow control\n"
    "  --dtr on|off         Assert DTR on open (default on; it resets Arduino-class boards)\n"
    "  --transport T        auto (default), libserialport or termios\n"
    "  --timeout-ms MS      Per request attempt (default 1000). A request is sent again\n"
    "                       while the line shows noise; 5 silent attempts fail it\n"
    "  --give-up-s S        Fail any one request, upload or download still unfinished\n"
    "                       after S seconds on a noisy line (default 600)\n"
    "  --reconnect-s S      Reopen a vanished port once a second for S seconds (default 0)\n"
    "\n"
    "Training options (train):\n"
    "  --data PATH          Any dataset 'gruwb experiment' reads (.ts, .arff, .csv, .npz,\n"
    "                       x.npy,y.npy, a folder, a plugin's format), prepared as an\n"
    "                       experiment prepares it for a model file: the board trains on\n"
    "                       the same training split, in the same order, as the desktop\n"
    "  --length P           exact, crop, pad or resample (default) to the model's T steps\n"
    "  --normalize N        data (default: per-channel statistics of the training split)\n"
    "                       or none\n"
    "  --validation F       Fraction of the training split held out (default 0); the\n"
    "                       splits are drawn with --seed, as 'gruwb experiment --seed'\n"
    "  --model MODEL        Upload this model first (default: the one on the board)\n"
    "  --samples N          Train on the first N samples of the split (default all)\n"
    "  --epochs N (1)  --batch N (1)  --lr X (0.001)  --optimizer adam|sgd  --momentum X\n"
    "  --loss ce|sparse-ce|mse|mae (ce)  --scope fc|all|last:N (all)  --clip X  --seed N (0)\n"
    "  --output NAME        The model output the loss goes on (tensor name, or its\n"
    "                       position 0, 1, ...). Default: the only output; else the one fed\n"
    "                       by SOFTMAX/LOGISTIC; else the only float output with the\n"
    "                       dataset's classes; else an error naming the candidates\n"
    "  --no-shuffle         Keep the dataset order\n"
    "  --metric-every N     Also report every N samples (default: per epoch)\n"
    "  --compare-host       Run the same training on this computer and check that losses and\n"
    "                       weights agree to 1e-4 relative (exit 1 if not)\n"
    "  --checkpoint-every N Keep a run checkpoint every N samples (checked at each METRIC;\n"
    "                       default: at each epoch end). The board streams it from its\n"
    "                       live training state: no RAM beyond the run's own\n"
    "  --no-resume          After a board reset stop with a message instead of resuming\n"
    "  -o OUT               Download the trained model to OUT\n"
    "  --timeout S          Give up when training takes longer (default 600)\n"
    "\n"
    "Inference latency (bench): uploads MODEL (skipped when the board has it), then the\n"
    "board times N inferences of it (inputs it fills from a fixed seed, variables reset\n"
    "before each) by its own clock, in RAM no run uses: a configured run stays as it\n"
    "was (refused while training: PAUSE first). Prints one line: the board's median,\n"
    "min and max in cycles of its clock (DWT cycle counter, else SysTick) and in us, its\n"
    "arena, the same runs' median on this computer (the firmware's code; 'gruwb bench'\n"
    "averages repetitions instead) and whether the board's output equals the host's for\n"
    "the same inputs (exit 1 if it differs by more than 1e-4). Under QEMU (-icount\n"
    "shift=0) 1 ns of board time is one instruction; a simulated board counts this\n"
    "computer's microseconds. Training prints each METRIC's time per sample likewise.\n"
    "  --runs N             Timed inferences, 1..10000 (default 100)\n"
    "  --json               One JSON object: board, clock_hz, simulated, model, runs,\n"
    "                       median_us, min_us, max_us, total_us, median_cycles, min_cycles,\n"
    "                       max_cycles, total_cycles, cycle_counter (null when simulated),\n"
    "                       arena_bytes, instructions_per_inference (QEMU, else null),\n"
    "                       host_median_us, output_identical, max_output_difference\n"
    "\n"
    "Memory (fit): whether MODEL fits each board whose firmware image is found (as for\n"
    "flash), or the board on --port: RAM (the pool for model + dataset + arena: inference,\n"
    "training the last Dense layer, training all weights, arenas from the engine's planner)\n"
    "and flash (the image, and an image with only MODEL's ops, estimated from the image's\n"
    "kernels); a verdict per board (fits / needs N KB more / try scope fc).\n"
    "  --board NAME,...     Only these boards' images\n"
    "  --samples N          Count a training dataset of N samples (default 0: none)\n"
    "  --json               The same as JSON\n"
    "\n"
    "Flashing (flash): writes the firmware image of --board NAME (a folder\n"
    "NAME/gruwb_fw_NAME.elf with its .bin and .json manifest in $GRUWB_FIRMWARE_DIR when set,\n"
    "else the installed share/gru-workbench/firmware or the build tree's firmware/) through a\n"
    "debug probe or bootloader: openocd (apt install openocd) or st-flash (stlink-tools)\n"
    "through the ST-LINK, stm32flash through the STM32's serial bootloader (BOOT0 high,\n"
    "--port of its USART). QEMU boards have nothing to flash: it prints their command.\n"
    "  --board NAME         nucleo_f446re, mps2_an386, ... (without it: the images found)\n"
    "  --tool T             openocd, st-flash or stm32flash (default: the first installed)\n"
    "  --image ELF          This image instead (its gruwb_fw_NAME.json beside it)\n"
    "  --dry-run            Print the command line, run nothing\n"
    "\n"
    "Exit status: 0 ok; 1 link or board failure (no answer, reset with --no-resume or\n"
    "more than 3 resets, training error, the flash tool failed);\n"
    "2 bad input or usage.\n"
    "\n"
    "Example (no hardware):\n"
    "  gruwb board-sim &          # prints: board-sim: serving on /dev/pts/5\n"
    "  gruwb board train --port /dev/pts/5 --model gesture_gru_fused.tflite \\\n"
    "      --data BasicMotionsAcc60_TRAIN.ts --samples 16 --compare-host -o trained.tflite\n",
    run_board};

const Command kBoardSimCommand = {
    "board-sim", "Serve a simulated training board on a pseudo-terminal",
    "Usage: gruwb board-sim [--ram BYTES] [--byte-rate N] [--link PATH] [--noise RATE]\n"
    "\n"
    "Runs the board firmware's main loop (the same Device and engine code the Cortex-M\n"
    "image runs) on a pseudo-terminal and prints 'board-sim: serving on /dev/pts/N'.\n"
    "Connect with 'gruwb board ... --port /dev/pts/N'. Stops on Ctrl-C / SIGTERM.\n"
    "\n"
    "Options:\n"
    "  --ram BYTES      RAM pool for model + dataset + training arena (default 524288)\n"
    "  --byte-rate N    Emulate a UART of N bytes/s each way (11520 = 115200 baud 8N1);\n"
    "                   default: as fast as the pty goes\n"
    "  --link PATH      Also make PATH a symlink to the pty (a stable name)\n"
    "\n"
    "A noisy line, for trying the link's recovery (each direction, each byte):\n"
    "  --noise RATE     Faults per byte, 0..1 (e.g. 1e-3); the kind is drawn evenly\n"
    "                   from --noise-kinds\n"
    "  --noise-kinds L  Comma list of drop, corrupt (one bit), duplicate, reorder (swap\n"
    "                   with the next byte), stall (the line halts; default all)\n"
    "  --noise-seed N   Seed of the faults (default 1)\n"
    "  --stall-ms MS    Length of one stall (default 50)\n"
    "  --disconnect-after BYTES  Unplug: close the pty and exit after receiving BYTES\n",
    run_board_sim};

}  // namespace gruwb::cli
