// The interpreter's OpProfiler hook on a real nested-WHILE model: every op
// invoke runs is heard as a begin/end pair, pairs nest like the control flow
// (a loop's cond and body ops inside its WHILE op), the main subgraph's ops
// come in order at the top level, and without a profiler nothing is heard.

#include "engine/runtime/op_profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/train/observer.h"
#include "tests/engine/test_models.h"

namespace gruwb {
namespace {

struct Recorder : OpProfiler {
  struct Event {
    int32_t subgraph, op, depth;
    std::string name;
  };
  std::vector<std::pair<int32_t, int32_t>> open;  // (subgraph, op) not yet ended
  std::vector<Event> ended;
  int nesting_errors = 0;
  int max_children_of_while = 0;
  std::vector<int> children;

  bool begin_op(int32_t subgraph, int32_t op) override {
    if (!children.empty()) ++children.back();
    open.push_back({subgraph, op});
    children.push_back(0);
    return true;
  }
  void end_op(int32_t subgraph, int32_t op, const char* op_name) override {
    if (open.empty() || open.back() != std::make_pair(subgraph, op)) ++nesting_errors;
    if (!open.empty()) open.pop_back();
    const int nested = children.empty() ? 0 : children.back();
    if (!children.empty()) children.pop_back();
    if (std::string(op_name) == "WHILE" && nested > max_children_of_while) {
      max_children_of_while = nested;
    }
    ended.push_back({subgraph, op, static_cast<int32_t>(open.size()), op_name});
  }
};

// Every float input element 1.
void fill_inputs(Interpreter& interpreter) {
  for (int i = 0; i < interpreter.input_count(); ++i) {
    Tensor* input = interpreter.input(i);
    for (int64_t k = 0; k < input->elements(); ++k) {
      if (input->type == TensorType::FLOAT32) input->f32()[k] = 1.f;
    }
  }
}

// Every test runs the real nested-WHILE model.
class OpProfilerTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(
        tools::load_model_file(test::model_path("litert_nested_while.tflite"), &loaded, &error))
        << error;
  }
  tools::LoadedModel loaded;
};

TEST_F(OpProfilerTest, HearsEveryOpNestedLikeTheControlFlow) {
  std::string error;
  tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;
  fill_inputs(runner.interpreter());
  Recorder recorder;
  runner.interpreter().set_profiler(&recorder);
  ASSERT_TRUE(runner.invoke(&error)) << error;
  EXPECT_EQ(recorder.nesting_errors, 0);
  EXPECT_TRUE(recorder.open.empty());

  // Top level: the main subgraph's ops, each once, in order.
  std::vector<int32_t> top;
  for (const auto& e : recorder.ended) {
    if (e.depth == 0) {
      EXPECT_EQ(e.subgraph, 0) << e.name;
      top.push_back(e.op);
    } else {
      EXPECT_NE(e.subgraph, 0) << e.name << ": a loop's op runs inside its WHILE";
    }
  }
  std::vector<int32_t> expected;
  for (int32_t o = 0; o < loaded.model.subgraph(0).operator_count; ++o) expected.push_back(o);
  EXPECT_EQ(top, expected);
  // The loops iterate: more ops ran than the model has, and an outer WHILE
  // ran its cond and body ops inside it.
  int model_ops = 0;
  for (int s = 0; s < loaded.model.subgraph_count(); ++s) {
    model_ops += loaded.model.subgraph(s).operator_count;
  }
  EXPECT_GT(static_cast<int>(recorder.ended.size()), model_ops);
  EXPECT_GT(recorder.max_children_of_while, 1);
  int deepest = 0;
  for (const auto& e : recorder.ended) deepest = std::max<int>(deepest, e.depth);
  EXPECT_GE(deepest, 2);  // the inner loop's ops sit inside two WHILE ops

  runner.interpreter().set_profiler(nullptr);
  const size_t heard = recorder.ended.size();
  ASSERT_TRUE(runner.invoke(&error)) << error;
  EXPECT_EQ(recorder.ended.size(), heard);
}

