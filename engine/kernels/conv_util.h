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

}  // namespace gruwb
