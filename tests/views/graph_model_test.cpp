// The graph the view draws and its layered layout, on shipped models and on
// the builder's unrolled GRU (the big case: hundreds of ops, long edges).
// Prints the layout time of the unrolled model (no timing assert).

#include "views/graph_model.h"

#include <QElapsedTimer>
#include <QtTest>
#include <set>

#include "engine/tools/analyzer.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "tests/views/loaded_model.h"
#include "views/graph_layout.h"

using gruwb::tools::AnalyzerReport;
using gruwb::views::GraphLayout;
using gruwb::views::GraphModel;
using gruwb::views::GraphNode;
using gruwb::views::LayoutSize;

namespace {

QString shared(const char* name) { return QString(GRUWB_SHARED_DIR) + "/data/models/" + name; }
QString sample(const char* name) {
  return QString(GRUWB_SOURCE_DIR) + "/resources/samples/" + name;
}

AnalyzerReport unrolledGru(int timesteps) {
  gruwb::tools::BuildSpec spec;
  spec.layout = gruwb::tools::RnnLayout::kUnrolled;
  spec.timesteps = timesteps;
  gruwb::tools::ModelDef def;
  std::string error;
  std::vector<uint8_t> bytes;
  gruwb::tools::LoadedModel loaded;
  if (!gruwb::tools::build_model(spec, &def, &error) ||
      !gruwb::tools::write_model(def, spec.format, &bytes, &error) ||
      !gruwb::tools::load_model_bytes(std::move(bytes), "unrolled", &loaded, &error)) {
    qFatal("cannot build the unrolled GRU: %s", error.c_str());
  }
  return gruwb::tools::analyze_model(loaded.model, "unrolled");
}

int countKind(const GraphModel& graph, GraphNode::Kind kind) {
  int n = 0;
  for (const GraphNode& node : graph.nodes) n += node.kind == kind ? 1 : 0;
  return n;
}

// Node sizes as the view would roughly make them.
std::vector<LayoutSize> sizesOf(const GraphModel& graph) {
  std::vector<LayoutSize> sizes;
  for (const GraphNode& node : graph.nodes) {
    sizes.push_back({120.0 + 4.0 * node.title.size(), 40.0 + 18.0 * node.badges.size()});
  }
  return sizes;
}

std::vector<std::pair<int, int>> edgesOf(const GraphModel& graph) {
  std::vector<std::pair<int, int>> edges;
  for (const auto& edge : graph.edges) edges.emplace_back(edge.from, edge.to);
  return edges;
}

// Layout invariants: every edge runs downwards, nodes of one layer never
// overlap, and crossing reduction never makes things worse.
void checkLayout(const GraphModel& graph, const GraphLayout& layout) {
  const std::vector<LayoutSize> sizes = sizesOf(graph);
  QCOMPARE(layout.nodes.size(), graph.nodes.size());
  for (const auto& edge : graph.edges) {
    QVERIFY(layout.layer[edge.to] > layout.layer[edge.from]);
    QVERIFY(layout.nodes[edge.to].y >= layout.nodes[edge.from].y + sizes[edge.from].height);
  }
  for (size_t a = 0; a < graph.nodes.size(); ++a) {
    for (size_t b = a + 1; b < graph.nodes.size(); ++b) {
      if (layout.layer[a] != layout.layer[b]) continue;
      const bool apart = layout.nodes[a].x + sizes[a].width <= layout.nodes[b].x + 1e-6 ||
                         layout.nodes[b].x + sizes[b].width <= layout.nodes[a].x + 1e-6;
      QVERIFY2(apart, qPrintable(QString("nodes %1 and %2 overlap").arg(a).arg(b)));
    }
  }
  QVERIFY(layout.crossings <= layout.initial_crossings);
  for (size_t e = 0; e < layout.edges.size(); ++e) QVERIFY(layout.edges[e].size() >= 2);
}

}  // namespace

class GraphModelTest : public QObject {
  Q_OBJECT

 private slots:
  void helloWorldIsAChainOfThreeDenseLayers() {
    const AnalyzerReport report =
        gruwb::test::analyze_file(shared("tflite/tflm_hello_world_float.tflite"));
    const GraphModel graph = gruwb::views::build_graph(report, 0);
    // input -> FC -> FC -> FC -> output
    QCOMPARE(static_cast<int>(graph.nodes.size()), 5);
    QCOMPARE(countKind(graph, GraphNode::Kind::kOp), 3);
    QCOMPARE(static_cast<int>(graph.edges.size()), 4);
    for (int op = 0; op < 3; ++op) {
      const GraphNode& node = graph.nodes[graph.node_of_op(op)];
      QCOMPARE(node.title, std::string("FULLY_CONNECTED"));
      // Weights and bias are badges, not nodes.
      QCOMPARE(static_cast<int>(node.badges.size()), 2);
      QVERIFY(node.badges[0].label.rfind("W [", 0) == 0);
      QVERIFY(node.badges[1].label.rfind("b [", 0) == 0);
    }
    // The first two layers are Dense + ReLU: the fused activation shows.
    QCOMPARE(graph.nodes[graph.node_of_op(0)].activation, std::string("RELU"));
    QCOMPARE(graph.nodes[graph.node_of_op(2)].activation, std::string());
    QCOMPARE(graph.nodes[graph.node_of_op(2)].shape, std::string("[1,1]"));
    checkLayout(graph, gruwb::views::layout_graph(sizesOf(graph), edgesOf(graph)));
  }

