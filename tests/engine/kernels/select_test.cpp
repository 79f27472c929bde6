// SELECT (same shapes, scalar or per-row condition) and SELECT_V2 (all three
// broadcast) against hand-written expectations; int32 data; the gradient
// reaching only the chosen branch, checked by finite differences.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

Values select(BuiltinOperator code, const Values& c, const Values& x, const Values& y) {
  OpModelBuilder m;
  int ci = m.input("c", c.shape, TensorType::BOOL);
  int xi = m.input("x", x.shape, x.type);
  int yi = m.input("y", y.shape, y.type);
  int z = m.output("z", {}, x.type);
  m.op(code, {ci, xi, yi}, {z});
  auto out = run(m, {c, x, y});
  return out.empty() ? Values{} : out[0];
}

TEST(SelectTest, SameShapes) {
  for (BuiltinOperator code : {BuiltinOperator::SELECT, BuiltinOperator::SELECT_V2}) {
    Values z = select(code, Values::boolean({2, 2}, {true, false, false, true}),
                      Values::f32({2, 2}, {1, 2, 3, 4}), Values::f32({2, 2}, {10, 20, 30, 40}));
    EXPECT_EQ(z.shape, (Dims{2, 2}));
    EXPECT_EQ(z.floats(), (Floats{1, 20, 30, 4}));
  }
}

TEST(SelectTest, VersionOneRowAndScalarConditions) {
  Values z = select(BuiltinOperator::SELECT, Values::boolean({3}, {false, true, false}),
                    Values::f32({3, 2}, {1, 2, 3, 4, 5, 6}),
                    Values::f32({3, 2}, {-1, -2, -3, -4, -5, -6}));
  EXPECT_EQ(z.shape, (Dims{3, 2}));
  EXPECT_EQ(z.floats(), (Floats{-1, -2, 3, 4, -5, -6}));
  z = select(BuiltinOperator::SELECT, Values::boolean({}, {true}), Values::i32({2}, {7, 8}),
             Values::i32({2}, {0, 0}));
  EXPECT_EQ(z.ints(), (std::vector<int32_t>{7, 8}));
}

TEST(SelectTest, VersionTwoBroadcastsAllThree) {
  // condition [2,1], x [3] (a row), y [] (a scalar) -> [2,3]
  Values z = select(BuiltinOperator::SELECT_V2, Values::boolean({2, 1}, {true, false}),
                    Values::f32({3}, {1, 2, 3}), Values::f32({}, {9}));
  EXPECT_EQ(z.shape, (Dims{2, 3}));
  EXPECT_EQ(z.floats(), (Floats{1, 2, 3, 9, 9, 9}));
  // Keras masking: mask [B,1] picks the new state or keeps the old one [B,H].
  z = select(BuiltinOperator::SELECT_V2, Values::boolean({3}, {true, false, true}),
             Values::f32({2, 3}, {1, 2, 3, 4, 5, 6}), Values::f32({2, 1}, {-1, -2}));
  EXPECT_EQ(z.shape, (Dims{2, 3}));
  EXPECT_EQ(z.floats(), (Floats{1, -1, 3, 4, -2, 6}));
}

TEST(SelectTest, RejectsMismatches) {
  {
    OpModelBuilder m;
    int c = m.input("c", {2}, TensorType::BOOL);
    int x = m.input("x", {3, 2});
    int y = m.input("y", {3, 2});
    int z = m.output("z");
    m.op(BuiltinOperator::SELECT, {c, x, y}, {z});
    std::string error = prepare_error(m);
    EXPECT_NE(error.find("SELECT needs x and y of one shape"), std::string::npos) << error;
  }
  {
    OpModelBuilder m;
    int c = m.input("c", {2}, TensorType::BOOL);
    int x = m.input("x", {3});
    int y = m.input("y", {3});
    int z = m.output("z");
    m.op(BuiltinOperator::SELECT_V2, {c, x, y}, {z});
    std::string error = prepare_error(m);
    EXPECT_NE(error.find("cannot be broadcast"), std::string::npos) << error;
  }
  {
    OpModelBuilder m;
    int c = m.input("c", {2}, TensorType::BOOL);
    int x = m.input("x", {2});
    int y = m.input("y", {2}, TensorType::INT32);
    int z = m.output("z");
    m.op(BuiltinOperator::SELECT_V2, {c, x, y}, {z});
    std::string error = prepare_error(m);
    EXPECT_NE(error.find("y 'y' is INT32, expected FLOAT32"), std::string::npos) << error;
  }
}

// Training: y = SELECT_V2(mask, a, b) * w with a broadcast b; the gradient of
// each input is nonzero only where it was chosen.
TEST(SelectBackward, GradientGoesToTheChosenBranch) {
  for (BuiltinOperator code : {BuiltinOperator::SELECT, BuiltinOperator::SELECT_V2}) {
    const bool v2 = code == BuiltinOperator::SELECT_V2;
    OpModelBuilder b;
    int a = b.input("a", {2, 3});
    int other = b.input("b", v2 ? Dims{2, 1} : Dims{2, 3});
    int mask = v2 ? b.constant("mask", Values::boolean({3}, {true, false, true}))
                  : b.constant("mask", Values::boolean({2}, {false, true}));
    int s = b.tensor("s");
    b.op(code, {mask, a, other}, {s});
    int w = b.constant("w", {2, 3}, {0.5f, -1.f, 2.f, 1.5f, 0.25f, -0.75f});
    int y = b.output("y");
    b.op(BuiltinOperator::MUL, {s, w}, {y}, fb::MulOptionsT());
    check_input_gradients(b, {random_floats(6, 1.f, 3), random_floats(v2 ? 2 : 6, 1.f, 4)}, 6,
                          v2 ? "SELECT_V2" : "SELECT");
  }
}

TEST(SelectBackward, UnchosenBranchGetsExactlyZero) {
  OpModelBuilder b;
  int a = b.input("a", {4});
  int other = b.input("b", {4});
  int mask = b.constant("mask", Values::boolean({4}, {true, true, false, false}));
  int y = b.output("y");
  b.op(BuiltinOperator::SELECT_V2, {mask, a, other}, {y});
  Session s;
  ASSERT_TRUE(s.prepare(b, mse_config()));
  Trainer& t = s.trainer;
  Floats in_a = {1, 2, 3, 4}, in_b = {5, 6, 7, 8};
  memcpy(t.input(0)->data, in_a.data(), 16);
  memcpy(t.input(1)->data, in_b.data(), 16);
  memset(t.label(), 0, 16);
  t.clear_gradients();
  float loss = 0.f;
  ASSERT_TRUE(t.accumulate(&loss).ok());
  Floats ga = copy_of(t.interpreter().gradient(0, t.input(0)));
  Floats gb = copy_of(t.interpreter().gradient(0, t.input(1)));
  EXPECT_NE(ga[0], 0.f);
  EXPECT_NE(ga[1], 0.f);
  EXPECT_EQ(ga[2], 0.f);
  EXPECT_EQ(ga[3], 0.f);
  EXPECT_EQ(gb[0], 0.f);
  EXPECT_EQ(gb[1], 0.f);
  EXPECT_NE(gb[2], 0.f);
  EXPECT_NE(gb[3], 0.f);
}

}  // namespace
}  // namespace gruwb::test
