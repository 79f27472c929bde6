// ADD, SUB, MUL, MINIMUM, MAXIMUM (float with fused activation, int32) and
// DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE (float and int32, against
// hand-computed Python semantics), LESS, EQUAL (BOOL out) with NumPy broadcasting: equal shapes,
// [2,3]+[3], [2,1,3]+[4,1], scalars on either side; incompatible shapes are named.

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <functional>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

// NumPy broadcasting by explicit multi-index arithmetic.
template <typename T, typename R>
std::vector<R> reference(const std::vector<T>& a, const Dims& as, const std::vector<T>& b,
                         const Dims& bs, const std::function<R(T, T)>& f, Dims* out_shape) {
  const size_t rank = std::max(as.size(), bs.size());
  Dims ap(rank - as.size(), 1), bp(rank - bs.size(), 1);
  ap.insert(ap.end(), as.begin(), as.end());
  bp.insert(bp.end(), bs.begin(), bs.end());
  Dims os(rank);
  for (size_t d = 0; d < rank; ++d) os[d] = std::max(ap[d], bp[d]);
  *out_shape = os;
  int64_t total = 1;
  for (int32_t d : os) total *= d;
  std::vector<R> out;
  for (int64_t o = 0; o < total; ++o) {
    int64_t rest = o, ai = 0, bi = 0, astride = 1, bstride = 1;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      int64_t index = rest % os[d];
      rest /= os[d];
      ai += (ap[d] == 1 ? 0 : index) * astride;
      bi += (bp[d] == 1 ? 0 : index) * bstride;
      astride *= ap[d];
      bstride *= bp[d];
    }
    out.push_back(f(a[static_cast<size_t>(ai)], b[static_cast<size_t>(bi)]));
  }
  return out;
}

int64_t count(const Dims& s) {
  int64_t n = 1;
  for (int32_t d : s) n *= d;
  return n;
}

struct FloatOp {
  BuiltinOperator code;
  std::function<float(float, float)> f;
};

const FloatOp kFloatOps[] = {
    {BuiltinOperator::ADD, [](float a, float b) { return a + b; }},
    {BuiltinOperator::SUB, [](float a, float b) { return a - b; }},
    {BuiltinOperator::MUL, [](float a, float b) { return a * b; }},
    {BuiltinOperator::MINIMUM, [](float a, float b) { return a < b ? a : b; }},
    {BuiltinOperator::MAXIMUM, [](float a, float b) { return a > b ? a : b; }},
};

Values binary(BuiltinOperator code, const Values& a, const Values& b, TensorType out_type,
              fb::BuiltinOptionsUnion options = {}) {
  OpModelBuilder m;
  int x = m.input("a", a.shape, a.type);
  int y = m.input("b", b.shape, b.type);
  int z = m.output("z", {}, out_type);
  m.op(code, {x, y}, {z}, std::move(options));
  auto out = run(m, {a, b});
  return out.empty() ? Values{} : out[0];
}

const std::pair<Dims, Dims> kShapePairs[] = {
    {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3}, {2, 3}}, {{2, 1, 3}, {4, 1}},
    {{2, 3}, {}},     {{}, {2, 3}},  {{1}, {1}},
};

TEST(BinaryOpsTest, FloatArithmeticWithBroadcasting) {
  for (const FloatOp& op : kFloatOps) {
    for (const auto& [as, bs] : kShapePairs) {
      Floats a = iota_floats(count(as), 0.5f, -1.f), b = iota_floats(count(bs), -0.75f, 2.f);
      Dims shape;
      Floats expected = reference<float, float>(a, as, b, bs, op.f, &shape);
      Values z = binary(op.code, Values::f32(as, a), Values::f32(bs, b), TensorType::FLOAT32);
      EXPECT_EQ(z.shape, shape) << fb::EnumNameBuiltinOperator(op.code);
      EXPECT_EQ(z.floats(), expected) << fb::EnumNameBuiltinOperator(op.code);
    }
  }
}

