#pragma once
// The messages of the board protocol (docs/serial-protocol.md has the table
// and the sequence diagrams). Each request type T gets its reply as T | 0x80
// with the request's sequence number, or kError; the board pushes events
// (METRIC, LOG, BOOT) with its own sequence numbers.

#include <cstddef>
#include <cstdint>

#include "engine/train/training_config.h"
#include "serial/protocol/wire.h"

namespace gruwb::serial {

enum class MessageType : uint8_t {
  kHello = 0x01,
  kStatus = 0x02,
  kUploadBegin = 0x03,
  kUploadChunk = 0x04,
  kConfigure = 0x05,
  kStart = 0x06,
  kPause = 0x07,
  kStop = 0x08,
  kDownload = 0x09,
  kReset = 0x0A,
  kBench = 0x0B,
  kEvents = 0x0C,  // resend kept events (a host that missed some on a noisy line)
  // events, board -> host
  kMetric = 0xC0,
  kLog = 0xC1,
  kBoot = 0xC2,
  kError = 0xFF,
};
constexpr uint8_t kReplyBit = 0x80;
constexpr uint8_t reply_type(MessageType request) {
  return static_cast<uint8_t>(static_cast<uint8_t>(request) | kReplyBit);
}
const char* message_type_name(uint8_t type);

enum class ErrorCode : uint8_t {
  kNone = 0,
  kBadRequest = 1,  // payload too short / fields out of range
  kUnknownType = 2,
  kBadState = 3,  // e.g. START before CONFIGURE
  kNoModel = 4,
  kNoDataset = 5,
  kEngine = 6,  // the engine's Status (message carries it)
  kOutOfMemory = 7,
  kTooLarge = 8,  // an upload larger than the board's RAM
};
const char* error_code_name(ErrorCode code);

enum class BoardState : uint8_t { kIdle = 0, kReady, kTraining, kPaused, kDone, kFailed };
const char* board_state_name(BoardState state);

// kCheckpoint: a run checkpoint (below) the host kept, loaded into the
// configured run so it continues where a reset interrupted it.
enum class UploadKind : uint8_t { kModel = 1, kDataset = 2, kCheckpoint = 3 };
enum class UploadResult : uint8_t { kInProgress = 0, kComplete = 1, kHashMismatch = 2 };

constexpr int kMaxReportedOps = 96;
constexpr int kMaxCustomOps = 16;  // GRUWB_GRU, plugin cells (GRUWB_MGU ...), Flex ops

// Capabilities::flags
constexpr uint8_t kCanTrain = 1;
constexpr uint8_t kCanBench = 2;  // answers BENCH (boards before it: ERROR unknown type)
// Keeps its last kKeptEvents events and answers EVENTS; HELLO then ends with
// next_event (the sequence number its next event will carry).
constexpr uint8_t kKeepsEvents = 4;
constexpr int kKeptEvents = 8;
// Its cycles (BenchReply, Metric::step_cycles) come from the core's DWT cycle
// counter; without it, from SysTick on the processor clock (QEMU has no DWT).
constexpr uint8_t kCyclesFromDwt = 8;

struct Capabilities {
  uint8_t protocol_version = 0;
  uint8_t flags = 0;  // kCanTrain, kCanBench, kKeepsEvents, kCyclesFromDwt
  uint16_t max_payload = 0;
  uint32_t session_id = 0;
  uint32_t ram_bytes = 0;  // model + dataset + training arena share this pool
  uint32_t clock_hz = 0;
  char engine_version[16] = {};
  char board[24] = {};
  uint16_t op_count = 0;
  int16_t ops[kMaxReportedOps] = {};  // decoded builtin op codes (Circle GRU is negative)
  uint8_t custom_op_count = 0;
  char custom_ops[kMaxCustomOps][32] = {};
  uint16_t next_event = 0;  // with kKeepsEvents

  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

struct BoardStatus {
  uint32_t session_id = 0;
  BoardState state = BoardState::kIdle;
  ErrorCode last_error = ErrorCode::kNone;
  uint32_t epoch = 0;    // epochs finished
  uint32_t step = 0;     // optimizer updates so far
  uint32_t samples = 0;  // samples trained in the current epoch
  uint32_t model_bytes = 0;
  uint32_t model_received = 0;
  uint32_t dataset_bytes = 0;
  uint32_t dataset_received = 0;
  uint32_t arena_bytes = 0;    // training arena of the configured run
  uint32_t weights_bytes = 0;  // size of the DOWNLOAD blob (0 before CONFIGURE)
  uint8_t weights_sha256[32] = {};

  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

struct UploadBegin {
  UploadKind kind = UploadKind::kModel;
  uint32_t total_bytes = 0;
  uint8_t sha256[32] = {};
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

// Chunk header; the data follows in the same payload.
constexpr size_t kUploadChunkHeader = 5;

struct UploadAck {
  UploadKind kind = UploadKind::kModel;
  UploadResult result = UploadResult::kInProgress;
  uint32_t next_offset = 0;
  uint32_t total_bytes = 0;
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

// The desktop's TrainingConfig plus what a run needs around it. Tensor-name
// scopes stay on the desktop (the board gets fc/all/last:N); the loss output
// travels as its index (config.loss_output, -1 = the board chooses), the
// last field, optional on the wire.
struct TrainingSettings {
  TrainingConfig config;
  uint32_t epochs = 1;
  uint32_t seed = 0;
  uint8_t shuffle = 1;
  uint32_t metric_every = 0;  // also push METRIC every N samples (0: per epoch)
  uint32_t sample_limit = 0;  // train on the first N samples of the dataset (0: all)
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

struct ConfigureReply {
  uint32_t arena_bytes = 0;
  uint32_t ram_free = 0;  // pool bytes left after model + dataset
  uint32_t weight_bytes = 0, gradient_bytes = 0, optimizer_bytes = 0, activation_bytes = 0,
           other_bytes = 0;
  uint32_t trainable_count = 0;
  uint32_t download_bytes = 0;
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

struct Metric {
  uint32_t session_id = 0;
  uint32_t epoch = 0;    // 0-based epoch this metric belongs to
  uint32_t step = 0;     // optimizer updates so far
  uint32_t samples = 0;  // samples seen in this epoch
  uint32_t epoch_samples = 0;
  float loss = 0.f;      // mean loss over `samples`
  float accuracy = 0.f;  // fraction of `samples` classified right (forward before the update)
  float samples_per_second = 0.f;
  uint8_t flags = 0;  // kMetricEpochEnd, kMetricRunDone
  uint32_t elapsed_ms = 0;
  // Mean time of one trained sample since the last METRIC (forward, backward
  // and its share of optimizer steps), in cycles at Capabilities::clock_hz
  // (microseconds when that is 0).
  uint32_t step_cycles = 0;
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};
constexpr uint8_t kMetricEpochEnd = 1;
constexpr uint8_t kMetricRunDone = 2;

struct Boot {
  uint32_t session_id = 0;
  uint8_t reset_reason = 0;  // board-specific code, 0 = power-on
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

// EVENTS (0x0C): the host names the first event sequence number it misses;
// the board sends again every kept event from there on (as the original
// event frames), then this reply.
struct EventsRequest {
  uint16_t from = 0;
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};
struct EventsReply {
  uint16_t next = 0;    // the sequence number the board's next event will carry
  uint16_t oldest = 0;  // the oldest it still keeps (== next when it keeps none)
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

struct ErrorReply {
  uint8_t request_type = 0;
  ErrorCode code = ErrorCode::kNone;
  char message[200] = {};
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

// BENCH: time the uploaded model's inference on the board (serial/firmware/
// inference_bench.h). The board fills the inputs itself from `seed`
// (fill_bench_inputs), so the host can run the same input and compare.
constexpr uint32_t kMaxBenchRuns = 10000;
struct BenchRequest {
  uint32_t runs = 100;  // timed inferences, 1..kMaxBenchRuns
  uint32_t seed = 1;    // of the inputs the board fills
  void write(WireWriter& w) const;
  bool read(WireReader& r);  // false when short or runs is out of range
};

// The first bytes of output 0 the reply carries (the whole output's CRC-32
// covers the rest).
constexpr size_t kBenchOutputBytes = 64;
// Times are cycles at clock_hz (BoardSupport::cycles), or microseconds when
// clock_hz is 0 (the host simulation).
struct BenchReply {
  uint32_t runs = 0;
  uint32_t clock_hz = 0;  // the board's clock (0 = host simulation)
  uint32_t arena_bytes = 0;
  uint64_t total_cycles = 0;  // all timed runs
  uint32_t min_cycles = 0, median_cycles = 0, max_cycles = 0;
  uint8_t output_type = 0;    // TensorType of output 0
  uint32_t output_bytes = 0;  // its whole size
  uint32_t output_crc32 = 0;  // over all output_bytes
  uint8_t output_count = 0;   // first bytes carried below (<= kBenchOutputBytes)
  uint8_t output[kBenchOutputBytes] = {};
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

// Trained weights as the board sends them (DOWNLOAD): "GWWT", count, then per
// trainable weight {tensor index u32, byte count u32, float32 data}.
constexpr uint32_t kWeightsMagic = 0x54575747;  // "GWWT" little-endian
// Datasets as the host uploads them: "GWDS", version, sample count, input
// elements per sample, class count, then per sample {float32 inputs, u32 class}.
constexpr uint32_t kDatasetMagic = 0x53445747;  // "GWDS"
constexpr uint32_t kDatasetHeaderBytes = 20;

struct DatasetHeader {
  uint32_t version = 1;
  uint32_t sample_count = 0;
  uint32_t input_elements = 0;
  uint32_t classes = 0;
  size_t sample_bytes() const { return (static_cast<size_t>(input_elements) + 1) * 4; }
};
// Checks magic, version and that `size` holds exactly the samples announced.
bool read_dataset_header(const uint8_t* data, size_t size, DatasetHeader* out);

// DOWNLOAD `what` values.
constexpr uint8_t kDownloadWeights = 0;
constexpr uint8_t kDownloadModel = 1;
constexpr uint8_t kDownloadCheckpoint = 2;  // a RunCheckpoint of the paused run
// A DOWNLOAD reply's offset:u32 and total:u32 before the data.
constexpr size_t kDownloadReplyHeader = 8;

// A run checkpoint (DOWNLOAD what=2, UPLOAD kind 3): "GWRC", where the run
// stands (epoch, sample position, the epoch's loss sum and hits so far), then
// the engine Trainer's checkpoint (weights, accumulators, optimizer state,
// step) as Trainer::save_checkpoint writes it.
constexpr uint32_t kRunCheckpointMagic = 0x43525747;  // "GWRC"
constexpr size_t kRunCheckpointHeaderBytes = 32;
struct RunCheckpointHeader {
  uint32_t epoch = 0;     // epoch in progress (0-based)
  uint32_t position = 0;  // samples of it already trained
  uint32_t correct = 0;
  double loss_sum = 0.0;
  uint32_t step = 0;           // optimizer updates so far (for messages)
  uint32_t trainer_bytes = 0;  // the Trainer checkpoint that follows
  void write(WireWriter& w) const;
  bool read(WireReader& r);
};

}  // namespace gruwb::serial
