// End to end as a user runs it: `gruwb board-sim` serves a pty; `gruwb board ...` uploads the
// reference gesture GRU and a BasicMotions slice, trains one epoch on the board, compares with the
// same run on the host (<= 1e-4 relative) and downloads the trained model (the QEMU board:
// qemu_test.cpp). Also the libserialport path: enumeration, a missing port, a pty it refuses.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/serial/child_server.h"

namespace {

using gruwb::serial::test::Server;

const std::string kSource = GRUWB_SOURCE_DIR;
const std::string kModel = kSource + "/resources/samples/gesture_gru_fused.tflite";
const std::string kData = kSource + "/resources/samples/BasicMotionsAcc60_TRAIN.ts";

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Result run_with_prefix(const std::string& prefix, const std::string& args) {
  Result r;
  const std::string command = prefix + std::string(GRUWB_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

Result run(const std::string& args) { return run_with_prefix("", args); }

void train_and_download(const std::string& pty, const std::string& tag) {
  const std::string out = ::testing::TempDir() + "board_trained_" + tag + ".tflite";
  std::remove(out.c_str());
  Result info = run("board info --port " + pty);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(
      info.output.find("pseudo-terminal, which libserialport 0.1.1 cannot open: using termios"),
      std::string::npos)
      << info.output;
  EXPECT_NE(info.output.find("custom GRUWB_GRU"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("can bench:        yes"), std::string::npos) << info.output;

  Result train = run("board train --port " + pty + " --model " + kModel + " --data " + kData +
                     " --samples 16 --epochs 1 --batch 4 --lr 0.002 --seed 5 --metric-every 8"
                     " --compare-host -o " +
                     out);
  ASSERT_EQ(train.exit_code, 0) << train.output;
  std::printf("%s", train.output.c_str());
  // The desktop's preparation: the training split (the _TEST file is the test split), normalised.
  EXPECT_NE(train.output.find("dataset normalisation: per-channel mean/variance of the training "
                              "split, applied to the data"),
            std::string::npos)
      << train.output;
  EXPECT_NE(train.output.find("16 training samples of 60 steps x 3 channels"), std::string::npos)
      << train.output;
  EXPECT_NE(train.output.find("epoch 1/1  samples 8/16"), std::string::npos) << train.output;
  // Each METRIC carries the board's time per trained sample (the simulation counts us).
  EXPECT_TRUE(
      std::regex_search(train.output, std::regex("samples 8/16 .* samples/s \\(board clock\\), per "
                                                 "sample [0-9]+ us\n")))
      << train.output;
  EXPECT_NE(train.output.find("(agree to 1e-4)"), std::string::npos) << train.output;
  std::ifstream trained(out, std::ios::binary);
  ASSERT_TRUE(trained.good()) << out;
  // The trained model is a valid model with the board's weights: inspect reads it.
  Result inspect = run("inspect " + out);
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;

  const std::string again = ::testing::TempDir() + "board_download_" + tag + ".tflite";
  Result download = run("board download -o " + again + " --port " + pty);
  ASSERT_EQ(download.exit_code, 0) << download.output;
  std::ifstream a(out, std::ios::binary), b(again, std::ios::binary);
  const std::string bytes_a((std::istreambuf_iterator<char>(a)), {});
  const std::string bytes_b((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(bytes_a, bytes_b);
  std::ifstream original(kModel, std::ios::binary);
  const std::string bytes_original((std::istreambuf_iterator<char>(original)), {});
  EXPECT_EQ(bytes_a.size(), bytes_original.size());
  EXPECT_NE(bytes_a, bytes_original);  // the weights changed

  // The extension names the file type (issue 20 point 1): Circle under .circle, a C array
  // under .h/.cc, never TFLite bytes under another name; an unknown one is refused first.
  const std::string as_circle = ::testing::TempDir() + "board_download_" + tag + ".circle";
  Result circle = run("board download -o " + as_circle + " --port " + pty);
  ASSERT_EQ(circle.exit_code, 0) << circle.output;
  std::ifstream c(as_circle, std::ios::binary);
  const std::string bytes_c((std::istreambuf_iterator<char>(c)), {});
  EXPECT_EQ(bytes_c.substr(4, 4), "CIR0");
  EXPECT_EQ(run("inspect " + as_circle).exit_code, 0);
  const std::string as_array = ::testing::TempDir() + "board_download_" + tag + ".cc";
  Result array = run("board download -o " + as_array + " --port " + pty);
  ASSERT_EQ(array.exit_code, 0) << array.output;
  std::ifstream source(as_array), header(as_array.substr(0, as_array.size() - 3) + ".h");
  const std::string text((std::istreambuf_iterator<char>(source)), {});
  EXPECT_NE(text.find("alignas(16) const unsigned char"), std::string::npos) << text.substr(0, 200);
  EXPECT_TRUE(header.good());
  Result bad = run("board download -o " + ::testing::TempDir() + "model.png --port " + pty);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("unknown model file type '.png'"), std::string::npos) << bad.output;
}

TEST(BoardCli, SimulatedBoardTrainsLikeTheHost) {
  Server sim;
  std::string pty;
  ASSERT_TRUE(
      sim.start({GRUWB_CLI, "board-sim"}, std::regex("serving on (/dev/pts/[0-9]+)"), &pty));
  train_and_download(pty, "sim");
  // Uploading the same model again resumes at its end: nothing is sent.
  Result upload = run("board upload " + kModel + " --port " + pty);
  ASSERT_EQ(upload.exit_code, 0) << upload.output;
  EXPECT_NE(upload.output.find("board already had 49088, resumed there"), std::string::npos)
      << upload.output;
  // Run checkpoints every 8 samples (FC only: 4,000 bytes) leave the result equal to the
  // host's run.
  Result checkpointed =
      run("board train --port " + pty + " --model " + kModel + " --data " + kData +
          " --samples 16 --batch 4 --epochs 2 --scope fc --metric-every 4 --checkpoint-every 8 "
          "--compare-host");
  ASSERT_EQ(checkpointed.exit_code, 0) << checkpointed.output;
  // How many are taken depends on where each PAUSE lands: this board runs on its own and may
  // finish first (BoardLink tests count them on the in-process board, which cannot).
  EXPECT_EQ(checkpointed.output.find("checkpoints off"), std::string::npos) << checkpointed.output;
  EXPECT_NE(checkpointed.output.find("(agree to 1e-4)"), std::string::npos) << checkpointed.output;
  // FC+GRU with Adam on the 512 KB board's pool (the QEMU image's): its 191,212-byte checkpoints
  // exceed the free RAM and stream all the same.
  Server small;
  std::string small_pty;
  ASSERT_TRUE(small.start({GRUWB_CLI, "board-sim", "--ram", "491952"},
                          std::regex("serving on (/dev/pts/[0-9]+)"), &small_pty));
  Result all = run("board train --port " + small_pty + " --model " + kModel + " --data " + kData +
                   " --samples 16 --batch 4 --epochs 2 --scope all --metric-every 4"
                   " --checkpoint-every 8 --compare-host");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.output.find("checkpoints off"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("(agree to 1e-4)"), std::string::npos) << all.output;
  Result bad = run("board train --port " + pty + " --data " + kData + " --checkpoint-every x");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(
      bad.output.find("board train: --checkpoint-every 'x' must be an integer in 0..16777216"),
      std::string::npos)
      << bad.output;
}

// `gruwb board bench` on the simulated board: the line names the board, count, median, arena
// and host figure, and the board's output equals the host's run of the same inputs; --json
// carries the same; bad requests fail with one line.
TEST(BoardCli, SimulatedBoardBenchesInference) {
  Server sim;
  std::string pty;
  ASSERT_TRUE(
      sim.start({GRUWB_CLI, "board-sim"}, std::regex("serving on (/dev/pts/[0-9]+)"), &pty));
  Result bench = run("board bench " + kModel + " --port " + pty + " --runs 20");
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  std::printf("%s", bench.output.c_str());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      bench.output, m,
      std::regex("board host-sim \\(simulated: this computer's clock\\): gesture_gru_fused.tflite, "
                 "20 inferences, median ([0-9,]+) us \\(min ([0-9,]+), max ([0-9,]+)\\), arena "
                 "([0-9,]+) B; host ([0-9,]+) us; output equals the host's bit for bit\n")))
      << bench.output;
  const auto number = [](std::string text) {
    text.erase(std::remove(text.begin(), text.end(), ','), text.end());
    return std::stol(text);
  };
  const long median = number(m[1]), low = number(m[2]), high = number(m[3]);
  EXPECT_LE(low, median);
  EXPECT_LE(median, high);
  EXPECT_GT(median, 0);
  EXPECT_LT(median, 1000000);  // a 60-step GRU(60) is no second of host CPU
  // The arena is the one `gruwb bench` plans for the model on the host.
  Result host = run("bench " + kModel + " --json --repetitions 1 --min-time 0.01");
  ASSERT_EQ(host.exit_code, 0) << host.output;
  std::smatch arena;
  ASSERT_TRUE(std::regex_search(host.output, arena, std::regex("\"arena_bytes\": ([0-9]+)")))
      << host.output;
  EXPECT_EQ(number(m[4]), std::stol(arena[1]));

  Result json = run("board bench " + kModel + " --port " + pty + " --runs 3 --json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_NE(json.output.find("\"runs\": 3,"), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"simulated\": true,"), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"instructions_per_inference\": null,"), std::string::npos)
      << json.output;
  // A simulation counts microseconds, no cycles.
  EXPECT_NE(json.output.find("\"median_cycles\": null,"), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"output_identical\": true,"), std::string::npos) << json.output;
  EXPECT_EQ(json.output.find("upload"), std::string::npos) << json.output;  // JSON only

  Result runs = run("board bench " + kModel + " --port " + pty + " --runs 0");
  EXPECT_EQ(runs.exit_code, 2);
  EXPECT_EQ(runs.output.rfind("gruwb: board bench: --runs '0' must be an integer in 1..10000\n", 0),
            0u)
      << runs.output;
  Result no_model = run("board bench " + kData + " --port " + pty);
  EXPECT_EQ(no_model.exit_code, 2);
  EXPECT_EQ(no_model.output.find('\n'), no_model.output.size() - 1) << no_model.output;
  EXPECT_NE(no_model.output.find(kData + ": "), std::string::npos) << no_model.output;
}

