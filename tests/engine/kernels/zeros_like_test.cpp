// ZEROS_LIKE: zeros of the input's shape and type; int32 results fold; on a
// gradient path it passes nothing back.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

TEST(ZerosLikeTest, FloatAndInt) {
  OpModelBuilder m;
  int x = m.input("x", {2, 3});
  int y = m.output("y");
  m.op(BuiltinOperator::ZEROS_LIKE, {x}, {y});
  auto out = run(m, {Values::f32({2, 3}, iota_floats(6, 1.f, 1.f))});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(out[0].floats(), std::vector<float>(6, 0.f));

  OpModelBuilder n;
  int xi = n.input("x", {4}, TensorType::INT32);
  int yi = n.output("y", {}, TensorType::INT32);
  n.op(BuiltinOperator::ZEROS_LIKE, {xi}, {yi});
  OpRunner runner(n);
  ASSERT_TRUE(runner.ok()) << runner.error();
  EXPECT_EQ(runner.interpreter().output(0)->kind, TensorKind::kConstant);
  runner.set_input(0, Values::i32({4}, {1, 2, 3, 4}));
  ASSERT_TRUE(runner.invoke()) << runner.error();
  EXPECT_EQ(runner.output(0).ints(), (std::vector<int32_t>{0, 0, 0, 0}));
}

// y = x * w + ZEROS_LIKE(x): the gradient of x is w alone.
TEST(ZerosLikeBackward, AddsNothing) {
  OpModelBuilder b;
  int x = b.input("x", {4});
  int z = b.tensor("z");
  b.op(BuiltinOperator::ZEROS_LIKE, {x}, {z});
  int w = b.constant("w", {4}, {1.f, -2.f, 0.5f, 3.f});
  int m = b.tensor("m");
  b.op(BuiltinOperator::MUL, {x, w}, {m}, fb::MulOptionsT());
  int y = b.output("y");
  b.op(BuiltinOperator::ADD, {m, z}, {y}, fb::AddOptionsT());
  check_input_gradients(b, {random_floats(4, 1.f, 6)}, 4, "ZEROS_LIKE");
}

}  // namespace
}  // namespace gruwb::test
