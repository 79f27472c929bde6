#include "serial/link/frame_sizer.h"

namespace gruwb::serial {

void FrameSizer::set_max(size_t max_bytes) {
  max_ = max_bytes < kMinBytes ? kMinBytes : max_bytes;
  bytes_ = max_;
  failures_in_row_ = successes_in_row_ = 0;
}

void FrameSizer::success() {
  failures_in_row_ = 0;
  if (++successes_in_row_ < kGrowAfter || bytes_ == max_) return;
  successes_in_row_ = 0;
  bytes_ = bytes_ * 2 > max_ ? max_ : bytes_ * 2;
  ++grows_;
}

void FrameSizer::failure() {
  successes_in_row_ = 0;
  if (++failures_in_row_ < kShrinkAfter || bytes_ == kMinBytes) return;
  failures_in_row_ = 0;
  bytes_ = bytes_ / 2 < kMinBytes ? kMinBytes : bytes_ / 2;
  ++shrinks_;
}

}  // namespace gruwb::serial