TEST(BinaryOpsTest, Int32ArithmeticWithBroadcasting) {
  const std::pair<BuiltinOperator, std::function<int32_t(int32_t, int32_t)>> ops[] = {
      {BuiltinOperator::ADD, [](int32_t a, int32_t b) { return a + b; }},
      {BuiltinOperator::SUB, [](int32_t a, int32_t b) { return a - b; }},
      {BuiltinOperator::MUL, [](int32_t a, int32_t b) { return a * b; }},
      {BuiltinOperator::MINIMUM, [](int32_t a, int32_t b) { return a < b ? a : b; }},
      {BuiltinOperator::MAXIMUM, [](int32_t a, int32_t b) { return a > b ? a : b; }},
  };
  for (const auto& [code, f] : ops) {
    for (const auto& [as, bs] : kShapePairs) {
      std::vector<int32_t> a = iota_ints(count(as), -3), b = iota_ints(count(bs), -1);
      Dims shape;
      auto expected = reference<int32_t, int32_t>(a, as, b, bs, f, &shape);
      Values z = binary(code, Values::i32(as, a), Values::i32(bs, b), TensorType::INT32);
      EXPECT_EQ(z.shape, shape);
      EXPECT_EQ(z.ints(), expected) << fb::EnumNameBuiltinOperator(code);
    }
  }
}

TEST(BinaryOpsTest, WhileLoopCounterIncrement) {
  // i + 1 with both scalars, as in every converter-made WHILE body.
  Values z =
      binary(BuiltinOperator::ADD, Values::i32({}, {41}), Values::i32({}, {1}), TensorType::INT32);
  EXPECT_EQ(z.shape, (Dims{}));
  EXPECT_EQ(z.ints(), (std::vector<int32_t>{42}));
}

TEST(BinaryOpsTest, FusedActivations) {
  const Floats a = {-2.f, -0.5f, 0.5f, 3.f, 7.f};
  const Floats b = {1.f, 0.f, 0.f, 4.f, -0.5f};
  fb::AddOptionsT relu6;
  relu6.fused_activation_function = fb::ActivationFunctionType::RELU6;
  fb::BuiltinOptionsUnion u;
  u.Set(relu6);
  Values z = binary(BuiltinOperator::ADD, Values::f32({5}, a), Values::f32({5}, b),
                    TensorType::FLOAT32, u);
  EXPECT_EQ(z.floats(), (Floats{0.f, 0.f, 0.5f, 6.f, 6.f}));
  fb::MulOptionsT relu;
  relu.fused_activation_function = fb::ActivationFunctionType::RELU;
  u.Set(relu);
  z = binary(BuiltinOperator::MUL, Values::f32({5}, a), Values::f32({5}, b), TensorType::FLOAT32,
             u);
  EXPECT_EQ(z.floats(), (Floats{0.f, 0.f, 0.f, 12.f, 0.f}));
  fb::SubOptionsT tanh_options;
  tanh_options.fused_activation_function = fb::ActivationFunctionType::TANH;
  u.Set(tanh_options);
  z = binary(BuiltinOperator::SUB, Values::f32({5}, a), Values::f32({5}, b), TensorType::FLOAT32,
             u);
  Floats expected;
  for (size_t i = 0; i < a.size(); ++i) expected.push_back(std::tanh(a[i] - b[i]));
  EXPECT_TRUE(floats_near(expected, z.floats(), 1e-6f));
}

TEST(BinaryOpsTest, ComparisonsGiveBool) {
  const std::pair<BuiltinOperator, std::function<bool(float, float)>> ops[] = {
      {BuiltinOperator::LESS, [](float a, float b) { return a < b; }},
      {BuiltinOperator::EQUAL, [](float a, float b) { return a == b; }},
  };
  for (const auto& [code, f] : ops) {
    for (const auto& [as, bs] : kShapePairs) {
      Floats a = iota_floats(count(as), 1.f, -2.f), b = iota_floats(count(bs), -1.f, 1.f);
      Dims shape;
      auto expected = reference<float, bool>(a, as, b, bs, f, &shape);
      Values z = binary(code, Values::f32(as, a), Values::f32(bs, b), TensorType::BOOL);
      EXPECT_EQ(z.type, TensorType::BOOL);
      EXPECT_EQ(z.shape, shape);
      EXPECT_EQ(z.bools(), expected) << fb::EnumNameBuiltinOperator(code);
    }
  }
  // The WHILE cond: time < trip count, int32 scalars.
  Values z =
      binary(BuiltinOperator::LESS, Values::i32({}, {4}), Values::i32({}, {5}), TensorType::BOOL);
  EXPECT_EQ(z.bools(), (std::vector<bool>{true}));
  z = binary(BuiltinOperator::EQUAL, Values::i32({3}, {1, 2, 3}), Values::i32({}, {2}),
             TensorType::BOOL);
  EXPECT_EQ(z.bools(), (std::vector<bool>{false, true, false}));
}

