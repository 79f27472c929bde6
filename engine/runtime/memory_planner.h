#pragma once
// Arena placement as a pure unit, like TFLM's GreedyMemoryPlanner: buffers
// with sizes and lifetimes in, offsets and the arena's high-water mark out.
// It knows nothing about tensors, subgraphs or training; the interpreter
// turns those into buffers (engine/runtime/interpreter.cpp, plan_activations)
// and gives the planner its work memory, so planning allocates nothing.

#include <cstddef>
#include <cstdint>

namespace gruwb {

struct PlannedBuffer {
  size_t bytes;    // 0: not placed (offset left as is)
  size_t offset;   // out: from the start of the activation area
  uint32_t first;  // lifetime, inclusive, in the caller's time units
  uint32_t last;
};

// Work memory plan_buffers() needs for `count` buffers.
constexpr size_t planner_work_bytes(int32_t count) {
  return sizeof(int32_t) * 2 * static_cast<size_t>(count < 0 ? 0 : count);
}

// Greedy by size: the buffers with bytes > 0, largest first (ties keep their
// order), each at the lowest offset (a multiple of `alignment`, a power of
// two) that does not collide with an already placed buffer whose lifetime
// overlaps its own; buffers alive at disjoint times may share memory.
// Returns the high-water mark: the bytes the placed buffers span, each
// rounded up to `alignment`. `work`: planner_work_bytes(count) bytes,
// aligned for int32_t.
size_t plan_buffers(PlannedBuffer* buffers, int32_t count, size_t alignment, void* work);

}  // namespace gruwb
