// CONCATENATION along one axis (negative counts from the end), any byte-sized
// type; float32 outputs take the fused activation. Integer inputs are copied
// as bytes when they share the output's scale and zero point; uint8 inputs
// that do not are requantized as TFLite's ConcatenationWithScaling does
// (round(q * s_in / s_out - zp_in * s_in / s_out) + zp_out in float, clamped).
// TFLite refuses int8/int16 inputs whose quantization differs, and so do we.

#include <cmath>
#include <cstring>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"
#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace {

struct Params {
  int32_t axis;
  Activation activation;
};

Params params_of(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::ConcatenationOptions>();
  Params p{options ? options->axis() : 0,
           options ? options->fused_activation_function() : Activation::NONE};
  if (p.axis < 0) p.axis += ctx.input(0)->shape.rank;
  return p;
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1 << 16));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* first = ctx.input(0);
  const auto* options = ctx.op().options<fb::ConcatenationOptions>();
  int32_t axis = 0;
  GRUWB_RETURN_IF_ERROR(
      normalize_axis(options ? options->axis() : 0, first->shape.rank, first, &axis));
  Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  GRUWB_RETURN_IF_ERROR(check_activation(activation));
  if (activation != Activation::NONE && first->type != TensorType::FLOAT32) {
    return Status::error(StatusCode::kUnsupported, "fused activation %s on %s input '%s'",
                         fb::EnumNameActivationFunctionType(activation),
                         tensor_type_name(first->type), first->name);
  }
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(first, "input", &element_bytes));
  Shape shape = first->shape;
  for (int i = 1; i < ctx.input_count(); ++i) {
    const Tensor* input = ctx.input(i);
    if (!input) return Status::error(StatusCode::kInvalidModel, "input %d is omitted", i);
    GRUWB_RETURN_IF_ERROR(expect_type(input, first->type, "input"));
    bool compatible = input->shape.rank == first->shape.rank;
    for (int32_t d = 0; compatible && d < shape.rank; ++d) {
      compatible = d == axis || input->shape.dims[d] == first->shape.dims[d];
    }
    if (!compatible) {
      return Status::error(StatusCode::kInvalidModel,
                           "input %d '%s' %s does not match input 0 '%s' %s outside axis %d", i,
                           input->name, ShapeText(input->shape).text, first->name,
                           ShapeText(first->shape).text, static_cast<int>(axis));
    }
    shape.dims[axis] += input->shape.dims[axis];
  }
  Tensor* output = ctx.output(0);
  output->type = first->type;
  if (GRUWB_INTEGER_FORM(CONCATENATION) && output->type == TensorType::UINT8) {
    TensorQuantization q;
    for (int i = 0; i <= ctx.input_count(); ++i) {
      const Tensor* t = i < ctx.input_count() ? ctx.input(i) : output;
      GRUWB_RETURN_IF_ERROR(expect_quantized(t, i < ctx.input_count() ? "input" : "output", &q));
    }
  } else {
    for (int i = 0; i < ctx.input_count(); ++i) {
      GRUWB_RETURN_IF_ERROR(expect_same_quantization(ctx.input(i), output));
    }
  }
  // Run-time-shaped inputs (the slices of a loop's output accumulator): the
  // output is planned at the sum of their bounds and takes its real size in
  // eval. Only the concatenation axis may vary.
  for (int i = 0; i < ctx.input_count(); ++i) output->dynamic |= ctx.input(i)->dynamic;
  set_output_shape(output, shape);
  return Status();
}

// The actual shape of a dynamic output; the other dimensions must agree.
Status set_actual_shape(OpContext& ctx, int32_t axis) {
  Tensor* output = ctx.output(0);
  Shape shape = ctx.input(0)->shape;
  for (int i = 1; i < ctx.input_count(); ++i) {
    const Tensor* input = ctx.input(i);
    for (int32_t d = 0; d < shape.rank; ++d) {
      if (d != axis && input->shape.dims[d] != shape.dims[d]) {
        return Status::error(StatusCode::kInvalidArgument,
                             "input %d '%s' %s does not match input 0 %s outside axis %d", i,
                             input->name, ShapeText(input->shape).text, ShapeText(shape).text,
                             static_cast<int>(axis));
      }
    }
    shape.dims[axis] += input->shape.dims[axis];
  }
  return set_dynamic_shape(output, shape);
}

// uint8 bytes of `input` to the output's quantization (a copy when they share it).
void requantize_uint8(const Tensor* input, const Tensor* output, const uint8_t* from, uint8_t* to,
                      size_t n) {
  TensorQuantization in, out;
  tensor_quantization(input, &in);
  tensor_quantization(output, &out);
  if (in.scale == out.scale && in.zero_point == out.zero_point) {
    memcpy(to, from, n);
    return;
  }
  const float scale = in.scale * (1.f / out.scale);
  const float bias = static_cast<float>(-in.zero_point) * scale;
  for (size_t j = 0; j < n; ++j) {
    const float product = static_cast<float>(from[j]) * scale;
    const int64_t v = int64_t{round_saturated(product + bias)} + out.zero_point;
    to[j] = static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
  }
}

Status eval(OpContext& ctx) {
  const Params p = params_of(ctx);
  Tensor* output = ctx.output(0);
  if (output->dynamic) GRUWB_RETURN_IF_ERROR(set_actual_shape(ctx, p.axis));
  const size_t element_bytes = element_bytes_of(output->type);
  const int64_t outer = dims_product(output->shape, 0, p.axis);
  const int64_t inner = dims_product(output->shape, p.axis + 1, output->shape.rank);
  const int n = ctx.input_count();
  uint8_t* out = output->data;
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < n; ++i) {
      const Tensor* input = ctx.input(i);
      const size_t chunk = static_cast<size_t>(input->shape.dims[p.axis] * inner) * element_bytes;
      if (chunk == 0) continue;  // an empty input (a TensorList's first row) has no data pointer
      const uint8_t* from = input->data + static_cast<size_t>(o) * chunk;
      if (GRUWB_INTEGER_FORM(CONCATENATION) && output->type == TensorType::UINT8) {
        requantize_uint8(input, output, from, out, chunk);
      } else {
        memcpy(out, from, chunk);
      }
      out += chunk;
    }
  }
  if (output->type == TensorType::FLOAT32) {
    apply_activation(p.activation, output->f32(), output->elements());
  }
  return Status();
}

// Each input gets its slab of the output's gradient (through the fused
// activation's derivative, taken from the output).
Status backward(OpContext& ctx) {
  const Params p = params_of(ctx);
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  if (!dy) return Status();
  const int64_t outer = dims_product(output->shape, 0, p.axis);
  const int64_t inner = dims_product(output->shape, p.axis + 1, output->shape.rank);
  const int n = ctx.input_count();
  const float* g = dy->f32();
  const float* y = output->f32();
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < n; ++i) {
      const Tensor* input = ctx.input(i);
      const int64_t chunk = input->shape.dims[p.axis] * inner;
      Tensor* dx = ctx.gradient(input);
      if (dx) {
        float* to = dx->f32() + o * chunk;
        for (int64_t k = 0; k < chunk; ++k) {
          to[k] += g[k] * activation_derivative(p.activation, y[k]);
        }
      }
      g += chunk;
      y += chunk;
    }
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kConcatenationKernel = {
    static_cast<int32_t>(BuiltinOperator::CONCATENATION),
    nullptr,
    prepare_then_fold<prepare, eval>,
    eval,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/true,
    /*integer_activations=*/true};

}  // namespace gruwb
