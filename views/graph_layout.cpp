#include "views/graph_layout.h"

#include <algorithm>
#include <numeric>

namespace gruwb::views {
namespace {

// A node of the layered graph: a real node or a dummy on a long edge.
struct Layered {
  std::vector<int> layer;
  std::vector<double> width;
  std::vector<std::vector<int>> up;     // neighbours one layer above
  std::vector<std::vector<int>> down;   // neighbours one layer below
  std::vector<std::vector<int>> order;  // nodes of each layer, left to right
  std::vector<int> pos;                 // index of each node in its layer
  int real_count = 0;

  bool dummy(int v) const { return v >= real_count; }
  int add(int node_layer, double node_width) {
    layer.push_back(node_layer);
    width.push_back(node_width);
    up.emplace_back();
    down.emplace_back();
    pos.push_back(0);
    return static_cast<int>(layer.size()) - 1;
  }
  void link(int a, int b) {
    down[a].push_back(b);
    up[b].push_back(a);
  }
  void index_positions(int l) {
    for (size_t i = 0; i < order[l].size(); ++i) pos[order[l][i]] = static_cast<int>(i);
  }
};

// Crossings between layer l and l+1: inversions of the lower ends when the
// segments are sorted by their upper end (Fenwick tree, E log V).
long long crossings_between(const Layered& g, int l, std::vector<std::pair<int, int>>* scratch,
                            std::vector<int>* tree) {
  scratch->clear();
  for (int a : g.order[l]) {
    for (int b : g.down[a]) scratch->emplace_back(g.pos[a], g.pos[b]);
  }
  std::sort(scratch->begin(), scratch->end());
  const int n = static_cast<int>(g.order[l + 1].size());
  tree->assign(n + 1, 0);
  long long count = 0;
  long long seen = 0;
  for (const auto& segment : *scratch) {
    // Segments seen so far whose lower end lies right of this one cross it.
    long long not_greater = 0;
    for (int i = segment.second + 1; i > 0; i -= i & -i) not_greater += (*tree)[i];
    count += seen - not_greater;
    for (int i = segment.second + 1; i <= n; i += i & -i) ++(*tree)[i];
    ++seen;
  }
  return count;
}

long long total_crossings(const Layered& g) {
  std::vector<std::pair<int, int>> scratch;
  std::vector<int> tree;
  long long total = 0;
  for (size_t l = 0; l + 1 < g.order.size(); ++l) {
    total += crossings_between(g, static_cast<int>(l), &scratch, &tree);
  }
  return total;
}

// Reorders layer l by the mean position of each node's neighbours in the
// adjacent layer; nodes without such neighbours keep their place.
void barycenter_sort(Layered* g, int l, bool use_up) {
  std::vector<int>& nodes = g->order[l];
  std::vector<std::pair<double, int>> keyed;
  keyed.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::vector<int>& neighbours = use_up ? g->up[nodes[i]] : g->down[nodes[i]];
    double key = static_cast<double>(i);
    if (!neighbours.empty()) {
      double sum = 0;
      for (int u : neighbours) sum += g->pos[u];
      key = sum / static_cast<double>(neighbours.size());
    }
    keyed.emplace_back(key, nodes[i]);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = keyed[i].second;
  g->index_positions(l);
}

void reduce_crossings(Layered* g, int sweeps, long long* initial, long long* final_count) {
  long long best = total_crossings(*g);
  *initial = best;
  std::vector<std::vector<int>> best_order = g->order;
  const int layers = static_cast<int>(g->order.size());
  for (int sweep = 0; sweep < sweeps && best > 0; ++sweep) {
    for (int l = 1; l < layers; ++l) barycenter_sort(g, l, /*use_up=*/true);
    for (int l = layers - 2; l >= 0; --l) barycenter_sort(g, l, /*use_up=*/false);
    const long long now = total_crossings(*g);
    if (now < best) {
      best = now;
      best_order = g->order;
    }
  }
  g->order = best_order;
  for (int l = 0; l < layers; ++l) g->index_positions(l);
  *final_count = best;
}

// Places each layer's nodes as close to `desired` centres as the order and the
// gaps allow: the mean of a left-packing and a right-packing, which both keep
// the minimum separation, so their mean does too.
void pack_layer(const Layered& g, const std::vector<int>& nodes, const std::vector<double>& desired,
                double gap, std::vector<double>* x) {
  const size_t n = nodes.size();
  if (n == 0) return;
  std::vector<double> left(n), right(n);
  for (size_t i = 0; i < n; ++i) {
    left[i] = desired[i];
    if (i > 0) {
      const double separation = (g.width[nodes[i - 1]] + g.width[nodes[i]]) / 2 + gap;
      left[i] = std::max(left[i], left[i - 1] + separation);
    }
  }
  for (size_t k = n; k-- > 0;) {
    right[k] = desired[k];
    if (k + 1 < n) {
      const double separation = (g.width[nodes[k + 1]] + g.width[nodes[k]]) / 2 + gap;
      right[k] = std::min(right[k], right[k + 1] - separation);
    }
  }
  for (size_t i = 0; i < n; ++i) (*x)[nodes[i]] = (left[i] + right[i]) / 2;
}

std::vector<double> assign_x(const Layered& g, const LayoutOptions& options) {
  std::vector<double> x(g.layer.size(), 0.0);
  const int layers = static_cast<int>(g.order.size());
  for (int l = 0; l < layers; ++l) {
    double cursor = 0;
    for (int v : g.order[l]) {
      x[v] = cursor + g.width[v] / 2;
      cursor += g.width[v] + options.node_gap;
    }
  }
  std::vector<double> desired;
  const auto weight = [&](int a, int b) { return g.dummy(a) && g.dummy(b) ? 8.0 : 1.0; };
  for (int pass = 0; pass < options.coordinate_passes; ++pass) {
    // Alternate pulling toward the layer above and the one below; the last
    // two passes use both so neither end of the drawing is favoured.
    const bool last = pass >= options.coordinate_passes - 2;
    const bool downward = pass % 2 == 0;
    for (int step = 0; step < layers; ++step) {
      const int l = downward ? step : layers - 1 - step;
      const std::vector<int>& nodes = g.order[l];
      desired.assign(nodes.size(), 0.0);
      for (size_t i = 0; i < nodes.size(); ++i) {
        const int v = nodes[i];
        double sum = 0;
        double total = 0;
        if (downward || last) {
          for (int u : g.up[v]) {
            sum += weight(u, v) * x[u];
            total += weight(u, v);
          }
        }
        if (!downward || last) {
          for (int u : g.down[v]) {
            sum += weight(u, v) * x[u];
            total += weight(u, v);
          }
        }
        desired[i] = total > 0 ? sum / total : x[v];
      }
      pack_layer(g, nodes, desired, options.node_gap, &x);
    }
  }
  return x;
}

}  // namespace

GraphLayout layout_graph(const std::vector<LayoutSize>& sizes,
                         const std::vector<std::pair<int, int>>& edges,
                         const LayoutOptions& options) {
  GraphLayout result;
  const int n = static_cast<int>(sizes.size());
  result.nodes.resize(n);
  result.layer.assign(n, 0);
  result.edges.resize(edges.size());
  if (n == 0) return result;

  // Edges pointing backwards in node order are reversed, which makes node
  // order a topological order (ops come in execution order anyway).
  std::vector<std::vector<int>> preds(n), succs(n);
  for (const auto& edge : edges) {
    if (edge.first == edge.second || edge.first < 0 || edge.second < 0 || edge.first >= n ||
        edge.second >= n) {
      continue;
    }
    const int a = std::min(edge.first, edge.second);
    const int b = std::max(edge.first, edge.second);
    succs[a].push_back(b);
    preds[b].push_back(a);
  }

  // 1. Longest-path layering, sources moved down next to their first reader.
  std::vector<int> layer(n, 0);
  for (int v = 0; v < n; ++v) {
    for (int u : preds[v]) layer[v] = std::max(layer[v], layer[u] + 1);
  }
  for (int v = n - 1; v >= 0; --v) {
    if (!preds[v].empty() || succs[v].empty()) continue;
    int first_reader = layer[succs[v][0]];
    for (int s : succs[v]) first_reader = std::min(first_reader, layer[s]);
    layer[v] = first_reader - 1;
  }
  // Drop layers left empty by the move.
  const int max_layer = *std::max_element(layer.begin(), layer.end());
  std::vector<int> remap(max_layer + 1, 0);
  for (int v = 0; v < n; ++v) remap[layer[v]] = 1;
  int used = 0;
  for (int& slot : remap) slot = slot ? used++ : -1;
  for (int v = 0; v < n; ++v) layer[v] = remap[layer[v]];

  // 2. The layered graph with dummies.
  Layered g;
  g.real_count = n;
  for (int v = 0; v < n; ++v) g.add(layer[v], sizes[v].width);
  std::vector<std::vector<int>> chains(edges.size());
  for (size_t e = 0; e < edges.size(); ++e) {
    const int from = edges[e].first;
    const int to = edges[e].second;
    if (from == to || from < 0 || to < 0 || from >= n || to >= n) continue;
    const int a = std::min(from, to);
    const int b = std::max(from, to);
    int previous = a;
    for (int l = layer[a] + 1; l < layer[b]; ++l) {
      const int dummy = g.add(l, options.dummy_width);
      chains[e].push_back(dummy);
      g.link(previous, dummy);
      previous = dummy;
    }
    g.link(previous, b);
  }
  result.dummy_count = static_cast<int>(g.layer.size()) - n;
  g.order.assign(used, {});
  for (size_t v = 0; v < g.layer.size(); ++v) g.order[g.layer[v]].push_back(static_cast<int>(v));
  for (int l = 0; l < used; ++l) g.index_positions(l);

  // 3. Crossing reduction, 4. coordinates.
  reduce_crossings(&g, options.sweeps, &result.initial_crossings, &result.crossings);
  std::vector<double> x = assign_x(g, options);

  double min_x = 0;
  bool first = true;
  for (size_t v = 0; v < x.size(); ++v) {
    const double left = x[v] - g.width[v] / 2;
    if (first || left < min_x) min_x = left;
    first = false;
  }
  std::vector<double> layer_height(used, 0.0), layer_top(used, 0.0);
  for (int v = 0; v < n; ++v) {
    layer_height[layer[v]] = std::max(layer_height[layer[v]], sizes[v].height);
  }
  double y = 0;
  for (int l = 0; l < used; ++l) {
    layer_top[l] = y;
    y += layer_height[l] + options.layer_gap;
  }
  result.height = y - options.layer_gap;
  result.layer_count = used;
  for (int v = 0; v < n; ++v) {
    const double left = x[v] - sizes[v].width / 2 - min_x;
    // Centred in its layer's band, so edges into short nodes stay short.
    const double top = layer_top[layer[v]] + (layer_height[layer[v]] - sizes[v].height) / 2;
    result.nodes[v] = LayoutPoint{left, top};
    result.layer[v] = layer[v];
    result.width = std::max(result.width, left + sizes[v].width);
  }
  for (size_t e = 0; e < edges.size(); ++e) {
    const int from = edges[e].first;
    const int to = edges[e].second;
    if (from == to || from < 0 || to < 0 || from >= n || to >= n) continue;
    const int a = std::min(from, to);
    const int b = std::max(from, to);
    std::vector<LayoutPoint>& path = result.edges[e];
    path.push_back({result.nodes[a].x + sizes[a].width / 2, result.nodes[a].y + sizes[a].height});
    for (int dummy : chains[e]) {
      const double dx = x[dummy] - min_x;
      const int l = g.layer[dummy];
      path.push_back({dx, layer_top[l]});
      path.push_back({dx, layer_top[l] + layer_height[l]});
    }
    path.push_back({result.nodes[b].x + sizes[b].width / 2, result.nodes[b].y});
    if (a != from) std::reverse(path.begin(), path.end());
  }
  return result;
}

}  // namespace gruwb::views
