// GRUWB_MGU (plugins/cells/mgu): forward against the minimal gated unit's
// equations (Zhou et al., 2016) written again here in double precision,
// backward (BPTT, every weight, the input and the initial state) against
// central differences of that reference (cell_test_util.h), batch > 1, both
// output forms, time-major, a carried variable state, the options, the
// analyzer's figures and a short training run on BasicMotions.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/tools/analyzer.h"
#include "tests/plugins/cell_test_util.h"

namespace gruwb::test {
namespace {

// The cell's values as the reference reads them; names are the model's.
struct Mgu {
  CellDims d;
  CellLayout l;
  ReferenceArray w{"mgu/kernel", {}}, u{"mgu/recurrent_kernel", {}}, bias{"mgu/bias", {}};
  ReferenceArray x{"x", {}}, h0{"h0", {}};

  Mgu(CellDims dims, CellLayout layout, uint32_t seed) : d(dims), l(layout) {
    const size_t h = static_cast<size_t>(d.units);
    w.values = widen(random_floats(2 * h * static_cast<size_t>(d.input), 0.6f, seed + 1));
    u.values = widen(random_floats(2 * h * h, 0.6f, seed + 2));
    bias.values = widen(random_floats(2 * h, 0.5f, seed + 3));
    x.values =
        widen(random_floats(static_cast<size_t>(d.batch * d.time * d.input), 1.2f, seed + 4));
    if (l.initial_state)
      h0.values = widen(random_floats(static_cast<size_t>(d.batch) * h, 0.8f, seed + 5));
  }

  // W row r times x_t, plus the bias of row r.
  double input_part(int b, int t, int r) const {
    double sum = bias.values[static_cast<size_t>(r)];
    for (int k = 0; k < d.input; ++k) {
      sum += w.values[static_cast<size_t>(r * d.input + k)] *
             x.values[sequence_index(l.time_major, d.batch, d.time, b, t, d.input, k)];
    }
    return sum;
  }

