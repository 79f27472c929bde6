#pragma once
// The backward pass of an interpreter prepared for training
// (engine/train/training_plan.h planned it): the on-path ops' backward steps
// in reverse order, each activation gradient zeroed right before the first
// step that adds to it. Reached through Interpreter::backward() and the
// other TrainingSteps (engine/runtime/interpreter.h).

#include "engine/runtime/interpreter.h"

namespace gruwb {

// A friend of Interpreter: runs backward over its training tables.
struct Backprop {
  // Subgraph 0 after invoke(); the caller wrote the outputs' gradients.
  static Status backward(Interpreter& in);
  // A WHILE body's on-path ops in reverse order (WHILE's backward, per iteration).
  static Status backward_subgraph(Interpreter& in, int index);
  static void zero_activation_gradients(Interpreter& in, int index);
  static void zero_weight_gradients(Interpreter& in);
};

}  // namespace gruwb
