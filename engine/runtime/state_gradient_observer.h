#pragma once
// The one training report the runtime itself makes: recurrent backward steps
// (through OpContext::report_state_gradient) hand per-time-step state
// gradient norms to it. engine/train/observer.h's TrainingObserver extends it
// with the trainer's reports; the runtime sees only this part.
//
// No heap and no RTTI: an observer is a plain object the caller owns; the
// engine only calls its virtual functions.

#include <cstdint>

namespace gruwb {

class StateGradientObserver {
 public:
  // A recurrent op (fused GRU/LSTM/RNN, or a WHILE loop carrying a state)
  // reports ||dL/dh_t|| for time step `step` (0 = first step of the
  // sequence) during backward; calls arrive in reverse time order.
  // `op` is the interpreter's global op index, `op_name` its builtin name.
  virtual void on_state_gradient(int32_t subgraph, int32_t op, const char* op_name, int32_t step,
                                 float norm) {
    (void)subgraph;
    (void)op;
    (void)op_name;
    (void)step;
    (void)norm;
  }

 protected:
  // Not virtual: the engine never deletes observers (no heap).
  ~StateGradientObserver() = default;
};

}  // namespace gruwb
