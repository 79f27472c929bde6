// The int8 UNIDIRECTIONAL_SEQUENCE_LSTM (engine/kernels/lstm_integer.cpp) beyond its golden
// outputs (real TFLite's, tests/fixtures/int8 and the real models in golden_models_test): the
// states as TFLite keeps them, streaming one step per invoke, and the one-line refusals of what
// it does not run. The models are the committed int8_lstm fixture, edited through the object API.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/runtime/interpreter.h"
#include "engine/runtime/subgraph_runner.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_writer.h"

namespace gruwb {
namespace {

using tools::ModelDef;

// int8_lstm: x [2,5,6] (zero point -5), output state [2,8] int8 (zero point 3), cell state
// [2,8] int16 at 2^-11, y [2,5,8].
constexpr int kOutputStateInput = 18;
constexpr int kCellStateInput = 19;

ModelDef fixture() {
  tools::LoadedModel loaded;
  std::string error;
  EXPECT_TRUE(tools::load_model_file(
      std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/int8/int8_lstm.tflite", &loaded, &error))
      << error;
  ModelDef def;
  EXPECT_TRUE(tools::unpack_model(loaded.model, &def, &error)) << error;
  return def;
}

fb::OperatorT& lstm_op(ModelDef& def) { return *def.subgraphs[0]->operators[0]; }
fb::TensorT& tensor(ModelDef& def, int index) {
  return *def.subgraphs[0]->tensors[static_cast<size_t>(index)];
}
fb::TensorT& op_input(ModelDef& def, int input) {
  return tensor(def, lstm_op(def).inputs[static_cast<size_t>(input)]);
}

// A prepared interpreter over its own copy of the model bytes and arena.
struct Prepared {
  std::vector<uint8_t> bytes;
  Model model;
  std::vector<uint8_t> arena = std::vector<uint8_t>(1 << 20);
  Interpreter interpreter;
  Status status;
  explicit Prepared(const ModelDef& def) {
    std::string error;
    EXPECT_TRUE(tools::write_model(def, ModelFormat::kTflite, &bytes, &error)) << error;
    EXPECT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
    status = interpreter.prepare(model, arena.data(), arena.size());
  }
  Tensor& state(ModelDef& def, int input) {
    return SubgraphRunner(&interpreter).tensor(0, lstm_op(def).inputs[static_cast<size_t>(input)]);
  }
};

std::string prepare_error(const ModelDef& def) {
  Prepared p(def);
  EXPECT_FALSE(p.status.ok());
  const std::string message = p.status.message();
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

// TFLite resets an int8 variable to its zero point (ResetVariableTensor), not to 0.
TEST(LstmInt8Test, StatesStartAtTheirZeroPointAndResetThere) {
  ModelDef def = fixture();
  Prepared p(def);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  Tensor& h = p.state(def, kOutputStateInput);
  Tensor& c = p.state(def, kCellStateInput);
  const std::vector<int8_t> zero_point_h(16, 3);
  const std::vector<int16_t> zero_c(16, 0);
  EXPECT_EQ(std::memcmp(h.data, zero_point_h.data(), 16), 0);
  EXPECT_EQ(std::memcmp(c.data, zero_c.data(), 32), 0);
  for (int64_t i = 0; i < p.interpreter.input(0)->elements(); ++i) {
    reinterpret_cast<int8_t*>(p.interpreter.input(0)->data)[i] = static_cast<int8_t>(i * 37 % 256);
  }
  ASSERT_TRUE(p.interpreter.invoke().ok());
  EXPECT_NE(std::memcmp(h.data, zero_point_h.data(), 16), 0);
  EXPECT_NE(std::memcmp(c.data, zero_c.data(), 32), 0);
  // The last step's h is the state the next invoke starts from.
  const int8_t* y = reinterpret_cast<const int8_t*>(p.interpreter.output(0)->data);
  EXPECT_EQ(std::memcmp(h.data, y + 4 * 8, 8), 0);      // batch 0, step 4
  EXPECT_EQ(std::memcmp(h.data + 8, y + 9 * 8, 8), 0);  // batch 1, step 4
  p.interpreter.reset_variables();
  EXPECT_EQ(std::memcmp(h.data, zero_point_h.data(), 16), 0);
  EXPECT_EQ(std::memcmp(c.data, zero_c.data(), 32), 0);
}

// Five invokes of one step each (as the streaming DTLN model runs) give the five steps of one
// invoke over the whole sequence: the variables carry h and c between invokes.
TEST(LstmInt8Test, OneStepPerInvokeEqualsTheWholeSequence) {
  ModelDef whole = fixture();
  ModelDef step = fixture();
  tensor(step, step.subgraphs[0]->inputs[0]).shape = {2, 1, 6};
  tensor(step, step.subgraphs[0]->outputs[0]).shape = {2, 1, 8};
  Prepared a(whole), b(step);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  std::vector<int8_t> x(2 * 5 * 6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 71 % 256 - 128);
  std::memcpy(a.interpreter.input(0)->data, x.data(), x.size());
  ASSERT_TRUE(a.interpreter.invoke().ok());
  const int8_t* y_whole = reinterpret_cast<const int8_t*>(a.interpreter.output(0)->data);
  for (int t = 0; t < 5; ++t) {
    int8_t* xt = reinterpret_cast<int8_t*>(b.interpreter.input(0)->data);
    for (int batch = 0; batch < 2; ++batch) std::memcpy(xt + batch * 6, &x[(batch * 5 + t) * 6], 6);
    ASSERT_TRUE(b.interpreter.invoke().ok());
    const int8_t* yt = reinterpret_cast<const int8_t*>(b.interpreter.output(0)->data);
    for (int batch = 0; batch < 2; ++batch) {
      EXPECT_EQ(std::memcmp(yt + batch * 8, y_whole + (batch * 5 + t) * 8, 8), 0)
          << "step " << t << " batch " << batch;
    }
  }
}

TEST(LstmInt8Test, TwelveIntermediatesAreTheUnsupported8x8To8Kernel) {
  ModelDef def = fixture();
  std::vector<int32_t>& intermediates = lstm_op(def).intermediates;
  const int32_t last = intermediates.back();
  while (intermediates.size() < 12) intermediates.push_back(last);
  EXPECT_NE(prepare_error(def).find("8x8->8 integer LSTM (12 intermediates)"), std::string::npos);
}

TEST(LstmInt8Test, MissingIntermediatesAreNamed) {
  ModelDef def = fixture();
  lstm_op(def).intermediates.clear();
  EXPECT_NE(prepare_error(def).find("needs 5 intermediate tensors"), std::string::npos);
}

TEST(LstmInt8Test, CellStateScaleMustBeAPowerOfTwo) {
  ModelDef def = fixture();
  op_input(def, kCellStateInput).quantization->scale = {0.0003f};
  const std::string error = prepare_error(def);
  EXPECT_NE(error.find("cell state 'cell_state' scale 0.0003 is not a power of two"),
            std::string::npos)
      << error;
}

TEST(LstmInt8Test, StatesMustBeVariables) {
  ModelDef def = fixture();
  op_input(def, kOutputStateInput).is_variable = false;
  EXPECT_NE(prepare_error(def).find("output state 'output_state' (input 18) must be a variable"),
            std::string::npos);
}

TEST(LstmInt8Test, CellActivationOtherThanTanhIsRefused) {
  ModelDef def = fixture();
  lstm_op(def).builtin_options.AsUnidirectionalSequenceLSTMOptions()->fused_activation_function =
      fb::ActivationFunctionType::RELU;
  EXPECT_NE(prepare_error(def).find("cell activation RELU has no integer form"), std::string::npos);
}

TEST(LstmInt8Test, FloatBiasIsNamed) {
  ModelDef def = fixture();
  op_input(def, 13).type = fb::TensorType::FLOAT32;  // the forget gate's bias
  const std::string error = prepare_error(def);
  EXPECT_NE(error.find("forget gate bias (input 13)"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb
