// SVDF (TFLite's rank-factored time filter, TFLite Micro's keyword model):
//   0 input [B, I]            1 weights_feature [F, I]      2 weights_time [F, M]
//   3 bias [F / rank] or -1   4 state [B, F * M] (a variable tensor)
// output [B, F / rank]. Every invoke shifts each filter's M-long memory one
// step left, writes the filter's response to the input (weights_feature . x)
// into its newest slot, takes each filter's dot product of its memory with its
// weights_time row, and sums the `rank` filters of each output unit, plus the
// bias and the fused activation.
// Float32, or full-integer as TFLite's integer kernel: int8 input, int8
// weights_feature, int16 weights_time and state (symmetric), int32 bias, int8
// output. The feature sums (x - x_zp) . w are rescaled to the state by
// s_x * s_wf / s_state (computed in float, as TFLite) and clamped to int16; the
// time sums plus the bias are rescaled to the output by s_state * s_wt / s_out,
// plus the output zero point, clamped to int8 (TFLite applies no fused
// activation on this path). Inference only.

#include <cstring>
#include <new>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"
#include "engine/kernels/op_cost.h"
#include "engine/kernels/quant_util.h"

namespace gruwb {
namespace {

enum { kInput = 0, kWeightsFeature, kWeightsTime, kBias, kState };

struct SvdfLayout {
  int32_t batches, inputs, filters, memory, rank, units;
};

SvdfLayout layout_of(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::SVDFOptions>();
  SvdfLayout l;
  l.batches = ctx.input(kInput)->shape.dims[0];
  l.inputs = ctx.input(kInput)->shape.dims[1];
  l.filters = ctx.input(kWeightsFeature)->shape.dims[0];
  l.memory = ctx.input(kWeightsTime)->shape.dims[1];
  l.rank = options ? options->rank() : 0;
  l.units = l.rank > 0 ? l.filters / l.rank : 0;
  return l;
}

// Full-integer constants, computed once at prepare.
struct IntegerSvdf {
  QuantizedMultiplier feature;  // to the state's scale
  QuantizedMultiplier output;   // state x weights_time to the output's scale
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int filter_sums_slot = -1;  // int32 [F]
};

Status prepare_integer(OpContext& ctx, const SvdfLayout& l) {
  const Tensor* input = ctx.input(kInput);
  const Tensor* feature = ctx.input(kWeightsFeature);
  const Tensor* time = ctx.input(kWeightsTime);
  const Tensor* bias = ctx.input(kBias);
  const Tensor* state = ctx.input(kState);
  Tensor* output = ctx.output(0);
  GRUWB_RETURN_IF_ERROR(expect_type(feature, TensorType::INT8, "weights_feature"));
  GRUWB_RETURN_IF_ERROR(expect_type(time, TensorType::INT16, "weights_time"));
  GRUWB_RETURN_IF_ERROR(expect_type(state, TensorType::INT16, "state"));
  GRUWB_RETURN_IF_ERROR(expect_type(output, TensorType::INT8, "output"));
  if (bias) GRUWB_RETURN_IF_ERROR(expect_type(bias, TensorType::INT32, "bias"));
  TensorQuantization qx, qf, qt, qs, qo;
  GRUWB_RETURN_IF_ERROR(expect_quantized(input, "input", &qx));
  GRUWB_RETURN_IF_ERROR(expect_quantized(feature, "weights_feature", &qf));
  GRUWB_RETURN_IF_ERROR(expect_quantized(time, "weights_time", &qt));
  GRUWB_RETURN_IF_ERROR(expect_quantized(state, "state", &qs));
  GRUWB_RETURN_IF_ERROR(expect_quantized(output, "output", &qo));
  if (qs.zero_point != 0) {
    return Status::error(StatusCode::kUnsupported,
                         "int16 state '%s' has zero point %d (TFLite's "
                         "is symmetric)",
                         state->name, static_cast<int>(qs.zero_point));
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(IntegerSvdf), &memory));
  IntegerSvdf* data = new (memory) IntegerSvdf();
  // TFLite forms both scales in float and only then widens them.
  data->feature = quantize_multiplier(static_cast<double>(qx.scale * qf.scale / qs.scale));
  data->output = quantize_multiplier(static_cast<double>(qs.scale * qt.scale / qo.scale));
  data->input_zero_point = qx.zero_point;
  data->output_zero_point = qo.zero_point;
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(sizeof(int32_t) * static_cast<size_t>(l.filters),
                                            &data->filter_sums_slot));
  ctx.set_user_data(data);
  return Status();
}

