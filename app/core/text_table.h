#pragma once
// Aligned plain-text tables, CSV tables and formatted lines for the CLI and reports. Plain tables:
// the first column left-aligned, the others right-aligned, widths in UTF-8 code points (so "±", "Δ"
// and "µs" count as one column).

#include <string>
#include <vector>

namespace gruwb::app {

std::string plain_table(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// CSV (RFC 4180): a header line, then one line per row; fields with a comma, quote or newline
// quoted. Every CSV table the workbench writes (sweep and hparams tables) goes through it.
std::string csv_field(const std::string& text);
std::string csv_table(const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows);

// The shortest text that reads back as the same number (CSV cells, comparable across runs):
// 0.001f is "0.001", not "0.0010000000474974513".
std::string shortest_text(double v);
std::string shortest_text(float v);

// printf into the end of `out`, sized to the text (a reason can name several long tensor
// names): the line builder of the text reports.
void append(std::string* out, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace gruwb::app
