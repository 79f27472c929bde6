#include "engine/train/trainer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "engine/runtime/float_mode.h"
#include "engine/train/loss_output.h"
#include "engine/train/observer.h"
#include "engine/train/training_plan.h"

namespace gruwb {
namespace {

size_t align_up(size_t n) {
  return (n + Interpreter::kAlignment - 1) & ~(Interpreter::kAlignment - 1);
}

// Which inputs of a layer op are its weights: the kernel list says
// (KernelRegistration::weight_inputs).
bool is_weight_input(const OperatorView& op, int input) {
  return is_weight_input(find_kernel(op.op_code, op.custom_code), input);
}

bool is_float_weight(const SubgraphView& sg, int32_t t) {
  if (t < 0) return false;
  TensorView view = sg.tensor(t);
  return view.type == TensorType::FLOAT32 && view.is_constant() && !view.is_variable;
}

// A trainable layer: an op owning at least one constant float weight.
bool is_layer(const SubgraphView& sg, const OperatorView& op) {
  for (size_t i = 0; i < op.inputs.size; ++i) {
    if (is_weight_input(op, static_cast<int>(i)) && is_float_weight(sg, op.inputs[i])) return true;
  }
  return false;
}

}  // namespace

bool parse_trainable_scope(const char* text, TrainingConfig* config) {
  if (!text) return false;
  if (strcmp(text, "fc") == 0) {
    config->scope = TrainableScope::kFc;
    return true;
  }
  if (strcmp(text, "all") == 0) {
    config->scope = TrainableScope::kAll;
    return true;
  }
  if (strncmp(text, "last:", 5) == 0) {
    char* end = nullptr;
    long n = strtol(text + 5, &end, 10);
    if (end == text + 5 || *end != '\0' || n < 1 || n > 1000000) return false;
    config->scope = TrainableScope::kLastN;
    config->last_n = static_cast<int32_t>(n);
    return true;
  }
  return false;
}

namespace {

int first_tensor_of(const Model& model, int subgraph) {
  int first = 0;
  for (int s = 0; s < subgraph; ++s) first += model.subgraph(s).tensor_count;
  return first;
}

int total_tensors_of(const Model& model) { return first_tensor_of(model, model.subgraph_count()); }

bool is_while_op(const OperatorView& op) {
  return op.op_code == static_cast<int32_t>(BuiltinOperator::WHILE);
}

// The body of a WHILE holding trainable layers (a converter-made RNN), or -1.
int layer_body(const Model& model, const OperatorView& op) {
  if (!is_while_op(op)) return -1;
  const auto* options = op.options<fb::WhileOptions>();
  if (!options) return -1;
  SubgraphView body = model.subgraph(options->body_subgraph_index());
  for (int o = 0; o < body.operator_count; ++o) {
    if (is_layer(body, body.op(o))) return body.index;
  }
  return -1;
}

// The producer of tensor `t` in `sg` (-1 for inputs and constants).
int producer_of(const SubgraphView& sg, int32_t t) {
  for (int o = 0; o < sg.operator_count; ++o) {
    const OperatorView op = sg.op(o);
    for (size_t k = 0; k < op.outputs.size; ++k) {
      if (op.outputs[k] == t) return o;
    }
  }
  return -1;
}

// A converter's bias added on its own: ADD(products, b) with b a constant float vector of the
// products' width, where the products are FULLY_CONNECTED outputs or sums of them (the
// converter's LSTM writes FC(x) + FC(h) -> ADD -> ADD(bias)). It trains with the layer.
int32_t separate_bias(const SubgraphView& sg, const OperatorView& op) {
  if (op.op_code != static_cast<int32_t>(BuiltinOperator::ADD) || op.inputs.size != 2) return -1;
  for (int side = 0; side < 2; ++side) {
    const int32_t bias = op.inputs[side], other = op.inputs[1 - side];
    if (!is_float_weight(sg, bias) || other < 0) continue;
    const TensorView b = sg.tensor(bias);
    if (b.shape.size != 1 || b.shape[0] < 2) continue;
    int p = producer_of(sg, other);
    for (int hops = 0; p >= 0 && hops < sg.operator_count &&  // bounded: a hostile file may loop
                       sg.op(p).op_code == static_cast<int32_t>(BuiltinOperator::ADD);
         ++hops) {
      p = sg.op(p).inputs.size ? producer_of(sg, sg.op(p).inputs[0]) : -1;
    }
    if (p >= 0 && sg.op(p).op_code == static_cast<int32_t>(BuiltinOperator::FULLY_CONNECTED)) {
      return bias;
    }
  }
  return -1;
}

// Flags the weights of one layer: an op of subgraph `sg`, or every layer op
// of a WHILE's body (with the biases the converter adds on their own).
void flag_layer(const Model& model, const SubgraphView& sg, const OperatorView& op,
                uint8_t* flags) {
  const int body = layer_body(model, op);
  if (body >= 0) {
    SubgraphView b = model.subgraph(body);
    const int first = first_tensor_of(model, body);
    for (int o = 0; o < b.operator_count; ++o) {
      flag_layer(model, b, b.op(o), flags);
      const int32_t bias = separate_bias(b, b.op(o));
      if (bias >= 0) flags[first + bias] = 1;
    }
    return;
  }
  const int first = first_tensor_of(model, sg.index);
  for (size_t i = 0; i < op.inputs.size; ++i) {
    if (is_weight_input(op, static_cast<int>(i)) && is_float_weight(sg, op.inputs[i])) {
      flags[first + op.inputs[i]] = 1;
    }
  }
}

}  // namespace

// Layers in execution order: the ops of subgraph 0 owning float weights,
// and each WHILE whose body holds such ops counted as ONE layer (the RNN it
// spells out), so last:N means the same in the fused and the loop form.
Status Trainer::resolve_scope(const Model& model, uint8_t* flags) {
  SubgraphView sg = model.subgraph(0);
  const TrainingConfig& c = config_;
  if (c.scope == TrainableScope::kNames) {
    for (int32_t n = 0; n < c.name_count; ++n) {
      int found = -1;
      int found_subgraph = 0;
      for (int s = 0; s < model.subgraph_count() && found < 0; ++s) {
        SubgraphView view = model.subgraph(s);
        for (int t = 0; t < view.tensor_count && found < 0; ++t) {
          if (strcmp(view.tensor(t).name, c.names[n]) == 0) {
            found = t;
            found_subgraph = s;
          }
        }
      }
      if (found < 0) {
        return Status::error(StatusCode::kInvalidArgument, "no tensor named '%s' to train",
                             c.names[n]);
      }
      if (!is_float_weight(model.subgraph(found_subgraph), found)) {
        return Status::error(StatusCode::kInvalidArgument,
                             "tensor %d '%s' of subgraph %d is not a constant float32 weight: it "
                             "cannot be trained",
                             found, c.names[n], found_subgraph);
      }
      flags[first_tensor_of(model, found_subgraph) + found] = 1;
    }
    return Status();
  }
  int layers = 0;
  int last_fc = -1;
  for (int o = 0; o < sg.operator_count; ++o) {
    OperatorView op = sg.op(o);
    if (is_layer(sg, op) || layer_body(model, op) >= 0) ++layers;
    if (op.op_code == static_cast<int32_t>(BuiltinOperator::FULLY_CONNECTED) && is_layer(sg, op)) {
      last_fc = o;
    }
  }
  if (c.scope == TrainableScope::kFc && last_fc < 0) {
    return Status::error(StatusCode::kInvalidArgument,
                         "trainable scope 'fc': subgraph 0 has no FULLY_CONNECTED with float "
                         "weights");
  }
  if (c.scope == TrainableScope::kLastN && c.last_n < 1) {
    return Status::error(StatusCode::kInvalidArgument, "trainable scope last:%d (N >= 1)",
                         static_cast<int>(c.last_n));
  }
  int layer = 0;
  for (int o = 0; o < sg.operator_count; ++o) {
    OperatorView op = sg.op(o);
    if (!is_layer(sg, op) && layer_body(model, op) < 0) continue;
    ++layer;
    bool take = c.scope == TrainableScope::kAll ||
                (c.scope == TrainableScope::kFc && o == last_fc) ||
                (c.scope == TrainableScope::kLastN && layer > layers - c.last_n);
    if (take) flag_layer(model, sg, op, flags);
  }
  return Status();
}

Status Trainer::prepare(const Model& model, const TrainingConfig& config, uint8_t* arena,
                        size_t arena_bytes) {
  // The observer and its hooks stay (not through set_observer, which would
  // link the hooks into every build).
  TrainingObserver* observer = observer_;
  void (*observe_sample)(Trainer&) = observe_sample_;
  void (*observe_step)(Trainer&, double, bool, float) = observe_step_;
  *this = Trainer();
  observer_ = observer;
  observe_sample_ = observe_sample;
  observe_step_ = observe_step;
  interpreter_.set_observer(observer);
  config_ = config;
  if (!model.table()) return Status::error(StatusCode::kInvalidArgument, "model is not loaded");
  if (config.batch_size < 1) {
    return Status::error(StatusCode::kInvalidArgument, "batch size %d (>= 1)",
                         static_cast<int>(config.batch_size));
  }
  if (!(config.learning_rate > 0.f)) {
    return Status::error(StatusCode::kInvalidArgument, "learning rate must be > 0");
  }
  if (!arena || (reinterpret_cast<uintptr_t>(arena) & (Interpreter::kAlignment - 1)) != 0) {
    return Status::error(StatusCode::kInvalidArgument, "arena must be %u-byte aligned",
                         static_cast<unsigned>(Interpreter::kAlignment));
  }
  SubgraphView sg = model.subgraph(0);
  if (sg.inputs.empty()) {
    return Status::error(StatusCode::kInvalidModel,
                         "the main subgraph has no inputs: nothing to train on");
  }
  LossOutputRequest loss_output;
  loss_output.index = config.loss_output;
  GRUWB_RETURN_IF_ERROR(choose_loss_output(model, loss_output, &loss_output_));
  const int32_t loss_tensor = sg.outputs[static_cast<size_t>(loss_output_)];
  // The trainable flags sit at the arena start; the labels go after the
  // interpreter's memory once the output's shape is known.
  const int total_tensors = total_tensors_of(model);
  const size_t flag_bytes = align_up(static_cast<size_t>(total_tensors));
  head_bytes_ = flag_bytes;
  if (head_bytes_ > arena_bytes) {
    return Status::error(StatusCode::kOutOfMemory,
                         "arena of %u bytes is too small for the trainer's %u bytes of flags",
                         static_cast<unsigned>(arena_bytes), static_cast<unsigned>(head_bytes_));
  }
  uint8_t* flags = arena;
  memset(flags, 0, flag_bytes);
  GRUWB_RETURN_IF_ERROR(resolve_scope(model, flags));
  for (int t = 0; t < total_tensors; ++t) {
    if (!flags[t]) continue;
    if (trainable_count_ == kMaxTrainable) {
      return Status::error(StatusCode::kUnsupported, "more than %d trainable weight tensors",
                           kMaxTrainable);
    }
    trainable_[trainable_count_++] = t;
  }
  TrainingOptions options;
  options.steps = &training_steps();
  options.trainable = flags;
  options.optimizer_slots =
      config.optimizer == Optimizer::kAdam ? 2 : (config.momentum > 0.f ? 1 : 0);
  options.input_gradients = config.input_gradients;
  // CE after a SOFTMAX: the gradient w.r.t. the logits is p - y (stable).
  const bool ce = config.loss == Loss::kCategoricalCrossEntropy ||
                  config.loss == Loss::kSparseCategoricalCrossEntropy;
  for (int o = 0; o < sg.operator_count && ce; ++o) {
    OperatorView op = sg.op(o);
    if (op.outputs.size != 1 || op.outputs[0] != loss_tensor) continue;
    if (op.op_code != static_cast<int32_t>(BuiltinOperator::SOFTMAX)) break;
    const int32_t logits = op.inputs[0];
    int readers = 0;
    for (int p = 0; p < sg.operator_count; ++p) {
      for (int32_t t : sg.op(p).inputs) readers += t == logits ? 1 : 0;
    }
    bool logits_is_output = false;
    for (int32_t t : sg.outputs) logits_is_output |= t == logits;
    if (readers == 1 && !logits_is_output) options.loss_op = o;
    break;
  }
  // One-pass batches: the model takes B rows at once when its input has a
  // batch dimension of 1 and the shapes propagate to an output of B rows
  // (fused models); otherwise B single samples accumulate.
  batch_rows_ = 1;
  TensorView first_input = sg.tensor(sg.inputs[0]);
  if (config.one_pass_batches && config.batch_size > 1 && first_input.shape.size > 0 &&
      first_input.shape[0] == 1) {
    options.input_batch = config.batch_size;
    Status batched =
        interpreter_.prepare(model, arena + head_bytes_, arena_bytes - head_bytes_, &options);
    TensorView file_output = sg.tensor(loss_tensor);
    bool rows_ok = batched.ok();
    if (rows_ok) {
      const Tensor* out = interpreter_.output(loss_output_);
      rows_ok = out->shape.rank == static_cast<int32_t>(file_output.shape.size) &&
                out->shape.rank > 0 && out->shape.dims[0] == config.batch_size;
      for (int32_t d = 1; rows_ok && d < out->shape.rank; ++d) {
        rows_ok = out->shape.dims[d] == file_output.shape[static_cast<size_t>(d)];
      }
      for (int i = 1; rows_ok && i < interpreter_.input_count(); ++i) {
        rows_ok = interpreter_.input(i)->shape.rank == 0 ||
                  interpreter_.input(i)->shape.dims[0] == config.batch_size;
      }
    }
    if (rows_ok) {
      batch_rows_ = config.batch_size;
    } else if (batched.code() == StatusCode::kOutOfMemory) {
      return batched;  // the caller sizes the arena for the batched plan
    }
  }
  if (batch_rows_ == 1) {
    options.input_batch = 0;
    GRUWB_RETURN_IF_ERROR(
        interpreter_.prepare(model, arena + head_bytes_, arena_bytes - head_bytes_, &options));
  }

  Tensor* out = interpreter_.output(loss_output_);
  if (out->type != TensorType::FLOAT32) {
    return Status::error(StatusCode::kUnsupported, "output '%s' is %s: losses need float32",
                         out->name, tensor_type_name(out->type));
  }
  label_count_ = out->elements();
  label_bytes_ = align_up(sizeof(float) * static_cast<size_t>(label_count_));
  const size_t label_offset = head_bytes_ + interpreter_.arena_bytes_needed();
  if (label_offset + label_bytes_ > arena_bytes) {
    return Status::error(
        StatusCode::kOutOfMemory, "arena of %u bytes is too small: training needs %u bytes",
        static_cast<unsigned>(arena_bytes), static_cast<unsigned>(label_offset + label_bytes_));
  }
  label_ = reinterpret_cast<float*>(arena + label_offset);
  memset(label_, 0, label_bytes_);
  classes_ = out->shape.rank > 0 ? out->shape.dims[out->shape.rank - 1] : 1;
  rows_ = classes_ > 0 ? label_count_ / classes_ : 0;
  active_rows_ = rows_;
  if (config.loss == Loss::kSparseCategoricalCrossEntropy) label_count_ = rows_;

  OpTraining* loss_op = options.loss_op >= 0 ? interpreter_.op_training(options.loss_op) : nullptr;
  fused_softmax_op_ = loss_op && loss_op->on_path ? options.loss_op : -1;
  return Status();
}

size_t Trainer::arena_bytes_needed() const {
  return head_bytes_ + interpreter_.arena_bytes_needed() + label_bytes_;
}

TrainingMemory Trainer::memory() const {
  TrainingMemory m;
  const TrainingUsage& t = interpreter_.training_usage();
  const ArenaUsage& a = interpreter_.arena_usage();
  m.weight_bytes = t.weight_bytes;
  m.gradient_bytes = t.weight_gradient_bytes;
  m.optimizer_bytes = t.optimizer_bytes;
  m.activation_bytes = a.activation_bytes;
  m.tape_bytes = t.tape_bytes;
  m.activation_gradient_bytes = t.activation_gradient_bytes;
  m.total = arena_bytes_needed();
  m.other_bytes =
      m.total - m.weight_bytes - m.gradient_bytes - m.optimizer_bytes - m.activation_bytes;
  return m;
}

Tensor* Trainer::weight(int i) { return &interpreter_.subgraph_state(0).tensors[trainable_[i]]; }

void Trainer::weight_location(int i, int* subgraph, int* tensor) {
  const int global = trainable_[i];
  int s = 0;
  while (s + 1 < interpreter_.model().subgraph_count() &&
         interpreter_.global_tensor_index(s + 1, 0) <= global) {
    ++s;
  }
  *subgraph = s;
  *tensor = global - interpreter_.global_tensor_index(s, 0);
}

Tensor* Trainer::weight_gradient(int i) {
  return &interpreter_.tensor_training(trainable_[i])->gradient;
}

void Trainer::clear_gradients() {
  interpreter_.zero_weight_gradients();
  pending_ = 0;
  passes_ = 0;
  loss_sum_ = 0.0;
  hits_ = 0;
  metric_rows_ = 0;
}

void Trainer::set_observer(TrainingObserver* observer) {
  observer_ = observer;
  observe_sample_ = observer ? &Trainer::observe_sample : nullptr;
  observe_step_ = observer ? &Trainer::observe_step : nullptr;
  interpreter_.set_observer(observer);
}

void Trainer::observe_sample(Trainer& t) {
  t.hits_ += t.count_hits();
  t.metric_rows_ += t.active_rows_;
}

void Trainer::observe_step(Trainer& t, double norm2, bool clipped, float mean) {
  StepMetrics metrics;
  metrics.step = t.step_;
  metrics.samples = t.pending_;
  metrics.loss = static_cast<float>(t.loss_sum_ / t.pending_);
  metrics.accuracy =
      t.metric_rows_ > 0 ? static_cast<float>(t.hits_) / static_cast<float>(t.metric_rows_) : 0.f;
  metrics.gradient_norm = static_cast<float>(std::sqrt(norm2));
  metrics.clipped = clipped;
  t.observer_->on_step(metrics);
  t.report_gradients(mean);
}

Status Trainer::compute_loss(float* loss_out) {
  // Every output's gradient is planned (the interpreter marks them all as
  // needed); the outputs the loss is not on (recurrent states) add nothing.
  for (int o = 0; o < interpreter_.output_count(); ++o) {
    if (o == loss_output_) continue;
    Tensor* other = interpreter_.gradient(0, interpreter_.output(o));
    if (other && other->data) memset(other->data, 0, other->bytes);
  }
  Tensor* out = interpreter_.output(loss_output_);
  const float* p = out->f32();
  const float* y = label_;
  const int64_t n = out->elements();
  const int32_t classes = classes_;
  Tensor* grad = nullptr;
  const float* logits = nullptr;
  float beta = 1.f;
  if (fused_softmax_op_ >= 0) {
    OperatorView op = interpreter_.model().subgraph(0).op(fused_softmax_op_);
    Tensor* logits_tensor = &interpreter_.subgraph_state(0).tensors[op.inputs[0]];
    logits = logits_tensor->f32();
    grad = interpreter_.gradient(0, logits_tensor);
    const auto* options = op.options<fb::SoftmaxOptions>();
    beta = options ? options->beta() : 1.f;
  } else {
    grad = interpreter_.gradient(0, out);
  }
  float* g = grad ? grad->f32() : nullptr;
  double loss = 0.0;
  switch (config_.loss) {
    case Loss::kCategoricalCrossEntropy:
    case Loss::kSparseCategoricalCrossEntropy: {
      const bool sparse = config_.loss == Loss::kSparseCategoricalCrossEntropy;
      const float scale = 1.f / static_cast<float>(active_rows_);
      // Rows past the active ones (a short last batch) add nothing.
      if (g) {
        for (int64_t i = active_rows_ * classes; i < rows_ * classes; ++i) g[i] = 0.f;
      }
      for (int64_t r = 0; r < active_rows_; ++r) {
        int32_t label_class = -1;
        if (sparse) {
          label_class = static_cast<int32_t>(y[r]);
          if (static_cast<float>(label_class) != y[r] || label_class < 0 ||
              label_class >= classes) {
            return Status::error(StatusCode::kInvalidArgument,
                                 "label %g of row %lld is not a class index in 0..%d", y[r],
                                 static_cast<long long>(r), static_cast<int>(classes - 1));
          }
        }
#if GRUWB_BATCHED_KERNELS
        const double loss_before_row = loss;
#endif
        const float* pr = p + r * classes;
        const float* yr = sparse ? nullptr : y + r * classes;
        auto target = [&](int32_t i) { return sparse ? (i == label_class ? 1.f : 0.f) : yr[i]; };
        float sum_y = 0.f;
        for (int32_t i = 0; i < classes; ++i) sum_y += target(i);
        if (logits) {
          // log p from the logits (log-sum-exp), not log of a rounded p.
          const float* xr = logits + r * classes;
          float max = xr[0] * beta;
          for (int32_t i = 1; i < classes; ++i) max = xr[i] * beta > max ? xr[i] * beta : max;
          double sum = 0.0;
          for (int32_t i = 0; i < classes; ++i)
            sum += std::exp(static_cast<double>(xr[i] * beta - max));
          const double lse = std::log(sum);
          for (int32_t i = 0; i < classes; ++i) {
            const float t = target(i);
            if (t != 0.f) loss -= t * (static_cast<double>(xr[i] * beta - max) - lse);
            if (g) g[r * classes + i] = beta * (pr[i] * sum_y - t) * scale;
          }
        } else {
          for (int32_t i = 0; i < classes; ++i) {
            const float t = target(i);
            const float q = pr[i] > 1e-7f ? pr[i] : 1e-7f;  // Keras clips p to [eps, 1-eps]
            if (t != 0.f) loss -= t * std::log(static_cast<double>(q));
            if (g) g[r * classes + i] = -t / q * scale;
          }
        }
#if GRUWB_BATCHED_KERNELS
        if (row_losses_) {  // a sample's loss: the mean over its output rows
          const int64_t per_sample = rows_ / batch_rows_;
          if (r % per_sample == 0) row_losses_[r / per_sample] = 0.f;
          row_losses_[r / per_sample] += static_cast<float>((loss - loss_before_row) / per_sample);
        }
#endif
      }
      loss /= static_cast<double>(active_rows_);
      break;
    }
    case Loss::kMeanSquaredError:
    case Loss::kMeanAbsoluteError: {
      const bool squared = config_.loss == Loss::kMeanSquaredError;
      const int64_t active = rows_ > 0 ? n / rows_ * active_rows_ : n;
      const float scale = 1.f / static_cast<float>(active);
      if (g) {
        for (int64_t i = active; i < n; ++i) g[i] = 0.f;
      }
      for (int64_t i = 0; i < active; ++i) {
        const float d = p[i] - y[i];
        const double term =
            squared ? static_cast<double>(d) * d : std::fabs(static_cast<double>(d));
        loss += term;
        if (g) g[i] = squared ? 2.f * d * scale : (d > 0.f ? scale : (d < 0.f ? -scale : 0.f));
#if GRUWB_BATCHED_KERNELS
        if (row_losses_) {  // a sample's loss: the mean over its values
          const int64_t per_sample = n / batch_rows_;
          if (i % per_sample == 0) row_losses_[i / per_sample] = 0.f;
          row_losses_[i / per_sample] += static_cast<float>(term / per_sample);
        }
#endif
      }
      loss /= static_cast<double>(active);
      break;
    }
  }
  // Summed in double, reported in float: a loss beyond float32 (1e38 targets) is infinite too.
  if (!std::isfinite(static_cast<float>(loss))) {
    return Status::error(StatusCode::kInvalidArgument,
                         "the loss is %s: output '%s' holds a NaN/Inf or the labels do (or they "
                         "are too far apart for float32)",
                         std::isnan(loss) ? "NaN" : "infinite", out->name);
  }
  if (loss_out) *loss_out = static_cast<float>(loss);
  return Status();
}

// Arg-max hits over the active rows (classification losses), for metrics.
int64_t Trainer::count_hits() const {
  if (config_.loss != Loss::kCategoricalCrossEntropy &&
      config_.loss != Loss::kSparseCategoricalCrossEntropy) {
    return 0;
  }
  const bool sparse = config_.loss == Loss::kSparseCategoricalCrossEntropy;
  const float* p = const_cast<Interpreter&>(interpreter_).output(loss_output_)->f32();
  int64_t hits = 0;
  for (int64_t r = 0; r < active_rows_; ++r) {
    const float* pr = p + r * classes_;
    int32_t best = 0;
    for (int32_t i = 1; i < classes_; ++i) best = pr[i] > pr[best] ? i : best;
    int32_t truth = 0;
    if (sparse) {
      truth = static_cast<int32_t>(label_[r]);
    } else {
      const float* yr = label_ + r * classes_;
      for (int32_t i = 1; i < classes_; ++i) truth = yr[i] > yr[truth] ? i : truth;
    }
    hits += best == truth ? 1 : 0;
  }
  return hits;
}

// The training step's two entry points flush denormals (float_mode.h).
Status Trainer::accumulate(float* loss) {
  return with_flushed_denormals([this, loss] { return accumulate_pass(loss); });
}

Status Trainer::apply_update() {
  return with_flushed_denormals([this] { return update_weights(); });
}

Status Trainer::accumulate_pass(float* loss) {
  float value = 0.f;
  GRUWB_RETURN_IF_ERROR(interpreter_.invoke());
  GRUWB_RETURN_IF_ERROR(compute_loss(&value));
  GRUWB_RETURN_IF_ERROR(interpreter_.backward());
  const int32_t samples = batch_rows_ > 1 ? active_rows_ / (rows_ / batch_rows_) : 1;
  pending_ += samples;
  ++passes_;
  loss_sum_ += static_cast<double>(value) * samples;
  if (observe_sample_) observe_sample_(*this);
  if (loss) *loss = value;
  return Status();
}

Status Trainer::train_sample(float* loss) {
  GRUWB_RETURN_IF_ERROR(accumulate(loss));
  if (pending_ >= config_.batch_size) return apply_update();
  return Status();
}

Status Trainer::accumulate_rows(int32_t rows, float* row_losses) {
  return run_rows(rows, row_losses, true);
}

Status Trainer::evaluate_rows(int32_t rows, float* row_losses) {
  return run_rows(rows, row_losses, false);
}

Status Trainer::run_rows(int32_t rows, float* row_losses, bool train) {
  if (rows < 1 || rows > batch_rows_) {
    return Status::error(StatusCode::kInvalidArgument, "pass of %d rows (1..%d)",
                         static_cast<int>(rows), static_cast<int>(batch_rows_));
  }
  float loss = 0.f;
#if GRUWB_BATCHED_KERNELS
  row_losses_ = row_losses;
#endif
  active_rows_ = rows_ / batch_rows_ * rows;
  Status status;
  if (train) {
    status = accumulate(&loss);
  } else {
    status = with_flushed_denormals([this, &loss] {
      GRUWB_RETURN_IF_ERROR(interpreter_.invoke());
      return compute_loss(&loss);
    });
  }
  active_rows_ = rows_;
#if GRUWB_BATCHED_KERNELS
  row_losses_ = nullptr;
#else
  if (row_losses && status.ok()) {
    if (rows > 1) {
      return Status::error(StatusCode::kUnsupported,
                           "per-row losses of a batched pass need GRUWB_BATCHED_KERNELS");
    }
    row_losses[0] = loss;
  }
#endif
  return status;
}

Status Trainer::train_batch(int32_t samples, float* loss) {
  if (batch_rows_ <= 1) {
    return Status::error(StatusCode::kInvalidArgument,
                         "train_batch needs one-pass batches (the model runs one sample per "
                         "pass: use train_sample)");
  }
  if (samples < 1 || samples > batch_rows_) {
    return Status::error(StatusCode::kInvalidArgument, "batch of %d samples (1..%d)",
                         static_cast<int>(samples), static_cast<int>(batch_rows_));
  }
  active_rows_ = rows_ / batch_rows_ * samples;
  Status status = accumulate(loss);
  if (status.ok()) status = apply_update();
  active_rows_ = rows_;
  return status;
}

void Trainer::report_gradients(float scale) {
  for (int w = 0; w < trainable_count_; ++w) {
    const Tensor* g = weight_gradient(w);
    const int64_t n = g->elements();
    GradientStats stats;
    stats.step = step_;
    stats.weight = w;
    stats.tensor = trainable_[w];
    stats.name = g->name;
    double sum = 0.0;
    float lo = 0.f, hi = 0.f;
    for (int64_t i = 0; i < n; ++i) {
      const float v = g->f32()[i] * scale;
      sum += static_cast<double>(v) * v;
      lo = i == 0 || v < lo ? v : lo;
      hi = i == 0 || v > hi ? v : hi;
    }
    stats.norm = static_cast<float>(std::sqrt(sum));
    stats.min = lo;
    stats.max = hi;
    stats.range = std::fabs(lo) > std::fabs(hi) ? std::fabs(lo) : std::fabs(hi);
    const int bins = GradientStats::kBins;
    for (int64_t i = 0; i < n; ++i) {
      const float v = g->f32()[i] * scale;
      int bin = bins / 2;
      if (stats.range > 0.f) {
        bin = static_cast<int>((v + stats.range) / (2.f * stats.range) * bins);
        bin = bin < 0 ? 0 : (bin >= bins ? bins - 1 : bin);
      }
      ++stats.histogram[bin];
    }
    observer_->on_weight_gradient(stats);
  }
}

Status Trainer::update_weights() {
  if (pending_ == 0) return Status();
  // Per-sample passes are summed, one-pass batches already averaged.
  const float mean = 1.f / static_cast<float>(passes_);
  // NaN/Inf guard first: a bad gradient must not reach the weights. The norm
  // only for clipping or an observer: it sums in double, which a Cortex-M4F
  // does in software (about 115 instructions a weight).
  const bool wants_norm = config_.clip_norm > 0.f || observe_step_;
  double norm2 = 0.0;
  for (int w = 0; w < trainable_count_; ++w) {
    const Tensor* g = weight_gradient(w);
    const int64_t n = g->elements();
    for (int64_t i = 0; i < n; ++i) {
      const float v = g->f32()[i];
      if (!std::isfinite(v)) {
        return Status::error(StatusCode::kInvalidArgument,
                             "the gradient of weight '%s' is %s at element %lld (step %lld): "
                             "lower the learning rate or clip",
                             g->name, std::isnan(v) ? "NaN" : "infinite", static_cast<long long>(i),
                             static_cast<long long>(step_ + 1));
      }
      if (wants_norm) norm2 += static_cast<double>(v * mean) * (v * mean);
    }
  }
  float scale = mean;
  bool clipped = false;
  if (config_.clip_norm > 0.f) {
    const double norm = std::sqrt(norm2);
    if (norm > config_.clip_norm) {
      scale *= static_cast<float>(config_.clip_norm / norm);
      clipped = true;
    }
  }
  ++step_;
  if (observe_step_) observe_step_(*this, norm2, clipped, mean);
  const float lr = config_.learning_rate;
  const double t = static_cast<double>(step_);
  const double correction1 = 1.0 - std::pow(static_cast<double>(config_.beta1), t);
  const double correction2 = 1.0 - std::pow(static_cast<double>(config_.beta2), t);
  const float b1 = config_.beta1;
  const float b2 = config_.beta2;
  const float eps = config_.epsilon;
  const float keras_rate = static_cast<float>(lr * std::sqrt(correction2) / correction1);
  const float torch_step = static_cast<float>(lr / correction1);
  const float torch_root2 = static_cast<float>(std::sqrt(correction2));
  for (int w = 0; w < trainable_count_; ++w) {
    Tensor* weights = weight(w);
    TensorTraining* train = interpreter_.tensor_training(trainable_[w]);
    float* p = weights->f32();
    float* g = train->gradient.f32();
    const int64_t n = weights->elements();
    if (config_.optimizer == Optimizer::kAdam) {
      float* m = train->state[0];
      float* v = train->state[1];
      for (int64_t i = 0; i < n; ++i) {
        const float gi = g[i] * scale;
        m[i] = b1 * m[i] + (1.f - b1) * gi;
        v[i] = b2 * v[i] + (1.f - b2) * gi * gi;
        if (config_.torch_epsilon) {
          p[i] -= torch_step * m[i] / (std::sqrt(v[i]) / torch_root2 + eps);
        } else {
          p[i] -= keras_rate * m[i] / (std::sqrt(v[i]) + eps);
        }
      }
    } else if (config_.momentum > 0.f) {
      float* velocity = train->state[0];
      for (int64_t i = 0; i < n; ++i) {
        velocity[i] = config_.momentum * velocity[i] + g[i] * scale;
        p[i] -= lr * velocity[i];
      }
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] -= lr * g[i] * scale;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(p[i])) {
        return Status::error(StatusCode::kInvalidArgument,
                             "weight '%s' became %s at element %lld (step %lld): lower the "
                             "learning rate or clip",
                             weights->name, std::isnan(p[i]) ? "NaN" : "infinite",
                             static_cast<long long>(i), static_cast<long long>(step_));
      }
    }
  }
  clear_gradients();
  return Status();
}

