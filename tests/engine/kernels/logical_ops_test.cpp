// LOGICAL_AND, LOGICAL_OR (broadcasting) and LOGICAL_NOT against truth
// tables; the two-counter WHILE condition; folding of constant inputs.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

using Bools = std::vector<bool>;

Values logical(BuiltinOperator code, const Values& a, const Values& b) {
  OpModelBuilder m;
  int x = m.input("a", a.shape, TensorType::BOOL);
  int y = m.input("b", b.shape, TensorType::BOOL);
  int z = m.output("z", {}, TensorType::BOOL);
  m.op(code, {x, y}, {z});
  auto out = run(m, {a, b});
  return out.empty() ? Values{} : out[0];
}

TEST(LogicalOpsTest, TruthTables) {
  Values a = Values::boolean({4}, {false, false, true, true});
  Values b = Values::boolean({4}, {false, true, false, true});
  EXPECT_EQ(logical(BuiltinOperator::LOGICAL_AND, a, b).bools(),
            (Bools{false, false, false, true}));
  EXPECT_EQ(logical(BuiltinOperator::LOGICAL_OR, a, b).bools(), (Bools{false, true, true, true}));
}

TEST(LogicalOpsTest, Broadcasting) {
  // [2,1] with [3]: out[i][j] = a[i] op b[j].
  Values a = Values::boolean({2, 1}, {true, false});
  Values b = Values::boolean({3}, {true, false, true});
  Values z = logical(BuiltinOperator::LOGICAL_AND, a, b);
  EXPECT_EQ(z.shape, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(z.bools(), (Bools{true, false, true, false, false, false}));
  z = logical(BuiltinOperator::LOGICAL_OR, a, b);
  EXPECT_EQ(z.bools(), (Bools{true, true, true, true, false, true}));
  // Scalars, as in the WHILE condition (i < n) && (t < T).
  z = logical(BuiltinOperator::LOGICAL_AND, Values::boolean({}, {true}),
              Values::boolean({}, {false}));
  EXPECT_EQ(z.shape, (std::vector<int32_t>{}));
  EXPECT_EQ(z.bools(), (Bools{false}));
}

TEST(LogicalOpsTest, Not) {
  OpModelBuilder m;
  int x = m.input("a", {2, 2}, TensorType::BOOL);
  int z = m.output("z", {}, TensorType::BOOL);
  m.op(BuiltinOperator::LOGICAL_NOT, {x}, {z});
  auto out = run(m, {Values::boolean({2, 2}, {true, false, false, true})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(out[0].bools(), (Bools{false, true, true, false}));
}

TEST(LogicalOpsTest, TwoCounterWhileCondition) {
  // LESS(i, max_iterations) && LESS(t, T) on int32 scalars.
  for (int32_t i : {2, 5}) {
    for (int32_t t : {1, 3}) {
      OpModelBuilder m;
      int iv = m.input("i", {}, TensorType::INT32);
      int tv = m.input("t", {}, TensorType::INT32);
      int max_iterations = m.constant_i32("max", {}, {4});
      int steps = m.constant_i32("T", {}, {3});
      int c0 = m.tensor("c0", {}, TensorType::BOOL);
      int c1 = m.tensor("c1", {}, TensorType::BOOL);
      int c = m.output("c", {}, TensorType::BOOL);
      m.op(BuiltinOperator::LESS, {iv, max_iterations}, {c0});
      m.op(BuiltinOperator::LESS, {tv, steps}, {c1});
      m.op(BuiltinOperator::LOGICAL_AND, {c0, c1}, {c});
      auto out = run(m, {Values::i32({}, {i}), Values::i32({}, {t})});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].bools(), (Bools{i < 4 && t < 3})) << i << " " << t;
    }
  }
}

TEST(LogicalOpsTest, ConstantInputsAreFolded) {
  OpModelBuilder m;
  int a = m.constant("a", Values::boolean({2}, {true, false}));
  int b = m.constant("b", Values::boolean({2}, {true, true}));
  int z = m.output("z", {}, TensorType::BOOL);
  m.op(BuiltinOperator::LOGICAL_OR, {a, b}, {z});
  OpRunner runner(m);
  ASSERT_TRUE(runner.ok()) << runner.error();
  EXPECT_EQ(runner.interpreter().output(0)->kind, TensorKind::kConstant);
  EXPECT_EQ(runner.output(0).bools(), (Bools{true, true}));
}

TEST(LogicalOpsTest, RejectsNonBoolInputs) {
  OpModelBuilder m;
  int x = m.input("a", {2}, TensorType::INT32);
  int y = m.input("b", {2}, TensorType::BOOL);
  int z = m.output("z", {}, TensorType::BOOL);
  m.op(BuiltinOperator::LOGICAL_AND, {x, y}, {z});
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("'a' is INT32, expected BOOL"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb::test
