// quantize_gru_op: the reference classifier's GRU (60x3 input, GRU 60, Dense 4)
// turned into the integer GRU, trained on BasicMotionsAcc60 (the float engine's
// trainer, deterministic), measured against the float model on the test split
// (docs/fused-gru-op.md "Integer GRU"), and the refusals.

#include "engine/tools/gru_quantization.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "engine/runtime/interpreter.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_runner.h"
#include "engine/train/trainer.h"
#include "engine/train/training_plan.h"
#include "tests/tools/model_def_util.h"

namespace gruwb::tools {
namespace {

constexpr int kT = 60, kF = 3, kH = 60, kClasses = 4;

// BasicMotionsAcc60: [T*F] time-major windows and class indices.
struct Split {
  std::vector<std::vector<float>> x;
  std::vector<int> labels;
};

Split read_ts(const std::string& name) {
  Split split;
  std::ifstream in(std::string(GRUWB_SOURCE_DIR) + "/resources/samples/" + name);
  std::vector<std::string> classes;
  std::string line;
  bool data = false;
  while (std::getline(in, line)) {
    if (line.rfind("@classLabel", 0) == 0) {
      std::istringstream words(line.substr(12));
      std::string word;
      words >> word;  // "true"
      while (words >> word) classes.push_back(word);
    } else if (line.rfind("@data", 0) == 0) {
      data = true;
    } else if (data && !line.empty()) {
      std::vector<float> x(kT * kF);
      std::istringstream dims(line);
      std::string dim;
      for (int d = 0; d < kF && std::getline(dims, dim, ':'); ++d) {
        std::istringstream values(dim);
        std::string v;
        for (int t = 0; t < kT && std::getline(values, v, ','); ++t) x[t * kF + d] = std::stof(v);
      }
      std::getline(dims, dim);
      split.labels.push_back(
          static_cast<int>(std::find(classes.begin(), classes.end(), dim) - classes.begin()));
      split.x.push_back(std::move(x));
    }
  }
  return split;
}

ModelDef reference_classifier() {
  BuildSpec spec;  // 60x3, GRU 60 (GRUWB_GRU in a .tflite), Dense 4, softmax
  ModelDef def;
  std::string error;
  EXPECT_TRUE(build_model(spec, &def, &error)) << error;
  return def;
}

int gru_op(const ModelDef& def) {
  const auto& ops = def.subgraphs[0]->operators;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (def.operator_codes[ops[i]->opcode_index]->custom_code == "GRUWB_GRU")
      return static_cast<int>(i);
  }
  return -1;
}

// Trains every weight with Adam on the training split and writes the
// trained values back into `def`.
void train(ModelDef* def, const Split& data, int epochs) {
  const std::vector<uint8_t> bytes = bytes_of(*def);
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  TrainingConfig config;
  config.learning_rate = 3e-3f;
  config.batch_size = 4;
  std::vector<uint64_t> arena((16u << 20) / 8);
  Trainer trainer;
  const Status s =
      trainer.prepare(model, config, reinterpret_cast<uint8_t*>(arena.data()), arena.size() * 8);
  ASSERT_TRUE(s.ok()) << s.message();
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (size_t n = 0; n < data.x.size(); ++n) {
      const size_t i =
          (n * 7 + static_cast<size_t>(epoch) * 13) % data.x.size();  // a fixed shuffle
      std::copy(data.x[i].begin(), data.x[i].end(), trainer.input(0)->f32());
      for (int c = 0; c < kClasses; ++c) trainer.label()[c] = c == data.labels[i] ? 1.f : 0.f;
      ASSERT_TRUE(trainer.train_sample(nullptr).ok());
    }
  }
  for (int w = 0; w < trainer.weight_count(); ++w) {
    int sg = 0, t = 0;
    trainer.weight_location(w, &sg, &t);
    const Tensor* weight = trainer.weight(w);
    fb::TensorT& tensor = *def->subgraphs[static_cast<size_t>(sg)]->tensors[static_cast<size_t>(t)];
    std::vector<uint8_t>& buffer = def->buffers[tensor.buffer]->data;
    ASSERT_EQ(buffer.size(), weight->bytes);
    std::copy(weight->data, weight->data + weight->bytes, buffer.begin());
  }
}

// Runs `def` (float input) on every window: the GRU's output (made a model
// output) and the predicted class.
struct ClassifierRun {
  std::vector<float> gru;  // [samples * H]
  std::vector<int> predicted;
};

ClassifierRun run_classifier(ModelDef def, int gru_output_tensor, const Split& data) {
  def.subgraphs[0]->outputs.push_back(gru_output_tensor);
  const std::vector<uint8_t> bytes = bytes_of(def);
  Model model;
  EXPECT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  ModelRunner runner;
  std::string error;
  EXPECT_TRUE(runner.prepare(model, &error)) << error;
  ClassifierRun r;
  if (!error.empty()) return r;
  for (const std::vector<float>& x : data.x) {
    NpyArray input{"<f4", {1, kT, kF}, {}};
    input.data.assign(reinterpret_cast<const uint8_t*>(x.data()),
                      reinterpret_cast<const uint8_t*>(x.data() + x.size()));
    EXPECT_TRUE(runner.set_input(0, input, &error)) << error;
    EXPECT_TRUE(runner.invoke(&error)) << error;
    const NpyArray probabilities = runner.output(0);
    const NpyArray h = runner.output(1);
    const float* p = reinterpret_cast<const float*>(probabilities.data.data());
    r.predicted.push_back(static_cast<int>(std::max_element(p, p + kClasses) - p));
    const float* hv = reinterpret_cast<const float*>(h.data.data());
    r.gru.insert(r.gru.end(), hv, hv + kH);
  }
  return r;
}

