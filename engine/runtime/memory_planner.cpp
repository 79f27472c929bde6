#include "engine/runtime/memory_planner.h"

namespace gruwb {

size_t plan_buffers(PlannedBuffer* buffers, int32_t count, size_t alignment, void* work) {
  const auto align_up = [alignment](size_t n) { return (n + alignment - 1) & ~(alignment - 1); };
  int32_t* order = static_cast<int32_t*>(work);
  int32_t* placed = order + count;  // placed ids, sorted by offset
  int32_t order_count = 0;
  for (int32_t b = 0; b < count; ++b) {
    if (buffers[b].bytes > 0) order[order_count++] = b;
  }
  for (int32_t i = 1; i < order_count; ++i) {  // insertion sort: stable, no recursion
    const int32_t id = order[i];
    int32_t j = i - 1;
    while (j >= 0 && buffers[order[j]].bytes < buffers[id].bytes) {
      order[j + 1] = order[j];
      --j;
    }
    order[j + 1] = id;
  }
  size_t high_water = 0;
  int32_t placed_count = 0;
  for (int32_t i = 0; i < order_count; ++i) {
    PlannedBuffer& b = buffers[order[i]];
    const size_t size = align_up(b.bytes);
    size_t candidate = 0;
    for (int32_t p = 0; p < placed_count; ++p) {
      const PlannedBuffer& other = buffers[placed[p]];
      const bool overlaps_in_time = !(other.last < b.first || b.last < other.first);
      if (!overlaps_in_time) continue;
      if (other.offset >= candidate + size) break;  // the gap before `other` fits
      const size_t other_end = other.offset + align_up(other.bytes);
      if (other_end > candidate) candidate = other_end;
    }
    b.offset = candidate;
    int32_t pos = placed_count;  // keep `placed` sorted by offset
    while (pos > 0 && buffers[placed[pos - 1]].offset > candidate) {
      placed[pos] = placed[pos - 1];
      --pos;
    }
    placed[pos] = order[i];
    ++placed_count;
    if (candidate + size > high_water) high_water = candidate + size;
  }
  return high_water;
}

}  // namespace gruwb