// `gruwb board fit --port`: the connected board's pool (HELLO; board-sim's 512 KB) against the
// model's needs; no flash figures (HELLO does not carry them).
TEST(BoardCli, FitAgainstAConnectedBoard) {
  Server sim;
  std::string pty;
  ASSERT_TRUE(sim.start({GRUWB_CLI, "board-sim", "--ram", "100000"},
                        std::regex("serving on (/dev/pts/[0-9]+)"), &pty));
  Result fit = run("board fit " + kModel + " --port " + pty + " --samples 16");
  ASSERT_EQ(fit.exit_code, 0) << fit.output;
  std::printf("%s", fit.output.c_str());
  // 100,000 B hold model + inference arena (~58 KB) and the last Dense layer's training, not
  // training all weights (~335 KB).
  EXPECT_TRUE(std::regex_search(fit.output, std::regex("host-sim +98 KB +58 KB ok +75 KB ok +335 "
                                                       "KB, 237 KB over +- +training all weights "
                                                       "needs 237 KB more: try scope fc\n")))
      << fit.output;
}

// The cell comparison's board columns: `gruwb experiment --board-port` times each cell's
// deployed model on the board (BENCH, outputs checked against the host); a board whose RAM
// cannot hold a row's model gets a note in that row, the other rows and the host figures stay.
TEST(BoardCli, CellComparisonTimesEachRowOnTheBoard) {
  const std::string data = std::string(GRUWB_SHARED_DIR) + "/data/datasets/BasicMotions";
  const std::string out = testing::TempDir() + "board_cells.json";
  for (const char* ram : {"524288", "6000"}) {
    Server sim;
    std::string pty;
    ASSERT_TRUE(sim.start({GRUWB_CLI, "board-sim", "--ram", ram},
                          std::regex("serving on (/dev/pts/[0-9]+)"), &pty));
    Result experiment =
        run("experiment --build cell=gru,units=8 --compare-cells gru,rnn --data " + data +
            " --timesteps 10 --stages init --board-port " + pty + " --json " + out);
    ASSERT_EQ(experiment.exit_code, 0) << experiment.output;
    std::printf("%s", experiment.output.substr(experiment.output.find("cell / model")).c_str());
    std::ifstream file(out);
    const std::string json((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
    for (const char* cell : {"gru", "rnn"}) {
      // Each row of "cells" up to the next: host latency, then the board's figures (a
      // simulation counts us, no cycles).
      const size_t at =
          json.find(std::string("\"cell\": \"") + cell + "\",\n      \"test_accuracy");
      ASSERT_NE(at, std::string::npos) << cell << ": " << json;
      const std::string row = json.substr(at, json.find("\n    }", at) - at);
      std::smatch m;
      ASSERT_TRUE(std::regex_search(
          row, m,
          std::regex("\"latency_us\": ([0-9.e+-]+),\\s*\"board_latency_us\": ([0-9.e+-]+)")))
          << row;
      EXPECT_GT(std::stod(m[1]), 0.0) << cell;
      if (std::string(ram) == "524288") {
        EXPECT_GT(std::stod(m[2]), 0.0) << row;
        EXPECT_NE(row.find("\"board\": \"host-sim\""), std::string::npos) << row;
        EXPECT_EQ(row.find("board_cycles"), std::string::npos) << row;
      } else {
        EXPECT_EQ(std::stod(m[2]), 0.0) << row;
        EXPECT_NE(row.find("\"board_note\": "), std::string::npos) << row;
      }
    }
  }
  std::remove(out.c_str());
  Result no_board = run("experiment --build cell=gru,units=8 --data " + data +
                        " --timesteps 10 --stages init --board-port /dev/pts/no-such-board");
  EXPECT_EQ(no_board.exit_code, 2) << no_board.output;
  EXPECT_EQ(no_board.output,
            "gruwb: board: cannot open /dev/pts/no-such-board: No such file or directory\n");
}

TEST(BoardCli, LibserialportPathAndErrors) {
  Result list = run("board list");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("QEMU's pseudo-terminals are not listed: pass them with --port"),
            std::string::npos);
  Result missing = run("board info --port /dev/ttyGRUWB_MISSING");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("libserialport: cannot find port /dev/ttyGRUWB_MISSING"),
            std::string::npos)
      << missing.output;
  Server sim;
  std::string pty;
  ASSERT_TRUE(
      sim.start({GRUWB_CLI, "board-sim"}, std::regex("serving on (/dev/pts/[0-9]+)"), &pty));
  // A running board-sim announces its pty: `board list` offers it (issue 20, point 11).
  Result listed = run("board list");
  EXPECT_NE(listed.output.find(pty + "  termios  gruwb board-sim\n"), std::string::npos)
      << listed.output;
  Result forced = run("board info --transport libserialport --port " + pty);
  EXPECT_EQ(forced.exit_code, 2) << forced.output;
  EXPECT_NE(forced.output.find("a pseudo-terminal: use the termios transport"), std::string::npos)
      << forced.output;
  Result usage = run("board info");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.output.find("missing --port PORT"), std::string::npos) << usage.output;
}

