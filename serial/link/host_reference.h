#pragma once
// The host's run of exactly what the board runs: same model bytes, dataset
// blob, settings and TrainingRun code, on the desktop CPU. Comparing the two
// is the "device equals host" check of `gruwb board train --compare-host`.
// (When the app's training session lands it can take this role.)

#include <cstdint>
#include <string>
#include <vector>

#include "serial/protocol/messages.h"

namespace gruwb::serial {

struct ReferenceRun {
  std::vector<Metric> metrics;   // the METRICs the board would push
  std::vector<uint8_t> weights;  // the DOWNLOAD blob after the run
  size_t arena_bytes = 0;
  size_t tape_bytes = 0;
  size_t weight_bytes = 0, gradient_bytes = 0, optimizer_bytes = 0;
};

bool run_on_host(const std::vector<uint8_t>& model, const std::vector<uint8_t>& dataset,
                 const TrainingSettings& settings, ReferenceRun* out, std::string* error);

// Largest relative difference |a-b| / max(|a|,|b|,floor) over two weight
// blobs of the same layout; false (with *error) when the layouts differ.
bool compare_weight_blobs(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                          double* max_relative, std::string* error, float floor = 1e-3f);

// Board vs host after the same training: the one rule `gruwb board train --compare-host` and
// the GUI's Board dock both judge by. Each board METRIC is matched with the host's at the same
// point of the run (epoch, samples into it); they agree when every epoch end of the host run has
// its board twin, losses and weights differ by at most kRunTolerance relative and accuracies by
// at most one sample: newlib's expf differs from glibc's in the last bit for some inputs
// (research/qemu-mcu.md), which can flip a near tie of class probabilities.
constexpr double kRunTolerance = 1e-4;
struct RunAgreement {
  size_t matched = 0;     // board metrics with a host twin
  size_t epoch_ends = 0;  // host epoch ends
  size_t epoch_ends_matched = 0;
  double loss = 0;           // largest relative difference of matched losses
  int accuracy_samples = 0;  // most samples classified differently in one matched metric
  double weights = 0;        // largest relative difference of the final weights
  bool agree = false;
  // "largest relative difference of losses 0, of weights 4.13e-05; accuracies 0 samples apart
  // over 1 metrics, 1 of 1 epoch ends (agree to 1e-4)"
  std::string summary() const;
};
bool compare_runs(const std::vector<Metric>& board, const std::vector<uint8_t>& board_weights,
                  const ReferenceRun& host, RunAgreement* out, std::string* error);

// Writes `weights` (a DOWNLOAD blob) into a copy of `model` (the uploaded
// .tflite/.circle bytes): each tensor's constant data is replaced in place.
bool apply_weight_blob(const std::vector<uint8_t>& model, const std::vector<uint8_t>& weights,
                       std::vector<uint8_t>* out, std::string* error);

// The board's BENCH run on this CPU: same model bytes, inputs from the same
// seed, the firmware's own code (run_inference_bench) timed by the steady
// clock; clock_hz stays 0. Its output is what the board's must equal.
bool bench_on_host(const std::vector<uint8_t>& model, const BenchRequest& request, BenchReply* out,
                   std::string* error);

// Compares the output the board sent with the host's: same type and size, and
// the carried FLOAT32 values' largest absolute difference (*identical: the
// whole outputs' CRC-32s agree). False with *error when they are not the
// same tensor at all.
bool compare_bench_outputs(const BenchReply& board, const BenchReply& host, double* max_difference,
                           bool* identical, std::string* error);

}  // namespace gruwb::serial
