// Overflow-checked size arithmetic (engine/model/checked_size.h) and what it guards: shapes a
// kernel computes at prepare, the planner's offsets, and the host's memory budget. Each case is
// a crash the mutant census (tests/fuzz/mutant_census.py) found or the issue measured.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "engine/model/checked_size.h"
#include "engine/runtime/memory_planner.h"
#include "engine/runtime/tensor.h"
#include "engine/tools/memory_budget.h"
#include "tests/engine/kernels/op_test_util.h"

namespace gruwb::test {
namespace {

TEST(CheckedSize, ArithmeticRefusesWhatDoesNotFit) {
  uint64_t product = 0;
  EXPECT_TRUE(checked_mul<uint64_t>(uint64_t{1} << 31, 4, &product));
  EXPECT_EQ(product, uint64_t{1} << 33);
  EXPECT_FALSE(checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32, &product));
  // A Cortex-M size_t: 2^31 float32 elements are 8 GiB, which 32 bits cannot hold.
  uint32_t bytes32 = 0;
  EXPECT_FALSE(checked_mul<uint32_t>(uint32_t{1} << 31, 4, &bytes32));
  EXPECT_FALSE(checked_add<uint32_t>(UINT32_MAX - 3, 4, &bytes32));
  size_t aligned = 0;
  EXPECT_TRUE(checked_align_up(17, 16, &aligned));
  EXPECT_EQ(aligned, 32u);
  EXPECT_FALSE(checked_align_up(SIZE_MAX - 3, 16, &aligned));
  EXPECT_EQ(saturating_add(SIZE_MAX - 1, 5), SIZE_MAX);
}

TEST(CheckedSize, ElementCountRefusesNegativeAndOversizedShapes) {
  uint64_t n = 0;
  const int32_t fine[] = {2, 3, 4};
  ASSERT_TRUE(checked_element_count(fine, 3, kMaxTensorElements, &n));
  EXPECT_EQ(n, 24u);
  const int32_t negative[] = {2, -3};
  EXPECT_FALSE(checked_element_count(negative, 2, kMaxTensorElements, &n));
  const int32_t wraps_int64[] = {1 << 28, 1 << 28, 256};  // 2^64: wrapped to 0 before
  EXPECT_FALSE(checked_element_count(wraps_int64, 3, kMaxTensorElements, &n));
}

TEST(ShapeElements, OverflowingShapeIsInvalidWithNoElementsAndNoBytes) {
  const Shape shape = make_shape({1 << 28, 1 << 28, 256});
  EXPECT_FALSE(shape.valid_size());
  EXPECT_EQ(shape.elements(), 0);
  size_t bytes = 0;
  EXPECT_FALSE(tensor_bytes(TensorType::FLOAT32, shape, &bytes));
  EXPECT_FALSE(make_shape({2, -1}).valid_size());
  EXPECT_EQ(make_shape({}).elements(), 1);
  EXPECT_TRUE(make_shape({0, 5}).valid_size());
  EXPECT_EQ(make_shape({0, 5}).elements(), 0);
}

TEST(MemoryPlanner, BuffersBeyondSizeMaxMakeAPlanNoArenaHas) {
  PlannedBuffer buffers[2] = {{SIZE_MAX - 4, 0, 0, 1}, {64, 0, 0, 1}};
  int32_t work[4];
  EXPECT_EQ(plan_buffers(buffers, 2, 16, work), SIZE_MAX);
  PlannedBuffer both_huge[2] = {{SIZE_MAX / 2, 0, 0, 1}, {SIZE_MAX / 2, 0, 0, 1}};
  EXPECT_EQ(plan_buffers(both_huge, 2, 16, work), SIZE_MAX);
}

// FILL of [2^28, 2^28, 256] "ran" and printed an empty output: the element count wrapped to 0.
TEST(HostileShapes, FillWithWrappingDimsFailsAtPrepareNamingTheOutput) {
  OpModelBuilder b;
  int dims = b.constant_i32("dims", {3}, {1 << 28, 1 << 28, 256});
  int value = b.constant("value", {}, {1.f});
  int y = b.output("filled");
  b.op(BuiltinOperator::FILL, {dims, value}, {y});
  OpRunner runner(b);
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.error().find("output 0: tensor 'filled': shape [268435456,268435456,256]"),
            std::string::npos)
      << runner.error();
}

