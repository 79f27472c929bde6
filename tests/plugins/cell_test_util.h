#pragma once
// Shared by the cell plugins' kernel tests (fastgrnn_test, mgu_test): each test
// writes its cell's equations once more in double precision (the reference),
// and these helpers
//  - check the trainer's gradients (the kernel's backward, float32) against
//    central differences of that double reference: eps 1e-6 in double leaves
//    a truncation error ~eps^2 |f'''| ~ 1e-12 and a rounding error
//    ~1e-16 / eps = 1e-10, so the numbers the kernel is held to are exact to
//    ~1e-9 and the tolerance only has to cover the kernel's float32 rounding;
//  - build the tiny classifier (x -> cell -> FULLY_CONNECTED -> SOFTMAX) and
//    train it a few Adam steps on a slice of the real BasicMotions dataset.

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "app/core/dataset.h"
#include "engine/train/trainer.h"
#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {

// A cell op's custom options: the two layout flags every cell has, plus
// string-valued ones.
inline std::vector<uint8_t> cell_options(
    bool return_sequences, bool time_major,
    const std::vector<std::pair<std::string, std::string>>& strings = {}) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Bool("return_sequences", return_sequences);
    fbb.Bool("time_major", time_major);
    for (const auto& [key, value] : strings) fbb.String(key.c_str(), value);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

// The sizes and the layout one run of a cell op uses.
struct CellDims {
  int batch, time, input, units;
};

struct CellLayout {
  bool return_sequences;
  bool time_major;
  bool initial_state;  // h0 as a second model input, else zeros
  const char* what;
};

// Both output forms, batch- and time-major, with and without h0.
inline const CellLayout kCellLayouts[] = {
    {true, false, false, "sequences"},
    {false, false, true, "last state, h0"},
    {true, true, true, "time-major sequences, h0"},
};

inline std::vector<int32_t> input_shape(const CellDims& d, const CellLayout& l) {
  return l.time_major ? std::vector<int32_t>{d.time, d.batch, d.input}
                      : std::vector<int32_t>{d.batch, d.time, d.input};
}

inline std::vector<int32_t> output_shape(const CellDims& d, const CellLayout& l) {
  if (!l.return_sequences) return {d.batch, d.units};
  return l.time_major ? std::vector<int32_t>{d.time, d.batch, d.units}
                      : std::vector<int32_t>{d.batch, d.time, d.units};
}

// Where element (b, t, feature) of a [B,T,F] or [T,B,F] sequence lives.
inline size_t sequence_index(bool time_major, int batch, int time, int b, int t, int features,
                             int feature) {
  const int row = time_major ? t * batch + b : b * time + t;
  return static_cast<size_t>(row) * static_cast<size_t>(features) + static_cast<size_t>(feature);
}