TEST(BinaryOpsTest, RejectsIncompatibleShapesAndMixedTypes) {
  {
    OpModelBuilder m;
    int x = m.input("a", {2, 3});
    int y = m.input("b", {2});
    int z = m.output("z");
    m.op(BuiltinOperator::ADD, {x, y}, {z}, fb::AddOptionsT());
    std::string error = prepare_error(m);
    EXPECT_NE(error.find("shapes [2,3] and [2] cannot be broadcast"), std::string::npos) << error;
  }
  {
    OpModelBuilder m;
    int x = m.input("a", {2});
    int y = m.input("b", {2}, TensorType::INT32);
    int z = m.output("z");
    m.op(BuiltinOperator::MUL, {x, y}, {z}, fb::MulOptionsT());
    std::string error = prepare_error(m);
    EXPECT_NE(error.find("'b' is INT32, expected FLOAT32"), std::string::npos) << error;
  }
}

// Expected values are Python's: a // b and a % b floor (the divisor's sign),
// int division in TFLite's DIV truncates.
TEST(BinaryOpsTest, DivisionsOnFloats) {
  const Values a = Values::f32({6}, {7.f, -7.f, 7.f, -7.f, 1.5f, 0.f});
  const Values b = Values::f32({6}, {2.f, 2.f, -2.f, -2.f, 0.5f, 3.f});
  Values z = binary(BuiltinOperator::DIV, a, b, TensorType::FLOAT32, {});
  EXPECT_EQ(z.floats(), (Floats{3.5f, -3.5f, -3.5f, 3.5f, 3.f, 0.f}));
  z = binary(BuiltinOperator::FLOOR_DIV, a, b, TensorType::FLOAT32);
  EXPECT_EQ(z.floats(), (Floats{3.f, -4.f, -4.f, 3.f, 3.f, 0.f}));
  z = binary(BuiltinOperator::FLOOR_MOD, a, b, TensorType::FLOAT32);
  EXPECT_EQ(z.floats(), (Floats{1.f, 1.f, -1.f, -1.f, 0.f, 0.f}));
  z = binary(BuiltinOperator::SQUARED_DIFFERENCE, a, b, TensorType::FLOAT32);
  EXPECT_EQ(z.floats(), (Floats{25.f, 81.f, 81.f, 25.f, 1.f, 9.f}));
  // TFLite clamps a float DIV to its activation range: x / 0 is FLT_MAX.
  z = binary(BuiltinOperator::DIV, Values::f32({2}, {1.f, -1.f}), Values::f32({}, {0.f}),
             TensorType::FLOAT32);
  EXPECT_EQ(z.floats(), (Floats{FLT_MAX, -FLT_MAX}));
  fb::DivOptionsT relu;
  relu.fused_activation_function = fb::ActivationFunctionType::RELU;
  fb::BuiltinOptionsUnion u;
  u.Set(relu);
  z = binary(BuiltinOperator::DIV, a, b, TensorType::FLOAT32, u);
  EXPECT_EQ(z.floats(), (Floats{3.5f, 0.f, 0.f, 3.5f, 3.f, 0.f}));
}

