#pragma once
// The host's side of the board protocol over a Transport: requests with
// retries (same sequence number, so the board answers a retry without acting
// twice), a windowed resumable upload, download, and the events the board
// pushes (METRIC, LOG, BOOT), in the board's order and each once: events lost
// on the line are fetched again (EVENTS). Frames are sized to the line's
// error rate (FrameSizer). A request is sent again while the line shows
// noise (garbled frames), for at most options.operation_limit_ms; a board
// that stays silent for options.retries + 1 attempts fails it sooner. A
// session id change means the board rebooted.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "serial/link/frame_sizer.h"
#include "serial/link/transport.h"
#include "serial/protocol/frame.h"
#include "serial/protocol/messages.h"

namespace gruwb::serial {

struct ClientOptions {
  int timeout_ms = 1000;  // per attempt
  int retries = 4;        // silent attempts (nothing heard, not even noise) after the first
  // No request, upload or download takes longer than this, however much the
  // line still answers.
  int operation_limit_ms = 600000;
  int window = 4;          // upload chunks in flight
  size_t chunk_bytes = 0;  // 0: as large as the board's max payload allows
  // Reopen the port after it vanished (unplug, QEMU/board-sim restart), once
  // per second for this long; 0 = fail at once.
  int reconnect_ms = 0;
};

struct LinkStats {
  uint64_t bytes_sent = 0, bytes_received = 0;
  uint32_t frames_sent = 0, frames_received = 0;
  uint32_t retries = 0;        // requests sent again after a timeout or a garbled reply
  uint32_t go_backs = 0;       // upload restarts from the board's offset
  uint32_t stray_replies = 0;  // replies to nothing pending (late duplicates)
  uint32_t reconnects = 0;
  uint32_t events_recovered = 0;                // events fetched again with EVENTS
  uint32_t events_lost = 0;                     // events the board no longer kept when asked
  uint32_t duplicate_events = 0;                // events heard twice (passed on once)
  uint32_t frame_shrinks = 0, frame_grows = 0;  // FrameSizer steps
  uint32_t frame_bytes = 0;                     // the data bytes per frame now
  DecoderStats decoder;
};

struct UploadReport {
  uint32_t resumed_from = 0;   // offset the board already had
  uint64_t payload_bytes = 0;  // data bytes sent this time, each counted once
  uint64_t resent_bytes = 0;   // data bytes sent again (lost chunks, go-backs)
  uint64_t wire_bytes = 0;     // all bytes sent (headers, COBS, CRC, resends)
  uint32_t retries = 0;        // rounds that went back to the board's offset
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
  // Asks the board for the events sent since the last one delivered (EVENTS)
  // and delivers them; for a quiet spell, when the last ones may have been
  // lost. Does nothing for a board that keeps no events.
  bool recover_events(std::string* error);

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
  // Sets the deadline of the outermost public call (operation_limit_ms).
  struct Operation {
    explicit Operation(BoardClient* client);
    ~Operation();
    BoardClient* client;
    bool outer;
  };
  // How one wait for a reply went, beyond the reply itself.
  struct Heard {
    bool noise = false;  // a garbled frame or a reply to something else arrived
  };
  bool send(uint8_t type, uint16_t sequence, const uint8_t* payload, size_t size,
            std::string* error);
  // Reads until a reply frame arrives (events are dispatched on the way).
  // Returns 1 with *reply, 0 on timeout, -1 on a port failure. A garbled
  // frame cuts the wait to a short grace (it was likely the reply); with
  // stop_on_event the wait also ends when wait_events' caller has enough.
  int next_reply(int timeout_ms, Reply* reply, std::string* error, Heard* heard = nullptr,
                 bool stop_on_event = false);
  bool past_operation_deadline() const;
  int grace_ms() const { return std::max(20, options_.timeout_ms / 4); }
  // `timeout_ms` per attempt; 0 = options.timeout_ms.
  bool request(MessageType type, const uint8_t* payload, size_t size, Reply* reply,
               std::string* error, int timeout_ms = 0);
  bool check_reply(const Reply& reply, MessageType type, std::string* error);
  void dispatch_event(uint8_t type, uint16_t sequence, const uint8_t* payload, size_t length);
  // Passes an event on in order (kKeepsEvents boards), holding early ones.
  void deliver_event(const Event& event);
  void deliver_early_events();
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
  FrameSizer sizer_;
  bool in_operation_ = false;
  std::chrono::steady_clock::time_point operation_deadline_;
  // Events in order: the board's next sequence number we have not passed
  // on, and those that came early (after a lost one).
  bool events_ordered_ = false;
  uint16_t next_event_ = 0;
  std::vector<std::pair<uint16_t, Event>> early_events_;
  bool events_gap_ = false;
  // Each EVENTS request acknowledges the events before its `from`, and a board
  // that was asked once waits for acknowledgements before its kept events run
  // out; wait_events acknowledges every kKeptEvents / 2 events.
  bool acknowledging_ = false;
  uint16_t acknowledged_ = 0;
  bool events_need_attention() const;
  mutable LinkStats stats_;
};

// Errors the board sent, as "<REQUEST>: <code>: <message>".
std::string describe_error_reply(const std::vector<uint8_t>& payload);

}  // namespace gruwb::serial
