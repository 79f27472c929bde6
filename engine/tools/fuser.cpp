#include "engine/tools/fuser.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "engine/tools/analyzer.h"
#include "engine/tools/graph_writer.h"
#include "engine/tools/initializers.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/tensor_list_lowering.h"

namespace gruwb::tools {
namespace {

using Op = BuiltinOperator;
using Dims = std::vector<int32_t>;

Op code_of(const ModelDef& def, const fb::OperatorT& op) {
  return def.operator_codes[op.opcode_index]->builtin_code;
}

// Is op `o` a STRIDED_SLICE that takes the last element of axis 0 of a
// rank-3 tensor and drops that axis (what follows a converter's RNN loop)?
bool is_last_step_slice(const ModelDef& def, const fb::SubGraphT& sg, const fb::OperatorT& o) {
  if (code_of(def, o) != Op::STRIDED_SLICE || o.inputs.size() != 4) return false;
  const auto* opt = o.builtin_options.AsStridedSliceOptions();
  if (!opt || opt->shrink_axis_mask != 1 || opt->ellipsis_mask != 0 || opt->new_axis_mask != 0 ||
      (opt->begin_mask & 1) || (opt->end_mask & 1) != 0 || (opt->begin_mask & 6) != 6 ||
      (opt->end_mask & 6) != 6) {
    return false;
  }
  auto values = [&](int t, std::vector<int32_t>* v) {
    const std::vector<uint8_t>* data = constant_data(def, sg, t);
    if (!data || data->size() != 12) return false;
    v->resize(3);
    std::memcpy(v->data(), data->data(), 12);
    return true;
  };
  std::vector<int32_t> begin, end, strides;
  if (!values(o.inputs[1], &begin) || !values(o.inputs[2], &end) ||
      !values(o.inputs[3], &strides)) {
    return false;
  }
  return begin[0] == -1 && end[0] == 0 && strides[0] == 1;
}

// The cell as its descriptor's fused emitter takes it.
FusedCell fused_cell(const DetectedCell& c, ModelFormat format) {
  FusedCell f;
  f.config = cell_config(c);
  f.weights = &c.weights;
  f.batch = c.batch;
  f.timesteps = c.timesteps;
  f.hybrid = c.hybrid;
  f.hybrid_inputs = c.hybrid_inputs;
  f.format = format;
  return f;
}

// Why the fused op cannot express the cell ("" when it can): a hybrid cell's int8 weights
// with no place in it (the fused kernels quantize x and h at run time as the loop's hybrid FCs
// do, docs/fused-gru-op.md), or what the cell's descriptor says (gate activations, one scale
// per gate block for TFLite's LSTM and RNN).
std::string fused_problem(const DetectedCell& c) {
  if (c.hybrid && c.hybrid_inputs == "mixed") {
    return "hybrid cell whose FCs quantize their inputs differently (asymmetric and symmetric)";
  }
  for (const std::vector<float>* scales :
       {&c.weights.kernel_scales, &c.weights.recurrent_kernel_scales}) {
    const bool all = std::all_of(scales->begin(), scales->end(), [](float x) { return x > 0; });
    const bool none = std::all_of(scales->begin(), scales->end(), [](float x) { return x == 0; });
    if (c.hybrid && !all && !none) {
      return "hybrid cell with int8 and float32 (or zero-point) weight rows in one product";
    }
  }
  return c.type->fused_problem(fused_cell(c, ModelFormat::kTflite));
}

// Emits the fused op with the cell's descriptor; returns the op's name.
std::string emit_fused(GraphWriter& g, const DetectedCell& c, ModelFormat format, FusedPlan* plan) {
  return c.type->emit_fused(g, fused_cell(c, format), plan);
}

bool takes_state(const DetectedCell& c, ModelFormat format) {
  return c.type->fused_takes_state(cell_config(c), format, c.hybrid);
}

std::string fused_op_name(const DetectedCell& c, ModelFormat format) {
  return c.type->fused_op(cell_config(c), format, c.hybrid);
}

struct Uses {
  std::vector<std::vector<int>> consumers;  // op indices per tensor
  std::vector<bool> is_output;
};

Uses find_uses(const fb::SubGraphT& sg) {
  Uses u;
  u.consumers.resize(sg.tensors.size());
  u.is_output.assign(sg.tensors.size(), false);
  for (size_t i = 0; i < sg.operators.size(); ++i) {
    for (int32_t t : sg.operators[i]->inputs) {
      if (t >= 0 && static_cast<size_t>(t) < sg.tensors.size()) {
        u.consumers[static_cast<size_t>(t)].push_back(static_cast<int>(i));
      }
    }
  }
  for (int32_t t : sg.outputs) {
    if (t >= 0 && static_cast<size_t>(t) < sg.tensors.size())
      u.is_output[static_cast<size_t>(t)] = true;
  }
  return u;
}

bool is_flex(const ModelDef& def, const fb::OperatorT& o, const char* custom_code) {
  return code_of(def, o) == Op::CUSTOM &&
         def.operator_codes[o.opcode_index]->custom_code == custom_code;
}

// SHAPE(t): reads only t's shape, which the fused op's outputs keep.
bool is_shape_of(const ModelDef& def, const fb::OperatorT& o, int t) {
  return code_of(def, o) == Op::SHAPE && !o.inputs.empty() && o.inputs[0] == t;
}

// RESHAPE(acc, SHAPE(acc)) read only by a last-step slice (TF 2.x converters write the
// list stack this way): the index of that slice op, else -1.
int identity_reshape_then_last_step(const ModelDef& def, const fb::SubGraphT& sg, const Uses& uses,
                                    const fb::OperatorT& o, int acc) {
  if (code_of(def, o) != Op::RESHAPE || o.inputs.size() != 2 || o.outputs.size() != 1) return -1;
  bool shape_of_acc = false;
  for (const auto& p : sg.operators) {
    if (!p->outputs.empty() && p->outputs[0] == o.inputs[1])
      shape_of_acc = is_shape_of(def, *p, acc);
  }
  const int out = o.outputs[0];
  const auto& readers = uses.consumers[static_cast<size_t>(out)];
  if (!shape_of_acc || uses.is_output[static_cast<size_t>(out)] || readers.size() != 1 ||
      !is_last_step_slice(def, sg, *sg.operators[static_cast<size_t>(readers[0])])) {
    return -1;
  }
  return readers[0];
}

void replace_uses(ModelDef* def, int subgraph, int from, int to) {
  fb::SubGraphT& sg = *def->subgraphs[static_cast<size_t>(subgraph)];
  for (auto& o : sg.operators) {
    for (int32_t& t : o->inputs) {
      if (t == from) t = to;
    }
  }
  for (int32_t& t : sg.outputs) {
    if (t == from) t = to;
  }
  for (auto& s : def->signature_defs) {
    if (static_cast<int>(s->subgraph_index) != subgraph) continue;
    for (auto& m : s->outputs) {
      if (static_cast<int>(m->tensor_index) == from) m->tensor_index = static_cast<uint32_t>(to);
    }
  }
}

bool all_zero_buffer(const ModelDef& def, const fb::SubGraphT& sg, int t) {
  const std::vector<uint8_t>* d = constant_data(def, sg, t);
  return d && std::all_of(d->begin(), d->end(), [](uint8_t v) { return v == 0; });
}

// A zero initial state: a constant of zeros, or FILL(dims, 0.0), which the
// converter writes when the batch is dynamic (dims = PACK(SHAPE(x)[0], H)).
bool all_zero_constant(const ModelDef& def, const fb::SubGraphT& sg, int t) {
  if (t < 0) return true;
  if (all_zero_buffer(def, sg, t)) return true;
  for (const auto& o : sg.operators) {
    if (std::find(o->outputs.begin(), o->outputs.end(), t) == o->outputs.end()) continue;
    return code_of(def, *o) == Op::FILL && o->inputs.size() == 2 &&
           all_zero_buffer(def, sg, o->inputs[1]);
  }
  return false;
}

// Chooses the batch-major input when the time-major sequence is only a
// TRANSPOSE [1,0,2] of it feeding the cell (the converter's pattern).
void choose_input(const ModelDef& def, const fb::SubGraphT& sg, const Uses& uses,
                  const DetectedCell& c, ModelFormat format, FusedPlan* plan) {
  plan->input = c.sequence_tensor;
  plan->time_major = true;
  if (plan->need_sequence || c.type->fused_needs_time_major(cell_config(c), format, c.hybrid))
    return;
  const int seq = c.sequence_tensor;
  if (uses.consumers[static_cast<size_t>(seq)].size() != 1 ||
      uses.is_output[static_cast<size_t>(seq)])
    return;
  for (const auto& o : sg.operators) {
    if (std::find(o->outputs.begin(), o->outputs.end(), seq) == o->outputs.end()) continue;
    if (code_of(def, *o) != Op::TRANSPOSE || o->inputs.size() != 2) return;
    const std::vector<uint8_t>* permutation = constant_data(def, sg, o->inputs[1]);
    if (!permutation || permutation->size() != 12) return;
    int32_t perm[3];
    std::memcpy(perm, permutation->data(), 12);
    if (perm[0] != 1 || perm[1] != 0 || perm[2] != 2) return;
    plan->input = o->inputs[0];
    plan->time_major = false;
  }
}

void splice(fb::SubGraphT& sg, int position, std::set<int> removed, GraphWriter& g) {
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  for (size_t i = 0; i < sg.operators.size(); ++i) {
    if (static_cast<int>(i) == position) {
      for (auto& o : g.held_ops()) ops.push_back(std::move(o));
    }
    if (!removed.count(static_cast<int>(i))) ops.push_back(std::move(sg.operators[i]));
  }
  sg.operators = std::move(ops);
}

bool rewrite_while(ModelDef* def, const DetectedCell& c, ModelFormat format, std::string* fused_op,
                   std::string* error, bool stateful) {
  fb::SubGraphT& sg = *def->subgraphs[static_cast<size_t>(c.subgraph)];
  const fb::OperatorT& loop = *sg.operators[static_cast<size_t>(c.op)];
  const Uses uses = find_uses(sg);
  // Streaming models pass the state in (a model input, or a slice of one); GRUWB_GRU takes
  // it as h_0. TFLite's LSTM/RNN ops keep theirs in variable tensors instead.
  const bool zero_state = all_zero_constant(*def, sg, c.initial_hidden);
  // Stateful: the LSTM/RNN op's variable tensors carry the state from invoke to invoke instead.
  const bool keeps_state = stateful && c.type->fused_keeps_state;
  if (!keeps_state &&
      (!all_zero_constant(*def, sg, c.initial_cell) || (!zero_state && !takes_state(c, format)))) {
    *error = "the loop does not start from a zero state, and the fused " +
             fused_op_name(c, format) + " op takes no initial state";
    return false;
  }
  std::set<int> removed = {c.op};
  std::vector<int> last_slices;                // consumers replaced by h_final
  std::vector<std::pair<int, int>> sequences;  // (WHILE output, role) needing the sequence
  std::vector<int> last_outputs;               // accumulators [1,B,H] used otherwise
  std::vector<std::pair<int, int>> passthrough;
  int h_result = -1, c_result = -1;
  FusedPlan plan;
  for (size_t i = 0; i < loop.outputs.size(); ++i) {
    const int t = loop.outputs[i];
    const bool used =
        !uses.consumers[static_cast<size_t>(t)].empty() || uses.is_output[static_cast<size_t>(t)];
    if (!used) continue;
    const std::string name = "'" + sg.tensors[static_cast<size_t>(t)]->name + "'";
    switch (c.loop_roles[i]) {
      case LoopRole::kInvariant: passthrough.push_back({t, loop.inputs[i]}); break;
      case LoopRole::kHidden: h_result = t; break;
      case LoopRole::kLastOutput:
      case LoopRole::kSequenceAccumulator: {
        bool other = uses.is_output[static_cast<size_t>(t)];
        for (int o : uses.consumers[static_cast<size_t>(t)]) {
          const fb::OperatorT& reader = *sg.operators[static_cast<size_t>(o)];
          if (is_flex(*def, reader, "FlexTensorListStack")) {
            // The stacked list is the dense [T,B,H] (or [1,B,H]) accumulator itself.
            removed.insert(o);
            const int stacked = reader.outputs[0];
            if (c.loop_roles[i] == LoopRole::kSequenceAccumulator) {
              plan.need_sequence = true;
              sequences.push_back({stacked, 0});
            } else {
              last_outputs.push_back(stacked);
            }
          } else if (is_last_step_slice(*def, sg, reader)) {
            last_slices.push_back(o);
          } else if (int slice = identity_reshape_then_last_step(*def, sg, uses, reader, t);
                     slice >= 0) {
            last_slices.push_back(slice);  // the reshape and its SHAPE die with it
          } else if (!is_shape_of(*def, reader, t)) {
            other = true;
          }
        }
        if (other && c.loop_roles[i] == LoopRole::kSequenceAccumulator) {
          plan.need_sequence = true;
          sequences.push_back({t, 0});
        } else if (other) {
          last_outputs.push_back(t);
        }
        break;
      }
      case LoopRole::kCounter:
        *error =
            "loop value " + std::to_string(i) + " " + name + " (a counter) is used after the loop";
        return false;
      case LoopRole::kCell:
        if (keeps_state) {  // read from the op's cell-state variable, after the op
          c_result = t;
          break;
        }
        *error = "the LSTM cell state " + name +
                 " is used after the loop (the fused op only outputs h; `--stateful` keeps it in "
                 "the op's variable tensor)";
        return false;
      case LoopRole::kOther:
        *error = "loop value " + std::to_string(i) + " " + name +
                 " is used after the loop and is not h or an output accumulator";
        return false;
    }
  }
  choose_input(*def, sg, uses, c, format, &plan);
  if (!zero_state && !keeps_state) plan.initial_state = c.initial_hidden;
  GraphWriter e(def, c.subgraph, GraphWriter::kHoldOps);
  plan.h_final = h_result;
  const bool need_h = h_result >= 0 || !last_slices.empty() || !last_outputs.empty();
  plan.need_last = need_h;
  if (!sequences.empty()) plan.sequence = sequences[0].first;
  *fused_op = emit_fused(e, c, format, &plan);
  for (int o : last_slices) {
    removed.insert(o);
    replace_uses(def, c.subgraph, sg.operators[static_cast<size_t>(o)]->outputs[0], plan.h_final);
  }
  for (int acc : last_outputs) {
    const auto& shape = sg.tensors[static_cast<size_t>(acc)]->shape;
    fb::ReshapeOptionsT options;
    options.new_shape = shape;
    e.op(Op::RESHAPE,
         {plan.h_final,
          e.constant_i32("last_output/shape", {static_cast<int32_t>(shape.size())}, shape)},
         {acc}, options);
  }
  for (size_t k = 1; k < sequences.size(); ++k)
    replace_uses(def, c.subgraph, sequences[k].first, plan.sequence);
  for (auto& [from, to] : passthrough) replace_uses(def, c.subgraph, from, to);
  if (c_result >= 0) replace_uses(def, c.subgraph, c_result, plan.cell_state);
  splice(sg, c.op, removed, e);
  return true;
}

std::string quoted_name(const fb::SubGraphT& sg, int t) {
  return "'" + sg.tensors[static_cast<size_t>(t)]->name + "'";
}

// A PACK of every step's h in step order (the layer's output sequence, [T,B,H]
// along axis 0 or [B,T,H] along axis 1): its op index, else -1.
int sequence_pack(const ModelDef& def, const fb::SubGraphT& sg, const Uses& uses,
                  const DetectedCell& c, int* axis) {
  if (c.step_hidden.empty()) return -1;
  for (int o : uses.consumers[static_cast<size_t>(c.step_hidden[0])]) {
    const fb::OperatorT& op = *sg.operators[static_cast<size_t>(o)];
    const auto* opt = op.builtin_options.AsPackOptions();
    if (code_of(def, op) != Op::PACK || !opt || op.outputs.size() != 1 ||
        op.inputs != std::vector<int32_t>(c.step_hidden.begin(), c.step_hidden.end())) {
      continue;
    }
    const int a = opt->axis < 0 ? opt->axis + 3 : opt->axis;
    if (a != 0 && a != 1) continue;
    *axis = a;
    return o;
  }
  return -1;
}

// Reorders ops so each comes after the producers of its inputs, keeping the
// original order where it allows (a fused op may read a state computed after
// the op it replaces, e.g. a STRIDED_SLICE of a state input).
void sort_topologically(fb::SubGraphT& sg) {
  const size_t n = sg.operators.size();
  std::vector<int> producer(sg.tensors.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t t : sg.operators[i]->outputs) {
      if (t >= 0 && static_cast<size_t>(t) < producer.size())
        producer[static_cast<size_t>(t)] = static_cast<int>(i);
    }
  }
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<int>> readers(n);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t t : sg.operators[i]->inputs) {
      if (t < 0 || static_cast<size_t>(t) >= producer.size()) continue;
      const int p = producer[static_cast<size_t>(t)];
      if (p < 0 || p == static_cast<int>(i)) continue;
      ++waiting[i];
      readers[static_cast<size_t>(p)].push_back(static_cast<int>(i));
    }
  }
  std::set<int> ready;
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.insert(static_cast<int>(i));
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int r : readers[static_cast<size_t>(i)]) {
      if (--waiting[static_cast<size_t>(r)] == 0) ready.insert(r);
    }
  }
  if (order.size() != n) return;  // a cycle: leave the order as it was
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  for (int i : order) ops.push_back(std::move(sg.operators[static_cast<size_t>(i)]));
  sg.operators = std::move(ops);
}

