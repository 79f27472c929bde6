#pragma once
// Shared by CONV_2D, DEPTHWISE_CONV_2D and the 2-D pools: TFLite's output
// sizes and padding for SAME and VALID (NHWC tensors), and the convolutions'
// float and full-integer evaluation over their taps.

#include <cstdint>
#include <new>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"
#include "engine/kernels/quant_util.h"

namespace gruwb {

struct Window {
  int32_t size = 1;  // filter taps
  int32_t stride = 1;
  int32_t dilation = 1;
  int32_t out = 0;  // output positions
  int32_t pad = 0;  // padding before the first input (the extra one of an odd total goes after)
};

// SAME: ceil(in / stride) outputs, padding split with the odd one after;
// VALID: only windows that fit.
inline Window make_window(fb::Padding padding, int32_t in, int32_t size, int32_t stride,
                          int32_t dilation) {
  Window w;
  w.size = size;
  w.stride = stride;
  w.dilation = dilation;
  // In 64 bits: sizes, strides and dilations up to kMaxWindowOption (check_window_options).
  const int64_t effective = int64_t{size - 1} * dilation + 1;
  if (padding == fb::Padding::SAME) {
    w.out = static_cast<int32_t>((int64_t{in} + stride - 1) / stride);
  } else {
    w.out = in >= effective ? static_cast<int32_t>((in - effective + stride) / stride) : 0;
  }
  const int64_t total = int64_t{w.out - 1} * stride + effective - in;
  w.pad = total > 0 ? static_cast<int32_t>(total / 2) : 0;
  return w;
}

// Checks strides/dilations/filter sizes are in 1..kMaxWindowOption (so window arithmetic stays
// inside int32 for any real input); names the op's options.
constexpr int32_t kMaxWindowOption = 1 << 15;
inline Status check_window_options(int32_t stride_h, int32_t stride_w, int32_t dilation_h,
                                   int32_t dilation_w, int32_t filter_h, int32_t filter_w) {
  const int32_t values[] = {stride_h, stride_w, dilation_h, dilation_w, filter_h, filter_w};
  bool fine = true;
  for (int32_t v : values) fine = fine && v >= 1 && v <= kMaxWindowOption;
  if (!fine) {
    return Status::error(StatusCode::kInvalidModel,
                         "stride %dx%d, dilation %dx%d, filter %dx%d: each must be 1..32768",
                         static_cast<int>(stride_h), static_cast<int>(stride_w),
                         static_cast<int>(dilation_h), static_cast<int>(dilation_w),
                         static_cast<int>(filter_h), static_cast<int>(filter_w));
  }
  return Status();
}

// The input position tap `k` of output position `o` reads (may be outside).
inline int32_t input_position(const Window& w, int32_t o, int32_t k) {
  return o * w.stride - w.pad + k * w.dilation;
}

// Forward and backward of a convolution given by its taps: `for_each_tap(f)` calls
// f(output, input, filter) index triples. CONV_2D and DEPTHWISE_CONV_2D differ only in
// which taps exist; the bias (one per output channel, `channels`) and the fused
// activation are the same.
template <typename ForEachTap>
Status eval_taps(OpContext& ctx, int32_t channels, Activation activation, ForEachTap for_each_tap) {
  const float* x = ctx.input(0)->f32();
  const float* w = ctx.input(1)->f32();
  const Tensor* bias = ctx.input(2);
  Tensor* output = ctx.output(0);
  float* y = output->f32();
  const int64_t n = output->elements();
  for (int64_t o = 0; o < n; ++o) y[o] = bias ? bias->f32()[o % channels] : 0.f;
  for_each_tap([&](int64_t o, int64_t i, int64_t k) { y[o] += x[i] * w[k]; });
  apply_activation(activation, y, n);
  return Status();
}

template <typename ForEachTap>
Status backward_taps(OpContext& ctx, int32_t channels, Activation activation,
                     ForEachTap for_each_tap) {
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  if (!dy) return Status();
  Tensor* dx = ctx.gradient(ctx.input(0));
  Tensor* dw = ctx.gradient(ctx.input(1));
  Tensor* db = ctx.gradient(ctx.input(2));
  const float* x = ctx.input(0)->f32();
  const float* w = ctx.input(1)->f32();
  const float* y = output->f32();
  const float* gy = dy->f32();
  float* gx = dx ? dx->f32() : nullptr;
  float* gw = dw ? dw->f32() : nullptr;
  auto dz = [&](int64_t o) { return gy[o] * activation_derivative(activation, y[o]); };
  if (db) {
    for (int64_t o = 0; o < output->elements(); ++o) db->f32()[o % channels] += dz(o);
  }
  if (!gx && !gw) return Status();
  for_each_tap([&](int64_t o, int64_t i, int64_t k) {
    const float d = dz(o);
    if (gx) gx[i] += d * w[k];
    if (gw) gw[k] += d * x[i];
  });
  return Status();
}

// Full-integer CONV_2D and DEPTHWISE_CONV_2D, TFLite's per-channel integer
// kernels: int32 sums of w * (x - x_zp) over the in-bounds taps (padding adds
// nothing), plus the int32 bias, rescaled per output channel by input scale x
// filter scale / output scale (a quantized multiplier, the product in double),
// plus the output zero point, clamped to the fused activation's range.
// 16x8 (int16 input and output, zero points 0, int64 or int32 bias): int64
// sums and TFLite's int64 requantization (multiply_by_quantized_multiplier_64).
// Constants computed once at prepare; `channels` multipliers follow the struct.
struct IntegerConv {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t output_min = 0;
  int32_t output_max = 0;
  int32_t channels = 0;  // 1 (per tensor) or out_c
  bool wide = false;     // 16x8
  int accumulators_slot = -1;
  QuantizedMultiplier* multipliers() { return reinterpret_cast<QuantizedMultiplier*>(this + 1); }
  const QuantizedMultiplier* multipliers() const {
    return reinterpret_cast<const QuantizedMultiplier*>(this + 1);
  }
};

// Inputs: 0 int8 (or int16) input, 1 int8 filter (symmetric, 1 or out_c
// scales), 2 optional int32 (16x8: int64 or int32) bias of out_c values; output
// of the input's type and `out_shape`.
inline Status prepare_integer_conv(OpContext& ctx, int32_t out_c, Activation activation,
                                   const Shape& out_shape) {
  const Tensor* input = ctx.input(0);
  const Tensor* filter = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  Tensor* output = ctx.output(0);
  const bool wide = input->type == TensorType::INT16;
  GRUWB_RETURN_IF_ERROR(expect_type(filter, TensorType::INT8, "filter"));
  GRUWB_RETURN_IF_ERROR(expect_type(output, input->type, "output"));
  if (bias && !(wide && bias->type == TensorType::INT64)) {
    GRUWB_RETURN_IF_ERROR(expect_type(bias, TensorType::INT32, "bias"));
  }
  if (ctx.training()) {
    return Status::error(StatusCode::kUnsupported, "training through an int8 %s", ctx.op().name());
  }
  TensorQuantization in, w, out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  GRUWB_RETURN_IF_ERROR(expect_quantized(filter, "filter", &w, out_c));
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  if (wide && (in.zero_point != 0 || out.zero_point != 0)) {
    return Status::error(StatusCode::kUnsupported,
                         "int16 input '%s' and output '%s' need zero point 0 (symmetric)",
                         input->name, output->name);
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(
      sizeof(IntegerConv) + sizeof(QuantizedMultiplier) * static_cast<size_t>(w.count), &memory));
  IntegerConv* data = new (memory) IntegerConv();
  data->wide = wide;
  data->input_zero_point = in.zero_point;
  data->output_zero_point = out.zero_point;
  data->channels = w.count;
  for (int32_t c = 0; c < w.count; ++c) {
    if (w.zero_point_at(c) != 0) {
      return Status::error(StatusCode::kUnsupported,
                           "int8 filter '%s' has zero point %d (TFLite's are symmetric)",
                           filter->name, static_cast<int>(w.zero_point_at(c)));
    }
    data->multipliers()[c] =
        quantize_multiplier(static_cast<double>(in.scale) * static_cast<double>(w.scales[c]) /
                            static_cast<double>(out.scale));
  }
  GRUWB_RETURN_IF_ERROR(activation_range_quantized(
      activation, output->type, out.scale, out.zero_point, &data->output_min, &data->output_max));
  // One sum per output element: the taps arrive tap by tap.
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(
      static_cast<size_t>(out_shape.elements()) * (wide ? sizeof(int64_t) : sizeof(int32_t)),
      &data->accumulators_slot));
  ctx.set_user_data(data);
  set_output_shape(output, out_shape);
  return Status();
}

