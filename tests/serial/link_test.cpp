// The host client against the firmware's Device in-process, with faults
// injected on the line: uploads survive dropped, corrupted, duplicated and
// reordered frames and garbage; an unplug mid-upload resumes where it
// stopped; a board reboot mid-training is detected; nothing waits unbounded.
// Training on the "board" equals the host reference run.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

#include "app/core/board.h"
#include "engine/runtime/op_resolver.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_writer.h"
#include "engine/train/pcg32.h"
#include "serial/firmware/inference_bench.h"
#include "serial/link/board_client.h"
#include "serial/link/board_run.h"
#include "serial/link/dataset_blob.h"
#include "serial/link/host_reference.h"
#include "tests/serial/sim_link.h"

namespace gruwb::serial::test {
namespace {

const std::string kModel =
    std::string(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite";
// BasicMotions' accelerometer channels, 60 steps: the gesture model's input.
const std::string kData =
    std::string(GRUWB_SOURCE_DIR) + "/resources/samples/BasicMotionsAcc60_TRAIN.ts";

std::vector<uint8_t> model_bytes() {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(tools::read_file_bytes(kModel, &bytes, &error)) << error;
  return bytes;
}

// The first `samples` of the desktop's training split, packed as `gruwb board train` packs
// them. Not normalised (--normalize none): these tests are about the link, and the raw values
// keep the bytes on the wire, where the noise tests' faults fall, as they were.
std::vector<uint8_t> dataset_blob(uint32_t samples) {
  app::BoardData data;
  data.path = kData;
  data.samples = samples;
  data.normalize = false;
  std::vector<uint8_t> blob;
  std::string error, note;
  EXPECT_TRUE(app::board_dataset_blob(data, model_bytes(), &blob, &note, &error)) << error;
  return blob;
}

struct Rig {
  explicit Rig(Faults to_board = {}, Faults to_host = {}, uint32_t seed = 1,
               size_t ram = 512 * 1024)
      : board(ram) {
    board.to_host_pipe = FaultyPipe(to_host, seed + 100);
    device = std::make_unique<Device>(board);
    device->boot();
    connect(to_board, seed);
  }
  void connect(Faults to_board = {}, uint32_t seed = 1) {
    auto t = std::make_unique<SimTransport>(&board, device.get(), to_board, seed);
    transport = t.get();
    ClientOptions options;
    options.timeout_ms = 40;
    options.retries = 6;
    client = std::make_unique<BoardClient>(std::move(t), options);
  }
  LoopbackBoard board;
  std::unique_ptr<Device> device;
  SimTransport* transport = nullptr;
  std::unique_ptr<BoardClient> client;
};

TrainingSettings adam_settings(uint32_t epochs) {
  TrainingSettings s;
  s.config.optimizer = Optimizer::kAdam;
  s.config.learning_rate = 1e-3f;
  s.config.scope = TrainableScope::kAll;
  s.config.batch_size = 4;
  s.epochs = epochs;
  s.seed = 42;
  return s;
}

// The RAM pool of the QEMU mps2-an386 board (512 KB less stack and statics;
// __pool_end - __pool_start of the reference image).
constexpr size_t kQemuBoardPool = 491952;

// One request frame straight to the device, bypassing the client (to send what
// a correct host never would). Events are dropped, so the client finds the
// line quiet afterwards.
struct RawReply {
  uint8_t type = 0;  // 0: no reply
  std::vector<uint8_t> payload;
  std::string error;  // of an ERROR reply
};

RawReply raw_request(Rig& rig, MessageType type, uint16_t sequence,
                     const std::vector<uint8_t>& payload) {
  uint8_t wire[kMaxWireFrame];
  const size_t n = encode_frame(static_cast<uint8_t>(type), sequence, payload.data(),
                                payload.size(), wire, sizeof wire);
  EXPECT_GT(n, 0u);
  rig.board.to_board.insert(rig.board.to_board.end(), wire, wire + n);
  while (!rig.board.to_board.empty()) rig.device->poll();
  FrameDecoder decoder;
  RawReply reply;
  while (!rig.board.to_host.empty()) {
    const uint8_t byte = rig.board.to_host.front();
    rig.board.to_host.pop_front();
    if (!decoder.push(byte)) continue;
    const Frame& f = decoder.frame();
    const bool error = f.type == static_cast<uint8_t>(MessageType::kError);
    if (f.sequence != sequence || (f.type != reply_type(type) && !error)) continue;
    reply.type = f.type;
    reply.payload.assign(f.payload, f.payload + f.length);
    ErrorReply e;
    WireReader r(f.payload, f.length);
    if (error && e.read(r)) reply.error = e.message;
  }
  return reply;
}

TEST(BoardLink, TrainsLikeTheHostAndFitsIn512KB) {
  Rig rig;
  std::string error;
  Capabilities caps;
  ASSERT_TRUE(rig.client->hello(&caps, &error)) << error;
  EXPECT_EQ(caps.protocol_version, kProtocolVersion);
  EXPECT_EQ(caps.ram_bytes, 512u * 1024);
  // Every fused cell the board's table runs, the plugin cells' included.
  std::vector<std::string> custom, expected;
  for (int i = 0; i < caps.custom_op_count; ++i) custom.push_back(caps.custom_ops[i]);
  const OpResolver& table = default_op_resolver();
  for (int i = 0; i < table.count; ++i) {
    if (table.kernels[i]->op_code == kOpCustom) expected.push_back(table.kernels[i]->custom_code);
  }
  EXPECT_EQ(custom, expected);
  for (const char* cell : {"GRUWB_GRU", "GRUWB_MGU", "GRUWB_FASTGRNN"})
    EXPECT_NE(std::find(custom.begin(), custom.end(), cell), custom.end()) << cell;
  EXPECT_GT(caps.op_count, 20);

  const auto model = model_bytes();
  const auto data = dataset_blob(16);
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kDataset, data, nullptr, nullptr, &error)) << error;
  const TrainingSettings settings = adam_settings(1);
  ConfigureReply configured;
  ASSERT_TRUE(rig.client->configure(settings, &configured, &error)) << error;
  // Model, dataset and the training arena share the 512 KB pool.
  EXPECT_LE(model.size() + data.size() + configured.arena_bytes, 512u * 1024);
  EXPECT_EQ(configured.trainable_count,
            5u);  // GRU kernel, recurrent kernel, bias; Dense kernel, bias

