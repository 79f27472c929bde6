// CONV_2D: NHWC input [N,H,W,C], filter [O,KH,KW,C/groups], optional bias
// [O]; strides, dilations, SAME/VALID padding and a fused activation as in
// TFLite. Float32 (CRNN front ends). Backward: input, filter and bias.
// int8 (full-integer models) and 16x8 (int16 activations, int64 bias): TFLite's
// per-channel integer kernels (prepare_integer_conv, conv_util.h), one filter
// scale per output channel.

#include "engine/kernels/conv_util.h"

namespace gruwb {
namespace {

struct ConvGeometry {
  int32_t batches, in_h, in_w, in_c, out_c, filter_c, groups;
  Window h, w;
  Activation activation;
};

ConvGeometry geometry(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::Conv2DOptions>();
  const Shape& in = ctx.input(0)->shape;
  const Shape& filter = ctx.input(1)->shape;
  ConvGeometry g;
  g.batches = in.dims[0];
  g.in_h = in.dims[1];
  g.in_w = in.dims[2];
  g.in_c = in.dims[3];
  g.out_c = filter.dims[0];
  g.filter_c = filter.dims[3];
  g.groups = g.filter_c > 0 ? g.in_c / g.filter_c : 1;
  const fb::Padding padding = options ? options->padding() : fb::Padding::SAME;
  g.h = make_window(padding, g.in_h, filter.dims[1], options ? options->stride_h() : 1,
                    options ? options->dilation_h_factor() : 1);
  g.w = make_window(padding, g.in_w, filter.dims[2], options ? options->stride_w() : 1,
                    options ? options->dilation_w_factor() : 1);
  g.activation = options ? options->fused_activation_function() : Activation::NONE;
  return g;
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* filter = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  const bool integer = GRUWB_INTEGER_FORM(CONV_2D) &&
                       (input->type == TensorType::INT8 || input->type == TensorType::INT16);
  if (!integer) {
    GRUWB_RETURN_IF_ERROR(expect_float(input, "input"));
    GRUWB_RETURN_IF_ERROR(expect_float(filter, "filter"));
  }
  if (input->shape.rank != 4 || filter->shape.rank != 4) {
    return Status::error(StatusCode::kInvalidModel,
                         "input '%s' %s and filter '%s' %s must be 4-D (NHWC, OHWI)", input->name,
                         ShapeText(input->shape).text, filter->name, ShapeText(filter->shape).text);
  }
  const auto* options = ctx.op().options<fb::Conv2DOptions>();
  if (!options) return Status::error(StatusCode::kInvalidModel, "Conv2DOptions are missing");
  GRUWB_RETURN_IF_ERROR(check_activation(options->fused_activation_function()));
  GRUWB_RETURN_IF_ERROR(check_window_options(
      options->stride_h(), options->stride_w(), options->dilation_h_factor(),
      options->dilation_w_factor(), filter->shape.dims[1], filter->shape.dims[2]));
  const ConvGeometry g = geometry(ctx);
  if (g.filter_c < 1 || g.in_c % g.filter_c != 0 || g.groups < 1 || g.out_c % g.groups != 0) {
    return Status::error(StatusCode::kInvalidModel,
                         "filter '%s' %s does not fit input '%s' %s: input channels must be a "
                         "multiple of the filter's, output channels of the groups",
                         filter->name, ShapeText(filter->shape).text, input->name,
                         ShapeText(input->shape).text);
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

// Calls f(output_index, input_index, filter_index) for every in-bounds tap.
template <typename F>
void for_each_tap(const ConvGeometry& g, F f) {
  const int32_t per_group = g.out_c / g.groups;
  for (int32_t b = 0; b < g.batches; ++b) {
    for (int32_t oy = 0; oy < g.h.out; ++oy) {
      for (int32_t ox = 0; ox < g.w.out; ++ox) {
        const int64_t out_base =
            ((static_cast<int64_t>(b) * g.h.out + oy) * g.w.out + ox) * g.out_c;
        for (int32_t oc = 0; oc < g.out_c; ++oc) {
          const int32_t first_c = (oc / per_group) * g.filter_c;
          for (int32_t ky = 0; ky < g.h.size; ++ky) {
            const int32_t iy = input_position(g.h, oy, ky);
            if (iy < 0 || iy >= g.in_h) continue;
            for (int32_t kx = 0; kx < g.w.size; ++kx) {
              const int32_t ix = input_position(g.w, ox, kx);
              if (ix < 0 || ix >= g.in_w) continue;
              const int64_t in_base =
                  ((static_cast<int64_t>(b) * g.in_h + iy) * g.in_w + ix) * g.in_c + first_c;
              const int64_t filter_base =
                  ((static_cast<int64_t>(oc) * g.h.size + ky) * g.w.size + kx) * g.filter_c;
              for (int32_t c = 0; c < g.filter_c; ++c)
                f(out_base + oc, in_base + c, filter_base + c);
            }
          }
        }
      }
    }
  }
}

Status eval(OpContext& ctx) {
  const ConvGeometry g = geometry(ctx);
  if (GRUWB_INTEGER_FORM(CONV_2D) &&
      (ctx.input(0)->type == TensorType::INT8 || ctx.input(0)->type == TensorType::INT16)) {
    return eval_integer_conv(ctx, g.out_c, [&](auto f) { for_each_tap(g, f); });
  }
  return eval_taps(ctx, g.out_c, g.activation, [&](auto f) { for_each_tap(g, f); });
}

Status backward(OpContext& ctx) {
  const ConvGeometry g = geometry(ctx);
  return backward_taps(ctx, g.out_c, g.activation, [&](auto f) { for_each_tap(g, f); });
}

}  // namespace

extern const KernelRegistration kConv2dKernel = {
    static_cast<int32_t>(BuiltinOperator::CONV_2D),
    nullptr,
    prepare,
    eval,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    input_bits(1, 2),  // filter and bias train
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(CONV_2D) != 0};

}  // namespace gruwb
