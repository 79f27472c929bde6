#include "app/core/training_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "app/core/dataset.h"
#include "engine/tools/arena_buffer.h"
#include "engine/tools/dequantize.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/memory_budget.h"
#include "engine/tools/model_writer.h"
#include "engine/tools/npy.h"
#include "engine/train/epoch_loop.h"
#include "engine/train/loss_output.h"

namespace gruwb::app {
namespace {

std::string status_text(const Status& status) {
  return std::string(status_code_name(status.code())) + ": " + status.message();
}

std::string shape_text(const std::vector<int64_t>& shape) { return tools::npy_shape_text(shape); }

std::vector<int64_t> tensor_shape(Span<int32_t> dims) {
  return std::vector<int64_t>(dims.begin(), dims.end());
}

bool is_class_loss(Loss loss) {
  return loss == Loss::kCategoricalCrossEntropy || loss == Loss::kSparseCategoricalCrossEntropy;
}

// Float arrays of any supported dtype as float32 values.
bool to_floats(const tools::NpyArray& array, const std::string& label, std::vector<float>* out,
               std::string* error) {
  if (array.dtype != "<f4" && array.dtype != "<f8") {
    *error = label + ": inputs must be float32 or float64, the array is " + array.dtype;
    return false;
  }
  std::vector<double> values;
  if (!tools::npy_values(array, label, &values, error)) return false;
  out->resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    (*out)[i] = static_cast<float>(values[i]);
    if (!std::isfinite((*out)[i])) {
      *error = non_finite_element(label, i, (*out)[i]);
      return false;
    }
  }
  return true;
}

// The arg-max of n floats (the first on ties, as NumPy's argmax).
int32_t arg_max(const float* values, int64_t n) {
  int32_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (values[i] > values[best]) best = static_cast<int32_t>(i);
  }
  return best;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::vector<int64_t>> empty_confusion(int classes) {
  return std::vector<std::vector<int64_t>>(static_cast<size_t>(classes),
                                           std::vector<int64_t>(static_cast<size_t>(classes), 0));
}

// A checkpoint file: this magic, the last finished epoch (uint32), the seed
// (uint64), then the engine Trainer's checkpoint (weights, accumulators,
// optimizer state, step). Metrics of earlier epochs are not in it.
constexpr char kCheckpointMagic[8] = {'G', 'R', 'U', 'W', 'B', 'C', 'K', '1'};

}  // namespace

// ---- TrainingData ---------------------------------------------------------------------

int64_t TrainingData::sample_elements() const {
  int64_t n = 1;
  for (int64_t d : sample_shape) n *= d;
  return n;
}

int64_t TrainingData::count() const {
  const int64_t per_sample = sample_elements();
  return per_sample > 0 ? static_cast<int64_t>(inputs.size()) / per_sample : 0;
}

int32_t TrainingData::class_of(int64_t i) const {
  if (!labels.empty()) return labels[static_cast<size_t>(i)];
  if (target_width > 0 && !targets.empty()) {
    return arg_max(targets.data() + i * target_width, target_width);
  }
  return -1;
}

bool load_training_data(const std::string& inputs_path, const std::string& labels_path,
                        TrainingData* out, std::string* error) {
  *out = TrainingData();
  out->inputs_label = inputs_path;
  out->labels_label = labels_path;
  tools::NpyArray x, y;
  if (!tools::read_npy(inputs_path, &x, error)) return false;
  if (!tools::read_npy(labels_path, &y, error)) return false;
  if (x.shape.size() < 2) {
    *error = inputs_path + ": inputs need shape (N, ...) with one sample per row, the array is " +
             shape_text(x.shape);
    return false;
  }
  if (!to_floats(x, inputs_path, &out->inputs, error)) return false;
  out->sample_shape.assign(x.shape.begin() + 1, x.shape.end());
  const int64_t n = x.shape[0];
  if (y.shape.empty() || y.shape[0] != n) {
    *error = labels_path + ": labels of shape " + shape_text(y.shape) + " do not match " +
             std::to_string(n) + " samples in " + inputs_path + " " + shape_text(x.shape);
    return false;
  }
  const bool ints = y.dtype == "<i4" || y.dtype == "<i8" || y.dtype == "|u1" || y.dtype == "|i1";
  if (ints) {
    if (y.shape.size() > 2 || (y.shape.size() == 2 && y.shape[1] != 1)) {
      *error = labels_path + ": integer labels are class ids of shape (" + std::to_string(n) +
               ",), the array is " + shape_text(y.shape);
      return false;
    }
    std::vector<double> ids;
    if (!tools::npy_values(y, labels_path, &ids, error)) return false;
    out->labels.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      // Class ids are small integers, exact as doubles.
      const int64_t v = static_cast<int64_t>(ids[static_cast<size_t>(i)]);
      if (v < 0 || v > 1000000) {
        *error = labels_path + ": label " + std::to_string(v) + " of sample " + std::to_string(i) +
                 " is not a class id";
        return false;
      }
      out->labels[static_cast<size_t>(i)] = static_cast<int32_t>(v);
    }
    return true;
  }
  if (y.dtype != "<f4" && y.dtype != "<f8") {
    *error = labels_path + ": labels must be int class ids or float rows, the array is " + y.dtype;
    return false;
  }
  std::vector<float> values;
  if (!to_floats(y, labels_path, &values, error)) return false;
  out->target_width = n > 0 ? static_cast<int64_t>(values.size()) / n : 0;
  out->targets = std::move(values);
  return true;
}

