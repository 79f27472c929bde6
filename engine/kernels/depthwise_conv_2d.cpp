// DEPTHWISE_CONV_2D: NHWC input [N,H,W,C], filter [1,KH,KW,C*M], optional
// bias [C*M]; output channel c*M + m filters input channel c. Strides,
// dilations, SAME/VALID padding and a fused activation as in TFLite.
// Float32. Backward: input, filter and bias.
// int8 (full-integer models) as TFLite's per-channel integer kernel: int32
// sums of w * (x - x_zp) over the in-bounds taps (padding adds nothing), plus
// the int32 bias, rescaled per output channel by input scale x filter scale /
// output scale (a quantized multiplier), plus the output zero point, clamped
// to the fused activation's range.

#include "engine/kernels/conv_util.h"
#include "engine/kernels/quant_util.h"

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

// Full-integer constants, computed once at prepare; multipliers[out_c] follow.
struct IntegerDepthwise {
  int32_t input_zero_point;
  int32_t output_zero_point;
  int32_t output_min;
  int32_t output_max;
  int32_t channels;  // 1 (per tensor) or out_c
  int accumulators_slot;
};

QuantizedMultiplier* multipliers_of(IntegerDepthwise* data) {
  return reinterpret_cast<QuantizedMultiplier*>(data + 1);
}

Status prepare_integer(OpContext& ctx, const DepthwiseGeometry& g) {
  const Tensor* input = ctx.input(0);
  const Tensor* filter = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  Tensor* output = ctx.output(0);
  GRUWB_RETURN_IF_ERROR(expect_type(filter, TensorType::INT8, "filter"));
  GRUWB_RETURN_IF_ERROR(expect_type(output, TensorType::INT8, "output"));
  if (bias) GRUWB_RETURN_IF_ERROR(expect_type(bias, TensorType::INT32, "bias"));
  if (ctx.training()) {
    return Status::error(StatusCode::kUnsupported, "training through an int8 DEPTHWISE_CONV_2D");
  }
  TensorQuantization in, w, out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  GRUWB_RETURN_IF_ERROR(expect_quantized(filter, "filter", &w, g.out_c));
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(
      sizeof(IntegerDepthwise) + sizeof(QuantizedMultiplier) * static_cast<size_t>(w.count),
      &memory));
  IntegerDepthwise* data = static_cast<IntegerDepthwise*>(memory);
  data->input_zero_point = in.zero_point;
  data->output_zero_point = out.zero_point;
  data->channels = w.count;
  for (int32_t c = 0; c < w.count; ++c) {
    if (w.zero_point_at(c) != 0) {
      return Status::error(StatusCode::kUnsupported,
                           "int8 filter '%s' has zero point %d (TFLite's are symmetric)",
                           filter->name, static_cast<int>(w.zero_point_at(c)));
    }
    multipliers_of(data)[c] =
        quantize_multiplier(static_cast<double>(in.scale) * static_cast<double>(w.scales[c]) /
                            static_cast<double>(out.scale));
  }
  GRUWB_RETURN_IF_ERROR(activation_range_quantized(
      g.activation, output->type, out.scale, out.zero_point, &data->output_min, &data->output_max));
  // One int32 sum per output element: the taps arrive tap by tap.
  const size_t sums = static_cast<size_t>(g.batches) * static_cast<size_t>(g.h.out) *
                      static_cast<size_t>(g.w.out) * static_cast<size_t>(g.out_c);
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(sums * sizeof(int32_t), &data->accumulators_slot));
  ctx.set_user_data(data);
  set_output_shape(output, make_shape({g.batches, g.h.out, g.w.out, g.out_c}));
  return Status();
}

Status eval_integer(OpContext& ctx, const DepthwiseGeometry& g) {
  IntegerDepthwise& data = *static_cast<IntegerDepthwise*>(ctx.user_data());
  const Tensor* bias = ctx.input(2);
  const int8_t* x = reinterpret_cast<const int8_t*>(ctx.input(0)->data);
  const int8_t* w = reinterpret_cast<const int8_t*>(ctx.input(1)->data);
  Tensor* output = ctx.output(0);
  int8_t* y = reinterpret_cast<int8_t*>(output->data);
  int32_t* sums = static_cast<int32_t*>(ctx.scratch(data.accumulators_slot));
  const int64_t n = output->elements();
  for (int64_t i = 0; i < n; ++i) sums[i] = bias ? bias->i32()[i % g.out_c] : 0;
  const int32_t x_zero_point = data.input_zero_point;
  for_each_tap(g, [&](int64_t o, int64_t in, int64_t f) {
    sums[o] += static_cast<int32_t>(w[f]) * (static_cast<int32_t>(x[in]) - x_zero_point);
  });
  const QuantizedMultiplier* multipliers = multipliers_of(&data);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c = data.channels > 1 ? static_cast<int32_t>(i % g.out_c) : 0;
    int32_t v = multiply_by_quantized_multiplier(sums[i], multipliers[c]) + data.output_zero_point;
    v = v < data.output_min ? data.output_min : (v > data.output_max ? data.output_max : v);
    y[i] = static_cast<int8_t>(v);
  }
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* filter = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  const bool integer = GRUWB_INTEGER && input->type == TensorType::INT8;
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
  if (integer) return prepare_integer(ctx, g);
  Tensor* output = ctx.output(0);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, make_shape({g.batches, g.h.out, g.w.out, g.out_c}));
  return Status();
}

Status eval(OpContext& ctx) {
  const DepthwiseGeometry g = geometry(ctx);
  if (GRUWB_INTEGER && ctx.input(0)->type == TensorType::INT8) return eval_integer(ctx, g);
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
    /*integer_activations=*/GRUWB_INTEGER != 0};

}  // namespace gruwb
