#include "app/core/board.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "app/core/export.h"
#include "app/core/inspect.h"
#include "engine/model/model.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_writer.h"
#include "engine/train/loss_output.h"
#include "serial/link/board_client.h"
#include "serial/link/board_run.h"
#include "serial/link/dataset_blob.h"
#include "serial/link/host_reference.h"
#include "serial/link/transport.h"

namespace gruwb::app {
namespace {

using namespace gruwb::serial;
using Clock = std::chrono::steady_clock;

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

std::string hex32(uint32_t v) { return format("%08x", v); }

bool read_model(const std::string& path, std::vector<uint8_t>* bytes, std::string* err) {
  if (!tools::read_file_bytes(path, bytes, err)) return false;
  Model model;
  const Status s = Model::load(bytes->data(), bytes->size(), &model);
  if (!s.ok()) {
    *err = path + ": " + s.message();
    return false;
  }
  return true;
}

bool upload_with_progress(BoardClient& client, UploadKind kind, const std::vector<uint8_t>& data,
                          const std::string& what, const LineSink& progress, std::string* out,
                          std::string* err) {
  int last_decile = -1;
  UploadReport report;
  const bool ok = client.upload(
      kind, data,
      [&](uint32_t done, uint32_t total) {
        const int decile = total ? static_cast<int>(10ull * done / total) : 10;
        if (progress && decile != last_decile) {
          last_decile = decile;
          progress(format("upload %s: %u / %u bytes", what.c_str(), done, total));
        }
      },
      &report, err);
  if (!ok) {
    *err = "upload " + what + ": " + *err;
    return false;
  }
  const double rate = report.seconds > 0 ? report.payload_bytes / report.seconds : 0;
  *out += format("uploaded %s: %zu bytes", what.c_str(), data.size());
  if (report.resumed_from > 0)
    *out += format(" (board already had %u, resumed there)", report.resumed_from);
  if (report.payload_bytes > 0) {
    // Each data byte counts once: bytes sent again after a loss are overhead.
    *out += format(" in %.1f s, %.1f KB/s goodput, %.1f%% of the bytes sent were new payload",
                   report.seconds, rate / 1024,
                   100.0 * report.payload_bytes / std::max<uint64_t>(1, report.wire_bytes));
    if (report.resent_bytes > 0) {
      *out += format(" (%llu bytes resent in %u go-backs)",
                     static_cast<unsigned long long>(report.resent_bytes), report.retries);
    }
  }
  *out += "\n";
  return true;
}

}  // namespace

std::string describe_link(const LinkStats& s) {
  const DecoderStats& d = s.decoder;
  return format(
      "link: %u frames sent, %u received, %u garbled (%u CRC), %u requests sent again, %u stray "
      "replies; events: %u fetched again, %u lost; frames now carry %u data bytes (%u shrinks, "
      "%u grows)\n",
      s.frames_sent, s.frames_received, d.crc_errors + d.malformed + d.oversized + d.bad_version,
      d.crc_errors, s.retries, s.stray_replies, s.events_recovered, s.events_lost, s.frame_bytes,
      s.frame_shrinks, s.frame_grows);
}

std::unique_ptr<BoardClient> open_board(const BoardConnection& c, std::string* note,
                                        std::string* err, int* exit_code) {
  if (exit_code) *exit_code = kExitBadInput;
  PortOptions port;
  port.path = c.port;
  port.baud = c.baud;
  port.dtr = c.dtr;
  if (c.transport == "termios") {
    port.kind = TransportKind::kTermios;
  } else if (c.transport == "libserialport") {
    port.kind = TransportKind::kLibserialport;
  } else if (c.transport != "auto") {
    *err = "--transport must be auto, libserialport or termios, not '" + c.transport + "'";
    return nullptr;
  }
  std::string error;
  auto transport = open_transport(port, note, &error);
  if (!transport) {
    *err = error;
    return nullptr;
  }
  ClientOptions options;
  options.timeout_ms = c.timeout_ms;
  options.reconnect_ms = c.reconnect_ms;
  options.operation_limit_ms = c.operation_limit_ms;
  BoardClient::Reopen reopen = [port](std::string* e) {
    std::string why;
    return open_transport(port, &why, e);
  };
  auto client = std::make_unique<BoardClient>(std::move(transport), options, reopen);
  if (exit_code) *exit_code = kExitFailure;
  if (!client->hello(nullptr, &error)) {
    *err = c.port + ": " + error;
    return nullptr;
  }
  if (exit_code) *exit_code = kExitOk;
  return client;
}

std::string describe_capabilities(const Capabilities& caps) {
  std::string text;
  text += format("board:            %s\n", caps.board);
  text += format("session id:       %s\n", hex32(caps.session_id).c_str());
  text += format("protocol version: %u (max payload %u bytes)\n", caps.protocol_version,
                 caps.max_payload);
  text += format("engine:           %s\n", caps.engine_version);
  text += format("RAM pool:         %u bytes (model + dataset + training arena)\n", caps.ram_bytes);
  text += caps.clock_hz ? format("clock:            %.1f MHz\n", caps.clock_hz / 1e6)
                        : std::string("clock:            host (simulated)\n");
  text += format("can train:        %s\n", caps.flags & kCanTrain ? "yes" : "no");
  text += format("can bench:        %s\n",
                 caps.flags & kCanBench ? "yes (gruwb board bench)" : "no (firmware before BENCH)");
  text += format("ops:              %u builtin", caps.op_count);
  for (int i = 0; i < caps.custom_op_count; ++i)
    text += std::string(", custom ") + caps.custom_ops[i];
  text += "\n";
  return text;
}

static std::string simulated_boards_folder() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime && *runtime) return std::string(runtime) + "/gruwb/board-sim";
  return "/tmp/gruwb-" + std::to_string(getuid()) + "/board-sim";
}

