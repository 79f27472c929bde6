// The greedy arena planner (engine/runtime/memory_planner.h) on its own, as
// TFLM tests its GreedyMemoryPlanner: buffers alive at the same time never
// overlap in memory, buffers with disjoint lifetimes share it, offsets keep
// the alignment, and nothing to place costs nothing.

#include "engine/runtime/memory_planner.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gruwb {
namespace {

size_t plan(std::vector<PlannedBuffer>& buffers, size_t alignment = 16) {
  std::vector<int32_t> work(
      planner_work_bytes(static_cast<int32_t>(buffers.size())) / sizeof(int32_t) + 1);
  return plan_buffers(buffers.data(), static_cast<int32_t>(buffers.size()), alignment, work.data());
}

bool overlap_in_time(const PlannedBuffer& a, const PlannedBuffer& b) {
  return !(a.last < b.first || b.last < a.first);
}

bool overlap_in_memory(const PlannedBuffer& a, const PlannedBuffer& b, size_t alignment) {
  const auto end = [alignment](const PlannedBuffer& x) {
    return x.offset + ((x.bytes + alignment - 1) & ~(alignment - 1));
  };
  return a.offset < end(b) && b.offset < end(a);
}

void expect_no_live_overlap(const std::vector<PlannedBuffer>& buffers, size_t alignment = 16) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (buffers[i].bytes == 0 || buffers[j].bytes == 0) continue;
      if (!overlap_in_time(buffers[i], buffers[j])) continue;
      EXPECT_FALSE(overlap_in_memory(buffers[i], buffers[j], alignment))
          << "buffers " << i << " and " << j << " are alive together";
    }
  }
}

TEST(MemoryPlannerTest, NothingToPlaceNeedsNoMemory) {
  std::vector<PlannedBuffer> none;
  EXPECT_EQ(plan(none), 0u);
  // Zero-byte buffers (constants, omitted tensors) are not placed.
  std::vector<PlannedBuffer> empty = {{0, 7, 0, 5}, {0, 9, 2, 3}};
  EXPECT_EQ(plan(empty), 0u);
  EXPECT_EQ(empty[0].offset, 7u);
  EXPECT_EQ(empty[1].offset, 9u);
}

TEST(MemoryPlannerTest, BuffersAliveTogetherGetDisjointMemory) {
  // All alive at time 2: they stack, largest first.
  std::vector<PlannedBuffer> buffers = {{100, 0, 0, 2}, {300, 0, 1, 4}, {200, 0, 2, 3}};
  EXPECT_EQ(plan(buffers), 112u + 304u + 208u);
  EXPECT_EQ(buffers[1].offset, 0u);    // 300, the largest
  EXPECT_EQ(buffers[2].offset, 304u);  // 200
  EXPECT_EQ(buffers[0].offset, 512u);  // 100
  expect_no_live_overlap(buffers);
}

TEST(MemoryPlannerTest, DisjointLifetimesShareMemory) {
  // A chain a -> b -> c as a sequential model produces it: a and c never
  // live together, so c reuses a's memory.
  std::vector<PlannedBuffer> buffers = {{256, 0, 0, 1}, {256, 0, 1, 2}, {256, 0, 2, 3}};
  EXPECT_EQ(plan(buffers), 512u);
  EXPECT_EQ(buffers[0].offset, 0u);
  EXPECT_EQ(buffers[1].offset, 256u);
  EXPECT_EQ(buffers[2].offset, 0u);
  expect_no_live_overlap(buffers);
  // Touching lifetimes (last == first) count as overlapping: an op reads
  // its input while it writes its output.
  std::vector<PlannedBuffer> touching = {{64, 0, 0, 3}, {64, 0, 3, 5}};
  EXPECT_EQ(plan(touching), 128u);
}

TEST(MemoryPlannerTest, ASmallBufferFillsAGapLeftByDeadOnes) {
  // 0: [0,1] 400 bytes; 1: [0,9] 100 bytes; 2: [2,9] 300 bytes. Largest
  // first: buffer 0 at 0, buffer 2 at 0 (dead buffer 0's place), buffer 1
  // above both at 400.
  std::vector<PlannedBuffer> buffers = {{400, 0, 0, 1}, {100, 0, 0, 9}, {300, 0, 2, 9}};
  EXPECT_EQ(plan(buffers), 400u + 112u);
  EXPECT_EQ(buffers[0].offset, 0u);
  EXPECT_EQ(buffers[2].offset, 0u);
  EXPECT_EQ(buffers[1].offset, 400u);
  expect_no_live_overlap(buffers);
}

TEST(MemoryPlannerTest, OffsetsKeepTheAlignment) {
  std::vector<PlannedBuffer> buffers = {{1, 0, 0, 9}, {17, 0, 0, 9}, {33, 0, 0, 9}, {5, 0, 0, 9}};
  for (size_t alignment : {size_t{4}, size_t{16}, size_t{64}}) {
    SCOPED_TRACE(alignment);
    std::vector<PlannedBuffer> b = buffers;
    const size_t high_water = plan(b, alignment);
    for (const PlannedBuffer& x : b) EXPECT_EQ(x.offset % alignment, 0u);
    EXPECT_EQ(high_water % alignment, 0u);
    expect_no_live_overlap(b, alignment);
  }
  std::vector<PlannedBuffer> b = buffers;
  EXPECT_EQ(plan(b, 16), 48u + 32u + 16u + 16u);
}

TEST(MemoryPlannerTest, EqualSizesKeepTheirOrder) {
  // Stable: the same inputs give the same plan on the host and the board.
  std::vector<PlannedBuffer> buffers = {{32, 0, 0, 5}, {32, 0, 0, 5}, {32, 0, 0, 5}};
  plan(buffers);
  EXPECT_EQ(buffers[0].offset, 0u);
  EXPECT_EQ(buffers[1].offset, 32u);
  EXPECT_EQ(buffers[2].offset, 64u);
}

TEST(MemoryPlannerTest, ManyBuffersNeverOverlapWhileAlive) {
  std::vector<PlannedBuffer> buffers;
  uint32_t seed = 12345;
  const auto next = [&seed] { return seed = seed * 1103515245u + 12345u, (seed >> 8) & 0xffff; };
  for (int i = 0; i < 200; ++i) {
    const uint32_t first = next() % 100;
    buffers.push_back({1 + next() % 1000, 0, first, first + next() % 20});
  }
  const size_t high_water = plan(buffers);
  expect_no_live_overlap(buffers);
  size_t sum = 0;
  for (const PlannedBuffer& b : buffers) {
    EXPECT_LE(b.offset + ((b.bytes + 15) & ~size_t{15}), high_water);
    sum += (b.bytes + 15) & ~size_t{15};
  }
  EXPECT_LT(high_water, sum);  // lifetimes end, memory is reused
}

}  // namespace
}  // namespace gruwb
