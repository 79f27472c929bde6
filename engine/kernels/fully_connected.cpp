// FULLY_CONNECTED: out = act(x W^T + b), W stored [out, in] (the Keras kernel
// transposed). Hybrid models keep W in INT8 with per-tensor or per-row scales;
// as TFLite's hybrid kernel does, each input row is quantized to int8 at run
// time (symmetric, or asymmetric with a zero point when the options ask for
// it), the products accumulate in int32 and are scaled back to float, so the
// outputs equal TFLite's rather than those of dequantized float weights.
// Full-integer models (int8 input, weights and output, int32 bias) run
// TFLite's integer kernel: int32 sums of (x - x_zp)(w - w_zp) plus the bias,
// rescaled by input scale x weight scale (per tensor or per output channel) /
// output scale as a quantized multiplier, plus the output zero point, clamped
// to the fused activation's range. 16x8 models (int16 input and output, zero
// points 0, int64 bias) sum in int64 and requantize with TFLite's int64
// multiply (multiply_by_quantized_multiplier_64).

#include "engine/kernels/hybrid_util.h"
#include "engine/kernels/kernel_util.h"
#include "engine/kernels/matmul.h"
#include "engine/kernels/op_cost.h"
#include "engine/kernels/quant_util.h"
#include "engine/kernels/recurrent_util.h"

namespace gruwb {
namespace {

// Full-integer FULLY_CONNECTED's constants, computed once at prepare.
struct IntegerFc {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t output_min = 0;
  int32_t output_max = 0;
  int32_t channels = 0;                        // 1 (per tensor) or units
  QuantizedMultiplier* multipliers = nullptr;  // [channels]
};

Status prepare_integer(OpContext& ctx, Activation activation, const Shape& out_shape) {
  const Tensor* input = ctx.input(0);
  const Tensor* weights = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  Tensor* output = ctx.output(0);
  const int32_t units = weights->shape.dims[0];
  const bool int16 = input->type == TensorType::INT16;  // 16x8: int64 bias
  GRUWB_RETURN_IF_ERROR(expect_type(weights, TensorType::INT8, "weights"));
  GRUWB_RETURN_IF_ERROR(expect_type(output, input->type, "output"));
  if (bias) {
    GRUWB_RETURN_IF_ERROR(expect_type(bias, int16 ? TensorType::INT64 : TensorType::INT32, "bias"));
  }
  if (bias && bias->elements() != units) {
    return Status::error(StatusCode::kInvalidModel, "bias '%s' has %lld values, expected %d",
                         bias->name, static_cast<long long>(bias->elements()),
                         static_cast<int>(units));
  }
  if (ctx.training()) {
    return Status::error(StatusCode::kUnsupported, "training through an int8 FULLY_CONNECTED");
  }
  TensorQuantization in, w, out;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &in));
  GRUWB_RETURN_IF_ERROR(expect_quantized(weights, "weights", &w, units));
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &out));
  if (int16 && (in.zero_point != 0 || out.zero_point != 0)) {
    return Status::error(StatusCode::kInvalidModel,
                         "int16 input '%s' and output '%s' need zero point 0 (symmetric)",
                         input->name, output->name);
  }
  IntegerFc* fc = nullptr;
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(IntegerFc), &memory));
  fc = static_cast<IntegerFc*>(memory);
  GRUWB_RETURN_IF_ERROR(
      ctx.allocate_persistent(sizeof(QuantizedMultiplier) * static_cast<size_t>(w.count), &memory));
  fc->multipliers = static_cast<QuantizedMultiplier*>(memory);
  fc->channels = w.count;
  fc->input_zero_point = in.zero_point;
  fc->output_zero_point = out.zero_point;
  for (int32_t c = 0; c < w.count; ++c) {
    if (w.zero_point_at(c) != 0) {
      return Status::error(StatusCode::kUnsupported,
                           "int8 weights '%s' have zero point %d (TFLite's are symmetric)",
                           weights->name, static_cast<int>(w.zero_point_at(c)));
    }
    // As TFLite: the product of the scales in double, over the output scale.
    const double real = static_cast<double>(in.scale) * static_cast<double>(w.scales[c]) /
                        static_cast<double>(out.scale);
    fc->multipliers[c] = quantize_multiplier(real);
  }
  GRUWB_RETURN_IF_ERROR(activation_range_quantized(
      activation, output->type, out.scale, out.zero_point, &fc->output_min, &fc->output_max));
  set_output_shape(output, out_shape);
  ctx.set_user_data(fc);
  return Status();
}

