#include "app/core/dataset.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string_view>

#include "engine/tools/memory_budget.h"
#include "engine/tools/npy.h"

namespace gruwb::app {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool read_text(const std::string& path, std::string* text, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open file";
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  // A UTF-8 byte order mark is not part of the first header line.
  if (text->compare(0, 3, "\xEF\xBB\xBF") == 0) text->erase(0, 3);
  return true;
}

// Lines of a text file with their 1-based numbers; '\r' of CRLF files dropped.
struct Line {
  int number = 0;
  std::string_view text;
};
std::vector<Line> split_lines(const std::string& text) {
  std::vector<Line> lines;
  size_t start = 0;
  int number = 1;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({number++, line});
    start = end + 1;
  }
  return lines;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// file:line:column prefix; column is 1-based in bytes.
std::string where(const std::string& path, int line, size_t column) {
  return path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

std::string quote(std::string_view token) {
  std::string shown(token.substr(0, 40));
  if (token.size() > 40) shown += "...";
  return "'" + shown + "'";
}

// A value token: a number ('+' allowed), '?', "NaN" or empty (missing).
// Locale-independent (Qt sets LC_NUMERIC from the environment).
bool parse_value(std::string_view token, float* out, bool* missing) {
  token = trim(token);
  *missing = false;
  if (token.empty() || token == "?" || lower(token) == "nan") {
    *out = kNaN;
    *missing = true;
    return true;
  }
  if (token.front() == '+') token.remove_prefix(1);
  double value = 0;
  const auto result = std::from_chars(token.data(), token.data() + token.size(), value);
  if (result.ec != std::errc() || result.ptr != token.data() + token.size()) return false;
  *out = static_cast<float>(value);
  return std::isfinite(*out);
}

// Splits `text` at `separator` outside parentheses and quotes; each part
// keeps its offset in the line for error columns.
struct Part {
  std::string_view text;
  size_t offset = 0;
};
std::vector<Part> split_outside(std::string_view text, size_t base, char separator) {
  std::vector<Part> parts;
  int depth = 0;
  char in_quote = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : separator;
    if (in_quote) {
      if (c == in_quote) in_quote = 0;
      if (i < text.size()) continue;
    }
    if (c == '"' || c == '\'') in_quote = c;
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (c == separator && (depth == 0 || i == text.size())) {
      parts.push_back({text.substr(start, i - start), base + start});
      start = i + 1;
    }
  }
  return parts;
}

int index_of(const std::vector<std::string>& names, std::string_view name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string file_stem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.find_last_of('.');
  if (dot != std::string::npos) name.erase(dot);
  for (const char* suffix : {"_TRAIN", "_TEST"}) {
    const size_t n = std::strlen(suffix);
    if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0)
      name.erase(name.size() - n);
  }
  return name;
}

bool parse_bool_key(std::string_view value, bool* out) {
  const std::string v = lower(trim(value));
  if (v == "true") return *out = true, true;
  if (v == "false") return *out = false, true;
  return false;
}

// ---- .ts -------------------------------------------------------------------

struct TsHeader {
  bool timestamps = false, univariate = false, equal_length = true, class_label = false;
  int dimensions = 0, series_length = 0;
};

bool parse_ts_header_line(const std::string& path, const Line& line, std::string_view text,
                          TsHeader* header, Dataset* out, bool* data, std::string* error) {
  const size_t column = static_cast<size_t>(text.data() - line.text.data()) + 1;
  size_t key_end = 0;
  while (key_end < text.size() && !is_space(text[key_end])) ++key_end;
  const std::string key = lower(text.substr(1, key_end - 1));
  const std::string_view value = trim(text.substr(key_end));
  const std::string at = where(path, line.number, column);
  const auto bad_value = [&](const char* expected) {
    *error = at + "@" + key + " " + quote(value) + ": expected " + expected;
    return false;
  };
  const auto positive = [&](int* out_value) {
    int v = 0;
    const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
    if (r.ec != std::errc() || r.ptr != value.data() + value.size() || v < 1) {
      return bad_value("a positive integer");
    }
    *out_value = v;
    return true;
  };
  if (key == "problemname") {
    out->name = std::string(value);
  } else if (key == "timestamps") {
    if (!parse_bool_key(value, &header->timestamps)) return bad_value("true or false");
  } else if (key == "missing") {
    bool missing = false;  // '?' is accepted either way; counted per file
    if (!parse_bool_key(value, &missing)) return bad_value("true or false");
  } else if (key == "univariate") {
    if (!parse_bool_key(value, &header->univariate)) return bad_value("true or false");
  } else if (key == "dimensions" || key == "dimension") {
    if (!positive(&header->dimensions)) return false;
  } else if (key == "equallength") {
    if (!parse_bool_key(value, &header->equal_length)) return bad_value("true or false");
  } else if (key == "serieslength") {
    if (!positive(&header->series_length)) return false;
  } else if (key == "classlabel") {
    size_t first_end = 0;
    while (first_end < value.size() && !is_space(value[first_end])) ++first_end;
    if (!parse_bool_key(value.substr(0, first_end), &header->class_label)) {
      return bad_value("true followed by the labels, or false");
    }
    std::string_view rest = trim(value.substr(first_end));
    while (!rest.empty()) {
      size_t end = 0;
      while (end < rest.size() && !is_space(rest[end])) ++end;
      out->class_names.emplace_back(rest.substr(0, end));
      rest = trim(rest.substr(end));
    }
    if (header->class_label && out->class_names.empty()) {
      return bad_value("the class labels after 'true'");
    }
  } else if (key == "targetlabel") {
    *error = at + "@targetLabel: regression datasets are not supported (classification only)";
    return false;
  } else if (key == "data") {
    if (!header->class_label) {
      *error = at + "@data before '@classLabel true <labels>': the file has no class labels";
      return false;
    }
    *data = true;
  } else {
    *error = at + "unknown header key @" + key;
    return false;
  }
  return true;
}

// One channel "v,v,v" or, with time stamps, "(t,v),(t,v)".
bool parse_ts_channel(const std::string& path, int line, const Part& channel, bool timestamps,
                      std::vector<float>* values, int* missing, std::string* error) {
  if (trim(channel.text).empty()) {
    *error = where(path, line, channel.offset + 1) + "empty channel";
    return false;
  }
  for (const Part& token : split_outside(channel.text, channel.offset, ',')) {
    std::string_view text = trim(token.text);
    if (timestamps) {
      if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
        *error = where(path, line, token.offset + 1) + "expected a (timestamp,value) pair, got " +
                 quote(text);
        return false;
      }
      const size_t comma = text.rfind(',');
      text = comma == std::string_view::npos ? std::string_view()
                                             : text.substr(comma + 1, text.size() - comma - 2);
    }
    float value = 0;
    bool is_missing = false;
    if (!parse_value(text, &value, &is_missing)) {
      *error = where(path, line, token.offset + 1) + "not a number: " + quote(text);
      return false;
    }
    *missing += is_missing;
    values->push_back(value);
  }
  return true;
}