// ---- A noisy line (issue 17): `gruwb board-sim --noise RATE` faults every byte each way with
// probability RATE (drop, one-bit corruption, duplicate, swap, 50 ms stall). The commands get
// slower, never wrong: info, upload and a 16-sample training that agrees with the host.

Result run_noisy(const std::string& args) {
  // `timeout` turns a hang into a failure with its own exit code (124).
  return run_with_prefix("timeout 600 ", args);
}

void expect_link_line(const Result& r) {
  EXPECT_NE(r.output.find("link: "), std::string::npos) << r.output;
}

class NoisyBoardCli : public ::testing::TestWithParam<const char*> {};

TEST_P(NoisyBoardCli, InfoUploadAndTrainingSucceed) {
  const std::string rate = GetParam();
  Server sim;
  std::string pty;
  ASSERT_TRUE(sim.start({GRUWB_CLI, "board-sim", "--noise", rate, "--noise-seed", "3"},
                        std::regex("serving on (/dev/pts/[0-9]+)"), &pty));
  Result info = run_noisy("board info --port " + pty);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("custom GRUWB_GRU"), std::string::npos) << info.output;
  expect_link_line(info);
  Result upload = run_noisy("board upload " + kModel + " --port " + pty);
  ASSERT_EQ(upload.exit_code, 0) << upload.output;
  EXPECT_NE(upload.output.find("uploaded " + kModel + ": 49088 bytes"), std::string::npos)
      << upload.output;
  std::printf("--noise %s:\n%s%s", rate.c_str(), info.output.c_str(), upload.output.c_str());
  if (std::stod(rate) > 2e-3) return;  // 1e-2: info and upload are what the issue asks
  const std::string out = ::testing::TempDir() + "board_noisy_" + rate + ".tflite";
  Result train = run_noisy("board train --port " + pty + " --model " + kModel + " --data " + kData +
                           " --samples 16 --epochs 1 --batch 4 --lr 0.002 --seed 5 "
                           "--metric-every 4 --compare-host -o " +
                           out);
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("(agree to 1e-4)"), std::string::npos) << train.output;
  EXPECT_NE(train.output.find("epoch 1/1  samples 16/16"), std::string::npos) << train.output;
  std::printf("%s", train.output.c_str());
}

