// GATHER: axis (incl. negative), int32/int64 indices, float/int32 data,
// scalar and 2-D indices, run-time indices, bad indices, folding of constants.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

// out[o][j][i] = params[o][indices[j]][i] with o/i the dims before/after axis.
template <typename T>
std::vector<T> reference_gather(const std::vector<T>& params, const std::vector<int32_t>& shape,
                                int axis, const std::vector<int64_t>& indices) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : indices) {
      for (int64_t i = 0; i < inner; ++i) {
        out.push_back(params[static_cast<size_t>((o * shape[axis] + index) * inner + i)]);
      }
    }
  }
  return out;
}

fb::GatherOptionsT gather_options(int axis) {
  fb::GatherOptionsT options;
  options.axis = axis;
  return options;
}

TEST(GatherTest, RowsOfAMatrixWithInt32Indices) {
  OpModelBuilder b;
  int params = b.input("params", {3, 2});
  int indices = b.input("indices", {2}, TensorType::INT32);
  int out = b.output("out");
  b.op(BuiltinOperator::GATHER, {params, indices}, {out}, gather_options(0));
  auto result = run(b, {Values::f32({3, 2}, {1, 2, 3, 4, 5, 6}), Values::i32({2}, {2, 0})});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].shape, (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(result[0].floats(), (std::vector<float>{5, 6, 1, 2}));
}

TEST(GatherTest, MiddleAxisWith2DInt64IndicesKeepsIndexShape) {
  const std::vector<int32_t> shape = {2, 3, 2};
  const std::vector<float> data = iota_floats(12, 0.5f, -1.f);
  const std::vector<int64_t> index_values = {2, 0, 1, 1};
  OpModelBuilder b;
  int params = b.input("params", shape);
  int indices = b.constant("indices", Values::i64({2, 2}, index_values));
  int out = b.output("out");
  b.op(BuiltinOperator::GATHER, {params, indices}, {out}, gather_options(1));
  auto result = run(b, {Values::f32(shape, data)});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].shape, (std::vector<int32_t>{2, 2, 2, 2}));
  EXPECT_EQ(result[0].floats(), reference_gather(data, shape, 1, index_values));
}

TEST(GatherTest, NegativeAxisCountsFromTheEnd) {
  const std::vector<int32_t> shape = {2, 4};
  const std::vector<float> data = iota_floats(8);
  OpModelBuilder b;
  int params = b.input("params", shape);
  int indices = b.constant_i32("indices", {3}, {3, 3, 0});
  int out = b.output("out");
  b.op(BuiltinOperator::GATHER, {params, indices}, {out}, gather_options(-1));
  auto result = run(b, {Values::f32(shape, data)});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].shape, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(result[0].floats(), (std::vector<float>{3, 3, 0, 7, 7, 4}));
}

TEST(GatherTest, ScalarIndexDropsTheAxisAsTheConvertersTimeStepDoes) {
  // GATHER(sequence [T,B,I], t) -> x_t [B,I], t a run-time int32 scalar.
  const std::vector<int32_t> shape = {4, 1, 3};
  const std::vector<float> data = iota_floats(12);
  OpModelBuilder b;
  int params = b.input("sequence", shape);
  int time = b.input("time", {}, TensorType::INT32);
  int out = b.output("x_t");
  b.op(BuiltinOperator::GATHER, {params, time}, {out}, gather_options(0));
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  runner.set_input(0, Values::f32(shape, data));
  for (int32_t t = 0; t < 4; ++t) {
    runner.set_input(1, Values::i32({}, {t}));
    ASSERT_TRUE(runner.invoke()) << runner.error();
    Values x = runner.output(0);
    EXPECT_EQ(x.shape, (std::vector<int32_t>{1, 3}));
    EXPECT_EQ(x.floats(), reference_gather(data, shape, 0, {t}));
  }
}

// The converter's TensorListGetItem inside a WHILE body: acc += sequence[t]
// for t < 4, with t a loop-carried int32 counter. The cond reads only t, as
// converter-made conds do (this once exposed unused cond inputs being
// planned on top of live tensors).
TEST(GatherTest, TimeStepsInsideAWhileLoop) {
  const std::vector<int32_t> shape = {4, 1, 3};
  const std::vector<float> data = iota_floats(12, 0.5f, -2.f);
  OpModelBuilder b;
  const int cond = b.add_subgraph("cond");
  const int body = b.add_subgraph("body");
  // main: (t, acc, sequence) = WHILE(0, zeros, sequence)
  int sequence = b.input("sequence", shape);
  int t0 = b.constant_i32("t0", {}, {0});
  int acc0 = b.constant("acc0", {1, 3}, {0, 0, 0});
  int t_out = b.output("t_out", {}, TensorType::INT32);
  int acc_out = b.output("acc_out");
  int seq_out = b.tensor("seq_out");
  fb::WhileOptionsT loop;
  loop.cond_subgraph_index = cond;
  loop.body_subgraph_index = body;
  b.op(BuiltinOperator::WHILE, {t0, acc0, sequence}, {t_out, acc_out, seq_out}, loop);
  // cond: t < 4
  b.use_subgraph(cond);
  int ct = b.input("t", {}, TensorType::INT32);
  b.input("acc", {1, 3});
  b.input("sequence", shape);
  int steps = b.constant_i32("steps", {}, {4});
  int more = b.output("more", {}, TensorType::BOOL);
  b.op(BuiltinOperator::LESS, {ct, steps}, {more});
  // body: x = GATHER(sequence, t); acc += x; t += 1
  b.use_subgraph(body);
  int bt = b.input("t", {}, TensorType::INT32);
  int bacc = b.input("acc", {1, 3});
  int bseq = b.input("sequence", shape);
  int x = b.tensor("x");
  b.op(BuiltinOperator::GATHER, {bseq, bt}, {x}, gather_options(0));
  int one = b.constant_i32("one", {}, {1});
  int next_t = b.output("next_t", {}, TensorType::INT32);
  int next_acc = b.tensor("next_acc");
  b.op(BuiltinOperator::ADD, {bt, one}, {next_t}, fb::AddOptionsT());
  b.op(BuiltinOperator::ADD, {bacc, x}, {next_acc}, fb::AddOptionsT());
  b.mark_output(next_acc);
  b.mark_output(bseq);

  auto out = run(b, {Values::f32(shape, data)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{4}));
  EXPECT_EQ(out[1].shape, (std::vector<int32_t>{1, 3}));
  std::vector<float> expected(3, 0.f);
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 3; ++i) expected[i] += data[static_cast<size_t>(t * 3 + i)];
  }
  EXPECT_TRUE(floats_near(expected, out[1].floats(), 1e-6f));
}

