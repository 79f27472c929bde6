#include "serial/protocol/messages.h"

#include <initializer_list>

#include "engine/model/checked_size.h"

namespace gruwb::serial {

const char* message_type_name(uint8_t type) {
  switch (type & ~kReplyBit) {
    case 0x01: return type & kReplyBit ? "HELLO_REPLY" : "HELLO";
    case 0x02: return type & kReplyBit ? "STATUS_REPLY" : "STATUS";
    case 0x03: return type & kReplyBit ? "UPLOAD_BEGIN_ACK" : "UPLOAD_BEGIN";
    case 0x04: return type & kReplyBit ? "UPLOAD_CHUNK_ACK" : "UPLOAD_CHUNK";
    case 0x05: return type & kReplyBit ? "CONFIGURE_REPLY" : "CONFIGURE";
    case 0x06: return type & kReplyBit ? "START_ACK" : "START";
    case 0x07: return type & kReplyBit ? "PAUSE_ACK" : "PAUSE";
    case 0x08: return type & kReplyBit ? "STOP_ACK" : "STOP";
    case 0x09: return type & kReplyBit ? "DOWNLOAD_REPLY" : "DOWNLOAD";
    case 0x0A: return type & kReplyBit ? "RESET_ACK" : "RESET";
    case 0x0B: return type & kReplyBit ? "BENCH_REPLY" : "BENCH";
    case 0x0C: return type & kReplyBit ? "EVENTS_REPLY" : "EVENTS";
    default: break;
  }
  switch (type) {
    case 0xC0: return "METRIC";
    case 0xC1: return "LOG";
    case 0xC2: return "BOOT";
    case 0xFF: return "ERROR";
    default: return "UNKNOWN";
  }
}

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNone: return "none";
    case ErrorCode::kBadRequest: return "bad request";
    case ErrorCode::kUnknownType: return "unknown message type";
    case ErrorCode::kBadState: return "wrong state";
    case ErrorCode::kNoModel: return "no model";
    case ErrorCode::kNoDataset: return "no dataset";
    case ErrorCode::kEngine: return "engine error";
    case ErrorCode::kOutOfMemory: return "out of memory";
    case ErrorCode::kTooLarge: return "too large";
  }
  return "unknown error";
}

const char* board_state_name(BoardState state) {
  switch (state) {
    case BoardState::kIdle: return "idle";
    case BoardState::kReady: return "ready";
    case BoardState::kTraining: return "training";
    case BoardState::kPaused: return "paused";
    case BoardState::kDone: return "done";
    case BoardState::kFailed: return "failed";
  }
  return "unknown";
}

void Capabilities::write(WireWriter& w) const {
  w.u8(protocol_version);
  w.u8(flags);
  w.u16(max_payload);
  w.u32(session_id);
  w.u32(ram_bytes);
  w.u32(clock_hz);
  w.text(engine_version, sizeof engine_version - 1);
  w.text(board, sizeof board - 1);
  w.u16(op_count);
  for (int i = 0; i < op_count && i < kMaxReportedOps; ++i) w.i16(ops[i]);
  w.u8(custom_op_count);
  for (int i = 0; i < custom_op_count && i < kMaxCustomOps; ++i) {
    w.text(custom_ops[i], sizeof custom_ops[i] - 1);
  }
  if (flags & kKeepsEvents) w.u16(next_event);
}

bool Capabilities::read(WireReader& r) {
  protocol_version = r.u8();
  flags = r.u8();
  max_payload = r.u16();
  session_id = r.u32();
  ram_bytes = r.u32();
  clock_hz = r.u32();
  r.text(engine_version, sizeof engine_version);
  r.text(board, sizeof board);
  op_count = r.u16();
  if (op_count > kMaxReportedOps) return false;
  for (int i = 0; i < op_count; ++i) ops[i] = r.i16();
  custom_op_count = r.u8();
  if (custom_op_count > kMaxCustomOps) return false;
  for (int i = 0; i < custom_op_count; ++i) r.text(custom_ops[i], sizeof custom_ops[i]);
  next_event = (flags & kKeepsEvents) ? r.u16() : 0;
  return r.ok;
}

void BoardStatus::write(WireWriter& w) const {
  w.u32(session_id);
  w.u8(static_cast<uint8_t>(state));
  w.u8(static_cast<uint8_t>(last_error));
  w.u32(epoch);
  w.u32(step);
  w.u32(samples);
  w.u32(model_bytes);
  w.u32(model_received);
  w.u32(dataset_bytes);
  w.u32(dataset_received);
  w.u32(arena_bytes);
  w.u32(weights_bytes);
  w.bytes(weights_sha256, 32);
}