  std::vector<Metric> metrics;
  rig.client->set_event_handler([&](const Event& e) {
    if (e.type == MessageType::kMetric) metrics.push_back(e.metric);
  });
  BoardState state;
  ASSERT_TRUE(rig.client->control(MessageType::kStart, &state, &error)) << error;
  ASSERT_TRUE(rig.client->wait_events(
      20000,
      [&](const Event& e) {
        return !(e.type == MessageType::kMetric && (e.metric.flags & kMetricRunDone));
      },
      &error))
      << error;
  ASSERT_EQ(metrics.size(), 1u);
  std::vector<uint8_t> weights;
  ASSERT_TRUE(rig.client->download(0, &weights, &error)) << error;

  ReferenceRun host;
  ASSERT_TRUE(run_on_host(model, data, settings, &host, &error)) << error;
  ASSERT_EQ(host.metrics.size(), 1u);
  EXPECT_EQ(metrics[0].loss, host.metrics[0].loss);  // same CPU, same code: bit-equal
  EXPECT_EQ(metrics[0].accuracy, host.metrics[0].accuracy);
  EXPECT_EQ(metrics[0].step, 4u);  // 16 samples / batch 4
  EXPECT_TRUE(std::isfinite(metrics[0].loss) && metrics[0].loss > 0.1f && metrics[0].loss < 3.f);
  double max_relative = 1;
  ASSERT_TRUE(compare_weight_blobs(weights, host.weights, &max_relative, &error)) << error;
  EXPECT_EQ(max_relative, 0.0);
  // The weights moved: the trained blob differs from the file's weights.
  std::vector<uint8_t> patched;
  ASSERT_TRUE(apply_weight_blob(model, weights, &patched, &error)) << error;
  EXPECT_NE(patched, model);
  // And the model the board holds is the one we sent.
  std::vector<uint8_t> echoed;
  ASSERT_TRUE(rig.client->download(1, &echoed, &error)) << error;
  EXPECT_EQ(echoed, model);
}

// serial::compare_runs, the one rule of `board train --compare-host` and the Board dock, on a
// real host run (two epochs, a METRIC every 8 samples) against edited copies of itself.
TEST(BoardLink, CompareRunsJudgesLossesAccuracyWeightsAndMissingEpochs) {
  const auto model = model_bytes();
  const auto data = dataset_blob(16);
  TrainingSettings settings = adam_settings(2);
  settings.metric_every = 8;
  ReferenceRun host;
  std::string error;
  ASSERT_TRUE(run_on_host(model, data, settings, &host, &error)) << error;
  ASSERT_EQ(host.metrics.size(), 4u);  // 8 and 16 samples (epoch end) of each epoch

  const auto judge = [&](const std::vector<Metric>& board, const std::vector<uint8_t>& weights) {
    RunAgreement agreement;
    EXPECT_TRUE(compare_runs(board, weights, host, &agreement, &error)) << error;
    return agreement;
  };
  RunAgreement same = judge(host.metrics, host.weights);
  EXPECT_TRUE(same.agree) << same.summary();
  EXPECT_EQ(same.matched, 4u);
  EXPECT_EQ(same.epoch_ends_matched, 2u);
  EXPECT_NE(same.summary().find("(agree to 1e-4)"), std::string::npos) << same.summary();

  std::vector<Metric> board = host.metrics;
  board[1].loss *= 1.0002f;  // 2e-4 relative at the first epoch end
  RunAgreement loss = judge(board, host.weights);
  EXPECT_FALSE(loss.agree);
  EXPECT_NEAR(loss.loss, 2e-4, 1e-6);

  board = host.metrics;
  board[3].accuracy += 1.f / 16;  // one of 16 samples: a near tie flipped by a libm's last bit
  EXPECT_TRUE(judge(board, host.weights).agree);
  board[3].accuracy += 1.f / 16;  // two samples: not a rounding matter
  RunAgreement accuracy = judge(board, host.weights);
  EXPECT_FALSE(accuracy.agree);
  EXPECT_EQ(accuracy.accuracy_samples, 2);

  board = host.metrics;
  board.pop_back();  // the last epoch end lost on the line
  RunAgreement missing = judge(board, host.weights);
  EXPECT_FALSE(missing.agree);
  EXPECT_EQ(missing.epoch_ends_matched, 1u);

  std::vector<uint8_t> weights = host.weights;
  weights[weights.size() - 2] ^= 0x40;  // an exponent bit of the last weight
  RunAgreement moved = judge(host.metrics, weights);
  EXPECT_FALSE(moved.agree);
  EXPECT_GT(moved.weights, 1e-4);
  EXPECT_NE(moved.summary().find("DISAGREE"), std::string::npos) << moved.summary();
}

// The gesture model with its GRU state listed as output 0, before the
// softmax (as streaming models list their states).
std::vector<uint8_t> state_first_model() {
  const std::vector<uint8_t> bytes = model_bytes();
  Model view;
  EXPECT_TRUE(Model::load(bytes.data(), bytes.size(), &view).ok());
  tools::ModelDef def;
  std::string error;
  EXPECT_TRUE(tools::unpack_model(view, &def, &error)) << error;
  auto& graph = *def.subgraphs[0];
  int32_t logits = -1, state = -1;
  for (const auto& op : graph.operators) {
    const int code = static_cast<int>(def.operator_codes[op->opcode_index]->builtin_code);
    if (code == static_cast<int>(BuiltinOperator::SOFTMAX)) logits = op->inputs[0];
  }
  for (const auto& op : graph.operators) {
    if (!op->outputs.empty() && op->outputs[0] == logits) state = op->inputs[0];
  }
  EXPECT_GE(state, 0);
  graph.outputs.insert(graph.outputs.begin(), state);
  def.signature_defs.clear();
  std::vector<uint8_t> out;
  EXPECT_TRUE(tools::write_model(def, ModelFormat::kTflite, &out, &error)) << error;
  return out;
}

// The board chooses the loss output itself when the host leaves it to it
// (-1, or an older host without the field) and trains exactly as the host
// does on the single-output model; an explicit output that does not fit
// the dataset is refused at CONFIGURE.
TEST(BoardLink, ChoosesTheSoftmaxOutputOfAStreamingModel) {
  Rig rig;
  std::string error;
  const auto model = state_first_model();
  const auto data = dataset_blob(8);
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kDataset, data, nullptr, nullptr, &error)) << error;
  TrainingSettings settings = adam_settings(1);
  settings.config.loss_output = 0;  // the state: 60 values for 4 classes
  ConfigureReply configured;
  EXPECT_FALSE(rig.client->configure(settings, &configured, &error));
  EXPECT_NE(error.find("takes 60 label values"), std::string::npos) << error;
  settings.config.loss_output = -1;
  ASSERT_TRUE(rig.client->configure(settings, &configured, &error)) << error;
  std::vector<Metric> metrics;
  rig.client->set_event_handler([&](const Event& e) {
    if (e.type == MessageType::kMetric) metrics.push_back(e.metric);
  });
  BoardState state;
  ASSERT_TRUE(rig.client->control(MessageType::kStart, &state, &error)) << error;
  ASSERT_TRUE(rig.client->wait_events(
      20000,
      [&](const Event& e) {
        return !(e.type == MessageType::kMetric && (e.metric.flags & kMetricRunDone));
      },
      &error))
      << error;
  ASSERT_EQ(metrics.size(), 1u);
  ReferenceRun host;
  ASSERT_TRUE(run_on_host(model_bytes(), data, adam_settings(1), &host, &error)) << error;
  ASSERT_EQ(host.metrics.size(), 1u);
  EXPECT_EQ(metrics[0].loss, host.metrics[0].loss);
  EXPECT_EQ(metrics[0].accuracy, host.metrics[0].accuracy);
}

