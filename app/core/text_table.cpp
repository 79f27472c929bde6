#include "app/core/text_table.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace gruwb::app {

void append(std::string* out, const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  if (n > 0) {
    std::string line(static_cast<size_t>(n) + 1, '\0');
    std::vsnprintf(&line[0], line.size(), format, again);
    line.resize(static_cast<size_t>(n));
    *out += line;
  }
  va_end(again);
}

std::string plain_table(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  const auto cells = [](const std::string& s) {  // UTF-8 code points
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (size_t i = 0; i < header.size(); ++i) width[i] = cells(header[i]);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], cells(row[i]));
    }
  }
  std::string out;
  const auto line = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - cells(row[i]), ' ');
      out += (i == 0 ? row[i] + pad : "  " + pad + row[i]);
    }
    out += "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

}  // namespace gruwb::app