// Why the fused op cannot replace the chain: hybrid weights, or a state it cannot take
// as it comes and goes ("" when it can).
std::string unrolled_state_problem(const ModelDef& def, const fb::SubGraphT& sg,
                                   const DetectedCell& c, ModelFormat format, bool final_cell_read,
                                   bool keeps_state) {
  std::vector<std::string> problems;
  const std::string op = fused_op_name(c, format);
  if (const std::string hybrid = fused_problem(c); !hybrid.empty()) problems.push_back(hybrid);
  if (keeps_state) {  // stateful: the op's variable tensors carry h and c between invokes
  } else if (final_cell_read) {
    problems.push_back("the last step's cell state c " + quoted_name(sg, c.final_cell) +
                       " is read after the chain (a state output), and " + op +
                       " outputs only h, not c");
  }
  const bool zero_h = all_zero_constant(def, sg, c.initial_hidden);
  const bool zero_c = all_zero_constant(def, sg, c.initial_cell);
  if (!keeps_state && ((!zero_h && !takes_state(c, format)) || !zero_c)) {
    std::string state = quoted_name(sg, c.initial_hidden);
    if (c.initial_cell >= 0) state += " and " + quoted_name(sg, c.initial_cell);
    problems.push_back("step 0 starts from the state " + state + " (not zeros), and " + op +
                       (!c.type->fused_keeps_state
                            ? " takes a constant initial state"
                            : " takes its initial state only from variable tensors, which "
                              "a model input or another op cannot set (`--stateful` keeps the "
                              "state in them between invokes instead)"));
  }
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
  return text;
}