Status eval_integer(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* weights = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  const IntegerFc& fc = *static_cast<const IntegerFc*>(ctx.user_data());
  const int32_t units = weights->shape.dims[0];
  const int32_t depth = weights->shape.dims[1];
  const int64_t batches = input->elements() / depth;
  const int8_t* w = reinterpret_cast<const int8_t*>(weights->data);
  if (input->type == TensorType::INT16) {
    // 16x8: int64 sums and bias, the int64 requantization.
    const int64_t* b64 = bias ? reinterpret_cast<const int64_t*>(bias->data) : nullptr;
    Tensor* output = ctx.output(0);
    for (int64_t n = 0; n < batches; ++n) {
      for (int32_t r = 0; r < units; ++r) {
        const int8_t* row = w + static_cast<int64_t>(r) * depth;
        int64_t acc = 0;
        for (int32_t i = 0; i < depth; ++i) {
          acc += static_cast<int64_t>(row[i]) * integer_at(input, n * depth + i);
        }
        if (b64) acc = wrap_add(acc, b64[r]);
        int32_t v =
            multiply_by_quantized_multiplier_64(acc, fc.multipliers[fc.channels > 1 ? r : 0]);
        v = v < fc.output_min ? fc.output_min : (v > fc.output_max ? fc.output_max : v);
        set_integer_at(output, n * units + r, v);
      }
    }
    return Status();
  }
  const int32_t* b = bias ? bias->i32() : nullptr;
  int8_t* out = reinterpret_cast<int8_t*>(ctx.output(0)->data);
  for (int64_t n = 0; n < batches; ++n) {
    const int8_t* x = reinterpret_cast<const int8_t*>(input->data) + n * depth;
    for (int32_t r = 0; r < units; ++r) {
      const int8_t* row = w + static_cast<int64_t>(r) * depth;
      int32_t acc = 0;
      for (int32_t i = 0; i < depth; ++i) {
        acc = wrap_add(
            acc, static_cast<int32_t>(row[i]) * (static_cast<int32_t>(x[i]) - fc.input_zero_point));
      }
      if (b) acc = wrap_add(acc, b[r]);
      acc = multiply_by_quantized_multiplier(acc, fc.multipliers[fc.channels > 1 ? r : 0]);
      acc = wrap_add(acc, fc.output_zero_point);
      acc = acc < fc.output_min ? fc.output_min : (acc > fc.output_max ? fc.output_max : acc);
      out[n * units + r] = static_cast<int8_t>(acc);
    }
  }
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* weights = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  Tensor* output = ctx.output(0);
  const bool integer = GRUWB_INTEGER_FORM(FULLY_CONNECTED) &&
                       (input->type == TensorType::INT8 || input->type == TensorType::INT16);
  if (!integer) GRUWB_RETURN_IF_ERROR(expect_float(input, "input"));
  const auto* options = ctx.op().options<fb::FullyConnectedOptions>();
  Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  GRUWB_RETURN_IF_ERROR(check_activation(activation));
  if (options && options->weights_format() != fb::FullyConnectedOptionsWeightsFormat::DEFAULT) {
    return Status::error(StatusCode::kUnsupported, "shuffled weights format is not supported");
  }
  if (weights->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel, "weights '%s' must be 2-D, rank is %d",
                         weights->name, static_cast<int>(weights->shape.rank));
  }
  int32_t units = weights->shape.dims[0];
  int32_t depth = weights->shape.dims[1];
  if (integer) {
    // Shapes below; the integer kernel checks its own types.
  } else if (weights->type == TensorType::INT8) {
    const fb::QuantizationParameters* q = weights->quantization;
    if (!q || !q->scale() || q->scale()->size() == 0 ||
        (q->scale()->size() != 1 && q->scale()->size() != static_cast<uint32_t>(units))) {
      return Status::error(StatusCode::kInvalidModel, "INT8 weights '%s' need 1 or %d scales",
                           weights->name, static_cast<int>(units));
    }
    GRUWB_RETURN_IF_ERROR(expect_zero_points_in_range(weights, "INT8 weights"));
  } else {
    GRUWB_RETURN_IF_ERROR(expect_float(weights, "weights"));
  }
  if (bias && !integer) {
    GRUWB_RETURN_IF_ERROR(expect_float(bias, "bias"));
    if (bias->elements() != units) {
      return Status::error(StatusCode::kInvalidModel, "bias '%s' has %lld values, expected %d",
                           bias->name, static_cast<long long>(bias->elements()),
                           static_cast<int>(units));
    }
  }
  int64_t elements = input->elements();
  // keep_num_dims makes only the last dimension `units`, so it must be the depth (eval writes
  // elements / depth rows).
  const bool keep_num_dims = options && options->keep_num_dims();
  if (depth == 0 || elements % depth != 0 ||
      (keep_num_dims &&
       (input->shape.rank < 1 || input->shape.dims[input->shape.rank - 1] != depth))) {
    char shape[48];
    format_shape(input->shape, shape, sizeof shape);
    return Status::error(StatusCode::kInvalidModel, "input '%s' %s is not rows of %d features",
                         input->name, shape, static_cast<int>(depth));
  }
  Shape out_shape;
  if (keep_num_dims) {
    out_shape = input->shape;
    out_shape.dims[out_shape.rank - 1] = units;
  } else {
    out_shape = make_shape({static_cast<int32_t>(elements / depth), units});
  }
  if (integer) return prepare_integer(ctx, activation, out_shape);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, out_shape);
  if (ctx.training() && weights->type != TensorType::FLOAT32) {
    return Status::error(StatusCode::kUnsupported,
                         "training through FULLY_CONNECTED needs float32 weights ('%s' is %s)",
                         weights->name, tensor_type_name(weights->type));
  }
  if (weights->type == TensorType::INT8) {
    int slot = -1;  // one quantized input row
    GRUWB_RETURN_IF_ERROR(ctx.request_scratch(static_cast<size_t>(depth), &slot));
    ctx.set_user_data(reinterpret_cast<void*>(static_cast<intptr_t>(slot)));
  }
  return Status();
}

