#include "app/core/export.h"

#include <filesystem>

#include "app/core/firmware_lib.h"
#include "app/core/inspect.h"
#include "engine/tools/exporter.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"

namespace gruwb::app {
namespace {

namespace fs = std::filesystem;

std::string lower_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

bool write(const std::string& path, const std::string& text, std::vector<ExportedFile>* files,
           std::string* err) {
  if (!tools::write_file_atomically(path, std::vector<uint8_t>(text.begin(), text.end()), err)) {
    return false;
  }
  files->push_back({path, text.size()});
  return true;
}

int export_c_array(const ExportRequest& r, const tools::LoadedModel& model,
                   std::vector<ExportedFile>* files, std::string* err) {
  const std::string stem = fs::path(r.model_path).stem().string();
  std::string source = r.output.empty() ? stem + ".cc" : r.output;
  const std::string ext = lower_extension(source);
  if (ext == ".h" || ext == ".hpp") {
    source = (fs::path(source).replace_extension(".cc")).string();
  } else if (ext != ".c" && ext != ".cc" && ext != ".cpp" && ext != ".cxx") {
    source += ".cc";
  }
  const std::string header = fs::path(source).replace_extension(".h").string();
  const std::string name = r.array_name.empty()
                               ? tools::c_identifier(fs::path(r.model_path).filename().string())
                               : r.array_name;
  if (name != tools::c_identifier(name)) {
    *err = "export: --name '" + name + "' is not a C identifier";
    return kExitBadInput;
  }
  tools::CArrayFiles pair =
      tools::c_array_files(model.bytes, name, fs::path(header).filename().string());
  if (!write(header, pair.header, files, err) || !write(source, pair.source, files, err)) {
    return kExitFailure;
  }
  return kExitOk;
}

int export_model(const ExportRequest& r, const tools::LoadedModel& model,
                 std::vector<ExportedFile>* files, std::vector<std::string>* notes,
                 std::string* err) {
  const bool circle = r.target == ExportTarget::kCircle;
  const std::string want = circle ? ".circle" : ".tflite";
  std::string path = r.output.empty() ? fs::path(r.model_path).stem().string() + want : r.output;
  if (lower_extension(path) != want) {
    *err = "export: --to " + std::string(export_target_name(r.target)) + " writes a " + want +
           " file, not " + path;
    return kExitBadInput;
  }
  const ModelFormat format = circle ? ModelFormat::kCircle : ModelFormat::kTflite;
  std::vector<uint8_t> bytes;
  std::string error;
  if (model.model.format() == format) {
    bytes = model.bytes;  // already that format: the file byte for byte
  } else if (!tools::convert_model(model.bytes, format, &bytes, notes, &error)) {
    *err = r.model_path + ": " + error;
    return kExitBadInput;
  }
  if (!tools::write_file_atomically(path, bytes, err)) return kExitFailure;
  files->push_back({path, bytes.size()});
  return kExitOk;
}

int export_npy(const ExportRequest& r, const tools::LoadedModel& model,
               std::vector<ExportedFile>* files, std::vector<std::string>* notes,
               std::string* err) {
  const std::string dir =
      r.output.empty() ? fs::path(r.model_path).stem().string() + "_weights" : r.output;
  std::vector<tools::WeightArray> arrays;
  std::vector<std::string> skipped;
  std::string error;
  if (!tools::weight_arrays(model.bytes, &arrays, &skipped, &error)) {
    *err = r.model_path + ": " + error;
    return kExitBadInput;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    *err = dir + ": cannot create the directory" + (ec ? ": " + ec.message() : std::string());
    return kExitFailure;
  }
  for (const tools::WeightArray& w : arrays) {
    const std::string path = (fs::path(dir) / w.file_name).string();
    if (!tools::write_npy(path, w.array, err)) return kExitFailure;
    files->push_back({path, tools::encode_npy(w.array).size()});
  }
  const std::string manifest =
      tools::weight_manifest_json(fs::path(r.model_path).filename().string(), arrays, skipped);
  if (!write((fs::path(dir) / "manifest.json").string(), manifest, files, err)) {
    return kExitFailure;
  }
  for (const std::string& s : skipped) notes->push_back("skipped " + s);
  return kExitOk;
}

}  // namespace

bool parse_export_target(const std::string& text, ExportTarget* out) {
  for (ExportTarget t : {ExportTarget::kCArray, ExportTarget::kTflite, ExportTarget::kCircle,
                         ExportTarget::kNpy, ExportTarget::kFirmwareLib}) {
    if (text == export_target_name(t)) return *out = t, true;
  }
  return false;
}

const char* export_target_name(ExportTarget target) {
  switch (target) {
    case ExportTarget::kCArray: return "c-array";
    case ExportTarget::kTflite: return "tflite";
    case ExportTarget::kCircle: return "circle";
    case ExportTarget::kNpy: return "npy";
    case ExportTarget::kFirmwareLib: return "firmware-lib";
  }
  return "?";
}

namespace {

int export_loaded(const ExportRequest& r, const tools::LoadedModel& model,
                  std::vector<ExportedFile>* files, std::vector<std::string>* notes,
                  std::string* err) {
  switch (r.target) {
    case ExportTarget::kCArray: return export_c_array(r, model, files, err);
    case ExportTarget::kTflite:
    case ExportTarget::kCircle: return export_model(r, model, files, notes, err);
    case ExportTarget::kNpy: return export_npy(r, model, files, notes, err);
    case ExportTarget::kFirmwareLib: return export_firmware_lib(r, model, files, notes, err);
  }
  return kExitBadInput;
}

}  // namespace

bool export_target_for_path(const std::string& path, ExportTarget* out, std::string* err) {
  const std::string ext = lower_extension(path);
  if (ext == ".tflite") return *out = ExportTarget::kTflite, true;
  if (ext == ".circle") return *out = ExportTarget::kCircle, true;
  for (const char* source : {".c", ".cc", ".cpp", ".cxx", ".h", ".hpp"}) {
    if (ext == source) return *out = ExportTarget::kCArray, true;
  }
  if (ext.empty()) return *out = ExportTarget::kFirmwareLib, true;
  *err = path + ": unknown model file type '" + ext +
         "' (expected .tflite, .circle, a C array .h/.c/.cc/.cpp, or a folder name without an "
         "extension for the firmware library)";
  return false;
}

int export_model_bytes(const ExportRequest& r, std::vector<uint8_t> bytes,
                       std::vector<ExportedFile>* files, std::vector<std::string>* notes,
                       std::string* err) {
  tools::LoadedModel model;
  if (!tools::load_model_bytes(std::move(bytes), r.model_path, &model, err)) return kExitBadInput;
  model.path = r.model_path;
  return export_loaded(r, model, files, notes, err);
}

int run_export(const ExportRequest& r, std::string* out, std::string* err) {
  tools::LoadedModel model;
  if (!tools::load_model_file(r.model_path, &model, err)) return kExitBadInput;
  std::vector<ExportedFile> files;
  std::vector<std::string> notes;
  const int code = export_loaded(r, model, &files, &notes, err);
  if (code != kExitOk) return code;
  if (r.json) {
    tools::JsonWriter json;
    json.begin_object();
    json.key("model").value(r.model_path);
    json.key("to").value(export_target_name(r.target));
    json.key("files").begin_array();
    for (const ExportedFile& f : files) {
      json.begin_object();
      json.key("path").value(f.path);
      json.key("bytes").value(f.bytes);
      json.end_object();
    }
    json.end_array();
    json.key("notes").array(notes);
    json.end_object();
    *out = json.take() + "\n";
    return kExitOk;
  }
  *out = "Exported " + r.model_path + " as " + export_target_name(r.target) + ":\n";
  if (r.target ==
      ExportTarget::kFirmwareLib) {  // a folder of many files: their sum (--json lists them)
    uint64_t bytes = 0;
    for (const ExportedFile& f : files) bytes += f.bytes;
    *out += "  " + (files.empty() ? r.output : fs::path(files[0].path).parent_path().string()) +
            ": " + std::to_string(files.size()) + " files, " + std::to_string(bytes) + " bytes\n";
  }
  for (const ExportedFile& f : files) {
    if (r.target == ExportTarget::kFirmwareLib) break;
    *out += "  " + f.path + " (" + std::to_string(f.bytes) + " bytes)\n";
  }
  for (const std::string& n : notes) *out += "  note: " + n + "\n";
  return kExitOk;
}

}  // namespace gruwb::app
