#pragma once
// One training run over an uploaded dataset, one sample per call, so the
// board's main loop can serve the serial link between samples. The samples go
// through the engine's epoch loop (engine/train/epoch_loop.h), the desktop's
// too, and the host runs this very code for its reference run ("same run on
// the host"), so device and host differ only by the CPU's float rounding.

#include <cstddef>
#include <cstdint>

#include "engine/train/epoch_loop.h"
#include "engine/train/trainer.h"
#include "serial/protocol/messages.h"

namespace gruwb::serial {

class TrainingRun {
 public:
  // `order` holds sample_count indices (the shuffled epoch order); caller-owned.
  Status begin(Trainer* trainer, const TrainingSettings& settings, const uint8_t* dataset,
               size_t dataset_bytes, uint32_t* order, uint32_t order_capacity);
  // Trains the next sample. *metric_due is set when `metric` holds a METRIC to
  // send (every settings.metric_every samples and at each epoch end).
  // `now_us` is the board clock, for samples/s.
  Status step(uint64_t now_us, Metric* metric, bool* metric_due);
  bool done() const { return loop_.done(); }
  uint32_t epoch() const { return loop_.epoch(); }
  uint32_t samples_in_epoch() const { return loop_.position(); }
  uint32_t sample_count() const { return sample_count_; }
  // Pause/resume: the clock stops counting while paused.
  void pause(uint64_t now_us);
  void resume(uint64_t now_us);

  // Run checkpoints (messages.h RunCheckpointHeader + the Trainer's own),
  // streamed in chunks with no buffer of their own (Trainer::read_checkpoint
  // and write_checkpoint): after a whole checkpoint is written and finished on
  // a run begun with the same settings, training continues bit-identically to
  // a run that never stopped. A write that stops part-way leaves the run half
  // restored; the caller must not train it.
  size_t checkpoint_bytes() const;
  Status read_checkpoint(size_t offset, uint8_t* out, size_t bytes);
  Status write_checkpoint(size_t offset, const uint8_t* data, size_t bytes);
  Status finish_checkpoint_write();

 private:
  Trainer* trainer_ = nullptr;
  TrainingSettings settings_;
  DatasetHeader header_;
  const uint8_t* samples_ = nullptr;
  uint32_t sample_count_ = 0;
  EpochLoop loop_;
  uint64_t epoch_start_us_ = 0;
  uint64_t run_start_us_ = 0;
  uint64_t paused_at_us_ = 0;
  bool started_clock_ = false;
  // A checkpoint being written: its run header, staged until finish.
  uint8_t checkpoint_header_[kRunCheckpointHeaderBytes] = {};
  size_t checkpoint_next_ = 0;
};

// The DOWNLOAD blob of a prepared trainer's weights (kWeightsMagic layout):
// its size, and `size` bytes of it starting at `offset`.
size_t weights_blob_bytes(Trainer& trainer);
size_t read_weights_blob(Trainer& trainer, size_t offset, uint8_t* out, size_t size);

}  // namespace gruwb::serial
