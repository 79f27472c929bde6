// FULLY_CONNECTED: out = act(x W^T + b), W stored [out, in] (the Keras kernel
// transposed). Hybrid models keep W in INT8 with per-tensor or per-row scales;
// we dequantize on the fly and compute in float.

#include "engine/kernels/kernel_util.h"
#include "engine/kernels/matmul.h"
#include "engine/kernels/op_cost.h"

namespace gruwb {
namespace {

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 3));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* weights = ctx.input(1);
  const Tensor* bias = ctx.input(2);
  Tensor* output = ctx.output(0);
  GRUWB_RETURN_IF_ERROR(expect_float(input, "input"));
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
  if (weights->type == TensorType::INT8) {
    const fb::QuantizationParameters* q = weights->quantization;
    if (!q || !q->scale() || q->scale()->size() == 0 ||
        (q->scale()->size() != 1 && q->scale()->size() != static_cast<uint32_t>(units))) {
      return Status::error(StatusCode::kInvalidModel, "INT8 weights '%s' need 1 or %d scales",
                           weights->name, static_cast<int>(units));
    }
  } else {
    GRUWB_RETURN_IF_ERROR(expect_float(weights, "weights"));
  }
  if (bias) {
    GRUWB_RETURN_IF_ERROR(expect_float(bias, "bias"));
    if (bias->elements() != units) {
      return Status::error(StatusCode::kInvalidModel, "bias '%s' has %lld values, expected %d",
                           bias->name, static_cast<long long>(bias->elements()),
                           static_cast<int>(units));
    }
  }
  int64_t elements = input->elements();
  if (depth == 0 || elements % depth != 0) {
    char shape[48];
    format_shape(input->shape, shape, sizeof shape);
    return Status::error(StatusCode::kInvalidModel,
                         "input '%s' %s does not divide into rows of %d features", input->name,
                         shape, static_cast<int>(depth));
  }
  Shape out_shape;
  if (options && options->keep_num_dims()) {
    out_shape = input->shape;
    out_shape.dims[out_shape.rank - 1] = units;
  } else {
    out_shape = make_shape({static_cast<int32_t>(elements / depth), units});
  }
  output->type = TensorType::FLOAT32;
  set_output_shape(output, out_shape);
  if (ctx.training() && weights->type != TensorType::FLOAT32) {
    return Status::error(StatusCode::kUnsupported,
                         "training through FULLY_CONNECTED needs float32 weights ('%s' is %s)",
                         weights->name, tensor_type_name(weights->type));
  }
  return Status();
}

Status eval(OpContext& ctx) {
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
    const auto* q = weights->quantization;
    const float* scales = q->scale()->data();
    bool per_row = q->scale()->size() > 1;
    const int64_t* zero_points = q->zero_point() ? q->zero_point()->data() : nullptr;
    bool zp_per_row = q->zero_point() && q->zero_point()->size() > 1;
    for (int64_t n = 0; n < batches; ++n) {
      const float* x = input->f32() + n * depth;
      for (int32_t r = 0; r < units; ++r) {
        float zp = zero_points ? static_cast<float>(zero_points[zp_per_row ? r : 0]) : 0.f;
        const int8_t* row = w + static_cast<int64_t>(r) * depth;
        float acc = 0.f;
        for (int32_t i = 0; i < depth; ++i) acc += x[i] * (static_cast<float>(row[i]) - zp);
        out[n * units + r] = acc * scales[per_row ? r : 0] + (b ? b[r] : 0.f);
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
    input_bits(1, 2)};

}  // namespace gruwb
