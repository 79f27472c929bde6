#pragma once
// `gruwb export --to firmware-lib`: a self-contained folder that builds a model into firmware
// (docs/export.md): the engine's own sources for the model's ops (embedded in the binary, see
// app/core/CMakeLists.txt), the op table written by engine/op_table.cmake, the model as an
// aligned array, a C API (firmware_lib/gruwb_model.h), a CMakeLists.txt and a Makefile for
// arm-none-eabi, linker scripts for the boards in serial/firmware/boards/, and an example that
// compares one inference (and, with training, a training step) with the host's.

#include <string>
#include <vector>

#include "app/core/export.h"
#include "engine/tools/model_file.h"

namespace gruwb::app {

// Writes the folder request.output (created if needed; files there are replaced). Returns
// kExitOk, kExitBadInput (a model the engine cannot run, a bad training scope, no cmake to run
// the op-table generator; one line in `err`) or kExitFailure (a file cannot be written).
int export_firmware_lib(const ExportRequest& request, const tools::LoadedModel& model,
                        std::vector<ExportedFile>* files, std::vector<std::string>* notes,
                        std::string* err);

}  // namespace gruwb::app
