// QUANTIZE and DEQUANTIZE, the edges of a full-integer model, as TFLite
// computes them:
//   QUANTIZE float -> int8/uint8/int16: zero_point + round(x / scale) (float
//     division, halves away from zero), clamped to the type's range;
//   QUANTIZE integer -> integer (uint8 legacy inputs -> int8, or a rescale;
//     int16 -> int32 too): (q - in_zp) times the quantized multiplier
//     in_scale / out_scale, plus out_zp, clamped;
//   DEQUANTIZE integer -> float: scale * (q - zero_point).

#include <cmath>

#include "engine/kernels/kernel_util.h"
#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace {

struct Requantize {
  QuantizedMultiplier multiplier;
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
};

Status prepare_quantize(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  int32_t min = 0, max = 0;
  // int32 outputs only from int16 (TFLite's requantization for applications
  // that read int32 results, as TFLite Micro's keyword model does).
  const bool int32_out =
      output->type == TensorType::INT32 && input && input->type == TensorType::INT16;
  if (!integer_range(output->type, &min, &max) && !int32_out) {
    return Status::error(StatusCode::kUnsupported,
                         "QUANTIZE to %s '%s' (int8, uint8 or int16; int32 from int16)",
                         tensor_type_name(output->type), output->name);
  }
  TensorQuantization out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  set_output_shape(output, input->shape);
  if (input->type == TensorType::FLOAT32) return Status();
  if (!integer_range(input->type, &min, &max)) {
    return Status::error(StatusCode::kUnsupported, "QUANTIZE from %s '%s'",
                         tensor_type_name(input->type), input->name);
  }
  TensorQuantization in;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(Requantize), &memory));
  Requantize* r = static_cast<Requantize*>(memory);
  r->multiplier =
      quantize_multiplier(static_cast<double>(in.scale) / static_cast<double>(out.scale));
  r->input_zero_point = in.zero_point;
  r->output_zero_point = out.zero_point;
  ctx.set_user_data(r);
  return Status();
}

Status eval_quantize(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  int32_t min = 0, max = 0;
  integer_range(output->type, &min, &max);
  const int64_t n = output->elements();
  if (input->type == TensorType::FLOAT32) {
    TensorQuantization out;
    tensor_quantization(output, &out);
    const float* x = input->f32();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t q = static_cast<int64_t>(round_saturated(x[i] / out.scale)) + out.zero_point;
      set_integer_at(output, i, static_cast<int32_t>(q < min ? min : (q > max ? max : q)));
    }
    return Status();
  }
  const Requantize& r = *static_cast<const Requantize*>(ctx.user_data());
  // In 64 bits: an int32 output's zero point may be anything the file says.
  if (output->type == TensorType::INT32) {
    min = INT32_MIN;
    max = INT32_MAX;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t q = static_cast<int64_t>(multiply_by_quantized_multiplier(
                          integer_at(input, i) - r.input_zero_point, r.multiplier)) +
                      r.output_zero_point;
    set_integer_at(output, i, static_cast<int32_t>(q < min ? min : (q > max ? max : q)));
  }
  return Status();
}

Status prepare_dequantize(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  int32_t min = 0, max = 0;
  if (!integer_range(input->type, &min, &max)) {
    return Status::error(StatusCode::kUnsupported,
                         "DEQUANTIZE of %s '%s' (int8, uint8 or int16; float16 not yet)",
                         tensor_type_name(input->type), input->name);
  }
  TensorQuantization in;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  ctx.output(0)->type = TensorType::FLOAT32;
  set_output_shape(ctx.output(0), input->shape);
  return Status();
}

Status eval_dequantize(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  TensorQuantization in;
  tensor_quantization(input, &in);
  float* y = ctx.output(0)->f32();
  const int64_t n = input->elements();
  // The product of a float scale and a small integer is exact in double, so
  // TFLite's double product rounded to float equals this float product.
  for (int64_t i = 0; i < n; ++i) {
    y[i] = in.scale * static_cast<float>(integer_at(input, i) - in.zero_point);
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kQuantizeKernel = {static_cast<int32_t>(BuiltinOperator::QUANTIZE),
                                                   nullptr,
                                                   prepare_quantize,
                                                   eval_quantize,
                                                   /*backward=*/nullptr,
                                                   /*cost=*/nullptr,
                                                   /*weight_inputs=*/0,
                                                   /*dynamic_inputs=*/false,
                                                   /*integer_activations=*/true};
extern const KernelRegistration kDequantizeKernel = {
    static_cast<int32_t>(BuiltinOperator::DEQUANTIZE),
    nullptr,
    prepare_dequantize,
    eval_dequantize,
    /*backward=*/nullptr,
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/false,
    /*integer_activations=*/true};

}  // namespace gruwb
