// MAX_POOL_2D and AVERAGE_POOL_2D on NHWC float32: Pool2DOptions' filter,
// strides, SAME/VALID padding and fused activation as in TFLite (padding is
// never part of a window: the average divides by the in-bounds count).
// Backward: max routes each gradient to the window's first largest input,
// average spreads it evenly over the window.
// int8/uint8/int16 (full-integer models; input and output share scale and zero
// point, as TFLite requires) as TFLite's reference integer pools: the window's
// largest value, or its int32 sum divided by the in-bounds count rounded half
// away from zero; then clamped to the fused activation's range.

#include <cfloat>

#include "engine/kernels/conv_util.h"
#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace {

struct PoolGeometry {
  int32_t batches, in_h, in_w, channels;
  Window h, w;
  Activation activation;
};

PoolGeometry geometry(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::Pool2DOptions>();
  const Shape& in = ctx.input(0)->shape;
  PoolGeometry g;
  g.batches = in.dims[0];
  g.in_h = in.dims[1];
  g.in_w = in.dims[2];
  g.channels = in.dims[3];
  g.h = make_window(options->padding(), g.in_h, options->filter_height(), options->stride_h(), 1);
  g.w = make_window(options->padding(), g.in_w, options->filter_width(), options->stride_w(), 1);
  g.activation = options->fused_activation_function();
  return g;
}

bool is_integer(TensorType type);
Status prepare_integer(OpContext& ctx, const PoolGeometry& g);

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  if (!is_integer(input->type)) GRUWB_RETURN_IF_ERROR(expect_float(input, "input"));
  if (input->shape.rank != 4) {
    return Status::error(StatusCode::kInvalidModel, "input '%s' %s must be 4-D (NHWC)", input->name,
                         ShapeText(input->shape).text);
  }
  const auto* options = ctx.op().options<fb::Pool2DOptions>();
  if (!options) return Status::error(StatusCode::kInvalidModel, "Pool2DOptions are missing");
  GRUWB_RETURN_IF_ERROR(check_activation(options->fused_activation_function()));
  GRUWB_RETURN_IF_ERROR(check_window_options(options->stride_h(), options->stride_w(), 1, 1,
                                             options->filter_height(), options->filter_width()));
  const PoolGeometry g = geometry(ctx);
  if (is_integer(input->type)) return prepare_integer(ctx, g);
  Tensor* output = ctx.output(0);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, make_shape({g.batches, g.h.out, g.w.out, g.channels}));
  return Status();
}

bool is_integer(TensorType type) {
  int32_t min = 0, max = 0;
  return (GRUWB_INTEGER_FORM(MAX_POOL_2D) || GRUWB_INTEGER_FORM(AVERAGE_POOL_2D)) &&
         integer_range(type, &min, &max);
}

// The output clamp of an integer pool: [min, max] in user data.
Status prepare_integer(OpContext& ctx, const PoolGeometry& g) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  GRUWB_RETURN_IF_ERROR(expect_type(output, input->type, "output"));
  if (ctx.training()) {
    return Status::error(StatusCode::kUnsupported, "training through an integer %s",
                         ctx.op().name());
  }
  TensorQuantization out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  GRUWB_RETURN_IF_ERROR(expect_same_quantization(input, output));
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(2 * sizeof(int32_t), &memory));
  int32_t* range = static_cast<int32_t*>(memory);
  GRUWB_RETURN_IF_ERROR(activation_range_quantized(g.activation, output->type, out.scale,
                                                   out.zero_point, &range[0], &range[1]));
  ctx.set_user_data(range);
  set_output_shape(output, make_shape({g.batches, g.h.out, g.w.out, g.channels}));
  return Status();
}

// A window's in-bounds input positions.
struct Bounds {
  int32_t y0, y1, x0, x1;  // [y0, y1) x [x0, x1) in input positions
};

// Calls f(first output index of the position, the batch's first input
// index, the window) for every output position.
template <typename F>
void for_each_window(const PoolGeometry& g, F f) {
  for (int32_t b = 0; b < g.batches; ++b) {
    for (int32_t oy = 0; oy < g.h.out; ++oy) {
      const int32_t start_y = input_position(g.h, oy, 0);
      Bounds bounds;
      bounds.y0 = start_y < 0 ? 0 : start_y;
      bounds.y1 = start_y + g.h.size > g.in_h ? g.in_h : start_y + g.h.size;
      for (int32_t ox = 0; ox < g.w.out; ++ox) {
        const int32_t start_x = input_position(g.w, ox, 0);
        bounds.x0 = start_x < 0 ? 0 : start_x;
        bounds.x1 = start_x + g.w.size > g.in_w ? g.in_w : start_x + g.w.size;
        const int64_t out_base =
            ((static_cast<int64_t>(b) * g.h.out + oy) * g.w.out + ox) * g.channels;
        const int64_t in_batch = static_cast<int64_t>(b) * g.in_h * g.in_w * g.channels;
        f(out_base, in_batch, bounds);
      }
    }
  }
}

