// GRUWB_FASTGRNN (plugins/cells/fastgrnn): forward against EdgeML's
// FastGRNNCell equations written again here in double precision, backward
// (BPTT, every weight, the input and the initial state) against central
// differences of that reference (cell_test_util.h), batch > 1, both output
// forms, time-major, a carried variable state, the options, the analyzer's
// figures and a short training run on BasicMotions.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/tools/analyzer.h"
#include "tests/plugins/cell_test_util.h"

namespace gruwb::test {
namespace {

double nonlinearity(const std::string& name, double v) {
  if (name == "sigmoid") return sigmoid_d(v);
  if (name == "tanh") return std::tanh(v);
  return v > 0 ? v : 0;  // relu
}

// The cell's values as the reference reads them; names are the model's.
struct FastGrnn {
  CellDims d;
  CellLayout l;
  std::string gate = "sigmoid", update = "tanh";
  ReferenceArray w{"fastgrnn/W", {}}, u{"fastgrnn/U", {}}, bias{"fastgrnn/bias", {}};
  ReferenceArray zeta{"fastgrnn/zeta", {}}, nu{"fastgrnn/nu", {}};
  ReferenceArray x{"x", {}}, h0{"h0", {}};

  FastGrnn(CellDims dims, CellLayout layout, uint32_t seed) : d(dims), l(layout) {
    const size_t h = static_cast<size_t>(d.units);
    w.values = widen(random_floats(h * static_cast<size_t>(d.input), 0.6f, seed + 1));
    u.values = widen(random_floats(h * h, 0.5f, seed + 2));
    bias.values = widen(random_floats(2 * h, 0.5f, seed + 3));
    // Away from EdgeML's 1 and -4 so that sigmoid(nu) matters.
    zeta.values = {0.7};
    nu.values = {-0.8};
    x.values =
        widen(random_floats(static_cast<size_t>(d.batch * d.time * d.input), 1.2f, seed + 4));
    if (l.initial_state)
      h0.values = widen(random_floats(static_cast<size_t>(d.batch) * h, 0.8f, seed + 5));
  }

  std::vector<double> reference() const {
    const int H = d.units;
    std::vector<double> out(static_cast<size_t>(d.batch) *
                            static_cast<size_t>(l.return_sequences ? d.time * H : H));
    const double z_scale = sigmoid_d(zeta.values[0]), nu_scale = sigmoid_d(nu.values[0]);
    for (int b = 0; b < d.batch; ++b) {
      std::vector<double> h(static_cast<size_t>(H), 0.0), next(static_cast<size_t>(H));
      if (l.initial_state) {
        for (int j = 0; j < H; ++j) h[j] = h0.values[static_cast<size_t>(b * H + j)];
      }
      for (int t = 0; t < d.time; ++t) {
        for (int j = 0; j < H; ++j) {
          double pre = 0;
          for (int k = 0; k < d.input; ++k) {
            pre += w.values[static_cast<size_t>(j * d.input + k)] *
                   x.values[sequence_index(l.time_major, d.batch, d.time, b, t, d.input, k)];
          }
          for (int k = 0; k < H; ++k) pre += u.values[static_cast<size_t>(j * H + k)] * h[k];
          const double z = nonlinearity(gate, pre + bias.values[static_cast<size_t>(j)]);
          const double c = nonlinearity(update, pre + bias.values[static_cast<size_t>(H + j)]);
          next[j] = (z_scale * (1 - z) + nu_scale) * c + z * h[j];
        }
        h = next;
        if (l.return_sequences) {
          for (int j = 0; j < H; ++j)
            out[sequence_index(l.time_major, d.batch, d.time, b, t, H, j)] = h[j];
        }
      }
      if (!l.return_sequences) {
        for (int j = 0; j < H; ++j) out[static_cast<size_t>(b * H + j)] = h[j];
      }
    }
    return out;
  }

  // x [, h0] -> GRUWB_FASTGRNN -> output.
  OpModelBuilder model(bool default_options = false) const {
    OpModelBuilder b;
    const int xi = b.input(x.name, input_shape(d, l));
    const int hi = l.initial_state ? b.input(h0.name, {d.batch, d.units}) : -1;
    const int wi = b.constant(w.name, {d.units, d.input}, narrow(w));
    const int ui = b.constant(u.name, {d.units, d.units}, narrow(u));
    const int bi = b.constant(bias.name, {2, d.units}, narrow(bias));
    const int zi = b.constant(zeta.name, {1}, narrow(zeta));
    const int ni = b.constant(nu.name, {1}, narrow(nu));
    const int y = b.output("y");
    b.custom_op("GRUWB_FASTGRNN", {xi, wi, ui, bi, zi, ni, hi}, {y},
                default_options
                    ? std::vector<uint8_t>()
                    : cell_options(l.return_sequences, l.time_major,
                                   {{"gate_nonlinearity", gate}, {"update_nonlinearity", update}}));
    return b;
  }

