#pragma once
// The golden JSON files of tests/fixtures/golden and tests/fixtures/hybrid (written by
// tests/fixtures/gen/tflite_golden.mjs): a minimal reader for that format, shared by the tests
// that compare the engine with real TFLite.

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/tools/model_file.h"

namespace gruwb::test {

// A minimal JSON reader (our fixture format only: no escapes beyond \" and \\) ----

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::map<std::string, Json> fields;

  const Json& operator[](const std::string& key) const {
    static const Json kMissing;
    auto it = fields.find(key);
    return it == fields.end() ? kMissing : it->second;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : text_(text) {}

  bool parse(Json* out, std::string* error) {
    bool ok = value(out) && (skip_space(), pos_ == text_.size());
    if (!ok) *error = "JSON syntax error at byte " + std::to_string(pos_);
    return ok;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_])) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool literal(const char* word) {
    size_t n = std::strlen(word);
    if (text_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }
  bool string(std::string* out) {
    if (!eat('"')) return false;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') ++pos_;
      out->push_back(text_[pos_++]);
    }
    return eat('"');
  }
  bool value(Json* out) {
    skip_space();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '{') {
      out->kind = Json::Kind::kObject;
      ++pos_;
      if (eat('}')) return true;
      do {
        std::string key;
        if (!string(&key) || !eat(':') || !value(&out->fields[key])) return false;
      } while (eat(','));
      return eat('}');
    }
    if (c == '[') {
      out->kind = Json::Kind::kArray;
      ++pos_;
      if (eat(']')) return true;
      do {
        out->items.emplace_back();
        if (!value(&out->items.back())) return false;
      } while (eat(','));
      return eat(']');
    }
    if (c == '"') return out->kind = Json::Kind::kString, string(&out->text);
    if (literal("true")) return out->kind = Json::Kind::kBool, out->number = 1, true;
    if (literal("false")) return out->kind = Json::Kind::kBool, true;
    if (literal("null")) return true;
    char* end = nullptr;
    out->number = std::strtod(text_.c_str() + pos_, &end);
    if (end == text_.c_str() + pos_) return false;
    out->kind = Json::Kind::kNumber;
    pos_ = static_cast<size_t>(end - text_.c_str());
    return true;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

// Reads and parses `path`; the error names the file.
inline bool load_golden(const std::string& path, Json* golden, std::string* error) {
  std::vector<uint8_t> bytes;
  if (!tools::read_file_bytes(path, &bytes, error)) return false;
  std::string text(bytes.begin(), bytes.end());
  if (!JsonParser(text).parse(golden, error)) return *error = path + ": " + *error, false;
  return true;
}

}  // namespace gruwb::test