bool check_training_data(const TrainingData& data, const Model& model, Loss loss,
                         std::string* error, int32_t output_index) {
  SubgraphView sg = model.subgraph(0);
  if (output_index < 0 || output_index >= static_cast<int32_t>(sg.outputs.size)) {
    *error = "loss output " + std::to_string(output_index) + " asked, the model has " +
             std::to_string(sg.outputs.size) + " output(s)";
    return false;
  }
  if (sg.inputs.size < 1 || sg.outputs.size < 1) {
    *error = "training needs a model with an input and an output, this one has " +
             std::to_string(sg.inputs.size) + " inputs and " + std::to_string(sg.outputs.size) +
             " outputs";
    return false;
  }
  // Input 0 takes the samples; further inputs are a streaming model's
  // recurrent states, held at zero (each sample starts from the zero state).
  for (size_t i = 1; i < sg.inputs.size; ++i) {
    TensorView state = sg.tensor(sg.inputs[i]);
    if (state.type != TensorType::FLOAT32) {
      *error = std::string("model input ") + std::to_string(i) + " '" + state.name + "' is " +
               tensor_type_name(state.type) +
               ": the samples go to input 0, further inputs must be float states (held at zero)";
      return false;
    }
  }
  TensorView input = sg.tensor(sg.inputs[0]);
  TensorView output = sg.tensor(sg.outputs[static_cast<size_t>(output_index)]);
  std::vector<int64_t> input_shape = tensor_shape(input.shape);
  std::vector<int64_t> expected = {-1};
  if (!input_shape.empty() && input_shape[0] == 1) {
    expected.insert(expected.end(), input_shape.begin() + 1, input_shape.end());
  } else {
    expected.insert(expected.end(), input_shape.begin(), input_shape.end());
  }
  std::vector<int64_t> actual = {data.count()};
  actual.insert(actual.end(), data.sample_shape.begin(), data.sample_shape.end());
  const bool shape_ok =
      std::equal(expected.begin() + 1, expected.end(), actual.begin() + 1, actual.end());
  if (!shape_ok) {
    std::string want = "(N";
    for (size_t i = 1; i < expected.size(); ++i) want += ", " + std::to_string(expected[i]);
    want += expected.size() == 2 ? ",)" : ")";
    *error = data.inputs_label + ": inputs of shape " + shape_text(actual) +
             " do not fit model input '" + input.name + "' " + shape_text(input_shape) +
             ": expected " + want;
    return false;
  }
  if (data.count() < 1) {
    *error = data.inputs_label + ": no samples";
    return false;
  }
  if (static_cast<int64_t>(data.inputs.size()) != data.count() * data.sample_elements()) {
    *error = data.inputs_label + ": " + std::to_string(data.inputs.size()) +
             " values are not a whole number of samples of " +
             std::to_string(data.sample_elements());
    return false;
  }
  const std::vector<int64_t> output_shape = tensor_shape(output.shape);
  const int64_t out_elements = static_cast<int64_t>(output.element_count());
  const int64_t classes = output_shape.empty() ? 1 : output_shape.back();
  const int64_t n = data.count();
  if (!data.labels.empty()) {
    if (static_cast<int64_t>(data.labels.size()) != n) {
      *error = data.labels_label + ": " + std::to_string(data.labels.size()) + " labels for " +
               std::to_string(n) + " samples in " + data.inputs_label;
      return false;
    }
    if (out_elements != classes) {
      *error = data.labels_label + ": class ids need one output row, model output '" + output.name +
               "' is " + shape_text(output_shape);
      return false;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (data.labels[static_cast<size_t>(i)] >= classes) {
        *error = data.labels_label + ": label " +
                 std::to_string(data.labels[static_cast<size_t>(i)]) + " of sample " +
                 std::to_string(i) + " is not a class of model output '" + output.name + "' " +
                 shape_text(output_shape) + " (0.." + std::to_string(classes - 1) + ")";
        return false;
      }
    }
    return true;
  }
  if (data.targets.empty() || data.target_width < 1) {
    *error = data.labels_label + ": no labels";
    return false;
  }
  if (static_cast<int64_t>(data.targets.size()) != n * data.target_width) {
    *error = data.labels_label + ": labels of shape " +
             shape_text({static_cast<int64_t>(data.targets.size()) /
                             std::max<int64_t>(1, data.target_width),
                         data.target_width}) +
             " do not match " + std::to_string(n) + " samples in " + data.inputs_label;
    return false;
  }
  if (data.target_width != out_elements) {
    *error = data.labels_label + ": labels of shape " + shape_text({n, data.target_width}) +
             " do not fit model output '" + output.name + "' " + shape_text(output_shape) +
             ": expected (" + std::to_string(n) + ", " + std::to_string(out_elements) + ")";
    return false;
  }
  if (loss == Loss::kSparseCategoricalCrossEntropy && out_elements != classes) {
    *error = data.labels_label +
             ": sparse cross entropy from label rows needs one output row, "
             "model output '" +
             std::string(output.name) + "' is " + shape_text(output_shape);
    return false;
  }
  return true;
}

bool choose_training_output(const Model& model, const std::string& name, const TrainingData& data,
                            int32_t* output, std::string* error) {
  LossOutputRequest request;
  request.name = name.c_str();
  if (!data.labels.empty()) {
    request.class_count = *std::max_element(data.labels.begin(), data.labels.end()) + 1;
  } else if (data.target_width > 0) {
    request.label_width = data.target_width;
  }
  Status status = choose_loss_output(model, request, output);
  if (!status.ok()) *error = status.message();
  return status.ok();
}

