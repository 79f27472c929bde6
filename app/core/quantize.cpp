#include "app/core/quantize.h"

#include <cstdarg>
#include <cstdio>

#include "app/core/fuse.h"
#include "app/core/inspect.h"
#include "app/core/text_table.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"

namespace gruwb::app {
namespace {

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// The model's one input shape, from the engine's plan.
bool model_input_shape(const std::vector<uint8_t>& bytes, const std::string& label,
                       std::vector<int32_t>* shape, std::string* error) {
  tools::LoadedModel loaded;
  if (!tools::load_model_bytes(bytes, label, &loaded, error)) return false;
  tools::ModelRunner runner;
  if (!runner.prepare(loaded.model, error)) return *error = label + ": " + *error, false;
  if (runner.input_count() != 1) {
    *error = label + ": quantizing with a dataset needs a model with one input, it has " +
             std::to_string(runner.input_count());
    return false;
  }
  const Tensor* in = runner.interpreter().input(0);
  shape->assign(in->shape.dims, in->shape.dims + in->shape.rank);
  return true;
}

// A .npy of inputs (N, ...) as a split without labels.
bool load_npy_inputs(const std::string& path, PreparedSplit* out, std::string* error) {
  tools::NpyArray x;
  if (!tools::read_npy(path, &x, error)) return false;
  if (x.shape.empty() || x.shape[0] <= 0) {
    *error = path + ": inputs need shape (N, ...) with at least one sample";
    return false;
  }
  std::vector<double> values;
  if (!tools::npy_values(x, path, &values, error)) return false;
  out->x.assign(values.begin(), values.end());
  out->labels.assign(static_cast<size_t>(x.shape[0]), 0);
  return true;
}

}  // namespace

std::vector<tools::RepresentativeSample> representative_samples(const PreparedSplit& split,
                                                                int count) {
  std::vector<tools::RepresentativeSample> samples;
  const size_t n = static_cast<size_t>(split.size());
  if (n == 0) return samples;
  const size_t size = split.x.size() / n;
  const size_t take = count <= 0 || static_cast<size_t>(count) > n ? n : static_cast<size_t>(count);
  for (size_t k = 0; k < take; ++k) {
    const size_t i = k * n / take;
    samples.push_back(
        {std::vector<float>(split.x.begin() + static_cast<std::ptrdiff_t>(i * size),
                            split.x.begin() + static_cast<std::ptrdiff_t>((i + 1) * size))});
  }
  return samples;
}

bool quantize_for_dataset(const std::vector<uint8_t>& model_bytes,
                          const PreparedSplit& representative,
                          const DatasetQuantizeOptions& options, tools::QuantizeResult* out,
                          std::string* error) {
  if (representative.size() == 0) return *error = "the representative split is empty", false;
  if (representative.x.size() % static_cast<size_t>(representative.size()) != 0) {
    *error = "the representative split has " + std::to_string(representative.x.size()) +
             " values for " + std::to_string(representative.size()) + " samples";
    return false;
  }
  return tools::quantize_model(model_bytes,
                               representative_samples(representative, options.max_samples),
                               options.quantize, out, error);
}

int run_quantize(const QuantizeRequest& r, std::string* out, std::string* err) {
  std::vector<uint8_t> bytes;
  if (!tools::read_file_bytes(r.model_path, &bytes, err)) return kExitBadInput;
  std::vector<int32_t> shape;
  if (!model_input_shape(bytes, r.model_path, &shape, err)) return kExitBadInput;
  PreparedSplit split;
  if (ends_with(r.data_path, ".npy")) {
    if (!load_npy_inputs(r.data_path, &split, err)) return kExitBadInput;
  } else {
    if (shape.size() != 3) {
      *err = r.model_path + ": a dataset needs a model input [1, T, F]; use a .npy of inputs";
      return kExitBadInput;
    }
    DatasetFiles files;
    if (!load_dataset(r.data_path, &files, err)) return kExitBadInput;
    PrepareOptions prepare;
    prepare.timesteps = shape[1];
    prepare.normalize_data = r.normalize;
    prepare.length_policy = r.length_policy;
    PreparedData data;
    if (!prepare_dataset(files, prepare, &data, err)) return kExitBadInput;
    if (data.features != shape[2]) {
      *err = r.data_path + ": " + std::to_string(data.features) + " channels, model " +
             r.model_path + " takes " + std::to_string(shape[2]);
      return kExitBadInput;
    }
    split = std::move(data.train);
  }
  DatasetQuantizeOptions options = r.options;
  options.quantize.format = tools::format_for_path(r.output_path);
  tools::QuantizeResult result;
  std::string error;
  if (!quantize_for_dataset(bytes, split, options, &result, &error)) {
    *err = r.model_path + ": " + error;
    return kExitBadInput;
  }
  if (!tools::write_file_atomically(r.output_path, result.bytes, err)) return kExitFailure;
  *out = r.json ? quantize_report_json(r, result) : quantize_report_text(r, result);
  return kExitOk;
}

std::string quantize_report_text(const QuantizeRequest& r, const tools::QuantizeResult& result) {
  std::string out;
  const tools::QuantizeOptions& q = r.options.quantize;
  append(&out, "%s -> %s (%s, %s inputs/outputs, %d representative samples)\n",
         r.model_path.c_str(), r.output_path.c_str(), tools::quantize_mode_name(q.mode),
         q.mode == tools::QuantizeMode::kDynamic ? "float"
         : q.integer_io                          ? "integer"
                                                 : "float",
         result.samples);
  append(&out, "quantized: %d op%s, kept float: %d\n", result.quantized_count(),
         result.quantized_count() == 1 ? "" : "s", result.float_count());
  for (const tools::QuantizedOpOutcome& o : result.ops) {
    append(&out, "  subgraph %d op %d %-30s %s%s%s%s\n", o.subgraph, o.op, o.name.c_str(),
           o.quantized ? "quantized" : "float: ", o.quantized && !o.reason.empty() ? " (" : "",
           o.reason.c_str(), o.quantized && !o.reason.empty() ? ")" : "");
    if (o.engine_refuses) {
      out += "      (this engine cannot run it integer yet; real TFLite does)\n";
    }
  }
  append(&out, "weights: %llu -> %llu bytes\n", ull(result.weight_bytes_before),
         ull(result.weight_bytes_after));
  append(&out, "model:   %llu -> %llu bytes (data %llu -> %llu)\n", ull(result.before.bytes),
         ull(result.after.bytes), ull(result.before.data_bytes), ull(result.after.data_bytes));
  if (result.after.arena_error.empty()) {
    append(&out, "arena:   %llu -> %llu bytes\n", ull(result.before.arena_bytes),
           ull(result.after.arena_bytes));
  } else {
    append(&out, "arena:   %llu -> not planned (%s)\n", ull(result.before.arena_bytes),
           result.after.arena_error.c_str());
  }
  if (result.diff_measured) {
    append(&out, "max |float - quantized| over the samples: %.6g\n", result.max_abs_diff);
  } else {
    append(&out, "max |float - quantized|: %s\n", result.diff_note.c_str());
  }
  return out;
}

std::string quantize_report_json(const QuantizeRequest& r, const tools::QuantizeResult& result) {
  tools::JsonWriter json;
  json.begin_object();
  json.key("input").value(r.model_path);
  json.key("output").value(r.output_path);
  json.key("mode").value(tools::quantize_mode_name(r.options.quantize.mode));
  json.key("integer_io").value(r.options.quantize.integer_io);
  json.key("samples").value(result.samples);
  json.key("ops").begin_array();
  for (const tools::QuantizedOpOutcome& o : result.ops) {
    json.begin_object();
    json.key("subgraph").value(o.subgraph);
    json.key("op").value(o.op);
    json.key("name").value(o.name);
    json.key("quantized").value(o.quantized);
    json.key(o.quantized ? "note" : "reason").value(o.reason);
    if (o.engine_refuses) json.key("engine_refuses").value(true);
    json.end_object();
  }
  json.end_array();
  json.key("weight_bytes_before").value(result.weight_bytes_before);
  json.key("weight_bytes_after").value(result.weight_bytes_after);
  json.key("before");
  write_model_size_figures(json, result.before);
  json.key("after");
  write_model_size_figures(json, result.after);
  if (result.diff_measured) {
    json.key("max_abs_diff").value(result.max_abs_diff);
  } else {
    json.key("max_abs_diff").null();
    json.key("max_abs_diff_note").value(result.diff_note);
  }
  json.end_object();
  return json.take() + "\n";
}

}  // namespace gruwb::app
