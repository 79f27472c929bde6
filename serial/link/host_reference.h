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