bool rewrite_unrolled(ModelDef* def, const DetectedCell& c, ModelFormat format,
                      std::string* fused_op, std::string* error, bool stateful) {
  const bool keeps_state = stateful && c.type->fused_keeps_state;
  fb::SubGraphT& sg = *def->subgraphs[static_cast<size_t>(c.subgraph)];
  const Uses uses = find_uses(sg);
  std::set<int> removed(c.cell_ops.begin(), c.cell_ops.end());
  int pack_axis = 0;
  const int pack = sequence_pack(*def, sg, uses, c, &pack_axis);
  if (pack >= 0) removed.insert(pack);
  const auto read_outside = [&](int t) {
    bool outside = uses.is_output[static_cast<size_t>(t)];
    for (int reader : uses.consumers[static_cast<size_t>(t)]) outside |= !removed.count(reader);
    return outside;
  };
  const bool final_cell_read = c.final_cell >= 0 && read_outside(c.final_cell);
  const std::string state_problem =
      unrolled_state_problem(*def, sg, c, format, final_cell_read, keeps_state);
  if (!state_problem.empty()) {
    *error = state_problem;
    return false;
  }
  // Nothing outside the cell may read its intermediate values.
  for (int o : c.cell_ops) {
    for (int32_t t : sg.operators[static_cast<size_t>(o)]->outputs) {
      if (t == c.final_hidden || (keeps_state && t == c.final_cell) || !read_outside(t)) continue;
      *error = "the step value " + quoted_name(sg, t) + " is used outside the recurrent chain";
      return false;
    }
  }
  FusedPlan plan;
  plan.need_sequence = pack >= 0;
  choose_input(*def, sg, uses, c, format, &plan);
  if (c.time_axis == 1) {
    plan.input = c.sequence_tensor;
    plan.time_major = false;
  }
  if (!keeps_state && !all_zero_constant(*def, sg, c.initial_hidden)) {
    plan.initial_state = c.initial_hidden;
  }
  plan.h_final = c.final_hidden;
  plan.need_last = read_outside(c.final_hidden);
  int pack_out = -1;
  if (pack >= 0) {
    pack_out = sg.operators[static_cast<size_t>(pack)]->outputs[0];
    if ((pack_axis == 0) == plan.time_major) plan.sequence = pack_out;
  }
  GraphWriter e(def, c.subgraph, GraphWriter::kHoldOps);
  *fused_op = emit_fused(e, c, format, &plan);
  if (pack >= 0 && plan.sequence != pack_out) {
    fb::TransposeOptionsT options;
    e.op(Op::TRANSPOSE, {plan.sequence, e.constant_i32("sequence/perm", {3}, {1, 0, 2})},
         {pack_out}, options);
  }
  if (final_cell_read) replace_uses(def, c.subgraph, c.final_cell, plan.cell_state);
  splice(sg, *removed.begin(), removed, e);
  sort_topologically(sg);
  return true;
}

