// The GRU (Keras GRUCell): gates z|r|h, one state.
//   h' = z*h + (1-z)*act(x_n + r * (W_hn h + b_hn))   reset_after (Keras 2/3 default)
//   h' = z*h + (1-z)*act(x_n + W_hn (r * h))          reset_before (reset_after false)
// Fused: Circle GRU (-5) in .circle files for a reset_after sigmoid/tanh float GRU, else our
// GRUWB_GRU custom op (docs/fused-gru-op.md). The legacy body (older converters) writes one
// FC per gate and side and hard_sigmoid as MUL/ADD/MINIMUM/MAXIMUM.

#include <flatbuffers/flexbuffers.h>

#include "engine/tools/cells/cell_pattern.h"
#include "engine/tools/cells/cell_support.h"

namespace gruwb::tools::cells {
namespace {

constexpr int kGates = 3;

bool uses_circle_gru(const CellConfig& c, ModelFormat format, bool hybrid) {
  return format == ModelFormat::kCircle && c.reset_after && !hybrid &&
         c.gate_activation == "sigmoid" && c.activation == "tanh";
}

// ---- Facts ----------------------------------------------------------------------------

bool two_biases(const CellConfig& c) { return c.reset_after; }

uint64_t step_macs(const CellConfig& c) { return gate_products_macs(c, kGates); }

void initialize(const CellConfig& c, BiasInit bias_init, Rng& rng, CellWeights* out) {
  keras_weights(c, kGates, c.reset_after, bias_init, rng, out);
}

std::string check(const CellConfig& c) {
  if (c.legacy && c.reset_after) {
    return "the legacy GRU variant is reset_after=false (use --reset-after false)";
  }
  return "";
}

std::string describe(const CellConfig& c) {
  return std::string(c.reset_after ? " reset_after" : " reset_before") + ", " + c.gate_activation +
         "/" + c.activation;
}

// ---- Fused op -------------------------------------------------------------------------

const char* fused_op(const CellConfig& c, ModelFormat format, bool hybrid) {
  return uses_circle_gru(c, format, hybrid) ? "GRU" : "GRUWB_GRU";
}

std::string fused_problem(const FusedCell&) { return ""; }

bool fused_takes_state(const CellConfig& c, ModelFormat format, bool hybrid) {
  return !uses_circle_gru(c, format, hybrid);
}

bool fused_needs_time_major(const CellConfig& c, ModelFormat format, bool hybrid) {
  return uses_circle_gru(c, format, hybrid);  // Circle's GRU reads [T,B,F] only
}

std::vector<uint8_t> custom_options(const FusedCell& f, bool return_sequences, bool time_major) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Bool("reset_after", f.config.reset_after);
    fbb.String("activation", f.config.activation);
    fbb.String("recurrent_activation", f.config.gate_activation);
    fbb.Bool("return_sequences", return_sequences);
    fbb.Bool("time_major", time_major);
    if (f.hybrid) fbb.Bool("asymmetric_quantize_inputs", f.hybrid_inputs == "asymmetric");
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

std::string emit_fused(GraphWriter& g, const FusedCell& f, FusedPlan* plan) {
  const int H = f.config.units, F = f.config.features, B = f.batch;
  const int G = kGates;
  const CellWeights& w = *f.weights;
  const std::string p = "gru/";
  int wx =
      g.weight(p + "kernel", {G * H, F}, w.kernel, hybrid_scales(f, w.kernel_scales, 0, G * H));
  int wh = g.weight(p + "recurrent_kernel", {G * H, H}, w.recurrent_kernel,
                    hybrid_scales(f, w.recurrent_kernel_scales, 0, G * H));
  const int out = fused_output(g, f, plan, p);
  std::string name = fused_op(f.config, f.format, f.hybrid);
  if (name == "GRU") {
    int bx = g.constant(p + "bias", {G * H}, w.bias);
    int bh = g.constant(p + "recurrent_bias", {G * H}, w.recurrent_bias);
    // onert-micro wants the initial state as a constant.
    int state =
        g.constant(p + "zeros", {B, H}, std::vector<float>(static_cast<size_t>(B * H), 0.f));
    fb::GRUOptionsT options;
    options.return_sequences = plan->need_sequence;
    g.op(BuiltinOperator::GRU, {plan->input, wx, bx, wh, bh, state}, {out}, options);
  } else {
    std::vector<float> bias = w.bias;
    Dims bias_shape = {G * H};
    if (f.config.reset_after) {
      bias.insert(bias.end(), w.recurrent_bias.begin(), w.recurrent_bias.end());
      bias_shape = {2, G * H};
    }
    int b = g.constant(p + "bias", bias_shape, bias);
    g.custom_op("GRUWB_GRU", {plan->input, wx, wh, b, plan->initial_state}, {out},
                custom_options(f, plan->need_sequence, plan->time_major));
  }
  fused_last_step(g, f, plan, out, p);
  return name;
}

// ---- One step, as the converter writes it ----------------------------------------------

// Legacy: per gate i the tensors kernel (3i), recurrent kernel (3i+1) and bias (3i+2).
// Modern: kernel, bias, then reset_after: recurrent kernel and recurrent bias;
// reset_before: the recurrent kernel's z|r rows and its h rows.
StepConstants add_constants(GraphWriter& g, const CellConfig& c, const CellWeights& w,
                            const std::string& p) {
  const int h = c.units, F = c.features;
  StepConstants k;
  auto add = [&](int t) { k.tensors.push_back(t); };
  if (c.legacy) {
    const char* gate[3] = {"z", "r", "h"};
    for (int i = 0; i < 3; ++i) {
      add(g.constant(p + "kernel_" + gate[i], {h, F}, rows(w.kernel, F, i * h, h)));
      add(g.constant(p + "recurrent_kernel_" + gate[i], {h, h},
                     rows(w.recurrent_kernel, h, i * h, h)));
      add(g.constant(p + "bias_" + gate[i], {h}, rows(w.bias, 1, i * h, h)));
    }
    return k;
  }
  add(g.constant(p + "kernel", {3 * h, F}, w.kernel));
  add(g.constant(p + "bias", {3 * h}, w.bias));
  if (!c.reset_after) {
    add(g.constant(p + "recurrent_kernel_zr", {2 * h, h}, rows(w.recurrent_kernel, h, 0, 2 * h)));
    add(g.constant(p + "recurrent_kernel_h", {h, h}, rows(w.recurrent_kernel, h, 2 * h, h)));
    return k;
  }
  add(g.constant(p + "recurrent_kernel", {3 * h, h}, w.recurrent_kernel));
  add(g.constant(p + "recurrent_bias", {3 * h}, w.recurrent_bias));
  return k;
}

// h' = z*h + (1-z)*candidate
int gru_update(GraphWriter& g, int z, int h, int candidate, const std::string& p) {
  int keep = binary(g, BuiltinOperator::MUL, z, h, p + "z_h");
  int one_minus_z = binary(g, BuiltinOperator::SUB, g.scalar(1.f), z, p + "one_minus_z");
  int take = binary(g, BuiltinOperator::MUL, one_minus_z, candidate, p + "one_minus_z_hh");
  return binary(g, BuiltinOperator::ADD, keep, take, p + "h");
}

// Keras 2's hard_sigmoid, as older converter output spells it.
int hard_sigmoid(GraphWriter& g, int x, const std::string& p) {
  int scaled = binary(g, BuiltinOperator::MUL, x, g.scalar(0.2f), p + "/mul");
  int shifted = binary(g, BuiltinOperator::ADD, scaled, g.scalar(0.5f), p + "/add");
  int upper = binary(g, BuiltinOperator::MINIMUM, shifted, g.scalar(1.f), p + "/min");
  return binary(g, BuiltinOperator::MAXIMUM, upper, g.scalar(0.f), p);
}

int gate(GraphWriter& g, int x_part, int h_part, const std::string& name) {
  return unary(g, BuiltinOperator::LOGISTIC,
               binary(g, BuiltinOperator::ADD, x_part, h_part, name + "_in"), name);
}

int modern_step(GraphWriter& g, const CellConfig& c, const StepConstants& k, int x, int h,
                const std::string& p) {
  const std::vector<int>& t = k.tensors;
  std::vector<int> xs =
      split(g, fully_connected(g, x, t[0], t[1], p + "x_gates"), 3, p + "x_gates_split");
  int candidate_in = -1, z = -1;
  if (c.reset_after) {
    std::vector<int> hs =
        split(g, fully_connected(g, h, t[2], t[3], p + "h_gates"), 3, p + "h_gates_split");
    z = gate(g, xs[0], hs[0], p + "z");
    int r = gate(g, xs[1], hs[1], p + "r");
    candidate_in = binary(g, BuiltinOperator::ADD, xs[2],
                          binary(g, BuiltinOperator::MUL, r, hs[2], p + "r_hh"), p + "hh_in");
  } else {
    std::vector<int> hs =
        split(g, fully_connected(g, h, t[2], -1, p + "h_gates"), 2, p + "h_gates_split");
    z = gate(g, xs[0], hs[0], p + "z");
    int r = gate(g, xs[1], hs[1], p + "r");
    int rh = fully_connected(g, binary(g, BuiltinOperator::MUL, r, h, p + "r_h"), t[3], -1,
                             p + "r_h_kernel");
    candidate_in = binary(g, BuiltinOperator::ADD, xs[2], rh, p + "hh_in");
  }
  int candidate = unary(g, BuiltinOperator::TANH, candidate_in, p + "hh");
  return gru_update(g, z, h, candidate, p);
}

int legacy_step(GraphWriter& g, const StepConstants& k, int x, int h, const std::string& p) {
  auto kernel = [&](int i) { return k.tensors[static_cast<size_t>(3 * i)]; };
  auto recurrent = [&](int i) { return k.tensors[static_cast<size_t>(3 * i + 1)]; };
  auto bias = [&](int i) { return k.tensors[static_cast<size_t>(3 * i + 2)]; };
  int xz = fully_connected(g, x, kernel(0), bias(0), p + "x_z");
  int xr = fully_connected(g, x, kernel(1), bias(1), p + "x_r");
  int xh = fully_connected(g, x, kernel(2), bias(2), p + "x_h");
  int hz = fully_connected(g, h, recurrent(0), -1, p + "h_z");
  int hr = fully_connected(g, h, recurrent(1), -1, p + "h_r");
  int z = hard_sigmoid(g, binary(g, BuiltinOperator::ADD, xz, hz, p + "z_in"), p + "z");
  int r = hard_sigmoid(g, binary(g, BuiltinOperator::ADD, xr, hr, p + "r_in"), p + "r");
  int rh = fully_connected(g, binary(g, BuiltinOperator::MUL, r, h, p + "r_h"), recurrent(2), -1,
                           p + "r_h_kernel");
  int candidate = unary(g, BuiltinOperator::TANH,
                        binary(g, BuiltinOperator::ADD, xh, rh, p + "hh_in"), p + "hh");
  return gru_update(g, z, h, candidate, p);
}

CellState step(GraphWriter& g, const CellConfig& c, const StepConstants& k, int x, CellState in,
               const std::string& p) {
  return {c.legacy ? legacy_step(g, k, x, in.h, p) : modern_step(g, c, k, x, in.h, p), -1};
}

// ---- Matcher ---------------------------------------------------------------------------

bool claims(const Graph& g, int h_out) { return g.produced_by(h_out, Op::ADD) >= 0; }

// The GRU state update h' = z*h + (1-z)*n, or its other algebraic form
// n + z*(h - n): the update gate z, the state h and the candidate n, with the
// ops that combine them.
struct GruUpdate {
  int z = -1, h = -1, n = -1;
  std::set<int> ops;
};

std::vector<GruUpdate> gru_updates(const Graph& g, int h_out) {
  std::vector<GruUpdate> found;
  const int top = g.produced_by(h_out, Op::ADD);
  if (top < 0 || g.activation(top) != 0) return found;
  const auto& in = g.op(top).inputs;
  for (int order = 0; order < 2; ++order) {
    const int a = in[static_cast<size_t>(order)], b = in[static_cast<size_t>(1 - order)];
    const int a_op = g.produced_by(a, Op::MUL), b_op = g.produced_by(b, Op::MUL);
    // z*h + MUL(SUB(1, z), n)
    for (int s = 0; a_op >= 0 && b_op >= 0 && s < 2; ++s) {
      const int sub = g.produced_by(g.op(b_op).inputs[static_cast<size_t>(s)], Op::SUB);
      if (sub < 0 || !g.scalar_is(g.op(sub).inputs[0], 1.0)) continue;
      const int z = g.op(sub).inputs[1];
      const auto& kin = g.op(a_op).inputs;
      if (kin[0] != z && kin[1] != z) continue;
      found.push_back({z,
                       other_input(g.op(a_op), z),
                       g.op(b_op).inputs[static_cast<size_t>(1 - s)],
                       {top, a_op, b_op, sub}});
    }
    // n + MUL(z, SUB(h, n))
    for (int s = 0; b_op >= 0 && s < 2; ++s) {
      const int sub = g.produced_by(g.op(b_op).inputs[static_cast<size_t>(s)], Op::SUB);
      if (sub < 0 || g.activation(sub) != 0 || g.op(sub).inputs[1] != a) continue;
      found.push_back({g.op(b_op).inputs[static_cast<size_t>(1 - s)],
                       g.op(sub).inputs[0],
                       a,
                       {top, b_op, sub}});
    }
  }
  return found;
}

bool match_gru(const Graph& g, Matcher& m, int h_out, CellMatch* out) {
  const std::vector<GruUpdate> updates = gru_updates(g, h_out);
  for (const GruUpdate& update : updates) {
    const int z_t = update.z, h_in = update.h, n = update.n;
    // The candidate's activation: TANH, RELU, or none (Keras activation=None).
    std::string activation = "linear";
    int act_op = g.produced_by(n, Op::TANH);
    if (act_op >= 0) {
      activation = "tanh";
    } else if ((act_op = g.produced_by(n, Op::RELU)) >= 0) {
      activation = "relu";
    }
    const int cand_pre = act_op >= 0 ? g.op(act_op).inputs[0] : n;
    const int add_op = g.produced_by(cand_pre, Op::ADD);
    if (add_op < 0 || g.activation(add_op) != 0) return m.fail("GRU candidate input is not an ADD");
    // z gate
    std::string z_kind, r_kind;
    Affine z_pre, r_pre;
    if (!m.gate(z_t, &z_kind, &z_pre)) return false;
    Matcher::Parts zp, rp;
    if (!m.parts(z_pre, h_in, &zp, "update gate z")) return false;
    // candidate: ADD(x side, MUL(r, Uh h + b) | FC(MUL(r, h)))
    const int H = g.last_dim(h_out);
    for (int side = 0; side < 2; ++side) {
      const int xs = g.op(add_op).inputs[static_cast<size_t>(side)];
      const int hs = g.op(add_op).inputs[static_cast<size_t>(1 - side)];
      Affine x_aff;
      Matcher probe(g, m.is_x_);
      if (!probe.affine(xs, &x_aff) || x_aff.terms.size() != 1 || !m.is_x_(x_aff.terms[0].source)) {
        continue;
      }
      CellMatch c;
      c.h_in = h_in;
      c.x = x_aff.terms[0].source;
      c.units = H;
      c.features = g.last_dim(c.x);
      int r_t = -1;
      Affine h_aff;
      bool reset_after = false;
      if (int mul = g.produced_by(hs, Op::MUL); mul >= 0) {
        // reset_after: MUL(r, affine over h)
        for (int s = 0; s < 2 && r_t < 0; ++s) {
          Affine a;
          Matcher probe2(g, m.is_x_);
          int cand_r = g.op(mul).inputs[static_cast<size_t>(s)];
          int cand_h = g.op(mul).inputs[static_cast<size_t>(1 - s)];
          if (probe2.affine(cand_h, &a) && a.terms.size() == 1 && a.terms[0].source == h_in) {
            std::string k;
            Affine pre;
            Matcher probe3(g, m.is_x_);
            if (probe3.gate(cand_r, &k, &pre)) {
              r_t = cand_r;
              h_aff = a;
              reset_after = true;
              m.ops.insert(mul);
            }
          }
        }
      }
      if (r_t < 0) {
        // reset_before: FC(MUL(r, h))
        Affine a;
        Matcher probe2(g, m.is_x_);
        if (!probe2.affine(hs, &a) || a.terms.size() != 1) continue;
        int mul = g.produced_by(a.terms[0].source, Op::MUL);
        if (mul < 0) continue;
        const auto& mi = g.op(mul).inputs;
        if (mi[0] != h_in && mi[1] != h_in) continue;
        r_t = other_input(g.op(mul), h_in);
        h_aff = a;
        m.ops.insert(mul);
      }
      if (!m.affine(xs, &x_aff)) return false;
      if (reset_after) {
        if (!m.affine(other_input(g.op(g.produced_by(hs, Op::MUL)), r_t), &h_aff)) return false;
      } else if (!m.affine(hs, &h_aff)) {
        return false;
      }
      if (!m.gate(r_t, &r_kind, &r_pre)) return false;
      if (!m.parts(r_pre, h_in, &rp, "reset gate r")) return false;
      if (z_kind != r_kind) return m.fail("the GRU gates use different activations");
      c.reset_after = reset_after;
      c.gate_activation = z_kind;
      c.activation = activation;
      const int F = c.features;
      if (!block_ok(g, zp.x_weight, zp.x_row, H, F) || !block_ok(g, rp.x_weight, rp.x_row, H, F) ||
          !block_ok(g, x_aff.terms[0].weight, x_aff.terms[0].row0, H, F) ||
          !block_ok(g, zp.h_weight, zp.h_row, H, H) || !block_ok(g, rp.h_weight, rp.h_row, H, H) ||
          !block_ok(g, h_aff.terms[0].weight, h_aff.terms[0].row0, H, H)) {
        return m.fail("GRU weight blocks do not have the state's " + std::to_string(H) + " units");
      }
      CellWeights& w = c.weights;
      append_rows(g, zp.x_weight, zp.x_row, H, &w.kernel, &w.kernel_scales);
      append_rows(g, rp.x_weight, rp.x_row, H, &w.kernel, &w.kernel_scales);
      append_rows(g, x_aff.terms[0].weight, x_aff.terms[0].row0, H, &w.kernel, &w.kernel_scales);
      append_rows(g, zp.h_weight, zp.h_row, H, &w.recurrent_kernel, &w.recurrent_kernel_scales);
      append_rows(g, rp.h_weight, rp.h_row, H, &w.recurrent_kernel, &w.recurrent_kernel_scales);
      append_rows(g, h_aff.terms[0].weight, h_aff.terms[0].row0, H, &w.recurrent_kernel,
                  &w.recurrent_kernel_scales);
      w.bias.assign(static_cast<size_t>(3 * H), 0.f);
      w.recurrent_bias.assign(static_cast<size_t>(3 * H), 0.f);
      add_biases(g, zp.biases, H, h_in, false, &w.bias, &w.recurrent_bias, 0);
      add_biases(g, rp.biases, H, h_in, false, &w.bias, &w.recurrent_bias, static_cast<size_t>(H));
      add_biases(g, x_aff.biases, H, h_in, false, &w.bias, &w.recurrent_bias,
                 static_cast<size_t>(2 * H));
      add_biases(g, h_aff.biases, H, h_in, true, &w.bias, &w.recurrent_bias,
                 static_cast<size_t>(2 * H));
      if (!reset_after) {
        // Without reset_after every bias adds before the nonlinearity: one vector.
        for (size_t i = 0; i < w.bias.size(); ++i) w.bias[i] += w.recurrent_bias[i];
        w.recurrent_bias.clear();
      }
      m.ops.insert(update.ops.begin(), update.ops.end());
      m.ops.insert(add_op);
      if (act_op >= 0) m.ops.insert(act_op);
      c.ops = m.ops;
      *out = c;
      return true;
    }
    return m.fail("GRU candidate is not " + activation + "(x part + reset-gated h part)");
  }
  return m.fail("h' is not z*h + (1-z)*candidate or candidate + z*(h - candidate)");
}

}  // namespace

const CellDescriptor& gru_cell() {
  static const CellDescriptor d = {"gru",
                                   "GRU",
                                   "gru",
                                   "Keras GRU",
                                   kGates,
                                   /*bias_blocks=*/kGates,
                                   /*scalars=*/0,
                                   1,
                                   /*has_reset_after=*/true,
                                   /*has_legacy_body=*/true,
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
                                   match_gru};
  return d;
}

}  // namespace gruwb::tools::cells
