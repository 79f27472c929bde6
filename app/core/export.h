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

// The target a file name asks for, by its extension: .tflite, .circle, a C or
// C++ source or header (.c .cc .cpp .cxx .h .hpp: c-array), none (a folder:
// firmware-lib). False with one line in `err` for any other extension. The GUI's
// Export Model and the board's download pick the format this way.
bool export_target_for_path(const std::string& path, ExportTarget* out, std::string* err);

// Exports a model held in memory (a trained stage's model, a board's download):
// `request.model_path` only names it (the C array's default name, messages);
// `request.target` and `request.output` as for run_export. Same results.
int export_model_bytes(const ExportRequest& request, std::vector<uint8_t> bytes,
                       std::vector<ExportedFile>* files, std::vector<std::string>* notes,
                       std::string* err);

}  // namespace gruwb::app