std::vector<ModelOutputInfo> model_outputs(const Model& model) {
  std::vector<ModelOutputInfo> outputs;
  if (!model.table()) return outputs;
  SubgraphView sg = model.subgraph(0);
  for (size_t o = 0; o < sg.outputs.size; ++o) {
    TensorView t = sg.tensor(sg.outputs[o]);
    ModelOutputInfo info;
    info.name = t.name;
    info.shape.assign(t.shape.begin(), t.shape.end());
    info.is_float = t.type == TensorType::FLOAT32;
    info.activation_fed = output_is_activation_fed(model, static_cast<int32_t>(o));
    outputs.push_back(std::move(info));
  }
  return outputs;
}

bool parse_loss(const std::string& text, Loss* out) {
  if (text == "ce" || text == "categorical_crossentropy") {
    *out = Loss::kCategoricalCrossEntropy;
  } else if (text == "sparse_ce" || text == "sparse_categorical_crossentropy") {
    *out = Loss::kSparseCategoricalCrossEntropy;
  } else if (text == "mse") {
    *out = Loss::kMeanSquaredError;
  } else if (text == "mae") {
    *out = Loss::kMeanAbsoluteError;
  } else {
    return false;
  }
  return true;
}

const char* loss_name(Loss loss) {
  switch (loss) {
    case Loss::kCategoricalCrossEntropy: return "ce";
    case Loss::kSparseCategoricalCrossEntropy: return "sparse_ce";
    case Loss::kMeanSquaredError: return "mse";
    case Loss::kMeanAbsoluteError: return "mae";
  }
  return "?";
}

bool set_trainable_scope(const std::string& text, TrainingRunSpec* spec, std::string* error) {
  spec->trainable_names.clear();
  if (parse_trainable_scope(text.c_str(), &spec->config)) return true;
  if (text.rfind("last:", 0) == 0) {
    *error = "trainable scope '" + text + "': last:N needs a whole number N >= 1";
    return false;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string name = text.substr(start, comma - start);
    if (!name.empty()) spec->trainable_names.push_back(name);
    start = comma + 1;
  }
  if (spec->trainable_names.empty()) {
    *error = "trainable scope '" + text + "': give fc, all, last:N or weight tensor names";
    return false;
  }
  spec->config.scope = TrainableScope::kNames;
  return true;
}

std::string batch_passes_text(int batch_size, int rows_per_pass) {
  if (batch_size <= 1) return std::string();
  return rows_per_pass > 1 ? " (one pass of " + std::to_string(rows_per_pass) + " rows)"
                           : std::string(" (single-sample passes)");
}

std::string trainable_scope_text(const TrainingRunSpec& spec) {
  switch (spec.config.scope) {
    case TrainableScope::kAll: return "all";
    case TrainableScope::kFc: return "fc";
    case TrainableScope::kLastN: return "last:" + std::to_string(spec.config.last_n);
    case TrainableScope::kNames: {
      std::string names;
      for (const std::string& name : spec.trainable_names)
        names += (names.empty() ? "" : ",") + name;
      return names;
    }
  }
  return "?";
}

// ---- metrics --------------------------------------------------------------------------

ClassMetrics class_metrics(const std::vector<std::vector<int64_t>>& confusion) {
  ClassMetrics m;
  m.confusion = confusion;
  const size_t c = confusion.size();
  m.precision.assign(c, 0.0);
  m.recall.assign(c, 0.0);
  int64_t correct = 0;
  for (size_t k = 0; k < c; ++k) {
    int64_t true_k = 0, predicted_k = 0;
    for (size_t j = 0; j < c; ++j) {
      true_k += confusion[k][j];
      predicted_k += confusion[j][k];
      m.samples += confusion[k][j];
    }
    correct += confusion[k][k];
    if (predicted_k > 0) m.precision[k] = static_cast<double>(confusion[k][k]) / predicted_k;
    if (true_k > 0) m.recall[k] = static_cast<double>(confusion[k][k]) / true_k;
  }
  if (m.samples > 0) m.accuracy = static_cast<double>(correct) / static_cast<double>(m.samples);
  return m;
}

void write_gradient_stats(tools::JsonWriter& json,
                          const std::vector<EpochGradientStats>& gradients) {
  json.key("gradients").begin_array();
  for (const EpochGradientStats& g : gradients) {
    json.begin_object();
    json.key("name").value(g.name);
    json.key("mean_norm").value(g.mean_norm);
    json.key("last_norm").value(g.last_norm);
    json.key("max_norm").value(g.max_norm);
    json.key("min").value(g.min);
    json.key("max").value(g.max);
    json.end_object();
  }
  json.end_array();
}

void write_training_memory(tools::JsonWriter& json, const TrainingMemory& m) {
  json.begin_object();
  json.key("total").value(static_cast<uint64_t>(m.total));
  json.key("weights").value(static_cast<uint64_t>(m.weight_bytes));
  json.key("gradients").value(static_cast<uint64_t>(m.gradient_bytes));
  json.key("optimizer").value(static_cast<uint64_t>(m.optimizer_bytes));
  json.key("activations").value(static_cast<uint64_t>(m.activation_bytes));
  json.key("other").value(static_cast<uint64_t>(m.other_bytes));
  json.end_object();
}

const char* training_outcome_name(TrainingOutcome outcome) {
  switch (outcome) {
    case TrainingOutcome::kNotRun: return "not run";
    case TrainingOutcome::kCompleted: return "completed";
    case TrainingOutcome::kEarlyStopped: return "early stopped";
    case TrainingOutcome::kCancelled: return "cancelled";
    case TrainingOutcome::kFailed: return "failed";
  }
  return "?";
}

// ---- TrainingSession ------------------------------------------------------------------

