#pragma once
// Aligned plain-text tables for the CLI and text reports: the first column
// left-aligned, the others right-aligned, widths in UTF-8 code points (so
// "±", "Δ" and "µs" count as one column).

#include <string>
#include <vector>

namespace gruwb::app {

std::string plain_table(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

}  // namespace gruwb::app
