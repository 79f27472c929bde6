#pragma once
// Host-side model writer: turns the editable in-memory form of a model (the
// flatbuffers object API's ModelT) back into a .tflite (TFL3) or .circle
// (CIR0) file. Round trip: Model::load -> unpack_model -> edit -> write_model
// -> Model::load gives the same graph and the same tensor bytes.
//
// What the writer guarantees for every file it produces:
// - buffer 0 is the empty sentinel;
// - every Buffer.data starts 16 bytes aligned relative to the file start
//   (kernels read weights in place on the board);
// - op codes follow the writer rule of the target format (below);
// - the file identifier and Model.version of the target format
//   ("TFL3"/3, "CIR0"/0), whatever ModelDef::version says.
// write_model does not check graph semantics (indices, sizes): tests use it to
// build deliberately broken models. save_model does check them, so no file
// our own reader rejects ever reaches the disk.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/model.h"

namespace gruwb::tools {

// The editable form. OperatorCodeT::builtin_code is the op code (Circle ops
// are negative, e.g. GRU = -5); deprecated_builtin_code is recomputed on
// write. A legacy OperatorCodeT with builtin_code 0 and only
// deprecated_builtin_code set (old v3 files) is read as the deprecated code.
using ModelDef = gruwb::fb::ModelT;

// Copies a loaded model into the editable form and normalizes its op codes
// (builtin_code = decoded code). Fails, naming the culprit, when the file
// holds data our schema subset cannot carry over (builtin options of a kind
// we do not model, external tensor buffers, builtin_options_2), instead of
// silently dropping it on the next save.
bool unpack_model(const Model& model, ModelDef* out, std::string* error);

// Serializes `model` in `format`. Op codes: TFLite writes
// deprecated_builtin_code = code < 127 ? code : 127 and builtin_code = code;
// Circle the same with the signed byte (GRU -5 is stored as 0xFB). Fails for
// Circle-only op codes or tensor types written as TFLite, for a buffer 0 that
// holds data, and for buffers pointing outside the flatbuffer.
bool write_model(const ModelDef& model, ModelFormat format, std::vector<uint8_t>* out,
                 std::string* error);

// write_model + Model::load of the result + write_file_atomically. Errors
// start with the path.
bool save_model(const ModelDef& model, ModelFormat format, const std::string& path,
                std::string* error);

// kCircle for paths ending in ".circle" (any case), else kTflite.
ModelFormat format_for_path(const std::string& path);

// The bytes of tensor `t` of `sg` when it is a constant with data; nullptr for an index out of
// range (-1: an omitted input), a tensor without a buffer, a buffer index out of range or an
// empty buffer. What the host tools read constants through, so a hostile index is no crash.
const std::vector<uint8_t>* constant_data(const ModelDef& def, const fb::SubGraphT& sg, int t);

}  // namespace gruwb::tools
