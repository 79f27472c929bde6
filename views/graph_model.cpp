#include "views/graph_model.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace gruwb::views {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Input roles per op, in input order (the op definitions: TFLite's builtin ops,
// Circle's GRU in engine/kernels/gru.cpp, GRUWB_GRU in docs/fused-gru-op.md), so
// a badge reads "W_x [180,3]" instead of a converter path or "in1".
struct OpInputRoles {
  const char* op;
  std::vector<const char*> roles;
};

const std::vector<OpInputRoles>& input_role_table() {
  static const std::vector<OpInputRoles> table = {
      {"FULLY_CONNECTED", {"x", "W", "b"}},
      {"CONV_2D", {"x", "W", "b"}},
      {"DEPTHWISE_CONV_2D", {"x", "W", "b"}},
      {"TRANSPOSE_CONV", {"output_shape", "W", "x", "b"}},
      {"BATCH_MATMUL", {"x", "y"}},
      {"TRANSPOSE", {"x", "perm"}},
      {"RESHAPE", {"x", "shape"}},
      {"STRIDED_SLICE", {"x", "begin", "end", "strides"}},
      {"SLICE", {"x", "begin", "size"}},
      {"GATHER", {"params", "indices"}},
      {"PAD", {"x", "paddings"}},
      {"MEAN", {"x", "axis"}},
      {"SUM", {"x", "axis"}},
      {"EXPAND_DIMS", {"x", "axis"}},
      {"SPLIT", {"axis", "x"}},
      {"SPLIT_V", {"x", "size_splits", "axis"}},
      {"FILL", {"dims", "value"}},
      {"CUSTOM:GRUWB_GRU", {"x", "W_x", "W_h", "bias", "h0"}},
      {"GRU", {"x", "W_x", "b_x", "W_h", "b_h", "h0"}},  // Circle GRU (op -5)
      {"UNIDIRECTIONAL_SEQUENCE_RNN", {"x", "W_x", "W_h", "bias", "h0"}},
      {"RNN", {"x", "W_x", "W_h", "bias", "h0"}},
      {"SVDF", {"x", "W_feature", "W_time", "bias", "state"}},
      // TFLite's 24-input LSTM: gates i|f|c|o, peepholes, projection, states, layer norms.
      {"UNIDIRECTIONAL_SEQUENCE_LSTM",
       {"x",      "W_xi",   "W_xf", "W_xc", "W_xo", "W_hi", "W_hf", "W_hc",
        "W_ho",   "w_ci",   "w_cf", "w_co", "b_i",  "b_f",  "b_c",  "b_o",
        "W_proj", "b_proj", "h0",   "c0",   "ln_i", "ln_f", "ln_c", "ln_o"}},
  };
  return table;
}

std::string option_value(const tools::OpReport& op, const char* key) {
  for (const tools::OptionValue& value : op.option_values) {
    if (value.key == key) return value.value;
  }
  return {};
}

std::string subgraph_label(const tools::AnalyzerReport& report, int32_t index) {
  if (index >= 0 && index < static_cast<int32_t>(report.subgraphs.size()) &&
      !report.subgraphs[index].name.empty()) {
    return report.subgraphs[index].name;
  }
  return "subgraph " + std::to_string(index);
}

std::vector<std::string> called_roles(const std::string& op_name, size_t count) {
  if (op_name == "WHILE" && count == 2) return {"cond", "body"};
  if (op_name == "IF" && count == 2) return {"then", "else"};
  if (op_name == "CALL_ONCE" && count == 1) return {"init"};
  std::vector<std::string> roles;
  for (size_t i = 0; i < count; ++i) roles.push_back("calls");
  return roles;
}

}  // namespace

std::string shape_text(const std::vector<int32_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string op_input_role(const std::string& op_name, size_t position) {
  for (const OpInputRoles& entry : input_role_table()) {
    if (op_name == entry.op && position < entry.roles.size()) return entry.roles[position];
  }
  return "in" + std::to_string(position);
}

int GraphModel::node_of_op(int op) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == GraphNode::Kind::kOp && nodes[i].op == op) return static_cast<int>(i);
  }
  return -1;
}