bool is_pure(Op code) {
  switch (code) {
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
    case Op::FULLY_CONNECTED:
    case Op::SPLIT:
    case Op::SPLIT_V:
    case Op::LOGISTIC:
    case Op::TANH:
    case Op::RELU:
    case Op::GATHER:
    case Op::RESHAPE:
    case Op::TRANSPOSE:
    case Op::STRIDED_SLICE:
    case Op::SLICE:
    case Op::CONCATENATION:
    case Op::UNPACK:
    case Op::PACK:
    case Op::MINIMUM:
    case Op::MAXIMUM:
    case Op::LESS:
    case Op::SQUEEZE:
    case Op::EXPAND_DIMS:
    case Op::CAST:
    case Op::SHAPE:
    case Op::RANK:
    case Op::FILL: return true;
    default: return false;
  }
}

void called_subgraphs(const fb::OperatorT& o, std::vector<int32_t*>* out) {
  auto& u = const_cast<fb::BuiltinOptionsUnion&>(o.builtin_options);
  if (auto* w = u.AsWhileOptions())
    out->insert(out->end(), {&w->cond_subgraph_index, &w->body_subgraph_index});
  if (auto* i = u.AsIfOptions())
    out->insert(out->end(), {&i->then_subgraph_index, &i->else_subgraph_index});
  if (auto* c = u.AsCallOnceOptions()) out->push_back(&c->init_subgraph_index);
}

void remove_dead_ops(ModelDef* def) {
  for (auto& sgp : def->subgraphs) {
    fb::SubGraphT& sg = *sgp;
    for (bool changed = true; changed;) {
      changed = false;
      Uses uses = find_uses(sg);
      for (size_t i = sg.operators.size(); i-- > 0;) {
        const fb::OperatorT& o = *sg.operators[i];
        const bool flex_list =
            code_of(*def, o) == Op::CUSTOM &&
            def->operator_codes[o.opcode_index]->custom_code.rfind("FlexTensorList", 0) == 0;
        if (!is_pure(code_of(*def, o)) && !flex_list) continue;
        bool used = false;
        for (int32_t t : o.outputs) {
          if (t >= 0 && (uses.is_output[static_cast<size_t>(t)] ||
                         !uses.consumers[static_cast<size_t>(t)].empty()))
            used = true;
        }
        if (used) continue;
        sg.operators.erase(sg.operators.begin() + static_cast<ptrdiff_t>(i));
        changed = true;
        uses = find_uses(sg);
      }
    }
  }
}