bool BoardStatus::read(WireReader& r) {
  session_id = r.u32();
  state = static_cast<BoardState>(r.u8());
  last_error = static_cast<ErrorCode>(r.u8());
  epoch = r.u32();
  step = r.u32();
  samples = r.u32();
  model_bytes = r.u32();
  model_received = r.u32();
  dataset_bytes = r.u32();
  dataset_received = r.u32();
  arena_bytes = r.u32();
  weights_bytes = r.u32();
  r.bytes(weights_sha256, 32);
  return r.ok && static_cast<uint8_t>(state) <= static_cast<uint8_t>(BoardState::kFailed);
}

void UploadBegin::write(WireWriter& w) const {
  w.u8(static_cast<uint8_t>(kind));
  w.u32(total_bytes);
  w.bytes(sha256, 32);
}

bool UploadBegin::read(WireReader& r) {
  const uint8_t k = r.u8();
  kind = static_cast<UploadKind>(k);
  total_bytes = r.u32();
  r.bytes(sha256, 32);
  return r.ok && k >= 1 && k <= 3;
}

void UploadAck::write(WireWriter& w) const {
  w.u8(static_cast<uint8_t>(kind));
  w.u8(static_cast<uint8_t>(result));
  w.u32(next_offset);
  w.u32(total_bytes);
}

bool UploadAck::read(WireReader& r) {
  kind = static_cast<UploadKind>(r.u8());
  const uint8_t res = r.u8();
  result = static_cast<UploadResult>(res);
  next_offset = r.u32();
  total_bytes = r.u32();
  return r.ok && res <= 2;
}

void TrainingSettings::write(WireWriter& w) const {
  w.u8(static_cast<uint8_t>(config.loss));
  w.u8(static_cast<uint8_t>(config.optimizer));
  w.f32(config.learning_rate);
  w.f32(config.momentum);
  w.f32(config.beta1);
  w.f32(config.beta2);
  w.f32(config.epsilon);
  w.u8(config.torch_epsilon ? 1 : 0);
  w.i32(config.batch_size);
  w.f32(config.clip_norm);
  w.u8(static_cast<uint8_t>(config.scope));
  w.i32(config.last_n);
  w.u32(epochs);
  w.u32(seed);
  w.u8(shuffle);
  w.u32(metric_every);
  w.u32(sample_limit);
  // Appended after protocol version 1's fields: boards that do not know it
  // ignore it (and put the loss on output 0), hosts that do not send it get
  // the board's automatic choice.
  w.i32(config.loss_output);
}

bool TrainingSettings::read(WireReader& r) {
  const uint8_t loss = r.u8();
  const uint8_t optimizer = r.u8();
  config.loss = static_cast<Loss>(loss);
  config.optimizer = static_cast<Optimizer>(optimizer);
  config.learning_rate = r.f32();
  config.momentum = r.f32();
  config.beta1 = r.f32();
  config.beta2 = r.f32();
  config.epsilon = r.f32();
  config.torch_epsilon = r.u8() != 0;
  config.batch_size = r.i32();
  config.clip_norm = r.f32();
  const uint8_t scope = r.u8();
  config.scope = static_cast<TrainableScope>(scope);
  config.last_n = r.i32();
  config.names = nullptr;
  config.name_count = 0;
  epochs = r.u32();
  seed = r.u32();
  shuffle = r.u8();
  metric_every = r.u32();
  sample_limit = r.u32();
  config.loss_output = r.remaining() > 0 ? r.i32() : -1;  // a cut field fails like any other
  return r.ok && loss <= 3 && optimizer <= 1 && scope <= 2 && config.batch_size >= 1 &&
         config.last_n >= 1 && config.loss_output >= -1;
}

void ConfigureReply::write(WireWriter& w) const {
  for (uint32_t v : {arena_bytes, ram_free, weight_bytes, gradient_bytes, optimizer_bytes,
                     activation_bytes, other_bytes, trainable_count, download_bytes}) {
    w.u32(v);
  }
}

bool ConfigureReply::read(WireReader& r) {
  for (uint32_t* v : {&arena_bytes, &ram_free, &weight_bytes, &gradient_bytes, &optimizer_bytes,
                      &activation_bytes, &other_bytes, &trainable_count, &download_bytes}) {
    *v = r.u32();
  }
  return r.ok;
}

void Metric::write(WireWriter& w) const {
  w.u32(session_id);
  w.u32(epoch);
  w.u32(step);
  w.u32(samples);
  w.u32(epoch_samples);
  w.f32(loss);
  w.f32(accuracy);
  w.f32(samples_per_second);
  w.u8(flags);
  w.u32(elapsed_ms);
  w.u32(step_cycles);
}

