#pragma once
// The graph of one subgraph as the graph view draws it (Netron's reading):
// ops are nodes, activation tensors are edges from the op that writes them to
// each op that reads them, constant weights are badges on the node that uses
// them rather than nodes of their own, and the subgraph's inputs and outputs
// are small terminal nodes. Built from the analyzer report, so the graph and
// the report always agree. No Qt here: the layout benchmark and tests use it
// as plain data.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/analyzer.h"

namespace gruwb::views {

// "[1,60,3]"; "[]" for a scalar.
std::string shape_text(const std::vector<int32_t>& shape);

// The documented role of input `position` of op `op_name` ("W_x" for GRUWB_GRU's
// input 1, "b" for FULLY_CONNECTED's input 2), "in<position>" for ops without a table entry.
// Badges and the op inspector name inputs with it.
std::string op_input_role(const std::string& op_name, size_t position);

struct GraphBadge {
  int tensor = -1;
  std::string label;      // role and shape, e.g. "W [180,3]"
  bool variable = false;  // a variable (state) tensor rather than a constant
};

struct GraphNode {
  enum class Kind { kOp, kInput, kOutput };
  Kind kind = Kind::kOp;
  int op = -1;             // kOp: operator index in the subgraph
  int tensor = -1;         // kInput/kOutput: the subgraph input/output tensor
  std::string title;       // op name ("FULLY_CONNECTED") or the tensor's name
  std::string activation;  // fused activation ("RELU"), "" when none
  std::string shape;       // first output's shape ("[1,60]"), terminals: the tensor's
  std::vector<GraphBadge> badges;
  std::vector<int32_t> called_subgraphs;   // WHILE: cond, body; IF: then, else; CALL_ONCE: init
  std::vector<std::string> called_labels;  // "body: while_body" per called subgraph
};

struct GraphEdge {
  int from = -1;  // node indices
  int to = -1;
  int tensor = -1;
  std::string label;  // the tensor's shape
};

struct GraphModel {
  int subgraph = 0;
  std::string name;  // the subgraph's name, or "subgraph N"
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;

  // Node drawing op `op`, or -1.
  int node_of_op(int op) const;
};

GraphModel build_graph(const tools::AnalyzerReport& report, int subgraph);

// The subgraph to open on double-click: WHILE's body, IF's then branch,
// CALL_ONCE's init; -1 when the node calls none.
int primary_called_subgraph(const GraphNode& node);

// Nodes (and tensors on edges/badges) whose title, op index ("#12") or tensor
// name contains `text` (case-insensitive), in node order, without duplicates.
std::vector<int> find_nodes(const GraphModel& graph, const tools::SubgraphReport& subgraph,
                            const std::string& text);

}  // namespace gruwb::views
