#pragma once
// `export`: a model as a C array (header + source, xxd -i style, 16-byte
// aligned), as .tflite or .circle (where representable), its weight
// tensors as .npy files with a manifest (engine/tools/exporter.h), or as a
// firmware library folder (firmware_lib.h). The CLI (`gruwb export`) and
// the GUI share it.

#include <string>
#include <vector>

#include "engine/train/training_config.h"

namespace gruwb::app {

enum class ExportTarget { kCArray, kTflite, kCircle, kNpy, kFirmwareLib };

// "c-array", "tflite", "circle", "npy", "firmware-lib".
bool parse_export_target(const std::string& text, ExportTarget* out);
const char* export_target_name(ExportTarget target);

struct ExportRequest {
  std::string model_path;
  ExportTarget target = ExportTarget::kCArray;
  // c-array: the source file (.c/.cc/.cpp; the header gets .h beside it) or a
  // stem for both; tflite/circle: the model file; npy: a directory. "" = from
  // the model's name in the current directory; firmware-lib: the folder.
  std::string output;
  std::string array_name;  // c-array only; "" = xxd's name for the model file
  bool json = false;
  // firmware-lib: "" exports inference only; "fc", "all" or "last:N" also exports
  // gruwb_model_train_step() with `training` (optimizer, loss, learning rate, batch).
  std::string training_scope;
  TrainingConfig training;
};

struct ExportedFile {
  std::string path;
  uint64_t bytes = 0;
};

// Returns kExitOk, kExitBadInput (unreadable model, not representable in the
// target format, bad output name; one line in `err`) or kExitFailure (a file
// cannot be written).
int run_export(const ExportRequest& request, std::string* out, std::string* err);

}  // namespace gruwb::app
