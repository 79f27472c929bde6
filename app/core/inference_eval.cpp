#include "app/core/inference_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/kernels/quant_util.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"

namespace gruwb::app {
namespace {

// Value i of an output tensor as a real number (dequantized when integer).
bool output_value(const Tensor& t, int64_t i, float* out) {
  if (t.type == TensorType::FLOAT32) {
    *out = t.f32()[i];
    return true;
  }
  int32_t lo = 0, hi = 0;
  TensorQuantization q;
  if (!integer_range(t.type, &lo, &hi) || !tensor_quantization(&t, &q)) return false;
  *out = q.scale * static_cast<float>(integer_at(&t, i) - q.zero_point);
  return true;
}

}  // namespace

bool evaluate_inference(const std::vector<uint8_t>& model_bytes, const TrainingData& data,
                        int output, double* loss, ClassMetrics* classes, std::string* error) {
  tools::LoadedModel loaded;
  if (!tools::load_model_bytes(model_bytes, "model", &loaded, error)) return false;
  tools::ModelRunner runner;
  runner.set_packed_weights(true);
  if (!runner.prepare(loaded.model, error)) return false;
  Interpreter& interpreter = runner.interpreter();
  if (output < 0 || output >= interpreter.output_count()) {
    *error = "the model has no output " + std::to_string(output);
    return false;
  }
  Tensor* input = interpreter.input(0);
  const int64_t per_sample = data.sample_elements();
  if (input->elements() != per_sample) {
    *error = data.inputs_label + ": samples of " + std::to_string(per_sample) +
             " values, the model's input takes " + std::to_string(input->elements());
    return false;
  }
  const Tensor* out = interpreter.output(output);
  const int64_t class_count = out->elements();
  if (class_count < 2) {
    *error = "output " + std::to_string(output) + " has " + std::to_string(class_count) +
             " values: not class scores";
    return false;
  }
  std::vector<std::vector<int64_t>> confusion(
      static_cast<size_t>(class_count), std::vector<int64_t>(static_cast<size_t>(class_count), 0));
  double sum = 0.0;
  const int64_t n = data.count();
  for (int64_t i = 0; i < n; ++i) {
    for (int s = 1; s < interpreter.input_count(); ++s) {
      std::memset(interpreter.input(s)->data, 0, interpreter.input(s)->bytes);
    }
    const float* x = data.inputs.data() + i * per_sample;
    switch (input->type) {
      case TensorType::FLOAT32:
        std::memcpy(input->data, x, static_cast<size_t>(per_sample) * sizeof(float));
        break;
      case TensorType::INT8:
      case TensorType::UINT8: {
        // An integer-input model: quantize as its QUANTIZE op would.
        TensorQuantization q;
        int32_t lo = 0, hi = 0;
        if (!tensor_quantization(input, &q) || !integer_range(input->type, &lo, &hi)) {
          *error = "input 0 is integer without a scale";
          return false;
        }
        const bool is_signed = input->type == TensorType::INT8;
        for (int64_t e = 0; e < per_sample; ++e) {
          const int32_t q_value = std::clamp(quantize_value(x[e], q.scale, q.zero_point), lo, hi);
          if (is_signed) {
            reinterpret_cast<int8_t*>(input->data)[e] = static_cast<int8_t>(q_value);
          } else {
            input->data[e] = static_cast<uint8_t>(q_value);
          }
        }
        break;
      }
      default:
        *error = "input 0 is " + std::string(tensor_type_name(input->type)) +
                 ": expected float32, int8 or uint8";
        return false;
    }
    if (!runner.invoke(error)) {
      *error = data.inputs_label + ": sample " + std::to_string(i) + ": " + *error;
      return false;
    }
    const Tensor* scores = interpreter.output(output);
    int64_t best = 0;
    float best_value = 0.f;
    float truth_value = 0.f;
    const int32_t truth = data.class_of(i);
    for (int64_t c = 0; c < class_count; ++c) {
      float v = 0.f;
      if (!output_value(*scores, c, &v)) {
        *error = "output " + std::to_string(output) + " is " +
                 std::string(tensor_type_name(scores->type)) + ": not class scores";
        return false;
      }
      if (c == 0 || v > best_value) best = c, best_value = v;
      if (c == truth) truth_value = v;
    }
    sum -= std::log(static_cast<double>(std::max(truth_value, 1e-7f)));
    if (truth >= 0 && truth < class_count) {
      ++confusion[static_cast<size_t>(truth)][static_cast<size_t>(best)];
    }
  }
  *loss = n > 0 ? sum / static_cast<double>(n) : 0.0;
  if (classes) *classes = class_metrics(confusion);
  return true;
}

}  // namespace gruwb::app
