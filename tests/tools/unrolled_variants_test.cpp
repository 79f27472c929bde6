// Unrolled chains as converters write them (shared/research/converter-variants.md,
// "Unrolled chains" and rows 44-58), generated from the builder's unrolled layout
// and then edited into each variant: STRIDED_SLICE per step instead of UNPACK,
// a zero state made by FILL from SHAPE (dynamic batch), gates cut by SPLIT_V,
// a PACK of every step's h (return_sequences), RELU cells, hybrid int8 FCs and
// streaming state inputs/outputs. Each must be detected with the builder's
// weights, and fused when a fused op can express it (the fuser's numeric check
// and ours agree), or left alone with the exact reason. Also the two licensed
// unrolled DTLN models (two single-step LSTM(128) layers with state in and out).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "engine/tools/fuser.h"
#include "engine/tools/graph_writer.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/tools/rnn_detector.h"
#include "tests/engine/test_models.h"
#include "tests/tools/model_def_util.h"

namespace gruwb::tools {
namespace {

using Op = BuiltinOperator;

struct Cell {
  const char* name;
  const CellDescriptor* cell;
  bool reset_after;
  GruVariant variant;
};

const Cell kGruAfter = {"gru_reset_after", find_cell("gru"), true, GruVariant::kModern};
const Cell kGruBefore = {"gru_reset_before", find_cell("gru"), false, GruVariant::kModern};
const Cell kGruLegacy = {"gru_legacy", find_cell("gru"), false, GruVariant::kLegacy};
const Cell kLstm = {"lstm", find_cell("lstm"), true, GruVariant::kModern};
const Cell kRnn = {"rnn", find_cell("rnn"), true, GruVariant::kModern};
const Cell kAllCells[] = {kGruAfter, kGruBefore, kGruLegacy, kLstm, kRnn};

constexpr int kT = 5, kF = 3, kH = 4;

BuildSpec spec_for(const Cell& c) {
  BuildSpec spec;
  spec.cell = c.cell;
  spec.reset_after = c.reset_after;
  spec.gru_variant = c.variant;
  spec.layout = RnnLayout::kUnrolled;
  spec.timesteps = kT;
  spec.features = kF;
  spec.units = kH;
  spec.classes = 3;
  spec.bias_init = BiasInit::kUniform;
  spec.seed = 7;
  spec.unrolled_shared_weights = true;
  return spec;
}

ModelDef build_unrolled(const Cell& c) {
  ModelDef def;
  std::string error;
  EXPECT_TRUE(build_model(spec_for(c), &def, &error)) << error;
  return def;
}

// ---- Editing the builder's graph into a converter's -----------------------------------

fb::SubGraphT& main_graph(ModelDef& def) { return *def.subgraphs[0]; }

Op code_of(const ModelDef& def, const fb::OperatorT& o) {
  return def.operator_codes[o.opcode_index]->builtin_code;
}

// Edits of the main graph go through the one graph editor (graph_writer.h); new ops are held
// and spliced in where each variant needs them.
uint32_t opcode(ModelDef& def, Op code) {
  return GraphWriter(&def, 0).opcode(static_cast<int32_t>(code), "");
}

int add_tensor(ModelDef& def, const std::string& name, std::vector<int32_t> shape,
               fb::TensorType type = fb::TensorType::FLOAT32) {
  return GraphWriter(&def, 0).tensor(name, std::move(shape), type);
}

template <typename T>
int add_constant(ModelDef& def, const std::string& name, std::vector<int32_t> shape,
                 const std::vector<T>& values, fb::TensorType type) {
  return GraphWriter(&def, 0).constant_bytes(name, std::move(shape), type, values.data(),
                                             values.size() * sizeof(T));
}

int ints(ModelDef& def, const std::string& name, const std::vector<int32_t>& v) {
  return GraphWriter(&def, 0).constant_i32(name, {static_cast<int32_t>(v.size())}, v);
}

template <typename OptionsT>
std::unique_ptr<fb::OperatorT> make_op(ModelDef& def, Op code, std::vector<int32_t> in,
                                       std::vector<int32_t> out, OptionsT options) {
  GraphWriter g(&def, 0, GraphWriter::kHoldOps);
  g.op(code, in, out, std::move(options));
  return std::move(g.held_ops().front());
}

int find_op(const ModelDef& def, Op code) {
  const auto& ops = def.subgraphs[0]->operators;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (code_of(def, *ops[i]) == code) return static_cast<int>(i);
  }
  return -1;
}

int count_ops(const ModelDef& def, Op code) {
  int n = 0;
  for (const auto& o : def.subgraphs[0]->operators) n += code_of(def, *o) == code ? 1 : 0;
  return n;
}

int tensor_named(const ModelDef& def, const std::string& suffix) {
  const auto& ts = def.subgraphs[0]->tensors;
  for (size_t i = 0; i < ts.size(); ++i) {
    const std::string& n = ts[i]->name;
    if (n.size() >= suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      return static_cast<int>(i);
  }
  return -1;
}

// UNPACK(seq) -> one STRIDED_SLICE(seq, [t,0,0], [t+1,0,0], shrink axis 0) per step.
void to_strided_slice_steps(ModelDef& def) {
  fb::SubGraphT& sg = main_graph(def);
  const int u = find_op(def, Op::UNPACK);
  ASSERT_GE(u, 0);
  const int seq = sg.operators[static_cast<size_t>(u)]->inputs[0];
  const std::vector<int32_t> steps = sg.operators[static_cast<size_t>(u)]->outputs;
  std::vector<std::unique_ptr<fb::OperatorT>> slices;
  for (size_t t = 0; t < steps.size(); ++t) {
    const int32_t i = static_cast<int32_t>(t);
    fb::StridedSliceOptionsT options;
    options.begin_mask = 6;
    options.end_mask = 6;
    options.shrink_axis_mask = 1;
    slices.push_back(make_op(def, Op::STRIDED_SLICE,
                             {seq, ints(def, "begin" + std::to_string(t), {i, 0, 0}),
                              ints(def, "end" + std::to_string(t), {i + 1, 0, 0}),
                              ints(def, "strides" + std::to_string(t), {1, 1, 1})},
                             {steps[t]}, options));
  }
  sg.operators.erase(sg.operators.begin() + u);
  for (size_t t = 0; t < slices.size(); ++t)
    sg.operators.insert(sg.operators.begin() + u + static_cast<ptrdiff_t>(t), std::move(slices[t]));
}

// The batch-major input [B,T,F] read directly, without the TRANSPOSE: UNPACK along axis 1,
// or one STRIDED_SLICE(x, [0,t,0], [0,t+1,0], shrink axis 1) per step.
void to_batch_major_steps(ModelDef& def, bool slices) {
  fb::SubGraphT& sg = main_graph(def);
  const int u = find_op(def, Op::UNPACK);
  ASSERT_GE(u, 0);
  const int x = sg.inputs[0];
  fb::OperatorT& unpack_op = *sg.operators[static_cast<size_t>(u)];
  if (!slices) {
    unpack_op.inputs[0] = x;
    unpack_op.builtin_options.AsUnpackOptions()->axis = 1;
    return;
  }
  const std::vector<int32_t> steps = unpack_op.outputs;
  sg.operators.erase(sg.operators.begin() + u);
  for (size_t t = 0; t < steps.size(); ++t) {
    const int32_t i = static_cast<int32_t>(t);
    fb::StridedSliceOptionsT options;
    options.begin_mask = 5;
    options.end_mask = 5;
    options.shrink_axis_mask = 2;
    sg.operators.insert(sg.operators.begin() + u + static_cast<ptrdiff_t>(t),
                        make_op(def, Op::STRIDED_SLICE,
                                {x, ints(def, "begin" + std::to_string(t), {0, i, 0}),
                                 ints(def, "end" + std::to_string(t), {0, i + 1, 0}),
                                 ints(def, "strides" + std::to_string(t), {1, 1, 1})},
                                {steps[t]}, options));
  }
}

// The zero states become FILL(PACK(SHAPE(x)[0], H), 0.0): a dynamic-batch converter's
// (the input's batch is -1 in shape_signature).
void to_fill_zero_state(ModelDef& def) {
  fb::SubGraphT& sg = main_graph(def);
  const int x = sg.inputs[0];
  sg.tensors[static_cast<size_t>(x)]->shape_signature = {-1, kT, kF};
  const int shape = add_tensor(def, "zero_state/shape", {3}, fb::TensorType::INT32);
  const int batch = add_tensor(def, "zero_state/batch", {}, fb::TensorType::INT32);
  const int dims = add_tensor(def, "zero_state/dims", {2}, fb::TensorType::INT32);
  const int zero =
      add_constant(def, "zero_state/value", {}, std::vector<float>{0.f}, fb::TensorType::FLOAT32);
  std::vector<std::unique_ptr<fb::OperatorT>> ops;
  fb::ShapeOptionsT shape_options;
  shape_options.out_type = fb::TensorType::INT32;
  ops.push_back(make_op(def, Op::SHAPE, {x}, {shape}, shape_options));
  fb::StridedSliceOptionsT slice;
  slice.shrink_axis_mask = 1;
  ops.push_back(make_op(def, Op::STRIDED_SLICE,
                        {shape, ints(def, "zero_state/b", {0}), ints(def, "zero_state/e", {1}),
                         ints(def, "zero_state/s", {1})},
                        {batch}, slice));
  fb::PackOptionsT pack;
  pack.values_count = 2;
  ops.push_back(make_op(def, Op::PACK,
                        {batch, add_constant(def, "zero_state/units", {}, std::vector<int32_t>{kH},
                                             fb::TensorType::INT32)},
                        {dims}, pack));
  for (const char* name : {"zeros_h", "zeros_c"}) {
    const int state = tensor_named(def, name);
    if (state < 0) continue;
    sg.tensors[static_cast<size_t>(state)]->buffer = 0;
    ops.push_back(make_op(def, Op::FILL, {dims, zero}, {state}, fb::FillOptionsT()));
  }
  for (size_t i = 0; i < ops.size(); ++i)
    sg.operators.insert(sg.operators.begin() + static_cast<ptrdiff_t>(i), std::move(ops[i]));
}

// SPLIT(axis, value) into n -> SPLIT_V(value, [p, p, ..., -1], axis).
void to_split_v(ModelDef& def) {
  fb::SubGraphT& sg = main_graph(def);
  int changed = 0;
  for (auto& o : sg.operators) {
    if (code_of(def, *o) != Op::SPLIT) continue;
    const int axis = o->inputs[0], value = o->inputs[1];
    const int n = static_cast<int>(o->outputs.size());
    const int piece = sg.tensors[static_cast<size_t>(value)]->shape.back() / n;
    std::vector<int32_t> sizes(static_cast<size_t>(n), piece);
    sizes.back() = -1;
    fb::SplitVOptionsT options;
    options.num_splits = n;
    auto split_v = make_op(def, Op::SPLIT_V, {value, ints(def, "split_sizes", sizes), axis},
                           o->outputs, options);
    o = std::move(split_v);
    ++changed;
  }
  EXPECT_GT(changed, 0);
}

// A PACK of every step's h along `axis` becomes a second model output.
int add_sequence_output(ModelDef& def, int axis) {
  const DetectionReport found = detect_rnn_cells(def);
  EXPECT_EQ(found.cells.size(), 1u);
  if (found.cells.empty()) return -1;
  const std::vector<int>& h = found.cells[0].step_hidden;
  const int out =
      add_tensor(def, "sequence",
                 axis == 0 ? std::vector<int32_t>{kT, 1, kH} : std::vector<int32_t>{1, kT, kH});
  fb::PackOptionsT options;
  options.values_count = kT;
  options.axis = axis;
  main_graph(def).operators.push_back(
      make_op(def, Op::PACK, std::vector<int32_t>(h.begin(), h.end()), {out}, options));
  main_graph(def).outputs.push_back(out);
  return out;
}

// The zero states become model inputs (a streaming model's state in); the last h
// (and, with `c_out`, the last c) become outputs.
void to_state_inputs(ModelDef& def, bool c_out) {
  const DetectionReport found = detect_rnn_cells(def);
  ASSERT_EQ(found.cells.size(), 1u);
  const DetectedCell& cell = found.cells[0];
  fb::SubGraphT& sg = main_graph(def);
  for (int state : {cell.initial_hidden, cell.initial_cell}) {
    if (state < 0) continue;
    sg.tensors[static_cast<size_t>(state)]->buffer = 0;
    sg.inputs.push_back(state);
  }
  sg.outputs.push_back(cell.final_hidden);
  if (c_out && cell.final_cell >= 0) sg.outputs.push_back(cell.final_cell);
}

// Every float FC weight [out,in] becomes int8 with one symmetric scale per row (hybrid).
void quantize_fc_weights(ModelDef& def) {
  fb::SubGraphT& sg = main_graph(def);
  for (const auto& o : sg.operators) {
    if (code_of(def, *o) != Op::FULLY_CONNECTED) continue;
    fb::TensorT& w = *sg.tensors[static_cast<size_t>(o->inputs[1])];
    if (w.type != fb::TensorType::FLOAT32 || w.shape.size() != 2) continue;
    std::vector<uint8_t>& data = def.buffers[w.buffer]->data;
    const size_t rows = static_cast<size_t>(w.shape[0]), cols = static_cast<size_t>(w.shape[1]);
    std::vector<float> v(rows * cols);
    std::memcpy(v.data(), data.data(), v.size() * 4);
    auto q = std::make_unique<fb::QuantizationParametersT>();
    std::vector<uint8_t> quantized(rows * cols);
    for (size_t r = 0; r < rows; ++r) {
      float top = 1e-8f;
      for (size_t k = 0; k < cols; ++k) top = std::max(top, std::fabs(v[r * cols + k]));
      const float scale = top / 127.f;
      q->scale.push_back(scale);
      q->zero_point.push_back(0);
      for (size_t k = 0; k < cols; ++k)
        quantized[r * cols + k] =
            static_cast<uint8_t>(static_cast<int8_t>(std::lround(v[r * cols + k] / scale)));
    }
    q->quantized_dimension = 0;
    data = quantized;
    w.type = fb::TensorType::INT8;
    w.quantization = std::move(q);
  }
}

// TANH -> RELU everywhere (Keras activation="relu": an LSTM's g and act(c), an RNN's h').
void to_relu(ModelDef& def) {
  const uint32_t relu = opcode(def, Op::RELU);
  for (auto& o : main_graph(def).operators) {
    if (code_of(def, *o) == Op::TANH) o->opcode_index = relu;
  }
}

// Every TANH dropped (Keras activation=None): an RNN's h' is W x + U h + b itself.
void to_linear(ModelDef& def) {
  fb::SubGraphT& sg = main_graph(def);
  for (size_t i = sg.operators.size(); i-- > 0;) {
    if (code_of(def, *sg.operators[i]) != Op::TANH) continue;
    const int from = sg.operators[i]->outputs[0], to = sg.operators[i]->inputs[0];
    sg.operators.erase(sg.operators.begin() + static_cast<ptrdiff_t>(i));
    for (auto& o : sg.operators) std::replace(o->inputs.begin(), o->inputs.end(), from, to);
    std::replace(sg.outputs.begin(), sg.outputs.end(), from, to);
  }
}

// Constant folding of a fixed zero state, as a converter may do it: each op reading
// zeros_h / zeros_c (FC(0, U) [+ b], an LSTM's f * 0) becomes its constant result.
void fold_first_step(ModelDef& def, float offset = 0.f) {
  fb::SubGraphT& sg = main_graph(def);
  for (const char* name : {"zeros_h", "zeros_c"}) {
    const int state = tensor_named(def, name);
    if (state < 0) continue;
    for (size_t i = sg.operators.size(); i-- > 0;) {
      fb::OperatorT& o = *sg.operators[i];
      if (std::find(o.inputs.begin(), o.inputs.end(), state) == o.inputs.end()) continue;
      const Op code = code_of(def, o);
      ASSERT_TRUE(code == Op::FULLY_CONNECTED || code == Op::MUL);
      fb::TensorT& out = *sg.tensors[static_cast<size_t>(o.outputs[0])];
      size_t n = 1;
      for (int32_t d : out.shape) n *= static_cast<size_t>(d);
      std::vector<uint8_t> value(n * 4, 0);
      if (code == Op::FULLY_CONNECTED && o.inputs.size() > 2 && o.inputs[2] >= 0)
        value = def.buffers[sg.tensors[static_cast<size_t>(o.inputs[2])]->buffer]->data;
      for (size_t k = 0; k < n; ++k) {  // `offset`: a step 0 that is not the zero-state cell
        float v;
        std::memcpy(&v, value.data() + 4 * k, 4);
        v += offset;
        std::memcpy(value.data() + 4 * k, &v, 4);
      }
      auto b = std::make_unique<fb::BufferT>();
      b->data = value;
      def.buffers.push_back(std::move(b));
      out.buffer = static_cast<uint32_t>(def.buffers.size() - 1);
      sg.operators.erase(sg.operators.begin() + static_cast<ptrdiff_t>(i));
    }
  }
  remove_unused(&def);  // an LSTM's f of step 0 is dead now; converters drop dead ops
}

// ---- Checks -----------------------------------------------------------------------------

DetectedCell only_cell(const DetectionReport& found) {
  EXPECT_EQ(found.cells.size(), 1u);
  return found.cells.at(0);
}

void expect_builder_weights(const Cell& c, const DetectedCell& cell) {
  const RnnWeights w = initial_weights(spec_for(c));
  EXPECT_EQ(cell.form, CellForm::kUnrolled);
  EXPECT_EQ(cell.timesteps, kT);
  EXPECT_EQ(cell.features, kF);
  EXPECT_EQ(cell.units, kH);
  EXPECT_EQ(cell.weights.kernel, w.kernel);
  EXPECT_EQ(cell.weights.recurrent_kernel, w.recurrent_kernel);
  EXPECT_EQ(cell.weights.bias, w.bias);
  EXPECT_EQ(cell.weights.recurrent_bias, w.recurrent_bias);
}

// Fuses `def`, expects one fused cell, and checks on our own random inputs that
// the fused model computes the original's outputs (all of them).
FuseResult expect_fused(const ModelDef& def, const char* op) {
  const std::vector<uint8_t> before = bytes_of(def);
  FuseResult result;
  std::string error;
  EXPECT_TRUE(fuse_model(before, FuseOptions(), &result, &error)) << error;
  EXPECT_EQ(result.cells.size(), 1u);
  if (result.cells.size() != 1) return result;
  EXPECT_TRUE(result.cells[0].fused) << result.cells[0].reason;
  EXPECT_EQ(result.cells[0].fused_op, op);
  double diff = 1;
  EXPECT_TRUE(compare_models(before, result.bytes, 4, 99, &diff, &error)) << error;
  EXPECT_LE(diff, 1e-5);
  EXPECT_LT(result.after.ops, result.before.ops);
  EXPECT_LT(result.after.bytes, result.before.bytes);
  return result;
}

const char* fused_op_of(const Cell& c) {
  return c.cell == find_cell("gru")    ? "GRUWB_GRU"
         : c.cell == find_cell("lstm") ? "UNIDIRECTIONAL_SEQUENCE_LSTM"
                                       : "UNIDIRECTIONAL_SEQUENCE_RNN";
}

TEST(UnrolledVariantsTest, StridedSlicePerStepInsteadOfUnpack) {
  for (const Cell& c : kAllCells) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    to_strided_slice_steps(def);
    ASSERT_EQ(count_ops(def, Op::UNPACK), 0);
    const DetectedCell& cell = only_cell(detect_rnn_cells(def));
    expect_builder_weights(c, cell);
    EXPECT_EQ(cell.time_axis, 0);
    const FuseResult result = expect_fused(def, fused_op_of(c));
    EXPECT_EQ(count_ops(unpack(result.bytes), Op::STRIDED_SLICE),
              c.cell == find_cell("gru") ? 0 : 1);  // LSTM/RNN: the op's last step
  }
}

TEST(UnrolledVariantsTest, BatchMajorStepsReadTheInputWithoutTranspose) {
  for (const Cell& c : kAllCells) {
    for (bool slices : {false, true}) {
      SCOPED_TRACE(std::string(c.name) + (slices ? " STRIDED_SLICE" : " UNPACK") + " axis 1");
      ModelDef def = build_unrolled(c);
      to_batch_major_steps(def, slices);
      const DetectedCell& cell = only_cell(detect_rnn_cells(def));
      expect_builder_weights(c, cell);
      EXPECT_EQ(cell.time_axis, 1);
      EXPECT_EQ(cell.sequence_tensor, def.subgraphs[0]->inputs[0]);
      const FuseResult result = expect_fused(def, fused_op_of(c));
      EXPECT_EQ(count_ops(unpack(result.bytes), Op::TRANSPOSE), 0);
    }
  }
}

TEST(UnrolledVariantsTest, ZeroStateFilledFromTheDynamicBatch) {
  for (const Cell& c : kAllCells) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    to_fill_zero_state(def);
    ASSERT_GE(count_ops(def, Op::FILL), 1);
    expect_builder_weights(c, only_cell(detect_rnn_cells(def)));
    const FuseResult result = expect_fused(def, fused_op_of(c));
    EXPECT_EQ(count_ops(unpack(result.bytes), Op::FILL), 0) << "the zero state dies with the chain";
  }
}