// TrainingRun reads the output for accuracy after backward: the forward output
// must still be there (not reused for gradients).
TEST(BoardLink, ForwardOutputSurvivesBackward) {
  std::vector<uint8_t> model = model_bytes();
  Model view;
  ASSERT_TRUE(Model::load(model.data(), model.size(), &view).ok());
  std::vector<uint8_t> arena(4u << 20);
  auto trainer = std::make_unique<Trainer>();
  TrainingConfig config;
  ASSERT_TRUE(trainer->prepare(view, config, arena.data(), arena.size()).ok());
  const std::vector<uint8_t> data = dataset_blob(2);
  memcpy(trainer->input(0)->data, data.data() + kDatasetHeaderBytes, 180 * sizeof(float));
  for (int c = 0; c < 4; ++c) trainer->label()[c] = c == 1 ? 1.f : 0.f;
  float loss = 0;
  int32_t predicted = -1;
  ASSERT_TRUE(trainer->evaluate(&loss, &predicted).ok());
  const std::vector<float> forward(trainer->output()->f32(), trainer->output()->f32() + 4);
  ASSERT_TRUE(trainer->accumulate(&loss).ok());
  for (int c = 0; c < 4; ++c) EXPECT_EQ(trainer->output()->f32()[c], forward[c]) << c;
}

struct FaultCase {
  const char* name;
  Faults faults;
};

class UploadUnderFaults : public ::testing::TestWithParam<FaultCase> {};

TEST_P(UploadUnderFaults, ModelArrivesIntact) {
  const Faults f = GetParam().faults;
  Rig rig(f, f, 7);
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  const auto model = model_bytes();
  UploadReport report;
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, &report, &error)) << error;
  BoardStatus status;
  ASSERT_TRUE(rig.client->status(&status, &error)) << error;
  EXPECT_EQ(status.model_received, model.size());
  std::vector<uint8_t> echoed;
  ASSERT_TRUE(rig.client->download(1, &echoed, &error)) << error;
  EXPECT_EQ(echoed, model);
  // The faults really happened.
  const FaultyPipe& up = rig.transport->pipe();
  const FaultyPipe& down = rig.board.to_host_pipe;
  const int injected = up.dropped + up.corrupted + up.duplicated + up.reordered + up.garbage +
                       down.dropped + down.corrupted + down.duplicated + down.reordered +
                       down.garbage;
  EXPECT_GT(injected, 3) << GetParam().name;
  if (f.corrupt > 0 || f.garbage > 0) {
    const DecoderStats& d = rig.client->stats().decoder;
    EXPECT_GT(d.crc_errors + d.malformed, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, UploadUnderFaults,
                         ::testing::Values(FaultCase{"dropped", {0.05, 0, 0, 0, 0}},
                                           FaultCase{"corrupted", {0, 0.05, 0, 0, 0}},
                                           FaultCase{"duplicated", {0, 0, 0.1, 0, 0}},
                                           FaultCase{"reordered", {0, 0, 0, 0.08, 0}},
                                           FaultCase{"garbage", {0, 0, 0, 0, 0.1}},
                                           FaultCase{"everything", {0.03, 0.03, 0.05, 0.03, 0.05}}),
                         [](const ::testing::TestParamInfo<FaultCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(BoardLink, UnplugMidUploadResumesWhereItStopped) {
  Rig rig;
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  const auto model = model_bytes();
  rig.transport->disconnect_after_bytes = 20000;
  EXPECT_FALSE(rig.client->upload(UploadKind::kModel, model, nullptr, nullptr, &error));
  EXPECT_NE(error.find("port gone"), std::string::npos) << error;

  rig.connect();  // plugged in again: a new client, the board kept its state
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  UploadReport report;
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, &report, &error)) << error;
  EXPECT_GT(report.resumed_from, 10000u);
  EXPECT_EQ(report.payload_bytes, model.size() - report.resumed_from);
  std::vector<uint8_t> echoed;
  ASSERT_TRUE(rig.client->download(1, &echoed, &error)) << error;
  EXPECT_EQ(echoed, model);
  // Uploading the same content again costs nothing: the board has it.
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, &report, &error)) << error;
  EXPECT_EQ(report.payload_bytes, 0u);
}

