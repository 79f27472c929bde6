#pragma once
// Cell types from a plugin: each is a cell descriptor (engine/tools/cells/cell_descriptor.h,
// docs/cells.md) and the host kernel of its fused op (engine/runtime/kernel.h); the headers
// a descriptor's emitters and matcher need come with this one. The program
// that loads the plugin registers both before any command runs: the descriptor with
// tools::register_cell (the builder, detector, fuser, CLI and GUI list it from then on) and
// the kernel into the default op table (add_default_op), so every interpreter runs it.
//
// The kernel's portable sources also build into a board's firmware when they live in
// plugins/cells/<cell>/ with a kernel.cmake and the board names the op in GRUWB_FW_OPS
// (docs/firmware.md, plugins/README.md).

#include <vector>

#include "engine/runtime/kernel.h"
#include "engine/tools/cells/cell_descriptor.h"
#include "engine/tools/cells/cell_pattern.h"   // matchers: cells::Graph, cells::Matcher
#include "engine/tools/cells/cell_registry.h"  // find_cell: build on a built-in cell
#include "engine/tools/graph_writer.h"         // emitters: GraphWriter
#include "gruwb/plugin.h"

namespace gruwb::sdk {

struct PluginCell {
  const tools::CellDescriptor* descriptor = nullptr;
  // The fused op's kernel (custom ops carry their code in custom_code), or nullptr when the
  // descriptor's fused op is one the program already runs.
  const KernelRegistration* kernel = nullptr;
  const char* op_name = "";  // "GRUWB_MGU": the op as listings and GRUWB_FW_OPS name it
};

class CellPlugin {
 public:
  virtual ~CellPlugin() = default;
  // The cell types; descriptors and kernels must live as long as the plugin (statics).
  virtual std::vector<PluginCell> cells() const = 0;
};

}  // namespace gruwb::sdk

Q_DECLARE_INTERFACE(gruwb::sdk::CellPlugin,
                    "org.gruwb.CellPlugin/" GRUWB_PLUGIN_STRINGIFY(GRUWB_PLUGIN_SDK_VERSION))