  std::vector<double> reference() const {
    const int H = d.units;
    std::vector<double> out(static_cast<size_t>(d.batch) *
                            static_cast<size_t>(l.return_sequences ? d.time * H : H));
    for (int b = 0; b < d.batch; ++b) {
      std::vector<double> h(static_cast<size_t>(H), 0.0), f(static_cast<size_t>(H));
      if (l.initial_state) {
        for (int j = 0; j < H; ++j) h[j] = h0.values[static_cast<size_t>(b * H + j)];
      }
      for (int t = 0; t < d.time; ++t) {
        for (int j = 0; j < H; ++j) {  // f = sigmoid(W_f x + U_f h + b_f)
          double pre = input_part(b, t, j);
          for (int k = 0; k < H; ++k) pre += u.values[static_cast<size_t>(j * H + k)] * h[k];
          f[j] = sigmoid_d(pre);
        }
        std::vector<double> next(static_cast<size_t>(H));
        for (int j = 0; j < H; ++j) {  // h~ = tanh(W_h x + U_h (f * h) + b_h)
          double pre = input_part(b, t, H + j);
          for (int k = 0; k < H; ++k)
            pre += u.values[static_cast<size_t>((H + j) * H + k)] * f[k] * h[k];
          next[j] = (1 - f[j]) * h[j] + f[j] * std::tanh(pre);
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

  // x [, h0] -> GRUWB_MGU -> output.
  OpModelBuilder model(bool default_options = false) const {
    OpModelBuilder b;
    const int xi = b.input(x.name, input_shape(d, l));
    const int hi = l.initial_state ? b.input(h0.name, {d.batch, d.units}) : -1;
    const int wi = b.constant(w.name, {2 * d.units, d.input}, narrow(w));
    const int ui = b.constant(u.name, {2 * d.units, d.units}, narrow(u));
    const int bi = b.constant(bias.name, {2 * d.units}, narrow(bias));
    const int y = b.output("y");
    b.custom_op(
        "GRUWB_MGU", {xi, wi, ui, bi, hi}, {y},
        default_options ? std::vector<uint8_t>() : cell_options(l.return_sequences, l.time_major));
    return b;
  }

  std::vector<Values> inputs() const { return cell_inputs(d, l, x, h0); }
};

TEST(MguTest, ForwardMatchesTheDoubleReference) {
  uint32_t seed = 10;
  // 12 units: the 8-wide vector blocks and their remainder; 11 steps: a
  // whole time block of 8 and a partial one.
  for (const CellLayout& l : kCellLayouts) {
    Mgu cell({3, 11, 3, 12}, l, seed += 10);
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

TEST(MguTest, EmptyOptionsReturnTheLastStateBatchMajor) {
  Mgu cell({2, 5, 3, 4}, {false, false, false, "defaults"}, 5);
  EXPECT_TRUE(floats_near(run(cell.model(true), cell.inputs())[0].floats(),
                          run(cell.model(), cell.inputs())[0].floats(), 0.f));
}

TEST(MguTest, BackwardMatchesCentralDifferencesOfTheDoubleReference) {
  uint32_t seed = 300;
  for (const CellLayout& l : kCellLayouts) {
    // B 2, T 10: batch rows and a gradient block of 8 steps plus 2.
    Mgu cell({2, 10, 3, 5}, l, seed += 10);
    Session s;
    ASSERT_TRUE(s.prepare(cell.model(), mse_config()));
    EXPECT_GT(s.trainer.memory().tape_bytes, 0u);
    std::vector<ReferenceArray> weights = {cell.w, cell.u, cell.bias};
    std::vector<ReferenceArray> inputs = {cell.x};
    if (l.initial_state) inputs.push_back(cell.h0);
    const size_t outputs = cell.reference().size();
    // The reference reads the arrays the differences perturb.
    const auto reference = [&] {
      Mgu c = cell;
      c.w = weights[0], c.u = weights[1], c.bias = weights[2], c.x = inputs[0];
      if (l.initial_state) c.h0 = inputs[1];
      return c.reference();
    };
    check_gradients_against_reference(s, weights, inputs, random_floats(outputs, 1.f, seed + 7),
                                      reference, std::string("MGU ") + l.what, 1e-5);
  }
}

TEST(MguTest, VariableStateCarriesAcrossInvokes) {
  // Two invokes of 6 steps from a variable state = one run of 12 steps.
  Mgu twelve({2, 12, 3, 5}, {false, false, false, "12 steps"}, 40);
  OpModelBuilder b;
  const int xi = b.input("x", {2, 6, 3});
  const int state = b.variable("h", {2, 5});
  const int y = b.output("y");
  b.custom_op(
      "GRUWB_MGU",
      {xi, b.constant("W", {10, 3}, narrow(twelve.w)), b.constant("U", {10, 5}, narrow(twelve.u)),
       b.constant("b", {10}, narrow(twelve.bias)), state},
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

TEST(MguTest, BadOptionsAndShapesAreRefusedByName) {
  Mgu cell({1, 4, 3, 4}, kCellLayouts[0], 3);
  const auto with_options = [&](const std::vector<uint8_t>& options) {
    OpModelBuilder b = cell.model();
    b.def().subgraphs[0]->operators[0]->custom_options = options;
    return prepare_error(b);
  };
  EXPECT_NE(with_options(cell_options(false, false, {{"activation", "relu"}}))
                .find("option 'activation' is unknown"),
            std::string::npos);
  flexbuffers::Builder not_bool;
  not_bool.Map([&] { not_bool.String("time_major", "yes"); });
  not_bool.Finish();
  EXPECT_NE(with_options(not_bool.GetBuffer()).find("'time_major' must be a bool"),
            std::string::npos);

  OpModelBuilder b = cell.model();
  const int recurrent = 2;  // x, W, U (no h0 input in this layout)
  ASSERT_EQ(b.tensor_def(recurrent).name, cell.u.name);
  b.tensor_def(recurrent).shape = {4, 8};  // [H, 2H]: the Keras layout, not ours
  const std::string error = prepare_error(b);
  EXPECT_NE(error.find("recurrent kernel (input 2)"), std::string::npos) << error;
}

// The figures the report quotes, measured by the analyzer (the GUI's and the
// CLI's source): I 3, H 60, T 60 as the reference model.
TEST(MguTest, AnalyzerCountsMacsAndParameters) {
  Mgu cell({1, 60, 3, 60}, {false, false, false, "I3 H60"}, 1);
  const std::vector<uint8_t> bytes = cell.model().bytes();
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  const tools::AnalyzerReport report = tools::analyze_model(model, "mgu.tflite");
  EXPECT_TRUE(report.engine_runs) << report.engine_error;
  EXPECT_EQ(report.firmware_ops, "GRUWB_MGU");
  ASSERT_EQ(report.subgraphs[0].ops.size(), 1u);
  const uint64_t macs = report.subgraphs[0].ops[0].macs;
  EXPECT_EQ(macs, 60u * 2u * 60u * (3u + 60u));  // per step: W [2H,I] and U [2H,H] once
  EXPECT_EQ(report.parameters, 2u * 60u * 3u + 2u * 60u * 60u + 2u * 60u);
  std::printf("GRUWB_MGU I=3 H=60: %llu MACs per step, %llu parameters (%s)\n",
              static_cast<unsigned long long>(macs / 60),
              static_cast<unsigned long long>(report.parameters),
              report.subgraphs[0].ops[0].macs_formula.c_str());
}

// glorot_uniform weights, a zero bias and a few
// Adam steps on 8 real BasicMotions series lower the loss.
TEST(MguTest, AdamStepsOnBasicMotionsLowerTheLoss) {
  const DatasetSlice slice = basic_motions_slice(40, 2);
  ASSERT_EQ(slice.x.size(), 8u);
  const int H = 8, I = slice.features;
  OpModelBuilder b;
  const int x = b.input("x", {1, slice.timesteps, I});
  const int h = b.tensor("mgu/h");
  b.custom_op("GRUWB_MGU",
              {x, b.constant("mgu/kernel", {2 * H, I}, glorot_uniform(2 * H, I, 1)),
               b.constant("mgu/recurrent_kernel", {2 * H, H}, glorot_uniform(2 * H, H, 2)),
               b.constant("mgu/bias", {2 * H}, std::vector<float>(2 * H, 0.f))},
              {h}, cell_options(false, false));
  add_classifier_head(b, h, H, slice.classes, 3);
  double before = 0, after = 0;
  train_on_slice(b, slice, 20, &before, &after);
  std::printf("MGU on 8 BasicMotions series: loss %.4f -> %.4f after 20 Adam steps\n", before,
              after);
  EXPECT_LT(after, 0.8 * before);
}

}  // namespace
}  // namespace gruwb::test