struct TrainingSession::State {
  tools::LoadedModel loaded;
  tools::ArenaBuffer storage;
  Trainer trainer;
  std::vector<const char*> names;  // config.names points here
  std::vector<uint32_t> order;     // sample order of the current epoch (loop's)
  EpochLoop loop;
  std::vector<std::vector<float>> best_weights;
  double best_monitor = 0.0;
  int epochs_without_improvement = 0;
  std::vector<float> output_copy;

  Status prepare_in(const TrainingConfig& config, size_t bytes) {
    if (!storage.allocate(bytes)) {
      // Not kOutOfMemory: that asks the caller for a larger arena.
      return Status::error(StatusCode::kInternal,
                           "out of memory: cannot allocate %zu bytes of arena", bytes);
    }
    return trainer.prepare(loaded.model, config, storage.data(), bytes);
  }
};

std::string TrainingSession::dequantized_note() const {
  if (integer_tensors_ > 0) {
    return "full-integer model: training its float form (" + std::to_string(integer_tensors_) +
           " quantized tensors as float32, inputs and outputs in real units); the trained model "
           "is float32: `gruwb quantize` makes it integer again";
  }
  if (dequantized_weights_ == 0) return "";
  return "hybrid model: " + std::to_string(dequantized_weights_) +
         " INT8 weight tensor(s) train as float32 copies; the trained model keeps them as float32";
}

std::string TrainingSession::fused_note() const {
  if (!loop_plan_.fused) return loop_plan_.note;
  return "training " + loop_plan_.fused_form +
         "; the trained model is saved in that form; --as-written trains the file as written";
}

TrainingSession::TrainingSession() = default;
TrainingSession::~TrainingSession() = default;

Trainer& TrainingSession::trainer() { return state_->trainer; }
const Model& TrainingSession::model() const { return state_->loaded.model; }
ModelFormat TrainingSession::model_format() const { return state_->loaded.model.format(); }
TrainingMemory TrainingSession::memory() const { return state_->trainer.memory(); }
int32_t TrainingSession::loss_output() const { return state_->trainer.loss_output(); }
std::string TrainingSession::loss_output_name() const {
  return state_->trainer.interpreter().output(state_->trainer.loss_output())->name;
}

bool TrainingSession::prepare(const TrainingRunSpec& spec, const TrainingData& train,
                              const TrainingData* val, std::string* error) {
  state_ = std::make_unique<State>();
  result_ = TrainingResult();
  next_epoch_ = 1;
  spec_ = spec;
  State& s = *state_;
  if (spec_.epochs < 0) {
    *error = "epochs must be >= 0, got " + std::to_string(spec_.epochs);
    return false;
  }
  tools::DequantizeResult dequantized;
  std::vector<uint8_t> bytes;
  if (!tools::float_training_model(spec_.model_bytes, &bytes, &dequantized, error)) {
    *error = spec_.model_label + ": " + *error;
    return false;
  }
  dequantized_weights_ = dequantized.tensors;
  integer_tensors_ = dequantized.integer_tensors;
  // The scopes that name the same weights in both forms; a layer count or tensor names are
  // the file's.
  LoopPlanOptions plan_options;
  plan_options.fuse_loops = !spec_.as_written && (spec_.config.scope == TrainableScope::kAll ||
                                                  spec_.config.scope == TrainableScope::kFc);
  loop_plan_ = plan_loops(bytes, plan_options);
  bytes.swap(loop_plan_.bytes);
  loop_plan_.bytes.clear();
  if (!tools::load_model_bytes(std::move(bytes), spec_.model_label, &s.loaded, error)) {
    return false;
  }
  spec_.model_bytes.clear();  // the loaded model owns a copy
  spec_.model_bytes.shrink_to_fit();
  if (spec_.config.scope == TrainableScope::kNames) {
    if (spec_.trainable_names.empty()) {
      *error = "no weight tensor names to train";
      return false;
    }
    for (const std::string& name : spec_.trainable_names) s.names.push_back(name.c_str());
    spec_.config.names = s.names.data();
    spec_.config.name_count = static_cast<int32_t>(s.names.size());
  }
  // --output NAME, else the automatic choice with what the labels fill;
  // an explicit config.loss_output (a board's settings) stands when no name is given.
  if (!spec_.loss_output.empty() || spec_.config.loss_output < 0) {
    if (!choose_training_output(s.loaded.model, spec_.loss_output, train, &spec_.config.loss_output,
                                error)) {
      *error = spec_.model_label + ": " + *error;
      return false;
    }
  }
  const int32_t output = spec_.config.loss_output;
  if (!check_training_data(train, s.loaded.model, spec_.config.loss, error, output)) return false;
  if (val && !check_training_data(*val, s.loaded.model, spec_.config.loss, error, output)) {
    return false;
  }
  train_ = train;
  has_val_ = val != nullptr;
  if (val) val_ = *val;

  if (spec_.batched_passes && spec_.config.batch_size > 1) spec_.config.one_pass_batches = true;
  // A generous first arena learns the exact size; the run then uses exactly
  // that, as a board would.
  size_t probe = size_t{4} << 20;
  Status status;
  for (int attempt = 0; attempt < 4; ++attempt) {
    status = s.prepare_in(spec_.config, probe);
    if (status.ok() || status.code() != StatusCode::kOutOfMemory) break;
    const size_t needed = s.trainer.arena_bytes_needed();
    if (!tools::within_memory_budget(needed, s.trainer.interpreter().arena_usage(), error)) {
      *error = spec_.model_label + ": " + *error;
      return false;
    }
    probe = std::max(saturating_add(needed, 4096), probe * 2);
  }
  if (status.ok()) status = s.prepare_in(spec_.config, s.trainer.arena_bytes_needed());
  if (!status.ok()) {
    *error = spec_.model_label + ": " + status_text(status);
    return false;
  }
  Trainer& t = s.trainer;
  const Tensor* out = t.output();
  classes_ = out->shape.rank > 0 ? out->shape.dims[out->shape.rank - 1] : 1;
  result_.memory = t.memory();
  for (int w = 0; w < t.weight_count(); ++w) {
    const Tensor* weight = t.weight(w);
    WeightInfo info;
    info.name = weight->name;
    info.tensor = t.weight_tensor_index(w);
    info.shape.assign(weight->shape.dims, weight->shape.dims + weight->shape.rank);
    info.elements = weight->elements();
    result_.trainable_parameters += info.elements;
    result_.trainable.push_back(info);
  }
  if (spec_.resume) {
    if (spec_.checkpoint_path.empty()) {
      *error = "resume needs a checkpoint path";
      return false;
    }
    if (!load_checkpoint(error)) return false;
  }
  for (int i = 1; i < t.input_count(); ++i) std::memset(t.input(i)->data, 0, t.input(i)->bytes);
  t.set_observer(spec_.observer);
  return true;
}

