// The minimal gated unit (Zhou et al. 2016; README.md here) as the host tools know it: gate
// blocks f|h, one state; a GRU whose forget gate f is both its reset and its update gate.
//   f = sigmoid(W_f x + U_f h + b_f),  h~ = tanh(W_h x + U_h (f h) + b_h)
//   h' = (1 - f) h + f h~
// Fused: the GRUWB_MGU custom op. One step is written as TensorFlow's converter lowers
// keras.layers.RNN(MGU cell) written like Keras' GRUCell (reset_after=False): one FC of x for
// both blocks, SPLIT, the gate's FC of h, the candidate's FC of f*h.

#include "plugins/cells/mgu/host/mgu_descriptor.h"

#include "engine/tools/cells/cell_pattern.h"
#include "engine/tools/cells/cell_support.h"

namespace gruwb::plugins {
namespace {

using namespace tools;
using namespace tools::cells;

constexpr int kGates = 2;  // f | h

// ---- Facts ----------------------------------------------------------------------------

bool two_biases(const CellConfig&) { return false; }

uint64_t step_macs(const CellConfig& c) { return gate_products_macs(c, kGates); }

void initialize(const CellConfig& c, BiasInit bias_init, Rng& rng, CellWeights* out) {
  keras_weights(c, kGates, false, bias_init, rng, out);
}

std::string check(const CellConfig&) { return ""; }

std::string describe(const CellConfig& c) { return describe_activation(c); }

// ---- Fused op -------------------------------------------------------------------------

const char* fused_op(const CellConfig&, ModelFormat, bool) { return "GRUWB_MGU"; }

std::string fused_problem(const FusedCell& f) {
  if (f.config.gate_activation != "sigmoid" || f.config.activation != "tanh") {
    return "GRUWB_MGU is sigmoid/tanh only (the paper's cell), not " + f.config.gate_activation +
           "/" + f.config.activation;
  }
  if (f.hybrid) return "GRUWB_MGU has no hybrid (int8 weight) form";
  return "";
}

bool fused_takes_state(const CellConfig&, ModelFormat, bool) { return true; }
bool fused_needs_time_major(const CellConfig&, ModelFormat, bool) { return false; }

std::string emit_fused(GraphWriter& g, const FusedCell& f, FusedPlan* plan) {
  const int H = f.config.units, F = f.config.features;
  const CellWeights& w = *f.weights;
  const std::string p = "mgu/";
  const int kernel = g.constant(p + "kernel", {kGates * H, F}, w.kernel);
  const int recurrent = g.constant(p + "recurrent_kernel", {kGates * H, H}, w.recurrent_kernel);
  const int bias = g.constant(p + "bias", {kGates * H}, w.bias);
  const int out = fused_output(g, f, plan, p);
  g.custom_op("GRUWB_MGU", {plan->input, kernel, recurrent, bias, plan->initial_state}, {out},
              cell_op_options(plan->need_sequence, plan->time_major));
  fused_last_step(g, f, plan, out, p);
  return "GRUWB_MGU";
}

// ---- One step, as the converter writes it ----------------------------------------------

// Tensors: kernel [2H,F], bias [2H], the recurrent kernel's f rows and its h rows.
StepConstants add_constants(GraphWriter& g, const CellConfig& c, const CellWeights& w,
                            const std::string& p) {
  const int H = c.units;
  StepConstants k;
  k.tensors = {g.constant(p + "kernel", {kGates * H, c.features}, w.kernel),
               g.constant(p + "bias", {kGates * H}, w.bias),
               g.constant(p + "recurrent_kernel_f", {H, H}, rows(w.recurrent_kernel, H, 0, H)),
               g.constant(p + "recurrent_kernel_h", {H, H}, rows(w.recurrent_kernel, H, H, H))};
  return k;
}

CellState step(GraphWriter& g, const CellConfig&, const StepConstants& k, int x, CellState in,
               const std::string& p) {
  const std::vector<int>& t = k.tensors;
  const std::vector<int> xs =
      split(g, fully_connected(g, x, t[0], t[1], p + "x_gates"), kGates, p + "x_gates_split");
  const int f = unary(g, BuiltinOperator::LOGISTIC,
                      binary(g, BuiltinOperator::ADD, xs[0],
                             fully_connected(g, in.h, t[2], -1, p + "h_f"), p + "f_in"),
                      p + "f");
  const int f_h = binary(g, BuiltinOperator::MUL, f, in.h, p + "f_h");
  const int candidate =
      unary(g, BuiltinOperator::TANH,
            binary(g, BuiltinOperator::ADD, xs[1],
                   fully_connected(g, f_h, t[3], -1, p + "f_h_kernel"), p + "hh_in"),
            p + "hh");
  const int one_minus_f = binary(g, BuiltinOperator::SUB, g.scalar(1.f), f, p + "one_minus_f");
  const int keep = binary(g, BuiltinOperator::MUL, one_minus_f, in.h, p + "keep_h");
  const int take = binary(g, BuiltinOperator::MUL, f, candidate, p + "f_hh");
  return {binary(g, BuiltinOperator::ADD, keep, take, p + "h"), -1};
}

// ---- Matcher ---------------------------------------------------------------------------

bool claims(const Graph& g, int h_out) { return g.produced_by(h_out, Op::ADD) >= 0; }

// h' = MUL(SUB(1, f), h) + MUL(f, h~) in any operand order: f, h and h~.
bool find_update(const Graph& g, int h_out, int* f, int* h, int* candidate, std::set<int>* ops) {
  const int top = g.produced_by(h_out, Op::ADD);
  if (top < 0 || g.activation(top) != 0) return false;
  const auto& in = g.op(top).inputs;
  for (int order = 0; order < 2; ++order) {
    const int keep = g.produced_by(in[static_cast<size_t>(order)], Op::MUL);
    const int take = g.produced_by(in[static_cast<size_t>(1 - order)], Op::MUL);
    if (keep < 0 || take < 0) continue;
    for (int s = 0; s < 2; ++s) {
      const int sub = g.produced_by(g.op(keep).inputs[static_cast<size_t>(s)], Op::SUB);
      if (sub < 0 || !g.scalar_is(g.op(sub).inputs[0], 1.0)) continue;
      const int gate = g.op(sub).inputs[1];
      const auto& tin = g.op(take).inputs;
      if (tin[0] != gate && tin[1] != gate) continue;
      *f = gate;
      *h = g.op(keep).inputs[static_cast<size_t>(1 - s)];
      *candidate = other_input(g.op(take), gate);
      *ops = {top, keep, take, sub};
      return true;
    }
  }
  return false;
}

bool match_mgu(const Graph& g, Matcher& m, int h_out, CellMatch* out) {
  int f = -1, h_in = -1, candidate = -1;
  std::set<int> update_ops;
  if (!find_update(g, h_out, &f, &h_in, &candidate, &update_ops)) {
    return m.fail("h' is not (1-f)*h + f*candidate");
  }
  std::string activation;
  int act_op = g.produced_by(candidate, Op::TANH);
  if (act_op >= 0) {
    activation = "tanh";
  } else if ((act_op = g.produced_by(candidate, Op::RELU)) >= 0) {
    activation = "relu";
  } else {
    return m.fail("MGU candidate is not a TANH or RELU");
  }
  std::string gate_kind;
  Affine f_pre, c_pre;
  if (!m.gate(f, &gate_kind, &f_pre) || !m.affine(g.op(act_op).inputs[0], &c_pre)) return false;
  Matcher::Parts fp, cp;
  if (!m.parts(f_pre, h_in, &fp, "MGU gate f") || !m.parts(c_pre, -1, &cp, "MGU candidate")) {
    return false;
  }
  // The candidate's recurrent product reads f*h.
  const int f_h = g.produced_by(cp.h_source, Op::MUL);
  if (f_h < 0 || g.activation(f_h) != 0 ||
      !((g.op(f_h).inputs[0] == f && g.op(f_h).inputs[1] == h_in) ||
        (g.op(f_h).inputs[1] == f && g.op(f_h).inputs[0] == h_in))) {
    return m.fail("MGU candidate's recurrent product does not read f*h");
  }
  CellMatch c;
  c.h_in = h_in;
  c.units = g.last_dim(h_out);
  for (const Term& t : f_pre.terms) {
    if (m.is_x_(t.source)) c.x = t.source;
  }
  c.features = g.last_dim(c.x);
  const int H = c.units, F = c.features;
  if (!block_ok(g, fp.x_weight, fp.x_row, H, F) || !block_ok(g, cp.x_weight, cp.x_row, H, F) ||
      !block_ok(g, fp.h_weight, fp.h_row, H, H) || !block_ok(g, cp.h_weight, cp.h_row, H, H)) {
    return m.fail("MGU weight blocks do not have the state's " + std::to_string(H) + " units");
  }
  c.gate_activation = gate_kind;
  c.activation = activation;
  CellWeights& w = c.weights;
  append_rows(g, fp.x_weight, fp.x_row, H, &w.kernel, &w.kernel_scales);
  append_rows(g, cp.x_weight, cp.x_row, H, &w.kernel, &w.kernel_scales);
  append_rows(g, fp.h_weight, fp.h_row, H, &w.recurrent_kernel, &w.recurrent_kernel_scales);
  append_rows(g, cp.h_weight, cp.h_row, H, &w.recurrent_kernel, &w.recurrent_kernel_scales);
  // Every bias adds before its block's nonlinearity: one vector.
  w.bias.assign(static_cast<size_t>(kGates * H), 0.f);
  add_biases(g, fp.biases, H, h_in, false, &w.bias, &w.bias, 0);
  add_biases(g, cp.biases, H, h_in, false, &w.bias, &w.bias, static_cast<size_t>(H));
  m.ops.insert(update_ops.begin(), update_ops.end());
  m.ops.insert({act_op, f_h});
  c.ops = m.ops;
  *out = c;
  return true;
}

}  // namespace

const CellDescriptor& mgu_cell_descriptor() {
  static const CellDescriptor d = {"mgu",
                                   "MGU",
                                   "mgu",
                                   "minimal gated unit (Zhou et al. 2016)",
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
                                   /*fused_keeps_state=*/false,
                                   add_constants,
                                   step,
                                   claims,
                                   match_mgu};
  return d;
}

}  // namespace gruwb::plugins