INSTANTIATE_TEST_SUITE_P(Rates, NoisyBoardCli, ::testing::Values("1e-4", "1e-3", "1e-2"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string("per_byte_") + (info.index == 0   ? "1e4"
                                                              : info.index == 1 ? "1e3"
                                                                                : "1e2");
                         });

// Unplugged mid-upload: one line naming the port and where it stopped, exit 1, no hang.
TEST(BoardCli, UnpluggedBoardFailsWithOneLine) {
  Server sim;
  std::string pty;
  ASSERT_TRUE(sim.start({GRUWB_CLI, "board-sim", "--disconnect-after", "20000"},
                        std::regex("serving on (/dev/pts/[0-9]+)"), &pty));
  Result upload = run_noisy("board upload " + kModel + " --port " + pty);
  EXPECT_EQ(upload.exit_code, 1) << upload.output;
  const size_t last_line = upload.output.rfind('\n', upload.output.size() - 2);
  const std::string error =
      upload.output.substr(last_line == std::string::npos ? 0 : last_line + 1);
  EXPECT_EQ(error.rfind("gruwb: upload " + kModel + ": ", 0), 0u) << upload.output;
  EXPECT_NE(error.find(pty), std::string::npos) << error;
  EXPECT_NE(error.find("port closed"), std::string::npos) << error;
  // The board is gone for good: the next command fails at once, also in one line.
  Result info = run_noisy("board info --port " + pty);
  EXPECT_NE(info.exit_code, 0);
  EXPECT_EQ(info.output.find('\n'), info.output.size() - 1) << info.output;
}

}  // namespace