bool TrainingSession::fill_sample(const TrainingData& data, int64_t i, std::string* error,
                                  int32_t row) {
  Trainer& t = state_->trainer;
  if (row == 0) {
    for (int s = 1; s < t.input_count(); ++s) std::memset(t.input(s)->data, 0, t.input(s)->bytes);
  }
  Tensor* input = t.input(0);
  const int64_t per_sample = data.sample_elements();
  std::memcpy(input->f32() + row * per_sample, data.inputs.data() + i * per_sample,
              static_cast<size_t>(per_sample) * sizeof(float));
  const int64_t width = t.label_count() / t.batch_rows();  // one sample's labels
  float* label = t.label() + row * width;
  if (spec_.config.loss == Loss::kSparseCategoricalCrossEntropy) {
    label[0] = static_cast<float>(data.class_of(i));
  } else if (!data.labels.empty()) {
    std::fill(label, label + width, 0.f);
    label[data.labels[static_cast<size_t>(i)]] = 1.f;
  } else if (data.target_width == width) {
    std::memcpy(label, data.targets.data() + i * width, static_cast<size_t>(width) * sizeof(float));
  } else {
    *error = data.labels_label + ": label rows of " + std::to_string(data.target_width) +
             " values, the trainer expects " + std::to_string(width);
    return false;
  }
  return true;
}

bool TrainingSession::evaluate(const TrainingData& data, double* loss, ClassMetrics* classes,
                               std::string* error) {
  Trainer& t = state_->trainer;
  std::vector<std::vector<int64_t>> confusion = empty_confusion(classes_);
  double sum = 0.0;
  const int64_t n = data.count();
  // As many samples per pass as the trainer has batch rows.
  const int64_t rows = t.batch_rows();
  std::vector<float> losses(static_cast<size_t>(rows));
  for (int64_t i0 = 0; i0 < n; i0 += rows) {
    const int32_t count = static_cast<int32_t>(std::min(rows, n - i0));
    for (int32_t k = 0; k < count; ++k) {
      if (!fill_sample(data, i0 + k, error, k)) return false;
    }
    Status status = t.evaluate_rows(count, losses.data());
    if (!status.ok()) {
      *error = data.inputs_label + ": sample " + std::to_string(i0) + ": " + status_text(status);
      return false;
    }
    for (int32_t k = 0; k < count; ++k) {
      sum += losses[static_cast<size_t>(k)];
      const int32_t truth = data.class_of(i0 + k);
      const int32_t prediction = t.predicted_class(k);
      if (truth >= 0 && truth < classes_ && prediction >= 0 && prediction < classes_) {
        ++confusion[static_cast<size_t>(truth)][static_cast<size_t>(prediction)];
      }
    }
  }
  *loss = n > 0 ? sum / static_cast<double>(n) : 0.0;
  if (classes) *classes = class_metrics(confusion);
  return true;
}

bool TrainingSession::gradients(const TrainingData& data, double* loss,
                                std::vector<WeightGradient>* out, std::string* error) {
  Trainer& t = state_->trainer;
  t.clear_gradients();
  double sum = 0.0;
  const int64_t n = data.count();
  // Batched passes give each pass's mean gradient: `summed` adds them up
  // weighted by their rows (single samples sum in the trainer).
  const int64_t rows = t.batch_rows();
  std::vector<std::vector<double>> summed;
  if (rows > 1) {
    for (int w = 0; w < t.weight_count(); ++w) {
      summed.emplace_back(static_cast<size_t>(t.weight_gradient(w)->elements()), 0.0);
    }
  }
  std::vector<float> losses(static_cast<size_t>(rows));
  for (int64_t i0 = 0; i0 < n; i0 += rows) {
    const int32_t count = static_cast<int32_t>(std::min(rows, n - i0));
    for (int32_t k = 0; k < count; ++k) {
      if (!fill_sample(data, i0 + k, error, k)) return false;
    }
    Status status = t.accumulate_rows(count, losses.data());
    if (!status.ok()) {
      *error = data.inputs_label + ": sample " + std::to_string(i0) + ": " + status_text(status);
      t.clear_gradients();
      return false;
    }
    for (int32_t k = 0; k < count; ++k) sum += losses[static_cast<size_t>(k)];
    if (rows == 1) continue;
    for (int w = 0; w < t.weight_count(); ++w) {
      const Tensor* g = t.weight_gradient(w);
      std::vector<double>& total = summed[static_cast<size_t>(w)];
      for (int64_t e = 0; e < g->elements(); ++e) {
        total[static_cast<size_t>(e)] += static_cast<double>(g->f32()[e]) * count;
      }
    }
    t.clear_gradients();
  }
  *loss = n > 0 ? sum / static_cast<double>(n) : 0.0;
  out->clear();
  const double mean = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  for (int w = 0; w < t.weight_count(); ++w) {
    const Tensor* g = t.weight_gradient(w);
    WeightGradient gradient;
    gradient.weight = result_.trainable[static_cast<size_t>(w)];
    gradient.values.resize(static_cast<size_t>(g->elements()));
    double norm2 = 0.0;
    for (int64_t e = 0; e < g->elements(); ++e) {
      const double value = rows > 1 ? summed[static_cast<size_t>(w)][static_cast<size_t>(e)]
                                    : static_cast<double>(g->f32()[e]);
      const float v = static_cast<float>(value * mean);
      gradient.values[static_cast<size_t>(e)] = v;
      norm2 += static_cast<double>(v) * v;
    }
    gradient.norm = std::sqrt(norm2);
    if (!gradient.values.empty()) {
      const auto [lo, hi] = std::minmax_element(gradient.values.begin(), gradient.values.end());
      gradient.min = *lo;
      gradient.max = *hi;
    }
    out->push_back(std::move(gradient));
  }
  t.clear_gradients();  // nothing of this reaches a later update
  return true;
}

