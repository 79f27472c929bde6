// SOFTMAX over the last dimension, with beta; max-subtracted for stability.
// int8/uint8 (full-integer models) as TFLite's builtin (optimized) kernel
// computes it: a 256-entry float table exp(-input_scale * beta * d) for the
// distance d of a value below its row's maximum, built once at prepare; each
// row sums its table entries in float, and every output is
// round(entry / (sum * output_scale)) + output zero point, clamped (uint8:
// truncation of value + 0.5, as TFLite on non-ARM64). TFLite Micro's fixed-point
// softmax differs from this by up to a step.
// int16 -> int16 (16x8 models) as TFLite's reference SoftmaxInt16 (TFLite
// Micro's too): each value's distance below its row's maximum rescaled so that
// [-65535, 0] spans exp's [-10, 0], exp read from a 513-entry int16 table with
// linear interpolation, the Q16.15 sum normalized and its reciprocal read from
// a table of 1 / (1 + x) on [0, 1], each output the product rounded back.

#include <cmath>

#include "engine/kernels/kernel_util.h"
#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace {

struct IntegerSoftmax {
  float table[256];  // table[255 - d] = exp(-input_scale * beta * d)
  float output_scale;
  int32_t output_zero_point;
};

// TFLite's gen_lut for int16 tables: 512 steps over [min, max] in Q0.15 plus the end
// point; each sample lowered by half the rounded midpoint error of the chord to the next,
// every term rounded as TFLite rounds it.
void int16_table(double (*f)(double), double min, double max, int16_t* table) {
  const double step = (max - min) / 512.0;
  const auto clamp16 = [](double v) {
    return v < -32768.0 ? -32768.0 : (v > 32767.0 ? 32767.0 : v);
  };
  for (int i = 0; i < 512; ++i) {
    const double x = min + i * step;
    const double sample = std::round(f(x) * 32768.0);
    const double interpolated = std::round((f(x + step) * 32768.0 + sample) / 2.0);
    const double midpoint = std::round(f(x + step / 2.0) * 32768.0);
    const double bias = std::round((interpolated - midpoint) / 2.0);
    table[i] = static_cast<int16_t>(clamp16(sample - bias));
  }
  table[512] = static_cast<int16_t>(clamp16(std::round(f(max) * 32768.0)));
}

// TFLite's generic_int16_table_lookup: 512 intervals of 128 input steps, interpolated.
int32_t table_lookup(const int16_t* table, int32_t value) {
  const int32_t index = 256 + (value >> 7);
  const int32_t offset = value & 0x7F;
  const int32_t slope = table[index + 1] - table[index];
  return static_cast<int16_t>(table[index] + ((slope * offset + 64) >> 7));
}

double exp_of(double x) { return std::exp(x); }
double one_over_one_plus(double x) { return 1.0 / (1.0 + x); }

struct Int16Softmax {
  int16_t exp_table[513];         // exp on [-10, 0]
  int16_t reciprocal_table[513];  // 1 / (1 + x) on [0, 1]
  QuantizedMultiplier input;      // input_scale * beta / (10 / 65535)
};

int32_t clamp_int16(int32_t v) { return v < -32768 ? -32768 : (v > 32767 ? 32767 : v); }

// exp(x - max) in Q0.15.
int32_t exp_q15(const Int16Softmax& data, int32_t difference) {
  const int32_t scaled = multiply_by_quantized_multiplier(difference, data.input);
  return table_lookup(data.exp_table, clamp_int16(scaled + 32767));
}

Status prepare_int16(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  GRUWB_RETURN_IF_ERROR(expect_type(output, TensorType::INT16, "output"));
  TensorQuantization in, out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  const float kOutputScale = 1.f / 32768.f;
  if (in.zero_point != 0 || out.zero_point != 0 ||
      std::fabs(out.scale - kOutputScale) > 0.001f * kOutputScale) {
    return Status::error(StatusCode::kUnsupported,
                         "int16 SOFTMAX needs zero points 0 and output scale 2^-15 ('%s': %g, %d)",
                         output->name, static_cast<double>(out.scale),
                         static_cast<int>(out.zero_point));
  }
  // The row's Q16.15 sum of exps stays below 2^31.
  const int32_t depth = input->shape.dims[input->shape.rank - 1];
  if (depth > 65535) {
    return Status::error(StatusCode::kUnsupported,
                         "int16 SOFTMAX over %d values: at most 65535 per row",
                         static_cast<int>(depth));
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(Int16Softmax), &memory));
  Int16Softmax* data = static_cast<Int16Softmax*>(memory);
  int16_table(exp_of, -10.0, 0.0, data->exp_table);
  int16_table(one_over_one_plus, 0.0, 1.0, data->reciprocal_table);
  const auto* options = ctx.op().options<fb::SoftmaxOptions>();
  const double beta = options ? static_cast<double>(options->beta()) : 1.0;
  data->input = quantize_multiplier(static_cast<double>(in.scale) * beta / (10.0 / 65535.0));
  ctx.set_user_data(data);
  set_output_shape(output, input->shape);
  return Status();
}

Status eval_int16(OpContext& ctx) {
  const Int16Softmax& data = *static_cast<const Int16Softmax*>(ctx.user_data());
  const Tensor* input = ctx.input(0);
  const int32_t depth = input->shape.dims[input->shape.rank - 1];
  const int64_t rows = depth ? input->elements() / depth : 0;
  const int16_t* x = reinterpret_cast<const int16_t*>(input->data);
  int16_t* y = reinterpret_cast<int16_t*>(ctx.output(0)->data);
  for (int64_t r = 0; r < rows; ++r, x += depth, y += depth) {
    int32_t max = -32768;
    for (int32_t i = 0; i < depth; ++i) max = x[i] > max ? x[i] : max;
    int32_t sum = 0;  // Q16.15
    for (int32_t i = 0; i < depth; ++i) sum += exp_q15(data, x[i] - max);
    // 1 / sum: the sum normalized into [1, 2) as Q1.15 (x = sum - 1 recentred to
    // [-32768, 32767]), the reciprocal table, and the normalization undone in the shift.
    const int32_t headroom_plus_one = __builtin_clz(static_cast<uint32_t>(sum));
    const int32_t shifted = static_cast<int32_t>(
        ((static_cast<int64_t>(sum) << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int32_t reciprocal =
        table_lookup(data.reciprocal_table, clamp_int16(shifted - (1 << 15) - (1 << 16)));
    const int32_t right_shift = 31 - headroom_plus_one;
    const int64_t round = int64_t{1} << (right_shift - 1);
    for (int32_t i = 0; i < depth; ++i) {
      const int64_t v =
          (static_cast<int64_t>(exp_q15(data, x[i] - max)) * reciprocal + round) >> right_shift;
      y[i] = static_cast<int16_t>(v < 0 ? 0 : (v > 32767 ? 32767 : v));
    }
  }
  return Status();
}

Status prepare_integer(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  if (input->type == TensorType::INT16) return prepare_int16(ctx);
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
      // rescaled >= 0, so uint8's floor(x + 0.5) is TFLite's truncation; saturated, as a
      // denormal output scale or a large beta make it infinite or NaN.
      const int64_t q =
          static_cast<int64_t>(round_saturated(is_uint8 ? std::floor(rescaled + 0.5f) : rescaled)) +
          data.output_zero_point;
      set_integer_at(output, base + i, static_cast<int32_t>(q < min ? min : (q > max ? max : q)));
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
  if (GRUWB_INTEGER_FORM(SOFTMAX) && ctx.input(0)->type == TensorType::INT16) {
    return eval_int16(ctx);
  }
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
