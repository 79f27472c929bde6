// PACK and UNPACK: every axis position (incl. negative), scalars packed into
// a shape vector, int32 data, count/shape mismatches.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

fb::PackOptionsT pack_options(int count, int axis) {
  fb::PackOptionsT o;
  o.values_count = count;
  o.axis = axis;
  return o;
}

fb::UnpackOptionsT unpack_options(int num, int axis) {
  fb::UnpackOptionsT o;
  o.num = num;
  o.axis = axis;
  return o;
}

TEST(PackTest, EveryAxisPosition) {
  const Dims expected_shapes[] = {{3, 2, 2}, {2, 3, 2}, {2, 2, 3}};
  for (int axis : {0, 1, 2, -1, -3}) {
    int positive = axis < 0 ? axis + 3 : axis;
    OpModelBuilder b;
    int a = b.input("a", {2, 2}), c = b.input("b", {2, 2}), d = b.input("c", {2, 2});
    int y = b.output("y");
    b.op(BuiltinOperator::PACK, {a, c, d}, {y}, pack_options(3, axis));
    auto out =
        run(b, {Values::f32({2, 2}, iota_floats(4)), Values::f32({2, 2}, iota_floats(4, 1, 10)),
                Values::f32({2, 2}, iota_floats(4, 1, 20))});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, expected_shapes[positive]) << axis;
    // Independent check by index arithmetic on the output shape.
    const Dims& s = expected_shapes[positive];
    Floats expected;
    for (int p = 0; p < s[0]; ++p) {
      for (int q = 0; q < s[1]; ++q) {
        for (int r = 0; r < s[2]; ++r) {
          int index[3] = {p, q, r};
          int n = index[positive];
          int rest[2], k = 0;
          for (int m = 0; m < 3; ++m) {
            if (m != positive) rest[k++] = index[m];
          }
          expected.push_back(static_cast<float>(10 * n + 2 * rest[0] + rest[1]));
        }
      }
    }
    EXPECT_EQ(out[0].floats(), expected) << axis;
  }
}

TEST(PackTest, ScalarsIntoAShapeVector) {
  OpModelBuilder b;
  int batch = b.input("batch", {}, TensorType::INT32);
  int units = b.constant_i32("units", {}, {60});
  int y = b.output("dims", {}, TensorType::INT32);
  b.op(BuiltinOperator::PACK, {batch, units}, {y}, pack_options(2, 0));
  auto out = run(b, {Values::i32({}, {5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{2}));
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{5, 60}));
}

TEST(PackTest, RejectsMismatches) {
  {
    OpModelBuilder b;
    int a = b.input("a", {2}), c = b.input("c", {3});
    int y = b.output("y");
    b.op(BuiltinOperator::PACK, {a, c}, {y}, pack_options(2, 0));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("input 1 'c' [3] differs from input 0 'a' [2]"), std::string::npos)
        << error;
  }
  {
    OpModelBuilder b;
    int a = b.input("a", {2}), c = b.input("c", {2});
    int y = b.output("y");
    b.op(BuiltinOperator::PACK, {a, c}, {y}, pack_options(3, 0));
    EXPECT_NE(prepare_error(b).find("values_count 3 but 2 inputs"), std::string::npos);
  }
  {
    OpModelBuilder b;
    int a = b.input("a", {2}), c = b.input("c", {2});
    int y = b.output("y");
    b.op(BuiltinOperator::PACK, {a, c}, {y}, pack_options(2, 2));
    EXPECT_NE(prepare_error(b).find("axis 2 is out of range for packing 'a' [2]"),
              std::string::npos)
        << prepare_error(b);
  }
}

TEST(UnpackTest, EveryAxisInvertsPack) {
  // x[i,j,k] = 100i + 10j + k on [2,3,2].
  Floats x;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 2; ++k) x.push_back(static_cast<float>(100 * i + 10 * j + k));
    }
  }
  const Dims shape = {2, 3, 2};
  for (int axis : {0, 1, 2, -2}) {
    int positive = axis < 0 ? axis + 3 : axis;
    int n = shape[positive];
    OpModelBuilder b;
    int in = b.input("x", shape);
    std::vector<int32_t> outs;
    for (int i = 0; i < n; ++i) outs.push_back(b.output("y" + std::to_string(i)));
    b.op(BuiltinOperator::UNPACK, {in}, outs, unpack_options(n, axis));
    auto out = run(b, {Values::f32(shape, x)});
    ASSERT_EQ(out.size(), static_cast<size_t>(n)) << axis;
    for (int part = 0; part < n; ++part) {
      Dims expected_shape;
      for (int d = 0; d < 3; ++d) {
        if (d != positive) expected_shape.push_back(shape[d]);
      }
      EXPECT_EQ(out[part].shape, expected_shape);
      Floats expected;
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 3; ++j) {
          for (int k = 0; k < 2; ++k) {
            int index[3] = {i, j, k};
            if (index[positive] == part)
              expected.push_back(static_cast<float>(100 * i + 10 * j + k));
          }
        }
      }
      EXPECT_EQ(out[part].floats(), expected) << "axis " << axis << " part " << part;
    }
  }
}

TEST(UnpackTest, Int32DataAndNumMismatch) {
  {
    OpModelBuilder b;
    int in = b.input("x", {2, 2}, TensorType::INT32);
    int y0 = b.output("y0", {}, TensorType::INT32), y1 = b.output("y1", {}, TensorType::INT32);
    b.op(BuiltinOperator::UNPACK, {in}, {y0, y1}, unpack_options(2, 1));
    auto out = run(b, {Values::i32({2, 2}, {1, 2, 3, 4})});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{1, 3}));
    EXPECT_EQ(out[1].ints(), (std::vector<int32_t>{2, 4}));
  }
  {
    OpModelBuilder b;
    int in = b.input("x", {3, 2});
    int y0 = b.output("y0"), y1 = b.output("y1");
    b.op(BuiltinOperator::UNPACK, {in}, {y0, y1}, unpack_options(2, 0));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("'x' [3,2] has 3 values along axis 0, but num is 2 and there are 2"),
              std::string::npos)
        << error;
  }
}

// Training: PACK then UNPACK along another axis, parts combined so that
// every output of UNPACK carries a gradient.
TEST(PackBackward, PackAndUnpackMatchFiniteDifferences) {
  OpModelBuilder b;
  int a = b.input("a", {2, 3});
  int c = b.input("c", {2, 3});
  int packed = b.tensor("packed");
  fb::PackOptionsT pack;
  pack.axis = 1;
  pack.values_count = 2;
  b.op(BuiltinOperator::PACK, {a, c}, {packed}, pack);  // [2,2,3]
  int u0 = b.tensor("u0"), u1 = b.tensor("u1"), u2 = b.tensor("u2");
  fb::UnpackOptionsT unpack;
  unpack.axis = 2;
  unpack.num = 3;
  b.op(BuiltinOperator::UNPACK, {packed}, {u0, u1, u2}, unpack);  // 3 x [2,2]
  int m = b.tensor("m");
  int y = b.output("y");
  b.op(BuiltinOperator::MUL, {u0, u1}, {m});
  b.op(BuiltinOperator::SUB, {m, u2}, {y});
  check_input_gradients(b, {random_floats(6, 1.f, 10), random_floats(6, 1.f, 11)}, 4,
                        "PACK/UNPACK");
}

}  // namespace
}  // namespace gruwb::test