bool Metric::read(WireReader& r) {
  session_id = r.u32();
  epoch = r.u32();
  step = r.u32();
  samples = r.u32();
  epoch_samples = r.u32();
  loss = r.f32();
  accuracy = r.f32();
  samples_per_second = r.f32();
  flags = r.u8();
  elapsed_ms = r.u32();
  step_cycles = r.u32();
  return r.ok;
}

void Boot::write(WireWriter& w) const {
  w.u32(session_id);
  w.u8(reset_reason);
}

bool Boot::read(WireReader& r) {
  session_id = r.u32();
  reset_reason = r.u8();
  return r.ok;
}

void EventsRequest::write(WireWriter& w) const { w.u16(from); }

bool EventsRequest::read(WireReader& r) {
  from = r.u16();
  return r.ok;
}

void EventsReply::write(WireWriter& w) const {
  w.u16(next);
  w.u16(oldest);
}

bool EventsReply::read(WireReader& r) {
  next = r.u16();
  oldest = r.u16();
  return r.ok;
}

void ErrorReply::write(WireWriter& w) const {
  w.u8(request_type);
  w.u8(static_cast<uint8_t>(code));
  w.text(message, sizeof message - 1);
}

bool ErrorReply::read(WireReader& r) {
  request_type = r.u8();
  code = static_cast<ErrorCode>(r.u8());
  r.text(message, sizeof message);
  return r.ok;
}

void BenchRequest::write(WireWriter& w) const {
  w.u32(runs);
  w.u32(seed);
}

bool BenchRequest::read(WireReader& r) {
  runs = r.u32();
  seed = r.u32();
  return r.ok && runs >= 1 && runs <= kMaxBenchRuns;
}

void BenchReply::write(WireWriter& w) const {
  w.u32(runs);
  w.u32(clock_hz);
  w.u32(arena_bytes);
  w.u32(static_cast<uint32_t>(total_cycles));
  w.u32(static_cast<uint32_t>(total_cycles >> 32));
  w.u32(min_cycles);
  w.u32(median_cycles);
  w.u32(max_cycles);
  w.u8(output_type);
  w.u32(output_bytes);
  w.u32(output_crc32);
  const uint8_t n = output_count < kBenchOutputBytes ? output_count : kBenchOutputBytes;
  w.u8(n);
  w.bytes(output, n);
}

bool BenchReply::read(WireReader& r) {
  runs = r.u32();
  clock_hz = r.u32();
  arena_bytes = r.u32();
  total_cycles = r.u32();
  total_cycles |= static_cast<uint64_t>(r.u32()) << 32;
  min_cycles = r.u32();
  median_cycles = r.u32();
  max_cycles = r.u32();
  output_type = r.u8();
  output_bytes = r.u32();
  output_crc32 = r.u32();
  output_count = r.u8();
  if (output_count > kBenchOutputBytes || output_count > output_bytes) return false;
  r.bytes(output, output_count);
  return r.ok && runs >= 1 && min_cycles <= median_cycles && median_cycles <= max_cycles;
}

bool read_dataset_header(const uint8_t* data, size_t size, DatasetHeader* out) {
  if (size < kDatasetHeaderBytes) return false;
  WireReader r(data, size);
  if (r.u32() != kDatasetMagic) return false;
  out->version = r.u32();
  out->sample_count = r.u32();
  out->input_elements = r.u32();
  out->classes = r.u32();
  if (!r.ok || out->version != 1 || out->input_elements == 0 || out->classes == 0) return false;
  // A hostile header must not wrap a 32-bit size_t into the blob's size.
  if (out->input_elements > (1u << 24) || out->sample_count > (1u << 24)) return false;
  size_t samples_bytes = 0, expected = 0;
  return checked_mul(out->sample_bytes(), out->sample_count, &samples_bytes) &&
         checked_add(kDatasetHeaderBytes, samples_bytes, &expected) && size == expected;
}

void RunCheckpointHeader::write(WireWriter& w) const {
  w.u32(kRunCheckpointMagic);
  w.u32(epoch);
  w.u32(position);
  w.u32(correct);
  w.bytes(&loss_sum, sizeof loss_sum);  // the exact double: resuming must be bit-identical
  w.u32(step);
  w.u32(trainer_bytes);
}

bool RunCheckpointHeader::read(WireReader& r) {
  const uint32_t magic = r.u32();
  epoch = r.u32();
  position = r.u32();
  correct = r.u32();
  r.bytes(&loss_sum, sizeof loss_sum);
  step = r.u32();
  trainer_bytes = r.u32();
  return r.ok && magic == kRunCheckpointMagic;
}

}  // namespace gruwb::serial