TEST(UnrolledVariantsTest, GatesCutBySplitV) {
  for (const Cell& c : {kGruAfter, kGruBefore, kLstm}) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    to_split_v(def);
    ASSERT_EQ(count_ops(def, Op::SPLIT), 0);
    expect_builder_weights(c, only_cell(detect_rnn_cells(def)));
    expect_fused(def, fused_op_of(c));
  }
}

TEST(UnrolledVariantsTest, PackOfEveryStepBecomesTheSequenceOutput) {
  for (const Cell& c : kAllCells) {
    for (int axis : {0, 1}) {
      SCOPED_TRACE(std::string(c.name) + " axis " + std::to_string(axis));
      ModelDef def = build_unrolled(c);
      const int sequence = add_sequence_output(def, axis);
      ASSERT_GE(sequence, 0);
      expect_builder_weights(c, only_cell(detect_rnn_cells(def)));
      const FuseResult result = expect_fused(def, fused_op_of(c));
      const ModelDef fused = unpack(result.bytes);
      EXPECT_EQ(count_ops(fused, Op::PACK), 0);
      EXPECT_EQ(fused.subgraphs[0]->outputs.size(), 2u);
    }
  }
}

TEST(UnrolledVariantsTest, ConverterLayoutWithEveryVariantAtOnce) {
  // Rows 44/45/48: TRANSPOSE, STRIDED_SLICE steps, FILL zero state from SHAPE,
  // SPLIT_V, PACK of the outputs.
  for (const Cell& c : {kGruAfter, kLstm}) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    to_strided_slice_steps(def);
    to_fill_zero_state(def);
    to_split_v(def);
    add_sequence_output(def, 0);
    expect_builder_weights(c, only_cell(detect_rnn_cells(def)));
    expect_fused(def, fused_op_of(c));
  }
}

