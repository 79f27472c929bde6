#pragma once
// A small streaming JSON writer for reports (host only). It emits valid JSON
// whatever the input bytes: strings are escaped per RFC 8259 and invalid UTF-8
// becomes U+FFFD, because tensor names in model files are arbitrary bytes and
// a report that a JSON parser rejects is worse than one with a replaced byte.
// Non-finite numbers (which JSON cannot express) are written as null.
//
//   JsonWriter json;
//   json.begin_object();
//   json.key("size").value(3164);
//   json.key("names").begin_array().value("a").value("b").end_array();
//   json.end_object();
//   std::string text = json.take();

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gruwb::tools {

class JsonWriter {
 public:
  // indent > 0 pretty-prints with that many spaces per level; 0 is compact.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text ? text : "")); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(double number);  // shortest text that reads back as the same double
  JsonWriter& value(float number);   // shortest text that reads back as the same float
  JsonWriter& null();

  // All integer types except bool: exact, never through double.
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  JsonWriter& value(T number) {
    if constexpr (std::is_signed_v<T>) {
      return write_signed(static_cast<int64_t>(number));
    } else {
      return write_unsigned(static_cast<uint64_t>(number));
    }
  }

  // Writes an array of numbers or strings in one call, on one line even when
  // pretty-printing ("[0, 4, 3]"): shapes and index lists stay readable.
  template <typename Container>
  JsonWriter& array(const Container& items) {
    begin_array();
    stack_.back().single_line = true;
    for (const auto& item : items) value(item);
    return end_array();
  }

  // True when every begin_* has been closed and one top-level value written.
  bool complete() const { return stack_.empty() && wrote_root_; }
  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

  // The quoted, escaped JSON form of `text` (with the U+FFFD rule above).
  static std::string quote(std::string_view text);

 private:
  struct Level {
    bool is_object = false;
    bool single_line = false;
    int count = 0;
  };

  void before_value();
  void newline_indent(size_t depth);
  JsonWriter& write_signed(int64_t number);
  JsonWriter& write_unsigned(uint64_t number);
  JsonWriter& write_raw(std::string_view token);

  int indent_;
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  bool wrote_root_ = false;
};

}  // namespace gruwb::tools
