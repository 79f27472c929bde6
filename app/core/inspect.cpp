#include "app/core/inspect.h"

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

}  // namespace

bool inspect_model(const std::string& path, tools::AnalyzerReport* report, std::string* error) {
  tools::LoadedModel loaded;
  std::string load_error;
  if (!tools::load_model_file(path, &loaded, &load_error)) {
    *error = one_line(load_error);
    return false;
  }
  *report = tools::analyze_model(loaded.model, path);
  tools::add_fusion_outlook(loaded.model, report);
  return true;
}

int run_inspect(const std::string& path, bool json, std::string* out, std::string* err) {
  tools::AnalyzerReport report;
  if (!inspect_model(path, &report, err)) return kExitBadInput;
  *out = json ? tools::report_to_json(report) : tools::report_to_text(report);
  return kExitOk;
}

}  // namespace gruwb::app