Status eval(OpContext& ctx) {
  if (GRUWB_INTEGER_FORM(FULLY_CONNECTED) &&
      (ctx.input(0)->type == TensorType::INT8 || ctx.input(0)->type == TensorType::INT16)) {
    return eval_integer(ctx);
  }
  const Tensor* input = ctx.input(0);
  const Tensor* weights = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  Tensor* output = ctx.output(0);
  const auto* options = ctx.op().options<fb::FullyConnectedOptions>();
  Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  int32_t units = weights->shape.dims[0];
  int32_t depth = weights->shape.dims[1];
  int64_t batches = input->elements() / depth;
  const float* b = bias ? bias->f32() : nullptr;
  float* out = output->f32();
  if (weights->type == TensorType::FLOAT32) {
    for (int64_t n = 0; n < batches; ++n) {
      matvec(weights->f32(), units, depth, input->f32() + n * depth, b, out + n * units);
    }
  } else {
    const int8_t* w = reinterpret_cast<const int8_t*>(weights->data);
    const float* scales = weights->quantization->scale()->data();
    const bool per_row = weights->quantization->scale()->size() > 1;
    const bool asymmetric = options && options->asymmetric_quantize_inputs();
    // TFLite's hybrid weights are symmetric; a zero point, where a file has one, is honoured.
    const uint32_t zero_points = zero_point_count(weights->quantization);
    const bool zp_per_row = zero_points > 1;
    bool weight_zero_points = false;
    for (uint32_t i = 0; i < zero_points; ++i) {
      weight_zero_points = weight_zero_points || zero_point_at(weights->quantization, i) != 0;
    }
    QuantizedRow xq;
    xq.values = static_cast<int8_t*>(
        ctx.scratch(static_cast<int>(reinterpret_cast<intptr_t>(ctx.user_data()))));
    for (int64_t n = 0; n < batches; ++n) {
      float* y = out + n * units;
      for (int32_t r = 0; r < units; ++r) y[r] = b ? b[r] : 0.f;
      quantize_row(input->f32() + n * depth, depth, asymmetric, &xq);
      if (!weight_zero_points) {
        hybrid_matvec_accumulate(w, units, depth, scales, per_row, xq, y);
        continue;
      }
      // Weights with a zero point (not TFLite's hybrid layout, but valid in a
      // file): (q - zp_x) . (w - zp_w) expanded in int32.
      const int32_t x_sum = sum_int8(xq.values, depth);
      for (int32_t r = 0; r < units; ++r) {
        const int8_t* row = w + static_cast<int64_t>(r) * depth;
        const int32_t zp = static_cast<int32_t>(
            zero_point_at(weights->quantization, zp_per_row ? static_cast<uint32_t>(r) : 0));
        // In int64: zp * (x_sum - depth * zp_x) outgrows int32 from 65,794 columns.
        const int64_t dot = int64_t{dot_int8(row, xq.values, depth)} -
                            int64_t{xq.zero_point} * sum_int8(row, depth) -
                            int64_t{zp} * (int64_t{x_sum} - int64_t{depth} * xq.zero_point);
        y[r] += static_cast<float>(dot) * (xq.scale * scales[per_row ? r : 0]);
      }
    }
  }
  apply_activation(activation, out, batches * units);
  return Status();
}

