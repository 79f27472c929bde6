#pragma once
// What a control-flow kernel (WHILE, IF, CALL_ONCE) may do with the subgraphs
// it calls, instead of reaching into the whole Interpreter: prepare and invoke
// one, reach its tensors (its inputs and outputs by the model's lists), and,
// while training through a loop, the training context of its body (which
// values the loop's tape keeps, their gradients, the body's backward steps).
// OpContext::subgraphs() hands one out; it is a view, cheap to copy.

#include <cstdint>

#include "engine/model/model.h"
#include "engine/runtime/tensor.h"

namespace gruwb {

class Interpreter;

class SubgraphRunner {
 public:
  explicit SubgraphRunner(Interpreter* interpreter) : interpreter_(interpreter) {}

  const Model& model() const;
  // Prepares a called subgraph once (its input shapes set by the caller
  // first); a subgraph that calls itself fails.
  Status prepare(int subgraph);
  Status invoke(int subgraph);
  // A subgraph's tensor by its index in the file; its i-th input or output.
  Tensor& tensor(int subgraph, int32_t index) const;
  Tensor& input(int subgraph, int i) const;
  Tensor& output(int subgraph, int i) const;
  int tensor_count(int subgraph) const;

  // ---- Training through a loop (WHILE): its body's training context ----
  // Marks every activation an on-path op of `subgraph` reads or writes as
  // kept on the calling loop's tape (one copy per iteration), so the planner
  // gives it no memory of its own.
  void keep_on_tape(int subgraph);
  bool on_tape(int subgraph, int32_t tensor) const;
  // The gradient of one of the subgraph's tensors, or nullptr.
  Tensor* gradient(int subgraph, const Tensor* tensor) const;
  void zero_activation_gradients(int subgraph);
  // The subgraph's on-path ops' backward steps, in reverse order.
  Status backward(int subgraph);

 private:
  Interpreter* interpreter_;
};

}  // namespace gruwb
