#include "app/core/grad.h"

#include <cstdio>

#include "app/core/inspect.h"
#include "app/core/training_session.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"

namespace gruwb::app {
namespace {

std::string shape_text(const std::vector<int32_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

int grad_model(const GradRequest& request, std::string* out, std::string* err) {
  TrainingRunSpec spec;
  spec.model_label = request.model_path;
  spec.config.loss = request.loss;
  spec.loss_output = request.loss_output;
  spec.epochs = 0;
  spec.as_written = true;  // the gradients of the file's own weight tensors, by their names
  if (!set_trainable_scope(request.scope, &spec, err)) return kExitBadInput;
  if (!tools::read_file_bytes(request.model_path, &spec.model_bytes, err)) return kExitBadInput;
  TrainingData data;
  if (!load_training_data(request.input_path, request.labels_path, &data, err)) {
    return kExitBadInput;
  }
  TrainingSession session;
  if (!session.prepare(spec, data, nullptr, err)) return kExitBadInput;
  double loss = 0.0;
  std::vector<WeightGradient> gradients;
  if (!session.gradients(data, &loss, &gradients, err)) return kExitFailure;

  if (request.json) {
    tools::JsonWriter json;
    json.begin_object();
    json.key("model").value(request.model_path);
    json.key("loss_name").value(loss_name(request.loss));
    json.key("loss").value(loss);
    json.key("samples").value(data.count());
    json.key("scope").value(trainable_scope_text(spec));
    json.key("loss_output").value(session.loss_output_name());
    json.key("loss_output_index").value(session.loss_output());
    json.key("gradients").begin_array();
    for (const WeightGradient& g : gradients) {
      json.begin_object();
      json.key("name").value(g.weight.name);
      json.key("tensor").value(g.weight.tensor);
      json.key("shape").array(g.weight.shape);
      json.key("norm").value(g.norm);
      json.key("min").value(g.min);
      json.key("max").value(g.max);
      json.key("values").array(g.values);
      json.end_object();
    }
    json.end_array();
    json.end_object();
    *out = json.take() + "\n";
    return kExitOk;
  }
  std::string text = "Loss (" + std::string(loss_name(request.loss)) + ", mean over " +
                     std::to_string(data.count()) + " sample(s)): " + number(loss) + "\n";
  if (!session.dequantized_note().empty()) text += session.dequantized_note() + "\n";
  const int outputs = session.trainer().interpreter().output_count();
  if (outputs > 1) {
    text += "Loss on output " + std::to_string(session.loss_output()) + " '" +
            session.loss_output_name() + "' of " + std::to_string(outputs) + "\n";
  }
  text += "Gradients of " + std::to_string(gradients.size()) + " trainable weight tensor(s), " +
          "scope " + trainable_scope_text(spec) + ":\n";
  size_t width = 4;
  for (const WeightGradient& g : gradients) width = std::max(width, g.weight.name.size());
  char line[512];
  std::snprintf(line, sizeof line, "  %-*s  %-12s %12s %12s %12s\n", static_cast<int>(width),
                "name", "shape", "norm", "min", "max");
  text += line;
  for (const WeightGradient& g : gradients) {
    std::snprintf(line, sizeof line, "  %-*s  %-12s %12s %12s %12s\n", static_cast<int>(width),
                  g.weight.name.c_str(), shape_text(g.weight.shape).c_str(), number(g.norm).c_str(),
                  number(g.min).c_str(), number(g.max).c_str());
    text += line;
  }
  *out = text;
  return kExitOk;
}

}  // namespace gruwb::app
