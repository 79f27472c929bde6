#pragma once
// Which op codes the engine's kernel table can run.

#include <cstdint>

namespace gruwb {

bool engine_supports_op(int32_t op_code);

}  // namespace gruwb
