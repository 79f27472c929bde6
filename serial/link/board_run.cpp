#include "serial/link/board_run.h"

#include <chrono>
#include <cstdio>

namespace gruwb::serial {
namespace {

using Clock = std::chrono::steady_clock;

std::string hex32(uint32_t v) {
  char text[16];
  snprintf(text, sizeof text, "%08x", v);
  return text;
}

// Samples trained since the run began, at this METRIC.
uint64_t run_position(const Metric& m) {
  return static_cast<uint64_t>(m.epoch) * m.epoch_samples + m.samples;
}

// Uploads (instant when the board has them), CONFIGURE, the checkpoint, START.
bool begin_on_board(BoardClient& client, const std::vector<uint8_t>& model,
                    const std::vector<uint8_t>& dataset, const TrainingSettings& settings,
                    const std::vector<uint8_t>& checkpoint, const BoardRunCallbacks& callbacks,
                    BoardRunResult* result, std::string* error) {
  if (!client.hello(nullptr, error)) return false;
  for (UploadKind kind : {UploadKind::kModel, UploadKind::kDataset}) {
    const std::vector<uint8_t>& data = kind == UploadKind::kModel ? model : dataset;
    const auto progress = [&](uint32_t done, uint32_t total) {
      if (callbacks.on_upload) callbacks.on_upload(kind, done, total);
    };
    if (!client.upload(kind, data, progress, nullptr, error)) {
      *error = std::string("upload ") + (kind == UploadKind::kModel ? "model" : "dataset") + ": " +
               *error;
      return false;
    }
  }
  if (!client.configure(settings, &result->configured, error)) return false;
  if (!checkpoint.empty() &&
      !client.upload(UploadKind::kCheckpoint, checkpoint, nullptr, nullptr, error)) {
    *error = "upload checkpoint: " + *error;
    return false;
  }
  return client.control(MessageType::kStart, nullptr, error);
}

// PAUSE, DOWNLOAD the run checkpoint, START again.
bool take_checkpoint(BoardClient& client, std::vector<uint8_t>* checkpoint,
                     RunCheckpointHeader* header, std::string* error) {
  BoardState state;
  if (!client.control(MessageType::kPause, &state, error)) return false;
  std::vector<uint8_t> bytes;
  const bool ok = client.download(kDownloadCheckpoint, &bytes, error);
  // Restart even when the download failed: the run must not stay paused.
  std::string start_error;
  if (state == BoardState::kPaused && !client.control(MessageType::kStart, nullptr, &start_error)) {
    if (ok) *error = start_error;
    return false;
  }
  if (!ok) return false;
  WireReader r(bytes.data(), bytes.size());
  if (!header->read(r)) {
    *error = "the board's checkpoint has no GWRC header";
    return false;
  }
  *checkpoint = std::move(bytes);
  return true;
}

}  // namespace

bool run_board_training(BoardClient& client, const std::vector<uint8_t>& model,
                        const std::vector<uint8_t>& dataset, const TrainingSettings& settings,
                        const BoardRunOptions& options, const BoardRunCallbacks& callbacks,
                        BoardRunResult* result, std::string* error) {
  *result = BoardRunResult();
  const auto say = [&](const std::string& line) {
    if (callbacks.on_line) callbacks.on_line(line);
  };
  const auto deadline = Clock::now() + std::chrono::milliseconds(options.run_timeout_ms);
  std::vector<uint8_t> checkpoint;
  bool checkpoints = options.checkpoints;
  uint64_t delivered = 0;      // run position of the last METRIC passed on
  uint64_t checkpoint_at = 0;  // run position of the last checkpoint
  uint32_t epoch_samples = 0;
  bool done = false, failed = false, checkpoint_due = false;
  std::string failure;
  client.set_event_handler([&](const Event& e) {
    if (e.type == MessageType::kLog) {
      say("board log: " + e.log_text);
      if (e.log_level >= 3) {
        failed = true;
        failure = e.log_text;
      }
      return;
    }
    if (e.type != MessageType::kMetric || e.metric.session_id != client.session_id()) return;
    const Metric& m = e.metric;
    epoch_samples = m.epoch_samples;
    const uint64_t at = run_position(m);
    if (m.flags & kMetricRunDone) done = true;
    // After a resume the board repeats the METRICs between the checkpoint and
    // the reset; they are the same figures, passed on once.
    if (at > delivered || result->metrics.empty()) {
      delivered = at;
      result->metrics.push_back(m);
      if (callbacks.on_metric) callbacks.on_metric(m);
    }
    if (checkpoints && !done) {
      checkpoint_due |= options.checkpoint_every == 0
                            ? (m.flags & kMetricEpochEnd) != 0
                            : at >= checkpoint_at + options.checkpoint_every;
    }
  });
  const auto finish = [&](bool ok) {
    client.set_event_handler(nullptr);
    return ok;
  };

  for (;;) {  // one pass per board session
    done = failed = checkpoint_due = false;
    bool ok =
        begin_on_board(client, model, dataset, settings, checkpoint, callbacks, result, error);
    auto last_heard = Clock::now();
    while (ok && !done && !failed && !client.reset_detected()) {
      if (Clock::now() > deadline) {
        *error = "training did not finish within " + std::to_string(options.run_timeout_ms / 1000) +
                 " s";
        return finish(false);
      }
      if (callbacks.cancelled && callbacks.cancelled()) {
        std::string ignored;
        client.control(MessageType::kStop, nullptr, &ignored);
        *error = "stopped before the end of the run";
        return finish(false);
      }
      const size_t before = result->metrics.size();
      ok = client.wait_events(
          250,
          [&](const Event&) {
            return !done && !failed && !checkpoint_due && !client.reset_detected();
          },
          error);
      if (!ok) *error = "lost the board during training: " + *error;
      if (result->metrics.size() != before) last_heard = Clock::now();
      if (!ok || done || failed || client.reset_detected()) break;
      if (checkpoint_due) {
        checkpoint_due = false;
        RunCheckpointHeader header;
        std::string why;
        if (take_checkpoint(client, &checkpoint, &header, &why)) {
          ++result->checkpoints;
          result->checkpoint_bytes = checkpoint.size();
          result->last_checkpoint = header;
          checkpoint_at = static_cast<uint64_t>(header.epoch) * epoch_samples + header.position;
        } else if (!client.reset_detected()) {
          // A run that ended before our PAUSE arrived needs no checkpoint.
          BoardStatus status;
          if (client.status(&status, error) && status.state == BoardState::kDone) {
            done = true;
            continue;
          }
          // A board without the RAM for a snapshot still trains; it just cannot resume.
          checkpoints = false;
          say("checkpoints off: " + why);
        }
        continue;
      }
      // Quiet for a while: fetch events lost on the line (the last METRIC may
      // be one), then ask, so a board that died or rebooted silently is noticed.
      if (Clock::now() - last_heard > std::chrono::seconds(2)) {
        ok = client.recover_events(error);
        if (!ok) *error = "lost the board's events during training: " + *error;
        if (!ok || done || failed || client.reset_detected()) break;
        BoardStatus status;
        ok = client.status(&status, error);
        if (!ok) *error = "the board stopped answering during training: " + *error;
        if (ok && status.state == BoardState::kFailed) failed = true;
        if (ok && status.state == BoardState::kDone) done = true;
        last_heard = Clock::now();
      }
    }
    if (!client.reset_detected()) {
      if (!ok) return finish(false);
      break;
    }
    const std::string sessions =
        hex32(client.session_id()) + " -> " + hex32(client.new_session_id());
    if (!options.resume) {
      *error = "the board reset during training (session " + sessions +
               "): its RAM, model and run are gone; resuming is off, so the run stops here";
      return finish(false);
    }
    if (++result->resumes > options.max_resumes) {
      *error = "the board reset " + std::to_string(result->resumes) +
               " times during training (last: session " + sessions + "); giving up";
      return finish(false);
    }
    const RunCheckpointHeader& c = result->last_checkpoint;
    say(checkpoint.empty()
            ? "board reset (session " + sessions +
                  ") before the first checkpoint: training again "
                  "from the start"
            : "board reset (session " + sessions + "): resuming from the checkpoint at epoch " +
                  std::to_string(c.epoch + 1) + ", sample " + std::to_string(c.position) +
                  " (step " + std::to_string(c.step) + ")");
    client.adopt_new_session();
  }
  if (failed) {
    *error = "training failed on the board: " + (failure.empty() ? "see its log" : failure);
    return finish(false);
  }
  client.set_event_handler(nullptr);
  return client.download(kDownloadWeights, &result->weights, error);
}

}  // namespace gruwb::serial
