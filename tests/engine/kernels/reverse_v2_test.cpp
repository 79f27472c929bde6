// REVERSE_V2 along one axis, several axes and a negative axis, on float and
// int32 data; the backward pass (the reversed gradient) by finite differences.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

// Reference: out[i0, i1, i2] = in[r0(i0), r1(i1), r2(i2)] for a [2,3,2] iota.
Floats reversed(const std::vector<bool>& flip) {
  const int d0 = 2, d1 = 3, d2 = 2;
  Floats out;
  for (int i = 0; i < d0; ++i) {
    for (int j = 0; j < d1; ++j) {
      for (int k = 0; k < d2; ++k) {
        int a = flip[0] ? d0 - 1 - i : i, b = flip[1] ? d1 - 1 - j : j;
        int c = flip[2] ? d2 - 1 - k : k;
        out.push_back(static_cast<float>((a * d1 + b) * d2 + c));
      }
    }
  }
  return out;
}

Values reverse(const Values& x, const std::vector<int32_t>& axes) {
  OpModelBuilder m;
  int xi = m.input("x", x.shape, x.type);
  int a = m.constant_i32("axis", {static_cast<int32_t>(axes.size())}, axes);
  int y = m.output("y", {}, x.type);
  m.op(BuiltinOperator::REVERSE_V2, {xi, a}, {y});
  auto out = run(m, {x});
  return out.empty() ? Values{} : out[0];
}

TEST(ReverseV2Test, EachAxisAndCombinations) {
  const Values x = Values::f32({2, 3, 2}, iota_floats(12));
  EXPECT_EQ(reverse(x, {0}).floats(), reversed({true, false, false}));
  EXPECT_EQ(reverse(x, {1}).floats(), reversed({false, true, false}));
  EXPECT_EQ(reverse(x, {-1}).floats(), reversed({false, false, true}));
  EXPECT_EQ(reverse(x, {0, 2}).floats(), reversed({true, false, true}));
  EXPECT_EQ(reverse(x, {2, 1, 0}).floats(), reversed({true, true, true}));
  EXPECT_EQ(reverse(x, {0}).shape, (Dims{2, 3, 2}));
}

TEST(ReverseV2Test, TimeAxisOfAnInt32Sequence) {
  Values y = reverse(Values::i32({4, 1}, {1, 2, 3, 4}), {0});
  EXPECT_EQ(y.ints(), (std::vector<int32_t>{4, 3, 2, 1}));
}

TEST(ReverseV2Test, RejectsAxisOutOfRange) {
  OpModelBuilder m;
  int x = m.input("x", {2, 3});
  int a = m.constant_i32("axis", {1}, {2});
  int y = m.output("y");
  m.op(BuiltinOperator::REVERSE_V2, {x, a}, {y});
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("axis 2 is out of range for 'x' [2,3]"), std::string::npos) << error;
}

TEST(ReverseV2Backward, MatchesFiniteDifferences) {
  OpModelBuilder b;
  int x = b.input("x", {3, 2});
  int a = b.constant_i32("axis", {1}, {0});
  int r = b.tensor("r");
  b.op(BuiltinOperator::REVERSE_V2, {x, a}, {r});
  int w = b.constant("w", {3, 2}, {1.f, -2.f, 0.5f, 3.f, -1.f, 0.25f});
  int y = b.output("y");
  b.op(BuiltinOperator::MUL, {r, w}, {y}, fb::MulOptionsT());
  check_input_gradients(b, {random_floats(6, 1.f, 5)}, 6, "REVERSE_V2");
}

}  // namespace
}  // namespace gruwb::test
