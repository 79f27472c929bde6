#include "engine/tools/rnn_detector.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "engine/tools/cells/cell_pattern.h"
#include "engine/tools/cells/cell_registry.h"
#include "engine/tools/dequantize.h"
#include "engine/tools/engine_facts.h"
#include "engine/tools/model_runner.h"

namespace gruwb::tools {
namespace {

using Op = BuiltinOperator;

using cells::add_biases;
using cells::append_rows;
using cells::block_ok;
using cells::CellMatch;
using cells::Graph;
using cells::Matcher;
using cells::other_input;

// Tries every registered cell type whose matcher claims the state update ending in h_out.
bool match_cell(const Graph& g, int h_out, const std::function<bool(int)>& is_x, CellMatch* out,
                std::string* why) {
  const int p = g.producer(h_out);
  std::string reasons;
  if (p < 0) {
    reasons = "the state is not computed in the loop";
  } else if (g.code(p) == Op::SELECT_V2 || g.code(p) == Op::SELECT) {
    reasons =
        "the state is masked (SELECT_V2 keeps the old state on masked steps: mask_zero or a "
        "Masking layer), which no fused RNN op can express";
  } else {
    std::string names;
    for (const CellDescriptor* type : registered_cells()) {
      names += (names.empty() ? "" : "/") + std::string(type->display_name);
      if (!type->claims(g, h_out)) continue;
      Matcher m(g, is_x);
      if (type->match(g, m, h_out, out)) {
        out->type = type;
        if (out->x >= 0 && out->h_in >= 0) return true;
        m.why = "no input x in the cell";
      }
      reasons += reasons.empty() ? m.why : "; as " + std::string(type->display_name) + ": " + m.why;
    }
    if (reasons.empty()) {
      reasons =
          std::string("the state comes from ") + g.code_name(p) + ", not a " + names + " update";
    }
  }
  if (why) *why = reasons;
  return false;
}

std::string summary(const DetectedCell& c) {
  std::string s = std::string(c.type->display_name) + "(" + std::to_string(c.units) + ")";
  return s + c.type->describe(cell_config(c)) + ", T=" + std::to_string(c.timesteps) +
         " F=" + std::to_string(c.features) + ", " + cell_form_name(c.form);
}

void fill_from_match(const CellMatch& cm, DetectedCell* c) {
  c->type = cm.type;
  c->reset_after = cm.reset_after;
  c->gate_activation = cm.gate_activation;
  c->activation = cm.activation;
  c->units = cm.units;
  c->features = cm.features;
  c->weights = cm.weights;
}

// ---- WHILE loops -------------------------------------------------------------------

// t = MUL(x, ones): Keras multiplies x_t by a dropout mask that is all ones
// at inference (FILL(SHAPE(x_t), 1.0), or a constant of ones).
bool ones_mask_of(const Graph& g, int t, int x) {
  const int mul = g.produced_by(t, Op::MUL);
  if (mul < 0 || g.activation(mul) != 0) return false;
  const auto& in = g.op(mul).inputs;
  if (in.size() != 2 || (in[0] != x && in[1] != x)) return false;
  const int mask = in[0] == x ? in[1] : in[0];
  if (const int fill = g.produced_by(mask, Op::FILL); fill >= 0) {
    return g.op(fill).inputs.size() == 2 && g.scalar_is(g.op(fill).inputs[1], 1.0);
  }
  const std::vector<float> v = g.floats(mask);
  return !v.empty() && std::all_of(v.begin(), v.end(), [](float f) { return f == 1.f; });
}

// acc' = [CAST](CONCATENATION(SLICE(acc, 0, [t,-1,-1]), EXPAND_DIMS|RESHAPE(h'),
//                             SLICE(acc, [t+1,0,0], -1))) along axis 0: the converter's
// TensorListSetItem(acc, t, h') with builtin ops. The slice bounds come from the counter;
// the fuser's numeric check confirms that row t is the step-t output.
bool set_item_accumulator(const Graph& body, int next, int acc, int h_out, std::set<int>* ops) {
  int cat = body.producer(next);
  if (cat >= 0 && body.code(cat) == Op::CAST) {
    ops->insert(cat);
    cat = body.producer(body.op(cat).inputs[0]);
  }
  if (cat < 0 || body.code(cat) != Op::CONCATENATION) return false;
  const auto* options = body.op(cat).builtin_options.AsConcatenationOptions();
  const auto& in = body.op(cat).inputs;
  if (!options || options->axis != 0 || in.size() != 3) return false;
  const int head = body.produced_by(in[0], Op::SLICE);
  const int tail = body.produced_by(in[2], Op::SLICE);
  int item = body.produced_by(in[1], Op::EXPAND_DIMS);
  if (item < 0) item = body.produced_by(in[1], Op::RESHAPE);
  if (head < 0 || tail < 0 || item < 0 || body.op(item).inputs[0] != h_out ||
      body.op(head).inputs[0] != acc || body.op(tail).inputs[0] != acc) {
    return false;
  }
  ops->insert({cat, head, tail, item});
  return true;
}

// acc' = FlexTensorListSetItem(acc, index, h'): a list of T rows indexed by the counter
// (return_sequences) or of one row at index 0 (the last output).
bool flex_set_item_accumulator(const Graph& body, int next, int acc, int h_out,
                               std::set<int>* ops) {
  const int set = body.producer(next);
  if (set < 0 || !body.is_custom(set, "FlexTensorListSetItem")) return false;
  const auto& in = body.op(set).inputs;
  if (in.size() != 3 || in[0] != acc || in[2] != h_out) return false;
  ops->insert(set);
  return true;
}

bool counter_step(const Graph& body, int index) {
  const auto& sg = body.sg();
  int out = sg.outputs[static_cast<size_t>(index)];
  int add = body.produced_by(out, Op::ADD);
  if (add < 0) return false;
  const auto& in = body.op(add).inputs;
  if (in.size() != 2) return false;
  const int var = sg.inputs[static_cast<size_t>(index)];
  return (in[0] == var && body.scalar_is(in[1], 1)) || (in[1] == var && body.scalar_is(in[0], 1));
}

// The number of iterations the cond allows when every counter starts at 0,
// or -1 when it is not LESS(counter, limit) [AND LESS(...)].
int trip_count(const ModelDef& def, const EngineFacts& facts, const Graph& main,
               const fb::OperatorT& loop, int cond_index, const std::vector<LoopRole>& roles) {
  Graph cond(def, cond_index, &facts);
  if (cond.sg().outputs.size() != 1) return -1;
  std::vector<int> lesses;
  int top = cond.producer(cond.sg().outputs[0]);
  if (top < 0) return -1;
  if (cond.code(top) == Op::LOGICAL_AND) {
    for (int t : cond.op(top).inputs) lesses.push_back(cond.producer(t));
  } else {
    lesses.push_back(top);
  }
  int trips = -1;
  for (int p : lesses) {
    if (p < 0 || cond.code(p) != Op::LESS) return -1;
    const auto& in = cond.op(p).inputs;
    if (in.size() != 2) return -1;
    // The cond's inputs are the loop values (a cond with more is no loop of ours).
    auto pos = std::find(cond.sg().inputs.begin(), cond.sg().inputs.end(), in[0]);
    if (pos == cond.sg().inputs.end()) return -1;
    const size_t k = static_cast<size_t>(pos - cond.sg().inputs.begin());
    if (k >= roles.size() || roles[k] != LoopRole::kCounter || !main.scalar_is(loop.inputs[k], 0))
      return -1;
    double limit = 0;
    if (!cond.scalar(in[1], &limit)) {
      auto lp = std::find(cond.sg().inputs.begin(), cond.sg().inputs.end(), in[1]);
      if (lp == cond.sg().inputs.end()) return -1;
      const size_t j = static_cast<size_t>(lp - cond.sg().inputs.begin());
      if (j >= roles.size() || roles[j] != LoopRole::kInvariant ||
          !main.scalar(loop.inputs[j], &limit))
        return -1;
    }
    if (!(limit >= 0 && limit <= INT32_MAX)) return -1;  // also NaN
    trips = trips < 0 ? static_cast<int>(limit) : std::min(trips, static_cast<int>(limit));
  }
  return trips;
}

bool analyze_while(const ModelDef& def, const EngineFacts& facts, int subgraph, int op_index,
                   DetectedCell* cell, std::string* reason) {
  Graph main(def, subgraph, &facts);
  const fb::OperatorT& loop = main.op(op_index);
  const auto* opt = loop.builtin_options.AsWhileOptions();
  if (!opt) return *reason = "WHILE without options", false;
  cell->form = CellForm::kWhile;
  cell->subgraph = subgraph;
  cell->op = op_index;
  cell->cond_subgraph = opt->cond_subgraph_index;
  cell->body_subgraph = opt->body_subgraph_index;
  const int nsg = static_cast<int>(def.subgraphs.size());
  if (opt->body_subgraph_index < 0 || opt->body_subgraph_index >= nsg ||
      opt->cond_subgraph_index < 0 || opt->cond_subgraph_index >= nsg) {
    return *reason = "WHILE subgraph index out of range", false;
  }
  Graph body(def, opt->body_subgraph_index, &facts);
  const auto& bin = body.sg().inputs;
  const auto& bout = body.sg().outputs;
  const size_t n = loop.inputs.size();
  if (bin.size() != n || bout.size() != n || loop.outputs.size() != n) {
    return *reason = "loop values do not line up (WHILE/body inputs/outputs differ in count)",
           false;
  }
  std::vector<LoopRole> roles(n, LoopRole::kOther);
  for (size_t i = 0; i < n; ++i) {
    if (bout[i] == bin[i])
      roles[i] = LoopRole::kInvariant;
    else if (counter_step(body, static_cast<int>(i)))
      roles[i] = LoopRole::kCounter;
  }
  for (size_t i = 0; i < n; ++i) {
    if (roles[i] == LoopRole::kInvariant && main.is_const(loop.inputs[i])) {
      body.borrow(bin[i], main.data(loop.inputs[i]), main.shape(loop.inputs[i]));
    }
  }
  // The time step: GATHER(sequence, counter) along axis 0, or FlexTensorListGetItem(list,
  // counter) of a list made by FlexTensorListFromTensor(sequence) before the loop.
  int gather = -1, seq_pos = -1, x = -1, sequence = -1;
  for (size_t i = 0; i < body.sg().operators.size() && gather < 0; ++i) {
    const auto& o = body.op(static_cast<int>(i));
    if (o.outputs.empty()) continue;
    int list_source = -1;
    if (body.is_custom(static_cast<int>(i), "FlexTensorListGetItem") && o.inputs.size() >= 2) {
      auto lp = std::find(bin.begin(), bin.end(), o.inputs[0]);
      if (lp == bin.end()) continue;
      const int from = main.producer(loop.inputs[static_cast<size_t>(lp - bin.begin())]);
      if (from < 0 || !main.is_custom(from, "FlexTensorListFromTensor") ||
          main.op(from).inputs.empty()) {
        continue;
      }
      list_source = main.op(from).inputs[0];
    } else if (body.code(static_cast<int>(i)) != Op::GATHER || o.inputs.size() < 2) {
      continue;
    }
    const auto* gopt = o.builtin_options.AsGatherOptions();
    if (gopt && gopt->axis != 0) continue;
    auto sp = std::find(bin.begin(), bin.end(), o.inputs[0]);
    auto tp = std::find(bin.begin(), bin.end(), o.inputs[1]);
    if (sp == bin.end() || tp == bin.end()) continue;
    if (roles[static_cast<size_t>(sp - bin.begin())] != LoopRole::kInvariant ||
        roles[static_cast<size_t>(tp - bin.begin())] != LoopRole::kCounter) {
      continue;
    }
    gather = static_cast<int>(i);
    seq_pos = static_cast<int>(sp - bin.begin());
    x = o.outputs[0];
    sequence = list_source >= 0 ? list_source : loop.inputs[static_cast<size_t>(seq_pos)];
  }
  if (gather < 0) {
    return *reason =
               "no GATHER of a loop-invariant sequence by a loop counter: not an RNN over time",
           false;
  }
  const std::vector<int32_t> seq_shape = main.shape(sequence);
  if (seq_shape.size() != 3) return *reason = "the GATHERed sequence is not [T,B,F]", false;
  // The state: a loop value whose update is a recognised cell of x and itself.
  CellMatch match;
  int h_pos = -1, c_pos = -1;
  std::string why = "no loop state is updated from the GATHERed step";
  bool why_from_mul = false;
  for (size_t i = 0; i < n && h_pos < 0; ++i) {
    if (roles[i] != LoopRole::kOther || !body.is_float(bout[i])) continue;
    CellMatch cm;
    std::string w;
    const auto is_x = [x, &body](int t) { return t == x || ones_mask_of(body, t, x); };
    if (!match_cell(body, bout[i], is_x, &cm, &w)) {
      // An LSTM's h' (a MUL) says more than its c' (an ADD, tried as a GRU): keep its reason.
      const int top = body.producer(bout[i]);
      if (top >= 0 && body.code(top) != Op::RESHAPE && body.code(top) != Op::CONCATENATION &&
          !why_from_mul) {
        why = w;
        why_from_mul = body.code(top) == Op::MUL;
      }
      continue;
    }
    if (cm.h_in != bin[i]) {
      why = "the cell's state input is not the loop value it updates";
      continue;
    }
    if (cm.type->states == 2) {
      auto cp = std::find(bin.begin(), bin.end(), cm.c_in);
      if (cp == bin.end() || bout[static_cast<size_t>(cp - bin.begin())] != cm.c_out) {
        why = "the LSTM cell state is not a loop value";
        continue;
      }
      c_pos = static_cast<int>(cp - bin.begin());
    }
    h_pos = static_cast<int>(i);
    match = cm;
  }
  if (h_pos < 0) return *reason = why, false;
  roles[static_cast<size_t>(h_pos)] = LoopRole::kHidden;
  if (c_pos >= 0) roles[static_cast<size_t>(c_pos)] = LoopRole::kCell;
  const int h_out = bout[static_cast<size_t>(h_pos)];
  std::set<int> ops = match.ops;
  ops.insert(gather);
  // Accumulators: RESHAPE(h'), CONCATENATION(SLICE(acc, 1..), RESHAPE(h')) (a shift), or
  // the converter's TensorListSetItem lowering (below).
  for (size_t i = 0; i < n; ++i) {
    if (roles[i] != LoopRole::kOther) continue;
    int r = body.produced_by(bout[i], Op::RESHAPE);
    if (r >= 0 && body.op(r).inputs[0] == h_out) {
      roles[i] = LoopRole::kLastOutput;
      ops.insert(r);
      continue;
    }
    std::set<int> set_ops;
    if (set_item_accumulator(body, bout[i], bin[i], h_out, &set_ops) ||
        flex_set_item_accumulator(body, bout[i], bin[i], h_out, &set_ops)) {
      const auto& acc_shape = body.shape(bin[i]);
      if (acc_shape.size() != 3) continue;
      // A one-row list keeps only the last output (TF 2.20); T rows keep them all.
      if (acc_shape[0] == 1) {
        roles[i] = LoopRole::kLastOutput;
      } else if (acc_shape[0] == seq_shape[0]) {
        roles[i] = LoopRole::kSequenceAccumulator;
      } else {
        continue;
      }
      ops.insert(set_ops.begin(), set_ops.end());
      continue;
    }
    int cat = body.produced_by(bout[i], Op::CONCATENATION);
    if (cat < 0 || body.op(cat).inputs.size() != 2) continue;
    const auto* copt = body.op(cat).builtin_options.AsConcatenationOptions();
    int sl = body.produced_by(body.op(cat).inputs[0], Op::SLICE);
    int rs = body.produced_by(body.op(cat).inputs[1], Op::RESHAPE);
    if (!copt || copt->axis != 0 || sl < 0 || rs < 0 || body.op(rs).inputs[0] != h_out ||
        body.op(sl).inputs[0] != bin[i]) {
      continue;
    }
    const std::vector<uint8_t>* begin = body.data(body.op(sl).inputs[1]);
    int32_t b0 = 0;
    if (begin && begin->size() >= 4) std::memcpy(&b0, begin->data(), 4);
    const auto& acc_shape = body.shape(bin[i]);
    if (b0 != 1 || acc_shape.size() != 3 || acc_shape[0] != seq_shape[0]) continue;
    roles[i] = LoopRole::kSequenceAccumulator;
    ops.insert({cat, sl, rs});
  }
  for (size_t i = 0; i < n; ++i) {
    if (roles[i] == LoopRole::kCounter) {
      int add = body.producer(bout[i]);
      ops.insert(add);
    }
  }
  const int trips = trip_count(def, facts, main, loop, opt->cond_subgraph_index, roles);
  if (trips != seq_shape[0]) {
    return *reason = "the loop runs " +
                     (trips < 0 ? std::string("an unknown number of") : std::to_string(trips)) +
                     " times over a sequence of " + std::to_string(seq_shape[0]) + " steps",
           false;
  }
  fill_from_match(match, cell);
  cell->timesteps = seq_shape[0];
  cell->batch = seq_shape[1];
  cell->sequence_tensor = sequence;
  cell->initial_hidden = loop.inputs[static_cast<size_t>(h_pos)];
  if (c_pos >= 0) cell->initial_cell = loop.inputs[static_cast<size_t>(c_pos)];
  cell->loop_roles = roles;
  cell->cell_ops.assign(ops.begin(), ops.end());
  cell->summary = summary(*cell);
  return true;
}

// ---- Unrolled chains ------------------------------------------------------------------

bool same_weights(const CellWeights& a, const CellWeights& b) {
  return a.kernel == b.kernel && a.recurrent_kernel == b.recurrent_kernel && a.bias == b.bias &&
         a.recurrent_bias == b.recurrent_bias && a.scalars == b.scalars;
}

// The x_t of an unrolled chain: the outputs of an UNPACK along the time axis
// (0 for [T,B,F], 1 for [B,T,F]), or one STRIDED_SLICE per step taking index t
// of that axis (shrunk) with the other axes whole.
struct UnrolledSteps {
  int sequence = -1;
  int axis = 0;
  std::vector<int> x;       // per step
  std::vector<int> slices;  // the STRIDED_SLICE ops (empty for UNPACK)
};

bool int_constant(const Graph& g, int t, size_t n, std::vector<int32_t>* v) {
  const std::vector<uint8_t>* d = g.data(t);
  if (!d || g.tensor(t).type != fb::TensorType::INT32 || d->size() != 4 * n) return false;
  v->resize(n);
  if (n > 0) std::memcpy(v->data(), d->data(), d->size());
  return true;
}

// The step STRIDED_SLICE `op` takes (axis in *axis), or -1 when it is not one.
int step_slice_index(const Graph& g, int op, int* axis) {
  const fb::OperatorT& o = g.op(op);
  const auto* opt = o.builtin_options.AsStridedSliceOptions();
  if (g.code(op) != Op::STRIDED_SLICE || !opt || o.inputs.size() != 4 || o.outputs.size() != 1 ||
      opt->ellipsis_mask != 0 || opt->new_axis_mask != 0 ||
      (opt->shrink_axis_mask != 1 && opt->shrink_axis_mask != 2) || !g.valid(o.inputs[0])) {
    return -1;
  }
  const auto& shape = g.shape(o.inputs[0]);
  std::vector<int32_t> begin, end, strides;
  if (shape.size() != 3 || !int_constant(g, o.inputs[1], 3, &begin) ||
      !int_constant(g, o.inputs[2], 3, &end) || !int_constant(g, o.inputs[3], 3, &strides)) {
    return -1;
  }
  const int a = opt->shrink_axis_mask == 1 ? 0 : 1;
  for (int b = 0; b < 3; ++b) {
    if (strides[static_cast<size_t>(b)] != 1) return -1;
    if (b == a) continue;
    const bool whole_begin = (opt->begin_mask >> b & 1) || begin[static_cast<size_t>(b)] == 0;
    const bool whole_end =
        (opt->end_mask >> b & 1) || end[static_cast<size_t>(b)] == shape[static_cast<size_t>(b)];
    if (!whole_begin || !whole_end) return -1;
  }
  int index = begin[static_cast<size_t>(a)];
  if (opt->begin_mask >> a & 1) index = 0;
  if (index < 0) index += shape[static_cast<size_t>(a)];
  if (index < 0 || index >= shape[static_cast<size_t>(a)]) return -1;
  *axis = a;
  return index;
}

// The steps that start at `op` (an UNPACK, or the first STRIDED_SLICE of step 0).
bool unrolled_steps(const Graph& g, int op, const std::vector<std::vector<int>>& consumers,
                    UnrolledSteps* out) {
  const fb::OperatorT& o = g.op(op);
  if (o.inputs.empty() || !g.valid(o.inputs[0])) return false;
  out->sequence = o.inputs[0];
  const auto& shape = g.shape(out->sequence);
  if (shape.size() != 3) return false;
  if (g.code(op) == Op::UNPACK) {
    const auto* opt = o.builtin_options.AsUnpackOptions();
    if (!opt) return false;
    out->axis = opt->axis < 0 ? opt->axis + 3 : opt->axis;
    if (out->axis > 1 || o.outputs.size() != static_cast<size_t>(shape[out->axis])) return false;
    out->x.assign(o.outputs.begin(), o.outputs.end());
    return true;
  }
  if (step_slice_index(g, op, &out->axis) != 0) return false;
  const int T = shape[static_cast<size_t>(out->axis)];
  out->x.assign(static_cast<size_t>(T), -1);
  out->slices.assign(static_cast<size_t>(T), -1);
  for (int reader : consumers[static_cast<size_t>(out->sequence)]) {
    int axis = -1;
    const int t = step_slice_index(g, reader, &axis);
    if (t < 0 || axis != out->axis || g.op(reader).inputs[0] != out->sequence ||
        out->slices[static_cast<size_t>(t)] >= 0) {
      continue;
    }
    out->slices[static_cast<size_t>(t)] = reader;
    out->x[static_cast<size_t>(t)] = g.op(reader).outputs[0];
  }
  // One chain per sequence: it starts at the first slice of step 0.
  return out->slices[0] == op && std::find(out->x.begin(), out->x.end(), -1) == out->x.end();
}

// The ops computing `states` from x_0 and constants alone (at most 64 of them): a first
// step whose zero-state products the converter folded. False when a state reads anything
// else (a model input, another layer's value) or does not depend on x_0.
bool folded_first_step(const Graph& g, int x0, std::vector<int> states, std::set<int>* ops) {
  bool reads_x = false;
  while (!states.empty()) {
    const int v = states.back();
    states.pop_back();
    if (v == x0) {
      reads_x = true;
      continue;
    }
    if (v < 0 || g.is_const(v)) continue;
    const int p = g.producer(v);
    if (p < 0) return false;
    if (!ops->insert(p).second) continue;
    if (ops->size() > 64) return false;
    for (int32_t in : g.op(p).inputs) states.push_back(in);
  }
  return reads_x;
}

// Steps of a [T,B,F] (or [B,T,F]) sequence that each feed one cell, chained
// through h (and c): step t's state input is step t-1's h' (c'). Step 0 starts
// from whatever state the model gives (zeros, FILL, a model input or a slice
// of one: streaming models); the fuser decides what it can express.
bool analyze_unrolled(const ModelDef& def, const EngineFacts& facts, int subgraph, int first_op,
                      DetectedCell* cell) {
  Graph g(def, subgraph, &facts);
  // Consumers per tensor, to walk forward from h_t to step t+1.
  std::vector<std::vector<int>> consumers(g.sg().tensors.size());
  for (size_t i = 0; i < g.sg().operators.size(); ++i) {
    for (int32_t t : g.sg().operators[i]->inputs) {
      if (g.valid(t)) consumers[static_cast<size_t>(t)].push_back(static_cast<int>(i));
    }
  }
  UnrolledSteps steps;
  if (!unrolled_steps(g, first_op, consumers, &steps)) return false;
  const auto& seq_shape = g.shape(steps.sequence);
  // Candidate h' of step t: outputs of ADD/MUL/TANH/RELU ops downstream of x_t
  // (a bounded forward walk), tried in op order.
  auto candidates = [&](int x) {
    std::set<int> seen_ops;
    std::vector<int> frontier = {x};
    std::vector<int> result;
    for (int depth = 0; depth < 12 && !frontier.empty(); ++depth) {
      std::vector<int> next;
      for (int t : frontier) {
        for (int o : consumers[static_cast<size_t>(t)]) {
          if (!seen_ops.insert(o).second) continue;
          for (int32_t out : g.op(o).outputs) {
            next.push_back(out);
            Op c = g.code(o);
            if (c == Op::ADD || c == Op::MUL || c == Op::TANH || c == Op::RELU)
              result.push_back(out);
          }
        }
      }
      frontier = next;
    }
    return result;
  };
  std::vector<CellMatch> chain;
  std::vector<int> hidden;
  int h_prev = -1, c_prev = -1;
  size_t start = 0;  // 1 when step 0 is a constant-folded zero-state step (below)
  for (size_t t = 0; t < steps.x.size(); ++t) {
    const int x = steps.x[t];
    // Several tensors of a step can look like a cell (an LSTM's TANH(g) reads
    // like a SimpleRNN's h'): the match that explains the most ops wins.
    bool found = false;
    CellMatch best;
    int best_h = -1;
    for (int cand : candidates(x)) {
      CellMatch cm;
      if (!match_cell(
              g, cand, [x](int v) { return v == x; }, &cm, nullptr))
        continue;
      // Step 0's state comes from before the chain (not from this step's ops).
      const auto outside = [&](int v) {
        const int p = g.producer(v);
        return v != x && (p < 0 || !cm.ops.count(p));
      };
      const bool h_ok = t == start ? outside(cm.h_in) : cm.h_in == h_prev;
      const bool c_ok = cm.type->states != 2 || (t == start ? outside(cm.c_in) : cm.c_in == c_prev);
      if (!h_ok || !c_ok) continue;
      if (!chain.empty() &&
          (cm.type != chain[0].type || cm.reset_after != chain[0].reset_after ||
           cm.gate_activation != chain[0].gate_activation || cm.activation != chain[0].activation ||
           !same_weights(cm.weights, chain[0].weights))) {
        continue;
      }
      if (found && cm.ops.size() <= best.ops.size()) continue;
      best = cm;
      best_h = cand;
      found = true;
    }
    if (!found && t == 0 && steps.x.size() >= 2) {
      start = 1;  // perhaps folded: the chain may start at step 1
      continue;
    }
    if (!found) return false;
    chain.push_back(best);
    hidden.push_back(best_h);
    h_prev = best_h;
    c_prev = best.c_out;
  }
  if (chain.empty()) return false;
  // With a constant zero state a converter may fold step 0's recurrent products away
  // (FC(0, U) = b, f * 0 = 0), leaving a step that reads x_0 and constants only. Those ops
  // become part of the cell, which then starts from zeros; the fuser keeps the rewrite only
  // if the outputs agree, so a step 0 that was something else is caught there.
  std::set<int> first_step_ops;
  if (start == 1) {
    std::vector<int> states = {chain[0].h_in};
    if (chain[0].type->states == 2) states.push_back(chain[0].c_in);
    if (!folded_first_step(g, steps.x[0], states, &first_step_ops)) return false;
    hidden.insert(hidden.begin(), chain[0].h_in);
  }
  fill_from_match(chain[0], cell);
  cell->form = CellForm::kUnrolled;
  cell->subgraph = subgraph;
  cell->op = first_op;
  cell->timesteps = seq_shape[static_cast<size_t>(steps.axis)];
  cell->batch = seq_shape[static_cast<size_t>(1 - steps.axis)];
  cell->sequence_tensor = steps.sequence;
  cell->time_axis = steps.axis;
  cell->step_slices = !steps.slices.empty();
  cell->final_hidden = h_prev;
  cell->step_hidden = hidden;
  cell->final_cell = chain.back().type->states == 2 ? chain.back().c_out : -1;
  cell->initial_hidden = start == 1 ? -1 : chain[0].h_in;
  cell->initial_cell = start == 1 ? -1 : chain[0].c_in;
  cell->folded_first_step = start == 1;
  std::set<int> ops = first_step_ops;
  if (steps.slices.empty()) ops.insert(first_op);
  ops.insert(steps.slices.begin(), steps.slices.end());
  for (const CellMatch& cm : chain) ops.insert(cm.ops.begin(), cm.ops.end());
  cell->cell_ops.assign(ops.begin(), ops.end());
  cell->summary = summary(*cell);
  if (cell->folded_first_step) cell->summary += " (step 0 folded from a zero state)";
  return true;
}

// Whether any FC among `ops` of `subgraph` has int8 weights (a hybrid cell), and how those
// FCs quantize their inputs at run time (asymmetric_quantize_inputs; "mixed" when they differ).
void hybrid_facts(const ModelDef& def, int subgraph, const std::vector<int>& ops,
                  DetectedCell* cell) {
  if (subgraph < 0 || static_cast<size_t>(subgraph) >= def.subgraphs.size()) return;
  Graph g(def, subgraph);
  int asymmetric = 0, symmetric = 0;
  for (int o : ops) {
    if (g.code(o) != Op::FULLY_CONNECTED || g.op(o).inputs.size() < 2 ||
        !g.is_int8_weight(g.op(o).inputs[1])) {
      continue;
    }
    cell->hybrid = true;
    const auto* opt = g.op(o).builtin_options.AsFullyConnectedOptions();
    (opt && opt->asymmetric_quantize_inputs ? asymmetric : symmetric) += 1;
  }
  cell->hybrid_inputs = asymmetric && symmetric ? "mixed" : asymmetric ? "asymmetric" : "symmetric";
}

}  // namespace

const char* cell_form_name(CellForm form) {
  return form == CellForm::kWhile ? "while" : "unrolled";
}

CellConfig cell_config(const DetectedCell& c) {
  CellConfig config;
  config.features = c.features;
  config.units = c.units;
  config.reset_after = c.reset_after;
  config.gate_activation = c.gate_activation;
  config.activation = c.activation;
  return config;
}

DetectionReport detect_rnn_cells(const ModelDef& model) {
  DetectionReport report;
  const EngineFacts facts = engine_facts(model);
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    const fb::SubGraphT& sg = *model.subgraphs[s];
    for (size_t i = 0; i < sg.operators.size(); ++i) {
      const uint32_t code_index = sg.operators[i]->opcode_index;
      if (code_index >= model.operator_codes.size()) continue;
      const Op code = model.operator_codes[code_index]->builtin_code;
      DetectedCell cell;
      if (code == Op::WHILE) {
        std::string reason;
        if (analyze_while(model, facts, static_cast<int>(s), static_cast<int>(i), &cell, &reason)) {
          report.cells.push_back(std::move(cell));
        } else {
          OtherLoop other;
          other.subgraph = static_cast<int>(s);
          other.op = static_cast<int>(i);
          other.cond_subgraph = cell.cond_subgraph;
          other.body_subgraph = cell.body_subgraph;
          other.reason = reason;
          report.other_loops.push_back(other);
        }
      } else if (code == Op::UNPACK || code == Op::STRIDED_SLICE) {
        if (analyze_unrolled(model, facts, static_cast<int>(s), static_cast<int>(i), &cell)) {
          report.cells.push_back(std::move(cell));
        }
      }
    }
  }
  for (DetectedCell& cell : report.cells) {
    hybrid_facts(model, cell.form == CellForm::kWhile ? cell.body_subgraph : cell.subgraph,
                 cell.cell_ops, &cell);
  }
  return report;
}

}  // namespace gruwb::tools
