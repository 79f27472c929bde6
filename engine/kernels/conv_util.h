#pragma once
// Shared by CONV_2D, DEPTHWISE_CONV_2D and the 2-D pools: TFLite's output
// sizes and padding for SAME and VALID (NHWC tensors).

#include <cstdint>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"

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
  const int32_t effective = (size - 1) * dilation + 1;
  if (padding == fb::Padding::SAME) {
    w.out = (in + stride - 1) / stride;
  } else {
    w.out = in >= effective ? (in - effective + stride) / stride : 0;
  }
  const int32_t total = (w.out - 1) * stride + effective - in;
  w.pad = total > 0 ? total / 2 : 0;
  return w;
}

// Checks strides/dilations/filter sizes are positive; names the op's options.
inline Status check_window_options(int32_t stride_h, int32_t stride_w, int32_t dilation_h,
                                   int32_t dilation_w, int32_t filter_h, int32_t filter_w) {
  if (stride_h < 1 || stride_w < 1 || dilation_h < 1 || dilation_w < 1 || filter_h < 1 ||
      filter_w < 1) {
    return Status::error(StatusCode::kInvalidModel,
                         "stride %dx%d, dilation %dx%d, filter %dx%d: each must be at least 1",
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

}  // namespace gruwb
