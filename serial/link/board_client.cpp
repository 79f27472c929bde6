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
}

const LinkStats& BoardClient::stats() const {
  stats_.decoder = decoder_.stats();
  return stats_;
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

void BoardClient::dispatch_event(const Frame& frame) {
  Event event;
  event.type = static_cast<MessageType>(frame.type);
  WireReader r(frame.payload, frame.length);
  if (event.type == MessageType::kMetric) {
    if (!event.metric.read(r)) return;
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
  } else {
    return;
  }
  if (on_event_) on_event_(event);
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

int BoardClient::next_reply(int timeout_ms, Reply* reply, std::string* error) {
  if (!pending_replies_.empty()) {
    *reply = std::move(pending_replies_.front());
    pending_replies_.erase(pending_replies_.begin());
    return 1;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
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
        if (frame_tap_ && rejected_frames(decoder_.stats()) != rejected_before)
          frame_tap_({false, 0, 0, 0, false});
        continue;
      }
      const Frame& f = decoder_.frame();
      ++stats_.frames_received;
      if (frame_tap_) frame_tap_({false, f.type, f.sequence, f.length, true});
      if ((f.type & kReplyBit) && f.type < 0xC0) {
        Reply r{f.type, f.sequence, std::vector<uint8_t>(f.payload, f.payload + f.length)};
        pending_replies_.push_back(std::move(r));
      } else if (f.type == static_cast<uint8_t>(MessageType::kError)) {
        Reply r{f.type, f.sequence, std::vector<uint8_t>(f.payload, f.payload + f.length)};
        pending_replies_.push_back(std::move(r));
      } else {
        dispatch_event(f);
      }
    }
    if (!pending_replies_.empty()) {
      *reply = std::move(pending_replies_.front());
      pending_replies_.erase(pending_replies_.begin());
      found = 1;
    }
  } while (!found && !stop_reading_ && ms_left(deadline) > 0);
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
  if (timeout_ms <= 0) timeout_ms = options_.timeout_ms;
  const uint16_t sequence = ++sequence_;
  for (int attempt = 0; attempt <= options_.retries; ++attempt) {
    if (attempt > 0) ++stats_.retries;
    if (!transport_ && !reconnect(error)) return false;
    if (!send(static_cast<uint8_t>(type), sequence, payload, size, error)) {
      if (reconnect(error)) continue;
      return false;
    }
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const int got = next_reply(ms_left(deadline), reply, error);
      if (got < 0) return false;
      if (got == 0) break;  // timed out: send again
      if (reply->sequence == sequence) return check_reply(*reply, type, error);
      ++stats_.stray_replies;  // a late answer to an earlier attempt or request
    }
  }
  *error = std::string("no answer to ") + message_type_name(static_cast<uint8_t>(type)) +
           " after " + std::to_string(options_.retries + 1) + " attempts of " +
           std::to_string(timeout_ms) + " ms (" + transport_->description() + ")";
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
  size_t chunk = caps_.max_payload > kUploadChunkHeader ? caps_.max_payload - kUploadChunkHeader
                                                        : kMaxPayload - kUploadChunkHeader;
  if (options_.chunk_bytes > 0 && options_.chunk_bytes < chunk) chunk = options_.chunk_bytes;

  struct InFlight {
    uint16_t sequence;
    uint32_t offset;
  };
  std::vector<InFlight> in_flight;
  uint32_t acked = ack.next_offset;
  uint32_t next = acked;
  bool complete = ack.result == UploadResult::kComplete;
  int idle_rounds = 0;
  // Replies to chunks sent before the last go-back are ignored: they describe
  // a stream we already abandoned.
  uint16_t valid_from = static_cast<uint16_t>(sequence_ + 1);
  while (!complete) {
    while (static_cast<int>(in_flight.size()) < options_.window && next < total) {
      const uint32_t n = static_cast<uint32_t>(std::min<size_t>(chunk, total - next));
      WireWriter c(payload, sizeof payload);
      c.u8(static_cast<uint8_t>(kind));
      c.u32(next);
      c.bytes(data.data() + next, n);
      const uint16_t sequence = ++sequence_;
      if (!send(static_cast<uint8_t>(MessageType::kUploadChunk), sequence, payload, c.size(),
                error)) {
        if (!reconnect(error)) return false;
        in_flight.clear();
        next = acked;
        valid_from = static_cast<uint16_t>(sequence_ + 1);
        continue;
      }
      out.payload_bytes += n;
      in_flight.push_back({sequence, next});
      next += n;
    }
    const int got = next_reply(options_.timeout_ms, &reply, error);
    if (got < 0) {
      if (!reconnect(error)) return false;
      in_flight.clear();
      next = acked;
      valid_from = static_cast<uint16_t>(sequence_ + 1);
      continue;
    }
    if (got == 0) {
      // Nothing back in time: a request or reply was lost. Go back to what
      // the board confirmed.
      if (++idle_rounds > options_.retries) {
        *error = "upload stalled at byte " + std::to_string(acked) + " of " +
                 std::to_string(total) + ": no answer after " +
                 std::to_string(options_.retries + 1) + " x " +
                 std::to_string(options_.timeout_ms) + " ms";
        return false;
      }
      ++stats_.retries;
      in_flight.clear();
      next = acked;
      valid_from = static_cast<uint16_t>(sequence_ + 1);
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
    idle_rounds = 0;
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
    } else {
      acked = std::max(acked, ack.next_offset);
      if (ack.next_offset <= chunk_offset) {
        // The board skipped this chunk (one before it got lost): resend from its offset.
        ++stats_.go_backs;
        in_flight.clear();
        next = ack.next_offset;
        acked = ack.next_offset;
        valid_from = static_cast<uint16_t>(sequence_ + 1);
      }
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
  out->clear();
  uint32_t total = 1;
  while (out->size() < total) {
    uint8_t payload[8];
    WireWriter w(payload, sizeof payload);
    w.u8(what);
    w.u32(static_cast<uint32_t>(out->size()));
    w.u16(0);
    Reply reply;
    if (!request(MessageType::kDownload, payload, w.size(), &reply, error)) return false;
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
    Reply reply;
    const int got = next_reply(std::min(ms_left(deadline), 100), &reply, error);
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