// Interleaves channel-major values [c][t] into time-major [t][c].
std::vector<float> interleave(const std::vector<std::vector<float>>& channels) {
  const size_t length = channels.empty() ? 0 : channels[0].size();
  std::vector<float> out(length * channels.size());
  for (size_t c = 0; c < channels.size(); ++c) {
    for (size_t t = 0; t < length; ++t) out[t * channels.size() + c] = channels[c][t];
  }
  return out;
}

// Adds one case (channel-major values) after the shape checks every format shares.
bool add_case(const std::string& path, int line, size_t column,
              std::vector<std::vector<float>>* channels, int label, Dataset* out,
              std::string* error) {
  const std::string at = where(path, line, column);
  if (out->channels == 0) out->channels = static_cast<int>(channels->size());
  if (static_cast<int>(channels->size()) != out->channels) {
    *error = at + "case has " + std::to_string(channels->size()) + " channels, expected " +
             std::to_string(out->channels);
    return false;
  }
  for (size_t c = 1; c < channels->size(); ++c) {
    if ((*channels)[c].size() != (*channels)[0].size()) {
      *error = at + "channel " + std::to_string(c) + " has " +
               std::to_string((*channels)[c].size()) + " values, channel 0 has " +
               std::to_string((*channels)[0].size());
      return false;
    }
  }
  out->lengths.push_back(static_cast<int>((*channels)[0].size()));
  out->series.push_back(interleave(*channels));
  out->labels.push_back(label);
  return true;
}

}  // namespace

int Dataset::min_length() const {
  return lengths.empty() ? 0 : *std::min_element(lengths.begin(), lengths.end());
}
int Dataset::max_length() const {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}
std::vector<int> split_class_counts(const PreparedSplit& split, size_t classes) {
  std::vector<int> counts(classes, 0);
  for (int label : split.labels) {
    if (label >= 0 && static_cast<size_t>(label) < classes) ++counts[label];
  }
  return counts;
}

std::vector<int> Dataset::class_counts() const {
  std::vector<int> counts(class_names.size(), 0);
  for (int label : labels) ++counts[static_cast<size_t>(label)];
  return counts;
}

bool load_ts(const std::string& path, Dataset* out, std::string* error) {
  *out = Dataset();
  out->source = path;
  out->name = file_stem(path);
  std::string text;
  if (!read_text(path, &text, error)) return false;
  TsHeader header;
  bool data = false;
  for (const Line& line : split_lines(text)) {
    const std::string_view content = trim(line.text);
    if (content.empty() || content.front() == '#') continue;
    if (!data) {
      if (content.front() != '@') {
        *error =
            where(path, line.number, static_cast<size_t>(content.data() - line.text.data()) + 1) +
            "expected a header line '@key value' before @data";
        return false;
      }
      if (!parse_ts_header_line(path, line, content, &header, out, &data, error)) return false;
      continue;
    }
    const size_t base = static_cast<size_t>(content.data() - line.text.data());
    std::vector<Part> fields = split_outside(content, base, ':');
    if (fields.size() < 2) {
      *error = where(path, line.number, base + 1) + "expected 'values:LABEL', found no ':'";
      return false;
    }
    const Part label_part = fields.back();
    fields.pop_back();
    const std::string_view label_text = trim(label_part.text);
    const int label = index_of(out->class_names, label_text);
    if (label < 0) {
      *error = where(path, line.number, label_part.offset + 1) + "label " + quote(label_text) +
               " is not in @classLabel";
      return false;
    }
    std::vector<std::vector<float>> channels(fields.size());
    for (size_t c = 0; c < fields.size(); ++c) {
      if (!parse_ts_channel(path, line.number, fields[c], header.timestamps, &channels[c],
                            &out->missing_values, error)) {
        return false;
      }
    }
    const size_t column = base + 1;
    if (header.dimensions > 0 && static_cast<int>(channels.size()) != header.dimensions) {
      *error = where(path, line.number, column) + "case has " + std::to_string(channels.size()) +
               " channels, @dimensions is " + std::to_string(header.dimensions);
      return false;
    }
    if (header.equal_length && header.series_length > 0 &&
        static_cast<int>(channels[0].size()) != header.series_length) {
      *error = where(path, line.number, column) + "case has " + std::to_string(channels[0].size()) +
               " values per channel, @seriesLength is " + std::to_string(header.series_length);
      return false;
    }
    if (!add_case(path, line.number, column, &channels, label, out, error)) return false;
  }
  if (!data) {
    *error = path + ": no @data section (not a .ts file?)";
    return false;
  }
  if (out->size() == 0) {
    *error = path + ": no cases after @data";
    return false;
  }
  return true;
}

// ---- .arff -----------------------------------------------------------------

namespace {

std::string_view unquote(std::string_view text) {
  text = trim(text);
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front()) {
    text = text.substr(1, text.size() - 2);
  }
  return text;
}

// "{a,b,'c d'}" -> names.
bool parse_nominal(std::string_view spec, std::vector<std::string>* names) {
  spec = trim(spec);
  if (spec.size() < 2 || spec.front() != '{' || spec.back() != '}') return false;
  for (const Part& p : split_outside(spec.substr(1, spec.size() - 2), 0, ',')) {
    names->emplace_back(unquote(p.text));
  }
  return !names->empty();
}

// Splits "'ch0\nch1',Label" at the literal two-character "\n".
std::vector<Part> split_escaped_newline(std::string_view text, size_t base) {
  std::vector<Part> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size()) {
      parts.push_back({text.substr(start), base + start});
    } else if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
      parts.push_back({text.substr(start, i - start), base + start});
      start = i + 2;
      ++i;
    }
  }
  return parts;
}

}  // namespace

