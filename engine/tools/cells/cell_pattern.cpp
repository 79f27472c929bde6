#include "engine/tools/cells/cell_pattern.h"

namespace gruwb::tools::cells {

void append_rows(const Graph& g, int weight, int row0, int rows, std::vector<float>* out,
                 std::vector<float>* scales) {
  std::vector<float> w = g.floats(weight);
  const int cols = g.shape(weight)[1];
  out->insert(out->end(), w.begin() + static_cast<ptrdiff_t>(row0) * cols,
              w.begin() + static_cast<ptrdiff_t>(row0 + rows) * cols);
  for (int r = row0; r < row0 + rows; ++r) scales->push_back(g.row_scale(weight, r));
}

void add_biases(const Graph& g, const std::vector<BiasPiece>& pieces, int n, int h_source,
                bool force_recurrent, std::vector<float>* input, std::vector<float>* recurrent,
                size_t at) {
  for (const BiasPiece& b : pieces) {
    std::vector<float> v = g.floats(b.tensor);
    std::vector<float>* dst =
        force_recurrent || (b.side >= 0 && b.side == h_source) ? recurrent : input;
    for (int i = 0; i < n; ++i)
      (*dst)[at + static_cast<size_t>(i)] += v[static_cast<size_t>(b.offset + i)];
  }
}

bool block_ok(const Graph& g, int weight, int row0, int rows, int cols) {
  const auto& s = g.shape(weight);
  if (s.size() != 2 || s[1] != cols || row0 < 0 || row0 + rows > s[0]) return false;
  // The buffer holds the whole matrix (append_rows reads it).
  return g.floats(weight).size() == static_cast<size_t>(s[0]) * static_cast<size_t>(s[1]);
}

int other_input(const fb::OperatorT& o, int known) {
  return o.inputs[0] == known ? o.inputs[1] : o.inputs[0];
}

}  // namespace gruwb::tools::cells