// ---- checkpoints ----------------------------------------------------------------
// Native byte order (x86-64 hosts and Cortex-M boards are both little
// endian): a header, each weight's element count, then per weight its
// values, its gradient accumulator and its optimizer slots.

namespace {

constexpr char kCheckpointMagic[4] = {'G', 'W', 'C', 'K'};
constexpr uint32_t kCheckpointVersion = 1;

struct CheckpointHeader {
  char magic[4];
  uint32_t version;
  uint32_t weights;
  uint32_t slots;
  int64_t step;
  int32_t pending;
  int32_t passes;
  double loss_sum;
  int64_t hits;
  int64_t metric_rows;
};

}  // namespace

int Trainer::optimizer_slots() const {
  return config_.optimizer == Optimizer::kAdam ? 2 : (config_.momentum > 0.f ? 1 : 0);
}

static_assert(sizeof(CheckpointHeader) == 56, "the header is staged in checkpoint_header_");

size_t Trainer::checkpoint_prefix_bytes() const {
  return sizeof(CheckpointHeader) + sizeof(uint32_t) * static_cast<size_t>(trainable_count_);
}

size_t Trainer::checkpoint_bytes() const {
  size_t bytes = checkpoint_prefix_bytes();
  const size_t arrays = 2 + static_cast<size_t>(optimizer_slots());
  for (int w = 0; w < trainable_count_; ++w) {
    bytes += arrays * const_cast<Trainer*>(this)->weight(w)->bytes;
  }
  return bytes;
}