// An int16 FC wrote 6 rows into a variable output declared with 3, over the op's own state in
// the arena (model_invoke_fuzz). A variable keeps its declared storage, so prepare refuses.
TEST(HostileShapes, OpWritingMoreThanItsVariableOutputHoldsIsRefused) {
  OpModelBuilder b;
  int x = b.input("x", {3, 32});
  int w = b.constant("w", {8, 16}, std::vector<float>(8 * 16, 0.5f));
  int y = b.variable("y", {3, 8});
  b.mark_output(y);
  b.op(BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {y});
  OpRunner runner(b);
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.error().find("output 0 'y' needs 192 bytes, its variable has 96"),
            std::string::npos)
      << runner.error();
}

TEST(HostileShapes, FillWithANegativeDimFailsAtPrepare) {
  OpModelBuilder b;
  int dims = b.constant_i32("dims", {2}, {4, -3});
  int value = b.constant("value", {}, {1.f});
  int y = b.output("filled");
  b.op(BuiltinOperator::FILL, {dims, value}, {y});
  OpRunner runner(b);
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.error().find("(FILL): dims 'dims' holds a bad size -3 at 1"), std::string::npos)
      << runner.error();
}

TEST(HostileShapes, ReshapeToNegativeDimsThatMultiplyRightIsRefused) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3});
  int shape = b.constant_i32("shape", {2}, {-2, -3});  // product 6, as the input's
  int y = b.output("y");
  b.op(BuiltinOperator::RESHAPE, {x, shape}, {y});
  OpRunner runner(b);
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.error().find("new shape dimension 0 is -2"), std::string::npos)
      << runner.error();
}

// A tensor declared with no elements was taken for an empty constant even when an op wrote it:
// LOGISTIC then stored 64 values through a null pointer (model_invoke_fuzz). It now gets the
// shape its op computes, as TFLite gives it.
TEST(HostileShapes, OutputDeclaredEmptyGetsTheShapeItsOpComputes) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3});
  int y = b.output("y", {2, 0});
  b.op(BuiltinOperator::LOGISTIC, {x}, {y});
  const std::vector<float> values = iota_floats(6, 0.5f, -1.5f);
  const std::vector<Values> out = run(b, {Values::f32({2, 3}, values)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int32_t>{2, 3}));
  std::vector<float> expected;
  for (float v : values) expected.push_back(1.f / (1.f + std::exp(-v)));
  EXPECT_TRUE(floats_near(expected, out[0].floats(), 1e-6f));
}

