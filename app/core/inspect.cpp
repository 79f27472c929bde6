#include "app/core/inspect.h"

#include "engine/tools/arena_figures.h"
#include "engine/tools/model_file.h"

namespace gruwb::app {
namespace {

// Errors are printed as one line; a file name or message with a line break
// in it must not split it.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

bool load_and_analyze(const std::string& path, tools::LoadedModel* loaded,
                      tools::AnalyzerReport* report, std::string* error) {
  std::string load_error;
  if (!tools::load_model_file(path, loaded, &load_error)) {
    *error = one_line(load_error);
    return false;
  }
  *report = tools::analyze_model(loaded->model, path);
  tools::add_fusion_outlook(loaded->model, report);
  return true;
}

}  // namespace

bool inspect_model(const std::string& path, tools::AnalyzerReport* report, std::string* error) {
  tools::LoadedModel loaded;
  return load_and_analyze(path, &loaded, report, error);
}

int run_inspect(const std::string& path, bool json, std::string* out, std::string* err,
                bool arena) {
  tools::LoadedModel loaded;
  tools::AnalyzerReport report;
  if (!load_and_analyze(path, &loaded, &report, err)) return kExitBadInput;
  std::vector<tools::ArenaRow> rows;
  if (arena) rows = tools::arena_rows(tools::measure_arenas(loaded.model));
  if (json) {
    *out = tools::report_to_json(report, arena ? &rows : nullptr);
  } else {
    *out = tools::report_to_text(report);
    if (arena) *out += "\n" + tools::arena_rows_to_text(rows);
  }
  return kExitOk;
}

}  // namespace gruwb::app
