// Flex TensorList ops (FlexTensorListReserve/SetItem/GetItem/Stack/FromTensor): lists are
// dense [N, element...] tensors sized at prepare, element type read from the TensorFlow
// NodeDef in custom_options, unwritten elements zero, gradients routed by index.

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/engine/flex_options.h"
#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

// stacked = Stack(SetItem(Reserve([-1,2], 3), index, x)); got = GetItem(that list, index).
OpModelBuilder set_then_read(int dtype = 1) {
  OpModelBuilder b;
  int x = b.input("x", {1, 2});
  int index = b.input("index", {}, TensorType::INT32);
  int element_shape = b.constant_i32("element_shape", {2}, {-1, 2});
  int count = b.constant_i32("count", {}, {3});
  int reserved = b.tensor("reserved", {}, TensorType::VARIANT);
  int written = b.tensor("written", {}, TensorType::VARIANT);
  int stacked = b.output("stacked");
  int got = b.output("got");
  b.custom_op("FlexTensorListReserve", {element_shape, count}, {reserved},
              flex_node_def_options("TensorListReserve", dtype));
  b.custom_op("FlexTensorListSetItem", {reserved, index, x}, {written},
              flex_node_def_options("TensorListSetItem", dtype));
  b.custom_op("FlexTensorListStack", {written, element_shape}, {stacked},
              flex_node_def_options("TensorListStack", dtype));
  b.custom_op("FlexTensorListGetItem", {written, index, element_shape}, {got},
              flex_node_def_options("TensorListGetItem", dtype));
  return b;
}

TEST(TensorListTest, SetItemThenStackAndGetItem) {
  OpRunner runner(set_then_read());
  ASSERT_TRUE(runner.ok()) << runner.error();
  for (int32_t i = 0; i < 3; ++i) {
    runner.set_input(0, Values::f32({1, 2}, {1.5f, -2.f}));
    runner.set_input(1, Values::i32({}, {i}));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    Floats expected(6, 0.f);
    expected[static_cast<size_t>(2 * i)] = 1.5f;
    expected[static_cast<size_t>(2 * i + 1)] = -2.f;
    EXPECT_EQ(runner.output(0).shape, (Dims{3, 1, 2}));
    EXPECT_EQ(runner.output(0).floats(), expected) << "index " << i;
    EXPECT_EQ(runner.output(1).shape, (Dims{1, 2}));
    EXPECT_EQ(runner.output(1).floats(), (Floats{1.5f, -2.f}));
  }
  runner.set_input(1, Values::i32({}, {3}));
  EXPECT_FALSE(runner.invoke());
  EXPECT_NE(runner.error().find("index 3 is outside list 'reserved' of 3"), std::string::npos)
      << runner.error();
}

TEST(TensorListTest, ElementTypeComesFromTheNodeDef) {
  EXPECT_NE(prepare_error(set_then_read(-1)).find("the NodeDef has no element_dtype"),
            std::string::npos);
  // An int32 list cannot take the float item.
  EXPECT_NE(prepare_error(set_then_read(3)).find("does not fit list 'reserved' [3,1,2] of INT32"),
            std::string::npos)
      << prepare_error(set_then_read(3));
}

TEST(TensorListTest, FromTensorThenGetItem) {
  OpModelBuilder b;
  int x = b.input("x", {3, 2});
  int element_shape = b.constant_i32("element_shape", {1}, {2});
  int index = b.constant_i32("index", {}, {2});
  int list = b.tensor("list", {}, TensorType::VARIANT);
  int row = b.output("row");
  b.custom_op("FlexTensorListFromTensor", {x, element_shape}, {list},
              flex_node_def_options("TensorListFromTensor", 1));
  b.custom_op("FlexTensorListGetItem", {list, index, element_shape}, {row},
              flex_node_def_options("TensorListGetItem", 1));
  auto out = run(b, {Values::f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].floats(), (Floats{5, 6}));
}

// dL/dx is row `index` of the stacked output's gradient (finite differences of the loss).
TEST(TensorListTest, GradientsFollowTheIndex) {
  OpModelBuilder b;
  int x = b.input("x", {1, 2});
  int element_shape = b.constant_i32("element_shape", {2}, {-1, 2});
  int count = b.constant_i32("count", {}, {3});
  int index = b.constant_i32("index", {}, {1});
  int reserved = b.tensor("reserved", {}, TensorType::VARIANT);
  int written = b.tensor("written", {}, TensorType::VARIANT);
  int stacked = b.output("stacked");
  b.custom_op("FlexTensorListReserve", {element_shape, count}, {reserved},
              flex_node_def_options("TensorListReserve", 1));
  b.custom_op("FlexTensorListSetItem", {reserved, index, x}, {written},
              flex_node_def_options("TensorListSetItem", 1));
  b.custom_op("FlexTensorListStack", {written, element_shape}, {stacked},
              flex_node_def_options("TensorListStack", 1));
  check_input_gradients(b, {{0.5f, -1.f}}, 6, "x through the list");
}

}  // namespace
}  // namespace gruwb::test
