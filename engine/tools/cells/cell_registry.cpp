#include "engine/tools/cells/cell_registry.h"

namespace gruwb::tools {

namespace cells {
// The built-in descriptors (gru.cpp, lstm.cpp, simple_rnn.cpp).
const CellDescriptor& gru_cell();
const CellDescriptor& lstm_cell();
const CellDescriptor& simple_rnn_cell();
}  // namespace cells

namespace {

// The built-ins are listed here rather than self-registering from their own files, because
// a static library drops object files nothing references.
std::vector<const CellDescriptor*>& cells_list() {
  static std::vector<const CellDescriptor*> list = {&cells::gru_cell(), &cells::lstm_cell(),
                                                    &cells::simple_rnn_cell()};
  return list;
}

}  // namespace

const std::vector<const CellDescriptor*>& registered_cells() { return cells_list(); }

const CellDescriptor* find_cell(const std::string& name) {
  for (const CellDescriptor* c : registered_cells()) {
    if (name == c->name) return c;
  }
  return nullptr;
}

bool parse_cell(const std::string& text, const CellDescriptor** out) {
  const CellDescriptor* cell = find_cell(text);
  if (cell) *out = cell;
  return cell != nullptr;
}

const CellDescriptor* default_cell() { return registered_cells().front(); }

bool register_cell(const CellDescriptor* cell, std::string* error) {
  if (!cell || !cell->name || !cell->display_name || !cell->layer_name || !cell->help) {
    *error = "cell descriptor without a name";
    return false;
  }
  if (cell->gates < 1 || cell->states < 1 || cell->states > 2) {
    *error = std::string("cell '") + cell->name + "': gates must be >= 1 and states 1 or 2";
    return false;
  }
  if (!cell->two_biases || !cell->step_macs || !cell->initialize || !cell->check ||
      !cell->describe || !cell->fused_op || !cell->fused_problem || !cell->emit_fused ||
      !cell->fused_takes_state || !cell->fused_needs_time_major || !cell->add_constants ||
      !cell->step || !cell->claims || !cell->match) {
    *error = std::string("cell '") + cell->name + "': a descriptor function is missing";
    return false;
  }
  if (find_cell(cell->name)) {
    *error = std::string("cell '") + cell->name + "' is already registered";
    return false;
  }
  cells_list().push_back(cell);
  return true;
}

std::string cell_names_text(const char* last_separator) {
  const auto& list = registered_cells();
  std::string text;
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) text += i + 1 == list.size() ? last_separator : ", ";
    text += list[i]->name;
  }
  return text;
}

}  // namespace gruwb::tools
