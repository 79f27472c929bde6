#include "engine/tools/memory_budget.h"

#include <cstdio>
#include <cstdlib>

namespace gruwb::tools {
namespace {

// "10.5 GiB", "2.0 MiB"
std::string human_bytes(size_t bytes) {
  char text[32];
  const bool gib = bytes >= (size_t{1} << 30);
  std::snprintf(text, sizeof text, gib ? "%.1f GiB" : "%.1f MiB",
                static_cast<double>(bytes) / (gib ? (1u << 30) : (1u << 20)));
  return text;
}

}  // namespace

size_t memory_budget_bytes() {
  const size_t fallback = size_t{2} << 30;
  const char* text = std::getenv("GRUWB_MEMORY_BUDGET_MB");
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const unsigned long long mib = std::strtoull(text, &end, 10);
  if (*end != '\0' || mib == 0 || mib > (SIZE_MAX >> 20)) return fallback;
  return static_cast<size_t>(mib) << 20;
}

bool within_memory_budget(size_t needed, const ArenaUsage& usage, std::string* error) {
  const size_t budget = memory_budget_bytes();
  if (needed <= budget) return true;
  *error = "the plan needs " + std::to_string(needed) + " bytes (" + human_bytes(needed) +
           ") of arena, over the " + human_bytes(budget) +
           " memory budget (GRUWB_MEMORY_BUDGET_MB)";
  if (usage.largest_tensor_index >= 0) {
    *error += "; its largest tensor is subgraph " + std::to_string(usage.largest_tensor_subgraph) +
              " tensor " + std::to_string(usage.largest_tensor_index) + " '" +
              usage.largest_tensor + "' with " + std::to_string(usage.largest_tensor_bytes) +
              " bytes";
  }
  return false;
}

}  // namespace gruwb::tools
