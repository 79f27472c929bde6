#pragma once
// Saving a model from the window: the open model (File > Export Model), a
// finished stage's trained weights (the Comparison dock) and a board's
// download all ask with one dialog and write through app::export_model_bytes,
// the code `gruwb export` runs. The file type follows the chosen extension
// (app::export_target_for_path): .tflite, .circle, a C array (.h/.cc), or a
// name without an extension for the firmware library folder.

#include <QString>
#include <cstdint>
#include <vector>

class QWidget;

namespace gruwb::gui {

// The save dialog's filters, one per type; the first is TFLite.
QString modelExportFilters();
// Completes `path` for the filter the user chose: a name without an extension
// gets that filter's extension (the firmware library's stays a folder name).
QString withExportExtension(const QString& path, const QString& selected_filter);
// Asks where to save (`suggested` pre-fills the name, never an existing source
// model: callers suggest a new name); "" when cancelled.
QString chooseModelExportPath(QWidget* parent, const QString& title, const QString& suggested);

// Writes `bytes` (a model named `label`: its file name gives the C array's name) to
// `output` in the type its extension names, atomically. True with "Saved ... as
// circle: path (N bytes)" in `message`, else false with the one-line error.
bool exportModelBytes(const QString& output, const QString& label, std::vector<uint8_t> bytes,
                      QString* message);

}  // namespace gruwb::gui
