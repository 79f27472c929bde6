#pragma once
// Aligned plain-text tables and formatted lines for the CLI and text reports: the first column
// left-aligned, the others right-aligned, widths in UTF-8 code points (so
// "±", "Δ" and "µs" count as one column).

#include <string>
#include <vector>

namespace gruwb::app {

std::string plain_table(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// printf into the end of `out`, sized to the text (a reason can name several long tensor
// names): the line builder of the text reports.
void append(std::string* out, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace gruwb::app
