// Model builder: the three layouts compute the same function, and that
// function is the Keras maths (an independent double-precision reference in
// this file, not our kernels); graph structure as the converter emits it;
// Keras-style initialisation; the size goal of issue #5.

#include "engine/tools/model_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "engine/kernels/recurrent_util.h"
#include "engine/tools/analyzer.h"
#include "engine/tools/initializers.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"

namespace gruwb::tools {
namespace {

// ---- Independent reference (double precision, plain loops) ----------------------

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double hard_sigmoid(double x) { return std::min(1.0, std::max(0.0, 0.2 * x + 0.5)); }

// out[r] = sum_c m[r][c] * v[c] + (bias ? bias[r] : 0), m row-major [rows, cols].
std::vector<double> matvec(const std::vector<float>& m, const std::vector<double>& v,
                           const std::vector<float>* bias, size_t rows) {
  const size_t cols = v.size();
  std::vector<double> out(rows);
  for (size_t r = 0; r < rows; ++r) {
    double sum = bias ? (*bias)[r] : 0.0;
    for (size_t c = 0; c < cols; ++c) sum += double{m[r * cols + c]} * v[c];
    out[r] = sum;
  }
  return out;
}

// One Keras GRUCell step (both reset_after forms, sigmoid or hard_sigmoid).
std::vector<double> gru_cell(const BuildSpec& s, const RnnWeights& w, const std::vector<double>& x,
                             const std::vector<double>& h) {
  const size_t n = static_cast<size_t>(s.units);
  const bool hard = s.gru_variant == GruVariant::kLegacy;
  std::vector<double> xw = matvec(w.kernel, x, &w.bias, 3 * n);
  std::vector<double> out(n);
  if (s.reset_after) {
    std::vector<double> hw = matvec(w.recurrent_kernel, h, &w.recurrent_bias, 3 * n);
    for (size_t i = 0; i < n; ++i) {
      double z = sigmoid(xw[i] + hw[i]);
      double r = sigmoid(xw[n + i] + hw[n + i]);
      double hh = std::tanh(xw[2 * n + i] + r * hw[2 * n + i]);
      out[i] = z * h[i] + (1 - z) * hh;
    }
    return out;
  }
  std::vector<double> hw = matvec(w.recurrent_kernel, h, nullptr, 3 * n);  // rows z|r used
  std::vector<double> z(n), rh(n);
  for (size_t i = 0; i < n; ++i) {
    double zi = xw[i] + hw[i], ri = xw[n + i] + hw[n + i];
    z[i] = hard ? hard_sigmoid(zi) : sigmoid(zi);
    rh[i] = (hard ? hard_sigmoid(ri) : sigmoid(ri)) * h[i];
  }
  std::vector<float> uh(w.recurrent_kernel.begin() + static_cast<ptrdiff_t>(2 * n * n),
                        w.recurrent_kernel.end());
  std::vector<double> candidate = matvec(uh, rh, nullptr, n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = z[i] * h[i] + (1 - z[i]) * std::tanh(xw[2 * n + i] + candidate[i]);
  }
  return out;
}

// Keras forward pass of the whole classifier on x [T*F]; returns softmax [C].
std::vector<double> reference(const BuildSpec& s, const RnnWeights& w,
                              const std::vector<float>& x) {
  const size_t n = static_cast<size_t>(s.units), f = static_cast<size_t>(s.features);
  std::vector<double> h(n, 0.0), c(n, 0.0);
  for (int t = 0; t < s.timesteps; ++t) {
    std::vector<double> xt(f);
    for (size_t i = 0; i < f; ++i) {
      xt[i] = x[static_cast<size_t>(t) * f + i];
      if (!s.mean.empty()) xt[i] = (xt[i] - s.mean[i]) / std::sqrt(double{s.variance[i]});
    }
    if (s.cell == find_cell("gru")) {
      h = gru_cell(s, w, xt, h);
    } else if (s.cell == find_cell("lstm")) {
      std::vector<double> a = matvec(w.kernel, xt, &w.bias, 4 * n);
      std::vector<double> b = matvec(w.recurrent_kernel, h, nullptr, 4 * n);
      for (size_t i = 0; i < n; ++i) {
        double ig = sigmoid(a[i] + b[i]), fg = sigmoid(a[n + i] + b[n + i]);
        double g = std::tanh(a[2 * n + i] + b[2 * n + i]), o = sigmoid(a[3 * n + i] + b[3 * n + i]);
        c[i] = fg * c[i] + ig * g;
        h[i] = o * std::tanh(c[i]);
      }
    } else {
      std::vector<double> a = matvec(w.kernel, xt, &w.bias, n);
      std::vector<double> b = matvec(w.recurrent_kernel, h, nullptr, n);
      for (size_t i = 0; i < n; ++i) h[i] = std::tanh(a[i] + b[i]);
    }
  }
  for (size_t i = 0; i < w.dense.size(); ++i) {
    h = matvec(w.dense[i].kernel, h, &w.dense[i].bias, w.dense[i].bias.size());
    if (i + 1 < w.dense.size()) {
      for (double& v : h) v = std::max(v, 0.0);
    }
  }
  double top = *std::max_element(h.begin(), h.end()), sum = 0;
  for (double& v : h) sum += (v = std::exp(v - top));
  for (double& v : h) v /= sum;
  return h;
}

// ---- Running built models ----------------------------------------------------------

struct Built {
  LoadedModel loaded;
  ModelRunner runner;
};

std::unique_ptr<Built> load(const BuildSpec& spec) {
  ModelDef def;
  std::string error;
  EXPECT_TRUE(build_model(spec, &def, &error)) << error;
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(write_model(def, spec.format, &bytes, &error)) << error;
  auto built = std::make_unique<Built>();
  if (!load_model_bytes(std::move(bytes), "built", &built->loaded, &error)) {
    ADD_FAILURE() << rnn_layout_name(spec.layout) << ": " << error;
    return nullptr;
  }
  if (!built->runner.prepare(built->loaded.model, &error)) {
    ADD_FAILURE() << rnn_layout_name(spec.layout) << ": " << error;
    return nullptr;
  }
  return built;
}

std::vector<float> run(Built& built, const BuildSpec& s, const std::vector<float>& x) {
  NpyArray array;
  array.dtype = "<f4";
  array.shape = {1, s.timesteps, s.features};
  array.data.resize(x.size() * sizeof(float));
  std::memcpy(array.data.data(), x.data(), array.data.size());
  std::string error;
  // Fused LSTM/RNN states are variable tensors (as in Keras-made files): they
  // would carry the last state into the next invoke.
  built.runner.interpreter().reset_variables();
  EXPECT_TRUE(built.runner.set_input(0, array, &error)) << error;
  EXPECT_TRUE(built.runner.invoke(&error)) << error;
  NpyArray out = built.runner.output(0);
  std::vector<float> values(static_cast<size_t>(out.elements()));
  std::memcpy(values.data(), out.data.data(), out.data.size());
  return values;
}

// Weights with every part non-zero (Keras' zero biases would hide a bias
// mixed up between gates or layouts).
RnnWeights test_weights(const BuildSpec& spec) {
  BuildSpec s = spec;
  s.bias_init = BiasInit::kUniform;
  RnnWeights w = initial_weights(s);
  Rng rng(spec.seed + 1000);
  for (DenseWeights& d : w.dense) d.bias = uniform(rng, static_cast<int>(d.bias.size()), 0.3f);
  return w;
}

std::vector<float> random_input(Rng& rng, const BuildSpec& s) {
  return uniform(rng, s.timesteps * s.features, 2.f);
}

std::string label(const BuildSpec& s) {
  return std::string(s.cell->name) +
         (s.cell == find_cell("gru") ? std::string(" ") + gru_variant_name(s.gru_variant) +
                                           (s.reset_after ? " reset_after" : " reset_before")
                                     : "") +
         " T=" + std::to_string(s.timesteps) + " F=" + std::to_string(s.features) +
         " H=" + std::to_string(s.units) + (s.format == ModelFormat::kCircle ? " circle" : "");
}

// All three layouts agree with each other to 1e-5 and with the reference.
void expect_layouts_agree(BuildSpec spec) {
  SCOPED_TRACE(label(spec));
  const RnnWeights weights = test_weights(spec);
  spec.weights = &weights;
  std::map<RnnLayout, std::unique_ptr<Built>> models;
  for (RnnLayout layout : {RnnLayout::kFused, RnnLayout::kWhile, RnnLayout::kUnrolled}) {
    spec.layout = layout;
    models[layout] = load(spec);
    ASSERT_TRUE(models[layout]) << rnn_layout_name(layout);
  }
  Rng rng(spec.seed * 7 + 3);
  for (int sample = 0; sample < 3; ++sample) {
    const std::vector<float> x = random_input(rng, spec);
    const std::vector<double> expected = reference(spec, weights, x);
    const std::vector<float> fused = run(*models[RnnLayout::kFused], spec, x);
    ASSERT_EQ(fused.size(), static_cast<size_t>(spec.classes));
    for (RnnLayout layout : {RnnLayout::kWhile, RnnLayout::kUnrolled}) {
      spec.layout = layout;
      const std::vector<float> other = run(*models[layout], spec, x);
      ASSERT_EQ(other.size(), fused.size());
      for (size_t i = 0; i < fused.size(); ++i) {
        EXPECT_NEAR(other[i], fused[i], 1e-5) << rnn_layout_name(layout) << " class " << i;
      }
    }
    for (size_t i = 0; i < fused.size(); ++i) {
      EXPECT_NEAR(fused[i], expected[i], 2e-5) << "fused vs reference, class " << i;
    }
  }
}

struct Sizes {
  int timesteps, features, units, classes;
  std::vector<int> dense;
};

const Sizes kSizes[] = {
    {1, 1, 1, 2, {}}, {5, 3, 4, 3, {}}, {12, 2, 9, 4, {6}}, {25, 4, 16, 5, {8, 3}}};

BuildSpec spec_for(const CellDescriptor* cell, const Sizes& sizes) {
  BuildSpec s;
  s.cell = cell;
  s.timesteps = sizes.timesteps;
  s.features = sizes.features;
  s.units = sizes.units;
  s.classes = sizes.classes;
  s.dense = sizes.dense;
  s.seed = static_cast<uint64_t>(sizes.timesteps * 31 + sizes.units);
  return s;
}

TEST(ModelBuilderTest, GruResetAfterLayoutsComputeTheKerasFunction) {
  for (const Sizes& sizes : kSizes) expect_layouts_agree(spec_for(find_cell("gru"), sizes));
}

TEST(ModelBuilderTest, GruResetAfterCircleUsesTheCircleGruOpAndAgrees) {
  for (const Sizes& sizes : kSizes) {
    BuildSpec s = spec_for(find_cell("gru"), sizes);
    s.format = ModelFormat::kCircle;
    expect_layouts_agree(s);
  }
}

TEST(ModelBuilderTest, GruResetBeforeLayoutsAgree) {
  for (const Sizes& sizes : kSizes) {
    BuildSpec s = spec_for(find_cell("gru"), sizes);
    s.reset_after = false;
    expect_layouts_agree(s);
    s.format = ModelFormat::kCircle;  // no Circle GRU for reset_before: the custom op
    expect_layouts_agree(s);
  }
}

TEST(ModelBuilderTest, LegacyGruLayoutsAgree) {
  for (const Sizes& sizes : kSizes) {
    BuildSpec s = spec_for(find_cell("gru"), sizes);
    s.reset_after = false;
    s.gru_variant = GruVariant::kLegacy;
    expect_layouts_agree(s);
  }
}

TEST(ModelBuilderTest, LstmLayoutsAgree) {
  for (const Sizes& sizes : kSizes) expect_layouts_agree(spec_for(find_cell("lstm"), sizes));
}

TEST(ModelBuilderTest, SimpleRnnLayoutsAgree) {
  for (const Sizes& sizes : kSizes) expect_layouts_agree(spec_for(find_cell("rnn"), sizes));
}

TEST(ModelBuilderTest, ReferenceSizeAllCellsAgreeWithNormalization) {
  for (const CellDescriptor* cell : {find_cell("gru"), find_cell("lstm"), find_cell("rnn")}) {
    BuildSpec s = spec_for(cell, {60, 3, 60, 4, {}});
    s.mean = {0.5f, -1.f, 2.f};
    s.variance = {4.f, 0.25f, 1.f};
    expect_layouts_agree(s);
  }
}

TEST(ModelBuilderTest, SharedUnrolledWeightsComputeTheSameFunction) {
  BuildSpec s = spec_for(find_cell("gru"), {8, 3, 5, 3, {}});
  s.unrolled_shared_weights = true;
  expect_layouts_agree(s);
}

// ---- Golden: the real TFLite runtime -----------------------------------------------------
// Outputs of TFLite's WASM build (@tensorflow/tfjs-tflite 0.0.1-alpha.10, the runtime of
// tests/fixtures/gen/tflite_golden.mjs) for these built models and input; how they were made
// is in docs/builder.md ("Checked against TFLite"). The GRUWB_GRU custom op is not in TFLite, so
// GRUs are checked in their WHILE and unrolled forms.

struct GoldenCase {
  const CellDescriptor* cell;
  RnnLayout layout;
  bool reset_after;
  GruVariant variant;
  std::vector<float> tflite;
};

TEST(ModelBuilderTest, BuiltModelsMatchTheTfliteRuntime) {
  const GoldenCase cases[] = {
      {find_cell("gru"),
       RnnLayout::kWhile,
       true,
       GruVariant::kModern,
       {0.312166691f, 0.247189015f, 0.273515463f, 0.167128831f}},
      {find_cell("gru"),
       RnnLayout::kWhile,
       false,
       GruVariant::kModern,
       {0.190945253f, 0.261581808f, 0.318685740f, 0.228787169f}},
      {find_cell("gru"),
       RnnLayout::kWhile,
       false,
       GruVariant::kLegacy,
       {0.191396922f, 0.260118455f, 0.321530133f, 0.226954520f}},
      {find_cell("gru"),
       RnnLayout::kUnrolled,
       true,
       GruVariant::kModern,
       {0.312166691f, 0.247189015f, 0.273515463f, 0.167128831f}},
      {find_cell("lstm"),
       RnnLayout::kFused,
       true,
       GruVariant::kModern,
       {0.353658646f, 0.277723223f, 0.152887702f, 0.215730414f}},
      {find_cell("lstm"),
       RnnLayout::kWhile,
       true,
       GruVariant::kModern,
       {0.353658646f, 0.277723223f, 0.152887702f, 0.215730414f}},
      {find_cell("rnn"),
       RnnLayout::kFused,
       true,
       GruVariant::kModern,
       {0.0697036237f, 0.260359645f, 0.171891704f, 0.498044997f}},
      {find_cell("rnn"),
       RnnLayout::kWhile,
       true,
       GruVariant::kModern,
       {0.0697036162f, 0.260359615f, 0.171891719f, 0.498044997f}},
  };
  Rng rng(2024);
  const std::vector<float> x = uniform(rng, 36, 2.f);
  for (const GoldenCase& c : cases) {
    BuildSpec s = spec_for(c.cell, {12, 3, 7, 4, {}});
    s.layout = c.layout;
    s.reset_after = c.reset_after;
    s.gru_variant = c.variant;
    s.bias_init = BiasInit::kUniform;
    s.seed = 3;
    s.mean = {0.1f, -0.2f, 0.3f};
    s.variance = {1.5f, 0.5f, 2.f};
    SCOPED_TRACE(label(s) + " " + rnn_layout_name(s.layout));
    std::unique_ptr<Built> built = load(s);
    ASSERT_TRUE(built);
    const std::vector<float> ours = run(*built, s, x);
    ASSERT_EQ(ours.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(ours[i], c.tflite[i], 1e-6) << i;
  }
}

// ---- Structure ---------------------------------------------------------------------

std::map<std::string, int> op_counts(const SubgraphReport& sg) {
  std::map<std::string, int> counts;
  for (const OpReport& op : sg.ops) ++counts[op.name];
  return counts;
}

std::vector<std::string> op_names(const SubgraphReport& sg) {
  std::vector<std::string> names;
  for (const OpReport& op : sg.ops) names.push_back(op.name);
  return names;
}

AnalyzerReport analyze(const BuildSpec& spec, std::unique_ptr<Built>* keep) {
  *keep = load(spec);
  if (!*keep) return AnalyzerReport();
  return analyze_model((*keep)->loaded.model, "built");
}

TEST(ModelBuilderTest, WhileGruHasTheConverterStructure) {
  BuildSpec s = spec_for(find_cell("gru"), {60, 3, 60, 4, {}});
  s.layout = RnnLayout::kWhile;
  std::unique_ptr<Built> keep;
  AnalyzerReport r = analyze(s, &keep);
  ASSERT_EQ(r.subgraphs.size(), 3u);
  EXPECT_EQ(r.subgraphs[1].name, "gru_while_cond");
  EXPECT_EQ(r.subgraphs[2].name, "gru_while_body");
  EXPECT_EQ(op_names(r.subgraphs[0]),
            (std::vector<std::string>{"TRANSPOSE", "WHILE", "STRIDED_SLICE", "FULLY_CONNECTED",
                                      "SOFTMAX"}));
  EXPECT_EQ(r.subgraphs[0].ops[1].called_subgraphs, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(r.subgraphs[0].ops[1].inputs.size(), 5u);  // counter, time, accumulator, h, sequence
  // cond: one LESS of the time value against a constant T.
  ASSERT_EQ(op_names(r.subgraphs[1]), std::vector<std::string>{"LESS"});
  const SubgraphReport& cond = r.subgraphs[1];
  EXPECT_EQ(cond.ops[0].inputs[0], cond.inputs[1]);
  const TensorReport& limit = cond.tensors[static_cast<size_t>(cond.ops[0].inputs[1])];
  EXPECT_TRUE(limit.is_constant);
  EXPECT_EQ(limit.data_preview, "[60]");
  // body: exactly the counts ONE's FuseGRUPass matches.
  const std::map<std::string, int> expected = {
      {"ADD", 6},     {"FULLY_CONNECTED", 2}, {"GATHER", 1}, {"LOGISTIC", 2}, {"MUL", 3},
      {"RESHAPE", 1}, {"SPLIT", 2},           {"SUB", 1},    {"TANH", 1}};
  EXPECT_EQ(op_counts(r.subgraphs[2]), expected);
  // Weights live in the body, as the converter writes them.
  EXPECT_GT(r.subgraphs[2].data_bytes, 45000u);
  EXPECT_LT(r.subgraphs[0].data_bytes, 2000u);
  // The sequence is GATHERed by the time loop value; loop-invariant pass-through.
  const SubgraphReport& body = r.subgraphs[2];
  for (const OpReport& op : body.ops) {
    if (op.name == "GATHER") {
      EXPECT_EQ(op.inputs, (std::vector<int32_t>{body.inputs[4], body.inputs[1]}));
    }
  }
  EXPECT_EQ(body.outputs[4], body.inputs[4]);
}

TEST(ModelBuilderTest, LegacyWhileGruHasPerGateFcsHardSigmoidAndSliceConcatAccumulator) {
  BuildSpec s = spec_for(find_cell("gru"), {10, 3, 8, 4, {}});
  s.layout = RnnLayout::kWhile;
  s.reset_after = false;
  s.gru_variant = GruVariant::kLegacy;
  std::unique_ptr<Built> keep;
  AnalyzerReport r = analyze(s, &keep);
  ASSERT_EQ(r.subgraphs.size(), 3u);
  std::map<std::string, int> counts = op_counts(r.subgraphs[2]);
  EXPECT_EQ(counts["FULLY_CONNECTED"], 6);
  EXPECT_EQ(counts["MINIMUM"], 2);
  EXPECT_EQ(counts["MAXIMUM"], 2);
  EXPECT_EQ(counts["SLICE"], 1);
  EXPECT_EQ(counts["CONCATENATION"], 1);
  EXPECT_EQ(counts["LOGISTIC"], 0);
  EXPECT_EQ(counts["SPLIT"], 0);
  // Six loop values: counter, time, accumulator [T,1,H], h, trip count, sequence;
  // cond compares time with the passed-through trip count.
  EXPECT_EQ(r.subgraphs[2].inputs.size(), 6u);
  const SubgraphReport& cond = r.subgraphs[1];
  EXPECT_EQ(cond.ops[0].inputs, (std::vector<int32_t>{cond.inputs[1], cond.inputs[4]}));
  EXPECT_EQ(r.subgraphs[2].tensors[static_cast<size_t>(r.subgraphs[2].inputs[2])].shape,
            (std::vector<int32_t>{10, 1, 8}));
}

TEST(ModelBuilderTest, WhileLstmCarriesCellStateAndUsesOneSplitOfFour) {
  BuildSpec s = spec_for(find_cell("lstm"), {6, 2, 5, 3, {}});
  s.layout = RnnLayout::kWhile;
  std::unique_ptr<Built> keep;
  AnalyzerReport r = analyze(s, &keep);
  ASSERT_EQ(r.subgraphs.size(), 3u);
  EXPECT_EQ(r.subgraphs[2].name, "lstm_while_body");
  EXPECT_EQ(r.subgraphs[2].inputs.size(), 6u);
  std::map<std::string, int> counts = op_counts(r.subgraphs[2]);
  EXPECT_EQ(counts["FULLY_CONNECTED"], 2);
  EXPECT_EQ(counts["SPLIT"], 1);
  EXPECT_EQ(counts["LOGISTIC"], 3);
  EXPECT_EQ(counts["TANH"], 2);
}

TEST(ModelBuilderTest, FusedLstmIsTheKeras15InputVariant) {
  BuildSpec s = spec_for(find_cell("lstm"), {6, 2, 5, 3, {}});
  std::unique_ptr<Built> keep;
  AnalyzerReport r = analyze(s, &keep);
  ASSERT_EQ(r.subgraphs.size(), 1u);
  const SubgraphReport& main = r.subgraphs[0];
  ASSERT_EQ(main.ops[0].name, "UNIDIRECTIONAL_SEQUENCE_LSTM");
  const std::vector<int32_t>& in = main.ops[0].inputs;
  ASSERT_EQ(in.size(), 24u);
  for (int omitted : {9, 10, 11, 16, 17, 20, 21, 22, 23}) EXPECT_EQ(in[omitted], -1) << omitted;
  int used = 0;
  for (int32_t t : in) used += t >= 0;
  EXPECT_EQ(used, 15);
  for (int state : {18, 19}) {
    const TensorReport& t = main.tensors[static_cast<size_t>(in[state])];
    EXPECT_TRUE(t.is_variable) << state;
    EXPECT_EQ(t.data_bytes, 0u) << state;
  }
  EXPECT_EQ(main.ops[0].options,
            "fused_activation_function=TANH, cell_clip=0, proj_clip=0, time_major=false, "
            "asymmetric_quantize_inputs=false, diagonal_recurrent_tensors=false");
  // Keras' unit_forget_bias: the forget-gate bias (input 13) starts at 1.
  EXPECT_EQ(main.tensors[static_cast<size_t>(in[13])].data_preview.substr(0, 5), "[1, 1");
  EXPECT_EQ(main.tensors[static_cast<size_t>(in[12])].data_preview.substr(0, 5), "[0, 0");
}

TEST(ModelBuilderTest, FusedGruOpDependsOnFormatAndSemantics) {
  BuildSpec s = spec_for(find_cell("gru"), {6, 2, 5, 3, {}});
  std::unique_ptr<Built> keep;
  EXPECT_EQ(analyze(s, &keep).subgraphs[0].ops[0].name, "CUSTOM:GRUWB_GRU");
  s.format = ModelFormat::kCircle;
  AnalyzerReport circle = analyze(s, &keep);
  ASSERT_GE(circle.subgraphs[0].ops.size(), 2u);
  EXPECT_EQ(op_names(circle.subgraphs[0]),
            (std::vector<std::string>{"TRANSPOSE", "GRU", "FULLY_CONNECTED", "SOFTMAX"}));
  EXPECT_EQ(circle.format, "circle");
  s.reset_after = false;
  EXPECT_EQ(analyze(s, &keep).subgraphs[0].ops[0].name, "CUSTOM:GRUWB_GRU");
}

TEST(ModelBuilderTest, UnrolledHasOneCellPerStepAndNoControlFlow) {
  BuildSpec s = spec_for(find_cell("gru"), {7, 3, 4, 2, {}});
  s.layout = RnnLayout::kUnrolled;
  std::unique_ptr<Built> keep;
  AnalyzerReport r = analyze(s, &keep);
  ASSERT_EQ(r.subgraphs.size(), 1u);
  std::map<std::string, int> counts = op_counts(r.subgraphs[0]);
  EXPECT_EQ(counts["UNPACK"], 1);
  EXPECT_EQ(counts["WHILE"], 0);
  EXPECT_EQ(counts["FULLY_CONNECTED"], 7 * 2 + 1);
  EXPECT_EQ(counts["TANH"], 7);
}

// ---- Initialisation and determinism ---------------------------------------------------

TEST(InitializersTest, Pcg32MatchesTheReferenceStream) {
  // pcg32-demo: pcg32_srandom_r(&rng, 42u, 54u) prints these first values.
  Rng rng(42, 54);
  EXPECT_EQ(rng.next_u32(), 0xa15c02b7u);
  EXPECT_EQ(rng.next_u32(), 0x7b47f409u);
  EXPECT_EQ(rng.next_u32(), 0xba1d3330u);
  EXPECT_EQ(rng.next_u32(), 0x83d2f293u);
}

TEST(InitializersTest, NormalHasUnitVarianceAndUniformStaysInRange) {
  Rng rng(7);
  double sum = 0, squares = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double v = rng.normal();
    sum += v;
    squares += v * v;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(squares / n, 1.0, 0.02);
  std::vector<float> u = uniform(rng, 10000, 0.25f);
  EXPECT_LE(*std::max_element(u.begin(), u.end()), 0.25f);
  EXPECT_GE(*std::min_element(u.begin(), u.end()), -0.25f);
  EXPECT_GT(*std::max_element(u.begin(), u.end()), 0.24f);
}

TEST(InitializersTest, GlorotUniformUsesTheKerasLimit) {
  Rng rng(3);
  std::vector<float> w = glorot_uniform(rng, 180, 3);  // a GRU(60) kernel on 3 features
  ASSERT_EQ(w.size(), 540u);
  const float limit = static_cast<float>(std::sqrt(6.0 / 183.0));
  double squares = 0;
  for (float v : w) {
    EXPECT_LE(std::fabs(v), limit);
    squares += double{v} * v;
  }
  // Variance of U(-l, l) is l^2 / 3.
  EXPECT_NEAR(squares / w.size(), limit * limit / 3.0, 0.15 * limit * limit / 3.0);
}

// Orthonormal columns (fan_out >= fan_in) or rows (fan_out < fan_in).
void expect_orthonormal(const std::vector<float>& m, int rows, int cols, bool by_columns) {
  const int n = by_columns ? cols : rows, len = by_columns ? rows : cols;
  for (int a = 0; a < n; ++a) {
    for (int b = a; b < n; ++b) {
      double dot = 0;
      for (int k = 0; k < len; ++k) {
        const size_t ia =
            by_columns ? static_cast<size_t>(k * cols + a) : static_cast<size_t>(a * cols + k);
        const size_t ib =
            by_columns ? static_cast<size_t>(k * cols + b) : static_cast<size_t>(b * cols + k);
        dot += double{m[ia]} * m[ib];
      }
      EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-5) << a << "," << b;
    }
  }
}

TEST(InitializersTest, OrthogonalRecurrentKernelIsOrthonormal) {
  Rng rng(11);
  expect_orthonormal(orthogonal(rng, 180, 60), 180, 60, true);  // GRU(60): [3H, H]
  expect_orthonormal(orthogonal(rng, 20, 20), 20, 20, true);    // SimpleRNN(20)
  expect_orthonormal(orthogonal(rng, 4, 9), 4, 9, false);
}

TEST(ModelBuilderTest, SameSeedSameBytesOtherSeedOtherWeights) {
  BuildSpec s = spec_for(find_cell("gru"), {5, 3, 4, 3, {}});
  std::vector<uint8_t> a, b, c;
  BuildFigures f;
  std::string error;
  ASSERT_TRUE(build_and_measure(s, &f, &a, &error)) << error;
  ASSERT_TRUE(build_and_measure(s, &f, &b, &error)) << error;
  s.seed = 2;
  ASSERT_TRUE(build_and_measure(s, &f, &c, &error)) << error;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

TEST(ModelBuilderTest, InitialWeightsFollowKerasDefaults) {
  BuildSpec s = spec_for(find_cell("gru"), {5, 3, 6, 3, {}});
  RnnWeights w = initial_weights(s);
  EXPECT_EQ(w.kernel.size(), 54u);
  EXPECT_EQ(w.recurrent_kernel.size(), 108u);
  EXPECT_EQ(w.bias, std::vector<float>(18, 0.f));
  EXPECT_EQ(w.recurrent_bias, std::vector<float>(18, 0.f));
  expect_orthonormal(w.recurrent_kernel, 18, 6, true);
  ASSERT_EQ(w.dense.size(), 1u);
  EXPECT_EQ(w.dense[0].bias, std::vector<float>(3, 0.f));
  s.reset_after = false;
  EXPECT_TRUE(initial_weights(s).recurrent_bias.empty());
}

// ---- Sizes -------------------------------------------------------------------------

TEST(ModelBuilderTest, FusedReferenceModelMeetsTheSizeGoal) {
  for (ModelFormat format : {ModelFormat::kTflite, ModelFormat::kCircle}) {
    BuildSpec s = spec_for(find_cell("gru"), {60, 3, 60, 4, {}});
    s.format = format;
    BuildFigures f;
    std::string error;
    ASSERT_TRUE(build_and_measure(s, &f, nullptr, &error)) << error;
    // GRU: 3*60*(3+60) + 2*180 = 11700; Dense 60*4+4 = 244.
    EXPECT_EQ(f.weight_bytes, (11700u + 244u) * 4u);
    EXPECT_EQ(f.size_goal_bytes, f.weight_bytes + f.weight_bytes / 20 + 2048);
    EXPECT_TRUE(f.meets_size_goal) << f.model_bytes << " > " << f.size_goal_bytes;
    EXPECT_GT(f.arena_bytes, 0u);
    EXPECT_EQ(f.subgraphs, 1u);
  }
}

TEST(ModelBuilderTest, UnrolledToFusedRatioGrowsWithTimesteps) {
  double previous = 0;
  for (int t : {4, 16, 64}) {
    BuildFigures fused, unrolled;
    std::string error;
    BuildSpec s = spec_for(find_cell("gru"), {t, 3, 16, 4, {}});
    ASSERT_TRUE(build_and_measure(s, &fused, nullptr, &error)) << error;
    s.layout = RnnLayout::kUnrolled;
    ASSERT_TRUE(build_and_measure(s, &unrolled, nullptr, &error)) << error;
    const double ratio = static_cast<double>(unrolled.model_bytes) / fused.model_bytes;
    EXPECT_GT(ratio, previous * 1.5) << "T=" << t;
    EXPECT_GT(unrolled.ops, fused.ops * static_cast<uint32_t>(t)) << "T=" << t;
    previous = ratio;
  }
}

// ---- Errors ------------------------------------------------------------------------

TEST(ModelBuilderTest, BadSpecsAreRejectedNamingTheField) {
  std::string error;
  ModelDef def;
  BuildSpec s;
  s.units = 0;
  EXPECT_FALSE(build_model(s, &def, &error));
  EXPECT_EQ(error, "units 0 is out of range (1..100000)");
  s = BuildSpec();
  s.mean = {1.f, 2.f};
  s.variance = {1.f, 1.f};
  EXPECT_FALSE(build_model(s, &def, &error));
  EXPECT_NE(error.find("one mean and one variance per feature (3), got 2 means"), std::string::npos)
      << error;
  s = BuildSpec();
  s.gru_variant = GruVariant::kLegacy;
  EXPECT_FALSE(build_model(s, &def, &error));
  EXPECT_NE(error.find("legacy GRU variant is reset_after=false"), std::string::npos) << error;
  s = BuildSpec();
  RnnWeights w = initial_weights(s);
  w.recurrent_kernel.pop_back();
  s.weights = &w;
  EXPECT_FALSE(build_model(s, &def, &error));
  EXPECT_EQ(error, "weights: recurrent kernel has 10799 values, expected 10800");
}

// ModelRunner::set_packed_weights: on AVX-512 hosts the recurrent kernels run
// over column-major copies of their weights packed at prepare
// (packed_inference_ops()). Every fused cell gives the board path's outputs
// within float rounding, at the reference size, with 3H or 4H not a multiple
// of 16 (H = 37) and H > 128 (the row kernel's AVX-512 limit); the copies
// cost arena bytes there and nothing elsewhere.
TEST(PackedWeightsTest, FusedCellsGiveTheBoardPathsOutputs) {
  struct Case {
    const char* cell;
    ModelFormat format;
    int units;
    bool reset_after;
  };
  const Case cases[] = {
      {"gru", ModelFormat::kTflite, 60, true},  {"gru", ModelFormat::kCircle, 60, true},
      {"gru", ModelFormat::kTflite, 37, false}, {"gru", ModelFormat::kTflite, 130, true},
      {"lstm", ModelFormat::kTflite, 37, true}, {"lstm", ModelFormat::kTflite, 60, true},
      {"rnn", ModelFormat::kTflite, 130, true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.cell) + " H=" + std::to_string(c.units));
    BuildSpec spec;
    spec.cell = find_cell(c.cell);
    spec.units = c.units;
    spec.timesteps = 20;
    spec.format = c.format;
    spec.reset_after = c.reset_after;
    ModelDef def;
    std::vector<uint8_t> bytes;
    std::string error;
    LoadedModel loaded;
    ASSERT_TRUE(build_model(spec, &def, &error)) << error;
    ASSERT_TRUE(write_model(def, c.format, &bytes, &error)) << error;
    ASSERT_TRUE(load_model_bytes(std::move(bytes), "packed", &loaded, &error)) << error;
    ModelRunner board, packed;
    packed.set_packed_weights(true);
    ASSERT_TRUE(board.prepare(loaded.model, &error)) << error;
    ASSERT_TRUE(packed.prepare(loaded.model, &error)) << error;
#if defined(GRUWB_CLONED_HOT_LOOPS)
    if (cpu_has_avx512()) {
      EXPECT_GT(packed.arena_bytes(), board.arena_bytes());
    } else {
      EXPECT_EQ(packed.arena_bytes(), board.arena_bytes());
    }
#endif
    Tensor* in_board = board.interpreter().input(0);
    Tensor* in_packed = packed.interpreter().input(0);
    for (int64_t i = 0; i < in_board->elements(); ++i) {
      in_board->f32()[i] = in_packed->f32()[i] = std::sin(0.37f * static_cast<float>(i)) * 2.f;
    }
    ASSERT_TRUE(board.invoke(&error)) << error;
    ASSERT_TRUE(packed.invoke(&error)) << error;
    const Tensor* out_board = board.interpreter().output(0);
    const Tensor* out_packed = packed.interpreter().output(0);
    ASSERT_EQ(out_board->elements(), out_packed->elements());
    for (int64_t i = 0; i < out_board->elements(); ++i) {
      EXPECT_NEAR(out_packed->f32()[i], out_board->f32()[i],
                  1e-5f * (1.f + std::fabs(out_board->f32()[i])))
          << "output " << i;
    }
  }
}

}  // namespace
}  // namespace gruwb::tools
