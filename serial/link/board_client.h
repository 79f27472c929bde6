#pragma once
// The host's side of the board protocol over a Transport: requests with
// retries (same sequence number, so the board answers a retry without acting
// twice), a windowed resumable upload, download, and the events the board
// pushes (METRIC, LOG, BOOT). Every wait is bounded by options.timeout_ms x
// options.retries; a session id change means the board rebooted.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "serial/link/transport.h"
#include "serial/protocol/frame.h"
#include "serial/protocol/messages.h"

namespace gruwb::serial {

struct ClientOptions {
  int timeout_ms = 1000;   // per attempt
  int retries = 4;         // attempts after the first
  int window = 4;          // upload chunks in flight
  size_t chunk_bytes = 0;  // 0: as large as the board's max payload allows
  // Reopen the port after it vanished (unplug, QEMU/board-sim restart), once
  // per second for this long; 0 = fail at once.
  int reconnect_ms = 0;
};

struct LinkStats {
  uint64_t bytes_sent = 0, bytes_received = 0;
  uint32_t frames_sent = 0, frames_received = 0;
  uint32_t retries = 0;        // requests sent again after a timeout
  uint32_t go_backs = 0;       // upload restarts from the board's offset
  uint32_t stray_replies = 0;  // replies to nothing pending (late duplicates)
  uint32_t reconnects = 0;
  DecoderStats decoder;
};

struct UploadReport {
  uint32_t resumed_from = 0;   // offset the board already had
  uint64_t payload_bytes = 0;  // data bytes sent this time
  uint64_t wire_bytes = 0;     // all bytes sent (headers, COBS, CRC, retries)
  double seconds = 0;
};

// One frame on the wire, for the raw console. A frame the decoder rejected
// (CRC, COBS, length) comes in with crc_ok false and type/sequence 0.
struct FrameRecord {
  bool outgoing = false;
  uint8_t type = 0;
  uint16_t sequence = 0;
  uint16_t length = 0;  // payload bytes
  bool crc_ok = true;
};

struct Event {
  MessageType type;
  Metric metric;  // kMetric
  uint8_t log_level = 0;
  std::string log_text;  // kLog
  Boot boot;             // kBoot
};

class BoardClient {
 public:
  using Reopen = std::function<std::unique_ptr<Transport>(std::string* error)>;
  BoardClient(std::unique_ptr<Transport> transport, ClientOptions options = {},
              Reopen reopen = nullptr);

  bool hello(Capabilities* caps, std::string* error);
  bool status(BoardStatus* status, std::string* error);
  bool upload(UploadKind kind, const std::vector<uint8_t>& data,
              const std::function<void(uint32_t done, uint32_t total)>& progress,
              UploadReport* report, std::string* error);
  bool configure(const TrainingSettings& settings, ConfigureReply* reply, std::string* error);
  // START, PAUSE, STOP or RESET; *state is the board's state after it.
  bool control(MessageType type, BoardState* state, std::string* error);
  // what: kDownloadWeights, kDownloadModel or kDownloadCheckpoint (messages.h).
  bool download(uint8_t what, std::vector<uint8_t>* out, std::string* error);
  // BENCH: the board times bench.runs inferences of its uploaded model and
  // answers when done, so each attempt waits timeout_ms plus `per_run_ms` x
  // runs (a retry gets the same reply, never a second bench).
  bool bench(const BenchRequest& bench, BenchReply* reply, std::string* error,
             int per_run_ms = 100);
  // Delivers events for up to timeout_ms (or until on_event returns false).
  // False with *error when the port fails.
  bool wait_events(int timeout_ms, const std::function<bool(const Event&)>& on_event,
                   std::string* error);

  void set_event_handler(std::function<void(const Event&)> handler) {
    on_event_ = std::move(handler);
  }
  // Sees every frame sent and received (and every rejected one); on the
  // thread that calls the client.
  void set_frame_tap(std::function<void(const FrameRecord&)> tap) { frame_tap_ = std::move(tap); }
  // The session id of the last HELLO; 0 before.
  uint32_t session_id() const { return session_id_; }
  // Set when the board's session id changed (it rebooted) since HELLO.
  bool reset_detected() const { return reset_detected_; }
  uint32_t new_session_id() const { return new_session_id_; }
  // Takes the rebooted board's session as the current one (before resuming
  // on it), so a later reset is detected again.
  void adopt_new_session() {
    if (reset_detected_) session_id_ = new_session_id_;
    reset_detected_ = false;
  }
  const LinkStats& stats() const;
  const Capabilities& capabilities() const { return caps_; }
  std::string transport_description() const { return transport_->description(); }

 private:
  struct Reply {
    uint8_t type = 0;
    uint16_t sequence = 0;
    std::vector<uint8_t> payload;
  };
  bool send(uint8_t type, uint16_t sequence, const uint8_t* payload, size_t size,
            std::string* error);
  // Reads until a reply frame arrives (events are dispatched on the way).
  // Returns 1 with *reply, 0 on timeout, -1 on a port failure.
  int next_reply(int timeout_ms, Reply* reply, std::string* error);
  // `timeout_ms` per attempt; 0 = options.timeout_ms.
  bool request(MessageType type, const uint8_t* payload, size_t size, Reply* reply,
               std::string* error, int timeout_ms = 0);
  bool check_reply(const Reply& reply, MessageType type, std::string* error);
  void dispatch_event(const Frame& frame);
  void note_session(uint32_t session_id);
  bool reconnect(std::string* error);

  std::unique_ptr<Transport> transport_;
  ClientOptions options_;
  Reopen reopen_;
  FrameDecoder decoder_;
  std::vector<Reply> pending_replies_;
  uint16_t sequence_;
  uint32_t session_id_ = 0;
  bool reset_detected_ = false;
  uint32_t new_session_id_ = 0;
  Capabilities caps_;
  std::function<void(const Event&)> on_event_;
  std::function<void(const FrameRecord&)> frame_tap_;
  bool stop_reading_ = false;  // wait_events' caller has what it waited for
  mutable LinkStats stats_;
};

// Errors the board sent, as "<REQUEST>: <code>: <message>".
std::string describe_error_reply(const std::vector<uint8_t>& payload);

}  // namespace gruwb::serial
