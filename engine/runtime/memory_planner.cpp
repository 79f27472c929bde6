#include "engine/runtime/memory_planner.h"

#include "engine/model/checked_size.h"

namespace gruwb {

size_t plan_buffers(PlannedBuffer* buffers, int32_t count, size_t alignment, void* work) {
  // Sizes and offsets that do not fit size_t (absurd models, 32-bit targets) make the plan
  // SIZE_MAX bytes, which no arena has.
  const auto align_up = [alignment](size_t n) {
    size_t aligned = SIZE_MAX;
    return checked_align_up(n, alignment, &aligned) ? aligned : SIZE_MAX;
  };
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
      if (other.offset >= saturating_add(candidate, size)) break;  // the gap before `other` fits
      const size_t other_end = saturating_add(other.offset, align_up(other.bytes));
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
    const size_t end = saturating_add(candidate, size);
    if (end == SIZE_MAX) return SIZE_MAX;
    if (end > high_water) high_water = end;
  }
  return high_water;
}

}  // namespace gruwb
