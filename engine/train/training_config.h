#pragma once
// What to train and how: one plain struct shared by the desktop and the board
// (no heap, no strings owned). docs/training-design.md describes the plan.

#include <cstdint>

namespace gruwb {

enum class Loss : uint8_t {
  kCategoricalCrossEntropy,        // labels: one-hot (or soft) rows, like the output
  kSparseCategoricalCrossEntropy,  // labels: one class index per row
  kMeanSquaredError,
  kMeanAbsoluteError,
};

enum class Optimizer : uint8_t { kSgd, kAdam };

enum class TrainableScope : uint8_t {
  kAll,    // every weight of every trainable layer
  kFc,     // the weights of the last FULLY_CONNECTED
  kLastN,  // the last `last_n` trainable layers (onert-micro's num_of_train_layers)
  kNames,  // the weight tensors listed in `names`
};

struct TrainingConfig {
  Loss loss = Loss::kCategoricalCrossEntropy;
  Optimizer optimizer = Optimizer::kAdam;
  float learning_rate = 1e-3f;
  float momentum = 0.f;  // SGD
  // Adam, Keras defaults. Keras adds epsilon to the uncorrected sqrt(v):
  //   w -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)
  // torch_epsilon: PyTorch's form w -= lr * m_hat / (sqrt(v_hat) + eps)
  // (PyTorch's default epsilon is 1e-8: set it too).
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
  bool torch_epsilon = false;
  // Gradients accumulate over batch_size samples; the update applies their mean.
  int32_t batch_size = 1;
  // Global-norm clipping of the (mean) gradients; 0 = off.
  float clip_norm = 0.f;
  TrainableScope scope = TrainableScope::kAll;
  int32_t last_n = 1;
  const char* const* names = nullptr;  // kNames: weight tensor names (caller-owned)
  int32_t name_count = 0;
  // Also compute gradients with respect to the model inputs (gradient checks).
  bool input_gradients = false;
  // Train a batch in ONE pass: prepare the model with batch dimension
  // batch_size when its input's is 1 and the shapes propagate (fused
  // models); the loss averages the rows, which gives the same update as
  // batch_size accumulated samples. Falls back to per-sample accumulation
  // otherwise; Trainer::batch_rows() says which mode is used.
  bool one_pass_batches = false;
  // The model output the loss goes on: an index into subgraph 0's outputs,
  // or -1 to let choose_loss_output (engine/train/loss_output.h) pick it
  // (one output; the one fed by SOFTMAX/LOGISTIC; else an error naming the
  // candidates). Hosts resolve --output NAME to this index.
  int32_t loss_output = -1;
};

// "fc", "all", "last:N" -> scope (+ last_n); false for anything else (a list
// of tensor names is the caller's to split).
bool parse_trainable_scope(const char* text, TrainingConfig* config);

}  // namespace gruwb
