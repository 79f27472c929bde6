#pragma once
// Small helpers shared by kernels: fused activations, broadcasting and custom options.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "engine/kernels/flexbuffer_map.h"
#include "engine/runtime/kernel.h"

namespace gruwb {

using Activation = fb::ActivationFunctionType;

inline float apply_activation(Activation activation, float x) {
  switch (activation) {
    case Activation::RELU: return x < 0.f ? 0.f : x;
    case Activation::RELU6: return x < 0.f ? 0.f : (x > 6.f ? 6.f : x);
    case Activation::RELU_N1_TO_1: return x < -1.f ? -1.f : (x > 1.f ? 1.f : x);
    case Activation::TANH: return std::tanh(x);
    case Activation::SIGN_BIT: return std::signbit(x) ? 1.f : 0.f;
    default: return x;
  }
}

inline void apply_activation(Activation activation, float* data, int64_t n) {
  if (activation == Activation::NONE) return;
  for (int64_t i = 0; i < n; ++i) data[i] = apply_activation(activation, data[i]);
}

Status check_activation(Activation activation);

// Training: d act(x) / dx expressed through the output y = act(x), which is
// what backward kernels have (the pre-activation is not kept).
inline float activation_derivative(Activation activation, float y) {
  switch (activation) {
    case Activation::RELU: return y > 0.f ? 1.f : 0.f;
    case Activation::RELU6: return y > 0.f && y < 6.f ? 1.f : 0.f;
    case Activation::RELU_N1_TO_1: return y > -1.f && y < 1.f ? 1.f : 0.f;
    case Activation::TANH: return 1.f - y * y;
    case Activation::SIGN_BIT: return 0.f;
    default: return 1.f;
  }
}

inline float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

// NumPy broadcasting of two shapes into `out` (fails naming both shapes).
Status broadcast_shapes(const Shape& a, const Shape& b, Shape* out);

// Walks the output of a broadcast binary op; calls f(out_index, a_index, b_index).
// Shapes are right-aligned; a/b dims of 1 repeat.
template <typename F>
void for_each_broadcast(const Shape& out, const Shape& a, const Shape& b, F f) {
  int32_t rank = out.rank;
  int64_t a_stride[kMaxRank] = {};
  int64_t b_stride[kMaxRank] = {};
  int64_t sa = 1, sb = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    int32_t ad = d - (rank - a.rank);
    int32_t bd = d - (rank - b.rank);
    int32_t a_dim = ad >= 0 ? a.dims[ad] : 1;
    int32_t b_dim = bd >= 0 ? b.dims[bd] : 1;
    a_stride[d] = a_dim == 1 ? 0 : sa;
    b_stride[d] = b_dim == 1 ? 0 : sb;
    sa *= a_dim;
    sb *= b_dim;
  }
  int32_t index[kMaxRank] = {};
  int64_t total = out.elements();
  int64_t ai = 0, bi = 0;
  for (int64_t o = 0; o < total; ++o) {
    f(o, ai, bi);
    for (int32_t d = rank - 1; d >= 0; --d) {
      ++index[d];
      ai += a_stride[d];
      bi += b_stride[d];
      if (index[d] < out.dims[d]) break;
      ai -= a_stride[d] * out.dims[d];
      bi -= b_stride[d] * out.dims[d];
      index[d] = 0;
    }
  }
}

// One entry of a custom op's options (a FlexBuffer map), with typed reads whose errors name
// the op and the key.
struct CustomOption {
  const FlexMap& map;
  const char* op_name;  // "GRUWB_GRU"
  const char* key;
  FlexValue value;

  bool is(const char* name) const { return strcmp(key, name) == 0; }
  Status read_bool(bool* out) const;           // "<op> option '<key>' must be a bool"
  Status read_string(const char** out) const;  // "<op> option '<key>' must be a string"
  // Every option changes the maths: running with one we do not know would give wrong numbers
  // silently, so an unknown key fails prepare ("<op> option '<key>' is unknown").
  Status unknown() const;
};

// Fails naming `op_name` when the custom options `bytes` (empty: no options) are not a
// FlexBuffer map.
Status parse_custom_options(Span<uint8_t> bytes, const char* op_name, FlexMap* map);
// Entry i of a parsed map; fails naming `op_name` when it is malformed.
Status custom_option_at(const FlexMap& map, size_t i, const char* op_name, FlexValue* value,
                        const char** key);

// Calls on_entry(const CustomOption&) -> Status for every entry of an op's custom options
// (none when `bytes` is empty), stopping at the first error. No heap: the map is read in place.
template <typename OnEntry>
Status for_each_custom_option(Span<uint8_t> bytes, const char* op_name, OnEntry on_entry) {
  if (bytes.empty()) return Status();
  FlexMap map;
  GRUWB_RETURN_IF_ERROR(parse_custom_options(bytes, op_name, &map));
  for (size_t i = 0; i < map.size(); ++i) {
    FlexValue value;
    const char* key = nullptr;
    GRUWB_RETURN_IF_ERROR(custom_option_at(map, i, op_name, &value, &key));
    GRUWB_RETURN_IF_ERROR(on_entry(CustomOption{map, op_name, key, value}));
  }
  return Status();
}

}  // namespace gruwb
