// UNIDIRECTIONAL_SEQUENCE_LSTM, float compute, TFLite's 20/24-input layout
// (shared/research/tflite-format.md §2.1):
//    0 x [B,T,I] ([T,B,I] with time_major)
//  1-4 input-to-{input,forget,cell,output} weights [H,I] (1 omitted = CIFG)
//  5-8 recurrent-to-{input,forget,cell,output} weights [H,O] (5 omitted = CIFG)
// 9-11 peepholes cell-to-{input,forget,output} [H] (optional, all or none)
// 12-15 gate biases i,f,c,o [H] (12 omitted = CIFG)
//   16 projection weights [P,H] (optional; O = P, else O = H), 17 its bias [P]
//   18 output (activation) state [B,O], 19 cell state [B,H]: variable tensors
//      that carry the state to the next invoke (reset_variables() zeroes them)
// 20-23 layer norm coefficients i,f,c,o [H] (optional)
// Gates i,f,o use sigmoid, the cell gate and the cell output the fused
// activation (TANH in Keras files). As in TFLite: peepholes of i and f see the
// old cell state, o the new one; with layer norm the bias is added after the
// normalization; the cell state is clipped to cell_clip and the projection to
// proj_clip when those are > 0. CIFG: i = 1 - f.
// Weights are float or INT8 with per-tensor/per-row scales (hybrid models),
// dequantized on the fly: unlike TFLite's hybrid path the input is not
// quantized, so results match float maths rather than TFLite's int8 products.

#include <cmath>
#include <cstdio>
#include <cstring>

#include "engine/kernels/recurrent_util.h"

