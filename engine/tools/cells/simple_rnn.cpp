// The SimpleRNN (Keras SimpleRNNCell): one gate block, one state.
//   h' = act(W x + U h + b), act tanh (default), relu or none
// Fused: UNIDIRECTIONAL_SEQUENCE_RNN; its variable tensor holds h.

#include "engine/tools/cells/cell_pattern.h"
#include "engine/tools/cells/cell_support.h"

namespace gruwb::tools::cells {
namespace {

constexpr int kGates = 1;

bool two_biases(const CellConfig&) { return false; }

uint64_t step_macs(const CellConfig& c) { return gate_products_macs(c, kGates); }

void initialize(const CellConfig& c, BiasInit bias_init, Rng& rng, CellWeights* out) {
  keras_weights(c, kGates, false, bias_init, rng, out);
}

std::string check(const CellConfig&) { return ""; }

std::string describe(const CellConfig& c) { return describe_activation(c); }

const char* fused_op(const CellConfig&, ModelFormat, bool) { return "UNIDIRECTIONAL_SEQUENCE_RNN"; }

std::string fused_problem(const FusedCell& f) {
  if (f.config.gate_activation != "sigmoid") {
    return "unsupported activation " + f.config.gate_activation + "/" + f.config.activation;
  }
  return per_gate_scale_problem(f, "RNN");
}

bool fused_takes_state(const CellConfig&, ModelFormat, bool) { return false; }
bool fused_needs_time_major(const CellConfig&, ModelFormat, bool) { return false; }

std::string emit_fused(GraphWriter& g, const FusedCell& f, FusedPlan* plan) {
  const int H = f.config.units, F = f.config.features, B = f.batch;
  const CellWeights& w = *f.weights;
  const std::string p = "simple_rnn/";
  const int sequence = sequence_output(g, f, plan, p);
  int wx = g.weight(p + "kernel", {H, F}, w.kernel, hybrid_scales(f, w.kernel_scales, 0, H));
  int wh = g.weight(p + "recurrent_kernel", {H, H}, w.recurrent_kernel,
                    hybrid_scales(f, w.recurrent_kernel_scales, 0, H));
  int b = g.constant(p + "bias", {H}, w.bias);
  int state = g.variable(p + "hidden_state", {B, H});
  fb::SequenceRNNOptionsT options;
  options.time_major = plan->time_major;
  options.asymmetric_quantize_inputs = f.hybrid && f.hybrid_inputs == "asymmetric";
  options.fused_activation_function = fused_activation(f.config.activation);
  g.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN, {plan->input, wx, wh, b, state}, {sequence},
       options);
  fused_last_step(g, f, plan, sequence, p);
  return "UNIDIRECTIONAL_SEQUENCE_RNN";
}

// Tensors: kernel, bias, recurrent kernel (whole_constants).
StepConstants add_constants(GraphWriter& g, const CellConfig& c, const CellWeights& w,
                            const std::string& p) {
  return whole_constants(g, c, w, kGates, p);
}

CellState step(GraphWriter& g, const CellConfig&, const StepConstants& k, int x, CellState in,
               const std::string& p) {
  const std::vector<int>& t = k.tensors;
  int pre = binary(g, BuiltinOperator::ADD, fully_connected(g, x, t[0], t[1], p + "x_w"),
                   fully_connected(g, in.h, t[2], -1, p + "h_w"), p + "pre");
  return {unary(g, BuiltinOperator::TANH, pre, p + "h"), -1};
}

// TANH or RELU on top, or (activation None) h' is the sum itself: an ADD that no product
// (a gated update's MUL) feeds.
bool claims(const Graph& g, int h_out) {
  const int p = g.producer(h_out);
  if (p < 0) return false;
  if (g.code(p) == Op::TANH || g.code(p) == Op::RELU) return true;
  if (g.code(p) != Op::ADD) return false;
  for (int32_t t : g.op(p).inputs) {
    if (g.produced_by(t, Op::MUL) >= 0) return false;
  }
  return true;
}

// h' = act(W x + U h + b) with act TANH, RELU or none (Keras activation=None).
bool match_rnn(const Graph& g, Matcher& m, int h_out, CellMatch* out) {
  int top = g.producer(h_out);
  std::string activation = "linear";
  if (top >= 0 && g.code(top) == Op::TANH) {
    activation = "tanh";
  } else if (top >= 0 && g.code(top) == Op::RELU) {
    activation = "relu";
  } else {
    top = -1;
  }
  Affine pre;
  if (!m.affine(top >= 0 ? g.op(top).inputs[0] : h_out, &pre)) return false;
  Matcher::Parts p;
  if (!m.parts(pre, -1, &p, "SimpleRNN")) return false;
  CellMatch c;
  c.activation = activation;
  c.h_in = p.h_source;
  c.units = g.last_dim(h_out);
  for (const Term& t : pre.terms) {
    if (m.is_x_(t.source)) c.x = t.source;
  }
  c.features = g.last_dim(c.x);
  if (!block_ok(g, p.x_weight, p.x_row, c.units, c.features) ||
      !block_ok(g, p.h_weight, p.h_row, c.units, c.units)) {
    return m.fail("SimpleRNN weights do not have the state's units");
  }
  append_rows(g, p.x_weight, p.x_row, c.units, &c.weights.kernel, &c.weights.kernel_scales);
  append_rows(g, p.h_weight, p.h_row, c.units, &c.weights.recurrent_kernel,
              &c.weights.recurrent_kernel_scales);
  c.weights.bias.assign(static_cast<size_t>(c.units), 0.f);
  std::vector<float> rec(static_cast<size_t>(c.units), 0.f);
  add_biases(g, p.biases, c.units, c.h_in, false, &c.weights.bias, &rec, 0);
  for (size_t i = 0; i < rec.size(); ++i) c.weights.bias[i] += rec[i];
  if (top >= 0) m.ops.insert(top);
  c.ops = m.ops;
  *out = c;
  return true;
}

}  // namespace

const CellDescriptor& simple_rnn_cell() {
  static const CellDescriptor d = {"rnn",
                                   "SimpleRNN",
                                   "simple_rnn",
                                   "Keras SimpleRNN",
                                   kGates,
                                   /*bias_blocks=*/kGates,
                                   /*scalars=*/0,
                                   1,
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
                                   match_rnn};
  return d;
}

}  // namespace gruwb::tools::cells
