#include "app/cli/command.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/core/inspect.h"
#include "engine/tools/cells/cell_registry.h"

namespace gruwb::cli {

std::string ParsedArgs::value(const std::string& name, const std::string& fallback) const {
  auto it = options.find(name);
  return it == options.end() || it->second.empty() ? fallback : it->second.back();
}

bool parse_number(const std::string& text, double low, double high, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno != 0 || !(value >= low && value <= high)) return false;
  *out = value;
  return true;
}

bool parse_integer(const std::string& text, long long low, long long high, long long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno != 0 || value < low || value > high) return false;
  *out = value;
  return true;
}

bool ParsedArgs::number(const char* name, double low, double high, double* out,
                        std::string* message) const {
  if (!has(name) || parse_number(value(name), low, high, out)) return true;
  char range[64];
  std::snprintf(range, sizeof range, "%g..%g", low, high);
  *message = command + ": " + name + " '" + value(name) + "' must be a number in " + range;
  return false;
}

bool ParsedArgs::integer_value(const char* name, long long low, long long high, long long* out,
                               std::string* message) const {
  if (!has(name) || parse_integer(value(name), low, high, out)) return true;
  *message = command + ": " + name + " '" + value(name) + "' must be an integer in " +
             std::to_string(low) + ".." + std::to_string(high);
  return false;
}

std::string help_text(const Command& command) {
  std::string choices, list, table;
  for (const tools::CellDescriptor* cell : tools::registered_cells()) {
    choices += (choices.empty() ? "" : "|") + std::string(cell->name);
    list += (list.empty() ? "" : ",") + std::string(cell->name);
    tools::CellConfig config;
    const std::string tflite = cell->fused_op(config, ModelFormat::kTflite, false);
    const std::string circle = cell->fused_op(config, ModelFormat::kCircle, false);
    char line[256];
    std::snprintf(line, sizeof line, "  %-10s %s; fused: %s%s\n", cell->name, cell->help,
                  tflite.c_str(), circle == tflite ? "" : (" (.circle: " + circle + ")").c_str());
    table += line;
  }
  std::string text = command.help;
  using Fill = std::pair<std::string, std::string>;
  for (const auto& [key, value] :
       {Fill{"{cells}", choices}, Fill{"{cell_list}", list}, Fill{"{cell_table}", table}}) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at))
      text.replace(at, key.size(), value);
  }
  return text;
}

int usage_error(const std::string& message, const Command* command) {
  std::fprintf(stderr, "gruwb: %s\n\n", message.c_str());
  if (command) {
    std::fputs(help_text(*command).c_str(), stderr);
  } else {
    print_usage(stderr);
  }
  return app::kExitBadInput;
}

bool parse_args(const Command& command, const std::vector<std::string>& args,
                const std::vector<OptionSpec>& spec, ParsedArgs* parsed, int* exit_code) {
  parsed->command = command.name;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      parsed->positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::fputs(help_text(command).c_str(), stdout);
      *exit_code = app::kExitOk;
      return false;
    }
    std::string name = arg;
    std::string inline_value;
    bool has_inline = false;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
      has_inline = true;
    }
    const OptionSpec* option = nullptr;
    for (const OptionSpec& candidate : spec) {
      if (name == candidate.name) option = &candidate;
    }
    if (!option) {
      *exit_code =
          usage_error(std::string(command.name) + ": unknown option '" + arg + "'", &command);
      return false;
    }
    std::vector<std::string>& values = parsed->options[name];
    if (!option->takes_value) {
      if (has_inline) {
        *exit_code =
            usage_error(std::string(command.name) + ": " + name + " takes no value", &command);
        return false;
      }
      values.push_back("");
    } else if (has_inline) {
      values.push_back(inline_value);
    } else if (i + 1 < args.size()) {
      values.push_back(args[++i]);
    } else {
      *exit_code =
          usage_error(std::string(command.name) + ": " + name + " needs a value", &command);
      return false;
    }
  }
  return true;
}

int finish(int code, const std::string& out, const std::string& err) {
  if (code != app::kExitOk) {
    std::fprintf(stderr, "gruwb: %s\n", err.c_str());
    return code;
  }
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "gruwb: cannot write to standard output: %s\n", std::strerror(errno));
    return app::kExitFailure;
  }
  return app::kExitOk;
}

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace gruwb::cli
