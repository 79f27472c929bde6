#include "engine/tools/graph_writer.h"

#include <algorithm>
#include <cmath>

namespace gruwb::tools {

using fb::ActivationFunctionType;
using fb::BuiltinOperator;
using fb::TensorType;

int GraphWriter::weight(const std::string& name, Dims shape, const std::vector<float>& values,
                        const std::vector<float>& row_scales) {
  if (row_scales.empty()) return constant(name, std::move(shape), values);
  const size_t cols = values.size() / row_scales.size();
  std::vector<int8_t> q(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double level = std::nearbyint(double{values[i]} / row_scales[i / cols]);
    q[i] = static_cast<int8_t>(std::max(-127.0, std::min(127.0, level)));
  }
  int t = constant_bytes(name, std::move(shape), TensorType::INT8, q.data(), q.size());
  auto quantization = std::make_unique<fb::QuantizationParametersT>();
  const bool per_tensor = std::all_of(row_scales.begin(), row_scales.end(),
                                      [&](float x) { return x == row_scales[0]; });
  quantization->scale = per_tensor ? std::vector<float>{row_scales[0]} : row_scales;
  quantization->zero_point.assign(quantization->scale.size(), 0);
  quantization->quantized_dimension = 0;
  sg().tensors[static_cast<size_t>(t)]->quantization = std::move(quantization);
  return t;
}

Dims broadcast(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int32_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int32_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int binary(GraphWriter& g, BuiltinOperator code, int a, int b, const std::string& name) {
  int out = g.tensor(name, broadcast(g.shape(a), g.shape(b)), g.type(a));
  switch (code) {
    case BuiltinOperator::ADD: g.op(code, {a, b}, {out}, fb::AddOptionsT()); break;
    case BuiltinOperator::SUB: g.op(code, {a, b}, {out}, fb::SubOptionsT()); break;
    case BuiltinOperator::MUL: g.op(code, {a, b}, {out}, fb::MulOptionsT()); break;
    case BuiltinOperator::LESS: g.op(code, {a, b}, {out}, fb::LessOptionsT()); break;
    default: g.op(code, {a, b}, {out}, fb::MaximumMinimumOptionsT()); break;  // MINIMUM/MAXIMUM
  }
  return out;
}

int unary(GraphWriter& g, BuiltinOperator code, int x, const std::string& name) {
  int out = g.tensor(name, g.shape(x));
  g.op(code, {x}, {out});
  return out;
}

// FULLY_CONNECTED on a [1,in] row: out [1, rows of w]; b = -1 for no bias.
int fully_connected(GraphWriter& g, int x, int w, int b, const std::string& name,
                    ActivationFunctionType activation) {
  int out = g.tensor(name, {g.shape(x)[0], g.shape(w)[0]});
  fb::FullyConnectedOptionsT options;
  options.fused_activation_function = activation;
  g.op(BuiltinOperator::FULLY_CONNECTED, {x, w, b}, {out}, options);
  return out;
}

// SPLIT along the last axis into `parts` equal pieces.
std::vector<int> split(GraphWriter& g, int x, int parts, const std::string& name) {
  Dims shape = g.shape(x);
  const int axis = static_cast<int>(shape.size()) - 1;
  shape[static_cast<size_t>(axis)] /= parts;
  std::vector<int> outs;
  for (int i = 0; i < parts; ++i) outs.push_back(g.tensor(name + ":" + std::to_string(i), shape));
  fb::SplitOptionsT options;
  options.num_splits = parts;
  g.op(BuiltinOperator::SPLIT, {g.scalar_i32(axis), x}, outs, options);
  return outs;
}

int reshape(GraphWriter& g, int x, const Dims& shape, const std::string& name) {
  int out = g.tensor(name, shape, g.type(x));
  fb::ReshapeOptionsT options;
  options.new_shape = shape;
  int new_shape = g.constant_i32(name + "/shape", {static_cast<int32_t>(shape.size())}, shape);
  g.op(BuiltinOperator::RESHAPE, {x, new_shape}, {out}, options);
  return out;
}

// [1,T,F] -> [T,1,F], the converter's step to time-major before an RNN.
int transpose_time_major(GraphWriter& g, int x, const std::string& name) {
  const Dims& in = g.shape(x);
  int perm = g.constant_i32(name + "/perm", {3}, {1, 0, 2});
  int out = g.tensor(name, {in[1], in[0], in[2]});
  g.op(BuiltinOperator::TRANSPOSE, {x, perm}, {out}, fb::TransposeOptionsT());
  return out;
}

// x[..., -1, ...] along `axis` of a rank-3 tensor, that dimension dropped
// (Keras' outputs[-1] / outputs[:, -1]).
int last_step(GraphWriter& g, int x, int axis, const std::string& name, int out) {
  Dims shape = g.shape(x);
  Dims begin = {0, 0, 0};
  begin[static_cast<size_t>(axis)] = -1;
  shape.erase(shape.begin() + axis);
  const int32_t others = 7 & ~(1 << axis);
  fb::StridedSliceOptionsT options;
  options.begin_mask = others;
  options.end_mask = others;
  options.shrink_axis_mask = 1 << axis;
  if (out < 0) out = g.tensor(name, shape);
  g.op(BuiltinOperator::STRIDED_SLICE,
       {x, g.constant_i32(name + "/begin", {3}, begin),
        g.constant_i32(name + "/end", {3}, {0, 0, 0}),
        g.constant_i32(name + "/strides", {3}, {1, 1, 1})},
       {out}, options);
  return out;
}

}  // namespace gruwb::tools
