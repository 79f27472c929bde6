// DEPTHWISE_CONV_2D: NHWC input [N,H,W,C], filter [1,KH,KW,C*M], optional
// bias [C*M]; output channel c*M + m filters input channel c. Strides,
// dilations, SAME/VALID padding and a fused activation as in TFLite.
// Float32. Backward: input, filter and bias.
// int8 (full-integer models) as TFLite's per-channel integer kernel
// (prepare_integer_conv, conv_util.h); 16x8 (int16 activations, int64 bias) too.

#include "engine/kernels/conv_util.h"

namespace gruwb {
namespace {

struct DepthwiseGeometry {
  int32_t batches, in_h, in_w, in_c, out_c, multiplier;
  Window h, w;
  Activation activation;
};

DepthwiseGeometry geometry(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::DepthwiseConv2DOptions>();
  const Shape& in = ctx.input(0)->shape;
  const Shape& filter = ctx.input(1)->shape;
  DepthwiseGeometry g;
  g.batches = in.dims[0];
  g.in_h = in.dims[1];
  g.in_w = in.dims[2];
  g.in_c = in.dims[3];
  g.out_c = filter.dims[3];
  // The filter decides: some converters write depth_multiplier 0.
  g.multiplier = g.in_c > 0 ? g.out_c / g.in_c : 1;
  const fb::Padding padding = options ? options->padding() : fb::Padding::SAME;
  g.h = make_window(padding, g.in_h, filter.dims[1], options ? options->stride_h() : 1,
                    options ? options->dilation_h_factor() : 1);
  g.w = make_window(padding, g.in_w, filter.dims[2], options ? options->stride_w() : 1,
                    options ? options->dilation_w_factor() : 1);
  g.activation = options ? options->fused_activation_function() : Activation::NONE;
  return g;
}

// Calls f(output_index, input_index, filter_index) for every in-bounds tap.
template <typename F>
void for_each_tap(const DepthwiseGeometry& g, F f) {
  for (int32_t b = 0; b < g.batches; ++b) {
    for (int32_t oy = 0; oy < g.h.out; ++oy) {
      for (int32_t ox = 0; ox < g.w.out; ++ox) {
        const int64_t out_base =
            ((static_cast<int64_t>(b) * g.h.out + oy) * g.w.out + ox) * g.out_c;
        for (int32_t ky = 0; ky < g.h.size; ++ky) {
          const int32_t iy = input_position(g.h, oy, ky);
          if (iy < 0 || iy >= g.in_h) continue;
          for (int32_t kx = 0; kx < g.w.size; ++kx) {
            const int32_t ix = input_position(g.w, ox, kx);
            if (ix < 0 || ix >= g.in_w) continue;
            const int64_t in_base =
                ((static_cast<int64_t>(b) * g.in_h + iy) * g.in_w + ix) * g.in_c;
            const int64_t filter_base = (static_cast<int64_t>(ky) * g.w.size + kx) * g.out_c;
            for (int32_t oc = 0; oc < g.out_c; ++oc) {
              f(out_base + oc, in_base + oc / g.multiplier, filter_base + oc);
            }
          }
        }
      }
    }
  }
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* filter = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  const bool integer = GRUWB_INTEGER_FORM(DEPTHWISE_CONV_2D) &&
                       (input->type == TensorType::INT8 || input->type == TensorType::INT16);
  if (!integer) {
    GRUWB_RETURN_IF_ERROR(expect_float(input, "input"));
    GRUWB_RETURN_IF_ERROR(expect_float(filter, "filter"));
  }
  if (input->shape.rank != 4 || filter->shape.rank != 4 || filter->shape.dims[0] != 1) {
    return Status::error(StatusCode::kInvalidModel,
                         "input '%s' %s must be 4-D (NHWC) and filter '%s' %s [1,KH,KW,C*M]",
                         input->name, ShapeText(input->shape).text, filter->name,
                         ShapeText(filter->shape).text);
  }
  const auto* options = ctx.op().options<fb::DepthwiseConv2DOptions>();
  if (!options) {
    return Status::error(StatusCode::kInvalidModel, "DepthwiseConv2DOptions are missing");
  }
  GRUWB_RETURN_IF_ERROR(check_activation(options->fused_activation_function()));
  GRUWB_RETURN_IF_ERROR(check_window_options(
      options->stride_h(), options->stride_w(), options->dilation_h_factor(),
      options->dilation_w_factor(), filter->shape.dims[1], filter->shape.dims[2]));
  const DepthwiseGeometry g = geometry(ctx);
  if (g.in_c < 1 || g.out_c % g.in_c != 0 ||
      (options->depth_multiplier() != 0 && options->depth_multiplier() != g.multiplier)) {
    return Status::error(StatusCode::kInvalidModel,
                         "filter '%s' %s has %d channels: not input '%s' %s channels times "
                         "depth_multiplier %d",
                         filter->name, ShapeText(filter->shape).text, static_cast<int>(g.out_c),
                         input->name, ShapeText(input->shape).text,
                         static_cast<int>(options->depth_multiplier()));
  }
  if (bias) {
    if (!integer) GRUWB_RETURN_IF_ERROR(expect_float(bias, "bias"));
    if (bias->elements() != g.out_c) {
      return Status::error(StatusCode::kInvalidModel, "bias '%s' has %lld values, expected %d",
                           bias->name, static_cast<long long>(bias->elements()),
                           static_cast<int>(g.out_c));
    }
  }
  if (integer) {
    return prepare_integer_conv(ctx, g.out_c, g.activation,
                                make_shape({g.batches, g.h.out, g.w.out, g.out_c}));
  }
  Tensor* output = ctx.output(0);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, make_shape({g.batches, g.h.out, g.w.out, g.out_c}));
  return Status();
}

Status eval(OpContext& ctx) {
  const DepthwiseGeometry g = geometry(ctx);
  if (GRUWB_INTEGER_FORM(DEPTHWISE_CONV_2D) &&
      (ctx.input(0)->type == TensorType::INT8 || ctx.input(0)->type == TensorType::INT16)) {
    return eval_integer_conv(ctx, g.out_c, [&](auto f) { for_each_tap(g, f); });
  }
  return eval_taps(ctx, g.out_c, g.activation, [&](auto f) { for_each_tap(g, f); });
}

Status backward(OpContext& ctx) {
  const DepthwiseGeometry g = geometry(ctx);
  return backward_taps(ctx, g.out_c, g.activation, [&](auto f) { for_each_tap(g, f); });
}

}  // namespace

extern const KernelRegistration kDepthwiseConv2dKernel = {
    static_cast<int32_t>(BuiltinOperator::DEPTHWISE_CONV_2D),
    nullptr,
    prepare,
    eval,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    input_bits(1, 2),  // filter and bias train
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(DEPTHWISE_CONV_2D) != 0};

}  // namespace gruwb