TEST(UnrolledVariantsTest, ReluCellsKeepTheirActivation) {
  for (const Cell& c : {kLstm, kRnn}) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    to_relu(def);
    ASSERT_EQ(count_ops(def, Op::TANH), 0);
    const DetectedCell& cell = only_cell(detect_rnn_cells(def));
    expect_builder_weights(c, cell);
    EXPECT_EQ(cell.activation, "relu");
    const FuseResult result = expect_fused(def, fused_op_of(c));
    const ModelDef fused = unpack(result.bytes);
    bool relu = false;
    for (const auto& o : fused.subgraphs[0]->operators) {
      if (const auto* lstm = o->builtin_options.AsUnidirectionalSequenceLSTMOptions())
        relu = lstm->fused_activation_function == fb::ActivationFunctionType::RELU;
      if (const auto* rnn = o->builtin_options.AsSequenceRNNOptions())
        relu = rnn->fused_activation_function == fb::ActivationFunctionType::RELU;
    }
    EXPECT_TRUE(relu) << "the fused op carries the RELU";
  }
}

TEST(UnrolledVariantsTest, LinearSimpleRnnWithoutActivationOp) {
  // Row 55: FC(x) + FC(h) -> ADD is the whole cell.
  ModelDef def = build_unrolled(kRnn);
  to_linear(def);
  ASSERT_EQ(count_ops(def, Op::TANH), 0);
  const DetectedCell& cell = only_cell(detect_rnn_cells(def));
  expect_builder_weights(kRnn, cell);
  EXPECT_EQ(cell.type, find_cell("rnn"));
  EXPECT_EQ(cell.activation, "linear");
  const FuseResult result = expect_fused(def, "UNIDIRECTIONAL_SEQUENCE_RNN");
  const ModelDef fused = unpack(result.bytes);
  bool linear = false;
  for (const auto& o : fused.subgraphs[0]->operators) {
    if (const auto* rnn = o->builtin_options.AsSequenceRNNOptions()) {
      linear = rnn->fused_activation_function == fb::ActivationFunctionType::NONE;
    }
  }
  EXPECT_TRUE(linear) << "the fused RNN has no activation";
}

