#include "serial/link/board_client.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "engine/model/model.h"
#include "serial/protocol/sha256.h"

namespace gruwb::serial {
namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

uint32_t rejected_frames(const DecoderStats& s) {
  return s.crc_errors + s.malformed + s.oversized + s.bad_version;
}

// The model's ops that the board's HELLO does not list, comma-separated; ""
// when it runs them all (or the bytes are no model: the board says so).
std::string ops_missing_on_board(const Capabilities& caps, const std::vector<uint8_t>& bytes) {
  Model model;
  if (!Model::load(bytes.data(), bytes.size(), &model).ok()) return "";
  std::string missing;
  for (int s = 0; s < model.subgraph_count(); ++s) {
    const SubgraphView subgraph = model.subgraph(s);
    for (int o = 0; o < subgraph.operator_count; ++o) {
      const OperatorView op = subgraph.op(o);
      const bool custom = op.op_code == kOpCustom;
      const bool listed =
          custom ? std::any_of(caps.custom_ops, caps.custom_ops + caps.custom_op_count,
                               [&](const char* name) { return strcmp(name, op.custom_code) == 0; })
                 : std::find(caps.ops, caps.ops + caps.op_count, op.op_code) !=
                       caps.ops + caps.op_count;
      const std::string name = op.name();
      if (!listed && (", " + missing + ", ").find(", " + name + ", ") == std::string::npos)
        missing += (missing.empty() ? "" : ", ") + name;
    }
  }
  return missing;
}

}  // namespace

std::string describe_error_reply(const std::vector<uint8_t>& payload) {
  WireReader r(payload.data(), payload.size());
  ErrorReply e;
  if (!e.read(r)) return "malformed ERROR reply from the board";
  return std::string(message_type_name(e.request_type)) + ": " + error_code_name(e.code) + ": " +
         e.message;
}

BoardClient::BoardClient(std::unique_ptr<Transport> transport, ClientOptions options, Reopen reopen)
    : transport_(std::move(transport)), options_(options), reopen_(std::move(reopen)) {
  // A random first sequence number: the board answers a repeated (sequence,
  // type) from its reply cache, so a new host process must not reuse the last
  // one's numbers.
  std::random_device device;
  sequence_ = static_cast<uint16_t>(device());
  size_t frame = kMaxPayload - kDownloadReplyHeader;
  if (options_.chunk_bytes > 0 && options_.chunk_bytes < frame) frame = options_.chunk_bytes;
  sizer_.set_max(frame);
}

const LinkStats& BoardClient::stats() const {
  stats_.decoder = decoder_.stats();
  stats_.frame_shrinks = sizer_.shrinks();
  stats_.frame_grows = sizer_.grows();
  stats_.frame_bytes = static_cast<uint32_t>(sizer_.bytes());
  return stats_;
}

BoardClient::Operation::Operation(BoardClient* c) : client(c), outer(!c->in_operation_) {
  if (!outer) return;
  c->in_operation_ = true;
  c->operation_deadline_ = Clock::now() + std::chrono::milliseconds(c->options_.operation_limit_ms);
}

BoardClient::Operation::~Operation() {
  if (outer) client->in_operation_ = false;
}

bool BoardClient::past_operation_deadline() const {
  return in_operation_ && Clock::now() >= operation_deadline_;
}

bool BoardClient::send(uint8_t type, uint16_t sequence, const uint8_t* payload, size_t size,
                       std::string* error) {
  uint8_t wire[kMaxWireFrame];
  const size_t n = encode_frame(type, sequence, payload, size, wire, sizeof wire);
  if (n == 0) {
    *error = "message of " + std::to_string(size) + " bytes exceeds the frame limit";
    return false;
  }
  if (!transport_->write(wire, n, options_.timeout_ms, error)) return false;
  stats_.bytes_sent += n;
  ++stats_.frames_sent;
  if (frame_tap_) frame_tap_({true, type, sequence, static_cast<uint16_t>(size), true});
  return true;
}

void BoardClient::note_session(uint32_t session_id) {
  if (session_id_ != 0 && session_id != session_id_ && !reset_detected_) {
    reset_detected_ = true;
    new_session_id_ = session_id;
  }
}

