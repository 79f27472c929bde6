// SHAPE (out_type INT32/INT64) and the converter's zero-state chain
// SHAPE -> STRIDED_SLICE -> PACK -> FILL, which our prepare folds into
// constants so FILL gets constant dims.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;

fb::ShapeOptionsT shape_options(TensorType type) {
  fb::ShapeOptionsT o;
  o.out_type = type;
  return o;
}

TEST(ShapeTest, Int32AndInt64) {
  for (TensorType type : {TensorType::INT32, TensorType::INT64}) {
    OpModelBuilder b;
    int x = b.input("x", {2, 5, 3});
    int y = b.output("shape", {3}, type);
    b.op(BuiltinOperator::SHAPE, {x}, {y}, shape_options(type));
    auto out = run(b, {Values::f32({2, 5, 3}, std::vector<float>(30, 0.f))});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type, type);
    EXPECT_EQ(out[0].shape, (Dims{3}));
    if (type == TensorType::INT32) {
      EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{2, 5, 3}));
    } else {
      EXPECT_EQ(out[0].int64s(), (std::vector<int64_t>{2, 5, 3}));
    }
  }
}

TEST(ShapeTest, WithoutOptionsTheOutputTensorTypeDecides) {
  OpModelBuilder b;
  int x = b.input("x", {4}, TensorType::INT32);
  int y = b.output("shape", {1}, TensorType::INT64);
  b.op(BuiltinOperator::SHAPE, {x}, {y});
  auto out = run(b, {Values::i32({4}, {1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].int64s(), (std::vector<int64_t>{4}));
}

TEST(ShapeTest, RejectsOtherOutTypes) {
  OpModelBuilder b;
  int x = b.input("x", {4});
  int y = b.output("shape", {1}, TensorType::BOOL);
  b.op(BuiltinOperator::SHAPE, {x}, {y}, shape_options(TensorType::BOOL));
  EXPECT_NE(prepare_error(b).find("out_type BOOL, expected INT32 or INT64"), std::string::npos)
      << prepare_error(b);
}

// zeros = FILL(PACK(STRIDED_SLICE(SHAPE(x), [0], [1], [1], shrink), units), 0.0)
// then h = ADD(zeros, bias): the state a Keras GRU starts from.
TEST(ShapeTest, ZeroStateChainIsFoldedAtPrepare) {
  OpModelBuilder b;
  int x = b.input("x", {3, 7, 2});
  int shape = b.tensor("shape", {3}, TensorType::INT32);
  b.op(BuiltinOperator::SHAPE, {x}, {shape}, shape_options(TensorType::INT32));
  int begin = b.constant_i32("begin", {1}, {0});
  int end = b.constant_i32("end", {1}, {1});
  int strides = b.constant_i32("strides", {1}, {1});
  int batch = b.tensor("batch", {}, TensorType::INT32);
  fb::StridedSliceOptionsT slice;
  slice.shrink_axis_mask = 1;
  b.op(BuiltinOperator::STRIDED_SLICE, {shape, begin, end, strides}, {batch}, slice);
  int units = b.constant_i32("units", {}, {4});
  int dims = b.tensor("dims", {2}, TensorType::INT32);
  fb::PackOptionsT pack;
  pack.values_count = 2;
  b.op(BuiltinOperator::PACK, {batch, units}, {dims}, pack);
  int zero = b.constant("zero", {}, {0.f});
  int zeros = b.tensor("zeros", {});
  b.op(BuiltinOperator::FILL, {dims, zero}, {zeros});
  int bias = b.constant("bias", {4}, {1, 2, 3, 4});
  int h = b.output("h");
  b.op(BuiltinOperator::ADD, {zeros, bias}, {h}, fb::AddOptionsT());

  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  const SubgraphState& main = runner.interpreter().subgraph_state(0);
  EXPECT_EQ(main.tensors[shape].kind, TensorKind::kConstant);
  EXPECT_EQ(main.tensors[batch].kind, TensorKind::kConstant);
  EXPECT_EQ(main.tensors[dims].kind, TensorKind::kConstant);
  EXPECT_EQ(main.tensors[dims].i32()[0], 3);
  EXPECT_EQ(main.tensors[dims].i32()[1], 4);
  EXPECT_EQ(main.tensors[zeros].kind, TensorKind::kActivation);  // float: not folded
  runner.set_input(0, Values::f32({3, 7, 2}, std::vector<float>(42, 1.f)));
  ASSERT_TRUE(runner.invoke()) << runner.error();
  Values out = runner.output(0);
  EXPECT_EQ(out.shape, (Dims{3, 4}));
  EXPECT_EQ(out.floats(), (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
}

// A folded shape also feeds RESHAPE, whose shape input must be constant.
TEST(ShapeTest, FoldedShapeFeedsReshape) {
  OpModelBuilder b;
  int x = b.input("x", {2, 6});
  int like = b.input("like", {3, 4});
  int shape = b.tensor("shape", {2}, TensorType::INT32);
  b.op(BuiltinOperator::SHAPE, {like}, {shape}, shape_options(TensorType::INT32));
  int y = b.output("y");
  b.op(BuiltinOperator::RESHAPE, {x, shape}, {y});
  auto out = run(b, {Values::f32({2, 6}, iota_floats(12)), Values::f32({3, 4}, iota_floats(12))});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{3, 4}));
  EXPECT_EQ(out[0].floats(), iota_floats(12));
}

}  // namespace
}  // namespace gruwb::test