bool load_arff(const std::string& path, Dataset* out, std::string* error) {
  *out = Dataset();
  out->source = path;
  out->name = file_stem(path);
  std::string text;
  if (!read_text(path, &text, error)) return false;
  bool data = false, relational = false, in_relational = false;
  int numeric_attributes = 0;
  for (const Line& line : split_lines(text)) {
    const std::string_view content = trim(line.text);
    if (content.empty() || content.front() == '%') continue;
    const size_t base = static_cast<size_t>(content.data() - line.text.data());
    const std::string at = where(path, line.number, base + 1);
    if (!data) {
      const std::string head = lower(content.substr(0, std::min<size_t>(content.size(), 10)));
      if (head.rfind("@relation", 0) == 0) {
        out->name = std::string(unquote(content.substr(9)));
      } else if (head.rfind("@attribute", 0) == 0) {
        std::string_view rest = trim(content.substr(10));
        size_t name_end = 0;
        if (!rest.empty() && (rest[0] == '\'' || rest[0] == '"')) {
          name_end = rest.find(rest[0], 1);
          name_end = name_end == std::string_view::npos ? rest.size() : name_end + 1;
        } else {
          while (name_end < rest.size() && !is_space(rest[name_end])) ++name_end;
        }
        const std::string_view type = trim(rest.substr(name_end));
        const std::string type_lower = lower(type);
        if (type_lower == "relational") {
          relational = in_relational = true;
        } else if (type_lower == "numeric" || type_lower == "real" || type_lower == "integer") {
          ++numeric_attributes;
        } else if (!type.empty() && type.front() == '{') {
          if (in_relational || !parse_nominal(type, &out->class_names)) {
            *error = at + "unsupported nominal attribute " + quote(type);
            return false;
          }
        } else {
          *error = at + "unsupported attribute type " + quote(type) +
                   " (numeric, relational or {class,...})";
          return false;
        }
      } else if (head.rfind("@end", 0) == 0) {
        in_relational = false;
      } else if (head.rfind("@data", 0) == 0) {
        if (out->class_names.empty()) {
          *error = at + "@data before a nominal class attribute {a,b,...}";
          return false;
        }
        if (numeric_attributes == 0) {
          *error = at + "@data before any numeric attribute";
          return false;
        }
        data = true;
      } else {
        *error = at + "expected @relation, @attribute, @end or @data";
        return false;
      }
      continue;
    }
    if (content.front() == '{') {
      *error = at + "sparse ARFF rows are not supported";
      return false;
    }
    std::vector<Part> fields = split_outside(content, base, ',');
    const Part label_part = fields.back();
    const std::string_view label_text = unquote(label_part.text);
    const int label = index_of(out->class_names, label_text);
    if (fields.size() < 2 || label < 0) {
      *error = where(path, line.number, label_part.offset + 1) + "class " + quote(label_text) +
               " is not one of the class attribute's values";
      return false;
    }
    fields.pop_back();
    std::vector<std::vector<float>> channels;
    if (relational) {
      // Multivariate form: one quoted field, channels separated by "\n".
      std::string_view series = trim(fields[0].text);
      size_t offset = fields[0].offset + static_cast<size_t>(series.data() - fields[0].text.data());
      if (fields.size() != 1 || series.size() < 2 || series.front() != series.back() ||
          (series.front() != '\'' && series.front() != '"')) {
        *error = where(path, line.number, fields[0].offset + 1) +
                 "expected one quoted relational value 'ch0\\nch1...',class";
        return false;
      }
      series = series.substr(1, series.size() - 2);
      ++offset;
      for (const Part& channel_part : split_escaped_newline(series, offset)) {
        channels.emplace_back();
        if (!parse_ts_channel(path, line.number, channel_part, false, &channels.back(),
                              &out->missing_values, error)) {
          return false;
        }
      }
    } else {
      channels.emplace_back();
      for (const Part& value_part : fields) {
        float value = 0;
        bool missing = false;
        if (!parse_value(value_part.text, &value, &missing)) {
          *error = where(path, line.number, value_part.offset + 1) +
                   "not a number: " + quote(trim(value_part.text));
          return false;
        }
        out->missing_values += missing;
        channels[0].push_back(value);
      }
    }
    if (static_cast<int>(channels[0].size()) != numeric_attributes) {
      *error = at + "case has " + std::to_string(channels[0].size()) + " values per channel, " +
               std::to_string(numeric_attributes) + " numeric attributes declared";
      return false;
    }
    if (!add_case(path, line.number, base + 1, &channels, label, out, error)) return false;
  }
  if (out->size() == 0) {
    *error = path + (data ? ": no rows after @data" : ": no @data section (not an .arff file?)");
    return false;
  }
  return true;
}

// ---- CSV -------------------------------------------------------------------

namespace {

// Double-quoted fields with "" escapes; offsets for error columns.
std::vector<Part> split_csv(std::string_view line, char delimiter) {
  std::vector<Part> parts;
  size_t i = 0;
  while (true) {
    const size_t start = i;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (i < line.size() && !(line[i] == '"' && (i + 1 >= line.size() || line[i + 1] != '"'))) {
        i += line[i] == '"' ? 2 : 1;
      }
      ++i;
    }
    while (i < line.size() && line[i] != delimiter) ++i;
    std::string_view field = trim(line.substr(start, i - start));
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
      field = field.substr(1, field.size() - 2);
    }
    parts.push_back({field, start});
    if (i >= line.size()) break;
    ++i;
  }
  return parts;
}

int find_column(const std::vector<std::string>& header, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
  }
  return -1;
}

// "accX_12" -> ("accX", 12); false without an integer suffix.
bool split_step_suffix(const std::string& name, std::string* channel, int* step) {
  const size_t underscore = name.find_last_of('_');
  if (underscore == std::string::npos || underscore == 0 || underscore + 1 == name.size()) {
    return false;
  }
  const char* first = name.data() + underscore + 1;
  const char* last = name.data() + name.size();
  const auto r = std::from_chars(first, last, *step);
  if (r.ec != std::errc() || r.ptr != last || *step < 0) return false;
  *channel = name.substr(0, underscore);
  return true;
}

struct CsvSample {
  int label = -1;
  bool test = false;
  std::vector<std::vector<float>> channels;
  int line = 0;
};

}  // namespace