void TrainingSession::snapshot_weights(std::vector<std::vector<float>>* out) {
  Trainer& t = state_->trainer;
  out->resize(static_cast<size_t>(t.weight_count()));
  for (int w = 0; w < t.weight_count(); ++w) {
    const Tensor* weight = t.weight(w);
    (*out)[static_cast<size_t>(w)].assign(weight->f32(), weight->f32() + weight->elements());
  }
}

void TrainingSession::restore_weights(const std::vector<std::vector<float>>& weights) {
  Trainer& t = state_->trainer;
  for (int w = 0; w < t.weight_count() && static_cast<size_t>(w) < weights.size(); ++w) {
    std::copy(weights[static_cast<size_t>(w)].begin(), weights[static_cast<size_t>(w)].end(),
              t.weight(w)->f32());
  }
}

bool TrainingSession::run_epoch(int epoch, const TrainingCallback& callback,
                                const std::atomic<bool>* cancel, EpochMetrics* metrics,
                                bool* cancelled) {
  State& s = *state_;
  Trainer& t = s.trainer;
  const auto start = std::chrono::steady_clock::now();
  const int64_t n = train_.count();
  // The engine's epoch loop (engine/train/epoch_loop.h) orders the samples,
  // steps the optimizer and counts loss and hits, as on a board.
  EpochLoop& loop = s.loop;
  if (loop.done() || static_cast<int>(loop.epoch()) != epoch - 1 || loop.position() != 0) {
    EpochPlan plan;
    plan.samples = static_cast<uint32_t>(n);
    plan.epochs = static_cast<uint32_t>(spec_.epochs);
    plan.batch_size = spec_.config.batch_size;
    plan.seed = spec_.seed;
    plan.shuffle = spec_.shuffle;
    s.order.resize(static_cast<size_t>(n));  // n >= 1: check_training_data
    loop.begin(plan, s.order.data(), static_cast<uint32_t>(epoch - 1));
  }
  std::vector<EpochGradientStats> gradients;
  if (spec_.gradient_statistics) {
    for (const WeightInfo& info : result_.trainable) {
      EpochGradientStats g;
      g.name = info.name;
      g.tensor = info.tensor;
      g.min = INFINITY;
      g.max = -INFINITY;
      gradients.push_back(g);
    }
  }
  std::vector<std::vector<int64_t>> confusion = empty_confusion(classes_);
  int64_t epoch_steps = 0;
  double batch_loss = 0.0;
  EpochStep step;
  std::string error;
  // One pass per batch when the trainer takes batch rows (batched_passes),
  // else one per sample; either way the figures are per sample.
  const bool batched = t.batch_rows() > 1;
  std::vector<EpochStep> steps(static_cast<size_t>(t.batch_rows()));
  std::vector<int32_t> truths(steps.size());
  std::vector<float> row_losses(steps.size());
  while (!step.epoch_end) {
    if (cancel && cancel->load(std::memory_order_relaxed)) {
      t.clear_gradients();  // an unfinished batch never reaches the weights
      loop = EpochLoop();   // the epoch starts over when the run goes on
      *cancelled = true;
      return true;
    }
    const uint32_t count = batched ? loop.pass_samples(t) : 1;
    for (uint32_t k = 0; k < count; ++k) {
      const int64_t i = batched ? loop.sample_at(k) : loop.sample();
      if (!fill_sample(train_, i, &error, static_cast<int32_t>(k))) {
        result_.error = error;
        return false;
      }
      truths[k] = train_.class_of(i);
    }
    const int64_t first = loop.sample();
    Status status =
        batched ? loop.accumulate_rows(t, truths.data(), count, row_losses.data(), steps.data())
                : loop.accumulate(t, truths[0], &steps[0]);
    if (!status.ok()) {
      result_.error = train_.inputs_label + ": epoch " + std::to_string(epoch) + ", sample " +
                      std::to_string(first) + (count > 1 ? " and the batch after it" : "") + ": " +
                      status_text(status);
      loop = EpochLoop();
      return false;
    }
    for (uint32_t k = 0; k < count; ++k) {
      const int32_t truth = truths[k];
      const int32_t predicted = steps[k].predicted;
      if (truth >= 0 && truth < classes_ && predicted >= 0 && predicted < classes_) {
        ++confusion[static_cast<size_t>(truth)][static_cast<size_t>(predicted)];
      }
      batch_loss += steps[k].loss;
    }
    step = steps[count - 1];
    const int pending = t.pending_samples();
    if (step.update && spec_.gradient_statistics) {
      const float mean = 1.f / static_cast<float>(pending);
      for (size_t w = 0; w < gradients.size(); ++w) {
        const Tensor* g = t.weight_gradient(static_cast<int>(w));
        double norm2 = 0.0;
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t e = 0; e < g->elements(); ++e) {
          const float v = g->f32()[e] * mean;
          norm2 += static_cast<double>(v) * v;
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        EpochGradientStats& stats = gradients[w];
        const double norm = std::sqrt(norm2);
        stats.mean_norm += norm;
        stats.last_norm = norm;
        stats.max_norm = std::max(stats.max_norm, norm);
        stats.min = std::min(stats.min, lo);
        stats.max = std::max(stats.max, hi);
      }
    }
    status = loop.finish(t, &step);
    if (!status.ok()) {
      result_.error =
          spec_.model_label + ": epoch " + std::to_string(epoch) + ": " + status_text(status);
      loop = EpochLoop();
      return false;
    }
    if (!step.update) continue;
    ++epoch_steps;
    ++result_.steps;
    if (callback) {
      TrainingEvent event;
      event.kind = TrainingEvent::Kind::kStep;
      event.epoch = epoch;
      event.epochs = spec_.epochs;
      event.step = t.step();
      event.epoch_samples_done = step.samples;
      event.epoch_samples = n;
      event.step_loss = batch_loss / pending;
      event.running_loss = step.loss_sum / static_cast<double>(step.samples);
      callback(event);
    }
    batch_loss = 0.0;
  }
  for (EpochGradientStats& g : gradients) {
    if (epoch_steps > 0) g.mean_norm /= static_cast<double>(epoch_steps);
  }
  metrics->epoch = epoch;
  metrics->steps = t.step();
  metrics->train_loss = step.loss_sum / static_cast<double>(step.samples);
  // As trained, like the loss (Keras' convention; the board's METRIC too).
  metrics->train_classes = class_metrics(confusion);
  metrics->train_accuracy = static_cast<double>(step.hits) / static_cast<double>(step.samples);
  metrics->gradients = std::move(gradients);
  metrics->seconds = seconds_since(start);
  metrics->samples_per_second =
      metrics->seconds > 0.0 ? static_cast<double>(n) / metrics->seconds : 0.0;
  result_.samples += n;
  return true;
}

