#pragma once
// The training plan of an interpreter prepared for training: which weights
// train (copied into the arena, with gradients and optimizer state), which
// ops lie on the gradient path (through WHILE bodies, to a fixed point), and
// the lifetimes of what backward reads and writes (activation gradients,
// tapes, backward scratch). The runtime's prepare() calls it through
// TrainingSteps (engine/runtime/interpreter.h), so the runtime links no
// training code; the trainer passes training_steps() in TrainingOptions.

#include <cstdint>

#include "engine/runtime/interpreter.h"

namespace gruwb {

// The steps of this file and engine/train/backprop.h, for TrainingOptions::steps.
const TrainingSteps& training_steps();

// A friend of Interpreter: fills its training tables during prepare().
struct TrainingPlan {
  // After the tensors are set up, before the kernels prepare: trainable
  // weights copied into persistent memory, the gradient path marked.
  static Status init_training(Interpreter& in);
  // After the forward lifetimes, before placement: what a backward step
  // reads lives until it runs; activation gradients, tapes and backward
  // scratch get their buffers and lifetimes.
  static void plan_training_lifetimes(Interpreter& in, uint32_t end_of_time);

 private:
  static void reset_training_marks(Interpreter& in, int subgraph);
  static Status mark_forward(Interpreter& in, int subgraph);
  static Status mark_forward_while(Interpreter& in, int subgraph, int op);
  static Status mark_body_forward(Interpreter& in, const OperatorView& op,
                                  const TensorTraining* loop_tensors, int body);
  static Status mark_backward(Interpreter& in, int subgraph);
  static Status mark_backward_while(Interpreter& in, int subgraph, int op);
  static bool has_trainable_weights(Interpreter& in, int subgraph);
};

}  // namespace gruwb
