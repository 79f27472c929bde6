#include "tsv_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

namespace gruwb::plugins {

namespace {

// "NAME_TRAIN.tsv" -> "NAME".
std::string problem_name(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  for (const char* split : {"_TRAIN", "_TEST"}) {
    const std::string suffix = split;
    if (stem.size() > suffix.size() &&
        stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return stem.substr(0, stem.size() - suffix.size());
    }
  }
  return stem;
}

bool parse_value(const std::string& token, float* out) {
  if (token == "NaN" || token == "nan" || token == "NAN" || token == "?") {
    *out = std::numeric_limits<float>::quiet_NaN();
    return true;
  }
  const char* begin = token.data();
  const char* end = begin + token.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars takes no '+'
  const auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

// Class names in numeric order when every label is a number (UCR's are), else as text.
std::vector<std::string> sorted_class_names(const std::set<std::string>& labels) {
  std::vector<std::string> names(labels.begin(), labels.end());
  bool numeric = true;
  for (const std::string& name : names) {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    numeric = numeric && ec == std::errc() && ptr == name.data() + name.size();
  }
  if (numeric) {
    std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return std::stod(a) < std::stod(b);
    });
  }
  return names;
}

}  // namespace

bool read_ucr_tsv(const std::string& path, bool trim_trailing_nan, app::Dataset* out,
                  std::string* error) {
  *out = app::Dataset();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  out->name = problem_name(path);
  out->source = path;
  out->channels = 1;
  std::vector<std::string> label_text;
  std::set<std::string> labels;
  std::string line;
  for (long line_number = 1; std::getline(in, line); ++line_number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_number) + ":";
    if (line.find('\t') == std::string::npos) {
      *error = where + " no tab after the label (a UCR .tsv line is: label TAB value TAB ...)";
      return false;
    }
    std::vector<float> values;
    size_t start = 0;
    std::string label;
    for (long column = 1;; ++column) {
      const size_t tab = line.find('\t', start);
      const std::string token = line.substr(start, tab == std::string::npos ? tab : tab - start);
      if (column == 1) {
        if (token.empty()) {
          *error = where + "1: empty class label";
          return false;
        }
        label = token;
      } else {
        float value = 0;
        if (!parse_value(token, &value)) {
          *error =
              where + std::to_string(start + 1) + ": '" + token.substr(0, 32) + "' is not a number";
          return false;
        }
        values.push_back(value);
      }
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    if (trim_trailing_nan) {
      while (!values.empty() && std::isnan(values.back())) values.pop_back();
    }
    if (values.empty()) {
      *error = where + " case '" + label + "' has no values";
      return false;
    }
    if (values.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      *error = where + " series too long";
      return false;
    }
    for (float v : values) out->missing_values += std::isnan(v) ? 1 : 0;
    out->lengths.push_back(static_cast<int>(values.size()));
    out->series.push_back(std::move(values));
    label_text.push_back(label);
    labels.insert(label);
  }
  if (out->series.empty()) {
    *error = path + ": no cases (empty file)";
    return false;
  }
  out->class_names = sorted_class_names(labels);
  for (const std::string& label : label_text) {
    const auto at = std::find(out->class_names.begin(), out->class_names.end(), label);
    out->labels.push_back(static_cast<int>(at - out->class_names.begin()));
  }
  return true;
}

QJsonObject TsvReaderPlugin::saveState() const {
  return QJsonObject{{"trim_trailing_nan", trim_trailing_nan_}};
}

void TsvReaderPlugin::restoreState(const QJsonObject& state) {
  trim_trailing_nan_ = state.value("trim_trailing_nan").toBool(true);
}

}  // namespace gruwb::plugins