// The same for a WHILE's result: the copy out of the loop read from a null pointer
// (model_train_fuzz). x doubles while x < 10: 1 -> 16.
TEST(HostileShapes, WhileResultDeclaredEmptyCarriesTheLoopValue) {
  OpModelBuilder b;
  const int cond = b.add_subgraph("cond");
  const int body = b.add_subgraph("body");
  int x = b.input("x", {});
  int result = b.output("result", {0});
  fb::WhileOptionsT loop;
  loop.cond_subgraph_index = cond;
  loop.body_subgraph_index = body;
  b.op(BuiltinOperator::WHILE, {x}, {result}, loop);
  b.use_subgraph(cond);
  int cx = b.input("x", {});
  int limit = b.constant("limit", {}, {10.f});
  int more = b.output("more", {}, TensorType::BOOL);
  b.op(BuiltinOperator::LESS, {cx, limit}, {more});
  b.use_subgraph(body);
  int bx = b.input("x", {});
  int twice = b.output("twice", {});
  b.op(BuiltinOperator::ADD, {bx, bx}, {twice}, fb::AddOptionsT());
  const std::vector<Values> out = run(b, {Values::f32({}, {1.f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].floats(), (std::vector<float>{16.f}));
}

// A loop counting from -2^28 to 2 (model_train_fuzz) ran 2^24 iterations before the bound
// stopped it: tens of seconds. Counted loops over the bound, or whose counter never reaches the
// limit (a step of 0 or less, or an int32 ADD that wraps first), are refused at prepare; a loop
// whose count is unknown (here the counter steps by SUB, not ADD) stops at the bound with an
// error.
OpModelBuilder counting_loop(int32_t start, int32_t step, bool by_add = true) {
  OpModelBuilder b;
  const int cond = b.add_subgraph("cond");
  const int body = b.add_subgraph("body");
  int first = b.constant_i32("start", {}, {start});
  int last = b.output("last", {}, TensorType::INT32);
  fb::WhileOptionsT loop;
  loop.cond_subgraph_index = cond;
  loop.body_subgraph_index = body;
  b.op(BuiltinOperator::WHILE, {first}, {last}, loop);
  b.use_subgraph(cond);
  int i = b.input("i", {}, TensorType::INT32);
  int limit = b.constant_i32("limit", {}, {2});
  int more = b.output("more", {}, TensorType::BOOL);
  b.op(BuiltinOperator::LESS, {i, limit}, {more});
  b.use_subgraph(body);
  int bi = b.input("i", {}, TensorType::INT32);
  int step_tensor = b.constant_i32("step", {}, {step});
  int next = b.output("next", {}, TensorType::INT32);
  if (by_add) {
    b.op(BuiltinOperator::ADD, {bi, step_tensor}, {next}, fb::AddOptionsT());
  } else {
    b.op(BuiltinOperator::SUB, {bi, step_tensor}, {next}, fb::SubOptionsT());
  }
  return b;
}

TEST(HostileLoops, CountedLoopOverTheBoundIsRefusedAtPrepare) {
  OpRunner runner(counting_loop(-(1 << 28), 1));
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.error().find("the loop counts 268435458 iterations, more than the limit of "
                                "1048576"),
            std::string::npos)
      << runner.error();
  OpRunner fine(counting_loop(-1000, 1));
  ASSERT_TRUE(fine.ok()) << fine.error();
  ASSERT_TRUE(fine.invoke()) << fine.error();
  EXPECT_EQ(fine.output(0).ints(), (std::vector<int32_t>{2}));
}

// Fuzz findings train-while-counter-steps-down and train-while-counter-wraps-int32: such a loop
// ran to the bound, a minute under ASan. TFLite would run it for 2^31 iterations or forever.
TEST(HostileLoops, CounterThatNeverReachesItsLimitIsRefusedAtPrepare) {
  for (const int32_t step : {0, -1, INT32_MAX}) {
    OpRunner runner(counting_loop(1, step));
    ASSERT_FALSE(runner.ok()) << "step " << step;
    EXPECT_NE(runner.error().find("the loop's int32 counter never reaches its limit"),
              std::string::npos)
        << runner.error();
  }
  OpRunner largest_step(counting_loop(1, INT32_MAX - 1));  // 1 + step is INT32_MAX: ends
  ASSERT_TRUE(largest_step.ok()) << largest_step.error();
  ASSERT_TRUE(largest_step.invoke()) << largest_step.error();
  EXPECT_EQ(largest_step.output(0).ints(), (std::vector<int32_t>{INT32_MAX}));
}

TEST(HostileLoops, EndlessLoopStopsAtTheBound) {
  OpRunner runner(counting_loop(0, 0, false));  // i - 0: LESS(0, 2) forever, count unknown
  ASSERT_TRUE(runner.ok()) << runner.error();
  EXPECT_FALSE(runner.invoke());
  EXPECT_NE(runner.error().find("loop did not finish after 1048576 iterations"), std::string::npos)
      << runner.error();
}

// A few bytes of file claiming gigabytes made `gruwb run` allocate 10.5 GB for 33 s.
TEST(MemoryBudget, PlanOverTheBudgetNamesTheLargestTensor) {
  ASSERT_EQ(setenv("GRUWB_MEMORY_BUDGET_MB", "2", 1), 0);
  OpModelBuilder b;
  int dims = b.constant_i32("dims", {2}, {1024, 1024});  // 4 MiB of float32
  int value = b.input("value", {});
  int y = b.output("four_mebibytes");
  b.op(BuiltinOperator::FILL, {dims, value}, {y});
  OpRunner runner(b);
  unsetenv("GRUWB_MEMORY_BUDGET_MB");
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.error().find("over the 2.0 MiB memory budget (GRUWB_MEMORY_BUDGET_MB)"),
            std::string::npos)
      << runner.error();
  EXPECT_NE(runner.error().find("'four_mebibytes' with 4194304 bytes"), std::string::npos)
      << runner.error();
}

TEST(MemoryBudget, EnvironmentSetsItInMebibytes) {
  ASSERT_EQ(setenv("GRUWB_MEMORY_BUDGET_MB", "300", 1), 0);
  EXPECT_EQ(tools::memory_budget_bytes(), size_t{300} << 20);
  ASSERT_EQ(setenv("GRUWB_MEMORY_BUDGET_MB", "lots", 1), 0);
  EXPECT_EQ(tools::memory_budget_bytes(), size_t{2} << 30);
  unsetenv("GRUWB_MEMORY_BUDGET_MB");
  EXPECT_EQ(tools::memory_budget_bytes(), size_t{2} << 30);
}

}  // namespace
}  // namespace gruwb::test