bool load_csv(const std::string& path, DatasetFiles* out, std::string* error) {
  *out = DatasetFiles();
  std::string text;
  if (!read_text(path, &text, error)) return false;
  std::vector<Line> lines = split_lines(text);
  lines.erase(std::remove_if(lines.begin(), lines.end(),
                             [](const Line& l) { return trim(l.text).empty(); }),
              lines.end());
  if (lines.empty()) {
    *error = path + ": empty file";
    return false;
  }
  const std::string_view header_line = lines[0].text;
  char delimiter = ',';
  size_t best = 0;
  for (char d : {',', ';', '\t'}) {
    const size_t n = static_cast<size_t>(std::count(header_line.begin(), header_line.end(), d));
    if (n > best) best = n, delimiter = d;
  }
  std::vector<std::string> header;
  for (const Part& p : split_csv(header_line, delimiter)) header.push_back(lower(p.text));
  const int id_col = find_column(
      header, {"sample_id", "sample", "sampleid", "series_id", "series", "case", "window", "id"});
  const int label_col = find_column(header, {"label", "class", "target", "y", "activity"});
  const int time_col = find_column(header, {"timestamp", "time", "time_ms", "t"});
  const int split_col = find_column(header, {"split", "set", "subset"});
  if (label_col < 0) {
    *error = where(path, lines[0].number, 1) +
             "no label column (a header named label, class, target, y or activity)";
    return false;
  }
  std::vector<int> value_cols;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    if (i != id_col && i != label_col && i != time_col && i != split_col) value_cols.push_back(i);
  }
  if (value_cols.empty()) {
    *error = where(path, lines[0].number, 1) + "no value columns besides id/label/time/split";
    return false;
  }
  // Wide layout: channel and step of each value column (NAME_t groups by NAME).
  std::vector<std::string> channel_names;
  std::vector<std::pair<int, int>> wide_slot(value_cols.size(), {0, 0});  // (channel, step)
  if (id_col < 0) {
    bool grouped = true;
    std::map<std::string, int> channel_index;
    for (size_t k = 0; k < value_cols.size() && grouped; ++k) {
      std::string channel;
      int step = 0;
      grouped = split_step_suffix(header[static_cast<size_t>(value_cols[k])], &channel, &step);
      if (!grouped) break;
      auto it = channel_index.find(channel);
      if (it == channel_index.end()) {
        it = channel_index.emplace(channel, static_cast<int>(channel_names.size())).first;
        channel_names.push_back(channel);
      }
      wide_slot[k] = {it->second, step};
    }
    if (!grouped) {
      channel_names = {"value"};
      for (size_t k = 0; k < value_cols.size(); ++k) wide_slot[k] = {0, static_cast<int>(k)};
    }
  }
  std::vector<std::string> class_names;
  std::vector<CsvSample> samples;
  std::map<std::string, size_t> sample_of_id;
  int missing = 0;
  for (size_t li = 1; li < lines.size(); ++li) {
    const Line& line = lines[li];
    const std::vector<Part> fields = split_csv(line.text, delimiter);
    if (fields.size() != header.size()) {
      *error = where(path, line.number, 1) + "row has " + std::to_string(fields.size()) +
               " fields, the header has " + std::to_string(header.size());
      return false;
    }
    const Part& label_field = fields[static_cast<size_t>(label_col)];
    if (label_field.text.empty()) {
      *error = where(path, line.number, label_field.offset + 1) + "empty label";
      return false;
    }
    int label = index_of(class_names, label_field.text);
    if (label < 0) {
      label = static_cast<int>(class_names.size());
      class_names.emplace_back(label_field.text);
    }
    bool test = false;
    if (split_col >= 0) {
      const Part& f = fields[static_cast<size_t>(split_col)];
      const std::string split = lower(f.text);
      if (split == "test" || split == "testing") {
        test = true;
      } else if (split != "train" && split != "training") {
        *error = where(path, line.number, f.offset + 1) + "split " + quote(f.text) +
                 " (expected train or test)";
        return false;
      }
    }
    std::vector<float> row(value_cols.size());
    for (size_t k = 0; k < value_cols.size(); ++k) {
      const Part& f = fields[static_cast<size_t>(value_cols[k])];
      bool is_missing = false;
      if (!parse_value(f.text, &row[k], &is_missing)) {
        *error = where(path, line.number, f.offset + 1) + "column '" +
                 header[static_cast<size_t>(value_cols[k])] + "': not a number: " + quote(f.text);
        return false;
      }
      missing += is_missing;
    }
    if (time_col >= 0) {
      const Part& f = fields[static_cast<size_t>(time_col)];
      float t = 0;
      bool is_missing = false;
      if (!parse_value(f.text, &t, &is_missing) || is_missing) {
        *error = where(path, line.number, f.offset + 1) + "timestamp " + quote(f.text) +
                 " is not a number";
        return false;
      }
    }
    if (id_col >= 0) {
      const std::string id(fields[static_cast<size_t>(id_col)].text);
      auto it = sample_of_id.find(id);
      if (it == sample_of_id.end()) {
        it = sample_of_id.emplace(id, samples.size()).first;
        samples.push_back(
            {label, test, std::vector<std::vector<float>>(value_cols.size()), line.number});
      }
      CsvSample& sample = samples[it->second];
      if (sample.label != label || sample.test != test) {
        *error = where(path, line.number, label_field.offset + 1) + "sample '" + id +
                 "' changes its " + (sample.label != label ? "label" : "split") +
                 " (first row: line " + std::to_string(sample.line) + ")";
        return false;
      }
      for (size_t k = 0; k < row.size(); ++k) sample.channels[k].push_back(row[k]);
    } else {
      CsvSample sample{label, test, std::vector<std::vector<float>>(channel_names.size()),
                       line.number};
      std::vector<std::vector<std::pair<int, float>>> steps(channel_names.size());
      for (size_t k = 0; k < row.size(); ++k) {
        steps[static_cast<size_t>(wide_slot[k].first)].push_back({wide_slot[k].second, row[k]});
      }
      for (size_t c = 0; c < steps.size(); ++c) {
        std::stable_sort(steps[c].begin(), steps[c].end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& step : steps[c]) sample.channels[c].push_back(step.second);
      }
      samples.push_back(std::move(sample));
    }
  }
  if (samples.empty()) {
    *error = path + ": no data rows after the header";
    return false;
  }
  for (Dataset* d : {&out->train, &out->test}) {
    d->name = file_stem(path);
    d->source = path;
    d->class_names = class_names;
  }
  out->train.missing_values = missing;
  for (CsvSample& s : samples) {
    if (!add_case(path, s.line, 1, &s.channels, s.label, s.test ? &out->test : &out->train,
                  error)) {
      return false;
    }
  }
  if (out->test.size() > 0 && out->test.channels != out->train.channels) out->test.channels = 0;
  if (out->train.size() == 0) {
    *error = path + ": every row is in the test split; no training data";
    return false;
  }
  return true;
}

// ---- NumPy -----------------------------------------------------------------

