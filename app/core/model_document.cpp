#include "app/core/model_document.h"

namespace gruwb::app {
namespace {

// Errors are shown as one line; a file name or message with a line break in
// it must not split it.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

bool open_model_document(const std::string& path, ModelDocument* document, std::string* error) {
  auto loaded = std::make_unique<tools::LoadedModel>();
  std::string load_error;
  if (!tools::load_model_file(path, loaded.get(), &load_error)) {
    *error = one_line(load_error);
    return false;
  }
  ModelDocument opened;
  opened.report = tools::analyze_model(loaded->model, loaded->path);
  tools::add_fusion_outlook(loaded->model, &opened.report, &opened.fusion);
  opened.loaded = std::move(loaded);
  *document = std::move(opened);
  return true;
}

}  // namespace gruwb::app
