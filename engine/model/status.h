#pragma once
// Error reporting for the portable engine: a code plus a message that names
// the culprit. No exceptions, no heap: the message lives inside the Status.

#include <cstddef>
#include <cstdint>

namespace gruwb {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,  // caller passed something unusable (null, wrong size)
  kNotAModel,        // not a .tflite/.circle file at all (identifier, size)
  kCorruptModel,     // flatbuffer verification failed (truncated, flipped bytes)
  kInvalidModel,     // verifies, but violates the format's rules (indices, sizes)
  kUnsupported,      // valid, but uses a feature we do not implement
  kIoError,
  kOutOfMemory,
  kInternal,
  kStopped,  // the caller stopped the run (OpProfiler::begin_op)
};

const char* status_code_name(StatusCode code);

class Status {
 public:
  static constexpr size_t kMessageCapacity = 256;

  Status() = default;  // ok
  static Status error(StatusCode code, const char* format, ...)
      __attribute__((format(printf, 2, 3)));

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const char* message() const { return message_; }

  // Prefixes the message with context, e.g. "subgraph 2: ".
  Status& prefix(const char* format, ...) __attribute__((format(printf, 2, 3)));

 private:
  StatusCode code_ = StatusCode::kOk;
  char message_[kMessageCapacity] = {};
};

#define GRUWB_RETURN_IF_ERROR(expr)    \
  do {                                 \
    ::gruwb::Status status_ = (expr);  \
    if (!status_.ok()) return status_; \
  } while (0)

}  // namespace gruwb