// The live array (values, gradient accumulator or an optimizer slot) holding
// checkpoint byte `offset` (past the prefix), and how many of its bytes
// follow from there.
uint8_t* Trainer::checkpoint_array(size_t offset, size_t* run) {
  size_t at = offset - checkpoint_prefix_bytes();
  for (int w = 0; w < trainable_count_; ++w) {
    Tensor* values = weight(w);
    TensorTraining* train = interpreter_.tensor_training(trainable_[w]);
    for (int a = 0; a < 2 + optimizer_slots(); ++a) {
      if (at < values->bytes) {
        uint8_t* base = static_cast<uint8_t*>(a == 0   ? values->data
                                              : a == 1 ? train->gradient.data
                                                       : static_cast<void*>(train->state[a - 2]));
        *run = values->bytes - at;
        return base + at;
      }
      at -= values->bytes;
    }
  }
  *run = 0;
  return nullptr;
}

Status Trainer::read_checkpoint(size_t offset, uint8_t* out, size_t bytes) {
  const size_t total = checkpoint_bytes();
  if (offset > total || bytes > total - offset || (!out && bytes > 0)) {
    return Status::error(StatusCode::kInvalidArgument, "checkpoint bytes %u..%u asked, it has %u",
                         static_cast<unsigned>(offset), static_cast<unsigned>(offset + bytes),
                         static_cast<unsigned>(total));
  }
  const size_t prefix = checkpoint_prefix_bytes();
  while (bytes > 0) {
    size_t n = 0;
    if (offset < sizeof(CheckpointHeader)) {
      CheckpointHeader header;
      memcpy(header.magic, kCheckpointMagic, 4);
      header.version = kCheckpointVersion;
      header.weights = static_cast<uint32_t>(trainable_count_);
      header.slots = static_cast<uint32_t>(optimizer_slots());
      header.step = step_;
      header.pending = pending_;
      header.passes = passes_;
      header.loss_sum = loss_sum_;
      header.hits = hits_;
      header.metric_rows = metric_rows_;
      n = sizeof header - offset;
      n = n < bytes ? n : bytes;
      memcpy(out, reinterpret_cast<const uint8_t*>(&header) + offset, n);
    } else if (offset < prefix) {
      const size_t index = (offset - sizeof(CheckpointHeader)) / sizeof(uint32_t);
      const size_t within = (offset - sizeof(CheckpointHeader)) % sizeof(uint32_t);
      const uint32_t count = static_cast<uint32_t>(weight(static_cast<int>(index))->elements());
      n = sizeof count - within;
      n = n < bytes ? n : bytes;
      memcpy(out, reinterpret_cast<const uint8_t*>(&count) + within, n);
    } else {
      const uint8_t* array = checkpoint_array(offset, &n);
      n = n < bytes ? n : bytes;
      memcpy(out, array, n);
    }
    out += n;
    offset += n;
    bytes -= n;
  }
  return Status();
}

