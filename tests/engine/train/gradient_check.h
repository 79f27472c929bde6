#pragma once
// Finite-difference gradient checks shared by the training tests and the
// kernels' own tests: central differences of the trainer's loss (eps 1e-3,
// float32 forward), so expected values come from the forward kernels, never
// from the backward code under test.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/train/trainer.h"
#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {

// A 16-byte aligned arena owned by the test.
struct Arena {
  explicit Arena(size_t bytes) : raw(bytes + 16) {
    data =
        reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw.data()) + 15) & ~uintptr_t{15});
    size = bytes;
  }
  std::vector<uint8_t> raw;
  uint8_t* data = nullptr;
  size_t size = 0;
};

// A model loaded from builder bytes plus a prepared trainer.
struct Session {
  std::vector<uint8_t> bytes;
  Model model;
  Arena arena{8u << 20};
  Trainer trainer;

  ::testing::AssertionResult prepare(const OpModelBuilder& b, const TrainingConfig& config,
                                     ModelFormat format = ModelFormat::kTflite) {
    bytes = b.bytes(format);
    return prepare_bytes(config);
  }
  ::testing::AssertionResult prepare_bytes(const TrainingConfig& config) {
    Status s = Model::load(bytes.data(), bytes.size(), &model);
    if (!s.ok()) return ::testing::AssertionFailure() << "load: " << s.message();
    s = trainer.prepare(model, config, arena.data, arena.size);
    if (!s.ok()) return ::testing::AssertionFailure() << "prepare: " << s.message();
    return ::testing::AssertionSuccess();
  }
};

inline std::vector<float> random_floats(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline float loss_now(Trainer& t) {
  float loss = 0.f;
  Status s = t.evaluate(&loss, nullptr);
  EXPECT_TRUE(s.ok()) << s.message();
  return loss;
}

// |analytic - numeric| <= rel * max(|a|, |n|) + abs_floor for every element.
inline void expect_close(const std::vector<float>& analytic, const std::vector<double>& numeric,
                         const std::string& what, double rel = 2e-2, double abs_floor = 3e-4) {
  ASSERT_EQ(analytic.size(), numeric.size()) << what;
  double max_grad = 0.0;
  for (size_t i = 0; i < analytic.size(); ++i) {
    double a = analytic[i], n = numeric[i];
    max_grad = std::max(max_grad, std::fabs(n));
    EXPECT_LE(std::fabs(a - n), rel * std::max(std::fabs(a), std::fabs(n)) + abs_floor)
        << what << " element " << i << ": analytic " << a << " numeric " << n;
  }
  EXPECT_GT(max_grad, 1e-3) << what << ": the check needs a non-trivial gradient";
}

// Central differences of the loss w.r.t. every element of `data`.
inline std::vector<double> numeric_gradient(Trainer& t, float* data, int64_t n, float eps = 1e-3f) {
  std::vector<double> g(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float saved = data[i];
    data[i] = saved + eps;
    const double plus = loss_now(t);
    data[i] = saved - eps;
    const double minus = loss_now(t);
    data[i] = saved;
    g[static_cast<size_t>(i)] = (plus - minus) / (2.0 * static_cast<double>(eps));
  }
  return g;
}

inline std::vector<float> copy_of(const Tensor* t) {
  return std::vector<float>(t->f32(), t->f32() + t->elements());
}

// Sets inputs and labels, runs one forward/backward and checks every
// trainable weight's gradient and every float model input's gradient.
inline void check_gradients(Session& s, const std::vector<std::vector<float>>& inputs,
                            const std::vector<float>& labels, const std::string& what) {
  Trainer& t = s.trainer;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor* in = t.input(static_cast<int>(i));
    ASSERT_EQ(static_cast<size_t>(in->elements()), inputs[i].size()) << what << " input " << i;
    memcpy(in->data, inputs[i].data(), in->bytes);
  }
  ASSERT_EQ(static_cast<size_t>(t.label_count()), labels.size()) << what;
  memcpy(t.label(), labels.data(), labels.size() * sizeof(float));
  t.clear_gradients();
  float loss = 0.f;
  Status st = t.accumulate(&loss);
  ASSERT_TRUE(st.ok()) << what << ": " << st.message();
  std::vector<std::vector<float>> input_grads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor* g = t.interpreter().gradient(0, t.input(static_cast<int>(i)));
    input_grads.push_back(g ? copy_of(g) : std::vector<float>());
  }
  for (int w = 0; w < t.weight_count(); ++w) {
    std::vector<float> analytic = copy_of(t.weight_gradient(w));
    Tensor* weights = t.weight(w);
    expect_close(analytic, numeric_gradient(t, weights->f32(), weights->elements()),
                 what + " weight '" + weights->name + "'");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (input_grads[i].empty()) continue;
    Tensor* in = t.input(static_cast<int>(i));
    expect_close(input_grads[i], numeric_gradient(t, in->f32(), in->elements()),
                 what + " input '" + in->name + "'");
  }
}

// Records the per-time-step state gradient norms an observer hears (the
// recurrent kernels and WHILE loops report them last step first).
struct StateGradientLog : TrainingObserver {
  std::vector<int32_t> steps;
  std::vector<float> norms;
  void on_state_gradient(int32_t, int32_t, const char*, int32_t step, float norm) override {
    steps.push_back(step);
    norms.push_back(norm);
  }
};

inline TrainingConfig mse_config(bool input_gradients = true) {
  TrainingConfig c;
  c.loss = Loss::kMeanSquaredError;
  c.optimizer = Optimizer::kSgd;
  c.learning_rate = 0.1f;
  c.input_gradients = input_gradients;
  return c;
}

// A model with float inputs of the given shapes: checks the input gradients
// of every float input (the op under test has no weights of its own).
inline void check_input_gradients(const OpModelBuilder& b,
                                  const std::vector<std::vector<float>>& inputs, size_t outputs,
                                  const std::string& what, uint32_t seed = 99) {
  Session s;
  ASSERT_TRUE(s.prepare(b, mse_config()));
  check_gradients(s, inputs, random_floats(outputs, 1.f, seed), what);
}

}  // namespace gruwb::test