// 16x8: int16 x, int8 w, int64 sums.
template <typename ForEachTap>
Status eval_integer_conv_16x8(OpContext& ctx, const IntegerConv& data, int32_t out_c,
                              ForEachTap for_each_tap) {
  const Tensor* bias = ctx.input(2);
  const int16_t* x = reinterpret_cast<const int16_t*>(ctx.input(0)->data);
  const int8_t* w = reinterpret_cast<const int8_t*>(ctx.input(1)->data);
  Tensor* output = ctx.output(0);
  int16_t* y = reinterpret_cast<int16_t*>(output->data);
  int64_t* sums = static_cast<int64_t*>(ctx.scratch(data.accumulators_slot));
  const int64_t n = output->elements();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i % out_c;
    sums[i] =
        !bias ? 0
              : (bias->type == TensorType::INT64 ? reinterpret_cast<const int64_t*>(bias->data)[c]
                                                 : bias->i32()[c]);
  }
  for_each_tap([&](int64_t o, int64_t in, int64_t f) {
    sums[o] = wrap_add(sums[o], static_cast<int64_t>(w[f]) * static_cast<int64_t>(x[in]));
  });
  const QuantizedMultiplier* multipliers = data.multipliers();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c = data.channels > 1 ? static_cast<int32_t>(i % out_c) : 0;
    int32_t v = multiply_by_quantized_multiplier_64(sums[i], multipliers[c]);
    v = v < data.output_min ? data.output_min : (v > data.output_max ? data.output_max : v);
    y[i] = static_cast<int16_t>(v);
  }
  return Status();
}

