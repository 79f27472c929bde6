#pragma once
// `fuse`: finds the recurrent cells of a converter-made model (WHILE loops or
// unrolled chains), rewrites each into one fused op when the rewritten model
// computes the same outputs, writes the result atomically and reports what
// was fused, what was not and why, and the sizes before and after
// (engine/tools/fuser.h). The CLI (`gruwb fuse`) and the GUI share it.

#include <string>

#include "engine/tools/fuser.h"

namespace gruwb::tools {
class JsonWriter;
}

namespace gruwb::app {

struct FuseRequest {
  std::string input_path;
  std::string output_path;  // its extension (.tflite/.circle) picks the format
  bool json = false;
  double tolerance = 1e-5;
  bool builtin_only = false;  // also rewrite leftover Flex TensorList ops as builtin ops
  bool stateful = false;      // streaming LSTM/RNN keep their state in variable tensors
};

// Returns kExitOk (also when nothing could be fused: the output is then the
// input, rewritten only if the format changes), kExitBadInput (unreadable
// model, one line in `err`) or kExitFailure (the output cannot be written).
int run_fuse(const FuseRequest& request, std::string* out, std::string* err);
// The same without printing: the fuser's result (cells, sizes before and after,
// the bytes written) for the GUI's Fuse, which shows the report and the sizes.
int fuse_file(const FuseRequest& request, tools::FuseResult* result, std::string* err);

std::string fuse_report_text(const FuseRequest& request, const tools::FuseResult& result);
std::string fuse_report_json(const FuseRequest& request, const tools::FuseResult& result);

// {bytes, data_bytes, subgraphs, ops, tensors, arena_bytes[, arena_error]}: the one JSON form of
// a model's size figures (fuse and quantize reports).
void write_model_size_figures(tools::JsonWriter& json, const tools::ModelSizeFigures& f);

}  // namespace gruwb::app