namespace {

bool dataset_from_arrays(const tools::NpyArray& x, const tools::NpyArray& y,
                         const std::string& x_label, const std::string& y_label, Dataset* out,
                         std::string* error) {
  if (x.shape.size() != 2 && x.shape.size() != 3) {
    *error =
        x_label + ": shape " + tools::npy_shape_text(x.shape) + ", expected (N, T, F) or (N, T)";
    return false;
  }
  const int64_t n = x.shape[0], t = x.shape[1], f = x.shape.size() == 3 ? x.shape[2] : 1;
  if (x.dtype != "<f4" && x.dtype != "<f8") {
    *error = x_label + ": dtype " + x.dtype + ", expected float32 (<f4) or float64 (<f8)";
    return false;
  }
  const bool one_hot = y.shape.size() == 2 && y.shape[1] > 1;
  if (y.shape.empty() || y.shape[0] != n || y.shape.size() > 2 ||
      (y.shape.size() == 2 && y.shape[1] < 1)) {
    *error = y_label + ": shape " + tools::npy_shape_text(y.shape) + ", expected (" +
             std::to_string(n) + ",) class ids or (" + std::to_string(n) + ", C) one-hot rows";
    return false;
  }
  if (n < 1 || t < 1 || f < 1) {
    *error = x_label + ": empty array " + tools::npy_shape_text(x.shape);
    return false;
  }
  std::vector<double> xv, yv;
  if (!tools::npy_values(x, x_label, &xv, error) || !tools::npy_values(y, y_label, &yv, error))
    return false;
  // A NaN row would arg-max to class 0; Inf is no value in X (NaN there marks a missing one).
  for (size_t k = 0; k < yv.size(); ++k) {
    if (!std::isfinite(yv[k])) {
      *error = non_finite_element(y_label, k, yv[k]);
      return false;
    }
  }
  for (size_t k = 0; k < xv.size(); ++k) {
    if (std::isinf(xv[k]) || std::isinf(static_cast<float>(xv[k]))) {
      *error = non_finite_element(x_label, k, HUGE_VAL);
      return false;
    }
  }
  if (one_hot && y.shape[1] > kMaxClassId + 1) {
    *error = y_label + ": " + std::to_string(y.shape[1]) + " one-hot columns, at most " +
             std::to_string(kMaxClassId + 1) + " classes are supported";
    return false;
  }
  int classes = one_hot ? static_cast<int>(y.shape[1]) : 0;
  for (int64_t i = 0; i < n; ++i) {
    int label = -1;
    if (one_hot) {
      const double* row = &yv[static_cast<size_t>(i * classes)];
      label = static_cast<int>(std::max_element(row, row + classes) - row);
    } else {
      const double v = yv[static_cast<size_t>(i)];
      if (v < 0 || v != std::floor(v) || v > kMaxClassId) {
        *error = y_label + ": element " + std::to_string(i) + " is " + std::to_string(v) +
                 ", expected a class id 0, 1, 2, ... up to " + std::to_string(kMaxClassId);
        return false;
      }
      label = static_cast<int>(v);
      classes = std::max(classes, label + 1);
    }
    out->labels.push_back(label);
    out->lengths.push_back(static_cast<int>(t));
    std::vector<float> series(static_cast<size_t>(t * f));
    for (size_t k = 0; k < series.size(); ++k) {
      series[k] = static_cast<float>(xv[static_cast<size_t>(i * t * f) + k]);
      out->missing_values += std::isnan(series[k]);
    }
    out->series.push_back(std::move(series));
  }
  out->channels = static_cast<int>(f);
  for (int c = 0; c < classes; ++c) out->class_names.push_back(std::to_string(c));
  return true;
}

// True when [at, at + length) lies inside `b`; offsets come from the file, so the sum may wrap.
bool inside(const std::vector<uint8_t>& b, uint64_t at, uint64_t length) {
  return at <= b.size() && length <= b.size() - at;
}

bool read_u16(const std::vector<uint8_t>& b, uint64_t at, uint32_t* v) {
  if (!inside(b, at, 2)) return false;
  *v = b[at] | (b[at + 1] << 8);
  return true;
}
bool read_u32(const std::vector<uint8_t>& b, uint64_t at, uint64_t* v) {
  if (!inside(b, at, 4)) return false;
  *v = b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (static_cast<uint64_t>(b[at + 3]) << 24);
  return true;
}
bool read_u64(const std::vector<uint8_t>& b, uint64_t at, uint64_t* v) {
  uint64_t lo = 0, hi = 0;
  if (!inside(b, at, 8) || !read_u32(b, at, &lo) || !read_u32(b, at + 4, &hi)) return false;
  *v = lo | (hi << 32);
  return true;
}

// The members of a zip file (what np.savez/np.savez_compressed write:
// stored or deflated, with zip64 extras), from its central directory.
bool read_zip(const std::string& path, std::map<std::string, std::vector<uint8_t>>* members,
              std::string* error) {
  std::string text;
  if (!read_text(path, &text, error)) return false;
  const std::vector<uint8_t> b(text.begin(), text.end());
  const auto fail = [&](const std::string& what) {
    *error = path + ": not a valid .npz (zip) file: " + what;
    return false;
  };
  size_t eocd = std::string::npos;
  for (size_t i = b.size() >= 22 ? b.size() - 22 : 0; b.size() >= 22; --i) {
    if (b[i] == 0x50 && b[i + 1] == 0x4b && b[i + 2] == 5 && b[i + 3] == 6) {
      eocd = i;
      break;
    }
    if (i == 0 || b.size() - i > 65557) break;
  }
  if (eocd == std::string::npos) return fail("no end of central directory");
  uint32_t entries = 0;
  uint64_t cd_offset = 0;
  read_u16(b, eocd + 10, &entries);
  read_u32(b, eocd + 16, &cd_offset);
  if (cd_offset == 0xffffffffu || entries == 0xffffu) {
    // zip64 end of central directory locator just before the EOCD.
    uint64_t zip64_eocd = 0, count = 0;
    if (eocd < 20 || !read_u64(b, eocd - 20 + 8, &zip64_eocd) || !inside(b, zip64_eocd, 56) ||
        !read_u64(b, zip64_eocd + 32, &count) || !read_u64(b, zip64_eocd + 48, &cd_offset)) {
      return fail("bad zip64 directory");
    }
    entries = static_cast<uint32_t>(count);
  }
  uint64_t at = cd_offset;
  for (uint32_t e = 0; e < entries; ++e) {
    uint64_t signature = 0, csize = 0, usize = 0, local = 0;
    uint32_t method = 0, name_len = 0, extra_len = 0, comment_len = 0;
    if (!read_u32(b, at, &signature) || signature != 0x02014b50 || !read_u16(b, at + 10, &method) ||
        !read_u32(b, at + 20, &csize) || !read_u32(b, at + 24, &usize) ||
        !read_u16(b, at + 28, &name_len) || !read_u16(b, at + 30, &extra_len) ||
        !read_u16(b, at + 32, &comment_len) || !read_u32(b, at + 42, &local) ||
        !inside(b, at, uint64_t{46} + name_len + extra_len)) {
      return fail("bad central directory entry " + std::to_string(e));
    }
    const std::string name(reinterpret_cast<const char*>(b.data() + at + 46), name_len);
    // zip64 extra: the 0xffffffff fields follow in order usize, csize, offset.
    for (size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      uint32_t id = 0, size = 0;
      read_u16(b, x, &id);
      read_u16(b, x + 2, &size);
      if (id == 1) {
        size_t field = x + 4;
        if (usize == 0xffffffffu && read_u64(b, field, &usize)) field += 8;
        if (csize == 0xffffffffu && read_u64(b, field, &csize)) field += 8;
        if (local == 0xffffffffu) read_u64(b, field, &local);
      }
      x += 4 + size;
    }
    uint32_t local_name = 0, local_extra = 0;
    if (!read_u16(b, local + 26, &local_name) || !read_u16(b, local + 28, &local_extra)) {
      return fail("bad local header of " + name);
    }
    const uint64_t header = uint64_t{30} + local_name + local_extra;
    if (!inside(b, local, header) || !inside(b, local + header, csize) || usize > (1ull << 32)) {
      return fail("member " + name + " truncated");
    }
    const uint64_t data = local + header;
    if (usize > tools::memory_budget_bytes()) {
      return fail("member " + name + " claims " + std::to_string(usize) +
                  " bytes, over the memory budget (GRUWB_MEMORY_BUDGET_MB)");
    }
    // Every size check before the allocation: a claim the data cannot back would only make us
    // allocate (and zero) memory. Deflate expands at most 1032-fold.
    if (method != 0 && method != 8) {
      return fail("member " + name + " uses compression method " + std::to_string(method));
    }
    if (method == 0 && csize != usize) return fail("stored member " + name + " has two sizes");
    if (method == 8 && usize > csize * 1032 + 1024) {
      return fail("member " + name + " claims " + std::to_string(usize) + " bytes from " +
                  std::to_string(csize) + " compressed, more than deflate can produce");
    }
    std::vector<uint8_t> content(usize);
    if (method == 0) {
      if (usize > 0) std::memcpy(content.data(), b.data() + data, usize);  // no memcpy from/to null
    } else {
      z_stream stream{};
      if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) return fail("zlib init");
      stream.next_in = const_cast<Bytef*>(b.data() + data);
      stream.avail_in = static_cast<uInt>(csize);
      stream.next_out = content.data();
      stream.avail_out = static_cast<uInt>(usize);
      const int rc = inflate(&stream, Z_FINISH);
      inflateEnd(&stream);
      if (rc != Z_STREAM_END || stream.total_out != usize) {
        return fail("member " + name + " does not inflate");
      }
    }
    (*members)[name] = std::move(content);
    at += 46 + name_len + extra_len + comment_len;
  }
  return true;
}