// begin_op returning false stops the run where it is (a caller's work budget or Stop button):
// invoke fails with kStopped naming the op, no later op runs, the stopped op gets no end_op
// while the loops around it still end theirs, and the next invoke runs whole again.
TEST_F(OpProfilerTest, BeginOpReturningFalseStopsTheRunAtThatOp) {
  std::string error;
  tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;
  struct StopAfter : Recorder {
    int budget = 0;
    int begun = 0;
    int32_t stopped_subgraph = -1, stopped_op = -1;
    bool begin_op(int32_t subgraph, int32_t op) override {
      if (begun++ == budget) {
        stopped_subgraph = subgraph;
        stopped_op = op;
        return false;
      }
      return Recorder::begin_op(subgraph, op);
    }
  } stopper;
  Recorder whole;
  runner.interpreter().set_profiler(&whole);
  fill_inputs(runner.interpreter());
  ASSERT_TRUE(runner.invoke(&error)) << error;
  const int all_ops = static_cast<int>(whole.ended.size());

  stopper.budget = all_ops / 2;  // inside a loop's body
  runner.interpreter().set_profiler(&stopper);
  fill_inputs(runner.interpreter());
  const Status stopped = runner.interpreter().invoke();
  EXPECT_EQ(stopped.code(), StatusCode::kStopped);
  ASSERT_GT(stopper.stopped_subgraph, 0) << "the stop should fall inside a loop";
  const std::string where = "subgraph " + std::to_string(stopper.stopped_subgraph) + " op " +
                            std::to_string(stopper.stopped_op);
  EXPECT_NE(std::string(stopped.message()).find(where), std::string::npos) << stopped.message();
  EXPECT_EQ(stopper.begun, stopper.budget + 1) << "no op may begin after the stop";
  EXPECT_EQ(stopper.nesting_errors, 0);
  EXPECT_TRUE(stopper.open.empty()) << "the loops around the stopped op end their pairs";
  EXPECT_LT(static_cast<int>(stopper.ended.size()), all_ops);

  runner.interpreter().set_profiler(&whole);
  whole.ended.clear();
  fill_inputs(runner.interpreter());
  ASSERT_TRUE(runner.invoke(&error)) << error;
  EXPECT_EQ(static_cast<int>(whole.ended.size()), all_ops);
}

// interpreter.h: the observer, profiler and op table are the caller's and are
// kept across prepare(); ModelRunner prepares twice (probe, then exact arena),
// so hooks set before it must survive both.
TEST_F(OpProfilerTest, HooksSetBeforePrepareSurviveIt) {
  std::string error;
  struct Observer : TrainingObserver {
  } observer;
  Recorder recorder;
  tools::ModelRunner runner;
  Interpreter& interpreter = runner.interpreter();
  interpreter.set_observer(&observer);
  interpreter.set_profiler(&recorder);
  interpreter.set_op_resolver(&all_ops());
  ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;
  EXPECT_EQ(interpreter.observer(), &observer);
  EXPECT_EQ(interpreter.profiler(), &recorder);
  EXPECT_EQ(interpreter.op_resolver(), &all_ops());
  fill_inputs(interpreter);
  ASSERT_TRUE(runner.invoke(&error)) << error;
  EXPECT_FALSE(recorder.ended.empty());
  EXPECT_EQ(recorder.nesting_errors, 0);

  // The op table is used, not just kept: one without the model's ops fails.
  const OpResolver nothing = {nullptr, 0, "none"};
  interpreter.set_op_resolver(&nothing);
  alignas(Interpreter::kAlignment) static uint8_t arena[1 << 16];
  EXPECT_FALSE(interpreter.prepare(loaded.model, arena, sizeof arena).ok());
  EXPECT_EQ(interpreter.op_resolver(), &nothing);
  EXPECT_EQ(interpreter.profiler(), &recorder);
  EXPECT_EQ(interpreter.observer(), &observer);
}

}  // namespace
}  // namespace gruwb