void remove_unused_subgraphs(ModelDef* def) {
  const size_t n = def->subgraphs.size();
  std::vector<bool> reached(n, false);
  std::vector<int> stack = {0};
  for (const auto& s : def->signature_defs) stack.push_back(static_cast<int>(s->subgraph_index));
  while (!stack.empty()) {
    int s = stack.back();
    stack.pop_back();
    if (s < 0 || static_cast<size_t>(s) >= n || reached[static_cast<size_t>(s)]) continue;
    reached[static_cast<size_t>(s)] = true;
    for (const auto& o : def->subgraphs[static_cast<size_t>(s)]->operators) {
      std::vector<int32_t*> called;
      called_subgraphs(*o, &called);
      for (int32_t* c : called) stack.push_back(*c);
    }
  }
  std::vector<int32_t> new_index(n, -1);
  std::vector<std::unique_ptr<fb::SubGraphT>> kept;
  for (size_t i = 0; i < n; ++i) {
    if (!reached[i]) continue;
    new_index[i] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(def->subgraphs[i]));
  }
  def->subgraphs = std::move(kept);
  for (auto& sg : def->subgraphs) {
    for (auto& o : sg->operators) {
      std::vector<int32_t*> called;
      called_subgraphs(*o, &called);
      for (int32_t* c : called) {
        if (*c >= 0 && static_cast<size_t>(*c) < n) *c = new_index[static_cast<size_t>(*c)];
      }
    }
  }
  for (auto& s : def->signature_defs) {
    s->subgraph_index = static_cast<uint32_t>(new_index[s->subgraph_index]);
  }
}

void remove_unused_tensors(ModelDef* def) {
  for (size_t s = 0; s < def->subgraphs.size(); ++s) {
    fb::SubGraphT& sg = *def->subgraphs[s];
    std::vector<bool> used(sg.tensors.size(), false);
    auto mark = [&](int32_t t) {
      if (t >= 0 && static_cast<size_t>(t) < used.size()) used[static_cast<size_t>(t)] = true;
    };
    for (const auto& o : sg.operators) {
      for (int32_t t : o->inputs) mark(t);
      for (int32_t t : o->outputs) mark(t);
      for (int32_t t : o->intermediates) mark(t);
    }
    for (int32_t t : sg.inputs) mark(t);
    for (int32_t t : sg.outputs) mark(t);
    for (const auto& sig : def->signature_defs) {
      if (sig->subgraph_index != s) continue;
      for (const auto& m : sig->inputs) mark(static_cast<int32_t>(m->tensor_index));
      for (const auto& m : sig->outputs) mark(static_cast<int32_t>(m->tensor_index));
    }
    std::vector<int32_t> index(sg.tensors.size(), -1);
    std::vector<std::unique_ptr<fb::TensorT>> kept;
    for (size_t i = 0; i < sg.tensors.size(); ++i) {
      if (!used[i]) continue;
      index[i] = static_cast<int32_t>(kept.size());
      kept.push_back(std::move(sg.tensors[i]));
    }
    sg.tensors = std::move(kept);
    auto remap = [&](int32_t& t) {
      if (t >= 0 && static_cast<size_t>(t) < index.size()) t = index[static_cast<size_t>(t)];
    };
    for (auto& o : sg.operators) {
      for (int32_t& t : o->inputs) remap(t);
      for (int32_t& t : o->outputs) remap(t);
      for (int32_t& t : o->intermediates) remap(t);
    }
    for (int32_t& t : sg.inputs) remap(t);
    for (int32_t& t : sg.outputs) remap(t);
    for (auto& sig : def->signature_defs) {
      if (sig->subgraph_index != s) continue;
      for (auto* maps : {&sig->inputs, &sig->outputs}) {
        for (auto& m : *maps) {
          int32_t t = static_cast<int32_t>(m->tensor_index);
          remap(t);
          m->tensor_index = static_cast<uint32_t>(t);
        }
      }
    }
  }
}

void remove_unused_buffers_and_codes(ModelDef* def) {
  std::vector<bool> used(def->buffers.size(), false);
  if (!used.empty()) used[0] = true;  // the empty sentinel
  for (const auto& sg : def->subgraphs) {
    for (const auto& t : sg->tensors) {
      if (t->buffer < used.size()) used[t->buffer] = true;
    }
  }
  for (const auto& m : def->metadata) {
    if (m->buffer < used.size()) used[m->buffer] = true;
  }
  for (int32_t b : def->metadata_buffer) {
    if (b >= 0 && static_cast<size_t>(b) < used.size()) used[static_cast<size_t>(b)] = true;
  }
  std::vector<uint32_t> index(def->buffers.size(), 0);
  std::vector<std::unique_ptr<fb::BufferT>> kept;
  for (size_t i = 0; i < def->buffers.size(); ++i) {
    if (!used[i]) continue;
    index[i] = static_cast<uint32_t>(kept.size());
    kept.push_back(std::move(def->buffers[i]));
  }
  def->buffers = std::move(kept);
  for (auto& sg : def->subgraphs) {
    for (auto& t : sg->tensors) t->buffer = t->buffer < index.size() ? index[t->buffer] : 0;
  }
  for (auto& m : def->metadata) m->buffer = m->buffer < index.size() ? index[m->buffer] : 0;
  for (int32_t& b : def->metadata_buffer) {
    if (b >= 0 && static_cast<size_t>(b) < index.size())
      b = static_cast<int32_t>(index[static_cast<size_t>(b)]);
  }
  // Op codes.
  std::vector<bool> code_used(def->operator_codes.size(), false);
  for (const auto& sg : def->subgraphs) {
    for (const auto& o : sg->operators) {
      if (o->opcode_index < code_used.size()) code_used[o->opcode_index] = true;
    }
  }
  std::vector<uint32_t> code_index(def->operator_codes.size(), 0);
  std::vector<std::unique_ptr<fb::OperatorCodeT>> codes;
  for (size_t i = 0; i < def->operator_codes.size(); ++i) {
    if (!code_used[i]) continue;
    code_index[i] = static_cast<uint32_t>(codes.size());
    codes.push_back(std::move(def->operator_codes[i]));
  }
  def->operator_codes = std::move(codes);
  for (auto& sg : def->subgraphs) {
    for (auto& o : sg->operators) o->opcode_index = code_index[o->opcode_index];
  }
}

std::string cell_key(const ModelDef& def, const DetectedCell& c) {
  const fb::SubGraphT& sg = *def.subgraphs[static_cast<size_t>(c.subgraph)];
  return sg.name + "|" + sg.tensors[static_cast<size_t>(c.sequence_tensor)]->name + "|" +
         cell_form_name(c.form);
}

