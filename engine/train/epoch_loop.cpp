#include "engine/train/epoch_loop.h"

#include "engine/train/pcg32.h"

namespace gruwb {

void epoch_order(uint64_t seed, uint32_t epoch, bool shuffle, uint32_t* order, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  if (!shuffle) return;
  Pcg32 rng(seed, static_cast<uint64_t>(epoch) + 1);
  for (uint32_t i = n; i > 1; --i) {
    const uint32_t j = rng.below(i);
    const uint32_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
}

void EpochLoop::begin(const EpochPlan& plan, uint32_t* order, uint32_t first_epoch) {
  plan_ = plan;
  if (plan_.samples == 0) plan_.epochs = 0;
  order_ = order;
  restore(first_epoch, 0, 0, 0.0);
}

void EpochLoop::restore(uint32_t epoch, uint32_t position, uint32_t hits, double loss_sum) {
  epoch_ = epoch;
  position_ = position;
  hits_ = hits;
  loss_sum_ = loss_sum;
  if (!done()) epoch_order(plan_.seed, epoch_, plan_.shuffle, order_, plan_.samples);
}

Status EpochLoop::accumulate(Trainer& trainer, int32_t true_class, EpochStep* step) {
  float loss = 0.f;
  GRUWB_RETURN_IF_ERROR(trainer.accumulate(&loss));
  // In training mode the outputs live to the end of backward: the forward
  // pass's prediction costs no second pass.
  step->loss = loss;
  step->predicted = trainer.predicted_class(0);
  step->correct = true_class >= 0 && step->predicted == true_class;
  loss_sum_ += loss;
  hits_ += step->correct ? 1 : 0;
  step->epoch = epoch_;
  step->samples = position_ + 1;
  step->loss_sum = loss_sum_;
  step->hits = hits_;
  step->epoch_end = step->samples == plan_.samples;
  step->update = step->epoch_end || trainer.pending_samples() >= plan_.batch_size;  // < 1: 1
  return Status();
}

uint32_t EpochLoop::pass_samples(const Trainer& trainer) const {
  const uint32_t batch = static_cast<uint32_t>(plan_.batch_size > 1 ? plan_.batch_size : 1);
  uint32_t count = batch - static_cast<uint32_t>(trainer.pending_samples()) % batch;
  const uint32_t rows = static_cast<uint32_t>(trainer.batch_rows());
  count = count < rows ? count : rows;
  const uint32_t left = plan_.samples - position_;
  return count < left ? count : left;
}

Status EpochLoop::accumulate_rows(Trainer& trainer, const int32_t* true_classes, uint32_t count,
                                  float* row_losses, EpochStep* steps) {
  GRUWB_RETURN_IF_ERROR(trainer.accumulate_rows(static_cast<int32_t>(count), row_losses));
  for (uint32_t k = 0; k < count; ++k) {
    EpochStep* step = &steps[k];
    step->loss = row_losses[k];
    step->predicted = trainer.predicted_class(k);
    step->correct = true_classes[k] >= 0 && step->predicted == true_classes[k];
    loss_sum_ += step->loss;
    hits_ += step->correct ? 1 : 0;
    step->epoch = epoch_;
    step->samples = position_ + k + 1;
    step->loss_sum = loss_sum_;
    step->hits = hits_;
    step->epoch_end = step->samples == plan_.samples;
    step->update =
        k + 1 == count && (step->epoch_end || trainer.pending_samples() >= plan_.batch_size);
  }
  position_ += count - 1;  // finish() of the last step moves past the pass
  return Status();
}

Status EpochLoop::finish(Trainer& trainer, EpochStep* step) {
  if (step->update) GRUWB_RETURN_IF_ERROR(trainer.apply_update());
  if (!step->epoch_end) {
    ++position_;
    return Status();
  }
  restore(epoch_ + 1, 0, 0, 0.0);
  return Status();
}

}  // namespace gruwb
