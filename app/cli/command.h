#pragma once
// gruwb subcommands: each lives in its own <name>_command.cpp, parses its
// arguments with parse_args() and calls one function of app/core, which the
// GUI calls too. Exit codes: 0 ok, 1 internal failure, 2 bad input or usage.

#include <map>
#include <string>
#include <vector>

namespace gruwb::cli {

struct Command {
  const char* name;
  const char* summary;
  // Full help: usage line, description, options, example. "{cells}" stands for the
  // registered cell types ("gru|lstm|rnn|fastgrnn|mgu"), "{cell_list}" for
  // "gru,lstm,rnn,fastgrnn,mgu" and
  // "{cell_table}" for one line per cell type
  // (engine/tools/cells/cell_registry.h), so help lists whatever cells are registered.
  const char* help;
  int (*run)(const std::vector<std::string>& args);
};

struct OptionSpec {
  const char* name;  // "--input"
  bool takes_value;
};

// Whole-string numbers (nothing after the digits) in [low, high].
bool parse_number(const std::string& text, double low, double high, double* out);
bool parse_integer(const std::string& text, long long low, long long high, long long* out);

struct ParsedArgs {
  std::string command;  // the subcommand, set by parse_args; prefixes option errors
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> options;  // repeated options keep every value

  bool has(const std::string& name) const { return options.count(name) > 0; }
  std::string value(const std::string& name, const std::string& fallback = "") const;

  // Numeric options. Absent: true and *out untouched. Present: true with the
  // value when its text is a number in [low, high], else false with
  // *message = "<command>: --name 'text' must be ... in low..high".
  bool number(const char* name, double low, double high, double* out, std::string* message) const;
  template <typename Int>
  bool integer(const char* name, long long low, long long high, Int* out,
               std::string* message) const {
    long long parsed = 0;
    if (!integer_value(name, low, high, &parsed, message)) return false;
    if (has(name)) *out = static_cast<Int>(parsed);
    return true;
  }

 private:
  bool integer_value(const char* name, long long low, long long high, long long* out,
                     std::string* message) const;
};

// Parses `args` (after the subcommand). Handles --help (prints the command's
// help) and usage errors (one line + help on stderr). Returns false with
// *exit_code set when the command should stop there.
bool parse_args(const Command& command, const std::vector<std::string>& args,
                const std::vector<OptionSpec>& spec, ParsedArgs* parsed, int* exit_code);

// Prints "gruwb: <message>", the command's help (or the general usage when
// command is null) to stderr; returns 2.
int usage_error(const std::string& message, const Command* command);

// The end of every command: on success writes `out` to stdout, otherwise
// "gruwb: <err>" to stderr. Returns the exit code to use.
int finish(int code, const std::string& out, const std::string& err);

// The command's help with "{cells}" and "{cell_table}" filled in from the cell registry.
std::string help_text(const Command& command);

void print_usage(FILE* stream);
const Command* find_command(const std::string& name);

extern const Command kInspectCommand;
extern const Command kRunCommand;
extern const Command kBenchCommand;
extern const Command kBuildCommand;
extern const Command kBoardCommand;
extern const Command kBoardSimCommand;
extern const Command kExperimentCommand;
extern const Command kSweepCommand;
extern const Command kDataCommand;
extern const Command kGradCommand;
extern const Command kTrainCommand;
extern const Command kFuseCommand;
extern const Command kExportCommand;
extern const Command kQuantizeCommand;
extern const Command kCorpusCommand;
extern const Command kPluginsCommand;

// "a,b,c" -> {a, b, c} (an empty item stays, for the caller's check to name).
std::vector<std::string> comma_list(const std::string& text);

}  // namespace gruwb::cli
