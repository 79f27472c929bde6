#pragma once
// Optional training observer: the trainer and the backward kernels report
// what happens during training (loss per step, gradient statistics per
// weight, per-time-step gradient norms of recurrent states). Zero cost when
// unused: every call site checks a null pointer first, and the statistics are
// only computed when an observer is set.
//
// No heap and no RTTI: an observer is a plain object the caller owns; the
// engine only calls its virtual functions.

#include <cstdint>

namespace gruwb {

struct StepMetrics {
  int64_t step = 0;           // optimizer steps done, this one included
  float loss = 0.f;           // mean loss of the samples in this step
  float accuracy = 0.f;       // arg-max hits / samples (classification losses; else 0)
  int32_t samples = 0;        // samples in this step
  float gradient_norm = 0.f;  // global norm of the mean gradient, before clipping
  bool clipped = false;
};

// Statistics of one trainable weight's mean gradient (what the optimizer sees
// before clipping). The histogram has kBins equal bins over
// [-range, +range], range = max(|min|, |max|); with range 0 (all zeros)
// every element counts in bin kBins / 2.
struct GradientStats {
  static constexpr int kBins = 16;
  int64_t step = 0;
  int32_t weight = 0;  // index in Trainer::weight(i) order
  int32_t tensor = 0;  // interpreter's global tensor index
  const char* name = "";
  float norm = 0.f;
  float min = 0.f;
  float max = 0.f;
  float range = 0.f;
  uint32_t histogram[kBins] = {};
};

class TrainingObserver {
 public:
  virtual void on_step(const StepMetrics& metrics) { (void)metrics; }
  virtual void on_weight_gradient(const GradientStats& stats) { (void)stats; }
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
  ~TrainingObserver() = default;
};

}  // namespace gruwb