TEST(UnrolledVariantsTest, FirstStepFoldedFromAFixedZeroState) {
  // Fixed-batch converters may fold step 0's products with the zero state into constants.
  for (const Cell& c : {kGruAfter, kLstm, kRnn}) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    const size_t ops_before = main_graph(def).operators.size();
    fold_first_step(def);
    ASSERT_LT(main_graph(def).operators.size(), ops_before);
    const DetectedCell& cell = only_cell(detect_rnn_cells(def));
    expect_builder_weights(c, cell);
    EXPECT_TRUE(cell.folded_first_step);
    EXPECT_EQ(cell.step_hidden.size(), static_cast<size_t>(kT));
    const FuseResult result = expect_fused(def, fused_op_of(c));
    EXPECT_EQ(count_ops(unpack(result.bytes), Op::FULLY_CONNECTED), 1) << "only the classifier";
  }
}

TEST(UnrolledVariantsTest, AFirstStepThatIsNotTheZeroStateCellFailsTheNumericCheck) {
  ModelDef def = build_unrolled(kLstm);
  fold_first_step(def, 0.5f);
  EXPECT_TRUE(only_cell(detect_rnn_cells(def)).folded_first_step);
  const std::vector<uint8_t> before = bytes_of(def);
  FuseResult result;
  std::string error;
  ASSERT_TRUE(fuse_model(before, FuseOptions(), &result, &error)) << error;
  ASSERT_EQ(result.cells.size(), 1u);
  EXPECT_FALSE(result.cells[0].fused);
  EXPECT_NE(result.cells[0].reason.find("outputs differ"), std::string::npos)
      << result.cells[0].reason;
  EXPECT_EQ(result.bytes, before);
}