bool load_and_unpack(const std::vector<uint8_t>& bytes, ModelDef* def, std::string* error) {
  Model model;
  Status status = Model::load(bytes.data(), bytes.size(), &model);
  if (!status.ok()) {
    *error = std::string("invalid model: ") + status.message();
    return false;
  }
  return unpack_model(model, def, error);
}

ModelFormat format_of(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data() + 4, "CIR0", 4) == 0 ? ModelFormat::kCircle
                                                                            : ModelFormat::kTflite;
}

}  // namespace

int FuseResult::fused_count() const {
  int n = 0;
  for (const CellOutcome& c : cells) n += c.fused ? 1 : 0;
  return n;
}

bool rewrite_cell(ModelDef* model, const DetectedCell& cell, ModelFormat format,
                  std::string* fused_op, std::string* error, bool stateful) {
  // Every fused op carries a tanh, relu or linear activation (GRUWB_GRU in its options, the
  // builtin LSTM and RNN ops as fused_activation_function); gates: the descriptor's problem.
  const bool activation_ok =
      cell.activation == "tanh" || cell.activation == "relu" || cell.activation == "linear";
  if (!activation_ok) {
    *error = "unsupported activation " + cell.gate_activation + "/" + cell.activation;
    return false;
  }
  if (const std::string hybrid = fused_problem(cell);
      !hybrid.empty() && cell.form == CellForm::kWhile) {  // rewrite_unrolled says it with the rest
    *error = hybrid;
    return false;
  }
  return cell.form == CellForm::kWhile
             ? rewrite_while(model, cell, format, fused_op, error, stateful)
             : rewrite_unrolled(model, cell, format, fused_op, error, stateful);
}

void remove_unused(ModelDef* model) {
  remove_dead_ops(model);
  remove_unused_subgraphs(model);
  remove_unused_tensors(model);
  remove_unused_buffers_and_codes(model);
}

