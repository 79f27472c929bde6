#pragma once
// How much data the host puts in one frame (upload chunks, download pieces),
// sized to the line's observed error rate. A frame of L bytes gets through a
// line with byte error rate p with probability (1-p)^L, so on a noisy line
// long frames almost never arrive while short ones mostly do. The sizer
// halves the size after two failed exchanges in a row and doubles it back
// after kGrowAfter successes in a row; it settles where about four in five
// exchanges succeed. On a clean line it stays at the board's maximum.

#include <cstddef>
#include <cstdint>

namespace gruwb::serial {

class FrameSizer {
 public:
  static constexpr size_t kMinBytes = 16;
  static constexpr int kShrinkAfter = 2;
  static constexpr int kGrowAfter = 8;

  explicit FrameSizer(size_t max_bytes = 1024) { set_max(max_bytes); }
  // The board's limit (from HELLO) or the user's; the size starts there.
  void set_max(size_t max_bytes);
  size_t bytes() const { return bytes_; }
  size_t max_bytes() const { return max_; }
  // One request/reply exchange (an upload chunk, a download piece, a
  // request attempt): got through, or was lost or garbled on the way.
  void success();
  void failure();
  uint32_t shrinks() const { return shrinks_; }
  uint32_t grows() const { return grows_; }

 private:
  size_t max_ = 0;
  size_t bytes_ = 0;
  int failures_in_row_ = 0;
  int successes_in_row_ = 0;
  uint32_t shrinks_ = 0, grows_ = 0;
};

}  // namespace gruwb::serial