TEST(BoardLink, RebootMidTrainingIsDetected) {
  Rig rig;
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  const uint32_t first_session = rig.client->session_id();
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model_bytes(), nullptr, nullptr, &error))
      << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kDataset, dataset_blob(8), nullptr, nullptr, &error))
      << error;
  TrainingSettings settings = adam_settings(3);
  settings.metric_every = 2;
  ConfigureReply configured;
  ASSERT_TRUE(rig.client->configure(settings, &configured, &error)) << error;
  ASSERT_TRUE(rig.client->control(MessageType::kStart, nullptr, &error)) << error;
  int metrics = 0;
  bool booted = false;
  ASSERT_TRUE(rig.client->wait_events(
      10000,
      [&](const Event& e) {
        if (e.type == MessageType::kMetric && ++metrics == 2) rig.device->boot();  // power glitch
        if (e.type == MessageType::kBoot) booted = true;
        return !booted;
      },
      &error))
      << error;
  EXPECT_TRUE(booted);
  EXPECT_TRUE(rig.client->reset_detected());
  EXPECT_NE(rig.client->new_session_id(), first_session);
  BoardStatus status;
  ASSERT_TRUE(rig.client->status(&status, &error)) << error;
  EXPECT_EQ(status.state, BoardState::kIdle);
  EXPECT_EQ(status.model_received, 0u);  // RAM is gone
  EXPECT_EQ(status.session_id, rig.client->new_session_id());
  // Also a reboot the host itself asks for (RESET) gives a new session.
  Rig other;
  ASSERT_TRUE(other.client->hello(nullptr, &error)) << error;
  ASSERT_TRUE(other.client->control(MessageType::kReset, nullptr, &error)) << error;
  Capabilities caps;
  ASSERT_TRUE(other.client->hello(&caps, &error)) << error;
  EXPECT_TRUE(other.client->reset_detected());
}

// A reset mid-run: the host re-uploads model and dataset, loads its last run
// checkpoint into the board and continues; weights and metrics equal the run
// that never stopped, bit for bit (same CPU, exact checkpoint round trip).
TEST(BoardLink, ResetMidTrainingResumesFromTheLastCheckpoint) {
  const std::vector<uint8_t> model = model_bytes();
  const std::vector<uint8_t> data = dataset_blob(12);
  TrainingSettings settings = adam_settings(2);
  settings.metric_every = 2;
  BoardRunOptions options;
  options.checkpoint_every = 4;
  std::string error;

  // FC+GRU with Adam on the 512 KB board's pool: the 191 KB checkpoint does
  // not fit the ~150 KB left after model, dataset and arena, so it streams.
  constexpr size_t kRam = kQemuBoardPool;
  Rig calm(Faults{}, Faults{}, 1, kRam);
  BoardRunResult uninterrupted;
  ASSERT_TRUE(
      run_board_training(*calm.client, model, data, settings, options, {}, &uninterrupted, &error))
      << error;
  EXPECT_EQ(uninterrupted.resumes, 0);
  EXPECT_GE(uninterrupted.checkpoints, 4u);
  // The checkpoint is larger than the RAM the run leaves free: no copy of it.
  EXPECT_EQ(uninterrupted.checkpoint_bytes, 191212u);
  EXPECT_GT(uninterrupted.checkpoint_bytes,
            kRam - model.size() - data.size() - uninterrupted.configured.arena_bytes);

  Rig glitchy(Faults{}, Faults{}, 1, kRam);
  int metrics = 0;
  std::vector<std::string> lines;
  BoardRunCallbacks callbacks;
  callbacks.on_metric = [&](const Metric&) {
    if (++metrics == 7) glitchy.device->boot();  // power glitch in epoch 2, after checkpoints
  };
  callbacks.on_line = [&](const std::string& line) { lines.push_back(line); };
  BoardRunResult resumed;
  ASSERT_TRUE(run_board_training(*glitchy.client, model, data, settings, options, callbacks,
                                 &resumed, &error))
      << error;
  EXPECT_EQ(resumed.resumes, 1);
  bool said_resuming = false;
  for (const std::string& line : lines)
    said_resuming |= line.find("resuming from the checkpoint at epoch 2") != std::string::npos;
  EXPECT_TRUE(said_resuming);
  EXPECT_GT(resumed.last_checkpoint.step, 0u);
  ASSERT_EQ(resumed.weights.size(), uninterrupted.weights.size());
  EXPECT_EQ(resumed.weights, uninterrupted.weights);
  ASSERT_EQ(resumed.metrics.size(), uninterrupted.metrics.size());
  for (size_t i = 0; i < resumed.metrics.size(); ++i) {
    EXPECT_EQ(resumed.metrics[i].step, uninterrupted.metrics[i].step) << i;
    EXPECT_EQ(resumed.metrics[i].loss, uninterrupted.metrics[i].loss) << i;
    EXPECT_EQ(resumed.metrics[i].accuracy, uninterrupted.metrics[i].accuracy) << i;
  }

  // Without resuming, the run stops with a message that says why.
  Rig strict(Faults{}, Faults{}, 1, kRam);
  options.resume = false;
  metrics = 0;
  callbacks.on_metric = [&](const Metric&) {
    if (++metrics == 3) strict.device->boot();
  };
  BoardRunResult stopped;
  EXPECT_FALSE(run_board_training(*strict.client, model, data, settings, options, callbacks,
                                  &stopped, &error));
  EXPECT_NE(error.find("reset during training"), std::string::npos) << error;
  EXPECT_NE(error.find("resuming is off"), std::string::npos) << error;
}