namespace {

// An input for `t`: uniform in [-1, 1] for float32, zeros otherwise.
NpyArray random_input(Rng& rng, const Tensor* t) {
  NpyArray in;
  in.dtype = npy_dtype_for(t->type);
  in.shape.assign(t->shape.dims, t->shape.dims + t->shape.rank);
  in.data.assign(t->bytes, 0);
  // Not for an empty tensor: memcpy must not get the null data() of an empty vector.
  if (t->type == TensorType::FLOAT32 && t->bytes >= 4) {
    std::vector<float> v = uniform(rng, static_cast<int>(t->bytes / 4), 1.f);
    std::memcpy(in.data.data(), v.data(), t->bytes);
  }
  return in;
}

// The largest difference of two outputs: float32 element by element; other types must be equal
// (else infinity, as for a shape mismatch or a NaN).
double max_float_diff(const NpyArray& x, const NpyArray& y) {
  if (x.dtype != y.dtype || x.data.size() != y.data.size()) return INFINITY;
  if (x.dtype != "<f4") return x.data == y.data ? 0 : INFINITY;
  double worst = 0;
  for (size_t k = 0; k < x.data.size() / 4; ++k) {
    float p, q;
    std::memcpy(&p, x.data.data() + 4 * k, 4);
    std::memcpy(&q, y.data.data() + 4 * k, 4);
    const double d = std::fabs(static_cast<double>(p) - q);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

}  // namespace

bool compare_models(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int trials,
                    uint64_t seed, double* max_abs_diff, std::string* error) {
  Model ma, mb;
  Status sa = Model::load(a.data(), a.size(), &ma);
  Status sb = Model::load(b.data(), b.size(), &mb);
  if (!sa.ok() || !sb.ok()) {
    *error = std::string("cannot load: ") + (sa.ok() ? sb.message() : sa.message());
    return false;
  }
  *max_abs_diff = 0;
  Rng rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    ModelRunner ra, rb;
    if (!ra.prepare(ma, error)) return *error = "original: " + *error, false;
    if (!rb.prepare(mb, error)) return *error = "rewritten: " + *error, false;
    if (ra.input_count() != rb.input_count() || ra.output_count() != rb.output_count()) {
      *error = "the models have different inputs or outputs";
      return false;
    }
    for (int i = 0; i < ra.input_count(); ++i) {
      const NpyArray in = random_input(rng, ra.interpreter().input(i));
      if (!ra.set_input(i, in, error) || !rb.set_input(i, in, error)) return false;
    }
    if (!ra.invoke(error)) return *error = "original: " + *error, false;
    if (!rb.invoke(error)) return *error = "rewritten: " + *error, false;
    for (int o = 0; o < ra.output_count(); ++o) {
      NpyArray x = ra.output(o), y = rb.output(o);
      if (x.dtype != y.dtype || x.data.size() != y.data.size()) {
        *error = "output " + std::to_string(o) + " has shape " + npy_shape_text(x.shape) +
                 " before and " + npy_shape_text(y.shape) + " after";
        return false;
      }
      *max_abs_diff = std::max(*max_abs_diff, max_float_diff(x, y));
    }
  }
  return true;
}

namespace {

// A runner's inputs and outputs by tensor name, and which input each state output feeds: the
// output with the same shape and type (a state), when exactly one has it.
struct StreamingSide {
  ModelRunner runner;
  std::map<std::string, int> inputs, outputs;
  std::map<int, int> state_source;  // input -> output
};

bool prepare_side(const Model& model, const std::map<std::string, std::string>& state_pairs,
                  StreamingSide* side, std::string* error) {
  if (!side->runner.prepare(model, error)) return false;
  Interpreter& in = side->runner.interpreter();
  for (int i = 0; i < side->runner.input_count(); ++i) side->inputs[in.input(i)->name] = i;
  for (int o = 0; o < side->runner.output_count(); ++o) side->outputs[in.output(o)->name] = o;
  for (int i = 0; i < side->runner.input_count(); ++i) {
    const Tensor* t = in.input(i);
    auto known = state_pairs.find(t->name);
    if (known != state_pairs.end() && side->outputs.count(known->second)) {
      side->state_source[i] = side->outputs[known->second];
      continue;
    }
    int match = -1, matches = 0;
    for (int o = 0; o < side->runner.output_count(); ++o) {
      const Tensor* u = in.output(o);
      if (u->type == t->type && u->bytes == t->bytes && u->shape.rank == t->shape.rank &&
          std::equal(t->shape.dims, t->shape.dims + t->shape.rank, u->shape.dims)) {
        match = o;
        ++matches;
      }
    }
    if (matches == 1) side->state_source[i] = match;
  }
  return true;
}

}  // namespace

bool compare_streaming(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int steps,
                       uint64_t seed, double* max_abs_diff, std::string* error,
                       const std::map<std::string, std::string>& state_pairs) {
  Model ma, mb;
  if (!Model::load(a.data(), a.size(), &ma).ok() || !Model::load(b.data(), b.size(), &mb).ok()) {
    return *error = "cannot load the models", false;
  }
  StreamingSide sa, sb;
  if (!prepare_side(ma, state_pairs, &sa, error)) return *error = "original: " + *error, false;
  if (!prepare_side(mb, state_pairs, &sb, error)) return *error = "rewritten: " + *error, false;
  for (const auto& [name, i] : sa.inputs) {
    if (!sb.inputs.count(name) && !sa.state_source.count(i)) {
      return *error = "input '" + name + "' is gone and is not a state fed by an output", false;
    }
  }
  for (const auto& [name, o] : sb.outputs) {
    if (!sa.outputs.count(name)) return *error = "output '" + name + "' is new", false;
  }
  *max_abs_diff = 0;
  Rng rng(seed);
  std::vector<NpyArray> last;  // the original's outputs of the previous invoke
  for (int step = 0; step < steps; ++step) {
    // The original's inputs: its states fed back (zeros first), the rest fresh; the rewritten
    // model gets the same values for the inputs it still has.
    std::map<std::string, NpyArray> fed;
    for (const auto& [name, i] : sa.inputs) {
      const Tensor* t = sa.runner.interpreter().input(i);
      auto state = sa.state_source.find(i);
      NpyArray in;
      if (state != sa.state_source.end() && step > 0) {
        in = last[static_cast<size_t>(state->second)];
      } else if (state != sa.state_source.end()) {  // streams start from a zero state
        in.dtype = npy_dtype_for(t->type);
        in.shape.assign(t->shape.dims, t->shape.dims + t->shape.rank);
        in.data.assign(t->bytes, 0);
      } else {
        in = random_input(rng, t);
      }
      if (!sa.runner.set_input(i, in, error)) return false;
      fed[name] = std::move(in);
    }
    for (const auto& [name, i] : sb.inputs) {
      if (!fed.count(name)) return *error = "input '" + name + "' is new", false;
      if (!sb.runner.set_input(i, fed[name], error)) return false;
    }
    if (!sa.runner.invoke(error)) return *error = "original: " + *error, false;
    if (!sb.runner.invoke(error)) return *error = "rewritten: " + *error, false;
    last.clear();
    for (int o = 0; o < sa.runner.output_count(); ++o) last.push_back(sa.runner.output(o));
    for (const auto& [name, o] : sb.outputs) {
      const double d =
          max_float_diff(last[static_cast<size_t>(sa.outputs[name])], sb.runner.output(o));
      *max_abs_diff = std::max(*max_abs_diff, d);
    }
  }
  return true;
}

bool measure_model(const std::vector<uint8_t>& bytes, ModelSizeFigures* out, std::string* error) {
  Model model;
  Status status = Model::load(bytes.data(), bytes.size(), &model);
  if (!status.ok()) {
    *error = std::string("invalid model: ") + status.message();
    return false;
  }
  AnalyzerReport report = analyze_model(model, "");
  ModelSizeFigures f;
  f.bytes = report.model_bytes;
  f.data_bytes = report.data_bytes;
  f.subgraphs = static_cast<uint32_t>(report.subgraphs.size());
  for (const SubgraphReport& sg : report.subgraphs) {
    f.ops += static_cast<uint32_t>(sg.ops.size());
    f.tensors += static_cast<uint32_t>(sg.tensors.size());
  }
  ModelRunner runner;
  std::string arena_error;
  if (runner.prepare(model, &arena_error)) {
    f.arena_bytes = runner.arena_bytes();
  } else {
    f.arena_error = arena_error;
  }
  *out = f;
  return true;
}

// The streaming state of WHILE cells in the main subgraph whose state comes straight from a
// model input and goes straight to a model output: input name -> output name.
std::map<std::string, std::string> streaming_state_pairs(const ModelDef& def,
                                                         const DetectionReport& found) {
  std::map<std::string, std::string> pairs;
  const fb::SubGraphT& sg = *def.subgraphs[0];
  auto is_in = [](const std::vector<int32_t>& list, int32_t t) {
    return std::find(list.begin(), list.end(), t) != list.end();
  };
  for (const DetectedCell& c : found.cells) {
    if (c.form != CellForm::kWhile || c.subgraph != 0) continue;
    const fb::OperatorT& loop = *sg.operators[static_cast<size_t>(c.op)];
    for (size_t i = 0; i < c.loop_roles.size() && i < loop.inputs.size(); ++i) {
      if (c.loop_roles[i] != LoopRole::kHidden && c.loop_roles[i] != LoopRole::kCell) continue;
      if (is_in(sg.inputs, loop.inputs[i]) && is_in(sg.outputs, loop.outputs[i])) {
        pairs[sg.tensors[static_cast<size_t>(loop.inputs[i])]->name] =
            sg.tensors[static_cast<size_t>(loop.outputs[i])]->name;
      }
    }
  }
  return pairs;
}

// Removes the signature entries naming `dropped` tensors.
void erase_entries(std::vector<std::unique_ptr<fb::TensorMapT>>* entries,
                   const std::vector<int32_t>& dropped) {
  entries->erase(std::remove_if(entries->begin(), entries->end(),
                                [&](const std::unique_ptr<fb::TensorMapT>& m) {
                                  return std::find(dropped.begin(), dropped.end(),
                                                   static_cast<int32_t>(m->tensor_index)) !=
                                         dropped.end();
                                }),
                 entries->end());
}

// Drops the main subgraph's outputs computed from a variable tensor that an op other than a
// fused recurrent op reads (a streaming model's state output, now reading the op's cell-state
// variable): TFLite orders ops by declared dataflow only, and an op updating its variable in
// place declares nothing, so such a read may run first. True if any.
bool drop_outputs_reading_variables(ModelDef* def) {
  fb::SubGraphT& sg = *def->subgraphs[0];
  std::vector<bool> tainted(sg.tensors.size(), false);
  for (const auto& o : sg.operators) {
    const Op code = code_of(*def, *o);
    const bool keeps_state =
        code == Op::UNIDIRECTIONAL_SEQUENCE_LSTM || code == Op::UNIDIRECTIONAL_SEQUENCE_RNN;
    bool reads = false;
    for (int32_t t : o->inputs) {
      if (t < 0 || static_cast<size_t>(t) >= sg.tensors.size()) continue;
      reads |= tainted[static_cast<size_t>(t)] ||
               (!keeps_state && sg.tensors[static_cast<size_t>(t)]->is_variable);
    }
    for (int32_t t : o->outputs) {
      if (reads && t >= 0 && static_cast<size_t>(t) < tainted.size())
        tainted[static_cast<size_t>(t)] = true;
    }
  }
  std::vector<int32_t> kept, dropped;
  for (int32_t t : sg.outputs) {
    const bool variable = t >= 0 && (tainted[static_cast<size_t>(t)] ||
                                     sg.tensors[static_cast<size_t>(t)]->is_variable);
    (variable ? dropped : kept).push_back(t);
  }
  if (dropped.empty()) return false;
  sg.outputs = kept;
  for (auto& signature : def->signature_defs) {
    if (signature->subgraph_index == 0) erase_entries(&signature->outputs, dropped);
  }
  return true;
}

// Drops the main subgraph's inputs that no op reads any more (a streaming model's state
// input once every cell keeps its state inside), and their signature entries. True if any.
bool drop_unread_inputs(ModelDef* def) {
  fb::SubGraphT& sg = *def->subgraphs[0];
  const Uses uses = find_uses(sg);
  std::vector<int32_t> kept, dropped;
  for (int32_t t : sg.inputs) {
    const bool read = t >= 0 && (!uses.consumers[static_cast<size_t>(t)].empty() ||
                                 uses.is_output[static_cast<size_t>(t)]);
    (read ? kept : dropped).push_back(t);
  }
  if (dropped.empty()) return false;
  sg.inputs = kept;
  for (auto& signature : def->signature_defs) {
    if (signature->subgraph_index == 0) erase_entries(&signature->inputs, dropped);
  }
  return true;
}

// The Flex TensorList ops the fused cells left as builtin ops, kept when the result computes
// what the original computes.
void lower_lists(const std::vector<uint8_t>& original, const FuseOptions& options,
                 ModelDef* current, bool* changed, FuseResult* result) {
  ModelDef candidate = *current;
  LoweringResult lowered;
  std::string reason;
  std::vector<uint8_t> candidate_bytes;
  double diff = 0;
  if (!lower_tensor_lists(&candidate, &lowered, &reason)) {
    result->lowering_note = "Flex TensorList ops kept: " + reason;
    return;
  }
  if (lowered.ops == 0) return;
  remove_unused(&candidate);
  if (!write_model(candidate, options.format, &candidate_bytes, &reason) ||
      !compare_models(original, candidate_bytes, options.trials, options.seed, &diff, &reason)) {
    result->lowering_note = "Flex TensorList ops kept: " + reason;
    return;
  }
  if (!(diff <= options.tolerance)) {
    char text[160];
    snprintf(text, sizeof text,
             "Flex TensorList ops kept: the builtin form differs by %.3g (> %.3g) on random inputs",
             diff, options.tolerance);
    result->lowering_note = text;
    return;
  }
  *current = std::move(candidate);
  *changed = true;
  result->lowered_list_ops = lowered.ops;
}

bool fuse_model(const std::vector<uint8_t>& bytes, const FuseOptions& options, FuseResult* result,
                std::string* error) {
  *result = FuseResult();
  ModelDef current;
  if (!load_and_unpack(bytes, &current, error)) return false;
  if (!measure_model(bytes, &result->before, error)) return false;
  std::set<std::string> tried;
  std::map<std::string, std::string> state_pairs;  // streaming: a loop's h_0/c_0 -> h_T/c_T
  bool changed = false;
  for (bool first = true;; first = false) {
    DetectionReport found = detect_rnn_cells(current);
    if (first) result->other_loops = found.other_loops;
    if (first && options.stateful) state_pairs = streaming_state_pairs(current, found);
    const DetectedCell* next = nullptr;
    for (const DetectedCell& c : found.cells) {
      if (!tried.count(cell_key(current, c))) {
        next = &c;
        break;
      }
    }
    if (!next) break;
    tried.insert(cell_key(current, *next));
    CellOutcome outcome;
    outcome.cell = *next;
    ModelDef candidate = current;
    std::vector<uint8_t> candidate_bytes;
    std::string reason;
    if (!rewrite_cell(&candidate, *next, options.format, &outcome.fused_op, &reason,
                      options.stateful)) {
      outcome.reason = reason;
    } else {
      remove_unused(&candidate);
      if (options.stateful) {
        const bool outputs_gone = drop_outputs_reading_variables(&candidate);
        if (outputs_gone) remove_unused(&candidate);
        if (drop_unread_inputs(&candidate)) remove_unused(&candidate);
      }
      if (!write_model(candidate, options.format, &candidate_bytes, &reason)) {
        outcome.reason = "the rewritten model cannot be written: " + reason;
      } else if (!(options.stateful
                       ? compare_streaming(bytes, candidate_bytes, 2 + options.trials, options.seed,
                                           &outcome.max_abs_diff, &reason, state_pairs)
                       : compare_models(bytes, candidate_bytes, options.trials, options.seed,
                                        &outcome.max_abs_diff, &reason))) {
        outcome.reason = "equivalence could not be checked: " + reason;
      } else if (!(outcome.max_abs_diff <= options.tolerance)) {
        char text[128];
        snprintf(text, sizeof text, "outputs differ by %.3g (> %.3g) on random inputs",
                 outcome.max_abs_diff, options.tolerance);
        outcome.reason = text;
      } else {
        outcome.fused = true;
        current = std::move(candidate);
        changed = true;
      }
    }
    result->cells.push_back(std::move(outcome));
  }
  if (options.builtin_only) lower_lists(bytes, options, &current, &changed, result);
  if (!changed && options.format == format_of(bytes)) {
    result->bytes = bytes;
  } else if (!write_model(current, options.format, &result->bytes, error)) {
    return false;
  }
  return measure_model(result->bytes, &result->after, error);
}

}  // namespace gruwb::tools