TEST(BinaryOpsTest, DivisionsOnInt32) {
  const Values a = Values::i32({4}, {7, -7, 7, -7});
  const Values b = Values::i32({4}, {2, 2, -2, -2});
  using Ints = std::vector<int32_t>;
  EXPECT_EQ(binary(BuiltinOperator::DIV, a, b, TensorType::INT32).ints(), (Ints{3, -3, -3, 3}));
  EXPECT_EQ(binary(BuiltinOperator::FLOOR_DIV, a, b, TensorType::INT32).ints(),
            (Ints{3, -4, -4, 3}));
  EXPECT_EQ(binary(BuiltinOperator::FLOOR_MOD, a, b, TensorType::INT32).ints(),
            (Ints{1, 1, -1, -1}));
  EXPECT_EQ(binary(BuiltinOperator::SQUARED_DIFFERENCE, a, b, TensorType::INT32).ints(),
            (Ints{25, 81, 81, 25}));
  // Broadcast scalar divisor, as in "time steps // 2".
  EXPECT_EQ(binary(BuiltinOperator::FLOOR_DIV, Values::i32({3}, {5, 6, -1}), Values::i32({}, {2}),
                   TensorType::INT32)
                .ints(),
            (Ints{2, 3, -1}));
}

TEST(BinaryOpsTest, Int32DivisionByZeroIsAnError) {
  for (BuiltinOperator code :
       {BuiltinOperator::DIV, BuiltinOperator::FLOOR_DIV, BuiltinOperator::FLOOR_MOD}) {
    OpModelBuilder m;
    int x = m.input("a", {2}, TensorType::INT32);
    int y = m.input("b", {2}, TensorType::INT32);
    int z = m.output("z", {}, TensorType::INT32);
    m.op(code, {x, y}, {z});
    std::string error = invoke_error(m, {Values::i32({2}, {1, 2}), Values::i32({2}, {1, 0})});
    EXPECT_NE(error.find("divisor 'b' holds a zero at 1"), std::string::npos) << error;
  }
}

// The converter's shape arithmetic: every value is known at prepare, so
// the result is a constant there (and can size a FILL).
TEST(BinaryOpsTest, ConstantInt32ArithmeticIsFolded) {
  OpModelBuilder m;
  int t = m.constant_i32("t", {}, {7});
  int two = m.constant_i32("two", {}, {2});
  int half = m.tensor("half", {}, TensorType::INT32);
  m.op(BuiltinOperator::FLOOR_DIV, {t, two}, {half});
  int one = m.constant_i32("one", {}, {1});
  int sum = m.tensor("sum", {}, TensorType::INT32);
  m.op(BuiltinOperator::ADD, {half, one}, {sum}, fb::AddOptionsT());
  int less = m.output("less", {}, TensorType::BOOL);
  m.op(BuiltinOperator::LESS, {sum, t}, {less});
  OpRunner runner(m);
  ASSERT_TRUE(runner.ok()) << runner.error();
  const SubgraphState& main = runner.interpreter().subgraph_state(0);
  EXPECT_EQ(main.tensors[half].kind, TensorKind::kConstant);
  EXPECT_EQ(main.tensors[sum].kind, TensorKind::kConstant);
  EXPECT_EQ(main.tensors[sum].i32()[0], 4);
  EXPECT_EQ(main.tensors[less].kind, TensorKind::kConstant);
  EXPECT_EQ(runner.output(0).bools(), (std::vector<bool>{true}));
}

TEST(BinaryOpsBackward, DivisionsAndSquaredDifference) {
  for (BuiltinOperator code :
       {BuiltinOperator::DIV, BuiltinOperator::FLOOR_MOD, BuiltinOperator::SQUARED_DIFFERENCE}) {
    OpModelBuilder b;
    int x = b.input("a", {2, 3});
    int y = b.input("b", {3});
    int z = b.output("z");
    b.op(code, {x, y}, {z});
    // Divisors away from zero; FLOOR_MOD away from its jumps (a/b not near an integer).
    const std::vector<float> a = {1.3f, -2.2f, 0.7f, 2.6f, -0.4f, 1.9f};
    const std::vector<float> d = {0.9f, -1.7f, 1.25f};
    check_input_gradients(b, {a, d}, 6, fb::EnumNameBuiltinOperator(code));
  }
}

}  // namespace
}  // namespace gruwb::test