template <typename ForEachTap>
Status eval_integer_conv(OpContext& ctx, int32_t out_c, ForEachTap for_each_tap) {
  const IntegerConv& data = *static_cast<const IntegerConv*>(ctx.user_data());
  if (data.wide) return eval_integer_conv_16x8(ctx, data, out_c, for_each_tap);
  const Tensor* bias = ctx.input(2);
  const int8_t* x = reinterpret_cast<const int8_t*>(ctx.input(0)->data);
  const int8_t* w = reinterpret_cast<const int8_t*>(ctx.input(1)->data);
  Tensor* output = ctx.output(0);
  int8_t* y = reinterpret_cast<int8_t*>(output->data);
  int32_t* sums = static_cast<int32_t*>(ctx.scratch(data.accumulators_slot));
  const int64_t n = output->elements();
  for (int64_t i = 0; i < n; ++i) sums[i] = bias ? bias->i32()[i % out_c] : 0;
  const int32_t x_zero_point = data.input_zero_point;
  for_each_tap([&](int64_t o, int64_t in, int64_t f) {
    sums[o] = wrap_add(sums[o],
                       static_cast<int32_t>(w[f]) * (static_cast<int32_t>(x[in]) - x_zero_point));
  });
  const QuantizedMultiplier* multipliers = data.multipliers();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c = data.channels > 1 ? static_cast<int32_t>(i % out_c) : 0;
    int32_t v =
        wrap_add(multiply_by_quantized_multiplier(sums[i], multipliers[c]), data.output_zero_point);
    v = v < data.output_min ? data.output_min : (v > data.output_max ? data.output_max : v);
    y[i] = static_cast<int8_t>(v);
  }
  return Status();
}

}  // namespace gruwb
