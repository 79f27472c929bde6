#include "serial/firmware/training_run.h"

#include <cstring>

namespace gruwb::serial {

Status TrainingRun::begin(Trainer* trainer, const TrainingSettings& settings,
                          const uint8_t* dataset, size_t dataset_bytes, uint32_t* order,
                          uint32_t order_capacity) {
  if (!read_dataset_header(dataset, dataset_bytes, &header_)) {
    return Status::error(
        StatusCode::kInvalidArgument,
        "dataset: not a GWDS blob or its size (%u bytes) does not match its header",
        static_cast<unsigned>(dataset_bytes));
  }
  sample_count_ = header_.sample_count;
  if (settings.sample_limit > 0 && settings.sample_limit < sample_count_) {
    sample_count_ = settings.sample_limit;
  }
  if (sample_count_ == 0) return Status::error(StatusCode::kInvalidArgument, "dataset: no samples");
  if (order_capacity < sample_count_) {
    return Status::error(StatusCode::kOutOfMemory, "training order: %u samples, room for %u",
                         static_cast<unsigned>(sample_count_),
                         static_cast<unsigned>(order_capacity));
  }
  Tensor* input = trainer->input(0);
  if (trainer->input_count() != 1 || input->elements() != header_.input_elements) {
    return Status::error(StatusCode::kInvalidArgument,
                         "dataset: %u input values per sample, the model's input '%s' takes %lld",
                         static_cast<unsigned>(header_.input_elements), input->name,
                         static_cast<long long>(input->elements()));
  }
  const bool sparse = settings.config.loss == Loss::kSparseCategoricalCrossEntropy;
  const int64_t labels_needed = sparse ? 1 : header_.classes;
  if (trainer->label_count() != labels_needed) {
    return Status::error(StatusCode::kInvalidArgument,
                         "dataset: %u classes, the model's output '%s' takes %lld label values",
                         static_cast<unsigned>(header_.classes), trainer->output()->name,
                         static_cast<long long>(trainer->label_count()));
  }
  EpochPlan plan;
  plan.samples = sample_count_;
  plan.epochs = settings.epochs;
  plan.batch_size = settings.config.batch_size;
  plan.seed = settings.seed;
  plan.shuffle = settings.shuffle != 0;
  loop_.begin(plan, order);
  trainer_ = trainer;
  settings_ = settings;
  samples_ = dataset + kDatasetHeaderBytes;
  started_clock_ = false;
  return Status();
}

void TrainingRun::pause(uint64_t now_us) { paused_at_us_ = now_us; }

void TrainingRun::resume(uint64_t now_us) {
  if (!started_clock_) return;
  const uint64_t paused = now_us - paused_at_us_;
  epoch_start_us_ += paused;
  run_start_us_ += paused;
}

Status TrainingRun::step(uint64_t now_us, Metric* metric, bool* metric_due) {
  *metric_due = false;
  if (done()) return Status();
  if (!started_clock_) {
    run_start_us_ = epoch_start_us_ = now_us;
    started_clock_ = true;
  }
  const uint32_t index = loop_.sample();
  const uint8_t* sample = samples_ + header_.sample_bytes() * index;
  memcpy(trainer_->input(0)->data, sample, header_.input_elements * sizeof(float));
  uint32_t label;
  memcpy(&label, sample + header_.input_elements * sizeof(float), sizeof label);
  if (label >= header_.classes) {
    return Status::error(StatusCode::kInvalidArgument, "dataset: sample %u has class %u of %u",
                         static_cast<unsigned>(index), static_cast<unsigned>(label),
                         static_cast<unsigned>(header_.classes));
  }
  float* labels = trainer_->label();
  if (settings_.config.loss == Loss::kSparseCategoricalCrossEntropy) {
    labels[0] = static_cast<float>(label);
  } else {
    for (uint32_t c = 0; c < header_.classes; ++c) labels[c] = c == label ? 1.f : 0.f;
  }
  EpochStep s;
  GRUWB_RETURN_IF_ERROR(loop_.accumulate(*trainer_, static_cast<int32_t>(label), &s));
  GRUWB_RETURN_IF_ERROR(loop_.finish(*trainer_, &s));
  if (s.epoch_end || (settings_.metric_every > 0 && s.samples % settings_.metric_every == 0)) {
    const uint64_t elapsed = now_us - epoch_start_us_;
    metric->epoch = s.epoch;
    metric->step = static_cast<uint32_t>(trainer_->step());
    metric->samples = s.samples;
    metric->epoch_samples = sample_count_;
    metric->loss = s.mean_loss();
    metric->accuracy = s.accuracy();
    metric->samples_per_second =
        elapsed > 0 ? static_cast<float>(s.samples * 1e6 / static_cast<double>(elapsed)) : 0.f;
    metric->elapsed_ms = static_cast<uint32_t>((now_us - run_start_us_) / 1000);
    metric->flags = s.epoch_end ? kMetricEpochEnd : 0;
    if (s.epoch_end && done()) metric->flags |= kMetricRunDone;
    *metric_due = true;
  }
  if (s.epoch_end) epoch_start_us_ = now_us;
  return Status();
}

size_t TrainingRun::checkpoint_bytes() const {
  return trainer_ ? kRunCheckpointHeaderBytes + trainer_->checkpoint_bytes() : 0;
}

Status TrainingRun::read_checkpoint(size_t offset, uint8_t* out, size_t bytes) {
  if (!trainer_) return Status::error(StatusCode::kInvalidArgument, "checkpoint: no run begun");
  if (offset < kRunCheckpointHeaderBytes && bytes > 0) {
    RunCheckpointHeader header;
    header.epoch = loop_.epoch();
    header.position = loop_.position();
    header.correct = loop_.hits();
    header.loss_sum = loop_.loss_sum();
    header.step = static_cast<uint32_t>(trainer_->step());
    header.trainer_bytes = static_cast<uint32_t>(trainer_->checkpoint_bytes());
    uint8_t wire[kRunCheckpointHeaderBytes];
    WireWriter w(wire, sizeof wire);
    header.write(w);
    size_t n = kRunCheckpointHeaderBytes - offset;
    n = n < bytes ? n : bytes;
    memcpy(out, wire + offset, n);
    out += n;
    offset += n;
    bytes -= n;
  }
  if (bytes == 0) return Status();
  return trainer_->read_checkpoint(offset - kRunCheckpointHeaderBytes, out, bytes);
}

Status TrainingRun::write_checkpoint(size_t offset, const uint8_t* data, size_t bytes) {
  if (!trainer_) return Status::error(StatusCode::kInvalidArgument, "checkpoint: no run begun");
  if (offset == 0) checkpoint_next_ = 0;  // a new write starts over
  if (offset != checkpoint_next_) {
    return Status::error(StatusCode::kInvalidArgument,
                         "run checkpoint chunk at byte %u, byte %u expected (chunks go in "
                         "order, the header first)",
                         static_cast<unsigned>(offset), static_cast<unsigned>(checkpoint_next_));
  }
  if (offset < kRunCheckpointHeaderBytes && bytes > 0) {
    size_t n = kRunCheckpointHeaderBytes - offset;
    n = n < bytes ? n : bytes;
    memcpy(checkpoint_header_ + offset, data, n);
    data += n;
    offset += n;
    bytes -= n;
    checkpoint_next_ = offset;
    if (offset == kRunCheckpointHeaderBytes) {
      RunCheckpointHeader header;
      WireReader r(checkpoint_header_, kRunCheckpointHeaderBytes);
      Status s;
      if (!header.read(r)) {
        s = Status::error(StatusCode::kInvalidArgument, "not a run checkpoint (no GWRC header)");
      } else if (header.trainer_bytes != trainer_->checkpoint_bytes()) {
        s = Status::error(StatusCode::kInvalidArgument,
                          "run checkpoint announces %u trainer bytes, this run's are %u",
                          static_cast<unsigned>(header.trainer_bytes),
                          static_cast<unsigned>(trainer_->checkpoint_bytes()));
      } else if (header.epoch >= settings_.epochs || header.position >= sample_count_) {
        s = Status::error(
            StatusCode::kInvalidArgument,
            "run checkpoint at epoch %u sample %u is outside this run (%u epochs of "
            "%u samples)",
            static_cast<unsigned>(header.epoch), static_cast<unsigned>(header.position),
            static_cast<unsigned>(settings_.epochs), static_cast<unsigned>(sample_count_));
      }
      if (!s.ok()) {
        checkpoint_next_ = 0;
        return s;
      }
    }
  }
  if (bytes == 0) return Status();
  const Status s = trainer_->write_checkpoint(offset - kRunCheckpointHeaderBytes, data, bytes);
  checkpoint_next_ = s.ok() ? offset + bytes : 0;
  return s;
}

Status TrainingRun::finish_checkpoint_write() {
  if (!trainer_) return Status::error(StatusCode::kInvalidArgument, "checkpoint: no run begun");
  if (checkpoint_next_ != checkpoint_bytes()) {
    return Status::error(
        StatusCode::kInvalidArgument, "run checkpoint write stopped at byte %u of %u",
        static_cast<unsigned>(checkpoint_next_), static_cast<unsigned>(checkpoint_bytes()));
  }
  GRUWB_RETURN_IF_ERROR(trainer_->finish_checkpoint_write());
  RunCheckpointHeader header;
  WireReader r(checkpoint_header_, kRunCheckpointHeaderBytes);
  header.read(r);
  checkpoint_next_ = 0;
  // The epoch's order is a function of (seed, epoch): recomputed.
  loop_.restore(header.epoch, header.position, header.correct, header.loss_sum);
  started_clock_ = false;
  return Status();
}

size_t weights_blob_bytes(Trainer& trainer) {
  size_t bytes = 8;
  for (int i = 0; i < trainer.weight_count(); ++i) bytes += 8 + trainer.weight(i)->bytes;
  return bytes;
}

// Walks the blob's pieces (header, then per weight its 8-byte header and its
// data) and copies the part of each that overlaps [offset, offset + size).
size_t read_weights_blob(Trainer& trainer, size_t offset, uint8_t* out, size_t size) {
  size_t written = 0;
  size_t at = 0;  // blob offset of the current piece
  const auto piece = [&](const uint8_t* data, size_t bytes) {
    if (offset < at + bytes && offset + size > at) {
      const size_t from = offset > at ? offset - at : 0;
      const size_t to = offset + size < at + bytes ? offset + size - at : bytes;
      memcpy(out + (at + from - offset), data + from, to - from);
      written += to - from;
    }
    at += bytes;
  };
  uint8_t head[8];
  WireWriter w(head, sizeof head);
  w.u32(kWeightsMagic);
  w.u32(static_cast<uint32_t>(trainer.weight_count()));
  piece(head, 8);
  for (int i = 0; i < trainer.weight_count(); ++i) {
    const Tensor* t = trainer.weight(i);
    WireWriter h(head, sizeof head);
    h.u32(static_cast<uint32_t>(trainer.weight_tensor_index(i)));
    h.u32(static_cast<uint32_t>(t->bytes));
    piece(head, 8);
    piece(static_cast<const uint8_t*>(t->data), t->bytes);
  }
  return written;
}

}  // namespace gruwb::serial
