#pragma once
// Time-series classification datasets for training and experiments: loaders
// for UEA/UCR .ts, Weka .arff (relational), CSV (long and wide layouts) and
// NumPy .npy/.npz, then the preparation a model needs (splits, per-channel
// normalisation fitted on training data, length policy to the model's T).
// docs/datasets.md describes the accepted files. Errors name file:line:column.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gruwb::app {

// Class ids in .npy/.npz labels are at most this: classifiers that run on a microcontroller
// have tens of classes, and a stray id of 10^6 would otherwise make a million one-hot columns.
constexpr int kMaxClassId = 4095;

// One split of labelled series. Values are time-major per sample: series[i]
// holds lengths[i] x channels floats ([t][c]); missing values are NaN.
struct Dataset {
  std::string name;    // problem name (@problemName, file stem)
  std::string source;  // the file it came from
  int channels = 0;
  std::vector<std::string> class_names;  // label vocabulary in the file's order
  std::vector<std::vector<float>> series;
  std::vector<int> lengths;
  std::vector<int> labels;  // index into class_names
  int missing_values = 0;   // NaN count (the file's '?')

  int size() const { return static_cast<int>(labels.size()); }
  int min_length() const;
  int max_length() const;
  bool equal_length() const { return min_length() == max_length(); }
  std::vector<int> class_counts() const;
};

// A loaded source: the file's own train/test split when it has one (UEA
// _TRAIN/_TEST pairs, npz x_test, a CSV split column), else test is empty.
struct DatasetFiles {
  Dataset train;
  Dataset test;
  bool has_test() const { return test.size() > 0; }
};

// Single files.
bool load_ts(const std::string& path, Dataset* out, std::string* error);
bool load_arff(const std::string& path, Dataset* out, std::string* error);
// CSV in either layout (docs/datasets.md); rows with split=test go to `test`.
bool load_csv(const std::string& path, DatasetFiles* out, std::string* error);
// "<label>: element <index> is not a finite number (NaN)": the one wording every command uses for
// a value it cannot train on (labels anywhere; inputs in `train`/`grad`, Inf inputs everywhere).
std::string non_finite_element(const std::string& label, size_t index, double value);

// X [N,T,F] or [N,T] float32/float64, y [N] integer class ids (or [N,C] one-hot).
bool load_npy_pair(const std::string& x_path, const std::string& y_path, Dataset* out,
                   std::string* error);
// .npz (stored or deflated) with x_train/y_train[/x_test/y_test] or x/y.
bool load_npz(const std::string& path, DatasetFiles* out, std::string* error);

// A format the loaders above do not know, read by a plugin
// (plugins/include/gruwb/dataset_reader_plugin.h): its file name endings
// (".tsv", lower case) and a loader for one file.
struct DatasetReader {
  std::string name;  // who reads it, for messages: "tsv_reader plugin"
  std::vector<std::string> extensions;
  std::function<bool(const std::string& path, Dataset* out, std::string* error)> load;
};
// Registers `reader` at start-up (before any dataset loads); false when it has
// no loader or an ending is taken (built-in or registered).
bool add_dataset_reader(DatasetReader reader);
const std::vector<DatasetReader>& dataset_readers();

// Any of the above by path: a directory (NAME_TRAIN/NAME_TEST .ts, .arff or a
// registered reader's ending, or X_train.npy/y_train.npy[/X_test.npy/y_test.npy]),
// a NAME_TRAIN.ts/.arff (or registered ending) file (its _TEST sibling is picked
// up), a .csv, a .npz, "x.npy,y.npy".
bool load_dataset(const std::string& path, DatasetFiles* out, std::string* error);

// ---- Preparation for a model with input [1, T, F] --------------------------

enum class LengthPolicy {
  kExact,     // every series must already have length T
  kCrop,      // longer: keep the first T steps; shorter: error
  kPad,       // shorter: zero-pad at the end (after normalisation); longer: crop
  kResample,  // linear interpolation to T points
};
const char* length_policy_name(LengthPolicy policy);
bool parse_length_policy(const std::string& text, LengthPolicy* out);

struct PrepareOptions {
  int timesteps = 0;  // 0: the longest training series
  LengthPolicy length_policy = LengthPolicy::kExact;
  double validation_fraction = 0.0;  // held out of train, stratified, seeded
  double test_fraction = 0.2;        // only when the source has no test split
  uint64_t seed = 1;
  // Normalise the arrays with the training statistics; false leaves the
  // values raw (e.g. when the model does the normalisation itself).
  bool normalize_data = true;
};

// Arrays ready for the engine: x is [N, T, F] float32 C order.
struct PreparedSplit {
  std::vector<float> x;
  std::vector<int> labels;
  int size() const { return static_cast<int>(labels.size()); }
};

struct PreparedData {
  std::string name;
  int timesteps = 0;
  int features = 0;
  std::vector<std::string> class_names;
  PreparedSplit train, validation, test;
  // Keras Normalization.adapt over the training split (population variance,
  // NaN ignored): per channel.
  std::vector<float> mean, variance;
  bool data_normalized = false;
  // What was done, one line each ("length: resampled 206 -> 60 steps", ...).
  std::vector<std::string> notes;
};

bool prepare_dataset(const DatasetFiles& files, const PrepareOptions& options, PreparedData* out,
                     std::string* error);

// Samples per class (index into class_names) of a prepared split; labels outside
// [0, classes) are not counted. The dataset view's balance figures.
std::vector<int> split_class_counts(const PreparedSplit& split, size_t classes);

// A short human summary (name, splits, channels, lengths, class counts).
std::string dataset_summary(const DatasetFiles& files);

}  // namespace gruwb::app
