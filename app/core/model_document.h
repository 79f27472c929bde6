#pragma once
// One open model file as every front end sees it: the validated model, the
// analyzer's report with the fuser's outlook (which RNN cells would fuse, and
// why not). `gruwb inspect` and the GUI's Model panel, graph and Size panel
// read the same document, so they show the same figures and the same errors.

#include <memory>
#include <string>

#include "engine/tools/analyzer.h"
#include "engine/tools/fuser.h"
#include "engine/tools/model_file.h"

namespace gruwb::app {

struct ModelDocument {
  // On the heap: views keep pointers into the model while the document moves.
  std::unique_ptr<tools::LoadedModel> loaded;
  tools::AnalyzerReport report;
  tools::FuseResult fusion;  // the fuser's outlook on the cells (the model is not changed)

  const Model& model() const { return loaded->model; }
  const std::string& path() const { return loaded->path; }
};

// Loads, validates and analyzes `path`. On failure returns false and sets
// `error` to one line "<file>: <problem>", e.g.
// "model.tflite: corrupt model: flatbuffer verification failed".
bool open_model_document(const std::string& path, ModelDocument* document, std::string* error);

}  // namespace gruwb::app
