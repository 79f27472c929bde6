// gru_plugin_test: a cell type and its fused op from a plugin, for the tests. The cell is the
// built-in GRU descriptor under a new name whose fused op is GRUWB_GRU_PLUGIN_TEST: the
// GRUWB_GRU kernel registered under that code, so a model built with this cell runs only
// when the plugin's kernel reached the default op table.

#include <QObject>

#include "gruwb/cell_plugin.h"
#include "gruwb/plugin.h"

namespace gruwb {
extern const KernelRegistration kGruCustomKernel;  // GRUWB_GRU, in the loading program
}

namespace {

using namespace gruwb;

constexpr char kOp[] = "GRUWB_GRU_PLUGIN_TEST";

const tools::CellDescriptor& gru() { return *tools::find_cell("gru"); }

const char* fused_op(const tools::CellConfig& c, ModelFormat format, bool hybrid) {
  const char* op = gru().fused_op(c, format, hybrid);
  return std::string(op) == "GRUWB_GRU" ? kOp : op;
}

// Re-codes the GRUWB_GRU op the GRU emitter writes (only the ops this call added).
std::string emit_fused(tools::GraphWriter& g, const tools::FusedCell& cell,
                       tools::FusedPlan* plan) {
  const size_t ops_before = g.sg().operators.size(), held_before = g.held_ops().size();
  const std::string op = gru().emit_fused(g, cell, plan);
  if (op != "GRUWB_GRU") return op;
  const uint32_t from = g.opcode(kOpCustom, "GRUWB_GRU"), to = g.opcode(kOpCustom, kOp);
  for (size_t i = ops_before; i < g.sg().operators.size(); ++i) {
    if (g.sg().operators[i]->opcode_index == from) g.sg().operators[i]->opcode_index = to;
  }
  for (size_t i = held_before; i < g.held_ops().size(); ++i) {
    if (g.held_ops()[i]->opcode_index == from) g.held_ops()[i]->opcode_index = to;
  }
  return kOp;
}

const tools::CellDescriptor& descriptor() {
  static const tools::CellDescriptor d = [] {
    tools::CellDescriptor c = gru();
    c.name = "gru_plugin_test";
    c.display_name = "GRU (plugin test)";
    c.layer_name = "gru_plugin_test";
    c.help = "the GRU under another name, from a test plugin";
    c.fused_op = fused_op;
    c.emit_fused = emit_fused;
    return c;
  }();
  return d;
}

const KernelRegistration& kernel() {
  static const KernelRegistration k = [] {
    KernelRegistration r = kGruCustomKernel;
    r.custom_code = kOp;
    return r;
  }();
  return k;
}

class GruPluginTest : public QObject, public sdk::Plugin, public sdk::CellPlugin {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID GRUWB_PLUGIN_IID FILE "gru_plugin_test.json")
  Q_INTERFACES(gruwb::sdk::Plugin gruwb::sdk::CellPlugin)

 public:
  QString name() const override { return "gru_plugin_test"; }
  QString version() const override { return "0.1"; }
  QString description() const override { return "the GRU as a plugin cell (tests)"; }
  // State the tests round-trip through a project file.
  QJsonObject saveState() const override { return state_; }
  void restoreState(const QJsonObject& state) override { state_ = state; }

  std::vector<sdk::PluginCell> cells() const override { return {{&descriptor(), &kernel(), kOp}}; }

 private:
  QJsonObject state_;
};

}  // namespace

#include "gru_plugin_test.moc"
