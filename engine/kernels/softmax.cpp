// SOFTMAX over the last dimension, with beta; max-subtracted for stability.
// int8/uint8 (full-integer models) as TFLite's builtin (optimized) kernel
// computes it: a 256-entry float table exp(-input_scale * beta * d) for the
// distance d of a value below its row's maximum, built once at prepare; each
// row sums its table entries in float, and every output is
// round(entry / (sum * output_scale)) + output zero point, clamped (uint8:
// truncation of value + 0.5, as TFLite on non-ARM64). TFLite Micro's fixed-point
// softmax differs from this by up to a step.

#include "engine/kernels/kernel_util.h"
#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace {

struct IntegerSoftmax {
  float table[256];  // table[255 - d] = exp(-input_scale * beta * d)
  float output_scale;
  int32_t output_zero_point;
};

Status prepare_integer(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  if (input->type != TensorType::INT8 && input->type != TensorType::UINT8) {
    return Status::error(StatusCode::kUnsupported, "SOFTMAX of %s '%s'",
                         tensor_type_name(input->type), input->name);
  }
  // int8 -> int16 as well (TFLite's same table kernel, clamped to int16).
  if (!(input->type == TensorType::INT8 && output->type == TensorType::INT16)) {
    GRUWB_RETURN_IF_ERROR(expect_type(output, input->type, "output"));
  }
  TensorQuantization in, out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(IntegerSoftmax), &memory));
  IntegerSoftmax* data = static_cast<IntegerSoftmax*>(memory);
  const auto* options = ctx.op().options<fb::SoftmaxOptions>();
  const float beta = options ? options->beta() : 1.f;
  const float scale = -in.scale * beta;
  for (int32_t d = 0; d < 256; ++d) data->table[255 - d] = std::exp(scale * static_cast<float>(d));
  data->output_scale = out.scale;
  data->output_zero_point = out.zero_point;
  ctx.set_user_data(data);
  set_output_shape(output, input->shape);
  return Status();
}

Status eval_integer(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  const IntegerSoftmax& data = *static_cast<const IntegerSoftmax*>(ctx.user_data());
  const int32_t depth = input->shape.dims[input->shape.rank - 1];
  const int64_t rows = depth ? input->elements() / depth : 0;
  int32_t min = 0, max = 0;
  integer_range(output->type, &min, &max);
  const bool is_uint8 = output->type == TensorType::UINT8;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * depth;
    int32_t row_max = integer_at(input, base);
    for (int32_t i = 1; i < depth; ++i) {
      const int32_t v = integer_at(input, base + i);
      row_max = v > row_max ? v : row_max;
    }
    const float* entry = data.table + 255 - row_max;  // entry[v] = exp(.. (max - v))
    float sum = 0.f;
    for (int32_t i = 0; i < depth; ++i) sum += entry[integer_at(input, base + i)];
    const float inverse = 1.f / (sum * data.output_scale);
    for (int32_t i = 0; i < depth; ++i) {
      const float rescaled = entry[integer_at(input, base + i)] * inverse;
      int32_t q = (is_uint8 ? static_cast<int32_t>(rescaled + 0.5f)
                            : static_cast<int32_t>(std::round(rescaled))) +
                  data.output_zero_point;
      set_integer_at(output, base + i, q < min ? min : (q > max ? max : q));
    }
  }
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  if (GRUWB_INTEGER_FORM(SOFTMAX) && input->shape.rank >= 1 && input->type != TensorType::FLOAT32) {
    return prepare_integer(ctx);
  }
  GRUWB_RETURN_IF_ERROR(expect_float(input, "input"));
  if (input->shape.rank < 1) {
    return Status::error(StatusCode::kInvalidModel, "input '%s' must have rank >= 1", input->name);
  }
  ctx.output(0)->type = TensorType::FLOAT32;
  set_output_shape(ctx.output(0), input->shape);
  return Status();
}

Status eval(OpContext& ctx) {
  if (GRUWB_INTEGER_FORM(SOFTMAX) && ctx.input(0)->type != TensorType::FLOAT32)
    return eval_integer(ctx);
  const Tensor* input = ctx.input(0);
  const auto* options = ctx.op().options<fb::SoftmaxOptions>();
  float beta = options ? options->beta() : 1.f;
  int32_t depth = input->shape.dims[input->shape.rank - 1];
  int64_t rows = depth ? input->elements() / depth : 0;
  const float* x = input->f32();
  float* y = ctx.output(0)->f32();
  for (int64_t r = 0; r < rows; ++r, x += depth, y += depth) {
    float max = x[0];
    for (int32_t i = 1; i < depth; ++i) max = x[i] > max ? x[i] : max;
    float sum = 0.f;
    for (int32_t i = 0; i < depth; ++i) {
      y[i] = std::exp((x[i] - max) * beta);
      sum += y[i];
    }
    float inverse = 1.f / sum;
    for (int32_t i = 0; i < depth; ++i) y[i] *= inverse;
  }
  return Status();
}

// dx_i = beta * y_i * (dy_i - sum_j dy_j y_j) per row.
Status backward(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  Tensor* dx = ctx.gradient(input);
  if (!dy || !dx) return Status();
  const auto* options = ctx.op().options<fb::SoftmaxOptions>();
  float beta = options ? options->beta() : 1.f;
  int32_t depth = input->shape.dims[input->shape.rank - 1];
  int64_t rows = depth ? input->elements() / depth : 0;
  const float* y = output->f32();
  const float* g = dy->f32();
  float* d = dx->f32();
  for (int64_t r = 0; r < rows; ++r, y += depth, g += depth, d += depth) {
    float dot = 0.f;
    for (int32_t i = 0; i < depth; ++i) dot += g[i] * y[i];
    for (int32_t i = 0; i < depth; ++i) d[i] += beta * y[i] * (g[i] - dot);
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kSoftmaxKernel = {
    static_cast<int32_t>(BuiltinOperator::SOFTMAX),
    nullptr,
    prepare,
    eval,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(SOFTMAX) != 0};

}  // namespace gruwb