// Checkpoints stream through the run's own RAM (the reset test above takes
// them on the 512 KB board's pool); a checkpoint of another run is refused by
// name; an upload whose SHA-256 fails leaves the run half restored, so START
// is refused until a good checkpoint arrives.
TEST(BoardLink, CheckpointUploadThatFailsItsHashBlocksStart) {
  const std::vector<uint8_t> model = model_bytes();
  const std::vector<uint8_t> data = dataset_blob(8);
  TrainingSettings settings = adam_settings(1);
  settings.metric_every = 2;
  std::string error;
  Rig probe;
  BoardRunResult full;
  ASSERT_TRUE(run_board_training(*probe.client, model, data, settings, {}, {}, &full, &error))
      << error;
  // Epoch-end checkpoints of a 1-epoch run: none (the run is done).
  EXPECT_EQ(full.checkpoints, 0u);

  Rig rig(Faults{}, Faults{}, 1, kQemuBoardPool);
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kDataset, data, nullptr, nullptr, &error)) << error;
  ConfigureReply configured;
  ASSERT_TRUE(rig.client->configure(settings, &configured, &error)) << error;
  std::vector<uint8_t> checkpoint;
  ASSERT_TRUE(rig.client->download(kDownloadCheckpoint, &checkpoint, &error)) << error;
  RunCheckpointHeader header;
  WireReader r(checkpoint.data(), checkpoint.size());
  ASSERT_TRUE(header.read(r));
  EXPECT_EQ(header.epoch, 0u);
  EXPECT_EQ(header.position, 0u);
  EXPECT_EQ(header.trainer_bytes + kRunCheckpointHeaderBytes, checkpoint.size());
  // Adam, all weights: weights + accumulators + m + v of the 47,776-byte set.
  EXPECT_GT(checkpoint.size(), 4u * 47776u);
  const std::vector<uint8_t> good = checkpoint;
  checkpoint[kRunCheckpointHeaderBytes] ^= 0xFF;  // the trainer checkpoint's magic
  EXPECT_FALSE(rig.client->upload(UploadKind::kCheckpoint, checkpoint, nullptr, nullptr, &error));
  EXPECT_NE(error.find("checkpoint: not a version 1"), std::string::npos) << error;
  std::vector<uint8_t> short_one(good.begin(), good.end() - 4);
  EXPECT_FALSE(rig.client->upload(UploadKind::kCheckpoint, short_one, nullptr, nullptr, &error));
  ASSERT_TRUE(rig.client->configure(settings, &configured, &error)) << error;
  EXPECT_FALSE(rig.client->upload(UploadKind::kCheckpoint, short_one, nullptr, nullptr, &error));
  EXPECT_NE(error.find("this run's has 191212"), std::string::npos) << error;

  // The good bytes under another SHA-256: every chunk lands in the run, the
  // hash fails at the end.
  UploadBegin begin;
  begin.kind = UploadKind::kCheckpoint;
  begin.total_bytes = static_cast<uint32_t>(good.size());
  std::vector<uint8_t> payload(64);
  WireWriter w(payload.data(), payload.size());
  begin.write(w);
  payload.resize(w.size());
  uint16_t sequence = 0x7000;
  RawReply reply = raw_request(rig, MessageType::kUploadBegin, sequence++, payload);
  ASSERT_EQ(reply.type, reply_type(MessageType::kUploadBegin)) << reply.error;
  const size_t chunk = kMaxPayload - kUploadChunkHeader;
  for (size_t at = 0; at < good.size(); at += chunk) {
    const size_t n = std::min(chunk, good.size() - at);
    payload.assign(kUploadChunkHeader, 0);
    WireWriter head(payload.data(), payload.size());
    head.u8(static_cast<uint8_t>(UploadKind::kCheckpoint));
    head.u32(static_cast<uint32_t>(at));
    payload.insert(payload.end(), good.begin() + at, good.begin() + at + n);
    reply = raw_request(rig, MessageType::kUploadChunk, sequence++, payload);
    ASSERT_EQ(reply.type, reply_type(MessageType::kUploadChunk)) << at << " " << reply.error;
  }
  UploadAck ack;
  WireReader ack_reader(reply.payload.data(), reply.payload.size());
  ASSERT_TRUE(ack.read(ack_reader));
  EXPECT_EQ(ack.result, UploadResult::kHashMismatch);
  EXPECT_FALSE(rig.client->control(MessageType::kStart, nullptr, &error));
  EXPECT_NE(error.find("half restored"), std::string::npos) << error;
  EXPECT_FALSE(rig.client->download(kDownloadCheckpoint, &checkpoint, &error));
  EXPECT_NE(error.find("half restored"), std::string::npos) << error;

  // The upload done right restores the run exactly, and START goes.
  ASSERT_TRUE(rig.client->upload(UploadKind::kCheckpoint, good, nullptr, nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->download(kDownloadCheckpoint, &checkpoint, &error)) << error;
  EXPECT_EQ(checkpoint, good);
  BoardState state;
  ASSERT_TRUE(rig.client->control(MessageType::kStart, &state, &error)) << error;
  EXPECT_EQ(state, BoardState::kTraining);
}

TEST(BoardLink, SilentBoardTimesOutInBoundedTime) {
  Rig rig(Faults{1.0, 0, 0, 0, 0});  // every frame to the board is lost
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(rig.client->hello(nullptr, &error));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(error.find("no answer to HELLO after 7 attempts of 40 ms"), std::string::npos) << error;
  EXPECT_LT(seconds, 5.0);  // a bound, not a speed check: 7 x 40 ms plus slack
}

TEST(BoardLink, BoardRejectsWrongOrderAndSizes) {
  Rig rig;
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  EXPECT_FALSE(rig.client->control(MessageType::kStart, nullptr, &error));
  EXPECT_NE(error.find("START needs a configured run"), std::string::npos) << error;
  EXPECT_FALSE(rig.client->upload(UploadKind::kDataset, dataset_blob(4), nullptr, nullptr, &error));
  EXPECT_NE(error.find("upload the model before the dataset"), std::string::npos) << error;
  std::vector<uint8_t> too_big(600 * 1024, 1);
  EXPECT_FALSE(rig.client->upload(UploadKind::kModel, too_big, nullptr, nullptr, &error));
  EXPECT_NE(error.find("does not fit the board's 524288 bytes"), std::string::npos) << error;
  // A dataset whose windows do not match the model input is refused at CONFIGURE.
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model_bytes(), nullptr, nullptr, &error))
      << error;
  // The training split cut to 50 steps: 4 samples of 150 values.
  app::DatasetFiles files;
  ASSERT_TRUE(app::load_dataset(kData, &files, &error)) << error;
  app::PrepareOptions options;
  options.timesteps = 50;
  options.length_policy = app::LengthPolicy::kCrop;
  app::PreparedData prepared;
  ASSERT_TRUE(app::prepare_dataset(files, options, &prepared, &error)) << error;
  prepared.train.labels.resize(4);
  prepared.train.x.resize(4 * 150);
  std::vector<uint8_t> blob;
  ASSERT_TRUE(make_dataset_blob(prepared.train.x, prepared.train.labels, 150, 4, &blob, &error))
      << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kDataset, blob, nullptr, nullptr, &error)) << error;
  ConfigureReply reply;
  EXPECT_FALSE(rig.client->configure(adam_settings(1), &reply, &error));
  EXPECT_NE(error.find("150 input values per sample"), std::string::npos) << error;
}

