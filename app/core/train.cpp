#include "app/core/train.h"

#include <cstdio>
#include <fstream>

#include "app/core/inspect.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_writer.h"

namespace gruwb::app {
namespace {

std::string fixed(double value, int digits = 4) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

void write_classes(tools::JsonWriter& json, const char* prefix, const ClassMetrics& classes) {
  const std::string p = prefix;
  json.key(p + "precision").array(classes.precision);
  json.key(p + "recall").array(classes.recall);
  json.key(p + "confusion").begin_array();
  for (const std::vector<int64_t>& row : classes.confusion) json.array(row);
  json.end_array();
}

}  // namespace

std::string epoch_metrics_json(const EpochMetrics& m) {
  tools::JsonWriter json(0);
  json.begin_object();
  json.key("epoch").value(m.epoch);
  json.key("steps").value(m.steps);
  json.key("loss").value(m.train_loss);
  if (m.has_accuracy) json.key("accuracy").value(m.train_accuracy);
  if (m.has_val) {
    json.key("val_loss").value(m.val_loss);
    if (m.has_accuracy) json.key("val_accuracy").value(m.val_accuracy);
  }
  json.key("seconds").value(m.seconds);
  json.key("samples_per_second").value(m.samples_per_second);
  if (m.has_accuracy) {
    write_classes(json, "", m.train_classes);
    if (m.has_val) write_classes(json, "val_", m.val_classes);
  }
  write_gradient_stats(json, m.gradients);
  json.end_object();
  return json.take();
}

std::string epoch_metrics_line(const EpochMetrics& m, int epochs) {
  std::string line = m.epoch == 0
                         ? std::string("initial   ")
                         : "epoch " + std::to_string(m.epoch) + "/" + std::to_string(epochs);
  while (line.size() < 12) line += ' ';
  line += " loss " + fixed(m.train_loss);
  if (m.has_accuracy) line += "  acc " + fixed(m.train_accuracy);
  if (m.has_val) {
    line += "  val_loss " + fixed(m.val_loss);
    if (m.has_accuracy) line += "  val_acc " + fixed(m.val_accuracy);
  }
  if (m.epoch > 0) line += "  " + fixed(m.samples_per_second, 0) + " samples/s";
  return line;
}

int train_model(const TrainRequest& request, const std::function<void(const std::string&)>& print,
                std::string* out, std::string* err) {
  TrainingRunSpec spec = request.spec;
  spec.model_label = request.model_path;
  if (!set_trainable_scope(request.scope, &spec, err)) return kExitBadInput;
  if (!tools::read_file_bytes(request.model_path, &spec.model_bytes, err)) return kExitBadInput;
  TrainingData train, val;
  if (!load_training_data(request.inputs_path, request.labels_path, &train, err)) {
    return kExitBadInput;
  }
  const bool has_val = !request.val_inputs_path.empty();
  if (has_val && !load_training_data(request.val_inputs_path, request.val_labels_path, &val, err)) {
    return kExitBadInput;
  }
  TrainingSession session;
  if (!session.prepare(spec, train, has_val ? &val : nullptr, err)) return kExitBadInput;
  // Check the output format before training, not after minutes of it.
  if (!request.output_path.empty()) {
    std::vector<uint8_t> bytes;
    if (!session.trained_model(tools::format_for_path(request.output_path), &bytes, err)) {
      *err = request.output_path + ": " + *err;
      return kExitBadInput;
    }
  }
  std::ofstream metrics;
  if (!request.metrics_path.empty()) {
    metrics.open(request.metrics_path, std::ios::out | std::ios::trunc);
    if (!metrics) {
      *err = request.metrics_path + ": cannot open for writing";
      return kExitBadInput;
    }
  }
  const TrainingMemory memory = session.memory();
  if (print && !session.dequantized_note().empty()) print(session.dequantized_note());
  if (print && !session.fused_note().empty()) print(session.fused_note());
  if (print) {
    print("Training " + std::to_string(session.trainable_weights().size()) + " weight tensor(s), " +
          std::to_string(session.result().trainable_parameters) + " parameters (scope " +
          trainable_scope_text(spec) + "), " + std::to_string(train.count()) + " samples" +
          (has_val ? " + " + std::to_string(val.count()) + " validation" : std::string()) +
          "; arena " + std::to_string(memory.total) + " bytes" +
          batch_passes_text(spec.config.batch_size, session.trainer().batch_rows()));
  }
  bool metrics_ok = true;
  auto on_event = [&](const TrainingEvent& event) {
    if (event.kind != TrainingEvent::Kind::kEpoch) return;
    if (print) print(epoch_metrics_line(event.metrics, spec.epochs));
    if (metrics.is_open()) {
      metrics << epoch_metrics_json(event.metrics) << '\n';
      metrics.flush();
      metrics_ok = metrics_ok && metrics.good();
    }
  };
  const TrainingResult result = session.run(on_event);
  if (metrics.is_open()) metrics.close();
  if (result.outcome == TrainingOutcome::kFailed) {
    *err = result.error;
    return kExitFailure;
  }
  if (!metrics_ok) {
    *err = request.metrics_path + ": writing the metrics failed";
    return kExitFailure;
  }
  std::string text = "Finished (" + std::string(training_outcome_name(result.outcome)) +
                     ") after " + std::to_string(result.steps) + " steps in " +
                     fixed(result.seconds, 2) + " s";
  if (result.seconds > 0.0 && result.samples > 0) {
    text += ", " + fixed(static_cast<double>(result.samples) / result.seconds, 0) + " samples/s";
  }
  if (result.outcome == TrainingOutcome::kEarlyStopped && result.best_epoch > 0) {
    text += "; best epoch " + std::to_string(result.best_epoch);
  }
  text += "\n";
  if (!request.output_path.empty()) {
    if (!session.save_trained_model(request.output_path, err)) return kExitFailure;
    text += "Saved " + request.output_path +
            (session.loop_plan().fused ? " (the fused form it trained in; --as-written trains and "
                                         "saves the loop form)\n"
                                       : "\n");
  }
  *out = text;
  return kExitOk;
}

}  // namespace gruwb::app