Status Trainer::save_checkpoint(uint8_t* out, size_t capacity, size_t* written) {
  const size_t needed = checkpoint_bytes();
  if (written) *written = 0;
  if (!out || capacity < needed) {
    return Status::error(StatusCode::kOutOfMemory, "checkpoint needs %u bytes, the buffer has %u",
                         static_cast<unsigned>(needed), static_cast<unsigned>(capacity));
  }
  GRUWB_RETURN_IF_ERROR(read_checkpoint(0, out, needed));
  if (written) *written = needed;
  return Status();
}

Status Trainer::write_checkpoint(size_t offset, const uint8_t* data, size_t bytes) {
  if (offset == 0) checkpoint_next_ = 0;  // a new write starts over
  if (offset != checkpoint_next_) {
    return Status::error(StatusCode::kInvalidArgument,
                         "checkpoint chunk at byte %u, byte %u expected (chunks go in order, "
                         "the header first)",
                         static_cast<unsigned>(offset), static_cast<unsigned>(checkpoint_next_));
  }
  const size_t total = checkpoint_bytes();
  if ((!data && bytes > 0) || bytes > total - offset) {
    checkpoint_next_ = 0;
    return Status::error(StatusCode::kInvalidArgument,
                         "checkpoint chunk ends at byte %u, this training's checkpoint has %u",
                         static_cast<unsigned>(offset + bytes), static_cast<unsigned>(total));
  }
  const size_t prefix = checkpoint_prefix_bytes();
  while (bytes > 0) {
    size_t n = 0;
    if (offset < sizeof(CheckpointHeader)) {
      n = sizeof(CheckpointHeader) - offset;
      n = n < bytes ? n : bytes;
      memcpy(checkpoint_header_ + offset, data, n);
      if (offset + n == sizeof(CheckpointHeader)) {
        CheckpointHeader header;
        memcpy(&header, checkpoint_header_, sizeof header);
        if (memcmp(header.magic, kCheckpointMagic, 4) != 0 ||
            header.version != kCheckpointVersion) {
          checkpoint_next_ = 0;
          return Status::error(
              StatusCode::kInvalidArgument,
              "not a version %u GRU Workbench checkpoint (magic or version differs)",
              static_cast<unsigned>(kCheckpointVersion));
        }
        if (header.weights != static_cast<uint32_t>(trainable_count_) ||
            header.slots != static_cast<uint32_t>(optimizer_slots())) {
          checkpoint_next_ = 0;
          return Status::error(
              StatusCode::kInvalidArgument,
              "checkpoint holds %u weights with %u optimizer slots, this training has "
              "%d with %d (another model, scope or optimizer?)",
              static_cast<unsigned>(header.weights), static_cast<unsigned>(header.slots),
              trainable_count_, optimizer_slots());
        }
      }
    } else if (offset < prefix) {
      const int w = static_cast<int>((offset - sizeof(CheckpointHeader)) / sizeof(uint32_t));
      const size_t within = (offset - sizeof(CheckpointHeader)) % sizeof(uint32_t);
      n = sizeof(uint32_t) - within;
      n = n < bytes ? n : bytes;
      memcpy(checkpoint_count_ + within, data, n);
      uint32_t count = 0;
      memcpy(&count, checkpoint_count_, sizeof count);
      // The counts precede every array, so a mismatch leaves the live state untouched.
      if (within + n == sizeof count && count != static_cast<uint32_t>(weight(w)->elements())) {
        checkpoint_next_ = 0;
        return Status::error(StatusCode::kInvalidArgument,
                             "checkpoint weight %d has %u values, '%s' has %lld", w,
                             static_cast<unsigned>(count), weight(w)->name,
                             static_cast<long long>(weight(w)->elements()));
      }
    } else {
      uint8_t* array = checkpoint_array(offset, &n);
      n = n < bytes ? n : bytes;
      memcpy(array, data, n);
    }
    data += n;
    offset += n;
    bytes -= n;
    checkpoint_next_ = offset;
  }
  return Status();
}