double accuracy(const ClassifierRun& r, const Split& data) {
  int right = 0;
  for (size_t i = 0; i < data.labels.size(); ++i) right += r.predicted[i] == data.labels[i];
  return static_cast<double>(right) / static_cast<double>(data.labels.size());
}

// The x range of the training windows (the calibration set).
void x_range(const Split& data, GruCalibration* c) {
  c->x_min = c->x_max = 0.f;
  for (const auto& x : data.x) {
    for (float v : x) {
      c->x_min = std::min(c->x_min, v);
      c->x_max = std::max(c->x_max, v);
    }
  }
}

size_t constant_bytes(const ModelDef& def, int op) {
  size_t bytes = 0;
  for (int input : def.subgraphs[0]->operators[static_cast<size_t>(op)]->inputs) {
    if (input < 0) continue;
    const fb::TensorT& t = *def.subgraphs[0]->tensors[static_cast<size_t>(input)];
    if (t.buffer > 0) bytes += def.buffers[t.buffer]->data.size();
  }
  return bytes;
}

TEST(GruQuantizationTest, TrainedReferenceClassifierKeepsItsAccuracy) {
  const Split train_split = read_ts("BasicMotionsAcc60_TRAIN.ts");
  const Split test_split = read_ts("BasicMotionsAcc60_TEST.ts");
  ASSERT_EQ(train_split.x.size(), 40u);
  ASSERT_EQ(test_split.x.size(), 40u);
  ModelDef float_model = reference_classifier();
  const int op = gru_op(float_model);
  ASSERT_GE(op, 0);
  const int gru_output = float_model.subgraphs[0]->operators[static_cast<size_t>(op)]->outputs[0];
  const double untrained =
      accuracy(run_classifier(unpack(bytes_of(float_model)), gru_output, test_split), test_split);
  train(&float_model, train_split, 30);
  const size_t float_bytes = constant_bytes(float_model, op);
  const ClassifierRun expected =
      run_classifier(unpack(bytes_of(float_model)), gru_output, test_split);

  // Both output forms: int8 (the default [-1, 1] range) and the int16 state.
  GruCalibration calibration;
  x_range(train_split, &calibration);
  calibration.float_boundaries = true;  // the Dense layer stays float
  printf("x range [%g, %g]: s_x %.4g; untrained float accuracy %.3f\n",
         static_cast<double>(calibration.x_min), static_cast<double>(calibration.x_max),
         static_cast<double>(calibration.x_max - calibration.x_min) / 255.0, untrained);
  double mean = 0., worst = 0.;
  size_t integer_bytes = 0;
  ClassifierRun actual;
  for (bool int16_output : {true, false}) {
    ModelDef integer_model = unpack(bytes_of(float_model));
    calibration.int16_output = int16_output;
    std::string error;
    ASSERT_TRUE(quantize_gru_op(&integer_model, 0, op, calibration, &error)) << error;
    integer_bytes = constant_bytes(integer_model, op + 1);  // after the QUANTIZE of x
    actual = run_classifier(std::move(integer_model), gru_output, test_split);
    ASSERT_EQ(actual.gru.size(), expected.gru.size());
    worst = 0.;
    double sum = 0.;
    for (size_t i = 0; i < actual.gru.size(); ++i) {
      const double d = std::fabs(static_cast<double>(actual.gru[i]) - expected.gru[i]);
      worst = std::max(worst, d);
      sum += d;
    }
    mean = sum / static_cast<double>(actual.gru.size());
    printf(
        "%s output: GRU |int - float| on %zu test windows: max %.4g, mean %.4g; "
        "accuracy float %.3f, GRU integer %.3f\n",
        int16_output ? "int16" : "int8 ", test_split.x.size(), worst, mean,
        accuracy(expected, test_split), accuracy(actual, test_split));
  }
  printf("GRU weights + biases: %zu B float, %zu B int8/int32\n", float_bytes, integer_bytes);
  // int8 weights and x give pre-activation errors of a few 1e-3; after 60
  // steps the state stays within a few output steps (2/255) of float.
  EXPECT_LT(mean, 4.0 / 255.0);
  EXPECT_LT(worst, 0.15);
  EXPECT_GE(accuracy(actual, test_split), accuracy(expected, test_split) - 0.05);
  // int8 weights (1 B) and int32 biases (4 B) for float's 4 B each.
  EXPECT_EQ(integer_bytes, 3u * kH * (kF + kH) + 2u * 3 * kH * 4);
  EXPECT_EQ(float_bytes, 4u * 3 * kH * (kF + kH) + 2u * 3 * kH * 4);
}