inline std::vector<double> widen(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

inline double sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One array the double reference reads: a weight tensor (named as in the
// model) or a model input, holding the float values the model holds.
struct ReferenceArray {
  std::string name;
  std::vector<double> values;
};

inline std::vector<float> narrow(const ReferenceArray& a) {
  return std::vector<float>(a.values.begin(), a.values.end());
}

// The model inputs: x, and h0 when the layout has it.
inline std::vector<Values> cell_inputs(const CellDims& d, const CellLayout& l,
                                       const ReferenceArray& x, const ReferenceArray& h0) {
  std::vector<Values> in = {Values::f32(input_shape(d, l), narrow(x))};
  if (l.initial_state) in.push_back(Values::f32({d.batch, d.units}, narrow(h0)));
  return in;
}

// Steps [first, first + count) of a batch-major x [B,T,I] as [B,count,I].
inline std::vector<float> time_window(const ReferenceArray& x, const CellDims& d, int first,
                                      int count) {
  std::vector<float> window;
  for (int b = 0; b < d.batch; ++b) {
    for (int t = first; t < first + count; ++t) {
      for (int k = 0; k < d.input; ++k)
        window.push_back(
            static_cast<float>(x.values[sequence_index(false, d.batch, d.time, b, t, d.input, k)]));
    }
  }
  return window;
}

// Central differences of `loss` (which reads `array`) for every element.
inline std::vector<double> central_differences(ReferenceArray& array,
                                               const std::function<double()>& loss) {
  const double eps = 1e-6;
  std::vector<double> g(array.values.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const double saved = array.values[i];
    array.values[i] = saved + eps;
    const double plus = loss();
    array.values[i] = saved - eps;
    const double minus = loss();
    array.values[i] = saved;
    g[i] = (plus - minus) / (2 * eps);
  }
  return g;
}

// max |analytic - numeric| <= relative * max |numeric|: float32 rounding of
// sums over time steps and units is relative to the gradient's own scale.
// The cell tests hold 1e-5: both cells measured at most 4.1e-7 (float32's
// epsilon is 1.2e-7), and the margin covers the FMA of the x86-64-v3/v4 clones.
// A backward with one term dropped is off by 1e-1 or more.
inline void expect_gradient_near(const std::vector<float>& analytic,
                                 const std::vector<double>& numeric, const std::string& what,
                                 double relative) {
  ASSERT_EQ(analytic.size(), numeric.size()) << what;
  double scale = 0, worst = 0;
  size_t worst_index = 0;
  for (size_t i = 0; i < numeric.size(); ++i) {
    scale = std::max(scale, std::fabs(numeric[i]));
    const double d = std::fabs(analytic[i] - numeric[i]);
    if (!(d <= worst)) {
      worst = d;
      worst_index = i;
    }
  }
  EXPECT_GT(scale, 1e-4) << what << ": the check needs a non-trivial gradient";
  EXPECT_LE(worst, relative * scale)
      << what << ": element " << worst_index << " analytic " << analytic[worst_index] << " numeric "
      << numeric[worst_index] << " (largest |numeric| " << scale << ")";
}

// Runs one forward/backward of the model in `s` (MSE loss, input gradients on)
// with the inputs' and weights' reference values, then checks the gradient of
// every trainable weight and of every model input against central
// differences of mean((reference() - labels)^2), the trainer's MSE.
inline void check_gradients_against_reference(Session& s, std::vector<ReferenceArray>& weights,
                                              std::vector<ReferenceArray>& inputs,
                                              const std::vector<float>& labels,
                                              const std::function<std::vector<double>()>& reference,
                                              const std::string& what, double relative) {
  Trainer& t = s.trainer;
  ASSERT_EQ(t.input_count(), static_cast<int>(inputs.size())) << what;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor* in = t.input(static_cast<int>(i));
    ASSERT_EQ(static_cast<size_t>(in->elements()), inputs[i].values.size()) << what;
    for (size_t k = 0; k < inputs[i].values.size(); ++k)
      in->f32()[k] = static_cast<float>(inputs[i].values[k]);
  }
  ASSERT_EQ(static_cast<size_t>(t.label_count()), labels.size()) << what;
  memcpy(t.label(), labels.data(), labels.size() * sizeof(float));
  t.clear_gradients();
  float loss = 0.f;
  Status st = t.accumulate(&loss);
  ASSERT_TRUE(st.ok()) << what << ": " << st.message();
  const auto mse = [&] {
    const std::vector<double> y = reference();
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += (y[i] - labels[i]) * (y[i] - labels[i]);
    return sum / static_cast<double>(y.size());
  };
  EXPECT_NEAR(loss, mse(), 1e-5 * mse()) << what << ": the forward loss";
  ASSERT_EQ(t.weight_count(), static_cast<int>(weights.size())) << what;
  for (int w = 0; w < t.weight_count(); ++w) {
    const std::string name = t.weight(w)->name;
    auto it = std::find_if(weights.begin(), weights.end(),
                           [&](const ReferenceArray& r) { return r.name == name; });
    ASSERT_NE(it, weights.end()) << what << ": trainable weight '" << name << "' unexpected";
    expect_gradient_near(copy_of(t.weight_gradient(w)), central_differences(*it, mse),
                         what + " weight '" + name + "'", relative);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor* g = t.interpreter().gradient(0, t.input(static_cast<int>(i)));
    ASSERT_NE(g, nullptr) << what << " input '" << inputs[i].name << "' has no gradient";
    expect_gradient_near(copy_of(g), central_differences(inputs[i], mse),
                         what + " input '" + inputs[i].name + "'", relative);
  }
}

inline std::vector<float> normal_floats(size_t n, float stddev, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Keras's glorot_uniform for a [rows, cols] matrix.
inline std::vector<float> glorot_uniform(int rows, int cols, uint32_t seed) {
  return random_floats(static_cast<size_t>(rows) * static_cast<size_t>(cols),
                       std::sqrt(6.f / static_cast<float>(rows + cols)), seed);
}

// The first `per_class` training series of each class of BasicMotions (6
// channels, accelerometer and gyroscope), cropped to `timesteps` and
// normalised per channel with the training split's statistics.
struct DatasetSlice {
  int timesteps = 0;
  int features = 0;
  int classes = 0;
  std::vector<std::vector<float>> x;  // [T*F] each, time-major
  std::vector<int> labels;
};

inline DatasetSlice basic_motions_slice(int timesteps, int per_class) {
  DatasetSlice slice;
  app::DatasetFiles files;
  std::string error;
  const std::string path =
      std::string(GRUWB_SHARED_DIR) + "/data/datasets/BasicMotions/BasicMotions_TRAIN.ts";
  if (!app::load_dataset(path, &files, &error)) {
    ADD_FAILURE() << error;
    return slice;
  }
  app::PrepareOptions options;
  options.timesteps = timesteps;
  options.length_policy = app::LengthPolicy::kCrop;
  app::PreparedData data;
  if (!app::prepare_dataset(files, options, &data, &error)) {
    ADD_FAILURE() << error;
    return slice;
  }
  slice.timesteps = data.timesteps;
  slice.features = data.features;
  slice.classes = static_cast<int>(data.class_names.size());
  const size_t row = static_cast<size_t>(data.timesteps) * static_cast<size_t>(data.features);
  std::vector<int> taken(static_cast<size_t>(slice.classes), 0);
  for (int i = 0; i < data.train.size(); ++i) {
    const int label = data.train.labels[static_cast<size_t>(i)];
    if (taken[static_cast<size_t>(label)]++ >= per_class) continue;
    const float* x = data.train.x.data() + static_cast<size_t>(i) * row;
    slice.x.emplace_back(x, x + row);
    slice.labels.push_back(label);
  }
  return slice;
}

// Adds FULLY_CONNECTED [classes, units] + SOFTMAX after the cell's output
// `features` [1, units] and marks the probabilities as the model output.
inline void add_classifier_head(OpModelBuilder& b, int features, int units, int classes,
                                uint32_t seed) {
  const int w = b.constant("dense/kernel", {classes, units}, glorot_uniform(classes, units, seed));
  const int bias = b.constant("dense/bias", {classes}, std::vector<float>(classes, 0.f));
  const int logits = b.tensor("logits");
  b.op(BuiltinOperator::FULLY_CONNECTED, {features, w, bias}, {logits},
       fb::FullyConnectedOptionsT());
  const int probabilities = b.output("probabilities");
  fb::SoftmaxOptionsT softmax;
  softmax.beta = 1.f;
  b.op(BuiltinOperator::SOFTMAX, {logits}, {probabilities}, softmax);
}

// Mean sparse cross-entropy over the slice (forward only).
inline double mean_loss(Trainer& t, const DatasetSlice& slice) {
  double sum = 0;
  for (size_t i = 0; i < slice.x.size(); ++i) {
    memcpy(t.input(0)->data, slice.x[i].data(), t.input(0)->bytes);
    t.label()[0] = static_cast<float>(slice.labels[i]);
    sum += loss_now(t);
  }
  return sum / static_cast<double>(slice.x.size());
}

// `updates` Adam steps (lr 0.01, Keras defaults otherwise), each over the
// whole slice as one batch; returns the mean loss before and after.
inline void train_on_slice(const OpModelBuilder& b, const DatasetSlice& slice, int updates,
                           double* before, double* after) {
  TrainingConfig config;
  config.loss = Loss::kSparseCategoricalCrossEntropy;
  config.optimizer = Optimizer::kAdam;
  config.learning_rate = 0.01f;
  config.batch_size = static_cast<int32_t>(slice.x.size());
  Session s;
  ASSERT_TRUE(s.prepare(b, config));
  Trainer& t = s.trainer;
  *before = mean_loss(t, slice);
  for (int u = 0; u < updates; ++u) {
    for (size_t i = 0; i < slice.x.size(); ++i) {
      memcpy(t.input(0)->data, slice.x[i].data(), t.input(0)->bytes);
      t.label()[0] = static_cast<float>(slice.labels[i]);
      Status st = t.train_sample(nullptr);
      ASSERT_TRUE(st.ok()) << st.message();
    }
  }
  EXPECT_EQ(t.step(), updates);
  *after = mean_loss(t, slice);
}

}  // namespace gruwb::test