void BoardClient::dispatch_event(uint8_t type, uint16_t sequence, const uint8_t* payload,
                                 size_t length) {
  Event event;
  event.type = static_cast<MessageType>(type);
  WireReader r(payload, length);
  bool reset = false;
  if (event.type == MessageType::kMetric) {
    if (!event.metric.read(r)) return;
    reset = session_id_ != 0 && event.metric.session_id != session_id_;
    note_session(event.metric.session_id);
  } else if (event.type == MessageType::kLog) {
    event.log_level = r.u8();
    char text[256];
    r.text(text, sizeof text);
    if (!r.ok) return;
    event.log_text = text;
  } else if (event.type == MessageType::kBoot) {
    if (!event.boot.read(r)) return;
    note_session(event.boot.session_id);
    reset = true;
  } else {
    return;
  }
  if (!events_ordered_) return deliver_event(event);
  if (reset) {
    // A rebooted board counts afresh: nothing before this event is missing.
    early_events_.clear();
    events_gap_ = false;
    next_event_ = static_cast<uint16_t>(sequence + 1);
    return deliver_event(event);
  }
  const uint16_t ahead = static_cast<uint16_t>(sequence - next_event_);
  if (ahead >= 0x8000) {
    ++stats_.duplicate_events;  // passed on already (a resend, or the line doubled it)
    return;
  }
  if (ahead > 0) {
    // One before it was lost: hold this one until the gap is filled (EVENTS).
    events_gap_ = true;
    const bool held = std::any_of(early_events_.begin(), early_events_.end(),
                                  [&](const auto& e) { return e.first == sequence; });
    if (held) {
      ++stats_.duplicate_events;
    } else if (early_events_.size() < 4 * kKeptEvents) {
      early_events_.emplace_back(sequence, event);
    }
    return;
  }
  ++next_event_;
  deliver_event(event);
  deliver_early_events();
}

void BoardClient::deliver_early_events() {
  for (;;) {
    const auto next = std::find_if(early_events_.begin(), early_events_.end(),
                                   [&](const auto& e) { return e.first == next_event_; });
    if (next == early_events_.end()) break;
    const Event held = next->second;
    early_events_.erase(next);
    ++next_event_;
    deliver_event(held);
  }
  // Whatever is still held lies behind a gap (or is stale after a skip).
  events_gap_ = !early_events_.empty();
}

void BoardClient::deliver_event(const Event& event) {
  if (on_event_) on_event_(event);
}

// A gap to fill, or events to acknowledge before the board stops to wait.
bool BoardClient::events_need_attention() const {
  if (!events_ordered_) return false;
  return events_gap_ || !acknowledging_ ||
         static_cast<uint16_t>(next_event_ - acknowledged_) >= kKeptEvents / 2;
}

bool BoardClient::recover_events(std::string* error) {
  if (!events_ordered_) return true;
  Operation operation(this);
  // Each round gets back what the board still keeps (the resent events are
  // passed on as they arrive, before the reply); resends lost again need
  // another round, for as long as rounds make progress.
  int idle_rounds = 0;
  while (idle_rounds <= options_.retries && !past_operation_deadline()) {
    const uint16_t before = next_event_;
    EventsRequest request;
    request.from = next_event_;
    uint8_t payload[4];
    WireWriter w(payload, sizeof payload);
    request.write(w);
    Reply reply;
    if (!this->request(MessageType::kEvents, payload, w.size(), &reply, error)) return false;
    acknowledging_ = true;
    acknowledged_ = request.from;
    EventsReply answer;
    WireReader r(reply.payload.data(), reply.payload.size());
    if (!answer.read(r)) {
      *error = "malformed EVENTS reply";
      return false;
    }
    uint16_t gone = static_cast<uint16_t>(answer.oldest - next_event_);
    if (gone >= 0x8000) gone = 0;
    if (gone > 0) {
      // No longer kept on the board: skip them, count them, and pass on
      // what was held behind them.
      stats_.events_lost += gone;
      next_event_ = answer.oldest;
      early_events_.erase(std::remove_if(early_events_.begin(), early_events_.end(),
                                         [&](const auto& e) {
                                           return static_cast<uint16_t>(e.first - next_event_) >=
                                                  0x8000;
                                         }),
                          early_events_.end());
      deliver_early_events();
    }
    stats_.events_recovered += static_cast<uint16_t>(next_event_ - before) - gone;
    // Caught up (events sent after the reply may already have come too).
    if (static_cast<uint16_t>(next_event_ - answer.next) < 0x8000) return true;
    idle_rounds = next_event_ == before ? idle_rounds + 1 : 0;
  }
  *error = "events from number " + std::to_string(next_event_) +
           " on were lost on the line and could not be fetched again";
  return false;
}