std::string announce_simulated_board(const std::string& pty) {
  std::error_code ignored;
  const std::string folder = simulated_boards_folder();
  std::filesystem::create_directories(folder, ignored);
  const std::string file = folder + "/" + std::to_string(getpid());
  std::string error;
  if (!tools::write_file_atomically(file, std::vector<uint8_t>(pty.begin(), pty.end()), &error))
    return "";
  return file;
}

void withdraw_simulated_board(const std::string& announcement) {
  if (!announcement.empty()) std::remove(announcement.c_str());
}

std::vector<std::string> simulated_board_ports() {
  std::vector<std::string> ports;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(simulated_boards_folder(), error)) {
    const std::string name = entry.path().filename().string();
    char* end = nullptr;
    const long pid = std::strtol(name.c_str(), &end, 10);
    std::vector<uint8_t> bytes;
    std::string ignored;
    const bool alive =
        pid > 0 && *end == '\0' && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
    if (!alive || !tools::read_file_bytes(entry.path().string(), &bytes, &ignored)) {
      if (!alive) std::filesystem::remove(entry.path(), error);
      continue;
    }
    const std::string pty(bytes.begin(), bytes.end());
    if (std::filesystem::exists(pty, error)) ports.push_back(pty);
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

int board_list(std::string* out, std::string* err) {
  std::vector<PortInfo> ports;
  if (!list_ports(&ports, err)) return kExitFailure;
  const std::vector<std::string> simulated = simulated_board_ports();
  if (ports.empty() && simulated.empty()) *out += "no serial ports found\n";
  for (const PortInfo& p : ports) {
    *out += p.path + "  " + p.transport;
    if (p.usb_vid >= 0) *out += format("  %04x:%04x", p.usb_vid, p.usb_pid);
    if (!p.description.empty()) *out += "  " + p.description;
    if (!p.serial_number.empty()) *out += "  serial " + p.serial_number;
    *out += "\n";
  }
  for (const std::string& pty : simulated) *out += pty + "  termios  gruwb board-sim\n";
  *out += "(QEMU's pseudo-terminals are not listed: pass them with --port)\n";
  return kExitOk;
}

int board_info(const BoardConnection& connection, std::string* out, std::string* err) {
  std::string note;
  int code = kExitOk;
  const std::unique_ptr<BoardClient> client = open_board(connection, &note, err, &code);
  if (!client) return code;
  *out += "port:             " + client->transport_description() + "\n";
  *out += "transport:        " + note + "\n";
  *out += describe_capabilities(client->capabilities());
  BoardStatus s;
  if (!client->status(&s, err)) return kExitFailure;
  *out += format("state:            %s\n", board_state_name(s.state));
  *out += format("model:            %u / %u bytes\n", s.model_received, s.model_bytes);
  *out += format("dataset:          %u / %u bytes\n", s.dataset_received, s.dataset_bytes);
  if (s.arena_bytes) *out += format("training arena:   %u bytes\n", s.arena_bytes);
  if (s.weights_bytes) {
    *out += format("progress:         epoch %u, %u updates, %u samples into the epoch\n", s.epoch,
                   s.step, s.samples);
  }
  *out += describe_link(client->stats());
  return kExitOk;
}

int board_upload(const BoardConnection& connection, const std::string& model_path,
                 const LineSink& progress, std::string* out, std::string* err) {
  std::vector<uint8_t> model;
  if (!read_model(model_path, &model, err)) return kExitBadInput;
  std::string note;
  int code = kExitOk;
  const std::unique_ptr<BoardClient> client = open_board(connection, &note, err, &code);
  if (!client) return code;
  if (!upload_with_progress(*client, UploadKind::kModel, model, model_path, progress, out, err))
    return kExitFailure;
  *out += describe_link(client->stats());
  return kExitOk;
}

// The loss output for the board run: --output NAME or the automatic choice
// with the dataset's classes (what the board itself would choose).
static bool board_loss_output(const std::vector<uint8_t>& model,
                              const std::vector<uint8_t>& dataset, const std::string& name,
                              const std::string& label, int32_t* output, std::string* err) {
  Model view;
  Status s = Model::load(model.data(), model.size(), &view);
  DatasetHeader header;
  if (!s.ok() || !read_dataset_header(dataset.data(), dataset.size(), &header)) {
    *err = label + ": " + (s.ok() ? "the dataset blob is malformed" : s.message());
    return false;
  }
  LossOutputRequest request;
  request.name = name.c_str();
  request.class_count = header.classes;
  s = choose_loss_output(view, request, output);
  if (!s.ok()) *err = label + ": " + s.message();
  return s.ok();
}

int board_train(const BoardTrainRequest& request, const LineSink& progress, std::string* out,
                std::string* err) {
  std::vector<uint8_t> model;
  if (!request.model_path.empty() && !read_model(request.model_path, &model, err))
    return kExitBadInput;
  // With the model at hand, a bad dataset fails before any port is opened.
  std::vector<uint8_t> blob;
  std::string data_note;
  if (!model.empty() && !board_dataset_blob(request.data, model, &blob, &data_note, err)) {
    return kExitBadInput;
  }
  int32_t loss_output = -1;
  if (!model.empty() &&
      !board_loss_output(model, blob, request.loss_output, request.model_path, &loss_output, err)) {
    return kExitBadInput;
  }

  std::string note;
  int code = kExitOk;
  const std::unique_ptr<BoardClient> client = open_board(request.connection, &note, err, &code);
  if (!client) return code;
  const LineSink say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  say("board " + std::string(client->capabilities().board) + " on " +
      client->transport_description() + ", session " + hex32(client->session_id()));
  if (!model.empty()) {
    if (!upload_with_progress(*client, UploadKind::kModel, model, "model", progress, out, err)) {
      return kExitFailure;
    }
  } else if (!client->download(kDownloadModel, &model, err)) {
    *err = "the board has no model (give --model FILE): " + *err;
    return kExitBadInput;
  } else if (!board_dataset_blob(request.data, model, &blob, &data_note, err)) {
    return kExitBadInput;
  }
  *out += data_note;
  serial::TrainingSettings settings = request.settings;
  if (!board_loss_output(model, blob, request.loss_output,
                         request.model_path.empty() ? "the board's model" : request.model_path,
                         &settings.config.loss_output, err)) {
    return kExitBadInput;
  }
  if (!upload_with_progress(*client, UploadKind::kDataset, blob, "dataset", progress, out, err)) {
    return kExitFailure;
  }
  BoardRunOptions options;
  options.checkpoint_every = request.checkpoint_every;
  options.resume = request.resume;
  options.run_timeout_ms = request.run_timeout_s * 1000;
  BoardRunCallbacks callbacks;
  const uint32_t clock_hz = client->capabilities().clock_hz;
  callbacks.on_metric = [&](const Metric& m) {
    say(format("epoch %u/%u  samples %u/%u  loss %.6f  accuracy %.4f  %.1f samples/s (board clock)",
               m.epoch + 1, settings.epochs, m.samples, m.epoch_samples, m.loss, m.accuracy,
               m.samples_per_second) +
        (m.step_cycles ? ", " + board_step_text(m, clock_hz) : std::string()));
  };
  callbacks.on_line = say;
  BoardRunResult run;
  if (!run_board_training(*client, model, blob, settings, options, callbacks, &run, err)) {
    if (!request.resume && client->reset_detected()) *err += " (drop --no-resume to resume)";
    return kExitFailure;
  }
  const std::vector<Metric>& metrics = run.metrics;
  const std::vector<uint8_t>& weights = run.weights;
  const ConfigureReply& configured = run.configured;
  *out += format(
      "training arena: %u bytes (weights %u, gradients %u, optimizer %u, activations+tapes %u, "
      "other %u); model + dataset + arena = %zu of %u bytes of board RAM\n",
      configured.arena_bytes, configured.weight_bytes, configured.gradient_bytes,
      configured.optimizer_bytes, configured.activation_bytes, configured.other_bytes,
      model.size() + blob.size() + configured.arena_bytes, client->capabilities().ram_bytes);
  if (run.checkpoints > 0) {
    *out += format("checkpoints: %u taken (%zu bytes each, kept on the host)", run.checkpoints,
                   run.checkpoint_bytes);
    if (run.resumes > 0)
      *out += format("; the board reset %d time(s), resumed each time", run.resumes);
    *out += "\n";
  } else if (run.resumes > 0) {
    *out += format("the board reset %d time(s); training restarted from the start\n", run.resumes);
  }
  if (metrics.empty()) {
    *err = "the board finished but none of its METRIC events arrived (lost on the line)";
    return kExitFailure;
  }
  const Metric& last = metrics.back();
  *out +=
      format("board: %u epochs, %u updates, final epoch loss %.6f accuracy %.4f, %.1f samples/s\n",
             settings.epochs, last.step, last.loss, last.accuracy, last.samples_per_second);

  if (request.compare_host) {
    ReferenceRun host;
    if (!run_on_host(model, blob, settings, &host, err)) return kExitFailure;
    RunAgreement agreement;
    if (!compare_runs(metrics, weights, host, &agreement, err)) return kExitFailure;
    const Metric* host_last = host.metrics.empty() ? nullptr : &host.metrics.back();
    *out +=
        format("host run of the same training: final loss %.6f accuracy %.4f; board vs host: %s\n",
               host_last ? host_last->loss : 0.f, host_last ? host_last->accuracy : 0.f,
               agreement.summary().c_str());
    if (!agreement.agree) {
      *err = "board and host runs disagree: " + agreement.summary();
      return kExitFailure;
    }
  }
  if (!request.output_path.empty()) {
    std::vector<uint8_t> trained;
    if (!apply_weight_blob(model, weights, &trained, err)) return kExitFailure;
    if (!tools::write_file_atomically(request.output_path, trained, err)) return kExitFailure;
    *out += format("wrote the trained model to %s (%zu bytes)\n", request.output_path.c_str(),
                   trained.size());
  }
  *out += describe_link(client->stats());
  return kExitOk;
}

bool board_dataset_blob(const BoardData& data, const std::vector<uint8_t>& model,
                        std::vector<uint8_t>* blob, std::string* note, std::string* err) {
  Model view;
  const Status s = Model::load(model.data(), model.size(), &view);
  if (!s.ok()) {
    *err = std::string("model: ") + s.message();
    return false;
  }
  // The window the model takes: input [1, T, F].
  const TensorView input = view.main_subgraph().tensor(view.main_subgraph().inputs[0]);
  if (input.shape.size != 3 || input.shape[0] != 1) {
    *err =
        std::string("model input '") + input.name + "' must be [1, T, F] for a time-series dataset";
    return false;
  }
  DatasetFiles files;
  if (!load_dataset(data.path, &files, err)) return false;
  PrepareOptions options;
  options.timesteps = input.shape[1];
  options.length_policy = data.length_policy;
  options.validation_fraction = data.validation_fraction;
  options.seed = data.seed;
  options.normalize_data = data.normalize;
  PreparedData prepared;
  if (!prepare_dataset(files, options, &prepared, err)) return false;
  if (prepared.features != input.shape[2]) {
    *err = format("%s: %d channels, the model's input '%s' takes %d", data.path.c_str(),
                  prepared.features, input.name, input.shape[2]);
    return false;
  }
  PreparedSplit& train = prepared.train;
  const size_t per_sample = static_cast<size_t>(prepared.timesteps) * prepared.features;
  if (data.samples > 0 && data.samples < train.labels.size()) {
    train.labels.resize(data.samples);
    train.x.resize(data.samples * per_sample);
  }
  if (!make_dataset_blob(train.x, train.labels, static_cast<uint32_t>(per_sample),
                         static_cast<uint32_t>(prepared.class_names.size()), blob, err)) {
    *err = data.path + ": " + *err;
    return false;
  }
  note->clear();
  for (const std::string& line : prepared.notes) *note += "dataset " + line + "\n";
  *note += format("dataset %s: %zu training samples of %d steps x %d channels\n", data.path.c_str(),
                  train.labels.size(), prepared.timesteps, prepared.features);
  return true;
}

bool download_trained_model(BoardClient& client, const std::string& path, size_t* bytes,
                            std::string* err) {
  ExportRequest request;  // the extension picks the file type, checked before the transfer
  if (!export_target_for_path(path, &request.target, err)) return false;
  std::vector<uint8_t> model, weights, trained;
  if (!client.download(kDownloadModel, &model, err) ||
      !client.download(kDownloadWeights, &weights, err)) {
    return false;
  }
  if (!apply_weight_blob(model, weights, &trained, err)) return false;
  request.model_path =
      std::filesystem::path(path).stem().string() + "_board" +
      (tools::format_for_path(path) == ModelFormat::kCircle ? ".circle" : ".tflite");
  request.output = path;
  std::vector<ExportedFile> files;
  std::vector<std::string> notes;
  if (export_model_bytes(request, std::move(trained), &files, &notes, err) != kExitOk) return false;
  if (bytes) {
    *bytes = 0;
    for (const ExportedFile& f : files) *bytes += f.bytes;
  }
  return true;
}

int board_download(const BoardConnection& connection, const std::string& output_path,
                   std::string* out, std::string* err) {
  ExportTarget target;
  if (!export_target_for_path(output_path, &target, err)) return kExitBadInput;
  std::string note;
  int code = kExitOk;
  const std::unique_ptr<BoardClient> client = open_board(connection, &note, err, &code);
  if (!client) return code;
  size_t bytes = 0;
  if (!download_trained_model(*client, output_path, &bytes, err)) return kExitFailure;
  *out += format("wrote the board's trained model to %s (%zu bytes)\n", output_path.c_str(), bytes);
  return kExitOk;
}

// "12,345"
static std::string grouped(uint64_t v) {
  std::string digits = std::to_string(v);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(at, ",");
  return digits;
}

double board_microseconds(uint64_t cycles, uint32_t clock_hz) {
  return clock_hz ? static_cast<double>(cycles) * 1e6 / clock_hz : static_cast<double>(cycles);
}

// QEMU's boards run with -icount shift=0: 1 instruction = 1 ns of their clock.
uint64_t qemu_instructions(uint64_t cycles, uint32_t clock_hz, const std::string& board) {
  if (!clock_hz || board.rfind("qemu-", 0) != 0) return 0;
  return static_cast<uint64_t>(static_cast<double>(cycles) * 1e9 / clock_hz + 0.5);
}

std::string board_step_text(const serial::Metric& metric, uint32_t clock_hz) {
  if (!metric.step_cycles) return "";
  const double us = board_microseconds(metric.step_cycles, clock_hz);
  const std::string time = us >= 10000 ? format("%.1f ms", us / 1000) : format("%.0f us", us);
  if (!clock_hz) return "per sample " + time;
  return "per sample " + grouped(metric.step_cycles) + " cycles = " + time;
}

const char* cycle_counter_name(const serial::Capabilities& caps) {
  if (!caps.clock_hz) return "";
  return caps.flags & serial::kCyclesFromDwt ? "DWT" : "SysTick";
}

bool bench_on_board(BoardClient& client, const std::vector<uint8_t>& model,
                    const std::string& model_label, uint32_t runs, BoardBenchResult* result,
                    std::string* err) {
  *result = BoardBenchResult();
  result->board = client.capabilities().board;
  result->cycle_counter = cycle_counter_name(client.capabilities());
  result->model_label = model_label;
  serial::BenchRequest request;
  request.runs = runs;
  if (!client.bench(request, &result->reply, err)) return false;
  result->clock_hz = result->reply.clock_hz;
  // The same inputs through the firmware's code on this CPU: the board's
  // output must be this one.
  serial::BenchReply host;
  if (!bench_on_host(model, request, &host, err)) {
    *err = model_label + ": host run: " + *err;
    return false;
  }
  if (!compare_bench_outputs(result->reply, host, &result->max_output_difference,
                             &result->outputs_identical, err)) {
    return false;
  }
  // The host's figure the board's way (per-inference median of the same
  // runs): `gruwb bench` averages calibrated repetitions instead, which a
  // busy machine's preemptions inflate more than a median.
  result->host_median_us = host.median_cycles;  // the host counts microseconds
  constexpr double kTolerance = 1e-4;  // a libm's last bit (newlib's M4F expf), not another model
  if (!result->outputs_identical && !(result->max_output_difference <= kTolerance)) {
    *err = model_label +
           format(
               ": the board's output differs from the host's by %.3g (more than %.0e): did it "
               "run another model? (",
               result->max_output_difference, kTolerance) +
           board_bench_line(*result) + ")";
    return false;
  }
  return true;
}

std::string board_bench_line(const BoardBenchResult& r) {
  const BenchReply& b = r.reply;
  const double median_us = board_microseconds(b.median_cycles, r.clock_hz);
  std::string line;
  if (r.clock_hz) {
    line = format(
        "board %s (%.1f MHz clock, %s cycles): %s, %u inferences, median %s cycles = %s us",
        r.board.c_str(), r.clock_hz / 1e6, r.cycle_counter.c_str(), r.model_label.c_str(), b.runs,
        grouped(b.median_cycles).c_str(), grouped(static_cast<uint64_t>(median_us + 0.5)).c_str());
    if (uint64_t n = qemu_instructions(b.median_cycles, r.clock_hz, r.board))
      line += format(" = %.2f M instructions (QEMU -icount shift=0)", n / 1e6);
    line += format(" (min %s, max %s cycles)", grouped(b.min_cycles).c_str(),
                   grouped(b.max_cycles).c_str());
  } else {
    line = format(
        "board %s (simulated: this computer's clock): %s, %u inferences, median %s us "
        "(min %s, max %s)",
        r.board.c_str(), r.model_label.c_str(), b.runs, grouped(b.median_cycles).c_str(),
        grouped(b.min_cycles).c_str(), grouped(b.max_cycles).c_str());
  }
  line += format(", arena %s B", grouped(b.arena_bytes).c_str());
  if (r.host_median_us > 0) {
    line += format("; host %s us", grouped(static_cast<uint64_t>(r.host_median_us)).c_str());
    if (r.clock_hz) line += format(" (%.1fx faster)", median_us / r.host_median_us);
  }
  line += r.outputs_identical
              ? "; output equals the host's bit for bit"
              : format("; output within %.2g of the host's", r.max_output_difference);
  return line;
}

std::string board_bench_json(const BoardBenchResult& r) {
  const BenchReply& b = r.reply;
  tools::JsonWriter json;
  json.begin_object();
  json.key("board").value(r.board);
  json.key("clock_hz").value(r.clock_hz);
  json.key("simulated").value(r.clock_hz == 0);
  json.key("model").value(r.model_label);
  json.key("runs").value(b.runs);
  json.key("median_us").value(board_microseconds(b.median_cycles, r.clock_hz));
  json.key("min_us").value(board_microseconds(b.min_cycles, r.clock_hz));
  json.key("max_us").value(board_microseconds(b.max_cycles, r.clock_hz));
  json.key("total_us").value(board_microseconds(b.total_cycles, r.clock_hz));
  // Cycles of the board's clock (null on a host simulation, which counts us).
  const auto cycles = [&](const char* key, uint64_t value) {
    json.key(key);
    if (r.clock_hz) {
      json.value(value);
    } else {
      json.null();
    }
  };
  cycles("median_cycles", b.median_cycles);
  cycles("min_cycles", b.min_cycles);
  cycles("max_cycles", b.max_cycles);
  cycles("total_cycles", b.total_cycles);
  json.key("cycle_counter");
  if (r.clock_hz) {
    json.value(r.cycle_counter);
  } else {
    json.null();
  }
  json.key("arena_bytes").value(b.arena_bytes);
  json.key("instructions_per_inference");
  if (uint64_t n = qemu_instructions(b.median_cycles, r.clock_hz, r.board)) {
    json.value(n);
  } else {
    json.null();
  }
  json.key("host_median_us").value(r.host_median_us);
  json.key("output_identical").value(r.outputs_identical);
  json.key("max_output_difference").value(r.max_output_difference);
  json.end_object();
  return json.take() + "\n";
}

int board_bench(const BoardBenchRequest& request, const LineSink& progress, std::string* out,
                std::string* err) {
  std::vector<uint8_t> model;
  if (!read_model(request.model_path, &model, err)) return kExitBadInput;
  std::string note;
  int code = kExitOk;
  const std::unique_ptr<BoardClient> client = open_board(request.connection, &note, err, &code);
  if (!client) return code;
  std::string uploaded;
  if (!upload_with_progress(*client, UploadKind::kModel, model, request.model_path,
                            request.json ? LineSink() : progress, &uploaded, err)) {
    return kExitFailure;
  }
  if (!request.json) *out += uploaded;
  const size_t slash = request.model_path.find_last_of('/');
  const std::string label =
      slash == std::string::npos ? request.model_path : request.model_path.substr(slash + 1);
  BoardBenchResult result;
  if (!bench_on_board(*client, model, label, request.runs, &result, err)) return kExitFailure;
  *out += request.json ? board_bench_json(result) : board_bench_line(result) + "\n";
  return kExitOk;
}

}  // namespace gruwb::app
