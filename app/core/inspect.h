#pragma once
// `inspect`: the analyzer report of one model file, as text or JSON. The CLI
// (`gruwb inspect`) and the GUI both call these functions, so they show the
// same figures and the same error text.

#include <string>

#include "engine/tools/analyzer.h"

namespace gruwb::app {

// Process exit codes shared by every gruwb subcommand.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // internal errors (e.g. stdout could not be written)
constexpr int kExitBadInput = 2;  // unusable input file, unknown subcommand or option

// Loads and analyzes `path`. On failure returns false and sets `error` to one
// line "<file>: <problem>" (no newline), e.g.
// "model.tflite: corrupt model: flatbuffer verification failed".
bool inspect_model(const std::string& path, tools::AnalyzerReport* report, std::string* error);

// Runs `inspect` on `path`: on success `out` gets the text (or JSON) report and
// the result is kExitOk; on bad input `err` gets the one-line error of
// inspect_model() and the result is kExitBadInput. `arena`: the arena bytes the engine plans
// for inference and each training scope are added (the Size panel's figures).
int run_inspect(const std::string& path, bool json, std::string* out, std::string* err,
                bool arena = false);

}  // namespace gruwb::app
