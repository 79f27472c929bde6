#include "engine/model/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace gruwb {
namespace {

// strnlen is POSIX, not C++17: newlib hides it in strict mode.
size_t bounded_length(const char* text, size_t limit) {
  size_t n = 0;
  while (n < limit && text[n] != '\0') ++n;
  return n;
}

}  // namespace

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotAModel: return "not a model";
    case StatusCode::kCorruptModel: return "corrupt model";
    case StatusCode::kInvalidModel: return "invalid model";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kIoError: return "i/o error";
    case StatusCode::kOutOfMemory: return "out of memory";
    case StatusCode::kInternal: return "internal error";
    case StatusCode::kStopped: return "stopped";
  }
  return "unknown";
}

Status Status::error(StatusCode code, const char* format, ...) {
  Status status;
  status.code_ = code;
  va_list args;
  va_start(args, format);
  vsnprintf(status.message_, kMessageCapacity, format, args);
  va_end(args);
  return status;
}

Status& Status::prefix(const char* format, ...) {
  char head[kMessageCapacity];
  va_list args;
  va_start(args, format);
  int head_len = vsnprintf(head, sizeof head, format, args);
  va_end(args);
  if (head_len <= 0) return *this;
  // Shift the old message right to make room for the head (truncating the tail).
  size_t head_bytes = bounded_length(head, kMessageCapacity - 1);
  size_t tail_bytes = bounded_length(message_, kMessageCapacity);
  if (head_bytes + tail_bytes > kMessageCapacity - 1)
    tail_bytes = kMessageCapacity - 1 - head_bytes;
  memmove(message_ + head_bytes, message_, tail_bytes);
  memcpy(message_, head, head_bytes);
  message_[head_bytes + tail_bytes] = '\0';
  return *this;
}

}  // namespace gruwb
