#include "app/core/inspect.h"

#include <utility>

#include "app/core/model_document.h"
#include "engine/tools/arena_figures.h"

namespace gruwb::app {

bool inspect_model(const std::string& path, tools::AnalyzerReport* report, std::string* error) {
  ModelDocument document;
  if (!open_model_document(path, &document, error)) return false;
  *report = std::move(document.report);
  return true;
}

int run_inspect(const std::string& path, bool json, std::string* out, std::string* err,
                bool arena) {
  ModelDocument document;
  if (!open_model_document(path, &document, err)) return kExitBadInput;
  const tools::AnalyzerReport& report = document.report;
  std::vector<tools::ArenaRow> rows;
  if (arena) rows = tools::arena_rows(tools::measure_arenas(document.model()));
  if (json) {
    *out = tools::report_to_json(report, arena ? &rows : nullptr);
  } else {
    *out = tools::report_to_text(report);
    if (arena) *out += "\n" + tools::arena_rows_to_text(rows);
  }
  return kExitOk;
}

}  // namespace gruwb::app
