#pragma once
// The most arena memory a host command may plan. The engine sizes its arena exactly (a probe
// prepare reports the bytes it needs); a hostile or broken model can claim gigabytes with a few
// bytes of file (one [2^28, 8] tensor), so the host checks that figure against a budget before
// allocating it, and names the largest tensor when it is over.

#include <cstddef>
#include <string>

#include "engine/runtime/interpreter.h"

namespace gruwb::tools {

// 2 GiB, or GRUWB_MEMORY_BUDGET_MB from the environment (a positive integer of MiB).
size_t memory_budget_bytes();

// True when `needed` arena bytes fit the budget; otherwise false and `error` one line:
// "the plan needs 10737418240 bytes (10.0 GiB) of arena, over the 2.0 GiB memory budget
// (GRUWB_MEMORY_BUDGET_MB); its largest tensor is subgraph 0 tensor 3 'x' with 8589934592 bytes".
bool within_memory_budget(size_t needed, const ArenaUsage& usage, std::string* error);

}  // namespace gruwb::tools
