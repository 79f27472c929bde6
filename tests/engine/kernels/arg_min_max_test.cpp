// ARG_MAX / ARG_MIN along each axis, ties (first index), int32 and int64
// output types, int32 input, errors.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;

Values arg(BuiltinOperator code, const Values& x, int32_t axis, TensorType type) {
  OpModelBuilder m;
  int xi = m.input("x", x.shape, x.type);
  int a = m.constant_i32("axis", {}, {axis});
  int y = m.output("y", {}, type);
  if (code == BuiltinOperator::ARG_MAX) {
    fb::ArgMaxOptionsT options;
    options.output_type = type;
    m.op(code, {xi, a}, {y}, options);
  } else {
    fb::ArgMinOptionsT options;
    options.output_type = type;
    m.op(code, {xi, a}, {y}, options);
  }
  auto out = run(m, {x});
  return out.empty() ? Values{} : out[0];
}

// [2,3]: rows {3, 9, 9} and {5, -1, 4}.
const Values kX = Values::f32({2, 3}, {3, 9, 9, 5, -1, 4});

TEST(ArgMinMaxTest, LastAxisWithTies) {
  Values y = arg(BuiltinOperator::ARG_MAX, kX, 1, TensorType::INT32);
  EXPECT_EQ(y.shape, (Dims{2}));
  EXPECT_EQ(y.ints(), (std::vector<int32_t>{1, 0}));
  y = arg(BuiltinOperator::ARG_MIN, kX, -1, TensorType::INT64);
  EXPECT_EQ(y.int64s(), (std::vector<int64_t>{0, 1}));
}

TEST(ArgMinMaxTest, FirstAxis) {
  Values y = arg(BuiltinOperator::ARG_MAX, kX, 0, TensorType::INT32);
  EXPECT_EQ(y.shape, (Dims{3}));
  EXPECT_EQ(y.ints(), (std::vector<int32_t>{1, 0, 0}));
  y = arg(BuiltinOperator::ARG_MIN, kX, 0, TensorType::INT32);
  EXPECT_EQ(y.ints(), (std::vector<int32_t>{0, 1, 1}));
}

TEST(ArgMinMaxTest, Int32InputMiddleAxis) {
  // [2,2,2]: x[i][j][k]; along j.
  Values x = Values::i32({2, 2, 2}, {1, 8, 3, 2, -5, 0, -7, 9});
  Values y = arg(BuiltinOperator::ARG_MAX, x, 1, TensorType::INT32);
  EXPECT_EQ(y.shape, (Dims{2, 2}));
  EXPECT_EQ(y.ints(), (std::vector<int32_t>{1, 0, 0, 1}));
}

TEST(ArgMinMaxTest, RejectsRunTimeAxis) {
  OpModelBuilder m;
  int x = m.input("x", {2, 3});
  int a = m.input("axis", {}, TensorType::INT32);
  int y = m.output("y", {}, TensorType::INT32);
  m.op(BuiltinOperator::ARG_MAX, {x, a}, {y});
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("axis 'axis' is computed at run time"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb::test
