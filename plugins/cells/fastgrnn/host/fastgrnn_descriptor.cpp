// FastGRNN (EdgeML's FastGRNNCell; README.md here) as the host tools know it: one gate block
// whose products W x + U h the gate and the candidate share, one state, and two trainable
// scalars zeta and nu (CellWeights::scalars, before their sigmoids, as EdgeML trains them).
//   pre = W x + U h,  z = sigmoid(pre + b_z),  h~ = tanh(pre + b_h)
//   h'  = (sigmoid(zeta) (1 - z) + sigmoid(nu)) h~ + z h
// Fused: the GRUWB_FASTGRNN custom op. One step is written as TensorFlow's converter lowers
// keras.layers.RNN(FastGRNN cell): the two products, their ADD, a bias ADD and LOGISTIC / TANH
// per branch, and the update with sigmoid(zeta) and sigmoid(nu) folded into constants.

#include "plugins/cells/fastgrnn/host/fastgrnn_descriptor.h"

#include <cmath>

#include "engine/tools/cells/cell_pattern.h"
#include "engine/tools/cells/cell_support.h"
#include "engine/tools/initializers.h"

namespace gruwb::plugins {
namespace {

using namespace tools;
using namespace tools::cells;

constexpr int kGates = 1;
constexpr int kBiasBlocks = 2;  // b_z | b_h
enum Scalar { kZeta = 0, kNu = 1, kScalars = 2 };
// EdgeML's FastGRNNCell initial values (zetaInit, nuInit) and biases (ones).
constexpr float kZetaInit = 1.f, kNuInit = -4.f, kBiasInit = 1.f;

float sigmoid(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double{x}))); }

// ---- Facts ----------------------------------------------------------------------------

bool two_biases(const CellConfig&) { return false; }

// W and U once per step: the gate and the candidate share them (the kernel's cost).
uint64_t step_macs(const CellConfig& c) { return gate_products_macs(c, kGates); }

// Keras' glorot-uniform W and orthogonal U; biases and scalars as EdgeML starts them (kKeras:
// both biases 1), zeta 1 and nu -4 in every case.
void initialize(const CellConfig& c, BiasInit bias_init, Rng& rng, CellWeights* out) {
  keras_weights(c, kGates, false, BiasInit::kZeros, rng, out);
  const int n = kBiasBlocks * c.units;
  switch (bias_init) {
    case BiasInit::kKeras: out->bias.assign(static_cast<size_t>(n), kBiasInit); break;
    case BiasInit::kZeros: out->bias.assign(static_cast<size_t>(n), 0.f); break;
    case BiasInit::kUniform: out->bias = uniform(rng, n, 0.1f); break;
  }
  out->scalars = {kZetaInit, kNuInit};
}

std::string check(const CellConfig&) { return ""; }

std::string describe(const CellConfig& c) { return describe_activation(c); }

// ---- Fused op -------------------------------------------------------------------------

const char* fused_op(const CellConfig&, ModelFormat, bool) { return "GRUWB_FASTGRNN"; }

std::string fused_problem(const FusedCell& f) {
  if (f.config.gate_activation != "sigmoid" ||
      (f.config.activation != "tanh" && f.config.activation != "relu")) {
    return "GRUWB_FASTGRNN has no " + f.config.gate_activation + "/" + f.config.activation +
           " form (gate sigmoid, update tanh or relu)";
  }
  if (f.hybrid) return "GRUWB_FASTGRNN has no hybrid (int8 weight) form";
  return "";
}

bool fused_takes_state(const CellConfig&, ModelFormat, bool) { return true; }
bool fused_needs_time_major(const CellConfig&, ModelFormat, bool) { return false; }

std::string emit_fused(GraphWriter& g, const FusedCell& f, FusedPlan* plan) {
  const int H = f.config.units, F = f.config.features;
  const CellWeights& w = *f.weights;
  const std::string p = "fastgrnn/";
  const int kernel = g.constant(p + "kernel", {H, F}, w.kernel);
  const int recurrent = g.constant(p + "recurrent_kernel", {H, H}, w.recurrent_kernel);
  const int bias = g.constant(p + "bias", {kBiasBlocks, H}, w.bias);
  const int zeta = g.constant(p + "zeta", {1}, {w.scalars[kZeta]});
  const int nu = g.constant(p + "nu", {1}, {w.scalars[kNu]});
  const int out = fused_output(g, f, plan, p);
  g.custom_op("GRUWB_FASTGRNN",
              {plan->input, kernel, recurrent, bias, zeta, nu, plan->initial_state}, {out},
              cell_op_options(plan->need_sequence, plan->time_major,
                              {{"gate_nonlinearity", f.config.gate_activation},
                               {"update_nonlinearity", f.config.activation}}));
  fused_last_step(g, f, plan, out, p);
  return "GRUWB_FASTGRNN";
}

