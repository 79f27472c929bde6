// RANGE: int32 and float, positive and negative deltas, lengths that do not
// divide evenly (ceil), folding, and the errors (zero or wrong-way delta,
// run-time inputs).

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

using Ints = std::vector<int32_t>;

Values range(const Values& start, const Values& limit, const Values& delta) {
  OpModelBuilder m;
  int s = m.constant("start", start);
  int l = m.constant("limit", limit);
  int d = m.constant("delta", delta);
  int out = m.output("out", {}, start.type);
  m.op(BuiltinOperator::RANGE, {s, l, d}, {out});
  auto outs = run(m, {});
  return outs.empty() ? Values{} : outs[0];
}

TEST(RangeTest, Int32) {
  Values v = range(Values::i32({}, {0}), Values::i32({}, {5}), Values::i32({}, {1}));
  EXPECT_EQ(v.shape, (Ints{5}));
  EXPECT_EQ(v.ints(), (Ints{0, 1, 2, 3, 4}));
  v = range(Values::i32({}, {3}), Values::i32({}, {10}), Values::i32({}, {3}));
  EXPECT_EQ(v.ints(), (Ints{3, 6, 9}));
  v = range(Values::i32({}, {10}), Values::i32({}, {-1}), Values::i32({}, {-4}));
  EXPECT_EQ(v.ints(), (Ints{10, 6, 2}));
  v = range(Values::i32({}, {4}), Values::i32({}, {4}), Values::i32({}, {1}));
  EXPECT_EQ(v.shape, (Ints{0}));
}

TEST(RangeTest, Int64) {
  Values v = range(Values::i64({}, {-2}), Values::i64({}, {2}), Values::i64({}, {2}));
  EXPECT_EQ(v.int64s(), (std::vector<int64_t>{-2, 0}));
}

TEST(RangeTest, Float) {
  Values v = range(Values::f32({}, {0.5f}), Values::f32({}, {2.f}), Values::f32({}, {0.5f}));
  EXPECT_EQ(v.shape, (Ints{3}));
  EXPECT_EQ(v.floats(), (std::vector<float>{0.5f, 1.f, 1.5f}));
  // ceil(|(1 - 0) / 0.3|) = 4 elements: 0, 0.3, 0.6, 0.9 (accumulated).
  v = range(Values::f32({}, {0.f}), Values::f32({}, {1.f}), Values::f32({}, {0.3f}));
  EXPECT_EQ(v.shape, (Ints{4}));
  EXPECT_TRUE(floats_near({0.f, 0.3f, 0.6f, 0.9f}, v.floats(), 1e-6f));
  v = range(Values::f32({}, {1.f}), Values::f32({}, {-1.f}), Values::f32({}, {-0.75f}));
  EXPECT_EQ(v.floats(), (std::vector<float>{1.f, 0.25f, -0.5f}));
}

TEST(RangeTest, IntegerResultIsFoldedAndFeedsFill) {
  OpModelBuilder m;
  int s = m.constant_i32("start", {}, {2});
  int l = m.constant_i32("limit", {}, {4});
  int d = m.constant_i32("delta", {}, {1});
  int dims = m.tensor("dims", {}, TensorType::INT32);
  m.op(BuiltinOperator::RANGE, {s, l, d}, {dims});
  int value = m.constant("value", {}, {1.5f});
  int out = m.output("out");
  m.op(BuiltinOperator::FILL, {dims, value}, {out});
  auto outs = run(m, {});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].shape, (Ints{2, 3}));
  EXPECT_EQ(outs[0].floats(), std::vector<float>(6, 1.5f));
}

TEST(RangeTest, Errors) {
  for (auto [start, limit, delta] : {std::tuple<int, int, int>{0, 5, 0}, {0, 5, -1}, {5, 0, 1}}) {
    OpModelBuilder m;
    int s = m.constant_i32("start", {}, {start});
    int l = m.constant_i32("limit", {}, {limit});
    int d = m.constant_i32("delta", {}, {delta});
    int out = m.output("out", {}, TensorType::INT32);
    m.op(BuiltinOperator::RANGE, {s, l, d}, {out});
    std::string error = prepare_error(m);
    EXPECT_NE(error.find("never reaches its limit"), std::string::npos) << error;
  }
  OpModelBuilder m;
  int s = m.constant_i32("start", {}, {0});
  int l = m.input("limit", {}, TensorType::INT32);
  int d = m.constant_i32("delta", {}, {1});
  int out = m.output("out", {}, TensorType::INT32);
  m.op(BuiltinOperator::RANGE, {s, l, d}, {out});
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("limit 'limit' is computed at run time"), std::string::npos) << error;
}

}  // namespace
}  // namespace gruwb::test
