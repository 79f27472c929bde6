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

#include "engine/runtime/state_gradient_observer.h"

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

// on_state_gradient (per-time-step state gradients of recurrent ops) comes
// from engine/runtime/state_gradient_observer.h, the part the runtime calls.
class TrainingObserver : public StateGradientObserver {
 public:
  virtual void on_step(const StepMetrics& metrics) { (void)metrics; }
  virtual void on_weight_gradient(const GradientStats& stats) { (void)stats; }

 protected:
  // Not virtual: the engine never deletes observers (no heap).
  ~TrainingObserver() = default;
};

}  // namespace gruwb
