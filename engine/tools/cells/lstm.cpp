// The LSTM (Keras LSTMCell): gates i|f|c|o, two states h and c.
//   c' = f*c + i*act(g),  h' = o*act(c')
// Fused: UNIDIRECTIONAL_SEQUENCE_LSTM in Keras' 24-input form with 15 used inputs (what
// TFLite Micro accepts); its variable tensors hold h and c.

#include "engine/tools/cells/cell_pattern.h"
#include "engine/tools/cells/cell_support.h"

namespace gruwb::tools::cells {
namespace {

constexpr int kGates = 4;

bool two_biases(const CellConfig&) { return false; }

uint64_t step_macs(const CellConfig& c) { return gate_products_macs(c, kGates); }

// Keras' unit_forget_bias: the forget gate's bias starts at 1.
void initialize(const CellConfig& c, BiasInit bias_init, Rng& rng, CellWeights* out) {
  keras_weights(c, kGates, false, bias_init, rng, out);
  if (bias_init == BiasInit::kKeras) {
    for (int i = c.units; i < 2 * c.units; ++i) out->bias[static_cast<size_t>(i)] = 1.f;
  }
}

std::string check(const CellConfig&) { return ""; }

std::string describe(const CellConfig& c) { return describe_activation(c); }

const char* fused_op(const CellConfig&, ModelFormat, bool) {
  return "UNIDIRECTIONAL_SEQUENCE_LSTM";
}

std::string fused_problem(const FusedCell& f) {
  if (f.config.gate_activation != "sigmoid") {
    return "unsupported activation " + f.config.gate_activation + "/" + f.config.activation;
  }
  return per_gate_scale_problem(f, "LSTM");
}

bool fused_takes_state(const CellConfig&, ModelFormat, bool) { return false; }
bool fused_needs_time_major(const CellConfig&, ModelFormat, bool) { return false; }

// cell_clip 0: Keras does not clip. No CIFG, peephole, projection or layer norm (those 9
// inputs are -1); variable states 18 (h) and 19 (c).
std::string emit_fused(GraphWriter& g, const FusedCell& f, FusedPlan* plan) {
  const int H = f.config.units, F = f.config.features, B = f.batch;
  const CellWeights& w = *f.weights;
  const std::string p = "lstm/";
  const int sequence = sequence_output(g, f, plan, p);
  const char* gate[4] = {"input", "forget", "cell", "output"};
  std::vector<int32_t> inputs(24, -1);
  inputs[0] = plan->input;
  for (int i = 0; i < 4; ++i) {
    inputs[static_cast<size_t>(1 + i)] =
        g.weight(p + gate[i] + "_kernel", {H, F}, rows(w.kernel, F, i * H, H),
                 hybrid_scales(f, w.kernel_scales, i * H, H));
    inputs[static_cast<size_t>(5 + i)] =
        g.weight(p + gate[i] + "_recurrent_kernel", {H, H}, rows(w.recurrent_kernel, H, i * H, H),
                 hybrid_scales(f, w.recurrent_kernel_scales, i * H, H));
    inputs[static_cast<size_t>(12 + i)] =
        g.constant(p + gate[i] + "_bias", {H}, rows(w.bias, 1, i * H, H));
  }
  inputs[18] = g.variable(p + "output_state", {B, H});
  inputs[19] = plan->cell_state = g.variable(p + "cell_state", {B, H});
  fb::UnidirectionalSequenceLSTMOptionsT options;
  options.fused_activation_function = fused_activation(f.config.activation);
  options.cell_clip = 0.f;
  options.proj_clip = 0.f;
  options.time_major = plan->time_major;
  options.asymmetric_quantize_inputs = f.hybrid && f.hybrid_inputs == "asymmetric";
  g.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, {sequence}, options);
  fused_last_step(g, f, plan, sequence, p);
  return "UNIDIRECTIONAL_SEQUENCE_LSTM";
}

// Tensors: kernel, bias, recurrent kernel (whole_constants).
StepConstants add_constants(GraphWriter& g, const CellConfig& c, const CellWeights& w,
                            const std::string& p) {
  return whole_constants(g, c, w, kGates, p);
}

CellState step(GraphWriter& g, const CellConfig&, const StepConstants& k, int x, CellState in,
               const std::string& p) {
  const std::vector<int>& t = k.tensors;
  int pre = binary(g, BuiltinOperator::ADD, fully_connected(g, x, t[0], t[1], p + "x_gates"),
                   fully_connected(g, in.h, t[2], -1, p + "h_gates"), p + "gates");
  std::vector<int> parts = split(g, pre, 4, p + "gates_split");
  int i = unary(g, BuiltinOperator::LOGISTIC, parts[0], p + "i");
  int f = unary(g, BuiltinOperator::LOGISTIC, parts[1], p + "f");
  int cell = unary(g, BuiltinOperator::TANH, parts[2], p + "g");
  int o = unary(g, BuiltinOperator::LOGISTIC, parts[3], p + "o");
  int c = binary(g, BuiltinOperator::ADD, binary(g, BuiltinOperator::MUL, f, in.c, p + "f_c"),
                 binary(g, BuiltinOperator::MUL, i, cell, p + "i_g"), p + "c");
  int h =
      binary(g, BuiltinOperator::MUL, o, unary(g, BuiltinOperator::TANH, c, p + "tanh_c"), p + "h");
  return {h, c};
}

bool claims(const Graph& g, int h_out) { return g.produced_by(h_out, Op::MUL) >= 0; }

bool match_lstm(const Graph& g, Matcher& m, int h_out, CellMatch* out) {
  int top = g.produced_by(h_out, Op::MUL);
  if (top < 0 || g.activation(top) != 0) return m.fail("h' is not a MUL");
  for (int order = 0; order < 2; ++order) {
    const int o_t = g.op(top).inputs[static_cast<size_t>(order)];
    const int tc = g.op(top).inputs[static_cast<size_t>(1 - order)];
    // The cell activation: TANH, or RELU (Keras activation='relu'), the same for g and c'.
    Op act = Op::TANH;
    int tanh_c = g.produced_by(tc, Op::TANH);
    if (tanh_c < 0 && (tanh_c = g.produced_by(tc, Op::RELU)) >= 0) act = Op::RELU;
    if (tanh_c < 0) continue;
    const int c_out = g.op(tanh_c).inputs[0];
    const int add = g.produced_by(c_out, Op::ADD);
    if (add < 0 || g.activation(add) != 0) return m.fail("LSTM c' is not an ADD");
    int f_t = -1, c_in = -1, i_t = -1, g_t = -1, f_mul = -1, i_mul = -1;
    int muls[2];
    for (int s = 0; s < 2; ++s) {
      muls[s] = g.produced_by(g.op(add).inputs[static_cast<size_t>(s)], Op::MUL);
      if (muls[s] < 0) return m.fail("LSTM c' terms are not products");
    }
    // i * tanh(g) is the product of a LOGISTIC and a TANH; the other is f * c.
    for (int s = 0; s < 2 && i_mul < 0; ++s) {
      for (int k = 0; k < 2; ++k) {
        const int a = g.op(muls[s]).inputs[static_cast<size_t>(k)];
        const int b = g.op(muls[s]).inputs[static_cast<size_t>(1 - k)];
        if (g.produced_by(a, Op::LOGISTIC) >= 0 && g.produced_by(b, act) >= 0) {
          i_t = a, g_t = b, i_mul = muls[s], f_mul = muls[1 - s];
          break;
        }
      }
    }
    if (i_mul < 0) return m.fail("LSTM c' is not f*c + i*act(g)");
    for (int k = 0; k < 2; ++k) {
      const int a = g.op(f_mul).inputs[static_cast<size_t>(k)];
      if (g.produced_by(a, Op::LOGISTIC) >= 0) {
        f_t = a;
        c_in = g.op(f_mul).inputs[static_cast<size_t>(1 - k)];
      }
    }
    if (f_t < 0) return m.fail("LSTM forget gate is not LOGISTIC");
    std::string kind;
    Affine pre[4];
    const int gates[4] = {i_t, f_t, -1, o_t};
    for (int k : {0, 1, 3}) {
      if (!m.gate(gates[k], &kind, &pre[k])) return false;
      if (kind != "sigmoid") return m.fail("LSTM gates are not sigmoid (unsupported activation)");
    }
    const int g_op = g.produced_by(g_t, act);
    if (!m.affine(g.op(g_op).inputs[0], &pre[2])) return false;
    const char* names[4] = {"input gate", "forget gate", "cell candidate", "output gate"};
    Matcher::Parts p[4];
    int h_in = -1;
    for (int k = 0; k < 4; ++k) {
      if (!m.parts(pre[k], h_in, &p[k], names[k])) return false;
      h_in = p[k].h_source;
    }
    CellMatch c;
    c.activation = act == Op::RELU ? "relu" : "tanh";
    c.h_in = h_in;
    c.c_in = c_in;
    c.c_out = c_out;
    c.units = g.last_dim(h_out);
    const int H = c.units;
    // x: the source of the input-side term
    for (const Term& t : pre[0].terms) {
      if (m.is_x_(t.source)) c.x = t.source;
    }
    c.features = g.last_dim(c.x);
    c.weights.bias.assign(static_cast<size_t>(4 * H), 0.f);
    std::vector<float> unused(static_cast<size_t>(4 * H), 0.f);
    for (int k = 0; k < 4; ++k) {
      if (!block_ok(g, p[k].x_weight, p[k].x_row, H, c.features) ||
          !block_ok(g, p[k].h_weight, p[k].h_row, H, H)) {
        return m.fail("LSTM weight blocks do not have the state's " + std::to_string(H) + " units");
      }
      append_rows(g, p[k].x_weight, p[k].x_row, H, &c.weights.kernel, &c.weights.kernel_scales);
      append_rows(g, p[k].h_weight, p[k].h_row, H, &c.weights.recurrent_kernel,
                  &c.weights.recurrent_kernel_scales);
      add_biases(g, p[k].biases, H, h_in, false, &c.weights.bias, &unused,
                 static_cast<size_t>(k * H));
    }
    for (size_t i = 0; i < unused.size(); ++i) c.weights.bias[i] += unused[i];
    m.ops.insert({top, tanh_c, add, f_mul, i_mul, g_op});
    c.ops = m.ops;
    *out = c;
    return true;
  }
  return m.fail("h' is not o * act(c')");
}

}  // namespace

const CellDescriptor& lstm_cell() {
  static const CellDescriptor d = {"lstm",
                                   "LSTM",
                                   "lstm",
                                   "Keras LSTM",
                                   kGates,
                                   /*bias_blocks=*/kGates,
                                   /*scalars=*/0,
                                   2,
                                   /*has_reset_after=*/false,
                                   /*has_legacy_body=*/false,
                                   two_biases,
                                   step_macs,
                                   initialize,
                                   check,
                                   describe,
                                   fused_op,
                                   fused_problem,
                                   emit_fused,
                                   fused_takes_state,
                                   fused_needs_time_major,
                                   /*fused_keeps_state=*/true,
                                   add_constants,
                                   step,
                                   claims,
                                   match_lstm};
  return d;
}

}  // namespace gruwb::tools::cells
