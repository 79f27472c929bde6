#pragma once
// The minimal gated unit's host side: its cell descriptor (engine/tools/cells/cell_descriptor.h),
// which cell.cmake registers after the built-in cells. Host only, no Qt.

#include "engine/tools/cells/cell_descriptor.h"

namespace gruwb::plugins {

const tools::CellDescriptor& mgu_cell_descriptor();

}  // namespace gruwb::plugins
