// EXP, SQRT, RSQRT, NEG, ABS, SQUARE against libm in double; int32 NEG, ABS
// and SQUARE, folded when constant; backward passes by finite differences.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Floats = std::vector<float>;
using Ints = std::vector<int32_t>;

Values unary(BuiltinOperator code, const Values& x) {
  OpModelBuilder m;
  int xi = m.input("x", x.shape, x.type);
  int y = m.output("y", {}, x.type);
  m.op(code, {xi}, {y});
  auto out = run(m, {x});
  return out.empty() ? Values{} : out[0];
}

TEST(UnaryOpsTest, FloatOpsMatchLibm) {
  const Floats any = {-3.f, -1.5f, -0.25f, 0.f, 0.5f, 2.f, 7.25f};
  const Floats positive = {0.01f, 0.25f, 1.f, 2.f, 9.f, 100.f, 12345.f};
  const struct {
    BuiltinOperator code;
    const Floats* inputs;
    std::function<double(double)> f;
  } ops[] = {
      {BuiltinOperator::EXP, &any, [](double x) { return std::exp(x); }},
      {BuiltinOperator::SQRT, &positive, [](double x) { return std::sqrt(x); }},
      {BuiltinOperator::RSQRT, &positive, [](double x) { return 1.0 / std::sqrt(x); }},
      {BuiltinOperator::NEG, &any, [](double x) { return -x; }},
      {BuiltinOperator::ABS, &any, [](double x) { return std::fabs(x); }},
      {BuiltinOperator::SQUARE, &any, [](double x) { return x * x; }},
  };
  for (const auto& op : ops) {
    Values y = unary(op.code, Values::f32({7}, *op.inputs));
    ASSERT_EQ(y.shape, (std::vector<int32_t>{7}));
    Floats got = y.floats();
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = op.f((*op.inputs)[i]);
      EXPECT_NEAR(got[i], want, 2e-7 * std::fmax(1.0, std::fabs(want)))
          << fb::EnumNameBuiltinOperator(op.code) << " of " << (*op.inputs)[i];
    }
  }
}

TEST(UnaryOpsTest, Int32Ops) {
  const Values x = Values::i32({5}, {-7, -1, 0, 3, 46340});
  EXPECT_EQ(unary(BuiltinOperator::NEG, x).ints(), (Ints{7, 1, 0, -3, -46340}));
  EXPECT_EQ(unary(BuiltinOperator::ABS, x).ints(), (Ints{7, 1, 0, 3, 46340}));
  EXPECT_EQ(unary(BuiltinOperator::SQUARE, x).ints(), (Ints{49, 1, 0, 9, 2147395600}));
}

TEST(UnaryOpsTest, ConstantInt32IsFolded) {
  OpModelBuilder m;
  int x = m.constant_i32("x", {2}, {4, -5});
  int y = m.output("y", {}, TensorType::INT32);
  m.op(BuiltinOperator::NEG, {x}, {y});
  OpRunner runner(m);
  ASSERT_TRUE(runner.ok()) << runner.error();
  EXPECT_EQ(runner.interpreter().output(0)->kind, TensorKind::kConstant);
  EXPECT_EQ(runner.output(0).ints(), (Ints{-4, 5}));
}

TEST(UnaryOpsTest, RejectsInt32ForFloatOnlyOps) {
  OpModelBuilder m;
  int x = m.input("x", {2}, TensorType::INT32);
  int y = m.output("y", {}, TensorType::INT32);
  m.op(BuiltinOperator::SQRT, {x}, {y});
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("input 'x' is INT32, expected FLOAT32"), std::string::npos) << error;
}

TEST(UnaryOpsBackward, MatchFiniteDifferences) {
  const Floats any = {-1.3f, -0.6f, -0.2f, 0.3f, 0.7f, 1.4f};
  const Floats positive = {0.3f, 0.6f, 0.9f, 1.4f, 2.2f, 3.1f};
  for (BuiltinOperator code :
       {BuiltinOperator::EXP, BuiltinOperator::SQRT, BuiltinOperator::RSQRT, BuiltinOperator::NEG,
        BuiltinOperator::ABS, BuiltinOperator::SQUARE}) {
    const bool needs_positive = code == BuiltinOperator::SQRT || code == BuiltinOperator::RSQRT;
    OpModelBuilder b;
    int x = b.input("x", {6});
    int y = b.output("y");
    b.op(code, {x}, {y});
    check_input_gradients(b, {needs_positive ? positive : any}, 6,
                          fb::EnumNameBuiltinOperator(code));
  }
}

}  // namespace
}  // namespace gruwb::test