Status Trainer::finish_checkpoint_write() {
  const size_t total = checkpoint_bytes();
  if (checkpoint_next_ != total) {
    return Status::error(StatusCode::kInvalidArgument, "checkpoint write stopped at byte %u of %u",
                         static_cast<unsigned>(checkpoint_next_), static_cast<unsigned>(total));
  }
  CheckpointHeader header;
  memcpy(&header, checkpoint_header_, sizeof header);
  step_ = header.step;
  pending_ = header.pending;
  passes_ = header.passes;
  loss_sum_ = header.loss_sum;
  hits_ = header.hits;
  metric_rows_ = header.metric_rows;
  checkpoint_next_ = 0;
  return Status();
}

Status Trainer::load_checkpoint(const uint8_t* data, size_t bytes) {
  if (!data || bytes < sizeof(CheckpointHeader)) {
    return Status::error(
        StatusCode::kInvalidArgument, "checkpoint of %u bytes is shorter than its %u-byte header",
        static_cast<unsigned>(bytes), static_cast<unsigned>(sizeof(CheckpointHeader)));
  }
  GRUWB_RETURN_IF_ERROR(write_checkpoint(0, data, sizeof(CheckpointHeader)));
  if (bytes != checkpoint_bytes()) {
    checkpoint_next_ = 0;
    return Status::error(StatusCode::kInvalidArgument,
                         "checkpoint has %u bytes, this training's needs %u",
                         static_cast<unsigned>(bytes), static_cast<unsigned>(checkpoint_bytes()));
  }
  GRUWB_RETURN_IF_ERROR(write_checkpoint(sizeof(CheckpointHeader), data + sizeof(CheckpointHeader),
                                         bytes - sizeof(CheckpointHeader)));
  return finish_checkpoint_write();
}

int32_t Trainer::predicted_class(int64_t row) {
  if (row < 0 || row >= rows_) return -1;
  const float* p = interpreter_.output(loss_output_)->f32() + row * classes_;
  int32_t best = 0;
  for (int32_t i = 1; i < classes_; ++i) best = p[i] > p[best] ? i : best;
  return best;
}

Status Trainer::evaluate(float* loss, int32_t* prediction) {
  GRUWB_RETURN_IF_ERROR(interpreter_.invoke());
  if (prediction) {
    const float* p = interpreter_.output(loss_output_)->f32();
    int32_t best = 0;
    for (int32_t i = 1; i < classes_; ++i) best = p[i] > p[best] ? i : best;
    *prediction = best;
  }
  if (!loss) return Status();
  // The loss without touching gradients: compute_loss writes into the
  // gradient buffers, which are dead between steps, so this is harmless.
  return compute_loss(loss);
}

}  // namespace gruwb