// The bench inputs are the documented formula over pcg_basic's stream: a
// host or a third-party board can rebuild them (docs/serial-protocol.md).
TEST(BoardLink, BenchInputsFollowTheDocumentedGenerator) {
  Pcg32 reference(42, 54);  // pcg32-demo: pcg32_srandom_r(&rng, 42u, 54u)
  EXPECT_EQ(reference.next(), 0xa15c02b7u);
  EXPECT_EQ(reference.next(), 0x7b47f409u);
  EXPECT_EQ(reference.next(), 0xba1d3330u);
  const auto model = model_bytes();
  Model view;
  ASSERT_TRUE(Model::load(model.data(), model.size(), &view).ok());
  std::vector<uint8_t> arena(1 << 20);
  auto interpreter = std::make_unique<Interpreter>();
  ASSERT_TRUE(interpreter->prepare(view, arena.data(), arena.size()).ok());
  fill_bench_inputs(*interpreter, 9);
  const Tensor* input = interpreter->input(0);
  ASSERT_EQ(input->elements(), 180);  // 1 x 60 x 3
  Pcg32 rng(9, 0x42454e43);
  float low = 1, high = -1;
  for (int i = 0; i < 180; ++i) {
    const double expected = std::ldexp(static_cast<double>(rng.next() >> 8), -23) - 1.0;
    ASSERT_EQ(input->f32()[i], static_cast<float>(expected)) << i;
    low = std::min(low, input->f32()[i]);
    high = std::max(high, input->f32()[i]);
  }
  EXPECT_GE(low, -1.f);
  EXPECT_LT(high, 1.f);
  EXPECT_LT(low, -0.9f);  // spread over the range
  EXPECT_GT(high, 0.9f);
}

// BENCH on the in-process board: its clock advances 100 us per read, so each
// timed inference (two reads) is exactly 100 us; the outputs must be the host's
// run of the same seed's inputs (same CPU, same code: bit for bit), a softmax
// over the 4 classes.
TEST(BoardLink, BenchTimesTheUploadedModelLikeTheHost) {
  Rig rig;
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  EXPECT_TRUE(rig.client->capabilities().flags & kCanBench);
  BenchRequest request;
  request.runs = 37;
  request.seed = 9;
  BenchReply reply;
  EXPECT_FALSE(rig.client->bench(request, &reply, &error));
  EXPECT_EQ(error, "board: BENCH: no model: no model uploaded");

  const auto model = model_bytes();
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->bench(request, &reply, &error)) << error;
  EXPECT_EQ(reply.runs, 37u);
  EXPECT_EQ(reply.clock_hz, 1000000u);
  EXPECT_EQ(reply.median_cycles, 100u);
  EXPECT_EQ(reply.min_cycles, 100u);
  EXPECT_EQ(reply.max_cycles, 100u);
  EXPECT_EQ(reply.total_cycles, 3700u);
  BenchReply host;
  ASSERT_TRUE(bench_on_host(model, request, &host, &error)) << error;
  EXPECT_EQ(reply.arena_bytes, host.arena_bytes);
  EXPECT_GT(reply.arena_bytes, 1000u);
  EXPECT_EQ(reply.output_type, 0);     // FLOAT32
  ASSERT_EQ(reply.output_bytes, 16u);  // 4 classes
  ASSERT_EQ(reply.output_count, 16);
  EXPECT_EQ(reply.output_crc32, host.output_crc32);
  EXPECT_EQ(memcmp(reply.output, host.output, 16), 0);
  float probabilities[4];
  memcpy(probabilities, reply.output, 16);
  float sum = 0;
  for (float p : probabilities) {
    EXPECT_GT(p, 0.f);
    sum += p;
  }
  EXPECT_NEAR(sum, 1.f, 1e-5f);
  // Another seed is another input: another output.
  BenchRequest other = request;
  other.seed = 10;
  BenchReply moved;
  ASSERT_TRUE(rig.client->bench(other, &moved, &error)) << error;
  EXPECT_NE(moved.output_crc32, reply.output_crc32);
  bool identical = false;
  double difference = 1;
  ASSERT_TRUE(compare_bench_outputs(reply, host, &difference, &identical, &error)) << error;
  EXPECT_TRUE(identical);
  EXPECT_EQ(difference, 0.0);
  ASSERT_TRUE(compare_bench_outputs(moved, host, &difference, &identical, &error)) << error;
  EXPECT_FALSE(identical);
  EXPECT_GT(difference, 0.0);

  // Broken requests: one-line errors, nothing run.
  RawReply raw = raw_request(rig, MessageType::kBench, 7001, {1, 0, 0});
  EXPECT_EQ(raw.type, static_cast<uint8_t>(MessageType::kError));
  EXPECT_EQ(raw.error, "BENCH: payload of 3 bytes, needs runs:u32 and seed:u32");
  raw = raw_request(rig, MessageType::kBench, 7002, {0, 0, 0, 0, 1, 0, 0, 0});
  EXPECT_EQ(raw.error, "BENCH: runs must be 1..10000, not 0");
  raw = raw_request(rig, MessageType::kBench, 7003, {0x11, 0x27, 0, 0, 1, 0, 0, 0});  // 10001
  EXPECT_EQ(raw.error, "BENCH: runs must be 1..10000, not 10001");
  // A board too small for the arena says what it needed.
  Rig small(Faults{}, Faults{}, 1, 52 * 1024);
  ASSERT_TRUE(small.client->hello(nullptr, &error)) << error;
  ASSERT_TRUE(small.client->upload(UploadKind::kModel, model, nullptr, nullptr, &error)) << error;
  EXPECT_FALSE(small.client->bench(request, &reply, &error));
  EXPECT_NE(error.find("BENCH: out of memory: inference needs " + std::to_string(host.arena_bytes) +
                       " bytes of arena, "),
            std::string::npos)
      << error;
}