Status prepare(OpContext& ctx) {
  // The bias (input 3) may be omitted, the others not.
  if (ctx.input_count() != 5) {
    return Status::error(StatusCode::kInvalidModel, "has %d inputs, expected 5", ctx.input_count());
  }
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(kInput);
  const Tensor* feature = ctx.input(kWeightsFeature);
  const Tensor* time = ctx.input(kWeightsTime);
  const Tensor* bias = ctx.input(kBias);
  const Tensor* state = ctx.input(kState);
  if (!input || !feature || !time || !state) {
    return Status::error(StatusCode::kInvalidModel,
                         "input, weights_feature, weights_time and state (inputs 0, 1, 2, 4) are "
                         "required");
  }
  if (ctx.training()) return Status::error(StatusCode::kUnsupported, "training through SVDF");
  const auto* options = ctx.op().options<fb::SVDFOptions>();
  if (!options) return Status::error(StatusCode::kInvalidModel, "SVDFOptions are missing");
  if (input->shape.rank != 2 || feature->shape.rank != 2 || time->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "input '%s' %s, weights_feature '%s' %s and weights_time '%s' %s must be "
                         "2-D",
                         input->name, ShapeText(input->shape).text, feature->name,
                         ShapeText(feature->shape).text, time->name, ShapeText(time->shape).text);
  }
  const SvdfLayout l = layout_of(ctx);
  if (l.rank < 1 || l.filters % l.rank != 0) {
    return Status::error(StatusCode::kInvalidModel,
                         "rank %d does not divide the %d filters of weights_feature '%s'",
                         static_cast<int>(l.rank), static_cast<int>(l.filters), feature->name);
  }
  if (feature->shape.dims[1] != l.inputs || time->shape.dims[0] != l.filters || l.memory < 1) {
    return Status::error(StatusCode::kInvalidModel,
                         "weights_feature '%s' %s and weights_time '%s' %s do not fit input '%s' "
                         "%s ([F, I] and [F, M] expected)",
                         feature->name, ShapeText(feature->shape).text, time->name,
                         ShapeText(time->shape).text, input->name, ShapeText(input->shape).text);
  }
  const int64_t state_size = static_cast<int64_t>(l.filters) * l.memory;
  if (state->kind != TensorKind::kVariable ||
      state->elements() != static_cast<int64_t>(l.batches) * state_size) {
    return Status::error(StatusCode::kInvalidModel,
                         "state '%s' %s must be a variable tensor of %d x %lld values", state->name,
                         ShapeText(state->shape).text, static_cast<int>(l.batches),
                         static_cast<long long>(state_size));
  }
  if (bias && bias->elements() != l.units) {
    return Status::error(StatusCode::kInvalidModel, "bias '%s' has %lld values, expected %d",
                         bias->name, static_cast<long long>(bias->elements()),
                         static_cast<int>(l.units));
  }
  Tensor* output = ctx.output(0);
  set_output_shape(output, make_shape({l.batches, l.units}));
  if (GRUWB_INTEGER_FORM(SVDF) && input->type == TensorType::INT8) return prepare_integer(ctx, l);
  GRUWB_RETURN_IF_ERROR(expect_float(input, "input"));
  GRUWB_RETURN_IF_ERROR(expect_float(feature, "weights_feature"));
  GRUWB_RETURN_IF_ERROR(expect_float(time, "weights_time"));
  GRUWB_RETURN_IF_ERROR(expect_float(state, "state"));
  if (bias) GRUWB_RETURN_IF_ERROR(expect_float(bias, "bias"));
  GRUWB_RETURN_IF_ERROR(check_activation(options->fused_activation_function()));
  output->type = TensorType::FLOAT32;
  int slot = -1;  // float [F]: each filter's time sum
  GRUWB_RETURN_IF_ERROR(ctx.request_scratch(sizeof(float) * static_cast<size_t>(l.filters), &slot));
  ctx.set_user_data(reinterpret_cast<void*>(static_cast<intptr_t>(slot)));
  return Status();
}

// Each filter's memory one step older; the newest slot is rewritten next.
template <typename T>
void shift_memory(T* state, int64_t rows, int32_t memory) {
  for (int64_t r = 0; r < rows; ++r) {
    T* row = state + r * memory;
    memmove(row, row + 1, sizeof(T) * static_cast<size_t>(memory - 1));
  }
}

Status eval_float(OpContext& ctx, const SvdfLayout& l) {
  const float* x = ctx.input(kInput)->f32();
  const float* wf = ctx.input(kWeightsFeature)->f32();
  const float* wt = ctx.input(kWeightsTime)->f32();
  const Tensor* bias = ctx.input(kBias);
  float* state = ctx.input(kState)->f32();
  float* y = ctx.output(0)->f32();
  float* sums = static_cast<float*>(
      ctx.scratch(static_cast<int>(reinterpret_cast<intptr_t>(ctx.user_data()))));
  shift_memory(state, static_cast<int64_t>(l.batches) * l.filters, l.memory);
  for (int32_t b = 0; b < l.batches; ++b) {
    const float* xb = x + static_cast<int64_t>(b) * l.inputs;
    float* sb = state + static_cast<int64_t>(b) * l.filters * l.memory;
    for (int32_t f = 0; f < l.filters; ++f) {
      const float* row = wf + static_cast<int64_t>(f) * l.inputs;
      float acc = 0.f;
      for (int32_t i = 0; i < l.inputs; ++i) acc += row[i] * xb[i];
      float* memory = sb + static_cast<int64_t>(f) * l.memory;
      memory[l.memory - 1] = acc;
      const float* w = wt + static_cast<int64_t>(f) * l.memory;
      float sum = 0.f;
      for (int32_t m = 0; m < l.memory; ++m) sum += w[m] * memory[m];
      sums[f] = sum;
    }
    float* yb = y + static_cast<int64_t>(b) * l.units;
    for (int32_t u = 0; u < l.units; ++u) {
      float v = bias ? bias->f32()[u] : 0.f;
      for (int32_t r = 0; r < l.rank; ++r) v += sums[u * l.rank + r];
      yb[u] = v;
    }
  }
  apply_activation(ctx.op().options<fb::SVDFOptions>()->fused_activation_function(), y,
                   static_cast<int64_t>(l.batches) * l.units);
  return Status();
}

