#include "engine/tools/json_writer.h"

#include <charconv>
#include <cmath>

namespace gruwb::tools {
namespace {

void append_hex_escape(uint32_t code_unit, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(code_unit >> shift) & 0xF]);
}

// Length of the well-formed UTF-8 sequence at text[i], or 0 if it is not one
// (overlong forms, surrogates and values above U+10FFFF are not well formed).
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  unsigned char min_second = 0x80, max_second = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) min_second = 0xA0;  // overlong
    if (lead == 0xED) max_second = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) min_second = 0x90;  // overlong
    if (lead == 0xF4) max_second = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string JsonWriter::quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        default:
          if (c < 0x20) {
            append_hex_escape(c, &out);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out.append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER for one bad byte
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  out.push_back('"');
  return out;
}

void JsonWriter::newline_indent(size_t depth) {
  if (indent_ <= 0) return;
  out_.push_back('\n');
  out_.append(depth * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::before_value() {
  if (stack_.empty()) {
    wrote_root_ = true;
    return;
  }
  if (after_key_) {  // the key already placed the separator
    after_key_ = false;
    return;
  }
  Level& level = stack_.back();
  if (level.single_line) {
    if (level.count++ > 0) out_.append(indent_ > 0 ? ", " : ",");
    return;
  }
  if (level.count++ > 0) out_.push_back(',');
  newline_indent(stack_.size());
}

JsonWriter& JsonWriter::key(std::string_view name) {
  Level& level = stack_.back();
  if (level.count++ > 0) out_.push_back(',');
  newline_indent(stack_.size());
  out_.append(quote(name));
  out_.append(indent_ > 0 ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_.push_back('{');
  stack_.push_back(Level{true, 0});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_.push_back('[');
  stack_.push_back(Level{false, 0});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  const bool had_members = stack_.back().count > 0;
  stack_.pop_back();
  if (had_members) newline_indent(stack_.size());
  out_.push_back('}');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  const bool had_items = stack_.back().count > 0 && !stack_.back().single_line;
  stack_.pop_back();
  if (had_items) newline_indent(stack_.size());
  out_.push_back(']');
  return *this;
}

JsonWriter& JsonWriter::write_raw(std::string_view token) {
  before_value();
  out_.append(token);
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) { return write_raw(quote(text)); }
JsonWriter& JsonWriter::value(bool flag) { return write_raw(flag ? "true" : "false"); }
JsonWriter& JsonWriter::null() { return write_raw("null"); }

JsonWriter& JsonWriter::write_signed(int64_t number) {
  char text[24];
  const auto result = std::to_chars(text, text + sizeof(text), number);
  return write_raw(std::string_view(text, static_cast<size_t>(result.ptr - text)));
}

JsonWriter& JsonWriter::write_unsigned(uint64_t number) {
  char text[24];
  const auto result = std::to_chars(text, text + sizeof(text), number);
  return write_raw(std::string_view(text, static_cast<size_t>(result.ptr - text)));
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return null();
  char text[32];
  const auto result = std::to_chars(text, text + sizeof(text), number);
  return write_raw(std::string_view(text, static_cast<size_t>(result.ptr - text)));
}

JsonWriter& JsonWriter::value(float number) {
  if (!std::isfinite(number)) return null();
  char text[32];
  const auto result = std::to_chars(text, text + sizeof(text), number);
  return write_raw(std::string_view(text, static_cast<size_t>(result.ptr - text)));
}

}  // namespace gruwb::tools
