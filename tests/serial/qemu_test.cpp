// A firmware image under QEMU (every board with a QEMU machine: mps2-an386,
// mps2-an500, mps2-an505, netduinoplus2 for nucleo_f446re): upload the
// reference gesture GRU and a BasicMotions slice over the emulated UART (a
// pty, so the termios transport), train one epoch with Adam on all weights,
// download the weights; metrics and weights must equal the host's run of the
// same training to 1e-4 relative; HELLO lists exactly the image's ops and a
// model with others is refused. A board whose RAM pool cannot hold the
// reference run (128 KB boards) trains a GRU(16) instead. Needs GRUWB_FW_ELF
// (the firmware stage of .ci/test.sh sets it), the gruwb_fw_<board>.qemu file
// the build writes beside it (the QEMU arguments) and qemu-system-arm; skips
// otherwise.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>

#include "app/core/board.h"
#include "engine/runtime/op_resolver.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "serial/link/board_client.h"
#include "serial/link/host_reference.h"
#include "tests/serial/child_server.h"

namespace gruwb::serial {
namespace {

// The QEMU arguments the build wrote beside the image (firmware.cmake): the
// machine and the -serial options that put the board's UART on a pty.
bool read_qemu_args(const std::string& elf, std::vector<std::string>* args, std::string* machine,
                    std::string* error) {
  const std::string path = elf.substr(0, elf.rfind(".elf")) + ".qemu";
  std::ifstream file(path);
  if (!file) {
    *error = path + ": not found (the board has no QEMU machine, or the image was not built)";
    return false;
  }
  std::istringstream line(std::string(std::istreambuf_iterator<char>(file), {}));
  args->assign(std::istream_iterator<std::string>(line), {});
  for (size_t i = 0; i + 1 < args->size(); ++i)
    if ((*args)[i] == "-M") *machine = (*args)[i + 1];
  if (machine->empty()) *error = path + ": no -M machine";
  return !machine->empty();
}

// The qemu-system-arm command line of the board's image. -icount shift=0: one instruction = 1 ns
// of board time, so the board's cycles give instruction counts.
std::vector<std::string> qemu_command(const char* elf, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"qemu-system-arm"};
  argv.insert(argv.end(), args.begin(), args.end());
  for (const char* arg :
       {"-kernel", elf, "-display", "none", "-monitor", "none", "-icount", "shift=0"})
    argv.emplace_back(arg);
  return argv;
}

// HELLO's ops in code order, then its custom ops: "GRU,FULLY_CONNECTED,...".
std::string listed_ops(const Capabilities& caps) {
  std::vector<int16_t> codes(caps.ops, caps.ops + caps.op_count);
  std::sort(codes.begin(), codes.end());
  std::string text;
  for (int16_t code : codes) {
    const char* name = op_code_name(code);
    text += (text.empty() ? "" : ",") + std::string(name ? name : std::to_string(code).c_str());
  }
  for (int i = 0; i < caps.custom_op_count; ++i) text += std::string(",") + caps.custom_ops[i];
  return text;
}

bool all_ops_listed(const Capabilities& caps) {
  return caps.op_count + caps.custom_op_count == all_ops().count;
}

// The reference run (model 49,088 + dataset 11,604 + training arena 281,024
// bytes, docs/firmware.md) with some room: a smaller pool gets the GRU(16).
constexpr uint32_t kReferenceRunPool = 360 * 1024;

TEST(QemuBoard, TrainsLikeTheHost) {
  const char* elf = std::getenv("GRUWB_FW_ELF");
  if (!elf || !*elf)
    GTEST_SKIP() << "GRUWB_FW_ELF not set (the firmware stage of .ci/test.sh sets it)";
  if (system("command -v qemu-system-arm >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "qemu-system-arm is not installed";
  }
  std::vector<std::string> qemu_args;
  std::string machine, error;
  ASSERT_TRUE(read_qemu_args(elf, &qemu_args, &machine, &error)) << error;
  test::Server qemu;  // tests/serial/child_server.h: killed when the test ends
  PortOptions port;
  ASSERT_TRUE(qemu.start(qemu_command(elf, qemu_args),
                         std::regex("redirected to (/dev/pts/[0-9]+)"), &port.path));
  std::string why;
  auto transport = open_transport(port, &why, &error);
  ASSERT_TRUE(transport) << error;
  EXPECT_NE(why.find("termios"), std::string::npos) << why;
  ClientOptions options;
  options.timeout_ms = 2000;
  BoardClient client(std::move(transport), options);
  Capabilities caps;
  ASSERT_TRUE(client.hello(&caps, &error)) << error;
  // Every image names itself after the machine it runs on ("qemu-" + QEMU's).
  EXPECT_EQ(std::string(caps.board), "qemu-" + machine);
  EXPECT_GT(caps.clock_hz, 0u);
  std::printf("board %s (%.0f MHz): RAM pool %u bytes, %u ops + %s\n", caps.board,
              caps.clock_hz / 1e6, caps.ram_bytes, caps.op_count,
              caps.custom_op_count ? caps.custom_ops[0] : "-");
  // HELLO lists exactly the ops the image was built with (GRUWB_FW_OPS, the
  // firmware stage passes it on; firmware builds default to `reference`).
  const char* preset = std::getenv("GRUWB_FW_OPS");
  if (!preset || !*preset || std::string(preset) == "reference") {
    EXPECT_EQ(listed_ops(caps), "GRU,FULLY_CONNECTED,SOFTMAX,GRUWB_GRU");
  } else if (std::string(preset) == "all") {
    EXPECT_EQ(caps.op_count + caps.custom_op_count, all_ops().count);
  }

  // A model with ops the board lacks is refused before its upload, naming them.
  std::vector<uint8_t> while_model;
  ASSERT_TRUE(tools::read_file_bytes(
      std::string(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_while.tflite", &while_model,
      &error))
      << error;
  if (!all_ops_listed(caps)) {
    EXPECT_FALSE(client.upload(UploadKind::kModel, while_model, nullptr, nullptr, &error));
    EXPECT_NE(error.find("has no kernel for "), std::string::npos) << error;
    EXPECT_NE(error.find("WHILE"), std::string::npos) << error;
    EXPECT_NE(error.find("LOGISTIC"), std::string::npos) << error;
  }

  std::vector<uint8_t> model;
  if (caps.ram_bytes >= kReferenceRunPool) {
    ASSERT_TRUE(tools::read_file_bytes(
        std::string(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite", &model,
        &error))
        << error;
  } else {
    // The reference model's layout and ops with 16 units (`gruwb build --cell gru
    // --timesteps 60 --features 3 --units 16 --classes 4`).
    tools::BuildSpec spec;
    spec.units = 16;
    tools::BuildFigures figures;
    ASSERT_TRUE(tools::build_and_measure(spec, &figures, &model, &error)) << error;
    std::printf("pool below %u bytes: training a GRU(16) instead of the reference GRU(60)\n",
                kReferenceRunPool);
  }
  // The desktop's training split (resampled, normalised), its first 16 samples.
  app::BoardData board_data;
  board_data.path = std::string(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotionsAcc60_TRAIN.ts";
  board_data.samples = 16;
  std::vector<uint8_t> data;
  std::string data_note;
  ASSERT_TRUE(app::board_dataset_blob(board_data, model, &data, &data_note, &error)) << error;
  UploadReport up;
  ASSERT_TRUE(client.upload(UploadKind::kModel, model, nullptr, &up, &error)) << error;
  std::printf(
      "upload model: %zu bytes in %.2f s = %.1f KB/s goodput; payload %.1f%% of the %llu bytes "
      "sent\n",
      model.size(), up.seconds, model.size() / up.seconds / 1024,
      100.0 * up.payload_bytes / up.wire_bytes, static_cast<unsigned long long>(up.wire_bytes));
  ASSERT_TRUE(client.upload(UploadKind::kDataset, data, nullptr, nullptr, &error)) << error;

  TrainingSettings settings;
  settings.config.optimizer = Optimizer::kAdam;
  settings.config.scope = TrainableScope::kAll;
  settings.config.batch_size = 4;
  settings.config.learning_rate = 0.002f;
  settings.epochs = 1;
  settings.seed = 5;
  ConfigureReply memory;
  ASSERT_TRUE(client.configure(settings, &memory, &error)) << error;
  std::printf(
      "training arena %u bytes (weights %u, gradients %u, Adam %u, activations+tapes %u, other "
      "%u); "
      "model %zu + dataset %zu + arena = %zu of the %u-byte pool\n",
      memory.arena_bytes, memory.weight_bytes, memory.gradient_bytes, memory.optimizer_bytes,
      memory.activation_bytes, memory.other_bytes, model.size(), data.size(),
      model.size() + data.size() + memory.arena_bytes, caps.ram_bytes);

  std::vector<Metric> metrics;
  std::string board_failure;  // an error LOG ends the run: say it instead of timing out
  client.set_event_handler([&](const Event& e) {
    if (e.type == MessageType::kMetric) metrics.push_back(e.metric);
    if (e.type == MessageType::kLog && e.log_level >= 3) board_failure = e.log_text;
  });
  ASSERT_TRUE(client.control(MessageType::kStart, nullptr, &error)) << error;
  ASSERT_TRUE(client.wait_events(
      120000,
      [&](const Event& e) {
        return board_failure.empty() &&
               !(e.type == MessageType::kMetric && (e.metric.flags & kMetricRunDone));
      },
      &error))
      << error;
  ASSERT_EQ(board_failure, "");
  ASSERT_EQ(metrics.size(), 1u) << "no METRIC within 120 s";
  std::vector<uint8_t> weights;
  ASSERT_TRUE(client.download(0, &weights, &error)) << error;

  ReferenceRun host;
  ASSERT_TRUE(run_on_host(model, data, settings, &host, &error)) << error;
  ASSERT_EQ(host.metrics.size(), 1u);
  // The CLI's and the Board dock's rule (serial::compare_runs): losses and weights within 1e-4
  // relative, accuracies at most one sample apart.
  RunAgreement agreement;
  ASSERT_TRUE(compare_runs(metrics, weights, host, &agreement, &error)) << error;
  std::printf(
      "board: loss %.7f accuracy %.4f, %.2f samples/s of board time = %.2f M instructions per "
      "training sample (-icount shift=0)\nhost:  loss %.7f accuracy %.4f; board vs host: %s\n",
      metrics[0].loss, metrics[0].accuracy, metrics[0].samples_per_second,
      1e3 / metrics[0].samples_per_second, host.metrics[0].loss, host.metrics[0].accuracy,
      agreement.summary().c_str());
  EXPECT_TRUE(agreement.agree) << agreement.summary();

  // Inference latency (BENCH) of the uploaded model beside the finished run:
  // board time at 1 ns per instruction, so median us x 1000 = instructions per
  // inference. The output equals the host's run of the same inputs up to
  // newlib's expf/tanhf last bits.
  BenchRequest bench;
  bench.runs = 20;
  BenchReply board_bench;
  ASSERT_TRUE(client.bench(bench, &board_bench, &error, 1000)) << error;
  BenchReply host_bench;
  ASSERT_TRUE(bench_on_host(model, bench, &host_bench, &error)) << error;
  bool identical = false;
  double difference = 1;
  ASSERT_TRUE(compare_bench_outputs(board_bench, host_bench, &difference, &identical, &error))
      << error;
  // Cycles of the board's clock; under -icount shift=0 one instruction is 1 ns.
  const double ns_per_cycle = 1e9 / caps.clock_hz;
  std::printf(
      "bench: %u inferences, median %u cycles (min %u, max %u; %s) = %.2f M instructions per "
      "inference, arena %u bytes; host %u us (arena %u bytes); output %s (max difference %.3g)\n"
      "training: %u cycles = %.2f M instructions per sample\n",
      board_bench.runs, board_bench.median_cycles, board_bench.min_cycles, board_bench.max_cycles,
      caps.flags & kCyclesFromDwt ? "DWT" : "SysTick",
      board_bench.median_cycles * ns_per_cycle / 1e6, board_bench.arena_bytes,
      host_bench.median_cycles, host_bench.arena_bytes, identical ? "bit-identical" : "differs",
      difference, metrics[0].step_cycles, metrics[0].step_cycles * ns_per_cycle / 1e6);
  EXPECT_EQ(board_bench.runs, 20u);
  EXPECT_EQ(board_bench.clock_hz, caps.clock_hz);
  // Without a cache or interrupts in the timed loop, every run takes nearly
  // the same instructions (SysTick wraps: a few cycles).
  EXPECT_LE(board_bench.max_cycles - board_bench.min_cycles, board_bench.median_cycles / 100 + 200);
  // One training sample (forward + backward + update) costs more than one inference; its
  // cycles are the steps alone, most of the epoch's time per sample (samples/s counts the
  // epoch's time up to the start of its last step, so it runs a sample ahead: 16/15).
  const double cycles_per_sample = caps.clock_hz / metrics[0].samples_per_second;
  EXPECT_LT(board_bench.median_cycles, metrics[0].step_cycles);
  EXPECT_LE(metrics[0].step_cycles, cycles_per_sample * 1.1);
  EXPECT_GT(metrics[0].step_cycles, cycles_per_sample * 0.8);
  EXPECT_GT(board_bench.median_cycles, 1000u);
  // (The arenas differ: the board's tensor and op tables hold 32-bit pointers.)
  EXPECT_LE(difference, 1e-5);
}

}  // namespace
}  // namespace gruwb::serial