// ---- One step, as the converter writes it ----------------------------------------------

// Tensors: W, U, b_z, b_h, sigmoid(zeta), sigmoid(nu) (the converter folds the sigmoids of
// the constant scalars).
StepConstants add_constants(GraphWriter& g, const CellConfig& c, const CellWeights& w,
                            const std::string& p) {
  const int H = c.units;
  StepConstants k;
  k.tensors = {g.constant(p + "kernel", {H, c.features}, w.kernel),
               g.constant(p + "recurrent_kernel", {H, H}, w.recurrent_kernel),
               g.constant(p + "bias_gate", {H}, rows(w.bias, 1, 0, H)),
               g.constant(p + "bias_update", {H}, rows(w.bias, 1, H, H)),
               g.constant(p + "zeta_sigmoid", {1, 1}, {sigmoid(w.scalars[kZeta])}),
               g.constant(p + "nu_sigmoid", {1, 1}, {sigmoid(w.scalars[kNu])})};
  return k;
}

CellState step(GraphWriter& g, const CellConfig& c, const StepConstants& k, int x, CellState in,
               const std::string& p) {
  const std::vector<int>& t = k.tensors;
  const int pre = binary(g, BuiltinOperator::ADD, fully_connected(g, x, t[0], -1, p + "x_w"),
                         fully_connected(g, in.h, t[1], -1, p + "h_u"), p + "pre");
  const int z = unary(g, BuiltinOperator::LOGISTIC,
                      binary(g, BuiltinOperator::ADD, pre, t[2], p + "z_in"), p + "z");
  const int candidate =
      unary(g, c.activation == "relu" ? BuiltinOperator::RELU : BuiltinOperator::TANH,
            binary(g, BuiltinOperator::ADD, pre, t[3], p + "hh_in"), p + "hh");
  const int keep = binary(g, BuiltinOperator::MUL, z, in.h, p + "z_h");
  const int one_minus_z = binary(g, BuiltinOperator::SUB, g.scalar(1.f), z, p + "one_minus_z");
  const int scale = binary(g, BuiltinOperator::ADD,
                           binary(g, BuiltinOperator::MUL, t[4], one_minus_z, p + "zeta_term"),
                           t[5], p + "candidate_scale");
  const int take = binary(g, BuiltinOperator::MUL, scale, candidate, p + "scaled_hh");
  return {binary(g, BuiltinOperator::ADD, keep, take, p + "h"), -1};
}

// ---- Matcher ---------------------------------------------------------------------------

bool claims(const Graph& g, int h_out) { return g.produced_by(h_out, Op::ADD) >= 0; }

// The converter folds sigmoid(s) of a constant scalar s into a constant: s = logit(value),
// for a value in (0, 1).
bool sigmoid_argument(const Graph& g, int t, float* out) {
  double v = 0;
  if (!g.scalar(t, &v) || !(v > 0 && v < 1)) return false;
  *out = static_cast<float>(std::log(v / (1 - v)));
  return true;
}

// The update h' = z h + (s_zeta (1 - z) + s_nu) h~ in any operand order: z, h, h~, the two
// scalars (before their sigmoids) and the update's ops.
struct Update {
  int z = -1, h = -1, candidate = -1;
  float zeta = 0, nu = 0;
  std::set<int> ops;
};