TrainingResult TrainingSession::run(const TrainingCallback& callback,
                                    const std::atomic<bool>* cancel) {
  auto finish = [&](TrainingOutcome outcome) -> TrainingResult {
    result_.outcome = outcome;
    if (callback) {
      TrainingEvent event;
      event.kind = TrainingEvent::Kind::kFinished;
      event.epochs = spec_.epochs;
      event.step = result_.steps;
      event.outcome = outcome;
      event.error = result_.error;
      callback(event);
    }
    return result_;
  };
  if (!state_) {
    result_.error = "the training session is not prepared";
    return finish(TrainingOutcome::kFailed);
  }
  State& s = *state_;
  const auto start = std::chrono::steady_clock::now();
  const bool has_accuracy = is_class_loss(spec_.config.loss) || !train_.labels.empty();
  auto evaluate_val = [&](EpochMetrics* m) -> bool {
    m->has_accuracy = has_accuracy;
    if (!has_val_) return true;
    m->has_val = true;
    if (!evaluate(val_, &m->val_loss, &m->val_classes, &result_.error)) return false;
    m->val_accuracy = m->val_classes.accuracy;
    return true;
  };
  auto emit_epoch = [&](const EpochMetrics& m) {
    if (!callback) return;
    TrainingEvent event;
    event.kind = TrainingEvent::Kind::kEpoch;
    event.epoch = m.epoch;
    event.epochs = spec_.epochs;
    event.step = m.steps;
    event.epoch_samples_done = train_.count();
    event.epoch_samples = train_.count();
    event.running_loss = m.train_loss;
    event.metrics = m;
    callback(event);
  };

  if (spec_.evaluate_initial && next_epoch_ == 1 && result_.epochs.empty()) {
    EpochMetrics initial;
    const auto t0 = std::chrono::steady_clock::now();
    if (!evaluate(train_, &initial.train_loss, &initial.train_classes, &result_.error) ||
        !evaluate_val(&initial)) {
      result_.seconds += seconds_since(start);
      return finish(TrainingOutcome::kFailed);
    }
    initial.train_accuracy = initial.train_classes.accuracy;
    initial.seconds = seconds_since(t0);
    result_.epochs.push_back(initial);
    emit_epoch(initial);
  }
  const EarlyStopping& stopping = spec_.early_stopping;
  TrainingOutcome outcome = TrainingOutcome::kCompleted;
  for (int epoch = next_epoch_; epoch <= spec_.epochs; ++epoch) {
    EpochMetrics metrics;
    bool cancelled = false;
    if (!run_epoch(epoch, callback, cancel, &metrics, &cancelled)) {
      outcome = TrainingOutcome::kFailed;
      break;
    }
    if (cancelled) {
      outcome = TrainingOutcome::kCancelled;
      break;
    }
    if (!evaluate_val(&metrics)) {
      outcome = TrainingOutcome::kFailed;
      break;
    }
    result_.epochs.push_back(metrics);
    next_epoch_ = epoch + 1;
    emit_epoch(metrics);
    if (!spec_.checkpoint_path.empty()) {
      std::string error;
      if (!save_checkpoint(epoch, &error)) {
        result_.error = error;
        outcome = TrainingOutcome::kFailed;
        break;
      }
    }
    if (stopping.patience > 0) {
      const double monitored =
          stopping.monitor_val_loss && metrics.has_val ? metrics.val_loss : metrics.train_loss;
      if (result_.best_epoch < 0 || monitored < s.best_monitor - stopping.min_delta) {
        s.best_monitor = monitored;
        result_.best_epoch = epoch;
        s.epochs_without_improvement = 0;
        if (stopping.restore_best_weights) snapshot_weights(&s.best_weights);
      } else if (++s.epochs_without_improvement >= stopping.patience) {
        outcome = TrainingOutcome::kEarlyStopped;
        break;
      }
    }
  }
  if (outcome == TrainingOutcome::kEarlyStopped && stopping.restore_best_weights &&
      !s.best_weights.empty()) {
    restore_weights(s.best_weights);
  }
  result_.seconds += seconds_since(start);
  return finish(outcome);
}