bool exists(const std::string& path) {
  struct stat s {};
  return ::stat(path.c_str(), &s) == 0 && S_ISREG(s.st_mode);
}
bool is_directory(const std::string& path) {
  struct stat s {};
  return ::stat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         lower(text.substr(text.size() - suffix.size())) == lower(suffix);
}

std::vector<DatasetReader>& readers() {
  static std::vector<DatasetReader> list;
  return list;
}

const DatasetReader* reader_for(const std::string& path) {
  for (const DatasetReader& reader : readers()) {
    for (const std::string& extension : reader.extensions) {
      if (ends_with(path, extension)) return &reader;
    }
  }
  return nullptr;
}

// The endings a NAME_TRAIN file may have: .ts, .arff and the registered readers'.
std::vector<std::string> train_file_extensions() {
  std::vector<std::string> extensions = {".ts", ".arff"};
  for (const DatasetReader& reader : readers()) {
    extensions.insert(extensions.end(), reader.extensions.begin(), reader.extensions.end());
  }
  return extensions;
}

bool load_one(const std::string& path, Dataset* out, std::string* error) {
  if (ends_with(path, ".ts")) return load_ts(path, out, error);
  if (ends_with(path, ".arff")) return load_arff(path, out, error);
  if (const DatasetReader* reader = reader_for(path)) {
    *out = Dataset();
    return reader->load(path, out, error);
  }
  std::string expected = ".ts or .arff";
  for (const DatasetReader& reader : readers()) {
    for (const std::string& extension : reader.extensions) expected += ", " + extension;
  }
  *error = path + ": unknown dataset format (expected " + expected + ")";
  return false;
}

// The _TEST sibling of a NAME_TRAIN.ext path ("" if none).
std::string test_sibling(const std::string& path) {
  const size_t at = path.rfind("_TRAIN");
  if (at == std::string::npos) return "";
  std::string test = path;
  test.replace(at, 6, "_TEST");
  return exists(test) ? test : "";
}

}  // namespace

std::string non_finite_element(const std::string& label, size_t index, double value) {
  return label + ": element " + std::to_string(index) + " is not a finite number (" +
         (std::isnan(value) ? "NaN" : "infinite") + ")";
}

bool load_npy_pair(const std::string& x_path, const std::string& y_path, Dataset* out,
                   std::string* error) {
  *out = Dataset();
  out->source = x_path;
  out->name = file_stem(x_path);
  tools::NpyArray x, y;
  return tools::read_npy(x_path, &x, error) && tools::read_npy(y_path, &y, error) &&
         dataset_from_arrays(x, y, x_path, y_path, out, error);
}

bool load_npz(const std::string& path, DatasetFiles* out, std::string* error) {
  *out = DatasetFiles();
  std::map<std::string, std::vector<uint8_t>> members;
  if (!read_zip(path, &members, error)) return false;
  const auto find = [&](std::initializer_list<const char*> names) -> const std::string* {
    for (const char* name : names) {
      for (const auto& m : members) {
        if (lower(m.first) == std::string(name) + ".npy") return &m.first;
      }
    }
    return nullptr;
  };
  const std::string* x_train = find({"x_train", "x"});
  const std::string* y_train = find({"y_train", "y"});
  if (!x_train || !y_train) {
    std::string names;
    for (const auto& m : members) names += (names.empty() ? "" : ", ") + m.first;
    *error = path + ": expected arrays x_train and y_train (or x and y), found " + names;
    return false;
  }
  const auto load = [&](const std::string& x_name, const std::string& y_name, Dataset* d) {
    tools::NpyArray x, y;
    const std::string xl = path + "[" + x_name + "]", yl = path + "[" + y_name + "]";
    d->source = path;
    d->name = file_stem(path);
    return tools::parse_npy(members[x_name], xl, &x, error) &&
           tools::parse_npy(members[y_name], yl, &y, error) &&
           dataset_from_arrays(x, y, xl, yl, d, error);
  };
  if (!load(*x_train, *y_train, &out->train)) return false;
  const std::string* x_test = find({"x_test"});
  const std::string* y_test = find({"y_test"});
  if (x_test && y_test && !load(*x_test, *y_test, &out->test)) return false;
  return true;
}