  std::vector<Values> inputs() const { return cell_inputs(d, l, x, h0); }
};

TEST(FastGrnnTest, ForwardMatchesTheDoubleReference) {
  uint32_t seed = 10;
  // 12 units: the 8-wide vector blocks and their remainder; 11 steps: a
  // whole time block of 8 and a partial one.
  for (const CellLayout& l : kCellLayouts) {
    FastGrnn cell({3, 11, 3, 12}, l, seed += 10);
    const std::vector<Values> out = run(cell.model(), cell.inputs());
    ASSERT_EQ(out.size(), 1u) << l.what;
    EXPECT_EQ(out[0].shape, output_shape(cell.d, l)) << l.what;
    const std::vector<double> expected = cell.reference();
    const std::vector<float> actual = out[0].floats();
    ASSERT_EQ(actual.size(), expected.size()) << l.what;
    double worst = 0;
    for (size_t i = 0; i < actual.size(); ++i)
      worst = std::max(worst, std::fabs(actual[i] - expected[i]));
    EXPECT_LT(worst, 1e-5) << l.what;
  }
}

TEST(FastGrnnTest, NonlinearityOptionsChangeTheMathsAsEdgeMLs) {
  for (const auto& [gate, update] : std::vector<std::pair<std::string, std::string>>{
           {"tanh", "sigmoid"}, {"sigmoid", "relu"}, {"relu", "tanh"}}) {
    FastGrnn cell({2, 9, 3, 6}, kCellLayouts[0], 77);
    cell.gate = gate;
    cell.update = update;
    const std::vector<Values> out = run(cell.model(), cell.inputs());
    ASSERT_EQ(out.size(), 1u);
    const std::vector<double> expected = cell.reference();
    const std::vector<float> actual = out[0].floats();
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i)
      ASSERT_NEAR(actual[i], expected[i], 1e-5) << gate << "/" << update << " element " << i;
  }
}

TEST(FastGrnnTest, EmptyOptionsAreEdgeMLDefaults) {
  FastGrnn cell({2, 5, 3, 4}, {false, false, false, "defaults"}, 5);
  const std::vector<float> with_defaults = run(cell.model(true), cell.inputs())[0].floats();
  EXPECT_TRUE(floats_near(with_defaults, run(cell.model(), cell.inputs())[0].floats(), 0.f));
  cell.gate = "tanh";  // and a non-default option really changes the output
  EXPECT_FALSE(floats_near(with_defaults, run(cell.model(), cell.inputs())[0].floats(), 1e-3f));
}

TEST(FastGrnnTest, BackwardMatchesCentralDifferencesOfTheDoubleReference) {
  uint32_t seed = 300;
  for (const CellLayout& l : kCellLayouts) {
    // B 2, T 10: batch rows and a gradient block of 8 steps plus 2.
    FastGrnn cell({2, 10, 3, 5}, l, seed += 10);
    Session s;
    ASSERT_TRUE(s.prepare(cell.model(), mse_config()));
    EXPECT_GT(s.trainer.memory().tape_bytes, 0u);
    std::vector<ReferenceArray> weights = {cell.w, cell.u, cell.bias, cell.zeta, cell.nu};
    std::vector<ReferenceArray> inputs = {cell.x};
    if (l.initial_state) inputs.push_back(cell.h0);
    const size_t outputs = cell.reference().size();
    // The reference reads the arrays the differences perturb.
    const auto reference = [&] {
      FastGrnn c = cell;
      c.w = weights[0], c.u = weights[1], c.bias = weights[2], c.zeta = weights[3];
      c.nu = weights[4], c.x = inputs[0];
      if (l.initial_state) c.h0 = inputs[1];
      return c.reference();
    };
    check_gradients_against_reference(s, weights, inputs, random_floats(outputs, 1.f, seed + 7),
                                      reference, std::string("FastGRNN ") + l.what, 1e-5);
  }
}

TEST(FastGrnnTest, VariableStateCarriesAcrossInvokes) {
  // Two invokes of 6 steps from a variable state = one run of 12 steps.
  FastGrnn twelve({2, 12, 3, 5}, {false, false, false, "12 steps"}, 40);
  FastGrnn six({2, 6, 3, 5}, {false, false, false, "6 steps"}, 40);  // the same weights
  OpModelBuilder b;
  const int xi = b.input("x", {2, 6, 3});
  const int state = b.variable("h", {2, 5});
  const int y = b.output("y");
  b.custom_op("GRUWB_FASTGRNN",
              {xi, b.constant("W", {5, 3}, narrow(six.w)), b.constant("U", {5, 5}, narrow(six.u)),
               b.constant("b", {2, 5}, narrow(six.bias)), b.constant("zeta", {1}, narrow(six.zeta)),
               b.constant("nu", {1}, narrow(six.nu)), state},
              {y}, {});
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  for (int half = 0; half < 2; ++half) {
    runner.set_input(0, Values::f32({2, 6, 3}, time_window(twelve.x, twelve.d, half * 6, 6)));
    ASSERT_TRUE(runner.invoke()) << runner.error();
  }
  const std::vector<double> expected = twelve.reference();
  const std::vector<float> actual = runner.output(0).floats();
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << i;
}

TEST(FastGrnnTest, BadOptionsAndShapesAreRefusedByName) {
  FastGrnn cell({1, 4, 3, 4}, kCellLayouts[0], 3);
  const auto with_options = [&](const std::vector<uint8_t>& options) {
    OpModelBuilder b = cell.model();
    b.def().subgraphs[0]->operators[0]->custom_options = options;
    return prepare_error(b);
  };
  flexbuffers::Builder unknown;
  unknown.Map([&] { unknown.Bool("wRank", true); });
  unknown.Finish();
  EXPECT_NE(with_options(unknown.GetBuffer()).find("option 'wRank' is unknown"), std::string::npos);
  EXPECT_NE(with_options(cell_options(false, false, {{"gate_nonlinearity", "quantSigm"}}))
                .find("gate_nonlinearity 'quantSigm'"),
            std::string::npos);
  EXPECT_NE(with_options({1, 2, 3}).find("not a FlexBuffer map"), std::string::npos);

  OpModelBuilder b = cell.model();
  const int bias = 3;  // x, W, U, bias (no h0 input in this layout)
  ASSERT_EQ(b.tensor_def(bias).name, cell.bias.name);
  b.tensor_def(bias).shape = {8};  // [2H] instead of [2,H]
  const std::string bias_error = prepare_error(b);
  EXPECT_NE(bias_error.find("bias (input 3)"), std::string::npos) << bias_error;
  EXPECT_NE(bias_error.find("[2,4]"), std::string::npos) << bias_error;
}

// The figures the report quotes, measured by the analyzer (the GUI's and the
// CLI's source): I 3, H 60, T 60 as the reference model.
TEST(FastGrnnTest, AnalyzerCountsMacsAndParameters) {
  FastGrnn cell({1, 60, 3, 60}, {false, false, false, "I3 H60"}, 1);
  const std::vector<uint8_t> bytes = cell.model().bytes();
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  const tools::AnalyzerReport report = tools::analyze_model(model, "fastgrnn.tflite");
  EXPECT_TRUE(report.engine_runs) << report.engine_error;
  EXPECT_EQ(report.firmware_ops, "GRUWB_FASTGRNN");
  ASSERT_EQ(report.subgraphs[0].ops.size(), 1u);
  const uint64_t macs = report.subgraphs[0].ops[0].macs;
  EXPECT_EQ(macs, 60u * 60u * (3u + 60u));  // per step: W and U once, shared by both gates
  EXPECT_EQ(report.parameters, 60u * 3u + 60u * 60u + 2u * 60u + 2u);
  std::printf("GRUWB_FASTGRNN I=3 H=60: %llu MACs per step, %llu parameters (%s)\n",
              static_cast<unsigned long long>(macs / 60),
              static_cast<unsigned long long>(report.parameters),
              report.subgraphs[0].ops[0].macs_formula.c_str());
}

// EdgeML's initialisation (W, U ~ 0.1 N(0,1), biases 1, zeta 1, nu -4) and a
// few Adam steps on 8 real BasicMotions series lower the loss.
TEST(FastGrnnTest, AdamStepsOnBasicMotionsLowerTheLoss) {
  const DatasetSlice slice = basic_motions_slice(40, 2);
  ASSERT_EQ(slice.x.size(), 8u);
  const int H = 8, I = slice.features;
  OpModelBuilder b;
  const int x = b.input("x", {1, slice.timesteps, I});
  const int h = b.tensor("fastgrnn/h");
  b.custom_op("GRUWB_FASTGRNN",
              {x, b.constant("fastgrnn/W", {H, I}, normal_floats(H * I, 0.1f, 1)),
               b.constant("fastgrnn/U", {H, H}, normal_floats(H * H, 0.1f, 2)),
               b.constant("fastgrnn/bias", {2, H}, std::vector<float>(2 * H, 1.f)),
               b.constant("fastgrnn/zeta", {1}, {1.f}), b.constant("fastgrnn/nu", {1}, {-4.f})},
              {h}, cell_options(false, false));
  add_classifier_head(b, h, H, slice.classes, 3);
  double before = 0, after = 0;
  train_on_slice(b, slice, 20, &before, &after);
  std::printf("FastGRNN on 8 BasicMotions series: loss %.4f -> %.4f after 20 Adam steps\n", before,
              after);
  EXPECT_LT(after, 0.8 * before);
}

}  // namespace
}  // namespace gruwb::test
