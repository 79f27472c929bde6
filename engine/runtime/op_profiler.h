#pragma once
// Hears each op invoke runs, the ops of WHILE/IF/CALL_ONCE subgraphs
// included (their begin/end pairs nest inside the control-flow op's own):
// begin_op before the kernel's eval, end_op after it. The engine has no
// clock; a host profiler reads its own (`gruwb bench`'s per-op self times),
// a firmware one could read a cycle counter. Zero cost without one.
// begin_op may also stop the run by returning false (a caller's work or time
// budget, a Stop button): the op does not run and invoke (or the training
// step) returns kStopped naming it.

#include <cstdint>

namespace gruwb {

class OpProfiler {
 public:
  // False: stop here.
  virtual bool begin_op(int32_t subgraph, int32_t op) = 0;
  // `op_name`: the builtin name or custom code (OpView::name()).
  virtual void end_op(int32_t subgraph, int32_t op, const char* op_name) = 0;

 protected:
  // Not virtual: the engine never deletes profilers (no heap).
  ~OpProfiler() = default;
};

}  // namespace gruwb