TEST(UnrolledVariantsTest, StreamingGruStateInputBecomesTheInitialState) {
  for (const Cell& c : {kGruAfter, kGruBefore, kGruLegacy}) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    to_state_inputs(def, false);
    const DetectedCell& cell = only_cell(detect_rnn_cells(def));
    expect_builder_weights(c, cell);
    const FuseResult result = expect_fused(def, "GRUWB_GRU");
    const ModelDef fused = unpack(result.bytes);
    const auto& sg = *fused.subgraphs[0];
    ASSERT_EQ(sg.inputs.size(), 2u);
    bool wired = false;
    for (const auto& o : sg.operators) {
      if (o->inputs.size() == 5 && o->inputs[4] == sg.inputs[1]) wired = true;
    }
    EXPECT_TRUE(wired) << "the state input feeds GRUWB_GRU's h_0";
  }
}

TEST(UnrolledVariantsTest, StreamingLstmAndRnnStateStaysUnfusedWithTheReason) {
  for (const Cell& c : {kLstm, kRnn}) {
    for (bool c_out : {false, true}) {
      SCOPED_TRACE(std::string(c.name) + (c_out ? " with c output" : ""));
      ModelDef def = build_unrolled(c);
      to_state_inputs(def, c_out);
      const std::vector<uint8_t> before = bytes_of(def);
      FuseResult result;
      std::string error;
      ASSERT_TRUE(fuse_model(before, FuseOptions(), &result, &error)) << error;
      ASSERT_EQ(result.cells.size(), 1u);
      EXPECT_FALSE(result.cells[0].fused);
      const std::string& why = result.cells[0].reason;
      EXPECT_NE(why.find("not zeros"), std::string::npos) << why;
      EXPECT_NE(why.find("variable tensors"), std::string::npos) << why;
      EXPECT_EQ(why.find("outputs only h") != std::string::npos,
                c_out && c.cell == find_cell("lstm"))
          << why;
      EXPECT_EQ(result.bytes, before) << "nothing fused: the input is written back unchanged";
    }
  }
}