bool BoardClient::reconnect(std::string* error) {
  if (!reopen_ || options_.reconnect_ms <= 0) return false;
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.reconnect_ms);
  transport_.reset();
  std::string last;
  while (Clock::now() < deadline) {
    std::unique_ptr<Transport> t = reopen_(&last);
    if (t) {
      transport_ = std::move(t);
      decoder_.reset();
      ++stats_.reconnects;
      return true;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));  // Serial Studio's 1 s rescan
  }
  *error +=
      " (reconnect failed for " + std::to_string(options_.reconnect_ms) + " ms: " + last + ")";
  return false;
}

int BoardClient::next_reply(int timeout_ms, Reply* reply, std::string* error, Heard* heard,
                            bool stop_on_event) {
  if (!pending_replies_.empty()) {
    *reply = std::move(pending_replies_.front());
    pending_replies_.erase(pending_replies_.begin());
    return 1;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  uint8_t bytes[512];
  int found = 0;
  do {
    if (!transport_) return -1;
    const long n = transport_->read(bytes, sizeof bytes, ms_left(deadline), error);
    if (n < 0) {
      if (reconnect(error)) continue;
      return -1;
    }
    stats_.bytes_received += static_cast<uint64_t>(n);
    for (long i = 0; i < n; ++i) {
      const uint32_t rejected_before = rejected_frames(decoder_.stats());
      if (!decoder_.push(bytes[i])) {
        if (rejected_frames(decoder_.stats()) != rejected_before) {
          if (frame_tap_) frame_tap_({false, 0, 0, 0, false});
          if (heard) heard->noise = true;
          // Most likely the answer we wait for, garbled: wait a little for
          // more, not the whole timeout.
          deadline = std::min(deadline, Clock::now() + std::chrono::milliseconds(grace_ms()));
        }
        continue;
      }
      const Frame& f = decoder_.frame();
      ++stats_.frames_received;
      if (frame_tap_) frame_tap_({false, f.type, f.sequence, f.length, true});
      const bool is_reply = (f.type & kReplyBit) && f.type < 0xC0;
      if (is_reply || f.type == static_cast<uint8_t>(MessageType::kError)) {
        Reply r{f.type, f.sequence, std::vector<uint8_t>(f.payload, f.payload + f.length)};
        pending_replies_.push_back(std::move(r));
      } else {
        dispatch_event(f.type, f.sequence, f.payload, f.length);
      }
    }
    if (!pending_replies_.empty()) {
      *reply = std::move(pending_replies_.front());
      pending_replies_.erase(pending_replies_.begin());
      found = 1;
    }
  } while (!found && !(stop_on_event && (stop_reading_ || events_need_attention())) &&
           ms_left(deadline) > 0);
  return found;
}

bool BoardClient::check_reply(const Reply& reply, MessageType type, std::string* error) {
  if (reply.type == static_cast<uint8_t>(MessageType::kError)) {
    *error = "board: " + describe_error_reply(reply.payload);
    return false;
  }
  if (reply.type != reply_type(type)) {
    *error = std::string("board answered ") + message_type_name(static_cast<uint8_t>(type)) +
             " with " + message_type_name(reply.type);
    return false;
  }
  return true;
}

bool BoardClient::request(MessageType type, const uint8_t* payload, size_t size, Reply* reply,
                          std::string* error, int timeout_ms) {
  Operation operation(this);
  if (timeout_ms <= 0) timeout_ms = options_.timeout_ms;
  const uint16_t sequence = ++sequence_;
  int attempts = 0, silent = 0;
  // Sent again while the line shows noise (each attempt may be the one that
  // gets through); a board that stays silent fails it after `retries`.
  while (silent <= options_.retries) {
    if (attempts > 0 && past_operation_deadline()) {
      *error = std::string("no intact answer to ") + message_type_name(static_cast<uint8_t>(type)) +
               " within " + std::to_string(options_.operation_limit_ms / 1000) + " s (" +
               std::to_string(attempts) + " attempts over a noisy line, " +
               std::to_string(rejected_frames(decoder_.stats())) + " garbled frames so far)";
      return false;
    }
    if (attempts++ > 0) ++stats_.retries;
    if (!transport_ && !reconnect(error)) return false;
    if (!send(static_cast<uint8_t>(type), sequence, payload, size, error)) {
      if (reconnect(error)) continue;
      return false;
    }
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    Heard heard;
    for (;;) {
      const int got = next_reply(ms_left(deadline), reply, error, &heard);
      if (got < 0) return false;
      if (got == 0) break;  // timed out or garbled: send again
      if (reply->sequence == sequence) {
        sizer_.success();
        return check_reply(*reply, type, error);
      }
      ++stats_.stray_replies;  // a late answer to an earlier attempt or request
      heard.noise = true;
    }
    sizer_.failure();
    silent = heard.noise ? 0 : silent + 1;
  }
  *error = std::string("no answer to ") + message_type_name(static_cast<uint8_t>(type)) +
           " after " + std::to_string(attempts) + " attempts of " + std::to_string(timeout_ms) +
           " ms (" + transport_->description() + ")";
  return false;
}

bool BoardClient::hello(Capabilities* caps, std::string* error) {
  Reply reply;
  if (!request(MessageType::kHello, nullptr, 0, &reply, error)) return false;
  WireReader r(reply.payload.data(), reply.payload.size());
  if (!caps_.read(r)) {
    *error = "malformed HELLO reply";
    return false;
  }
  if (caps_.protocol_version != kProtocolVersion) {
    *error = "board speaks protocol version " + std::to_string(caps_.protocol_version) +
             ", we speak " + std::to_string(kProtocolVersion);
    return false;
  }
  note_session(caps_.session_id);
  if (session_id_ == 0) session_id_ = caps_.session_id;
  // Events up to here were sent before this reply: count on from the board's next.
  events_ordered_ = (caps_.flags & kKeepsEvents) != 0;
  next_event_ = caps_.next_event;
  early_events_.clear();
  events_gap_ = false;
  acknowledging_ = false;
  size_t frame = caps_.max_payload > kDownloadReplyHeader ? caps_.max_payload : kMaxPayload;
  frame -= kDownloadReplyHeader;  // the larger header of chunks and pieces
  if (options_.chunk_bytes > 0 && options_.chunk_bytes < frame) frame = options_.chunk_bytes;
  if (frame != sizer_.max_bytes()) sizer_.set_max(frame);
  if (caps) *caps = caps_;
  return true;
}

bool BoardClient::status(BoardStatus* status, std::string* error) {
  Reply reply;
  if (!request(MessageType::kStatus, nullptr, 0, &reply, error)) return false;
  WireReader r(reply.payload.data(), reply.payload.size());
  if (!status->read(r)) {
    *error = "malformed STATUS reply";
    return false;
  }
  note_session(status->session_id);
  return true;
}

bool BoardClient::upload(UploadKind kind, const std::vector<uint8_t>& data,
                         const std::function<void(uint32_t, uint32_t)>& progress,
                         UploadReport* report, std::string* error) {
  // A board built with fewer ops (GRUWB_FW_OPS) would only refuse the model
  // after the whole upload: say so now, naming the ops.
  if (kind == UploadKind::kModel && caps_.protocol_version != 0) {
    const std::string missing = ops_missing_on_board(caps_, data);
    if (!missing.empty()) {
      *error = std::string("the board '") + caps_.board + "' has no kernel for " + missing +
               " (its firmware's op table, GRUWB_FW_OPS, lacks them)";
      return false;
    }
  }
  Operation operation(this);
  const auto start = Clock::now();
  const uint64_t wire_before = stats_.bytes_sent;
  UploadReport local;
  UploadReport& out = report ? *report : local;
  out = UploadReport();
  UploadBegin begin;
  begin.kind = kind;
  begin.total_bytes = static_cast<uint32_t>(data.size());
  sha256(data.data(), data.size(), begin.sha256);
  uint8_t payload[kMaxPayload];
  WireWriter w(payload, sizeof payload);
  begin.write(w);
  Reply reply;
  if (!request(MessageType::kUploadBegin, payload, w.size(), &reply, error)) return false;
  UploadAck ack;
  WireReader r(reply.payload.data(), reply.payload.size());
  if (!ack.read(r)) {
    *error = "malformed UPLOAD_BEGIN reply";
    return false;
  }
  out.resumed_from = ack.next_offset;
  const uint32_t total = begin.total_bytes;

  struct InFlight {
    uint16_t sequence;
    uint32_t offset;
  };
  std::vector<InFlight> in_flight;
  uint32_t acked = ack.next_offset;
  uint32_t next = acked;
  uint32_t sent_end = acked;  // bytes below it were sent before: sending them again is a resend
  bool complete = ack.result == UploadResult::kComplete;
  int silent_rounds = 0;
  // Replies to chunks sent before the last go-back are ignored: they describe
  // a stream we already abandoned.
  uint16_t valid_from = static_cast<uint16_t>(sequence_ + 1);
  const auto go_back = [&](uint32_t offset) {
    in_flight.clear();
    next = acked = offset;
    valid_from = static_cast<uint16_t>(sequence_ + 1);
    ++out.retries;
  };
  while (!complete) {
    if (past_operation_deadline()) {
      *error = "upload reached byte " + std::to_string(acked) + " of " + std::to_string(total) +
               " in the " + std::to_string(options_.operation_limit_ms / 1000) +
               " s limit (a noisy line: " + std::to_string(out.retries) + " go-backs)";
      return false;
    }
    while (static_cast<int>(in_flight.size()) < options_.window && next < total) {
      const uint32_t n = static_cast<uint32_t>(std::min<size_t>(sizer_.bytes(), total - next));
      WireWriter c(payload, sizeof payload);
      c.u8(static_cast<uint8_t>(kind));
      c.u32(next);
      c.bytes(data.data() + next, n);
      const uint16_t sequence = ++sequence_;
      if (!send(static_cast<uint8_t>(MessageType::kUploadChunk), sequence, payload, c.size(),
                error)) {
        if (!reconnect(error)) return false;
        go_back(acked);
        continue;
      }
      const uint32_t fresh = next + n > sent_end ? next + n - std::max(next, sent_end) : 0;
      out.payload_bytes += fresh;
      out.resent_bytes += n - fresh;
      sent_end = std::max(sent_end, next + n);
      in_flight.push_back({sequence, next});
      next += n;
    }
    Heard heard;
    const int got = next_reply(options_.timeout_ms, &reply, error, &heard);
    if (got < 0) {
      if (!reconnect(error)) return false;
      go_back(acked);
      continue;
    }
    if (got == 0) {
      // Nothing (intact) back in time: a chunk or its ack was lost. Go back
      // to what the board confirmed; only silence counts against the limit.
      sizer_.failure();
      silent_rounds = heard.noise ? 0 : silent_rounds + 1;
      if (silent_rounds > options_.retries) {
        *error = "upload stalled at byte " + std::to_string(acked) + " of " +
                 std::to_string(total) + ": no answer after " +
                 std::to_string(options_.retries + 1) + " x " +
                 std::to_string(options_.timeout_ms) + " ms";
        return false;
      }
      ++stats_.retries;
      go_back(acked);
      continue;
    }
    if (reply.type == static_cast<uint8_t>(MessageType::kError)) {
      *error = "board: " + describe_error_reply(reply.payload);
      return false;
    }
    const auto it = std::find_if(in_flight.begin(), in_flight.end(),
                                 [&](const InFlight& f) { return f.sequence == reply.sequence; });
    if (reply.type != reply_type(MessageType::kUploadChunk) || it == in_flight.end() ||
        static_cast<uint16_t>(reply.sequence - valid_from) >= 0x8000) {
      ++stats_.stray_replies;
      continue;
    }
    WireReader ar(reply.payload.data(), reply.payload.size());
    if (!ack.read(ar)) {
      *error = "malformed UPLOAD_CHUNK reply";
      return false;
    }
    silent_rounds = 0;
    const uint32_t chunk_offset = it->offset;
    in_flight.erase(in_flight.begin(), it + 1);
    if (ack.result == UploadResult::kComplete) {
      complete = true;
      acked = total;
    } else if (ack.result == UploadResult::kHashMismatch) {
      *error =
          "the board's SHA-256 of the upload does not match ours (data corrupted in RAM or on a "
          "link without working CRC); it restarted the upload";
      return false;
    } else if (ack.next_offset <= chunk_offset) {
      // The board skipped this chunk (one before it got lost): resend from its offset.
      sizer_.failure();
      ++stats_.go_backs;
      go_back(ack.next_offset);
    } else {
      sizer_.success();
      acked = std::max(acked, ack.next_offset);
    }
    if (progress) progress(acked, total);
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  out.wire_bytes = stats_.bytes_sent - wire_before;
  if (progress) progress(total, total);
  return true;
}

bool BoardClient::configure(const TrainingSettings& settings, ConfigureReply* reply_out,
                            std::string* error) {
  uint8_t payload[128];
  WireWriter w(payload, sizeof payload);
  settings.write(w);
  Reply reply;
  if (!request(MessageType::kConfigure, payload, w.size(), &reply, error)) return false;
  WireReader r(reply.payload.data(), reply.payload.size());
  if (!reply_out->read(r)) {
    *error = "malformed CONFIGURE reply";
    return false;
  }
  return true;
}

bool BoardClient::control(MessageType type, BoardState* state, std::string* error) {
  Reply reply;
  if (!request(type, nullptr, 0, &reply, error)) return false;
  if (reply.payload.empty()) {
    *error = "empty control reply";
    return false;
  }
  if (state) *state = static_cast<BoardState>(reply.payload[0]);
  return true;
}

bool BoardClient::download(uint8_t what, std::vector<uint8_t>* out, std::string* error) {
  Operation operation(this);
  out->clear();
  uint32_t total = 1;
  while (out->size() < total) {
    // Pieces as large as the line carries now (the sizer learns from each).
    uint8_t payload[8];
    WireWriter w(payload, sizeof payload);
    w.u8(what);
    w.u32(static_cast<uint32_t>(out->size()));
    w.u16(static_cast<uint16_t>(sizer_.bytes()));
    Reply reply;
    if (!request(MessageType::kDownload, payload, w.size(), &reply, error)) {
      *error += " (downloaded " + std::to_string(out->size()) + " of " +
                (total > 1 ? std::to_string(total) : std::string("?")) + " bytes)";
      return false;
    }
    WireReader r(reply.payload.data(), reply.payload.size());
    const uint32_t offset = r.u32();
    total = r.u32();
    if (!r.ok || offset != out->size() || (r.remaining() == 0 && out->size() < total)) {
      *error = "malformed DOWNLOAD reply at offset " + std::to_string(out->size());
      return false;
    }
    out->insert(out->end(), r.rest(), r.rest() + r.remaining());
  }
  return true;
}

bool BoardClient::bench(const BenchRequest& bench, BenchReply* out, std::string* error,
                        int per_run_ms) {
  if (caps_.protocol_version != 0 && !(caps_.flags & kCanBench)) {
    *error = std::string("the board '") + caps_.board +
             "' cannot time inference: its firmware predates BENCH (HELLO flags)";
    return false;
  }
  uint8_t payload[16];
  WireWriter w(payload, sizeof payload);
  bench.write(w);
  const int64_t wait = options_.timeout_ms + static_cast<int64_t>(per_run_ms) * bench.runs;
  Reply reply;
  if (!request(MessageType::kBench, payload, w.size(), &reply, error,
               static_cast<int>(std::min<int64_t>(wait, 3600 * 1000)))) {
    return false;
  }
  WireReader r(reply.payload.data(), reply.payload.size());
  if (!out->read(r) || out->runs != bench.runs) {
    *error = "malformed BENCH reply";
    return false;
  }
  return true;
}

bool BoardClient::wait_events(int timeout_ms, const std::function<bool(const Event&)>& on_event,
                              std::string* error) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  bool keep_going = true;
  auto previous = on_event_;
  on_event_ = [&](const Event& e) {
    if (previous) previous(e);
    if (keep_going && !on_event(e)) keep_going = false;
    stop_reading_ = !keep_going;  // return now, not when the read's slice ends
  };
  bool ok = true;
  while (keep_going && ms_left(deadline) > 0) {
    if (events_need_attention() && !recover_events(error)) {
      ok = false;
      break;
    }
    Reply reply;
    const int got = next_reply(std::min(ms_left(deadline), 100), &reply, error, nullptr, true);
    if (got < 0) {
      ok = false;
      break;
    }
    if (got > 0) ++stats_.stray_replies;
  }
  on_event_ = previous;
  stop_reading_ = false;
  return ok;
}

}  // namespace gruwb::serial