TEST(GatherTest, Int32Data) {
  OpModelBuilder b;
  int params = b.input("params", {5}, TensorType::INT32);
  int indices = b.input("indices", {3}, TensorType::INT32);
  int out = b.output("out", {}, TensorType::INT32);
  b.op(BuiltinOperator::GATHER, {params, indices}, {out}, gather_options(0));
  auto result = run(b, {Values::i32({5}, {10, 11, 12, 13, 14}), Values::i32({3}, {4, 0, 4})});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].type, TensorType::INT32);
  EXPECT_EQ(result[0].ints(), (std::vector<int32_t>{14, 10, 14}));
}

TEST(GatherTest, OutOfRangeIndexFailsInvokeNamingIt) {
  OpModelBuilder b;
  int params = b.input("params", {3, 2});
  int indices = b.input("indices", {2}, TensorType::INT32);
  int out = b.output("out");
  b.op(BuiltinOperator::GATHER, {params, indices}, {out}, gather_options(0));
  std::string error =
      invoke_error(b, {Values::f32({3, 2}, iota_floats(6)), Values::i32({2}, {1, 3})});
  EXPECT_NE(error.find("index 3"), std::string::npos) << error;
  EXPECT_NE(error.find("'indices'"), std::string::npos) << error;
  error = invoke_error(b, {Values::f32({3, 2}, iota_floats(6)), Values::i32({2}, {-1, 0})});
  EXPECT_NE(error.find("index -1"), std::string::npos) << error;
}

TEST(GatherTest, RejectsBatchDimsAndBadAxisAndFloatIndices) {
  {
    OpModelBuilder b;
    int params = b.input("params", {2, 3});
    int indices = b.input("indices", {2, 1}, TensorType::INT32);
    int out = b.output("out");
    fb::GatherOptionsT options = gather_options(1);
    options.batch_dims = 1;
    b.op(BuiltinOperator::GATHER, {params, indices}, {out}, options);
    EXPECT_NE(prepare_error(b).find("batch_dims 1"), std::string::npos) << prepare_error(b);
  }
  {
    OpModelBuilder b;
    int params = b.input("params", {2, 3});
    int indices = b.input("indices", {1}, TensorType::INT32);
    int out = b.output("out");
    b.op(BuiltinOperator::GATHER, {params, indices}, {out}, gather_options(2));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("axis 2 is out of range for 'params' [2,3]"), std::string::npos) << error;
  }
  {
    OpModelBuilder b;
    int params = b.input("params", {2, 3});
    int indices = b.input("indices", {1});
    int out = b.output("out");
    b.op(BuiltinOperator::GATHER, {params, indices}, {out}, gather_options(0));
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("indices 'indices' is FLOAT32"), std::string::npos) << error;
  }
}

TEST(GatherTest, ConstantIntegerInputsAreFoldedAtPrepare) {
  OpModelBuilder b;
  int params = b.constant_i32("params", {4}, {7, 8, 9, 10});
  int indices = b.constant_i32("indices", {2}, {3, 1});
  int out = b.output("out", {}, TensorType::INT32);
  b.op(BuiltinOperator::GATHER, {params, indices}, {out}, gather_options(0));
  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  // Known before any invoke: prepare computed it.
  EXPECT_EQ(runner.interpreter().output(0)->kind, TensorKind::kConstant);
  EXPECT_EQ(runner.output(0).ints(), (std::vector<int32_t>{10, 8}));
  ASSERT_TRUE(runner.invoke()) << runner.error();
  EXPECT_EQ(runner.output(0).ints(), (std::vector<int32_t>{10, 8}));
}

// Training: scatter-add into the params gradient, repeated indices sum.
TEST(GatherBackward, ScatterAddsRepeatedIndices) {
  for (int axis : {0, 1}) {
    OpModelBuilder b;
    int params = b.input("params", {3, 4});
    int indices = b.constant_i32("indices", {2, 2}, {2, 0, 2, 1});
    int y = b.output("y");
    b.op(BuiltinOperator::GATHER, {params, indices}, {y}, gather_options(axis));
    const std::vector<std::vector<float>> inputs = {random_floats(12, 1.f, 2)};
    const size_t outputs = axis == 0 ? 16 : 12;
    check_input_gradients(b, inputs, outputs, "GATHER axis " + std::to_string(axis));
  }
}

}  // namespace
}  // namespace gruwb::test