// Per-row (per-channel) int8 scales: GRUWB_GRU keeps them and fuses (the fuser's numeric
// check holds it to the chain's hybrid FCs); TFLite's LSTM/RNN ops hold one scale per weight
// tensor, so those cells stay and say so.
TEST(UnrolledVariantsTest, HybridCellsAreDetectedDequantizedAndFusedWhereTheOpHoldsTheirScales) {
  for (const Cell& c : {kGruAfter, kLstm, kRnn}) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    quantize_fc_weights(def);
    const DetectedCell& cell = only_cell(detect_rnn_cells(def));
    EXPECT_TRUE(cell.hybrid);
    // Dequantized: within half a step of each row's scale of the builder's weights.
    const RnnWeights w = initial_weights(spec_for(c));
    ASSERT_EQ(cell.weights.kernel.size(), w.kernel.size());
    ASSERT_EQ(cell.weights.recurrent_kernel.size(), w.recurrent_kernel.size());
    for (size_t i = 0; i < w.kernel.size(); ++i)
      EXPECT_NEAR(cell.weights.kernel[i], w.kernel[i], 0.01);
    for (size_t i = 0; i < w.recurrent_kernel.size(); ++i)
      EXPECT_NEAR(cell.weights.recurrent_kernel[i], w.recurrent_kernel[i], 0.01);
    EXPECT_EQ(cell.weights.bias, w.bias);
    const std::vector<uint8_t> before = bytes_of(def);
    FuseResult result;
    std::string error;
    ASSERT_TRUE(fuse_model(before, FuseOptions(), &result, &error)) << error;
    ASSERT_EQ(result.cells.size(), 1u);
    if (c.cell == find_cell("gru")) {
      EXPECT_TRUE(result.cells[0].fused) << result.cells[0].reason;
      EXPECT_EQ(result.cells[0].fused_op, fused_op_of(c));
      continue;
    }
    EXPECT_FALSE(result.cells[0].fused);
    EXPECT_NE(result.cells[0].reason.find("per-channel"), std::string::npos)
        << result.cells[0].reason;
  }
}