  void whileModelsLinkTheirBodies() {
    const AnalyzerReport report = gruwb::test::analyze_file(sample("gesture_gru_while.tflite"));
    QCOMPARE(static_cast<int>(report.subgraphs.size()), 3);
    const GraphModel main = gruwb::views::build_graph(report, 0);
    int whiles = 0;
    for (const GraphNode& node : main.nodes) {
      if (node.title != "WHILE") continue;
      ++whiles;
      QCOMPARE(static_cast<int>(node.called_subgraphs.size()), 2);
      QCOMPARE(gruwb::views::primary_called_subgraph(node), node.called_subgraphs[1]);
      QVERIFY(node.called_labels[0].rfind("cond: ", 0) == 0);
      QVERIFY(node.called_labels[1].rfind("body: ", 0) == 0);
    }
    QCOMPARE(whiles, 1);
    // Every subgraph: inputs + ops + outputs nodes, and a valid layout.
    for (int s = 0; s < 3; ++s) {
      const GraphModel graph = gruwb::views::build_graph(report, s);
      const auto& sub = report.subgraphs[s];
      std::set<int> inputs(sub.inputs.begin(), sub.inputs.end());
      QCOMPARE(static_cast<int>(graph.nodes.size()),
               static_cast<int>(inputs.size() + sub.ops.size() + sub.outputs.size()));
      checkLayout(graph, gruwb::views::layout_graph(sizesOf(graph), edgesOf(graph)));
    }
  }

  void findMatchesOpNamesIndicesAndTensorNames() {
    const AnalyzerReport report =
        gruwb::test::analyze_file(shared("tflite/tflm_hello_world_float.tflite"));
    const GraphModel graph = gruwb::views::build_graph(report, 0);
    const auto& sub = report.subgraphs[0];
    QCOMPARE(gruwb::views::find_nodes(graph, sub, "fully_conn").size(), size_t{3});
    QCOMPARE(gruwb::views::find_nodes(graph, sub, "#1"), std::vector<int>{graph.node_of_op(1)});
    // A weight's name finds the op that uses it.
    const int weight = graph.nodes[graph.node_of_op(2)].badges[0].tensor;
    const std::vector<int> by_weight =
        gruwb::views::find_nodes(graph, sub, sub.tensors[weight].name);
    QVERIFY(std::find(by_weight.begin(), by_weight.end(), graph.node_of_op(2)) != by_weight.end());
    QVERIFY(gruwb::views::find_nodes(graph, sub, "no such thing").empty());
  }

  void crossingReductionUntanglesAReversedOrder() {
    // Two parallel chains fed in swapped order: a->d, b->c crosses once
    // until the lower layer is reordered.
    const std::vector<LayoutSize> sizes(4, LayoutSize{50, 20});
    const gruwb::views::GraphLayout layout = gruwb::views::layout_graph(sizes, {{0, 3}, {1, 2}});
    QCOMPARE(layout.initial_crossings, 1LL);
    QCOMPARE(layout.crossings, 0LL);
    QVERIFY((layout.nodes[0].x < layout.nodes[1].x) == (layout.nodes[3].x < layout.nodes[2].x));
  }

  void unrolledGruWithSixtyStepsLaysOutQuickly() {
    const AnalyzerReport report = unrolledGru(60);
    const GraphModel graph = gruwb::views::build_graph(report, 0);
    QVERIFY2(countKind(graph, GraphNode::Kind::kOp) >= 400,
             qPrintable(QString::number(countKind(graph, GraphNode::Kind::kOp))));
    const std::vector<LayoutSize> sizes = sizesOf(graph);
    const auto edges = edgesOf(graph);
    QElapsedTimer timer;
    timer.start();
    const GraphLayout layout = gruwb::views::layout_graph(sizes, edges);
    const qint64 ms = timer.elapsed();
    qInfo(
        "unrolled GRU T=60: %d ops, %d edges, %d layers, %d dummies, crossings %lld -> %lld, "
        "layout %lld ms",
        countKind(graph, GraphNode::Kind::kOp), static_cast<int>(edges.size()), layout.layer_count,
        layout.dummy_count, layout.initial_crossings, layout.crossings, static_cast<long long>(ms));
    checkLayout(graph, layout);
  }

  // Issue 20 point 10: fused ops' weights are named by their documented roles, not in1/in2.
  void fusedGruBadgesNameTheirRoles() {
    const AnalyzerReport report = gruwb::test::analyze_file(
        QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite");
    const GraphModel graph = gruwb::views::build_graph(report, 0);
    int gru = -1;
    for (const GraphNode& node : graph.nodes) {
      if (node.title == "CUSTOM:GRUWB_GRU") gru = node.op;
    }
    QVERIFY(gru >= 0);
    QStringList roles;
    for (const auto& badge : graph.nodes[graph.node_of_op(gru)].badges) {
      roles << QString::fromStdString(badge.label).section(' ', 0, 0);
    }
    QVERIFY2(roles.startsWith("W_x"), qPrintable(roles.join(",")));
    QVERIFY2(roles.contains("W_h") && roles.contains("bias"), qPrintable(roles.join(",")));
    for (const QString& role : roles) QVERIFY2(!role.startsWith("in"), qPrintable(role));
    QCOMPARE(gruwb::views::op_input_role("UNIDIRECTIONAL_SEQUENCE_LSTM", 19), std::string("c0"));
    QCOMPARE(gruwb::views::op_input_role("GRU", 3), std::string("W_h"));
  }
};

QTEST_MAIN(GraphModelTest)
#include "graph_model_test.moc"