// The arena reuses an input's memory once its readers have run
// (interpreter.h), so the bench writes the inputs before every run: all runs
// compute what one fresh invoke computes. In these int8 models QUANTIZE reads
// the float input and later tensors take its place; before, the second run
// quantized left-over activations (and x86 and Arm cast the NaNs among them
// differently, so the board disagreed with the host).
TEST(BoardLink, EveryBenchRunSeesTheSameInputs) {
  for (const char* name : {"quant_fc_int8.tflite", "quant_lstm_int8.tflite"}) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> bytes;
    std::string error;
    ASSERT_TRUE(tools::read_file_bytes(
        std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/quantized/" + name, &bytes, &error))
        << error;
    Model model;
    ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
    std::vector<uint8_t> memory((1u << 20) + 16);
    uint8_t* ram = memory.data() + ((16 - (reinterpret_cast<uintptr_t>(memory.data()) & 15)) & 15);
    Interpreter fresh;
    ASSERT_TRUE(fresh.prepare(model, ram, 1u << 19).ok());
    fill_bench_inputs(fresh, 3);
    ASSERT_TRUE(fresh.invoke().ok());
    const Tensor* expected = fresh.output(0);

    BenchRequest request;
    request.runs = 4;
    request.seed = 3;
    BenchClock clock;
    clock.now = [](void*) { return uint64_t{0}; };
    Interpreter benched;
    BenchReply reply;
    ASSERT_TRUE(
        run_inference_bench(model, request, ram + (1u << 19), 1u << 19, clock, &benched, &reply)
            .ok());
    ASSERT_EQ(reply.output_bytes, expected->bytes);
    EXPECT_EQ(memcmp(benched.output(0)->data, expected->data, expected->bytes), 0);
  }
}

// A configured run is left as it was: BENCH before START and while paused
// (refused while training), then the run ends exactly as the host's.
TEST(BoardLink, BenchLeavesAConfiguredRunAsItWas) {
  Rig rig;
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  const auto model = model_bytes();
  const auto data = dataset_blob(8);
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kDataset, data, nullptr, nullptr, &error)) << error;
  TrainingSettings settings = adam_settings(2);
  settings.metric_every = 2;
  ConfigureReply configured;
  ASSERT_TRUE(rig.client->configure(settings, &configured, &error)) << error;
  BenchRequest request;
  request.runs = 5;
  BenchReply reply;
  ASSERT_TRUE(rig.client->bench(request, &reply, &error)) << error;
  BenchReply host;
  ASSERT_TRUE(bench_on_host(model, request, &host, &error)) << error;
  EXPECT_EQ(reply.output_crc32, host.output_crc32);

  std::vector<Metric> metrics;
  rig.client->set_event_handler([&](const Event& e) {
    if (e.type == MessageType::kMetric) metrics.push_back(e.metric);
  });
  ASSERT_TRUE(rig.client->control(MessageType::kStart, nullptr, &error)) << error;
  // While it trains: refused with the reason.
  EXPECT_FALSE(rig.client->bench(request, &reply, &error));
  EXPECT_EQ(error,
            "board: BENCH: wrong state: a run is training: PAUSE or STOP it first (the run is "
            "kept)");
  ASSERT_TRUE(rig.client->wait_events(
      10000, [&](const Event& e) { return e.type != MessageType::kMetric; }, &error))
      << error;
  ASSERT_TRUE(rig.client->control(MessageType::kPause, nullptr, &error)) << error;
  // Paused: the host may make sure the board has the model (no upload, no
  // change), bench, and train on.
  UploadReport report;
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, &report, &error)) << error;
  EXPECT_EQ(report.payload_bytes, 0u);
  ASSERT_TRUE(rig.client->bench(request, &reply, &error)) << error;
  EXPECT_EQ(reply.output_crc32, host.output_crc32);  // the model as uploaded, not as trained
  ASSERT_TRUE(rig.client->control(MessageType::kStart, nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->wait_events(
      20000,
      [&](const Event& e) {
        return !(e.type == MessageType::kMetric && (e.metric.flags & kMetricRunDone));
      },
      &error))
      << error;
  std::vector<uint8_t> weights;
  ASSERT_TRUE(rig.client->download(0, &weights, &error)) << error;
  ReferenceRun reference;
  ASSERT_TRUE(run_on_host(model, data, settings, &reference, &error)) << error;
  double max_relative = 1;
  ASSERT_TRUE(compare_weight_blobs(weights, reference.weights, &max_relative, &error)) << error;
  EXPECT_EQ(max_relative, 0.0);
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(metrics.back().loss, reference.metrics.back().loss);
}

// UPLOAD_BEGIN sizes near 2^32: the end of the upload (its start in the pool + its size) must not
// wrap a 32-bit size_t back into the pool.
TEST(BoardLink, UploadEndingPast4GBIsRefused) {
  Rig rig;
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model_bytes(), nullptr, nullptr, &error))
      << error;
  std::vector<uint8_t> begin(kMaxPayload);
  WireWriter w(begin.data(), begin.size());
  UploadBegin request;
  request.kind = UploadKind::kDataset;
  request.total_bytes = 0xFFFFFFF0u;
  request.write(w);
  begin.resize(w.size());
  const RawReply reply = raw_request(rig, MessageType::kUploadBegin, 0x4242, begin);
  EXPECT_EQ(reply.type, static_cast<uint8_t>(MessageType::kError));
  EXPECT_NE(reply.error.find("dataset of 4294967280 bytes does not fit"), std::string::npos)
      << reply.error;
}

// ---- A noisy line, byte by byte (issue 17) ---------------------------------------------------

void add_line_noise(Rig& rig, double rate, uint32_t seed) {
  LineNoiseOptions o;
  o.rate = rate;
  o.seed = seed;
  rig.transport->noise = std::make_unique<LineNoise>(o);
  o.seed = seed + 1;
  rig.board.to_host_noise = std::make_unique<LineNoise>(o);
}

uint64_t faults_injected(const Rig& rig) {
  uint64_t total = 0;
  for (int k = 0; k < kLineFaultKinds; ++k) {
    const auto fault = static_cast<LineFault>(k);
    total += rig.transport->noise->count(fault) + rig.board.to_host_noise->count(fault);
  }
  return total;
}

// A whole run through run_board_training (uploads, CONFIGURE, START, METRICs,
// checkpoints, weights), as `gruwb board train` drives it.
BoardRunResult train_through(Rig& rig, const TrainingSettings& settings, std::string* error) {
  BoardRunOptions options;
  options.checkpoint_every = 8;
  BoardRunResult result;
  EXPECT_TRUE(run_board_training(*rig.client, model_bytes(), dataset_blob(16), settings, options,
                                 {}, &result, error))
      << *error;
  return result;
}

// At 1e-3 faults per byte (the cable the issue measured) uploads, downloads,
// checkpoints and every METRIC get through, each once and in order, and the
// trained weights are bit-identical to a run on a clean line.
TEST(NoisyLine, TrainingAt1e3PerByteEqualsACleanRun) {
  TrainingSettings settings = adam_settings(2);
  settings.metric_every = 2;
  std::string error;
  Rig clean;
  const BoardRunResult expected = train_through(clean, settings, &error);

  Rig rig;
  add_line_noise(rig, 1e-3, 5);
  const BoardRunResult got = train_through(rig, settings, &error);
  ASSERT_EQ(got.metrics.size(), expected.metrics.size());
  ASSERT_EQ(got.metrics.size(), 16u);  // 8 per epoch of 16 samples
  for (size_t i = 0; i < got.metrics.size(); ++i) {
    EXPECT_EQ(got.metrics[i].epoch, expected.metrics[i].epoch) << i;
    EXPECT_EQ(got.metrics[i].samples, expected.metrics[i].samples) << i;
    EXPECT_EQ(got.metrics[i].loss, expected.metrics[i].loss) << i;
  }
  EXPECT_EQ(got.weights, expected.weights);
  EXPECT_GT(got.checkpoints, 0u);
  const LinkStats& stats = rig.client->stats();
  EXPECT_GT(faults_injected(rig), 50u);
  EXPECT_GT(stats.decoder.crc_errors + stats.decoder.malformed, 0u);
  EXPECT_GT(stats.retries, 0u);
}

