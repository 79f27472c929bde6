#pragma once
// Host-side loading of model files into memory plus a validated Model view.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/model.h"

namespace gruwb::tools {

// Owns the bytes a Model views. Moving keeps the view valid (the vector's
// storage moves with it); copying is disabled for that reason.
struct LoadedModel {
  std::string path;
  std::vector<uint8_t> bytes;  // operator new storage: 16-byte aligned on our hosts
  Model model;

  LoadedModel() = default;
  LoadedModel(LoadedModel&&) = default;
  LoadedModel& operator=(LoadedModel&&) = default;
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;
};

// Reads and validates `path`. On failure returns false and sets `error` to
// one line naming the file and the problem, e.g.
// "model.tflite: invalid model: subgraph 0 'main' op 2 (ADD): input 1 is tensor 99, subgraph has 8
// tensors".
bool load_model_file(const std::string& path, LoadedModel* out, std::string* error);

// Validates bytes already in memory (takes ownership); `label` names them in errors.
bool load_model_bytes(std::vector<uint8_t> bytes, const std::string& label, LoadedModel* out,
                      std::string* error);

// Reads a whole file. Fails with "path: <reason>" on error.
bool read_file_bytes(const std::string& path, std::vector<uint8_t>* out, std::string* error);

// Writes atomically: a temporary file beside `path`, fsync, then rename, so a
// crash never leaves a half-written model behind; temporaries of earlier saves
// to `path` whose process died are removed first.
bool write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes,
                           std::string* error);

}  // namespace gruwb::tools