namespace gruwb {
namespace {

enum Input {
  kX = 0,
  kInputWeights = 1,      // + gate
  kRecurrentWeights = 5,  // + gate
  kCellToInput = 9,
  kCellToForget = 10,
  kCellToOutput = 11,
  kGateBias = 12,  // + gate
  kProjectionWeights = 16,
  kProjectionBias = 17,
  kOutputState = 18,
  kCellState = 19,
  kLayerNorm = 20,  // + gate
};
enum Gate { kInputGate = 0, kForgetGate, kCellGate, kOutputGate };
const char* const kGateNames[] = {"input", "forget", "cell", "output"};

struct LstmShape {
  SequenceLayout layout;
  int32_t input_size;
  int32_t units;   // H: cells
  int32_t output;  // O: P with projection, else H
  bool cifg;
  bool peephole;
  bool layer_norm;
};

// Pure reading of the shape and the optional parts; prepare checks them.
LstmShape lstm_shape(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  LstmShape s;
  const Tensor* x = ctx.input(kX);
  sequence_layout(x, options && options->time_major(), &s.layout);
  s.input_size = x->shape.dims[2];
  s.units = ctx.input(kInputWeights + kForgetGate)->shape.dims[0];
  s.output = ctx.input(kRecurrentWeights + kForgetGate)->shape.dims[1];
  s.cifg = ctx.input(kInputWeights + kInputGate) == nullptr;
  s.peephole = ctx.input(kCellToOutput) != nullptr;
  s.layer_norm = ctx.input(kLayerNorm + kOutputGate) != nullptr;
  return s;
}

Status check_optional_vector(OpContext& ctx, int index, bool wanted, int32_t size,
                             const char* role) {
  const Tensor* t = ctx.input(index);
  if (!wanted) {
    if (t) {
      return Status::error(StatusCode::kInvalidModel, "input %d (%s) '%s' must be omitted here",
                           index, role, t->name);
    }
    return Status();
  }
  if (!t) return Status::error(StatusCode::kInvalidModel, "input %d (%s) is missing", index, role);
  return check_float_vector(t, size, role);
}

Status check_state(const Tensor* state, int index, const LstmShape& s, int32_t width,
                   const char* role) {
  if (!state)
    return Status::error(StatusCode::kInvalidModel, "input %d (%s) is missing", index, role);
  GRUWB_RETURN_IF_ERROR(expect_float(state, role));
  if (state->kind != TensorKind::kVariable) {
    return Status::error(StatusCode::kInvalidModel, "%s '%s' (input %d) must be a variable tensor",
                         role, state->name, index);
  }
  if (state->elements() != static_cast<int64_t>(s.layout.batch) * width) {
    char expected[32];
    snprintf(expected, sizeof expected, "[%d,%d]", static_cast<int>(s.layout.batch),
             static_cast<int>(width));
    return shape_error(state, role, expected);
  }
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_input_count(ctx, 20, 24));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* x = ctx.input(kX);
  GRUWB_RETURN_IF_ERROR(expect_float(x, "input"));
  if (x->shape.rank != 3) return shape_error(x, "input", "rank 3 ([batch,time,features])");
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  GRUWB_RETURN_IF_ERROR(check_activation(activation));
  if (options && options->diagonal_recurrent_tensors()) {
    return Status::error(StatusCode::kUnsupported, "diagonal recurrent tensors are not supported");
  }
  if (options && (options->cell_clip() < 0.f || options->proj_clip() < 0.f)) {
    return Status::error(StatusCode::kInvalidModel, "cell_clip %g / proj_clip %g must be >= 0",
                         static_cast<double>(options->cell_clip()),
                         static_cast<double>(options->proj_clip()));
  }
  const Tensor* forget = ctx.input(kInputWeights + kForgetGate);
  const Tensor* recurrent_forget = ctx.input(kRecurrentWeights + kForgetGate);
  if (!forget || forget->shape.rank != 2 || !recurrent_forget ||
      recurrent_forget->shape.rank != 2) {
    return Status::error(StatusCode::kInvalidModel,
                         "inputs 2 and 6 (forget gate weights) must be matrices");
  }
  LstmShape s = lstm_shape(ctx);
  char role[64];
  for (int g = 0; g < 4; ++g) {
    bool present = !(s.cifg && g == kInputGate);
    if (!present) {
      if (ctx.input(kRecurrentWeights + g)) {
        return Status::error(StatusCode::kInvalidModel,
                             "CIFG LSTM (input 1 omitted) must omit input 5 too");
      }
      continue;
    }
    snprintf(role, sizeof role, "input-to-%s weights (input %d)", kGateNames[g], kInputWeights + g);
    GRUWB_RETURN_IF_ERROR(
        check_dense_weights(ctx.input(kInputWeights + g), s.units, s.input_size, role));
    snprintf(role, sizeof role, "recurrent-to-%s weights (input %d)", kGateNames[g],
             kRecurrentWeights + g);
    GRUWB_RETURN_IF_ERROR(
        check_dense_weights(ctx.input(kRecurrentWeights + g), s.units, s.output, role));
  }
  bool any_peephole = ctx.input(kCellToInput) || ctx.input(kCellToForget) || s.peephole;
  GRUWB_RETURN_IF_ERROR(check_optional_vector(ctx, kCellToInput, any_peephole && !s.cifg, s.units,
                                              "cell-to-input peephole"));
  GRUWB_RETURN_IF_ERROR(
      check_optional_vector(ctx, kCellToForget, any_peephole, s.units, "cell-to-forget peephole"));
  GRUWB_RETURN_IF_ERROR(
      check_optional_vector(ctx, kCellToOutput, any_peephole, s.units, "cell-to-output peephole"));
  bool any_layer_norm = false;
  for (int g = 0; g < 4; ++g) any_layer_norm = any_layer_norm || ctx.input(kLayerNorm + g);
  for (int g = 0; g < 4; ++g) {
    bool present = !(s.cifg && g == kInputGate);
    snprintf(role, sizeof role, "%s gate bias", kGateNames[g]);
    GRUWB_RETURN_IF_ERROR(check_optional_vector(ctx, kGateBias + g, present, s.units, role));
    snprintf(role, sizeof role, "%s gate layer norm", kGateNames[g]);
    GRUWB_RETURN_IF_ERROR(
        check_optional_vector(ctx, kLayerNorm + g, present && any_layer_norm, s.units, role));
  }
  const Tensor* projection = ctx.input(kProjectionWeights);
  if (projection) {
    if (projection->shape.rank != 2) return shape_error(projection, "projection weights", "[P,H]");
    GRUWB_RETURN_IF_ERROR(
        check_dense_weights(projection, s.output, s.units, "projection weights (input 16)"));
  } else if (s.output != s.units) {
    return shape_error(recurrent_forget, "recurrent-to-forget weights (input 6)",
                       "[H,H] without projection");
  }
  GRUWB_RETURN_IF_ERROR(check_optional_vector(
      ctx, kProjectionBias, projection && ctx.input(kProjectionBias), s.output, "projection bias"));
  GRUWB_RETURN_IF_ERROR(
      check_state(ctx.input(kOutputState), kOutputState, s, s.output, "output state"));
  GRUWB_RETURN_IF_ERROR(check_state(ctx.input(kCellState), kCellState, s, s.units, "cell state"));
  Tensor* output = ctx.output(0);
  output->type = TensorType::FLOAT32;
  set_output_shape(output, sequence_shape(s.layout, s.output));
  int slot = 0;
  // Four gate vectors and the cell output before projection, for one step.
  return ctx.request_scratch(sizeof(float) * 5 * static_cast<size_t>(s.units), &slot);
}

// TFLite's layer norm: zero mean, unit variance (epsilon 1e-8), then scale.
void layer_norm(const float* coefficients, float* gate, int32_t n) {
  float sum = 0.f;
  for (int32_t i = 0; i < n; ++i) sum += gate[i];
  const float mean = sum / static_cast<float>(n);
  float squares = 0.f;
  for (int32_t i = 0; i < n; ++i) squares += (gate[i] - mean) * (gate[i] - mean);
  const float inv_stddev = 1.f / std::sqrt(squares / static_cast<float>(n) + 1e-8f);
  for (int32_t i = 0; i < n; ++i) gate[i] = (gate[i] - mean) * inv_stddev * coefficients[i];
}

void clip(float* x, int32_t n, float limit) {
  if (limit <= 0.f) return;
  for (int32_t i = 0; i < n; ++i) x[i] = x[i] > limit ? limit : (x[i] < -limit ? -limit : x[i]);
}

struct LstmWeights {
  DenseWeights input[4];
  DenseWeights recurrent[4];
  const float* bias[4];
  const float* layer_norm[4];
  const float* peephole[4];  // cell gate: none
  DenseWeights projection;
  const float* projection_bias;
};

Status eval(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::UnidirectionalSequenceLSTMOptions>();
  const Activation activation = options ? options->fused_activation_function() : Activation::NONE;
  const float cell_clip = options ? options->cell_clip() : 0.f;
  const float proj_clip = options ? options->proj_clip() : 0.f;
  const LstmShape s = lstm_shape(ctx);
  LstmWeights w = {};
  for (int g = 0; g < 4; ++g) {
    w.input[g] = dense_weights(ctx.input(kInputWeights + g));
    w.recurrent[g] = dense_weights(ctx.input(kRecurrentWeights + g));
    const Tensor* bias = ctx.input(kGateBias + g);
    w.bias[g] = bias ? bias->f32() : nullptr;
    const Tensor* norm = ctx.input(kLayerNorm + g);
    w.layer_norm[g] = norm ? norm->f32() : nullptr;
  }
  const int peephole_index[4] = {kCellToInput, kCellToForget, -1, kCellToOutput};
  for (int g = 0; g < 4; ++g) {
    const Tensor* p = peephole_index[g] >= 0 ? ctx.input(peephole_index[g]) : nullptr;
    w.peephole[g] = p ? p->f32() : nullptr;
  }
  w.projection = dense_weights(ctx.input(kProjectionWeights));
  const Tensor* projection_bias = ctx.input(kProjectionBias);
  w.projection_bias = projection_bias ? projection_bias->f32() : nullptr;

  const int32_t H = s.units;
  const int32_t O = s.output;
  float* gates[4];
  float* scratch = static_cast<float*>(ctx.scratch(0));
  for (int g = 0; g < 4; ++g) gates[g] = scratch + g * H;
  float* cell_output = scratch + 4 * H;
  const float* x = ctx.input(kX)->f32();
  float* out = ctx.output(0)->f32();
  float* output_state = ctx.input(kOutputState)->f32();
  float* cell_state = ctx.input(kCellState)->f32();

  for (int32_t b = 0; b < s.layout.batch; ++b) {
    float* h = output_state + static_cast<int64_t>(b) * O;
    float* c = cell_state + static_cast<int64_t>(b) * H;
    for (int32_t t = 0; t < s.layout.time; ++t) {
      const float* xt = x + s.layout.offset(b, t, s.input_size);
      for (int g = s.cifg ? 1 : 0; g < 4; ++g) {
        // With layer norm the bias comes after the normalization.
        matvec_assign(w.input[g], 0, H, xt, s.layer_norm ? nullptr : w.bias[g], gates[g]);
        matvec_accumulate(w.recurrent[g], 0, H, h, gates[g]);
      }
      // Non-linearity of one gate; `peephole_cell` is the cell state its
      // peephole sees (old for i and f, new for o).
      auto finish_gate = [&](int g, const float* peephole_cell, bool sigmoid) {
        float* gate = gates[g];
        if (w.peephole[g]) {
          for (int32_t i = 0; i < H; ++i) gate[i] += w.peephole[g][i] * peephole_cell[i];
        }
        if (s.layer_norm) {
          layer_norm(w.layer_norm[g], gate, H);
          for (int32_t i = 0; i < H; ++i) gate[i] += w.bias[g][i];
        }
        if (sigmoid) {
          vector_sigmoid(gate, H);
        } else {
          vector_activation(activation, gate, H);
        }
      };
      if (!s.cifg) finish_gate(kInputGate, c, true);
      finish_gate(kForgetGate, c, true);
      finish_gate(kCellGate, nullptr, false);
      const float* i_gate = gates[kInputGate];
      const float* f_gate = gates[kForgetGate];
      const float* g_gate = gates[kCellGate];
      for (int32_t i = 0; i < H; ++i) {
        float input_gate = s.cifg ? 1.f - f_gate[i] : i_gate[i];
        c[i] = f_gate[i] * c[i] + input_gate * g_gate[i];
      }
      clip(c, H, cell_clip);
      finish_gate(kOutputGate, c, true);
      memcpy(cell_output, c, sizeof(float) * static_cast<size_t>(H));
      vector_activation(activation, cell_output, H);
      for (int32_t i = 0; i < H; ++i) cell_output[i] *= gates[kOutputGate][i];
      float* yt = out + s.layout.offset(b, t, O);
      if (w.projection.present()) {
        matvec_assign(w.projection, 0, O, cell_output, w.projection_bias, yt);
        clip(yt, O, proj_clip);
      } else {
        memcpy(yt, cell_output, sizeof(float) * static_cast<size_t>(H));
      }
      memcpy(h, yt, sizeof(float) * static_cast<size_t>(O));
    }
  }
  return Status();
}

}  // namespace

extern const KernelRegistration kUnidirectionalSequenceLstmKernel = {
    static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM), nullptr, prepare, eval};

}  // namespace gruwb
