#include "engine/train/trainer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace gruwb {
namespace {

size_t align_up(size_t n) {
  return (n + Interpreter::kAlignment - 1) & ~(Interpreter::kAlignment - 1);
}

// Which inputs of a layer op are its weights (the rest: data, states).
bool is_weight_input(const OperatorView& op, int input) {
  switch (op.op_code) {
    case static_cast<int32_t>(BuiltinOperator::FULLY_CONNECTED): return input == 1 || input == 2;
    case static_cast<int32_t>(BuiltinOperator::GRU): return input >= 1 && input <= 4;
    case static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN):
      return input >= 1 && input <= 3;
    case static_cast<int32_t>(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM):
      return input >= 1 && input <= 23 && input != 18 && input != 19;
    case kOpCustom: return strcmp(op.custom_code, "GRUWB_GRU") == 0 && input >= 1 && input <= 3;
    default: return false;
  }
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

Status Trainer::resolve_scope(const Model& model, uint8_t* flags) {
  SubgraphView sg = model.subgraph(0);
  const TrainingConfig& c = config_;
  if (c.scope == TrainableScope::kNames) {
    for (int32_t n = 0; n < c.name_count; ++n) {
      int found = -1;
      for (int t = 0; t < sg.tensor_count && found < 0; ++t) {
        if (strcmp(sg.tensor(t).name, c.names[n]) == 0) found = t;
      }
      if (found < 0) {
        return Status::error(StatusCode::kInvalidArgument,
                             "no tensor named '%s' in subgraph 0 to train", c.names[n]);
      }
      if (!is_float_weight(sg, found)) {
        return Status::error(StatusCode::kInvalidArgument,
                             "tensor %d '%s' is not a constant float32 weight: it cannot be "
                             "trained",
                             found, c.names[n]);
      }
      flags[found] = 1;
    }
    return Status();
  }
  int layers = 0;
  for (int o = 0; o < sg.operator_count; ++o) layers += is_layer(sg, sg.op(o)) ? 1 : 0;
  int last_fc = -1;
  for (int o = 0; o < sg.operator_count; ++o) {
    OperatorView op = sg.op(o);
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
    if (!is_layer(sg, op)) continue;
    ++layer;
    bool take = c.scope == TrainableScope::kAll ||
                (c.scope == TrainableScope::kFc && o == last_fc) ||
                (c.scope == TrainableScope::kLastN && layer > layers - c.last_n);
    if (!take) continue;
    for (size_t i = 0; i < op.inputs.size; ++i) {
      if (is_weight_input(op, static_cast<int>(i)) && is_float_weight(sg, op.inputs[i])) {
        flags[op.inputs[i]] = 1;
      }
    }
  }
  return Status();
}

Status Trainer::prepare(const Model& model, const TrainingConfig& config, uint8_t* arena,
                        size_t arena_bytes) {
  *this = Trainer();
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
  if (sg.outputs.size < 1) {
    return Status::error(StatusCode::kInvalidModel, "subgraph 0 has no output to train against");
  }
  // The trainable flags sit at the arena start; the labels go after the
  // interpreter's memory once the output's shape is known.
  const size_t flag_bytes = align_up(static_cast<size_t>(sg.tensor_count));
  head_bytes_ = flag_bytes;
  if (head_bytes_ > arena_bytes) {
    return Status::error(StatusCode::kOutOfMemory,
                         "arena of %u bytes is too small for the trainer's %u bytes of flags",
                         static_cast<unsigned>(arena_bytes), static_cast<unsigned>(head_bytes_));
  }
  uint8_t* flags = arena;
  memset(flags, 0, flag_bytes);
  GRUWB_RETURN_IF_ERROR(resolve_scope(model, flags));
  for (int t = 0; t < sg.tensor_count; ++t) {
    if (!flags[t]) continue;
    if (trainable_count_ == kMaxTrainable) {
      return Status::error(StatusCode::kUnsupported, "more than %d trainable weight tensors",
                           kMaxTrainable);
    }
    trainable_[trainable_count_++] = t;
  }
  TrainingOptions options;
  options.trainable = flags;
  options.optimizer_slots =
      config.optimizer == Optimizer::kAdam ? 2 : (config.momentum > 0.f ? 1 : 0);
  options.input_gradients = config.input_gradients;
  // CE after a SOFTMAX: the gradient w.r.t. the logits is p - y (stable).
  const bool ce = config.loss == Loss::kCategoricalCrossEntropy ||
                  config.loss == Loss::kSparseCategoricalCrossEntropy;
  for (int o = 0; o < sg.operator_count && ce; ++o) {
    OperatorView op = sg.op(o);
    if (op.outputs.size != 1 || op.outputs[0] != sg.outputs[0]) continue;
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
  GRUWB_RETURN_IF_ERROR(
      interpreter_.prepare(model, arena + head_bytes_, arena_bytes - head_bytes_, &options));

  Tensor* out = interpreter_.output(0);
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

Tensor* Trainer::weight_gradient(int i) {
  return &interpreter_.tensor_training(trainable_[i])->gradient;
}

void Trainer::clear_gradients() {
  interpreter_.zero_weight_gradients();
  pending_ = 0;
}

Status Trainer::compute_loss(float* loss_out) {
  Tensor* out = interpreter_.output(0);
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
      const float scale = 1.f / static_cast<float>(rows_);
      for (int64_t r = 0; r < rows_; ++r) {
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
      }
      loss /= static_cast<double>(rows_);
      break;
    }
    case Loss::kMeanSquaredError:
    case Loss::kMeanAbsoluteError: {
      const bool squared = config_.loss == Loss::kMeanSquaredError;
      const float scale = 1.f / static_cast<float>(n);
      for (int64_t i = 0; i < n; ++i) {
        const float d = p[i] - y[i];
        loss += squared ? static_cast<double>(d) * d : std::fabs(static_cast<double>(d));
        if (g) g[i] = squared ? 2.f * d * scale : (d > 0.f ? scale : (d < 0.f ? -scale : 0.f));
      }
      loss /= static_cast<double>(n);
      break;
    }
  }
  if (!std::isfinite(loss)) {
    return Status::error(StatusCode::kInvalidArgument,
                         "the loss is %s: output '%s' holds a NaN/Inf or the labels do",
                         std::isnan(loss) ? "NaN" : "infinite", out->name);
  }
  if (loss_out) *loss_out = static_cast<float>(loss);
  return Status();
}

Status Trainer::accumulate(float* loss) {
  GRUWB_RETURN_IF_ERROR(interpreter_.invoke());
  GRUWB_RETURN_IF_ERROR(compute_loss(loss));
  GRUWB_RETURN_IF_ERROR(interpreter_.backward());
  ++pending_;
  return Status();
}

Status Trainer::train_sample(float* loss) {
  GRUWB_RETURN_IF_ERROR(accumulate(loss));
  if (pending_ >= config_.batch_size) return apply_update();
  return Status();
}

Status Trainer::apply_update() {
  if (pending_ == 0) return Status();
  const float mean = 1.f / static_cast<float>(pending_);
  // NaN/Inf guard first: a bad gradient must not reach the weights.
  double norm2 = 0.0;
  for (int w = 0; w < trainable_count_; ++w) {
    const Tensor* g = weight_gradient(w);
    const int64_t n = g->elements();
    for (int64_t i = 0; i < n; ++i) {
      const float v = g->f32()[i];
      if (!std::isfinite(v)) {
        return Status::error(StatusCode::kInvalidArgument,
                             "the gradient of weight '%s' is %s at element %lld (step %lld): "
                             "lower the learning rate or enable clipping",
                             g->name, std::isnan(v) ? "NaN" : "infinite", static_cast<long long>(i),
                             static_cast<long long>(step_ + 1));
      }
      norm2 += static_cast<double>(v * mean) * (v * mean);
    }
  }
  float scale = mean;
  if (config_.clip_norm > 0.f) {
    const double norm = std::sqrt(norm2);
    if (norm > config_.clip_norm) scale *= static_cast<float>(config_.clip_norm / norm);
  }
  ++step_;
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
  }
  clear_gradients();
  return Status();
}

Status Trainer::evaluate(float* loss, int32_t* prediction) {
  GRUWB_RETURN_IF_ERROR(interpreter_.invoke());
  if (prediction) {
    const float* p = interpreter_.output(0)->f32();
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
