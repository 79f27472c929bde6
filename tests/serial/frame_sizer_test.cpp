// FrameSizer: frames shrink after repeated failed exchanges on a noisy line and grow back on a
// clean one, never past the board's limit or below the floor.

#include "serial/link/frame_sizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace gruwb::serial {
namespace {

TEST(FrameSizer, StartsAtTheBoardsLimit) {
  FrameSizer sizer(1016);
  EXPECT_EQ(sizer.bytes(), 1016u);
  for (int i = 0; i < 100; ++i) sizer.success();
  EXPECT_EQ(sizer.bytes(), 1016u);
  EXPECT_EQ(sizer.grows(), 0u);
}

TEST(FrameSizer, HalvesAfterTwoFailuresInARow) {
  FrameSizer sizer(1016);
  sizer.failure();
  EXPECT_EQ(sizer.bytes(), 1016u);  // one loss can be luck
  sizer.failure();
  EXPECT_EQ(sizer.bytes(), 508u);
  sizer.failure();
  sizer.success();  // the run of failures is broken
  sizer.failure();
  EXPECT_EQ(sizer.bytes(), 508u);
  for (int i = 0; i < 40; ++i) sizer.failure();
  EXPECT_EQ(sizer.bytes(), FrameSizer::kMinBytes);
}

TEST(FrameSizer, GrowsBackOnACleanLine) {
  FrameSizer sizer(1016);
  for (int i = 0; i < 6; ++i) sizer.failure();
  EXPECT_EQ(sizer.bytes(), 127u);
  for (int i = 0; i < FrameSizer::kGrowAfter - 1; ++i) sizer.success();
  EXPECT_EQ(sizer.bytes(), 127u);
  sizer.success();
  EXPECT_EQ(sizer.bytes(), 254u);
  for (int i = 0; i < 3 * FrameSizer::kGrowAfter; ++i) sizer.success();
  EXPECT_EQ(sizer.bytes(), 1016u);  // capped at the limit, not 1016 x 2
  EXPECT_EQ(sizer.shrinks(), 3u);
  EXPECT_EQ(sizer.grows(), 3u);
}

// On a line where a frame of L bytes (plus ~20 of overhead) gets through with probability
// (1-p)^(L+20), the size settles where most exchanges succeed: small for a bad line, large for
// a good one.
size_t settled_size(double byte_error_rate) {
  FrameSizer sizer(1016);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> chance(0, 1);
  double sum = 0;
  for (int i = 0; i < 20000; ++i) {
    const double ok = std::pow(1 - byte_error_rate, static_cast<double>(sizer.bytes() + 20));
    if (chance(rng) < ok) {
      sizer.success();
    } else {
      sizer.failure();
    }
    if (i >= 10000) sum += static_cast<double>(sizer.bytes());
  }
  return static_cast<size_t>(sum / 10000);
}

TEST(FrameSizer, SettlesToTheErrorRate) {
  const size_t clean = settled_size(1e-6), noisy = settled_size(1e-3), bad = settled_size(1e-2);
  EXPECT_GT(clean, 900u);
  EXPECT_LT(noisy, 600u);
  EXPECT_GT(noisy, 60u);
  EXPECT_LT(bad, 80u);
  EXPECT_GE(bad, FrameSizer::kMinBytes);
}

}  // namespace
}  // namespace gruwb::serial
