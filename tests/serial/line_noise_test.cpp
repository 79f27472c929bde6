// LineNoise (`gruwb board-sim --noise`): the faults it promises, at the rate asked, repeatable
// from the seed.

#include "serial/firmware/boards/host_pty/line_noise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace gruwb::serial {
namespace {

std::vector<uint8_t> ramp(size_t n) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  return bytes;
}

LineNoiseOptions only(LineFault fault, double rate) {
  LineNoiseOptions o;
  o.rate = rate;
  for (bool& e : o.enabled) e = false;
  o.enabled[static_cast<int>(fault)] = true;
  return o;
}

TEST(LineNoise, QuietLinePassesEveryByte) {
  LineNoise noise(LineNoiseOptions{});
  const auto in = ramp(5000);
  std::vector<uint8_t> out;
  int stall_ms = -1;
  noise.pass(in.data(), in.size(), &out, &stall_ms);
  EXPECT_EQ(out, in);
  EXPECT_EQ(stall_ms, 0);
}

TEST(LineNoise, EachKindDoesWhatItSays) {
  const auto in = ramp(100000);
  int stall_ms = 0;
  {
    LineNoise noise(only(LineFault::kDrop, 1e-2));
    std::vector<uint8_t> out;
    noise.pass(in.data(), in.size(), &out, &stall_ms);
    EXPECT_EQ(out.size() + noise.count(LineFault::kDrop), in.size());
    EXPECT_NEAR(static_cast<double>(noise.count(LineFault::kDrop)), 1000, 150);
  }
  {
    LineNoise noise(only(LineFault::kDuplicate, 1e-3));
    std::vector<uint8_t> out;
    noise.pass(in.data(), in.size(), &out, &stall_ms);
    EXPECT_EQ(out.size(), in.size() + noise.count(LineFault::kDuplicate));
    EXPECT_GT(noise.count(LineFault::kDuplicate), 50u);
  }
  {
    LineNoise noise(only(LineFault::kCorrupt, 1e-3));
    std::vector<uint8_t> out;
    noise.pass(in.data(), in.size(), &out, &stall_ms);
    ASSERT_EQ(out.size(), in.size());
    size_t differ = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const uint8_t flipped = in[i] ^ out[i];
      if (flipped == 0) continue;
      ++differ;
      EXPECT_EQ(flipped & (flipped - 1), 0) << "one bit per fault, byte " << i;
    }
    EXPECT_EQ(differ, noise.count(LineFault::kCorrupt));
  }
  {
    LineNoise noise(only(LineFault::kReorder, 1e-3));
    std::vector<uint8_t> out;
    noise.pass(in.data(), in.size(), &out, &stall_ms);
    ASSERT_EQ(out.size(), in.size());
    EXPECT_NE(out, in);
    std::vector<uint8_t> sorted_in = in, sorted_out = out;
    std::sort(sorted_in.begin(), sorted_in.end());
    std::sort(sorted_out.begin(), sorted_out.end());
    EXPECT_EQ(sorted_in, sorted_out);  // the same bytes, two by two swapped
  }
  {
    LineNoiseOptions o = only(LineFault::kStall, 1e-3);
    o.stall_ms = 7;
    LineNoise noise(o);
    std::vector<uint8_t> out;
    noise.pass(in.data(), in.size(), &out, &stall_ms);
    EXPECT_EQ(out, in);
    EXPECT_EQ(stall_ms, static_cast<int>(7 * noise.count(LineFault::kStall)));
    EXPECT_GT(stall_ms, 0);
  }
}

TEST(LineNoise, SameSeedSameFaults) {
  LineNoiseOptions o;
  o.rate = 1e-2;
  o.seed = 99;
  const auto in = ramp(20000);
  LineNoise a(o), b(o);
  std::vector<uint8_t> out_a, out_b;
  int stall_a = 0, stall_b = 0;
  a.pass(in.data(), in.size(), &out_a, &stall_a);
  b.pass(in.data(), in.size(), &out_b, &stall_b);
  EXPECT_EQ(out_a, out_b);
  EXPECT_EQ(stall_a, stall_b);
  uint64_t total = 0;
  for (int k = 0; k < kLineFaultKinds; ++k) total += a.count(static_cast<LineFault>(k));
  EXPECT_NEAR(static_cast<double>(total), 200, 60);
}

TEST(LineNoise, FaultListIsParsedAndChecked) {
  LineNoiseOptions o;
  std::string error;
  ASSERT_TRUE(parse_line_faults("drop,stall", &o, &error)) << error;
  EXPECT_TRUE(o.enabled[static_cast<int>(LineFault::kDrop)]);
  EXPECT_FALSE(o.enabled[static_cast<int>(LineFault::kCorrupt)]);
  EXPECT_TRUE(o.enabled[static_cast<int>(LineFault::kStall)]);
  EXPECT_FALSE(parse_line_faults("drop,fire", &o, &error));
  EXPECT_NE(error.find("unknown line fault 'fire'"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb::serial