inline int64_t input_index(const PoolGeometry& g, int64_t in_batch, int32_t y, int32_t x,
                           int32_t c) {
  return in_batch + (static_cast<int64_t>(y) * g.in_w + x) * g.channels + c;
}

template <bool kMax>
Status eval_integer(OpContext& ctx, const PoolGeometry& g) {
  const int32_t* range = static_cast<const int32_t*>(ctx.user_data());
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  for_each_window(g, [&](int64_t out_base, int64_t in_batch, const Bounds& w) {
    const int32_t count = (w.y1 - w.y0) * (w.x1 - w.x0);
    for (int32_t c = 0; c < g.channels; ++c) {
      int32_t acc = kMax ? INT32_MIN : 0;
      for (int32_t y = w.y0; y < w.y1; ++y) {
        for (int32_t x = w.x0; x < w.x1; ++x) {
          const int32_t v = integer_at(input, input_index(g, in_batch, y, x, c));
          acc = kMax ? (v > acc ? v : acc) : acc + v;
        }
      }
      if (!kMax && count > 0) {
        acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
      }
      acc = acc < range[0] ? range[0] : (acc > range[1] ? range[1] : acc);
      set_integer_at(output, out_base + c, acc);
    }
  });
  return Status();
}

template <bool kMax>
Status eval(OpContext& ctx) {
  const PoolGeometry g = geometry(ctx);
  if (is_integer(ctx.input(0)->type)) return eval_integer<kMax>(ctx, g);
  const float* in = ctx.input(0)->f32();
  Tensor* output = ctx.output(0);
  float* out = output->f32();
  for_each_window(g, [&](int64_t out_base, int64_t in_batch, const Bounds& w) {
    const int32_t count = (w.y1 - w.y0) * (w.x1 - w.x0);
    for (int32_t c = 0; c < g.channels; ++c) {
      float acc = kMax ? -FLT_MAX : 0.f;
      for (int32_t y = w.y0; y < w.y1; ++y) {
        for (int32_t x = w.x0; x < w.x1; ++x) {
          const float v = in[input_index(g, in_batch, y, x, c)];
          if (kMax) {
            acc = v > acc ? v : acc;
          } else {
            acc += v;
          }
        }
      }
      out[out_base + c] = kMax ? acc : (count > 0 ? acc / static_cast<float>(count) : 0.f);
    }
  });
  apply_activation(g.activation, out, output->elements());
  return Status();
}

template <bool kMax>
Status backward(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  Tensor* dx = ctx.gradient(input);
  if (!dy || !dx) return Status();
  const PoolGeometry g = geometry(ctx);
  const float* in = input->f32();
  const float* y = output->f32();
  const float* gy = dy->f32();
  float* gx = dx->f32();
  for_each_window(g, [&](int64_t out_base, int64_t in_batch, const Bounds& w) {
    const int32_t count = (w.y1 - w.y0) * (w.x1 - w.x0);
    if (count == 0) return;
    for (int32_t c = 0; c < g.channels; ++c) {
      const int64_t o = out_base + c;
      const float d = gy[o] * activation_derivative(g.activation, y[o]);
      if (d == 0.f) continue;
      if (kMax) {
        int64_t best = input_index(g, in_batch, w.y0, w.x0, c);
        for (int32_t yy = w.y0; yy < w.y1; ++yy) {
          for (int32_t x = w.x0; x < w.x1; ++x) {
            const int64_t i = input_index(g, in_batch, yy, x, c);
            if (in[i] > in[best]) best = i;
          }
        }
        gx[best] += d;
      } else {
        const float share = d / static_cast<float>(count);
        for (int32_t yy = w.y0; yy < w.y1; ++yy) {
          for (int32_t x = w.x0; x < w.x1; ++x) gx[input_index(g, in_batch, yy, x, c)] += share;
        }
      }
    }
  });
  return Status();
}

}  // namespace

extern const KernelRegistration kMaxPool2dKernel = {
    static_cast<int32_t>(BuiltinOperator::MAX_POOL_2D),
    nullptr,
    prepare,
    eval<true>,
    GRUWB_BACKWARD(backward<true>),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(MAX_POOL_2D) != 0};
extern const KernelRegistration kAveragePool2dKernel = {
    static_cast<int32_t>(BuiltinOperator::AVERAGE_POOL_2D),
    nullptr,
    prepare,
    eval<false>,
    GRUWB_BACKWARD(backward<false>),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(AVERAGE_POOL_2D) != 0};

}  // namespace gruwb
