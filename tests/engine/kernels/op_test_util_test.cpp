// The kernel-test model builder itself: what it writes is what the reader
// sees (custom ops with their options bytes, shared operator codes,
// quantization, variables, several subgraphs, Circle output).

#include "tests/engine/kernels/op_test_util.h"

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <cmath>

namespace gruwb::test {
namespace {

TEST(OpTestUtilTest, CustomOpKeepsItsCodeAndFlexbufferOptions) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Bool("return_sequences", true);
    fbb.String("activation", "tanh");
  });
  fbb.Finish();
  const std::vector<uint8_t> options = fbb.GetBuffer();
  OpModelBuilder b;
  int x = b.input("x", {1, 2});
  int y = b.output("y");
  b.custom_op("GRUWB_TEST_OP", {x}, {y}, options);
  std::vector<uint8_t> bytes = b.bytes();
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  OperatorView op = model.subgraph(0).op(0);
  EXPECT_EQ(op.op_code, kOpCustom);
  EXPECT_STREQ(op.custom_code, "GRUWB_TEST_OP");
  EXPECT_EQ(std::vector<uint8_t>(op.custom_options.begin(), op.custom_options.end()), options);
  // No kernel has this code: prepare names it.
  EXPECT_NE(prepare_error(b).find("no kernel for 1 op: GRUWB_TEST_OP"), std::string::npos)
      << prepare_error(b);
}

TEST(OpTestUtilTest, OpsOfOneKindShareAnOperatorCode) {
  OpModelBuilder b;
  int x = b.input("x", {2});
  int h = b.tensor("h");
  int y = b.output("y");
  b.op(BuiltinOperator::RELU, {x}, {h});
  b.op(BuiltinOperator::TANH, {h}, {y});
  int z = b.output("z");
  b.op(BuiltinOperator::RELU, {y}, {z});
  EXPECT_EQ(b.def().operator_codes.size(), 2u);
  auto out = run(b, {Values::f32({2}, {-1.f, 2.f})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(floats_near({0.f, std::tanh(2.f)}, out[0].floats()));
  EXPECT_TRUE(floats_near({0.f, std::tanh(2.f)}, out[1].floats()));
}

TEST(OpTestUtilTest, QuantizationVariablesAndCircle) {
  OpModelBuilder b;
  int w = b.constant_int8("w", {2, 1}, {3, -4}, {0.5f, 0.25f}, {0, 1}, 0);
  Values initial = Values::f32({1, 2}, {7.f, 8.f});
  int state = b.variable("state", {1, 2}, TensorType::FLOAT32, &initial);
  int x = b.input("x", {1, 1});
  int y = b.output("y");
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {y}, fb::FullyConnectedOptionsT());
  int s = b.output("s");
  b.op(BuiltinOperator::ADD, {state, y}, {s}, fb::AddOptionsT());
  for (ModelFormat format : {ModelFormat::kTflite, ModelFormat::kCircle}) {
    std::vector<uint8_t> bytes = b.bytes(format);
    Model model;
    ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
    EXPECT_EQ(model.format(), format);
    TensorView wv = model.subgraph(0).tensor(w);
    ASSERT_NE(wv.quantization, nullptr);
    EXPECT_EQ(wv.quantization->scale()->size(), 2u);
    EXPECT_EQ(wv.quantization->zero_point()->Get(1), 1);
    EXPECT_TRUE(model.subgraph(0).tensor(state).is_variable);
    // w = [0.5 * 3, 0.25 * (-4 - 1)] = [1.5, -1.25]; s = state + y.
    auto out = run(b, {Values::f32({1, 1}, {2.f})}, format);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(floats_near({3.f, -2.5f}, out[0].floats()));
    EXPECT_TRUE(floats_near({10.f, 5.5f}, out[1].floats()));
  }
}

TEST(OpTestUtilTest, ValuesRoundTripEveryType) {
  EXPECT_EQ(Values::f32({2}, {1.5f, -2.f}).floats(), (std::vector<float>{1.5f, -2.f}));
  EXPECT_EQ(Values::i32({1}, {-3}).ints(), (std::vector<int32_t>{-3}));
  EXPECT_EQ(Values::i64({1}, {int64_t{1} << 40}).int64s(),
            (std::vector<int64_t>{int64_t{1} << 40}));
  EXPECT_EQ(Values::boolean({3}, {true, false, true}).bools(),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Values::i8({2, 2}, {1, 2, 3, 4}).elements(), 4);
}

}  // namespace
}  // namespace gruwb::test
