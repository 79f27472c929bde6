#pragma once
// The board's side of the protocol: frames in, requests handled, replies and
// events out, one training sample per loop turn while a run is active. The
// same code runs in `gruwb board-sim` (host pty), under QEMU and on a real
// MCU; only the BoardSupport differs. No heap: everything lives in this
// object (place it in static storage) and in the board's RAM pool.

#include <cstddef>
#include <cstdint>

#include "engine/model/model.h"
#include "engine/train/trainer.h"
#include "serial/firmware/board_support.h"
#include "serial/firmware/training_run.h"
#include "serial/protocol/frame.h"
#include "serial/protocol/messages.h"
#include "serial/protocol/sha256.h"

namespace gruwb::serial {

// The engine version the board reports in HELLO.
constexpr const char* kEngineVersion = "gruwb-0.1";
// The largest event payload (a LOG: level, length, 199 characters).
constexpr size_t kMaxEventPayload = 201;

class Device {
 public:
  explicit Device(BoardSupport& board) : board_(board) {}
  // Forgets everything (as after a reboot), takes a new session id and
  // announces it with a BOOT event.
  void boot();
  // One turn of the main loop: handle received bytes, train one sample.
  void poll();
  uint32_t session_id() const { return session_id_; }
  BoardState state() const { return state_; }

 private:
  struct Upload {
    uint32_t total = 0;
    uint32_t received = 0;
    uint8_t sha256[32] = {};
    bool complete = false;
    bool begun = false;
    Sha256 hash;
    uint8_t* data = nullptr;  // model and dataset; a checkpoint streams into the run
  };

  void handle(const Frame& frame);
  void send(uint8_t type, uint16_t sequence, const uint8_t* payload, size_t length, bool remember);
  void send_error(const Frame& request, ErrorCode code, const char* format, ...)
      __attribute__((format(printf, 4, 5)));
  void send_event(MessageType type, const uint8_t* payload, size_t length);
  void log(uint8_t level, const char* format, ...) __attribute__((format(printf, 3, 4)));

  void on_hello(const Frame& f);
  void on_status(const Frame& f);
  void on_upload_begin(const Frame& f);
  void on_upload_chunk(const Frame& f);
  void on_configure(const Frame& f);
  void on_control(const Frame& f);
  void on_download(const Frame& f);
  void on_bench(const Frame& f);
  void on_events(const Frame& f);
  void download_checkpoint(const Frame& f, uint32_t offset, uint32_t max_bytes);
  // The start of every DOWNLOAD reply: checks `offset` against `total` and
  // writes {offset, total} into payload_; *n = the bytes that fit after it.
  // False after sending the error.
  bool begin_download_reply(const Frame& f, uint32_t offset, uint32_t total, uint32_t max_bytes,
                            size_t* n);
  void train_one();
  void send_upload_ack(const Frame& f, UploadKind kind, UploadResult result);
  void invalidate_training();
  size_t dataset_offset() const;
  Upload& upload_for(UploadKind kind);
  void restore_checkpoint(const Frame& f);

  BoardSupport& board_;
  FrameDecoder decoder_;
  uint8_t tx_[kMaxWireFrame];
  uint8_t payload_[kMaxPayload];
  // The last reply to a state-changing request, resent verbatim when the host
  // retries the same sequence number (its request or our reply was lost).
  uint8_t last_reply_[kMaxWireFrame];
  size_t last_reply_bytes_ = 0;
  uint16_t last_sequence_ = 0;
  uint8_t last_type_ = 0;
  uint16_t event_sequence_ = 0;
  // The last events sent, for a host that lost some on the line (EVENTS);
  // slot = sequence % kKeptEvents.
  struct KeptEvent {
    uint8_t type = 0;
    uint16_t length = 0;
    uint8_t payload[kMaxEventPayload] = {};
  };
  KeptEvent kept_events_[kKeptEvents];
  uint16_t kept_count_ = 0;
  // A host that asks EVENTS acknowledges every event before `from`; from then
  // on (until the next HELLO) training waits while the events it has not
  // acknowledged fill the kept ones, so a host that falls behind on a noisy
  // line can still fetch every METRIC again.
  bool host_acknowledges_ = false;
  uint16_t host_next_event_ = 0;
  bool waiting_for_host() const;

  uint32_t session_id_ = 0;
  BoardState state_ = BoardState::kIdle;
  ErrorCode last_error_ = ErrorCode::kNone;
  Upload model_upload_;
  Upload dataset_upload_;
  // Checkpoints stream, using no RAM beyond the run's: an upload is written
  // chunk by chunk into the configured run, a download is read chunk by chunk
  // from the run at rest (offset 0 opens it; a training step closes it, so a
  // later chunk never mixes two states).
  Upload checkpoint_upload_;
  bool checkpoint_download_open_ = false;
  // Set while a checkpoint upload has written into the run but not completed
  // with a good SHA-256: the run is half restored and must not START.
  bool run_half_restored_ = false;
  Model model_;
  Trainer trainer_;
  TrainingSettings settings_;
  TrainingRun run_;
  bool configured_ = false;
  size_t arena_bytes_ = 0;
  size_t run_end_ = 0;  // pool offset where the configured run's arena ends (0: no run)
  // Training steps since the last METRIC: their cycles (Metric::step_cycles).
  uint64_t window_cycles_ = 0;
  uint32_t window_samples_ = 0;
  bool weights_sha_valid_ = false;
  uint8_t weights_sha_[32] = {};
};

}  // namespace gruwb::serial