bool TrainingSession::trained_model(ModelFormat format, std::vector<uint8_t>* out,
                                    std::string* error) const {
  if (!state_) {
    *error = "the training session is not prepared";
    return false;
  }
  const State& s = *state_;
  tools::ModelDef def;
  if (!tools::unpack_model(s.loaded.model, &def, error)) {
    *error = spec_.model_label + ": " + *error;
    return false;
  }
  // A buffer shared with a tensor we did not train gets its own copy.
  std::vector<int> users(def.buffers.size(), 0);
  for (const auto& subgraph : def.subgraphs) {
    for (const auto& tensor : subgraph->tensors) {
      if (tensor->buffer < users.size()) ++users[tensor->buffer];
    }
  }
  Trainer& t = const_cast<Trainer&>(s.trainer);
  for (int w = 0; w < t.weight_count(); ++w) {
    const Tensor* weight = t.weight(w);
    // Weights of a WHILE body live in that body's subgraph, not in subgraph 0.
    int subgraph = 0, index = 0;
    t.weight_location(w, &subgraph, &index);
    fb::TensorT& tensor =
        *def.subgraphs[static_cast<size_t>(subgraph)]->tensors[static_cast<size_t>(index)];
    const uint8_t* bytes = weight->data;
    std::vector<uint8_t> data(bytes, bytes + weight->bytes);
    if (tensor.buffer == 0 || tensor.buffer >= def.buffers.size()) {
      *error = std::string("weight '") + weight->name + "' has no buffer to write into";
      return false;
    }
    if (users[tensor.buffer] > 1) {
      auto buffer = std::make_unique<fb::BufferT>();
      buffer->data = std::move(data);
      --users[tensor.buffer];
      tensor.buffer = static_cast<uint32_t>(def.buffers.size());
      def.buffers.push_back(std::move(buffer));
      users.push_back(1);
    } else {
      def.buffers[tensor.buffer]->data = std::move(data);
    }
  }
  if (!tools::write_model(def, format, out, error)) return false;
  Model check;
  Status status = Model::load(out->data(), out->size(), &check);
  if (!status.ok()) {
    *error = "the trained model does not load back: " + status_text(status);
    return false;
  }
  return true;
}

bool TrainingSession::save_trained_model(const std::string& path, std::string* error) const {
  std::vector<uint8_t> bytes;
  if (!trained_model(tools::format_for_path(path), &bytes, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return tools::write_file_atomically(path, bytes, error);
}

// ---- checkpoints (format: kCheckpointMagic above) ----

bool TrainingSession::save_checkpoint(int epoch, std::string* error) {
  Trainer& t = state_->trainer;
  std::vector<uint8_t> bytes(sizeof kCheckpointMagic + 4 + 8);
  std::memcpy(bytes.data(), kCheckpointMagic, sizeof kCheckpointMagic);
  const uint32_t e = static_cast<uint32_t>(epoch);
  std::memcpy(bytes.data() + 8, &e, 4);
  std::memcpy(bytes.data() + 12, &spec_.seed, 8);
  const size_t head = bytes.size();
  bytes.resize(head + t.checkpoint_bytes());
  size_t written = 0;
  Status status = t.save_checkpoint(bytes.data() + head, bytes.size() - head, &written);
  if (!status.ok()) {
    *error = spec_.checkpoint_path + ": " + status_text(status);
    return false;
  }
  bytes.resize(head + written);
  return tools::write_file_atomically(spec_.checkpoint_path, bytes, error);
}

bool TrainingSession::load_checkpoint(std::string* error) {
  std::vector<uint8_t> bytes;
  if (!tools::read_file_bytes(spec_.checkpoint_path, &bytes, error)) return false;
  if (bytes.size() < 20 || std::memcmp(bytes.data(), kCheckpointMagic, 8) != 0) {
    *error = spec_.checkpoint_path + ": not a GRU Workbench training checkpoint";
    return false;
  }
  uint32_t epoch = 0;
  uint64_t seed = 0;
  std::memcpy(&epoch, bytes.data() + 8, 4);
  std::memcpy(&seed, bytes.data() + 12, 8);
  if (seed != spec_.seed) {
    *error = spec_.checkpoint_path + ": saved with seed " + std::to_string(seed) +
             ", this run has seed " + std::to_string(spec_.seed) +
             " (the sample order would differ)";
    return false;
  }
  Status status = state_->trainer.load_checkpoint(bytes.data() + 20, bytes.size() - 20);
  if (!status.ok()) {
    *error = spec_.checkpoint_path + ": " + status_text(status);
    return false;
  }
  next_epoch_ = static_cast<int>(epoch) + 1;
  result_.steps = state_->trainer.step();
  return true;
}

}  // namespace gruwb::app
