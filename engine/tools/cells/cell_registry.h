#pragma once
// The registry of cell types (cell_descriptor.h): the built-in GRU, LSTM and SimpleRNN, the cell
// plugins compiled in after them (FastGRNN, MGU: plugins/cells/*/cell.cmake), and whatever a
// caller registers at run time. The detector tries every registered
// matcher in registration order; the builder, the fuser, the CLI's help and parsers, the
// experiment panel and the training workspace list cells from here.

#include <string>
#include <vector>

#include "engine/tools/cells/cell_descriptor.h"

namespace gruwb::tools {

// Every registered cell type, built-ins first, then the compiled-in plugins, in registration
// order.
const std::vector<const CellDescriptor*>& registered_cells();

// The cell type named `name` (CellDescriptor::name, e.g. "lstm"), or nullptr.
const CellDescriptor* find_cell(const std::string& name);

// parse_*-style lookup for option parsers: false when `text` names no registered cell.
bool parse_cell(const std::string& text, const CellDescriptor** out);

// The cell a build spec starts with (the first built-in: GRU).
const CellDescriptor* default_cell();

// Adds a cell type; fails (with why) when the name is taken or a function is missing. Call
// at start-up, before any tool runs (the list is not locked); the descriptor must outlive
// every use (a plugin keeps it until the program ends).
bool register_cell(const CellDescriptor* cell, std::string* error);

// "gru, lstm, rnn, fastgrnn or mgu": the registered names for help texts and messages.
std::string cell_names_text(const char* last_separator = " or ");

}  // namespace gruwb::tools
