#include "app/core/run.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "app/core/inspect.h"
#include "app/core/loop_plan.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"

namespace gruwb::app {
namespace {

std::string describe(const Tensor& tensor) {
  char shape[64];
  format_shape(tensor.shape, shape, sizeof shape);
  return std::string("'") + tensor.name + "' " + tensor_type_name(tensor.type) + " " + shape;
}

// Values as text, one element per entry.
std::vector<std::string> value_texts(const tools::NpyArray& array) {
  std::vector<std::string> values;
  size_t n = static_cast<size_t>(array.elements());
  values.reserve(n);
  char text[32];
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = array.data.data();
    if (array.dtype == "<f4") {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
    } else if (array.dtype == "<i4") {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      std::snprintf(text, sizeof text, "%" PRId32, v);
    } else if (array.dtype == "<i8") {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      std::snprintf(text, sizeof text, "%" PRId64, v);
    } else if (array.dtype == "|b1") {
      std::snprintf(text, sizeof text, "%s", p[i] ? "true" : "false");
    } else {
      std::snprintf(text, sizeof text, "?");
    }
    values.push_back(text);
  }
  return values;
}

void write_values(tools::JsonWriter& json, const tools::NpyArray& array) {
  size_t n = static_cast<size_t>(array.elements());
  const uint8_t* p = array.data.data();
  std::vector<double> numbers;  // float32/int32 are exact in a double
  std::vector<bool> flags;
  for (size_t i = 0; i < n; ++i) {
    if (array.dtype == "<f4") {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      numbers.push_back(v);
    } else if (array.dtype == "<i4") {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      numbers.push_back(v);
    } else if (array.dtype == "|b1") {
      flags.push_back(p[i] != 0);
    }
  }
  if (array.dtype == "|b1") {
    json.array(flags);
  } else if (array.dtype == "<f4") {
    std::vector<float> floats(numbers.begin(), numbers.end());
    json.array(floats);
  } else {
    std::vector<int64_t> ints(numbers.begin(), numbers.end());
    json.array(ints);
  }
}

std::string file_safe(const std::string& name) {
  std::string safe;
  for (char c : name) safe += (isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return safe.empty() ? "output" : safe;
}

std::string arena_text(const ArenaUsage& usage) {
  return "Arena: " + std::to_string(usage.total()) + " bytes (tables " +
         std::to_string(usage.metadata_bytes) + ", persistent " +
         std::to_string(usage.persistent_bytes) + ", activations " +
         std::to_string(usage.activation_bytes) + ")\n";
}

}  // namespace

int run_model(const RunRequest& request, std::string* out, std::string* err) {
  tools::LoadedModel file;
  if (!tools::load_model_file(request.model_path, &file, err)) return kExitBadInput;
  LoopPlanOptions plan_options;
  plan_options.fuse_loops = !request.as_written;
  LoopPlan plan = plan_loops(file.bytes, plan_options);
  tools::LoadedModel loaded;
  if (!tools::load_model_bytes(std::move(plan.bytes), request.model_path, &loaded, err)) {
    return kExitFailure;
  }
  const bool execute = !request.arena_only || !request.input_paths.empty();
  // Inputs run in the host's fastest form (packed recurrent weights); the arena reported is
  // the one a board plans.
  tools::ModelRunner runner;
  runner.set_packed_weights(execute);
  std::string error;
  ArenaUsage usage;
  if (!runner.prepare(loaded.model, &error) || !runner.board_arena_usage(&usage, &error)) {
    *err = request.model_path + ": " + error;
    return kExitBadInput;
  }
  if (execute && static_cast<int>(request.input_paths.size()) != runner.input_count()) {
    std::string inputs;
    for (int i = 0; i < runner.input_count(); ++i) {
      inputs += (i ? ", " : "") + describe(*runner.interpreter().input(i));
    }
    *err = request.model_path + ": the model has " + std::to_string(runner.input_count()) +
           " input(s) (" + inputs + "), got " + std::to_string(request.input_paths.size()) +
           " --input file(s)";
    return kExitBadInput;
  }
  for (size_t i = 0; execute && i < request.input_paths.size(); ++i) {
    tools::NpyArray array;
    if (!tools::read_npy(request.input_paths[i], &array, err)) return kExitBadInput;
    if (!runner.set_input(static_cast<int>(i), array, &error)) {
      *err = request.input_paths[i] + ": " + error;
      return kExitBadInput;
    }
  }
  if (execute && !runner.invoke(&error)) {
    *err = request.model_path + ": " + error;
    return kExitFailure;
  }

  std::vector<tools::NpyArray> outputs;
  for (int o = 0; execute && o < runner.output_count(); ++o) outputs.push_back(runner.output(o));
  std::vector<std::string> written;
  for (size_t o = 0; o < outputs.size() && !request.output_dir.empty(); ++o) {
    std::string path = request.output_dir + "/output_" + std::to_string(o) + "_" +
                       file_safe(runner.interpreter().output(static_cast<int>(o))->name) + ".npy";
    if (!tools::write_npy(path, outputs[o], err)) return kExitFailure;
    written.push_back(path);
  }

  if (request.json) {
    tools::JsonWriter json;
    json.begin_object();
    json.key("model").value(request.model_path);
    write_loop_plan(json, plan);
    json.key("arena_bytes").value(static_cast<uint64_t>(usage.total()));
    json.key("arena").begin_object();
    json.key("tables").value(static_cast<uint64_t>(usage.metadata_bytes));
    json.key("persistent").value(static_cast<uint64_t>(usage.persistent_bytes));
    json.key("activations").value(static_cast<uint64_t>(usage.activation_bytes));
    json.end_object();
    json.key("outputs").begin_array();
    for (size_t o = 0; o < outputs.size(); ++o) {
      json.begin_object();
      json.key("name").value(runner.interpreter().output(static_cast<int>(o))->name);
      json.key("dtype").value(outputs[o].dtype);
      json.key("shape").array(outputs[o].shape);
      json.key("data");
      write_values(json, outputs[o]);
      if (o < written.size()) json.key("file").value(written[o]);
      json.end_object();
    }
    json.end_array();
    json.end_object();
    *out = json.take() + "\n";
    return kExitOk;
  }
  std::string text = plan.note.empty() ? "" : plan.note + "\n";
  if (request.arena_only) text += arena_text(usage);
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& tensor = *runner.interpreter().output(static_cast<int>(o));
    text += "output " + std::to_string(o) + " " + describe(tensor);
    if (o < written.size()) text += " -> " + written[o];
    text += "\n ";
    std::vector<std::string> values = value_texts(outputs[o]);
    for (size_t i = 0; i < values.size(); ++i) text += " " + values[i];
    text += "\n";
  }
  *out = text;
  return kExitOk;
}

}  // namespace gruwb::app
