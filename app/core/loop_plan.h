#pragma once
// Loops at fused speed: the one place that decides which form of a model the host runs,
// benchmarks and trains. A WHILE-loop or unrolled RNN model (as TensorFlow's converter writes
// them) runs as the fuser's rewrite of it (engine/tools/fuser.h: one fused op per cell) when that
// rewrite's outputs agree with the file's own on a check input; otherwise, or when asked
// (`--as-written`, LoopPlanOptions::fuse_loops = false), the file runs as written. `gruwb run`,
// `bench`, `train` and `experiment` (through run_model, bench_model and TrainingSession) and the
// GUI call plan_loops; board uploads never do (a board runs the file it is given).
// docs/fuser.md#loops-at-fused-speed.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gruwb::tools {
class JsonWriter;
}

namespace gruwb::app {

// Agreement of the two forms on the check input: max |fused - file| over every float output,
// relative to max(1, max |file output|). The two forms compute the same sums in another order
// (the per-gate products become two fused products), so they differ by float rounding only:
// 0 to 1.5e-8 on the WHILE models here; a wrong gate order, bias or state would differ
// by 1e-3 or more. 1e-5 is the fuser's own tolerance, made relative for outputs that are not
// bounded (audio, regression).
constexpr double kLoopPlanTolerance = 1e-5;

struct LoopPlanOptions {
  bool fuse_loops = true;  // false: the file as written (--as-written)
  // Test hook: sees the fused form before the agreement check (a test alters a weight so the
  // check must refuse it); null in every real caller.
  std::function<void(std::vector<uint8_t>* fused)> before_check;
};

struct LoopPlan {
  std::vector<uint8_t> bytes;  // the form to run: the fused rewrite, or the file's own bytes
  bool fused = false;
  int fused_loops = 0;      // WHILE loops the fused form replaces
  int fused_chains = 0;     // unrolled chains the fused form replaces
  double difference = 0.0;  // the agreement check's (relative, see kLoopPlanTolerance)
  // One line for the user: which form runs and why ("" when the model has no recurrent cell the
  // fuser rewrites, or fuse_loops is off).
  std::string note;
  // When fused: "the fused form of 1 WHILE loop (outputs agree within 1.5e-08)", for lines that
  // say what else happens to it (training).
  std::string fused_form;
};

// Never fails: anything that keeps the fused form from running (no cell, a rewrite the engine
// cannot prepare, outputs that disagree) leaves the file as written, the note saying why when
// cells were fused but not kept (a file that does not load is returned as it is).
LoopPlan plan_loops(const std::vector<uint8_t>& file, const LoopPlanOptions& options = {});

// "plan": {form: "fused"|"as written", fused_loops, fused_chains, difference, note}: the one JSON
// form of a plan (run, bench).
void write_loop_plan(tools::JsonWriter& json, const LoopPlan& plan);

}  // namespace gruwb::app
