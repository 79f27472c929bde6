#pragma once
// The epoch loop every training host runs: the desktop's TrainingSession, the
// board's TrainingRun and the host's reference run of it. It owns what makes
// two runs of the same settings one run: each epoch's sample order (PCG32),
// when the optimizer steps (every batch_size samples, and at the epoch end for
// the partial batch, as Keras does), and what an epoch's loss and accuracy are
// (means over its samples as they were trained: the loss of each sample's
// forward pass, and the share whose forward pass put the true class first).
// The caller writes each sample into the trainer's input and label; the order
// is the caller's memory (no heap). docs/training-design.md.
//
//   EpochLoop loop;
//   loop.begin(plan, order);
//   while (!loop.done()) {
//     write sample loop.sample() into trainer.input(0) and trainer.label();
//     EpochStep step;
//     loop.accumulate(trainer, true_class, &step);  // forward, loss, backward
//     ... (step.update: the accumulated gradients are about to be applied)
//     loop.finish(trainer, &step);                  // the update when due; next sample
//   }

#include <cstdint>

#include "engine/train/trainer.h"

namespace gruwb {

struct EpochPlan {
  uint32_t samples = 0;  // per epoch
  uint32_t epochs = 0;
  int32_t batch_size = 1;  // < 1 counts as 1
  uint64_t seed = 1;
  bool shuffle = true;
};

// Epoch `epoch`'s (0-based) order of n samples: 0..n-1, then with `shuffle`
// Fisher-Yates driven by Pcg32(seed, stream epoch + 1), unbiased bounded draws.
void epoch_order(uint64_t seed, uint32_t epoch, bool shuffle, uint32_t* order, uint32_t n);

// One sample's step and the epoch's figures after it.
struct EpochStep {
  float loss = 0.f;        // this sample's
  int32_t predicted = -1;  // arg-max of the forward pass's output row 0
  bool correct = false;    // predicted == the true class
  bool update = false;     // finish() applies the accumulated gradients
  bool epoch_end = false;  // the sample is the epoch's last
  uint32_t epoch = 0;      // 0-based, the sample's epoch
  uint32_t samples = 0;    // of the epoch trained, this one included
  double loss_sum = 0.0;   // over those samples
  uint32_t hits = 0;       // of them classified right
  float mean_loss() const { return samples ? static_cast<float>(loss_sum / samples) : 0.f; }
  float accuracy() const {
    return samples ? static_cast<float>(hits) / static_cast<float>(samples) : 0.f;
  }
};

class EpochLoop {
 public:
  // Starts at sample 0 of epoch `first_epoch` (a resumed run). `order` must
  // hold plan.samples indices (the caller checks its room and the data; a
  // plan without samples is done at once).
  void begin(const EpochPlan& plan, uint32_t* order, uint32_t first_epoch = 0);
  bool done() const { return epoch_ >= plan_.epochs; }
  uint32_t epoch() const { return epoch_; }
  uint32_t position() const { return position_; }        // samples of the epoch trained
  uint32_t sample() const { return order_[position_]; }  // the dataset index to write next
  double loss_sum() const { return loss_sum_; }
  uint32_t hits() const { return hits_; }

  // Trains the sample the caller wrote (Trainer::accumulate) and counts its
  // loss and, for true_class >= 0, whether it was classified right.
  Status accumulate(Trainer& trainer, int32_t true_class, EpochStep* step);
  // Applies the update when step->update, moves on to the next sample (at an
  // epoch end, to the next epoch and its order).
  Status finish(Trainer& trainer, EpochStep* step);

  // Batched passes (Trainer::batch_rows() > 1, hosts): the samples the next
  // pass takes, to the end of the batch or of the epoch, whichever is first;
  // sample_at(k) is the dataset index to write into row k.
  uint32_t pass_samples(const Trainer& trainer) const;
  uint32_t sample_at(uint32_t k) const { return order_[position_ + k]; }
  // Trains rows 0..count-1 (count = pass_samples()) in one pass and fills
  // steps[k] as accumulate() would for each of those samples in turn, so the
  // epoch's figures are the per-sample ones; the last step's finish() applies
  // the update and moves past them all.
  Status accumulate_rows(Trainer& trainer, const int32_t* true_classes, uint32_t count,
                         float* row_losses, EpochStep* steps);
  // Continues a run at (epoch, position) with the epoch's sums so far (a
  // checkpoint); the order is recomputed.
  void restore(uint32_t epoch, uint32_t position, uint32_t hits, double loss_sum);

 private:
  EpochPlan plan_;
  uint32_t* order_ = nullptr;
  uint32_t epoch_ = 0;
  uint32_t position_ = 0;
  double loss_sum_ = 0.0;
  uint32_t hits_ = 0;
};

}  // namespace gruwb