TEST(GruQuantizationTest, RewritesTypesAndScalesInPlace) {
  ModelDef def = reference_classifier();
  const int op = gru_op(def);
  GruCalibration c;
  c.x_min = -2.f;
  c.x_max = 6.f;
  std::string error;
  ASSERT_TRUE(quantize_gru_op(&def, 0, op, c, &error)) << error;
  const fb::OperatorT& gru = *def.subgraphs[0]->operators[static_cast<size_t>(op)];
  auto tensor = [&](int i) -> const fb::TensorT& {
    return *def.subgraphs[0]->tensors[static_cast<size_t>(i)];
  };
  const fb::TensorT& x = tensor(gru.inputs[0]);
  EXPECT_EQ(x.type, TensorType::INT8);
  EXPECT_FLOAT_EQ(x.quantization->scale[0], 8.f / 255.f);
  EXPECT_EQ(x.quantization->zero_point[0], -64);  // -128 + 2 / (8/255) = -64.25
  for (int w : {1, 2}) {
    EXPECT_EQ(tensor(gru.inputs[w]).type, TensorType::INT8);
    EXPECT_EQ(tensor(gru.inputs[w]).quantization->scale.size(), 3u * kH);
  }
  EXPECT_EQ(tensor(gru.inputs[3]).type, TensorType::INT32);
  const fb::TensorT& y = tensor(gru.outputs[0]);
  EXPECT_EQ(y.type, TensorType::INT8);
  EXPECT_FLOAT_EQ(y.quantization->scale[0], 2.f / 255.f);  // the default [-1, 1]
  // Weights: q = round(w / s) with s = max|row| / 127, so the largest is +-127.
  const fb::TensorT& wh = tensor(gru.inputs[2]);
  const std::vector<uint8_t>& q = def.buffers[wh.buffer]->data;
  int largest = 0;
  for (int i = 0; i < kH; ++i)
    largest = std::max(largest, std::abs(static_cast<int8_t>(q[static_cast<size_t>(i)])));
  EXPECT_EQ(largest, 127);
}

TEST(GruQuantizationTest, RefusesWhatTheIntegerKernelCannotRunAndLeavesTheModel) {
  ModelDef def = reference_classifier();
  const int op = gru_op(def);
  GruCalibration c;
  c.x_min = -1.f;
  c.x_max = 1.f;
  std::string error;
  EXPECT_FALSE(quantize_gru_op(&def, 0, op + 1, c, &error));
  EXPECT_EQ(error, "subgraph 0 op " + std::to_string(op + 1) + ": not a GRUWB_GRU op");
  EXPECT_FALSE(quantize_gru_op(&def, 3, op, c, &error));
  EXPECT_NE(error.find("no such subgraph"), std::string::npos);
  GruCalibration empty;
  EXPECT_FALSE(quantize_gru_op(&def, 0, op, empty, &error));
  EXPECT_NE(error.find("the x range is empty"), std::string::npos);

  BuildSpec spec;
  spec.reset_after = false;
  ModelDef before_reset;
  ASSERT_TRUE(build_model(spec, &before_reset, &error)) << error;
  const std::vector<uint8_t> original = bytes_of(before_reset);
  EXPECT_FALSE(quantize_gru_op(&before_reset, 0, gru_op(before_reset), c, &error));
  EXPECT_NE(error.find("this op has reset_after=false"), std::string::npos) << error;
  EXPECT_EQ(bytes_of(before_reset), original);
}

}  // namespace
}  // namespace gruwb::tools

namespace gruwb::tools {
namespace {

std::string training_error(const ModelDef& def, TrainingConfig config) {
  const std::vector<uint8_t> bytes = bytes_of(def);
  Model model;
  EXPECT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  std::vector<uint64_t> arena((16u << 20) / 8);
  Trainer trainer;
  const Status s =
      trainer.prepare(model, config, reinterpret_cast<uint8_t*>(arena.data()), arena.size() * 8);
  return s.ok() ? "" : s.message();
}

TEST(GruQuantizationTest, TrainingTheIntegerGruIsRefused) {
  ModelDef def = reference_classifier();
  const int op = gru_op(def);
  GruCalibration c;
  c.x_min = -1.f;
  c.x_max = 1.f;
  c.float_boundaries = true;
  std::string error;
  ASSERT_TRUE(quantize_gru_op(&def, 0, op, c, &error)) << error;
  // Asked for the GRU's weights: the trainer names the int8 tensor, in one line.
  const char* names[] = {"gru/kernel"};
  TrainingConfig named;
  named.scope = TrainableScope::kNames;
  named.names = names;
  named.name_count = 1;
  const std::string refused = training_error(def, named);
  EXPECT_NE(refused.find("'gru/kernel' of subgraph 0 is not a constant float32 weight"),
            std::string::npos)
      << refused;
  EXPECT_EQ(refused.find('\n'), std::string::npos);
  // Every trainable weight: the Dense layer on the integer GRU's features.
  EXPECT_EQ(training_error(def, TrainingConfig()), "");
}

}  // namespace
}  // namespace gruwb::tools
