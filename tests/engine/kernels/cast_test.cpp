// CAST between FLOAT32, INT32, INT64 and BOOL: truncation toward zero,
// saturation, NaN, booleans both ways; unsupported types are named.

#include <gtest/gtest.h>

#include <limits>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

Values cast(const Values& in, TensorType to) {
  OpModelBuilder b;
  int x = b.input("x", in.shape, in.type);
  int y = b.output("y", {}, to);
  fb::CastOptionsT options;
  options.in_data_type = in.type;
  options.out_data_type = to;
  b.op(BuiltinOperator::CAST, {x}, {y}, options);
  auto out = run(b, {in});
  return out.empty() ? Values{} : out[0];
}

TEST(CastTest, FloatToInt32TruncatesTowardZeroAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Values y = cast(Values::f32({8}, {1.9f, -1.9f, 0.4f, -0.f, 3e9f, -3e9f, nan, 2147483520.f}),
                  TensorType::INT32);
  EXPECT_EQ(y.shape, (std::vector<int32_t>{8}));
  EXPECT_EQ(y.ints(), (std::vector<int32_t>{1, -1, 0, 0, std::numeric_limits<int32_t>::max(),
                                            std::numeric_limits<int32_t>::min(), 0, 2147483520}));
}

TEST(CastTest, Int32ToFloatAndInt64) {
  Values y = cast(Values::i32({2, 2}, {0, -3, 16777217, 7}), TensorType::FLOAT32);
  EXPECT_EQ(y.shape, (std::vector<int32_t>{2, 2}));
  // 16777217 is not a float; round to nearest even gives 16777216.
  EXPECT_EQ(y.floats(), (std::vector<float>{0.f, -3.f, 16777216.f, 7.f}));
  y = cast(Values::i32({2}, {-5, 2147483647}), TensorType::INT64);
  EXPECT_EQ(y.int64s(), (std::vector<int64_t>{-5, 2147483647}));
}

TEST(CastTest, BooleansBothWays) {
  Values y = cast(Values::f32({4}, {0.f, -0.f, 0.5f, -2.f}), TensorType::BOOL);
  EXPECT_EQ(y.bools(), (std::vector<bool>{false, false, true, true}));
  y = cast(Values::boolean({3}, {true, false, true}), TensorType::FLOAT32);
  EXPECT_EQ(y.floats(), (std::vector<float>{1.f, 0.f, 1.f}));
  y = cast(Values::boolean({2}, {false, true}), TensorType::INT32);
  EXPECT_EQ(y.ints(), (std::vector<int32_t>{0, 1}));
  y = cast(Values::i32({3}, {0, 7, -1}), TensorType::BOOL);
  EXPECT_EQ(y.bools(), (std::vector<bool>{false, true, true}));
}

TEST(CastTest, Int64ToFloat) {
  Values y = cast(Values::i64({2}, {int64_t{1} << 40, -9}), TensorType::FLOAT32);
  EXPECT_EQ(y.floats(), (std::vector<float>{1099511627776.f, -9.f}));
}

TEST(CastTest, RejectsUnsupportedTypes) {
  OpModelBuilder b;
  int x = b.input("x", {2});
  int y = b.output("y", {}, TensorType::FLOAT16);
  b.op(BuiltinOperator::CAST, {x}, {y});
  std::string error = prepare_error(b);
  EXPECT_NE(error.find("cast from 'x' FLOAT32 to 'y' FLOAT16"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb::test