Status eval_integer(OpContext& ctx, const SvdfLayout& l) {
  const IntegerSvdf& d = *static_cast<const IntegerSvdf*>(ctx.user_data());
  const int8_t* x = reinterpret_cast<const int8_t*>(ctx.input(kInput)->data);
  const int8_t* wf = reinterpret_cast<const int8_t*>(ctx.input(kWeightsFeature)->data);
  const int16_t* wt = reinterpret_cast<const int16_t*>(ctx.input(kWeightsTime)->data);
  const Tensor* bias = ctx.input(kBias);
  int16_t* state = reinterpret_cast<int16_t*>(ctx.input(kState)->data);
  int8_t* y = reinterpret_cast<int8_t*>(ctx.output(0)->data);
  int32_t* sums = static_cast<int32_t*>(ctx.scratch(d.filter_sums_slot));
  shift_memory(state, static_cast<int64_t>(l.batches) * l.filters, l.memory);
  for (int32_t b = 0; b < l.batches; ++b) {
    const int8_t* xb = x + static_cast<int64_t>(b) * l.inputs;
    int16_t* sb = state + static_cast<int64_t>(b) * l.filters * l.memory;
    for (int32_t f = 0; f < l.filters; ++f) {
      const int8_t* row = wf + static_cast<int64_t>(f) * l.inputs;
      int32_t acc = 0;
      for (int32_t i = 0; i < l.inputs; ++i) {
        acc += static_cast<int32_t>(row[i]) * (static_cast<int32_t>(xb[i]) - d.input_zero_point);
      }
      acc = multiply_by_quantized_multiplier(acc, d.feature);
      int16_t* memory = sb + static_cast<int64_t>(f) * l.memory;
      memory[l.memory - 1] =
          static_cast<int16_t>(acc < -32768 ? -32768 : (acc > 32767 ? 32767 : acc));
      const int16_t* w = wt + static_cast<int64_t>(f) * l.memory;
      // TFLite accumulates in int32 and relies on it wrapping; uint32 wraps with defined behaviour.
      uint32_t sum = 0;
      for (int32_t m = 0; m < l.memory; ++m) {
        sum += static_cast<uint32_t>(static_cast<int32_t>(w[m]) * static_cast<int32_t>(memory[m]));
      }
      sums[f] = static_cast<int32_t>(sum);
    }
    int8_t* yb = y + static_cast<int64_t>(b) * l.units;
    for (int32_t u = 0; u < l.units; ++u) {
      uint32_t total = bias ? static_cast<uint32_t>(bias->i32()[u]) : 0;
      for (int32_t r = 0; r < l.rank; ++r) total += static_cast<uint32_t>(sums[u * l.rank + r]);
      int32_t v = multiply_by_quantized_multiplier(static_cast<int32_t>(total), d.output) +
                  d.output_zero_point;
      yb[u] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
    }
  }
  return Status();
}

Status eval(OpContext& ctx) {
  const SvdfLayout l = layout_of(ctx);
  if (GRUWB_INTEGER_FORM(SVDF) && ctx.input(kInput)->type == TensorType::INT8)
    return eval_integer(ctx, l);
  return eval_float(ctx, l);
}

// Per batch row: F x I for the features, F x M for the memory.
OpCost cost(const OpCostQuery& q) {
  if (!has_input(q.op, 1) || !has_input(q.op, 2)) return OpCost();
  const int64_t filters = input_dim(q.subgraph, q.op, 1, 0), in = input_dim(q.subgraph, q.op, 1, 1);
  const int64_t memory = input_dim(q.subgraph, q.op, 2, 1);
  const uint64_t batch = rows_of(q.subgraph, q.op, 0, in);
  if (batch == 0 || filters <= 0) return OpCost();
  return make_cost(batch * static_cast<uint64_t>(filters * (in + memory)),
                   "batch {} x filters {} x (I {} + memory {})",
                   {static_cast<int64_t>(batch), filters, in, memory});
}

}  // namespace

extern const KernelRegistration kSvdfKernel = {
    static_cast<int32_t>(BuiltinOperator::SVDF),
    nullptr,
    prepare,
    eval,
    /*backward=*/nullptr,
    cost,
    input_bits(1, 2, 3),
    /*dynamic_inputs=*/false,
    /*integer_activations=*/GRUWB_INTEGER_FORM(SVDF) != 0};

}  // namespace gruwb