bool find_update(const Graph& g, int h_out, Update* out) {
  const int top = g.produced_by(h_out, Op::ADD);
  if (top < 0 || g.activation(top) != 0) return false;
  const auto& in = g.op(top).inputs;
  for (int order = 0; order < 2; ++order) {
    const int keep = g.produced_by(in[static_cast<size_t>(order)], Op::MUL);
    const int take = g.produced_by(in[static_cast<size_t>(1 - order)], Op::MUL);
    if (keep < 0 || take < 0) continue;
    for (int s = 0; s < 2; ++s) {
      const int scale = g.produced_by(g.op(take).inputs[static_cast<size_t>(s)], Op::ADD);
      if (scale < 0 || g.activation(scale) != 0) continue;
      for (int k = 0; k < 2; ++k) {
        const int zeta_term = g.produced_by(g.op(scale).inputs[static_cast<size_t>(k)], Op::MUL);
        if (zeta_term < 0) continue;
        for (int j = 0; j < 2; ++j) {
          const int sub = g.produced_by(g.op(zeta_term).inputs[static_cast<size_t>(j)], Op::SUB);
          if (sub < 0 || !g.scalar_is(g.op(sub).inputs[0], 1.0)) continue;
          const int z = g.op(sub).inputs[1];
          const auto& kin = g.op(keep).inputs;
          if (kin[0] != z && kin[1] != z) continue;
          Update u;
          u.ops = {top, keep, take, scale, zeta_term, sub};
          if (!sigmoid_argument(g, g.op(zeta_term).inputs[static_cast<size_t>(1 - j)], &u.zeta) ||
              !sigmoid_argument(g, g.op(scale).inputs[static_cast<size_t>(1 - k)], &u.nu)) {
            continue;
          }
          u.z = z;
          u.h = other_input(g.op(keep), z);
          u.candidate = g.op(take).inputs[static_cast<size_t>(1 - s)];
          *out = u;
          return true;
        }
      }
    }
  }
  return false;
}

bool match_fastgrnn(const Graph& g, Matcher& m, int h_out, CellMatch* out) {
  Update u;
  if (!find_update(g, h_out, &u)) {
    return m.fail("h' is not z*h + (sigmoid(zeta)*(1-z) + sigmoid(nu))*candidate");
  }
  std::string activation;
  int act_op = g.produced_by(u.candidate, Op::TANH);
  if (act_op >= 0) {
    activation = "tanh";
  } else if ((act_op = g.produced_by(u.candidate, Op::RELU)) >= 0) {
    activation = "relu";
  } else {
    return m.fail("FastGRNN candidate is not a TANH or RELU");
  }
  std::string gate_kind;
  Affine z_pre, c_pre;
  if (!m.gate(u.z, &gate_kind, &z_pre) || !m.affine(g.op(act_op).inputs[0], &c_pre)) return false;
  Matcher::Parts zp, cp;
  if (!m.parts(z_pre, u.h, &zp, "FastGRNN gate z") ||
      !m.parts(c_pre, u.h, &cp, "FastGRNN candidate")) {
    return false;
  }
  if (zp.x_weight != cp.x_weight || zp.x_row != cp.x_row || zp.h_weight != cp.h_weight ||
      zp.h_row != cp.h_row) {
    return m.fail("the gate and the candidate do not share W x + U h (not FastGRNN)");
  }
  CellMatch c;
  c.h_in = u.h;
  c.units = g.last_dim(h_out);
  for (const Term& t : z_pre.terms) {
    if (m.is_x_(t.source)) c.x = t.source;
  }
  c.features = g.last_dim(c.x);
  const int H = c.units;
  if (!block_ok(g, zp.x_weight, zp.x_row, H, c.features) ||
      !block_ok(g, zp.h_weight, zp.h_row, H, H)) {
    return m.fail("FastGRNN weights do not have the state's " + std::to_string(H) + " units");
  }
  c.gate_activation = gate_kind;
  c.activation = activation;
  CellWeights& w = c.weights;
  append_rows(g, zp.x_weight, zp.x_row, H, &w.kernel, &w.kernel_scales);
  append_rows(g, zp.h_weight, zp.h_row, H, &w.recurrent_kernel, &w.recurrent_kernel_scales);
  // Every bias piece of a branch adds before its nonlinearity: b_z and b_h.
  w.bias.assign(static_cast<size_t>(kBiasBlocks * H), 0.f);
  add_biases(g, zp.biases, H, u.h, false, &w.bias, &w.bias, 0);
  add_biases(g, cp.biases, H, u.h, false, &w.bias, &w.bias, static_cast<size_t>(H));
  w.scalars = {u.zeta, u.nu};
  m.ops.insert(u.ops.begin(), u.ops.end());
  m.ops.insert(act_op);
  c.ops = m.ops;
  *out = c;
  return true;
}

}  // namespace

const CellDescriptor& fastgrnn_cell_descriptor() {
  static const CellDescriptor d = {"fastgrnn",
                                   "FastGRNN",
                                   "fastgrnn",
                                   "FastGRNN (EdgeML; Kusupati et al. 2018)",
                                   kGates,
                                   kBiasBlocks,
                                   kScalars,
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
                                   match_fastgrnn};
  return d;
}

}  // namespace gruwb::plugins