// dz = dy * act'(y); dx += dz W; dW += dz^T x; db += sum over rows of dz.
Status backward(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  const Tensor* weights = ctx.input(1);
  const Tensor* output = ctx.output(0);
  const Tensor* dy = ctx.gradient(output);
  if (!dy) return Status();
  const auto* options = ctx.op().options<fb::FullyConnectedOptions>();
  Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  Tensor* dx = ctx.gradient(input);
  Tensor* dw = ctx.gradient(weights);
  Tensor* db = ctx.gradient(ctx.input(2));
  const int32_t units = weights->shape.dims[0];
  const int32_t depth = weights->shape.dims[1];
  const int64_t batches = input->elements() / depth;
  const float* w = weights->f32();
#if GRUWB_BATCHED_KERNELS
  // A batch without activation: each gradient is one matrix product over the rows.
  if (activation == Activation::NONE && batches > 1 && batches <= INT32_MAX) {
    const int32_t rows = static_cast<int32_t>(batches);
    const float* g = dy->f32();
    const float* x = input->f32();
    if (dx) gemm_accumulate(rows, depth, units, g, units, 1, w, depth, dx->f32(), depth);
    if (dw) gemm_accumulate(units, depth, rows, g, 1, units, x, depth, dw->f32(), depth);
    if (db) add_rows(db->f32(), units, g, units, rows);
    return Status();
  }
#endif
  for (int64_t n = 0; n < batches; ++n) {
    const float* g = dy->f32() + n * units;
    const float* y = output->f32() + n * units;
    const float* x = input->f32() + n * depth;
    for (int32_t r = 0; r < units; ++r) {
      const float gr =
          activation == Activation::NONE ? g[r] : g[r] * activation_derivative(activation, y[r]);
      if (gr == 0.f) continue;
      const float* row = w + static_cast<int64_t>(r) * depth;
      if (dx) {
        float* d = dx->f32() + n * depth;
        for (int32_t i = 0; i < depth; ++i) d[i] += gr * row[i];
      }
      if (dw) {
        float* d = dw->f32() + static_cast<int64_t>(r) * depth;
        for (int32_t i = 0; i < depth; ++i) d[i] += gr * x[i];
      }
      if (db) db->f32()[r] += gr;
    }
  }
  return Status();
}

// Weights [out, in]: out x in per row of the input.
OpCost cost(const OpCostQuery& q) {
  if (input_rank(q.subgraph, q.op, 1) != 2) return OpCost();
  const int64_t out = input_dim(q.subgraph, q.op, 1, 0), in = input_dim(q.subgraph, q.op, 1, 1);
  const uint64_t batch = rows_of(q.subgraph, q.op, 0, in);
  if (batch == 0 || out <= 0) return OpCost();
  return make_cost(batch * static_cast<uint64_t>(out * in), "batch {} x out {} x in {}",
                   {static_cast<int64_t>(batch), out, in});
}

}  // namespace

extern const KernelRegistration kFullyConnectedKernel = {
    static_cast<int32_t>(BuiltinOperator::FULLY_CONNECTED),
    nullptr,
    prepare,
    eval,
    GRUWB_BACKWARD(backward),
    cost,
    input_bits(1, 2),
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(FULLY_CONNECTED) != 0};

}  // namespace gruwb