GraphModel build_graph(const tools::AnalyzerReport& report, int subgraph_index) {
  GraphModel graph;
  if (subgraph_index < 0 || subgraph_index >= static_cast<int>(report.subgraphs.size())) {
    return graph;
  }
  const tools::SubgraphReport& subgraph = report.subgraphs[subgraph_index];
  graph.subgraph = subgraph_index;
  graph.name = subgraph.name.empty() ? "subgraph " + std::to_string(subgraph_index) : subgraph.name;
  const auto tensor = [&](int32_t t) -> const tools::TensorReport* {
    return t >= 0 && t < static_cast<int32_t>(subgraph.tensors.size()) ? &subgraph.tensors[t]
                                                                       : nullptr;
  };

  // Who writes each tensor: an op, or a subgraph-input terminal.
  std::map<int32_t, int> producer;
  for (int32_t t : subgraph.inputs) {
    const tools::TensorReport* info = tensor(t);
    if (!info || producer.count(t)) continue;
    GraphNode node;
    node.kind = GraphNode::Kind::kInput;
    node.tensor = t;
    node.title = info->name.empty() ? "input " + std::to_string(t) : info->name;
    node.shape = shape_text(info->shape);
    producer[t] = static_cast<int>(graph.nodes.size());
    graph.nodes.push_back(std::move(node));
  }
  for (const tools::OpReport& op : subgraph.ops) {
    GraphNode node;
    node.kind = GraphNode::Kind::kOp;
    node.op = op.index;
    node.title = op.name;
    const std::string activation = option_value(op, "fused_activation_function");
    if (!activation.empty() && activation != "NONE") node.activation = activation;
    if (!op.outputs.empty() && tensor(op.outputs[0])) {
      node.shape = shape_text(tensor(op.outputs[0])->shape);
    }
    node.called_subgraphs = op.called_subgraphs;
    const std::vector<std::string> roles = called_roles(op.name, op.called_subgraphs.size());
    for (size_t i = 0; i < op.called_subgraphs.size(); ++i) {
      node.called_labels.push_back(roles[i] + ": " +
                                   subgraph_label(report, op.called_subgraphs[i]));
    }
    const int node_index = static_cast<int>(graph.nodes.size());
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const tools::TensorReport* info = tensor(op.inputs[i]);
      if (!info) continue;
      const bool produced = producer.count(op.inputs[i]) > 0;
      if (!produced && (info->is_constant || info->is_variable)) {
        node.badges.push_back(GraphBadge{op.inputs[i],
                                         op_input_role(op.name, i) + " " + shape_text(info->shape),
                                         info->is_variable});
      } else if (produced) {
        graph.edges.push_back(
            GraphEdge{producer[op.inputs[i]], node_index, op.inputs[i], shape_text(info->shape)});
      } else {
        // Read but never written (an empty optional, or a malformed graph):
        // a badge keeps it visible without inventing a producer.
        node.badges.push_back(GraphBadge{
            op.inputs[i], op_input_role(op.name, i) + " " + shape_text(info->shape), false});
      }
    }
    for (int32_t t : op.outputs) {
      if (tensor(t)) producer[t] = node_index;
    }
    graph.nodes.push_back(std::move(node));
  }
  for (int32_t t : subgraph.outputs) {
    const tools::TensorReport* info = tensor(t);
    if (!info) continue;
    GraphNode node;
    node.kind = GraphNode::Kind::kOutput;
    node.tensor = t;
    node.title = info->name.empty() ? "output " + std::to_string(t) : info->name;
    node.shape = shape_text(info->shape);
    const int node_index = static_cast<int>(graph.nodes.size());
    auto found = producer.find(t);
    if (found != producer.end()) {
      graph.edges.push_back(GraphEdge{found->second, node_index, t, node.shape});
    }
    graph.nodes.push_back(std::move(node));
  }
  return graph;
}

int primary_called_subgraph(const GraphNode& node) {
  if (node.called_subgraphs.empty()) return -1;
  // WHILE's interesting half is the body (the cond only compares a counter).
  if (node.title == "WHILE" && node.called_subgraphs.size() == 2) return node.called_subgraphs[1];
  return node.called_subgraphs[0];
}

std::vector<int> find_nodes(const GraphModel& graph, const tools::SubgraphReport& subgraph,
                            const std::string& text) {
  std::vector<int> found;
  const std::string needle = lower(text);
  if (needle.empty()) return found;
  const auto tensor_matches = [&](int t) {
    return t >= 0 && t < static_cast<int>(subgraph.tensors.size()) &&
           lower(subgraph.tensors[t].name).find(needle) != std::string::npos;
  };
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const GraphNode& node = graph.nodes[n];
    bool match = lower(node.title).find(needle) != std::string::npos;
    if (!match && node.kind == GraphNode::Kind::kOp) {
      match = ("#" + std::to_string(node.op)) == needle;
      const tools::OpReport& op = subgraph.ops[node.op];
      for (int32_t t : op.outputs) match = match || tensor_matches(t);
      for (const GraphBadge& badge : node.badges) match = match || tensor_matches(badge.tensor);
    }
    if (match) found.push_back(static_cast<int>(n));
  }
  return found;
}

}  // namespace gruwb::views