// At 1e-2 (one fault in a hundred bytes, so a full 1 KB frame almost never
// arrives) frames shrink until they get through; the model arrives intact (the
// board completes an upload only when its SHA-256 matches) and the report
// counts each byte once.
TEST(NoisyLine, UploadAt1e2PerByte) {
  Rig rig;
  add_line_noise(rig, 1e-2, 11);
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  const auto model = model_bytes();
  UploadReport report;
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, &report, &error)) << error;
  EXPECT_EQ(report.payload_bytes, model.size());  // first-time bytes only
  EXPECT_GT(report.resent_bytes, 0u);
  EXPECT_GT(report.wire_bytes, report.payload_bytes + report.resent_bytes);
  BoardStatus status;
  ASSERT_TRUE(rig.client->status(&status, &error)) << error;
  EXPECT_EQ(status.model_received, model.size());
  const LinkStats& stats = rig.client->stats();
  EXPECT_GT(stats.frame_shrinks, 0u);
  EXPECT_LT(stats.frame_bytes, 256u);
  EXPECT_GT(faults_injected(rig), 500u);
}

// The METRIC samples seen, checked to be in order and each once: returns
// how many events were skipped between neighbours (lost for good).
int skipped_between(const std::vector<uint32_t>& seen) {
  int skipped = 0;
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GT(seen[i], seen[i - 1]) << "out of order or twice at " << i;
    skipped += static_cast<int>(seen[i] - seen[i - 1]) - 1;
  }
  return skipped;
}

// Events the line loses are fetched again (EVENTS) and passed on in order,
// each once; those the board no longer keeps are counted, not invented. Once
// the host has asked EVENTS, the board waits for its acknowledgements instead
// of dropping events. (The in-process board trains on while the host reads,
// so more events may come with each recovery; the checks hold either way.)
TEST(NoisyLine, LostEventsAreFetchedAgainOrCounted) {
  Rig rig;
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model_bytes(), nullptr, nullptr, &error))
      << error;
  ASSERT_TRUE(rig.client->upload(UploadKind::kDataset, dataset_blob(24), nullptr, nullptr, &error))
      << error;
  TrainingSettings settings = adam_settings(1);
  settings.metric_every = 1;
  ConfigureReply configured;
  ASSERT_TRUE(rig.client->configure(settings, &configured, &error)) << error;
  std::vector<uint32_t> seen;
  rig.client->set_event_handler([&](const Event& e) {
    if (e.type == MessageType::kMetric) seen.push_back(e.metric.samples);
  });
  ASSERT_TRUE(rig.client->control(MessageType::kStart, nullptr, &error)) << error;
  // START's reply came with the first sample's METRIC. A host that never
  // asked EVENTS is not waited for: eleven more samples trained while nothing
  // reaches it, and the board keeps the last kKeptEvents, so three are gone
  // for good.
  ASSERT_EQ(seen.size(), 1u);
  for (int i = 0; i < 11; ++i) rig.device->poll();
  rig.board.to_host.clear();
  ASSERT_TRUE(rig.client->recover_events(&error)) << error;
  ASSERT_GE(seen.size(), 1u + kKeptEvents);
  EXPECT_EQ(seen[1], static_cast<uint32_t>(1 + 11 - kKeptEvents + 1));
  EXPECT_EQ(skipped_between(seen), 11 - kKeptEvents);
  EXPECT_EQ(rig.client->stats().events_lost, static_cast<uint32_t>(11 - kKeptEvents));
  // Now it has asked, and acknowledges all it has. However long nothing
  // reaches it, the board stops before its kept events run out, and every
  // one is fetched again.
  ASSERT_TRUE(rig.client->recover_events(&error)) << error;
  const uint32_t acknowledged = seen.back();
  for (int i = 0; i < 11; ++i) rig.device->poll();
  rig.board.to_host.clear();
  ASSERT_TRUE(rig.client->recover_events(&error)) << error;
  EXPECT_GE(seen.back(), acknowledged + kKeptEvents - 2);
  EXPECT_LT(seen.back(), acknowledged + 11);  // it waited
  EXPECT_EQ(skipped_between(seen), 11 - kKeptEvents);
  EXPECT_EQ(rig.client->stats().events_lost, static_cast<uint32_t>(11 - kKeptEvents));
  // One lost on the way, noticed when the next arrives: filled in before it.
  rig.device->poll();
  rig.board.to_host.clear();
  ASSERT_TRUE(rig.client->wait_events(
      5000, [&](const Event& e) { return !(e.metric.flags & kMetricRunDone); }, &error))
      << error;
  EXPECT_EQ(seen.back(), 24u);
  EXPECT_EQ(skipped_between(seen), 11 - kKeptEvents);
  EXPECT_EQ(rig.client->stats().events_lost, static_cast<uint32_t>(11 - kKeptEvents));
}

// Resent chunks are not payload: a 2 KB/s upload must not read as 13 KB/s.
TEST(NoisyLine, UploadReportCountsEachByteOnce) {
  Rig rig(Faults{0.2, 0, 0, 0, 0}, Faults{0.1, 0, 0, 0, 0}, 3);
  std::string error;
  ASSERT_TRUE(rig.client->hello(nullptr, &error)) << error;
  const auto model = model_bytes();
  UploadReport report;
  ASSERT_TRUE(rig.client->upload(UploadKind::kModel, model, nullptr, &report, &error)) << error;
  EXPECT_EQ(report.payload_bytes, model.size());
  EXPECT_GT(report.resent_bytes, model.size() / 10);
  EXPECT_GT(report.retries, 0u);
  EXPECT_GE(rig.client->stats().bytes_sent, report.wire_bytes);
  EXPECT_GT(report.wire_bytes, report.payload_bytes + report.resent_bytes);
}

}  // namespace
}  // namespace gruwb::serial::test