TEST(UnrolledVariantsTest, BrokenChainsAreNotCells) {
  // A step missing from the STRIDED_SLICE chain, and a step that reads another
  // step's x: no cell, no crash.
  for (const Cell& c : {kGruAfter, kLstm}) {
    SCOPED_TRACE(c.name);
    ModelDef def = build_unrolled(c);
    to_strided_slice_steps(def);
    fb::SubGraphT& sg = main_graph(def);
    const int first = find_op(def, Op::STRIDED_SLICE);
    ASSERT_GE(first, 0);
    // Step 2's slice now takes step 1 (so no slice takes step 2).
    fb::OperatorT& third = *sg.operators[static_cast<size_t>(first + 2)];
    third.inputs[1] = ints(def, "begin_dup", {1, 0, 0});
    third.inputs[2] = ints(def, "end_dup", {2, 0, 0});
    EXPECT_TRUE(detect_rnn_cells(def).cells.empty());
    FuseResult result;
    std::string error;
    const std::vector<uint8_t> bytes = bytes_of(def);
    ASSERT_TRUE(fuse_model(bytes, FuseOptions(), &result, &error)) << error;
    EXPECT_EQ(result.bytes, bytes);
  }
}

TEST(UnrolledVariantsTest, MalformedChainsGiveNoCellAndNoCrash) {
  {
    // Hybrid weights whose scales do not match their rows: not a weight the matcher reads.
    ModelDef def = build_unrolled(kLstm);
    quantize_fc_weights(def);
    for (auto& t : main_graph(def).tensors) {
      if (t->quantization && t->quantization->scale.size() > 1) t->quantization->scale.pop_back();
    }
    EXPECT_TRUE(detect_rnn_cells(def).cells.empty());
  }
  {
    // A weight buffer shorter than its shape.
    ModelDef def = build_unrolled(kGruAfter);
    for (const auto& o : main_graph(def).operators) {
      if (code_of(def, *o) != Op::FULLY_CONNECTED) continue;
      def.buffers[main_graph(def).tensors[static_cast<size_t>(o->inputs[1])]->buffer]->data.resize(
          8);
    }
    EXPECT_TRUE(detect_rnn_cells(def).cells.empty());
  }
  {
    // The UNPACK reads no tensor.
    ModelDef def = build_unrolled(kRnn);
    main_graph(def).operators[static_cast<size_t>(find_op(def, Op::UNPACK))]->inputs[0] = -1;
    EXPECT_TRUE(detect_rnn_cells(def).cells.empty());
  }
}