bool add_dataset_reader(DatasetReader reader) {
  if (!reader.load || reader.extensions.empty()) return false;
  for (const std::string& extension : reader.extensions) {
    for (const char* taken : {".ts", ".arff", ".csv", ".npz", ".npy"}) {
      if (lower(extension) == taken) return false;
    }
    if (extension.size() < 2 || extension[0] != '.' || reader_for("x" + extension)) return false;
  }
  readers().push_back(std::move(reader));
  return true;
}

const std::vector<DatasetReader>& dataset_readers() { return readers(); }

bool load_dataset(const std::string& path, DatasetFiles* out, std::string* error) {
  *out = DatasetFiles();
  if (is_directory(path)) {
    const std::string dir = path.back() == '/' ? path : path + "/";
    const std::string name = file_stem(path.back() == '/' ? path.substr(0, path.size() - 1) : path);
    for (const std::string& ext : train_file_extensions()) {
      const std::string train = dir + name + "_TRAIN" + ext;
      if (exists(train)) return load_dataset(train, out, error);
    }
    for (const char* x : {"X_train.npy", "x_train.npy"}) {
      if (!exists(dir + x)) continue;
      const std::string y = dir + (x[0] == 'X' ? "y_train.npy" : "y_train.npy");
      if (!load_npy_pair(dir + x, y, &out->train, error)) return false;
      const std::string xt = dir + (x[0] == 'X' ? "X_test.npy" : "x_test.npy");
      if (exists(xt)) return load_npy_pair(xt, dir + "y_test.npy", &out->test, error);
      return true;
    }
    *error = path + ": no " + name + "_TRAIN.ts, " + name +
             "_TRAIN.arff or X_train.npy + y_train.npy in this folder";
    return false;
  }
  const size_t comma = path.find(',');
  if (comma != std::string::npos && ends_with(path.substr(0, comma), ".npy")) {
    return load_npy_pair(path.substr(0, comma), path.substr(comma + 1), &out->train, error);
  }
  if (!exists(path)) {
    *error = path + ": no such file or folder";
    return false;
  }
  if (ends_with(path, ".csv")) return load_csv(path, out, error);
  if (ends_with(path, ".npz")) return load_npz(path, out, error);
  if (ends_with(path, ".npy")) {
    *error = path + ": give the labels too: --data X.npy,y.npy (or a folder with X_train.npy)";
    return false;
  }
  if (!load_one(path, &out->train, error)) return false;
  const std::string test = test_sibling(path);
  if (!test.empty()) return load_one(test, &out->test, error);
  return true;
}

// ---- Preparation -------------------------------------------------------------

const char* length_policy_name(LengthPolicy policy) {
  switch (policy) {
    case LengthPolicy::kExact: return "exact";
    case LengthPolicy::kCrop: return "crop";
    case LengthPolicy::kPad: return "pad";
    case LengthPolicy::kResample: return "resample";
  }
  return "?";
}

bool parse_length_policy(const std::string& text, LengthPolicy* out) {
  for (LengthPolicy p :
       {LengthPolicy::kExact, LengthPolicy::kCrop, LengthPolicy::kPad, LengthPolicy::kResample}) {
    if (text == length_policy_name(p)) return *out = p, true;
  }
  return false;
}

namespace {

// One series to exactly T steps per the policy; padded steps are NaN (they
// become the channel mean, i.e. 0 after normalisation).
bool fit_length(const std::vector<float>& series, int length, int channels, int timesteps,
                LengthPolicy policy, const std::string& which, float* out, std::string* error) {
  const size_t f = static_cast<size_t>(channels);
  if (length == timesteps) {
    std::copy(series.begin(), series.end(), out);
    return true;
  }
  const std::string hint = " (choose a length policy: crop, pad or resample)";
  if (policy == LengthPolicy::kExact || (policy == LengthPolicy::kCrop && length < timesteps)) {
    *error = which + " has " + std::to_string(length) + " steps, the model takes " +
             std::to_string(timesteps) + hint;
    return false;
  }
  if (policy == LengthPolicy::kResample) {
    for (int t = 0; t < timesteps; ++t) {
      const double pos =
          timesteps == 1 ? 0.0 : static_cast<double>(t) * (length - 1) / (timesteps - 1);
      const int lo = static_cast<int>(std::floor(pos));
      const int hi = std::min(lo + 1, length - 1);
      const double w = pos - lo;
      for (size_t c = 0; c < f; ++c) {
        out[static_cast<size_t>(t) * f + c] =
            static_cast<float>((1 - w) * series[static_cast<size_t>(lo) * f + c] +
                               w * series[static_cast<size_t>(hi) * f + c]);
      }
    }
    return true;
  }
  const int kept = std::min(length, timesteps);
  std::copy(series.begin(), series.begin() + static_cast<long>(kept * f), out);
  std::fill(out + kept * f, out + timesteps * f, kNaN);
  return true;
}

// Stratified, seeded split: `fraction` of each class (at least one when the
// class has two or more) moves from `keep` to `moved`.
void stratified_split(const std::vector<int>& indices, const std::vector<int>& labels, int classes,
                      double fraction, std::mt19937_64* rng, std::vector<int>* keep,
                      std::vector<int>* moved) {
  std::vector<std::vector<int>> by_class(static_cast<size_t>(classes));
  for (int i : indices) by_class[static_cast<size_t>(labels[static_cast<size_t>(i)])].push_back(i);
  for (std::vector<int>& members : by_class) {
    std::shuffle(members.begin(), members.end(), *rng);
    size_t n = static_cast<size_t>(std::lround(fraction * static_cast<double>(members.size())));
    if (n == 0 && fraction > 0 && members.size() >= 2) n = 1;
    if (n >= members.size() && !members.empty()) n = members.size() - 1;
    moved->insert(moved->end(), members.begin(), members.begin() + static_cast<long>(n));
    keep->insert(keep->end(), members.begin() + static_cast<long>(n), members.end());
  }
  std::sort(keep->begin(), keep->end());
  std::sort(moved->begin(), moved->end());
}

}  // namespace

