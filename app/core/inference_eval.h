#pragma once
// Classifier figures of a model by plain inference (no trainer): what a
// deployed model scores. Used where the trainer cannot go, such as a
// full-integer model (experiments' quantization stages).

#include <cstdint>
#include <string>
#include <vector>

#include "app/core/training_session.h"

namespace gruwb::app {

// Runs every sample of `data` through the model (.tflite/.circle bytes) and
// scores output `output` (class probabilities, e.g. after SOFTMAX and a
// DEQUANTIZE, or int8/uint8 probabilities, dequantized) against the labels:
// cross entropy with p clipped to 1e-7 as Keras does, and the confusion
// matrix of the arg-max.
bool evaluate_inference(const std::vector<uint8_t>& model_bytes, const TrainingData& data,
                        int output, double* loss, ClassMetrics* classes, std::string* error);

}  // namespace gruwb::app
