#include "serial/firmware/device.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "engine/model/checked_size.h"
#include "engine/runtime/kernel.h"
#include "engine/runtime/op_resolver.h"
#include "engine/train/loss_output.h"
#include "serial/firmware/inference_bench.h"

namespace gruwb::serial {
namespace {

constexpr size_t kAlign = 16;
size_t align_up(size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }

bool changes_state(uint8_t type) {
  switch (static_cast<MessageType>(type)) {
    case MessageType::kHello:
    case MessageType::kStatus:
    case MessageType::kDownload:
    case MessageType::kEvents: return false;  // read-only: always answered fresh
    default: return true;
  }
}

}  // namespace

void Device::boot() {
  // Mix the boot entropy with a counter so two boots never share an id even
  // when the entropy source is weak (QEMU starts every run identically).
  static uint32_t boots = 0;
  ++boots;
  uint32_t id = board_.entropy() ^ (boots * 0x9E3779B9u) ^ static_cast<uint32_t>(board_.clock_us());
  id ^= id >> 16;
  id *= 0x85EBCA6Bu;
  id ^= id >> 13;
  session_id_ = id == 0 ? 1 : id;
  state_ = BoardState::kIdle;
  last_error_ = ErrorCode::kNone;
  model_upload_ = Upload();
  dataset_upload_ = Upload();
  checkpoint_upload_ = Upload();
  checkpoint_download_open_ = false;
  run_half_restored_ = false;
  configured_ = false;
  last_reply_bytes_ = 0;
  kept_count_ = 0;  // a reboot forgets what it sent
  decoder_.reset();
  Boot boot;
  boot.session_id = session_id_;
  boot.reset_reason = board_.reset_reason();
  uint8_t payload[8];
  WireWriter w(payload, sizeof payload);
  boot.write(w);
  send_event(MessageType::kBoot, payload, w.size());
}

void Device::poll() {
  uint8_t bytes[64];
  const size_t n = board_.uart_read(bytes, sizeof bytes);
  for (size_t i = 0; i < n; ++i) {
    if (decoder_.push(bytes[i])) handle(decoder_.frame());
  }
  if (state_ == BoardState::kTraining && !waiting_for_host()) {
    train_one();
  } else if (n == 0) {
    board_.idle();
  }
}

void Device::send(uint8_t type, uint16_t sequence, const uint8_t* payload, size_t length,
                  bool remember) {
  const size_t bytes = encode_frame(type, sequence, payload, length, tx_, sizeof tx_);
  if (bytes == 0) return;
  board_.uart_write(tx_, bytes);
  if (remember) {
    memcpy(last_reply_, tx_, bytes);
    last_reply_bytes_ = bytes;
  }
}

void Device::send_event(MessageType type, const uint8_t* payload, size_t length) {
  send(static_cast<uint8_t>(type), ++event_sequence_, payload, length, false);
  if (length > kMaxEventPayload) return;
  KeptEvent& kept = kept_events_[event_sequence_ % kKeptEvents];
  kept.type = static_cast<uint8_t>(type);
  kept.length = static_cast<uint16_t>(length);
  memcpy(kept.payload, payload, length);
  if (kept_count_ < kKeptEvents) ++kept_count_;
}

// A training step sends at most one event; a request may log one more.
bool Device::waiting_for_host() const {
  const uint16_t unacknowledged = static_cast<uint16_t>(event_sequence_ + 1 - host_next_event_);
  return host_acknowledges_ && unacknowledged < 0x8000 && unacknowledged + 2 > kKeptEvents;
}

// Sends the kept events from `from` on again, as they were, then the reply
// saying which sequence numbers the board still has.
void Device::on_events(const Frame& f) {
  WireReader r(f.payload, f.length);
  EventsRequest request;
  if (!request.read(r)) return send_error(f, ErrorCode::kBadRequest, "EVENTS: malformed payload");
  host_acknowledges_ = true;
  host_next_event_ = request.from;
  EventsReply reply;
  reply.next = static_cast<uint16_t>(event_sequence_ + 1);
  reply.oldest = static_cast<uint16_t>(reply.next - kept_count_);
  const uint16_t wanted = static_cast<uint16_t>(reply.next - request.from);
  const uint16_t count = wanted < kept_count_ ? wanted : kept_count_;
  for (uint16_t sequence = static_cast<uint16_t>(reply.next - count); sequence != reply.next;
       ++sequence) {
    const KeptEvent& kept = kept_events_[sequence % kKeptEvents];
    send(kept.type, sequence, kept.payload, kept.length, false);
  }
  WireWriter w(payload_, sizeof payload_);
  reply.write(w);
  send(reply_type(MessageType::kEvents), f.sequence, payload_, w.size(), false);
}

void Device::send_error(const Frame& request, ErrorCode code, const char* format, ...) {
  ErrorReply error;
  error.request_type = request.type;
  error.code = code;
  va_list args;
  va_start(args, format);
  vsnprintf(error.message, sizeof error.message, format, args);
  va_end(args);
  WireWriter w(payload_, sizeof payload_);
  error.write(w);
  send(static_cast<uint8_t>(MessageType::kError), request.sequence, payload_, w.size(),
       changes_state(request.type));
}

void Device::log(uint8_t level, const char* format, ...) {
  char text[200];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  uint8_t payload[sizeof text + 2];
  WireWriter w(payload, sizeof payload);
  w.u8(level);
  w.text(text);
  send_event(MessageType::kLog, payload, w.size());
}

void Device::handle(const Frame& frame) {
  if (changes_state(frame.type) && last_reply_bytes_ > 0 && frame.sequence == last_sequence_ &&
      frame.type == last_type_) {
    board_.uart_write(last_reply_, last_reply_bytes_);  // a retry: same answer, no second effect
    return;
  }
  if (changes_state(frame.type)) {
    last_sequence_ = frame.sequence;
    last_type_ = frame.type;
  }
  switch (static_cast<MessageType>(frame.type)) {
    case MessageType::kHello: return on_hello(frame);
    case MessageType::kStatus: return on_status(frame);
    case MessageType::kUploadBegin: return on_upload_begin(frame);
    case MessageType::kUploadChunk: return on_upload_chunk(frame);
    case MessageType::kConfigure: return on_configure(frame);
    case MessageType::kStart:
    case MessageType::kPause:
    case MessageType::kStop:
    case MessageType::kReset: return on_control(frame);
    case MessageType::kDownload: return on_download(frame);
    case MessageType::kBench: return on_bench(frame);
    case MessageType::kEvents: return on_events(frame);
    default:
      return send_error(frame, ErrorCode::kUnknownType, "unknown message type 0x%02x", frame.type);
  }
}

void Device::on_hello(const Frame& f) {
  host_acknowledges_ = false;  // a new host acknowledges again if it can
  Capabilities caps;
  caps.protocol_version = kProtocolVersion;
  caps.flags = kCanTrain | kCanBench | kKeepsEvents | board_.flags;
  caps.next_event = static_cast<uint16_t>(event_sequence_ + 1);
  caps.max_payload = static_cast<uint16_t>(kMaxPayload);
  caps.session_id = session_id_;
  caps.ram_bytes = static_cast<uint32_t>(board_.ram_bytes);
  caps.clock_hz = board_.clock_hz();
  strncpy(caps.engine_version, kEngineVersion, sizeof caps.engine_version - 1);
  strncpy(caps.board, board_.name, sizeof caps.board - 1);
  for (int32_t code = -128; code < 256 && caps.op_count < kMaxReportedOps; ++code) {
    if (code != kOpCustom && find_kernel(code, nullptr))
      caps.ops[caps.op_count++] = static_cast<int16_t>(code);
  }
  // The fused cells in this image's op table (GRUWB_GRU, and plugin cells such as GRUWB_MGU),
  // so the host can tell which cell models the board runs.
  const OpResolver& table = default_op_resolver();
  for (int i = 0; i < table.count && caps.custom_op_count < kMaxCustomOps; ++i) {
    const KernelRegistration* kernel = table.kernels[i];
    if (kernel->op_code != kOpCustom || !kernel->custom_code) continue;
    strncpy(caps.custom_ops[caps.custom_op_count++], kernel->custom_code,
            sizeof caps.custom_ops[0] - 1);
  }
  WireWriter w(payload_, sizeof payload_);
  caps.write(w);
  send(reply_type(MessageType::kHello), f.sequence, payload_, w.size(), false);
}

void Device::on_status(const Frame& f) {
  BoardStatus s;
  s.session_id = session_id_;
  s.state = state_;
  s.last_error = last_error_;
  s.epoch = configured_ ? run_.epoch() : 0;
  s.step = configured_ ? static_cast<uint32_t>(trainer_.step()) : 0;
  s.samples = configured_ ? run_.samples_in_epoch() : 0;
  s.model_bytes = model_upload_.total;
  s.model_received = model_upload_.received;
  s.dataset_bytes = dataset_upload_.total;
  s.dataset_received = dataset_upload_.received;
  s.arena_bytes = static_cast<uint32_t>(arena_bytes_);
  if (configured_) {
    s.weights_bytes = static_cast<uint32_t>(weights_blob_bytes(trainer_));
    // Hashing the weights takes a while on a board, so only when they rest.
    if (state_ != BoardState::kTraining) {
      if (!weights_sha_valid_) {
        Sha256 hash;
        uint8_t chunk[256];
        for (size_t at = 0; at < s.weights_bytes; at += sizeof chunk) {
          const size_t n = read_weights_blob(trainer_, at, chunk, sizeof chunk);
          hash.update(chunk, n);
        }
        hash.finish(weights_sha_);
        weights_sha_valid_ = true;
      }
      memcpy(s.weights_sha256, weights_sha_, 32);
    }
  }
  WireWriter w(payload_, sizeof payload_);
  s.write(w);
  send(reply_type(MessageType::kStatus), f.sequence, payload_, w.size(), false);
}

size_t Device::dataset_offset() const { return align_up(model_upload_.total); }

Device::Upload& Device::upload_for(UploadKind kind) {
  if (kind == UploadKind::kModel) return model_upload_;
  return kind == UploadKind::kDataset ? dataset_upload_ : checkpoint_upload_;
}

void Device::invalidate_training() {
  checkpoint_upload_ = Upload();
  checkpoint_download_open_ = false;
  run_half_restored_ = false;
  configured_ = false;
  arena_bytes_ = 0;
  run_end_ = 0;
  weights_sha_valid_ = false;
  if (state_ != BoardState::kFailed) state_ = BoardState::kIdle;
}

void Device::send_upload_ack(const Frame& f, UploadKind kind, UploadResult result) {
  const Upload& u = upload_for(kind);
  UploadAck ack;
  ack.kind = kind;
  ack.result = result;
  ack.next_offset = u.received;
  ack.total_bytes = u.total;
  WireWriter w(payload_, sizeof payload_);
  ack.write(w);
  send(f.type | kReplyBit, f.sequence, payload_, w.size(), true);
}

void Device::on_upload_begin(const Frame& f) {
  WireReader r(f.payload, f.length);
  UploadBegin begin;
  if (!begin.read(r))
    return send_error(f, ErrorCode::kBadRequest, "UPLOAD_BEGIN: malformed payload");
  const bool is_model = begin.kind == UploadKind::kModel;
  const bool is_checkpoint = begin.kind == UploadKind::kCheckpoint;
  Upload& u = upload_for(begin.kind);
  const bool same =
      u.begun && u.total == begin.total_bytes && memcmp(u.sha256, begin.sha256, 32) == 0;
  // The model the board already holds, complete: nothing changes, so even a
  // running run may hear it (a host making sure before BENCH).
  if (same && u.complete && !is_checkpoint)
    return send_upload_ack(f, begin.kind, UploadResult::kComplete);
  if (state_ == BoardState::kTraining || state_ == BoardState::kPaused) {
    return send_error(f, ErrorCode::kBadState, "cannot upload while a run is %s (STOP it first)",
                      board_state_name(state_));
  }
  if (begin.kind == UploadKind::kDataset && !model_upload_.complete) {
    return send_error(f, ErrorCode::kNoModel, "upload the model before the dataset");
  }
  if (is_checkpoint && (!configured_ || state_ != BoardState::kReady)) {
    return send_error(f, ErrorCode::kBadState,
                      "a checkpoint goes into a configured run before START (state: %s)",
                      board_state_name(state_));
  }
  if (is_checkpoint && begin.total_bytes != run_.checkpoint_bytes()) {
    return send_error(f, ErrorCode::kBadRequest,
                      "checkpoint of %u bytes, this run's has %u (another model, scope or "
                      "optimizer?)",
                      static_cast<unsigned>(begin.total_bytes),
                      static_cast<unsigned>(run_.checkpoint_bytes()));
  }
  const size_t start = is_model ? 0 : dataset_offset();
  size_t end = 0;
  const bool fits = checked_add(start, begin.total_bytes, &end) && end <= board_.ram_bytes;
  if (!is_checkpoint && (begin.total_bytes == 0 || !fits)) {
    return send_error(
        f, ErrorCode::kTooLarge, "%s of %u bytes does not fit the board's %u bytes of RAM%s",
        is_model ? "model" : "dataset", static_cast<unsigned>(begin.total_bytes),
        static_cast<unsigned>(start < board_.ram_bytes ? board_.ram_bytes - start : 0),
        is_model ? "" : " left after the model");
  }
  // Same content as the upload in progress (or done): resume where it stopped.
  if (same) {
    return send_upload_ack(f, begin.kind,
                           u.complete ? UploadResult::kComplete : UploadResult::kInProgress);
  }
  if (!is_checkpoint) invalidate_training();
  u = Upload();
  u.total = begin.total_bytes;
  memcpy(u.sha256, begin.sha256, 32);
  u.begun = true;
  if (!is_checkpoint) u.data = board_.ram + start;
  // A new model moves where the dataset goes.
  if (is_model) dataset_upload_ = Upload();
  send_upload_ack(f, begin.kind, UploadResult::kInProgress);
}

void Device::on_upload_chunk(const Frame& f) {
  WireReader r(f.payload, f.length);
  const uint8_t kind_byte = r.u8();
  const uint32_t offset = r.u32();
  if (!r.ok || kind_byte < 1 || kind_byte > 3) {
    return send_error(f, ErrorCode::kBadRequest, "UPLOAD_CHUNK: malformed payload");
  }
  const UploadKind kind = static_cast<UploadKind>(kind_byte);
  Upload& u = upload_for(kind);
  if (!u.begun) return send_error(f, ErrorCode::kBadState, "UPLOAD_CHUNK without UPLOAD_BEGIN");
  if (u.complete) return send_upload_ack(f, kind, UploadResult::kComplete);
  const size_t length = r.remaining();
  // Only the next expected bytes are taken; anything else (a duplicate, a
  // chunk after a lost one) is answered with the offset we need.
  if (offset != u.received || length == 0 || length > u.total - u.received) {
    return send_upload_ack(f, kind, UploadResult::kInProgress);
  }
  if (kind == UploadKind::kCheckpoint) {
    checkpoint_download_open_ = false;  // the run's state changes under it
    run_half_restored_ = true;
    const Status s = run_.write_checkpoint(u.received, r.rest(), length);
    if (!s.ok()) {
      invalidate_training();  // the run may be half restored: configure again
      return send_error(f, ErrorCode::kEngine, "checkpoint: %s", s.message());
    }
  } else {
    memcpy(u.data + u.received, r.rest(), length);
  }
  u.hash.update(r.rest(), length);
  u.received += static_cast<uint32_t>(length);
  if (u.received < u.total) return send_upload_ack(f, kind, UploadResult::kInProgress);
  uint8_t digest[32];
  u.hash.finish(digest);
  if (memcmp(digest, u.sha256, 32) != 0) {
    // Corruption that slipped past the CRC: start this upload over (a
    // checkpoint's run stays half restored, and refuses START, until then).
    u.received = 0;
    u.hash.reset();
    log(2, "%s upload: SHA-256 mismatch, restarting%s",
        kind == UploadKind::kModel     ? "model"
        : kind == UploadKind::kDataset ? "dataset"
                                       : "checkpoint",
        kind == UploadKind::kCheckpoint ? " (the run is half restored until it completes)" : "");
    return send_upload_ack(f, kind, UploadResult::kHashMismatch);
  }
  u.complete = true;
  if (kind == UploadKind::kCheckpoint) return restore_checkpoint(f);
  send_upload_ack(f, kind, UploadResult::kComplete);
}

void Device::restore_checkpoint(const Frame& f) {
  const Status s = run_.finish_checkpoint_write();
  if (!s.ok()) {
    invalidate_training();  // the run may be half restored: configure again
    return send_error(f, ErrorCode::kEngine, "checkpoint: %s", s.message());
  }
  run_half_restored_ = false;
  weights_sha_valid_ = false;
  log(1, "resumed from a checkpoint at epoch %u, sample %u, step %u",
      static_cast<unsigned>(run_.epoch()), static_cast<unsigned>(run_.samples_in_epoch()),
      static_cast<unsigned>(trainer_.step()));
  send_upload_ack(f, UploadKind::kCheckpoint, UploadResult::kComplete);
}

void Device::on_configure(const Frame& f) {
  WireReader r(f.payload, f.length);
  TrainingSettings settings;
  if (!settings.read(r))
    return send_error(f, ErrorCode::kBadRequest, "CONFIGURE: malformed settings");
  if (state_ == BoardState::kTraining || state_ == BoardState::kPaused) {
    return send_error(f, ErrorCode::kBadState, "cannot configure while a run is %s",
                      board_state_name(state_));
  }
  if (!model_upload_.complete) return send_error(f, ErrorCode::kNoModel, "no model uploaded");
  if (!dataset_upload_.complete) return send_error(f, ErrorCode::kNoDataset, "no dataset uploaded");
  invalidate_training();
  state_ = BoardState::kIdle;
  Status s = Model::load(model_upload_.data, model_upload_.total, &model_);
  if (!s.ok()) return send_error(f, ErrorCode::kEngine, "model: %s", s.message());
  DatasetHeader header;
  if (!read_dataset_header(dataset_upload_.data, dataset_upload_.total, &header)) {
    return send_error(f, ErrorCode::kBadRequest, "dataset: not a GWDS blob of the size announced");
  }
  // Pool: model | dataset | sample order | training arena (each end checked:
  // 32-bit sizes must not wrap past the pool).
  size_t order_at = 0, order_bytes = 0, arena_at = 0;
  const bool placed = checked_add(dataset_offset(), dataset_upload_.total, &order_at) &&
                      checked_align_up(order_at, kAlign, &order_at) &&
                      checked_mul(header.sample_count, sizeof(uint32_t), &order_bytes) &&
                      checked_add(order_at, order_bytes, &arena_at) &&
                      checked_align_up(arena_at, kAlign, &arena_at);
  if (!placed || arena_at >= board_.ram_bytes) {
    return send_error(f, ErrorCode::kOutOfMemory,
                      "no RAM left for training after model and dataset");
  }
  const size_t arena_room = board_.ram_bytes - arena_at;
  if (settings.config.loss_output < 0) {
    // The host's automatic choice, with the dataset's classes.
    LossOutputRequest request;
    request.class_count = header.classes;
    s = choose_loss_output(model_, request, &settings.config.loss_output);
    if (!s.ok()) return send_error(f, ErrorCode::kEngine, "%s", s.message());
  }
  s = trainer_.prepare(model_, settings.config, board_.ram + arena_at, arena_room);
  if (!s.ok() && s.code() == StatusCode::kOutOfMemory) {
    return send_error(f, ErrorCode::kOutOfMemory, "training needs %u bytes of arena, %u are free",
                      static_cast<unsigned>(trainer_.arena_bytes_needed()),
                      static_cast<unsigned>(arena_room));
  }
  if (!s.ok()) return send_error(f, ErrorCode::kEngine, "%s", s.message());
  window_cycles_ = 0;
  window_samples_ = 0;
  s = run_.begin(&trainer_, settings, dataset_upload_.data, dataset_upload_.total,
                 reinterpret_cast<uint32_t*>(board_.ram + order_at), header.sample_count);
  if (!s.ok()) return send_error(f, ErrorCode::kBadRequest, "%s", s.message());
  settings_ = settings;
  configured_ = true;
  arena_bytes_ = trainer_.arena_bytes_needed();
  run_end_ = arena_at + arena_bytes_;
  state_ = BoardState::kReady;
  const TrainingMemory m = trainer_.memory();
  ConfigureReply reply;
  reply.arena_bytes = static_cast<uint32_t>(arena_bytes_);
  reply.ram_free = static_cast<uint32_t>(arena_room);
  reply.weight_bytes = static_cast<uint32_t>(m.weight_bytes);
  reply.gradient_bytes = static_cast<uint32_t>(m.gradient_bytes);
  reply.optimizer_bytes = static_cast<uint32_t>(m.optimizer_bytes);
  reply.activation_bytes = static_cast<uint32_t>(m.activation_bytes);
  reply.other_bytes = static_cast<uint32_t>(m.other_bytes);
  reply.trainable_count = static_cast<uint32_t>(trainer_.weight_count());
  reply.download_bytes = static_cast<uint32_t>(weights_blob_bytes(trainer_));
  WireWriter w(payload_, sizeof payload_);
  reply.write(w);
  send(reply_type(MessageType::kConfigure), f.sequence, payload_, w.size(), true);
}

void Device::on_control(const Frame& f) {
  const MessageType type = static_cast<MessageType>(f.type);
  const uint64_t now = board_.clock_us();
  if (type == MessageType::kReset) {
    uint8_t payload[1] = {static_cast<uint8_t>(state_)};
    send(f.type | kReplyBit, f.sequence, payload, 1, true);
    board_.reset();  // a board reboots here; the host simulation calls boot()
    return;
  }
  if (type == MessageType::kStart) {
    if (run_half_restored_) {
      return send_error(f, ErrorCode::kBadState,
                        "START refused: a checkpoint upload stopped part-way or failed its "
                        "SHA-256, so the run is half restored (upload it again or CONFIGURE)");
    }
    if (state_ == BoardState::kReady) {
      state_ = BoardState::kTraining;
    } else if (state_ == BoardState::kPaused) {
      run_.resume(now);
      state_ = BoardState::kTraining;
    } else if (state_ != BoardState::kTraining) {
      return send_error(f, configured_ ? ErrorCode::kBadState : ErrorCode::kNoModel,
                        "START needs a configured run (state: %s)", board_state_name(state_));
    }
  } else if (type == MessageType::kPause) {
    if (state_ == BoardState::kTraining) {
      run_.pause(now);
      state_ = BoardState::kPaused;
    } else if (state_ != BoardState::kPaused) {
      return send_error(f, ErrorCode::kBadState, "PAUSE while %s", board_state_name(state_));
    }
  } else {  // STOP: the weights stay as they are, ready for DOWNLOAD
    if (state_ == BoardState::kTraining || state_ == BoardState::kPaused)
      state_ = BoardState::kDone;
  }
  uint8_t payload[1] = {static_cast<uint8_t>(state_)};
  send(f.type | kReplyBit, f.sequence, payload, 1, true);
}

bool Device::begin_download_reply(const Frame& f, uint32_t offset, uint32_t total,
                                  uint32_t max_bytes, size_t* n) {
  if (offset > total) {
    send_error(f, ErrorCode::kBadRequest, "DOWNLOAD offset %u past the end (%u)",
               static_cast<unsigned>(offset), static_cast<unsigned>(total));
    return false;
  }
  const uint32_t room = static_cast<uint32_t>(kMaxPayload - kDownloadReplyHeader);
  if (max_bytes == 0 || max_bytes > room) max_bytes = room;
  WireWriter w(payload_, sizeof payload_);
  w.u32(offset);
  w.u32(total);
  *n = total - offset < max_bytes ? total - offset : max_bytes;
  return true;
}

void Device::on_download(const Frame& f) {
  WireReader r(f.payload, f.length);
  const uint8_t what = r.u8();
  const uint32_t offset = r.u32();
  uint32_t max_bytes = r.u16();
  if (!r.ok || what > kDownloadCheckpoint)
    return send_error(f, ErrorCode::kBadRequest, "DOWNLOAD: malformed payload");
  if (what == kDownloadCheckpoint) return download_checkpoint(f, offset, max_bytes);
  const bool weights = what == kDownloadWeights;
  if (weights && !configured_) {
    return send_error(f, ErrorCode::kNoModel, "no weights to download: no configured run");
  }
  if (!weights && !model_upload_.complete)
    return send_error(f, ErrorCode::kNoModel, "no model uploaded");
  if (weights && state_ == BoardState::kTraining) {
    return send_error(f, ErrorCode::kBadState, "PAUSE or STOP the run before downloading weights");
  }
  const uint32_t total =
      weights ? static_cast<uint32_t>(weights_blob_bytes(trainer_)) : model_upload_.total;
  size_t n = 0;
  if (!begin_download_reply(f, offset, total, max_bytes, &n)) return;
  if (weights) {
    n = read_weights_blob(trainer_, offset, payload_ + kDownloadReplyHeader, n);
  } else {
    memcpy(payload_ + kDownloadReplyHeader, model_upload_.data + offset, n);
  }
  send(reply_type(MessageType::kDownload), f.sequence, payload_, kDownloadReplyHeader + n, false);
}

// A consistent checkpoint needs the run at rest; it is read straight from the
// run, chunk by chunk. Offset 0 opens a download; a training step or a
// checkpoint upload closes it, so its chunks all come from one state.
void Device::download_checkpoint(const Frame& f, uint32_t offset, uint32_t max_bytes) {
  if (!configured_) return send_error(f, ErrorCode::kNoModel, "no run to checkpoint");
  if (state_ == BoardState::kTraining) {
    return send_error(f, ErrorCode::kBadState, "PAUSE the run before downloading a checkpoint");
  }
  if (run_half_restored_) {
    return send_error(f, ErrorCode::kBadState,
                      "no checkpoint: the run is half restored by an unfinished upload");
  }
  if (offset == 0) checkpoint_download_open_ = true;
  if (!checkpoint_download_open_) {
    return send_error(f, ErrorCode::kBadState,
                      "checkpoint DOWNLOAD at offset %u: the run changed since offset 0, start "
                      "again at 0",
                      static_cast<unsigned>(offset));
  }
  const uint32_t total = static_cast<uint32_t>(run_.checkpoint_bytes());
  size_t n = 0;
  if (!begin_download_reply(f, offset, total, max_bytes, &n)) return;
  const Status s = run_.read_checkpoint(offset, payload_ + kDownloadReplyHeader, n);
  if (!s.ok()) return send_error(f, ErrorCode::kEngine, "checkpoint: %s", s.message());
  send(reply_type(MessageType::kDownload), f.sequence, payload_, kDownloadReplyHeader + n, false);
}

// Inference in the RAM nobody uses: after the model, the dataset (even one
// still uploading, so it can resume) and a configured run's arena, all of
// which stay as they are.
void Device::on_bench(const Frame& f) {
  WireReader r(f.payload, f.length);
  BenchRequest request;
  if (!request.read(r)) {
    if (!r.ok) {
      return send_error(f, ErrorCode::kBadRequest,
                        "BENCH: payload of %u bytes, needs runs:u32 and seed:u32",
                        static_cast<unsigned>(f.length));
    }
    return send_error(f, ErrorCode::kBadRequest, "BENCH: runs must be 1..%u, not %u",
                      static_cast<unsigned>(kMaxBenchRuns), static_cast<unsigned>(request.runs));
  }
  if (!model_upload_.complete) return send_error(f, ErrorCode::kNoModel, "no model uploaded");
  if (state_ == BoardState::kTraining) {
    return send_error(f, ErrorCode::kBadState,
                      "a run is training: PAUSE or STOP it first (the run is kept)");
  }
  size_t free_at = align_up(model_upload_.total);
  if (dataset_upload_.begun) free_at = align_up(dataset_offset() + dataset_upload_.total);
  if (run_end_ > free_at) free_at = align_up(run_end_);
  if (free_at >= board_.ram_bytes) {
    return send_error(f, ErrorCode::kOutOfMemory,
                      "no RAM left for inference after model, dataset and training arena");
  }
  // Loaded again (cheap: a view that verifies) so a configured run's model_
  // is not touched; the interpreter's tables live in its arena.
  Model model;
  Status s = Model::load(model_upload_.data, model_upload_.total, &model);
  if (!s.ok()) return send_error(f, ErrorCode::kEngine, "model: %s", s.message());
  Interpreter interpreter;
  BenchClock clock;
  clock.now = [](void* board) { return static_cast<BoardSupport*>(board)->cycles(); };
  clock.context = &board_;
  BenchReply reply;
  s = run_inference_bench(model, request, board_.ram + free_at, board_.ram_bytes - free_at, clock,
                          &interpreter, &reply);
  if (!s.ok()) {
    return send_error(
        f, s.code() == StatusCode::kOutOfMemory ? ErrorCode::kOutOfMemory : ErrorCode::kEngine,
        "%s", s.message());
  }
  reply.clock_hz = board_.clock_hz();
  WireWriter w(payload_, sizeof payload_);
  reply.write(w);
  send(reply_type(MessageType::kBench), f.sequence, payload_, w.size(), true);
}

void Device::train_one() {
  Metric metric;
  bool due = false;
  weights_sha_valid_ = false;
  checkpoint_download_open_ = false;
  const uint64_t start = board_.cycles();
  const Status s = run_.step(board_.clock_us(), &metric, &due);
  window_cycles_ += board_.cycles() - start;
  ++window_samples_;
  if (!s.ok()) {
    state_ = BoardState::kFailed;
    last_error_ = ErrorCode::kEngine;
    log(3, "training failed: %s", s.message());
    return;
  }
  if (due) {
    metric.session_id = session_id_;
    const uint64_t mean = window_cycles_ / window_samples_;
    metric.step_cycles = mean > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(mean);
    window_cycles_ = 0;
    window_samples_ = 0;
    uint8_t payload[64];
    WireWriter w(payload, sizeof payload);
    metric.write(w);
    send_event(MessageType::kMetric, payload, w.size());
  }
  if (run_.done()) state_ = BoardState::kDone;
}

}  // namespace gruwb::serial