bool prepare_dataset(const DatasetFiles& files, const PrepareOptions& options, PreparedData* out,
                     std::string* error) {
  *out = PreparedData();
  const Dataset& train = files.train;
  out->name = train.name;
  out->class_names = train.class_names;
  out->features = train.channels;
  if (train.size() == 0 || train.channels < 1) {
    *error = train.source + ": no training cases";
    return false;
  }
  // Test labels by name in the training vocabulary.
  std::vector<int> test_labels;
  if (files.has_test()) {
    const Dataset& test = files.test;
    if (test.channels != train.channels) {
      *error = test.source + ": " + std::to_string(test.channels) +
               " channels, the training file " + train.source + " has " +
               std::to_string(train.channels);
      return false;
    }
    for (int label : test.labels) {
      const std::string& name = test.class_names[static_cast<size_t>(label)];
      const int index = index_of(train.class_names, name);
      if (index < 0) {
        *error = test.source + ": class '" + name + "' does not occur in the training file";
        return false;
      }
      test_labels.push_back(index);
    }
  }
  out->timesteps = options.timesteps > 0 ? options.timesteps : train.max_length();
  const int classes = static_cast<int>(train.class_names.size());
  std::mt19937_64 rng(options.seed);
  std::vector<int> all(static_cast<size_t>(train.size()));
  for (int i = 0; i < train.size(); ++i) all[static_cast<size_t>(i)] = i;
  std::vector<int> train_idx, val_idx, test_from_train;
  if (!files.has_test() && options.test_fraction > 0) {
    std::vector<int> rest;
    stratified_split(all, train.labels, classes, options.test_fraction, &rng, &rest,
                     &test_from_train);
    all = rest;
    out->notes.push_back("test: no test split in the source; held out " +
                         std::to_string(test_from_train.size()) +
                         " training cases (stratified, seed " + std::to_string(options.seed) + ")");
  }
  if (options.validation_fraction > 0) {
    stratified_split(all, train.labels, classes, options.validation_fraction, &rng, &train_idx,
                     &val_idx);
    out->notes.push_back("validation: " + std::to_string(val_idx.size()) +
                         " training cases held out (stratified, seed " +
                         std::to_string(options.seed) + ")");
  } else {
    train_idx = all;
  }
  const size_t t = static_cast<size_t>(out->timesteps), f = static_cast<size_t>(out->features);
  const auto fill = [&](const Dataset& d, const std::vector<int>& indices,
                        const std::vector<int>& labels, const char* split, PreparedSplit* s) {
    s->x.assign(indices.size() * t * f, 0.f);
    for (size_t k = 0; k < indices.size(); ++k) {
      const size_t i = static_cast<size_t>(indices[k]);
      const std::string which = d.source + ": " + split + " case " + std::to_string(i);
      if (!fit_length(d.series[i], d.lengths[i], d.channels, out->timesteps, options.length_policy,
                      which, &s->x[k * t * f], error)) {
        return false;
      }
      s->labels.push_back(labels[i]);
    }
    return true;
  };
  std::vector<int> test_all(static_cast<size_t>(files.test.size()));
  for (size_t i = 0; i < test_all.size(); ++i) test_all[i] = static_cast<int>(i);
  if (!fill(train, train_idx, train.labels, "training", &out->train) ||
      !fill(train, val_idx, train.labels, "training", &out->validation) ||
      (files.has_test() ? !fill(files.test, test_all, test_labels, "test", &out->test)
                        : !fill(train, test_from_train, train.labels, "training", &out->test))) {
    return false;
  }
  if (train.min_length() != out->timesteps || train.max_length() != out->timesteps ||
      (files.has_test() &&
       (files.test.min_length() != out->timesteps || files.test.max_length() != out->timesteps))) {
    const int lo =
        std::min(train.min_length(), files.has_test() ? files.test.min_length() : 1 << 30);
    const int hi = std::max(train.max_length(), files.test.max_length());
    out->notes.push_back(
        std::string("length: ") + length_policy_name(options.length_policy) + " " +
        (lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi)) + " -> " +
        std::to_string(out->timesteps) + " steps");
  }
  // Keras Normalization.adapt: mean and population variance per channel over
  // every step of the training split (NaN = missing or padding, ignored).
  std::vector<double> sum(f, 0), squares(f, 0);
  std::vector<size_t> count(f, 0);
  for (size_t k = 0; k < out->train.x.size(); ++k) {
    const float v = out->train.x[k];
    if (std::isnan(v)) continue;
    sum[k % f] += v;
    ++count[k % f];
  }
  out->mean.resize(f);
  for (size_t c = 0; c < f; ++c)
    out->mean[c] = count[c] ? static_cast<float>(sum[c] / count[c]) : 0.f;
  for (size_t k = 0; k < out->train.x.size(); ++k) {
    const float v = out->train.x[k];
    if (!std::isnan(v)) squares[k % f] += (v - out->mean[k % f]) * (v - out->mean[k % f]);
  }
  out->variance.resize(f);
  for (size_t c = 0; c < f; ++c) {
    out->variance[c] = count[c] ? static_cast<float>(squares[c] / count[c]) : 1.f;
  }
  out->data_normalized = options.normalize_data;
  int filled = 0;
  for (PreparedSplit* s : {&out->train, &out->validation, &out->test}) {
    for (size_t k = 0; k < s->x.size(); ++k) {
      float& v = s->x[k];
      const size_t c = k % f;
      if (std::isnan(v)) {
        v = out->mean[c];
        ++filled;
      }
      if (options.normalize_data) {
        v = (v - out->mean[c]) / std::max(std::sqrt(out->variance[c]), 1e-7f);
      }
    }
  }
  if (filled > 0) {
    out->notes.push_back("missing/padded values: " + std::to_string(filled) +
                         " set to the training mean of their channel");
  }
  out->notes.push_back(
      std::string("normalisation: per-channel mean/variance of the training split") +
      (options.normalize_data ? ", applied to the data" : ", not applied to the data"));
  return true;
}

std::string dataset_summary(const DatasetFiles& files) {
  std::string text;
  const auto one = [&](const char* split, const Dataset& d) {
    text +=
        std::string(split) + ": " + std::to_string(d.size()) + " cases, " +
        std::to_string(d.channels) + " channels, length " +
        (d.equal_length() ? std::to_string(d.min_length())
                          : std::to_string(d.min_length()) + ".." + std::to_string(d.max_length()));
    if (d.missing_values) text += ", " + std::to_string(d.missing_values) + " missing values";
    text += "\n  classes:";
    const std::vector<int> counts = d.class_counts();
    for (size_t c = 0; c < counts.size(); ++c) {
      text += " " + d.class_names[c] + " " + std::to_string(counts[c]);
    }
    text += "\n";
  };
  text += files.train.name + " (" + files.train.source + ")\n";
  one("train", files.train);
  if (files.has_test()) one("test", files.test);
  return text;
}

}  // namespace gruwb::app