// ---- The licensed DTLN models: two single-step LSTM(128) layers, state in and out ------

TEST(UnrolledVariantsTest, DtlnUnrolledLstmsAreDetectedAndLeftWithTheReason) {
  for (const char* stem : {"breizhn_dtln_model_1", "breizhn_dtln_model_quant_1"}) {
    SCOPED_TRACE(stem);
    const bool hybrid = std::string(stem).find("quant") != std::string::npos;
    std::vector<uint8_t> bytes;
    std::string error;
    ASSERT_TRUE(read_file_bytes(test::shared_dir() + "/data/models/real/" + stem + ".tflite",
                                &bytes, &error))
        << error;
    const DetectionReport found = detect_rnn_cells(unpack(bytes));
    ASSERT_EQ(found.cells.size(), 2u);
    const int features[2] = {257, 128};
    for (size_t k = 0; k < 2; ++k) {
      const DetectedCell& cell = found.cells[k];
      EXPECT_EQ(cell.type, find_cell("lstm"));
      EXPECT_EQ(cell.form, CellForm::kUnrolled);
      EXPECT_EQ(cell.units, 128);
      EXPECT_EQ(cell.timesteps, 1);
      EXPECT_EQ(cell.features, features[k]);
      EXPECT_EQ(cell.hybrid, hybrid);
      EXPECT_EQ(cell.weights.kernel.size(), 4u * 128 * static_cast<size_t>(features[k]));
      EXPECT_EQ(cell.weights.recurrent_kernel.size(), 4u * 128 * 128);
      EXPECT_GE(cell.initial_hidden, 0);
      EXPECT_GE(cell.initial_cell, 0);
      EXPECT_GE(cell.final_cell, 0);
    }
    FuseResult result;
    ASSERT_TRUE(fuse_model(bytes, FuseOptions(), &result, &error)) << error;
    ASSERT_EQ(result.cells.size(), 2u);
    for (const CellOutcome& c : result.cells) {
      // The state goes in and out; the hybrid weights (one scale per tensor) would fit.
      EXPECT_FALSE(c.fused);
      EXPECT_NE(c.reason.find("outputs only h, not c"), std::string::npos) << c.reason;
      EXPECT_NE(c.reason.find("variable tensors"), std::string::npos) << c.reason;
    }
    EXPECT_EQ(result.bytes, bytes);
  }
}

}  // namespace
}  // namespace gruwb::tools
