#include "app/core/board_fit.h"

#include <algorithm>
#include <memory>
#include <set>

#include "app/core/board.h"
#include "app/core/inspect.h"
#include "app/core/text_table.h"
#include "engine/tools/analyzer.h"
#include "engine/tools/arena_figures.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"
#include "serial/link/board_client.h"

namespace gruwb::app {
namespace {

constexpr uint64_t kAlign = 16;  // the Device's alignment of each piece of its pool
uint64_t align_up(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

std::string kilobytes(uint64_t bytes) {
  std::string out;
  append(&out, "%.0f KB", static_cast<double>(bytes) / 1024.0);
  return out;
}

std::vector<std::string> split_ops(const std::string& list) {
  std::vector<std::string> ops;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    name = name.substr(0, name.find(':'));  // NAME:int8 is the NAME kernel's integer form
    if (!name.empty()) ops.push_back(name);
    start = end + 1;
  }
  return ops;
}

// Flash of an image with only `ops`: the image less every kernel object it links, plus the
// objects those ops need (an object serving several ops counts once). Shared kernel helpers
// (matvec, recurrent_util, ...) stay in, so it errs high for models without recurrent ops.
MemoryNeed flash_with_ops(const FirmwareImage& image, const std::vector<std::string>& ops) {
  MemoryNeed need;
  need.what = "flash, this model's ops";
  need.available = static_cast<uint64_t>(image.flash_kb) * 1024;
  if (image.op_objects.empty()) {
    need.error = "no kernel figures in the manifest (an image built before 2026-12-03)";
    return need;
  }
  uint64_t kernels = 0;
  for (const auto& [object, bytes] : image.kernel_object_bytes) kernels += bytes;
  std::set<std::string> objects;
  for (const std::string& op : ops) {
    const auto found = image.op_objects.find(op);
    if (found == image.op_objects.end()) {
      need.error = "the image (GRUWB_FW_OPS=" + image.op_table + ") has no " + op + " kernel";
      return need;
    }
    objects.insert(found->second);
  }
  uint64_t used = 0;
  for (const std::string& object : objects) {
    const auto bytes = image.kernel_object_bytes.find(object);
    if (bytes != image.kernel_object_bytes.end()) used += bytes->second;
  }
  need.needed = image.flash_used - std::min(kernels, image.flash_used) + used;
  return need;
}

}  // namespace

std::string MemoryNeed::verdict() const {
  if (!error.empty()) return error;
  if (available == 0) return kilobytes(needed) + " (board size unknown)";
  if (needed <= available) return "fits (" + kilobytes(available - needed) + " free)";
  return "needs " + kilobytes(needed - available) + " more";
}

bool measure_model_needs(const std::string& path, uint32_t samples, ModelNeeds* out,
                         std::string* err) {
  *out = ModelNeeds();
  tools::LoadedModel loaded;
  if (!tools::load_model_file(path, &loaded, err)) return false;
  out->label = path.substr(path.find_last_of('/') + 1);
  out->model_bytes = loaded.bytes.size();
  const tools::AnalyzerReport report = tools::analyze_model(loaded.model, path);
  out->ops = split_ops(report.firmware_ops);
  const tools::ArenaFigures arenas = tools::measure_arenas(loaded.model);
  out->inference_error = arenas.inference_ok ? "" : arenas.inference_error;
  out->inference_arena = arenas.inference_bytes;
  for (const tools::TrainingArena* t : {&arenas.training_fc, &arenas.training_all}) {
    out->training.push_back({t->scope, t->ok ? "" : t->error, t->memory.total});
  }
  out->samples = samples;
  if (samples > 0 && arenas.inference_ok) {
    // The board's dataset blob (docs/serial-protocol.md): header, then per sample the input
    // floats and a u32 class.
    const SubgraphView graph = loaded.model.subgraph(0);
    if (graph.inputs.empty() || graph.inputs[0] < 0 || graph.inputs[0] >= graph.tensor_count) {
      *err = path + ": the model has no input";
      return false;
    }
    const uint64_t elements = graph.tensor(graph.inputs[0]).element_count();
    out->dataset_bytes = serial::kDatasetHeaderBytes + samples * (elements * 4 + 4);
  }
  return true;
}

BoardFit fit_on_board(const ModelNeeds& model, const FirmwareImage& image,
                      const std::string& source) {
  BoardFit fit;
  fit.board = image.board;
  fit.source = source;
  if (image.flash_kb > 0 && image.flash_used > 0) {
    MemoryNeed whole;
    whole.what = "flash, image (" + image.op_table + " ops)";
    whole.needed = image.flash_used;
    whole.available = static_cast<uint64_t>(image.flash_kb) * 1024;
    fit.flash.push_back(whole);
    if (image.op_table == "all") fit.flash.push_back(flash_with_ops(image, model.ops));
  }
  // The pool as the Device lays it out: model | dataset | sample order | arena, each aligned.
  const uint64_t pool = image.pool_bytes;
  MemoryNeed inference;
  inference.what = "inference";
  inference.available = pool;
  inference.error = model.inference_error;
  inference.needed = align_up(model.model_bytes) + model.inference_arena;
  fit.ram.push_back(inference);
  for (const ModelNeeds::Training& t : model.training) {
    MemoryNeed train;
    train.what = "train " + t.scope;
    train.available = pool;
    train.error = t.error;
    train.needed = align_up(align_up(model.model_bytes) + model.dataset_bytes) +
                   align_up(uint64_t{model.samples} * 4) + t.arena;
    fit.ram.push_back(train);
  }
  const auto find = [&](const char* what) {
    return std::find_if(fit.ram.begin(), fit.ram.end(),
                        [&](const MemoryNeed& n) { return n.what == what; });
  };
  const auto all = find("train all"), fc = find("train fc");
  if (pool == 0) {
    fit.advice = "RAM pool unknown (a manifest without the link's figures)";
  } else if (!inference.fits()) {
    fit.advice = inference.error.empty() ? "does not fit: inference needs " +
                                               kilobytes(inference.needed - pool) + " more"
                                         : "does not run: " + inference.error;
  } else if (all != fit.ram.end() && all->fits()) {
    fit.advice = "fits: inference and training all weights";
  } else if (fc != fit.ram.end() && fc->fits()) {
    fit.advice =
        all == fit.ram.end() || !all->error.empty()
            ? "fits: inference and training the last Dense layer"
            : "training all weights needs " + kilobytes(all->needed - pool) + " more: try scope fc";
  } else {
    fit.advice = "inference only: training needs more RAM than the board has";
  }
  if (!fit.flash.empty() && !fit.flash.front().fits())
    fit.advice = "the image does not fit the flash; " + fit.advice;
  return fit;
}

std::string board_fit_text(const ModelNeeds& model, const std::vector<BoardFit>& fits) {
  std::string out;
  append(&out, "%s: %llu B; ops %s; arenas (host-planned): inference %llu B", model.label.c_str(),
         static_cast<unsigned long long>(model.model_bytes), joined(model.ops).c_str(),
         static_cast<unsigned long long>(model.inference_arena));
  for (const ModelNeeds::Training& t : model.training) {
    if (t.error.empty()) {
      append(&out, ", train %s %llu B", t.scope.c_str(), static_cast<unsigned long long>(t.arena));
    } else {
      append(&out, ", train %s: %s", t.scope.c_str(), t.error.c_str());
    }
  }
  if (model.samples) {
    append(&out, "; dataset of %u samples %llu B", model.samples,
           static_cast<unsigned long long>(model.dataset_bytes));
  } else {
    out += "; no dataset counted (--samples N)";
  }
  out += "\n";
  // Cells stay short ("58 KB ok", "335 KB, 232 KB over"); the verdict says what to do.
  const auto cell = [](const MemoryNeed& n) {
    if (!n.error.empty()) return std::string("-");
    if (n.available == 0 || n.fits()) return kilobytes(n.needed) + (n.available ? " ok" : "");
    return kilobytes(n.needed) + ", " + kilobytes(n.needed - n.available) + " over";
  };
  std::vector<std::vector<std::string>> rows;
  for (const BoardFit& fit : fits) {
    std::vector<std::string> row = {fit.board};
    row.push_back(fit.ram.empty() || fit.ram.front().available == 0
                      ? "?"
                      : kilobytes(fit.ram.front().available));
    for (const MemoryNeed& n : fit.ram) row.push_back(cell(n));
    std::string flash = "-";
    if (!fit.flash.empty()) {
      const MemoryNeed& image = fit.flash.front();
      flash = kilobytes(image.needed) + " of " + kilobytes(image.available);
      if (fit.flash.size() > 1)
        flash += " / " + (fit.flash[1].error.empty() ? "~" + kilobytes(fit.flash[1].needed) : "-");
    }
    row.push_back(flash);
    row.push_back(fit.advice);
    rows.push_back(row);
  }
  std::vector<std::string> header = {"board", "RAM pool", "inference"};
  for (const ModelNeeds::Training& t : model.training) header.push_back("train " + t.scope);
  header.push_back("flash: image / its ops");
  header.push_back("verdict");
  return out + plain_table(header, rows);
}

int board_fit(const BoardFitRequest& request, std::string* out, std::string* err) {
  ModelNeeds model;
  if (!measure_model_needs(request.model_path, request.samples, &model, err)) return kExitBadInput;
  std::vector<BoardFit> fits;
  if (!request.port.empty()) {
    BoardConnection connection;
    connection.port = request.port;
    std::string note;
    int code = kExitOk;
    const std::unique_ptr<serial::BoardClient> client = open_board(connection, &note, err, &code);
    if (!client) return code;
    FirmwareImage board;  // flash unknown: HELLO does not carry it
    board.board = client->capabilities().board;
    board.pool_bytes = client->capabilities().ram_bytes;
    fits.push_back(fit_on_board(model, board, "connected board on " + request.port));
  } else {
    const std::vector<FirmwareImage> images = find_firmware_images();
    for (const std::string& name : request.boards) {
      if (std::none_of(images.begin(), images.end(),
                       [&](const FirmwareImage& i) { return i.board == name; })) {
        *err = "no firmware image for board '" + name + "' in " + joined(firmware_folders()) +
               " (build with -DGRUWB_FIRMWARE_IMAGES=ON or give --port)";
        return kExitBadInput;
      }
    }
    for (const FirmwareImage& image : images) {
      if (!request.boards.empty() && std::find(request.boards.begin(), request.boards.end(),
                                               image.board) == request.boards.end()) {
        continue;
      }
      fits.push_back(fit_on_board(model, image, image.elf));
    }
    if (fits.empty()) {
      *err = "no firmware images found in " + joined(firmware_folders()) +
             " (build with -DGRUWB_FIRMWARE_IMAGES=ON, set GRUWB_FIRMWARE_DIR, or give --port)";
      return kExitBadInput;
    }
  }
  if (!request.json) {
    *out += board_fit_text(model, fits);
    return kExitOk;
  }
  tools::JsonWriter json;
  json.begin_object();
  json.key("model").value(model.label);
  json.key("model_bytes").value(model.model_bytes);
  json.key("ops").begin_array();
  for (const std::string& op : model.ops) json.value(op);
  json.end_array();
  json.key("dataset_bytes").value(model.dataset_bytes);
  json.key("boards").begin_array();
  for (const BoardFit& fit : fits) {
    json.begin_object();
    json.key("board").value(fit.board);
    json.key("source").value(fit.source);
    for (const auto* list : {&fit.flash, &fit.ram}) {
      json.key(list == &fit.flash ? "flash" : "ram").begin_array();
      for (const MemoryNeed& n : *list) {
        json.begin_object();
        json.key("what").value(n.what);
        json.key("needed").value(n.needed);
        json.key("available").value(n.available);
        json.key("fits").value(n.fits());
        json.key("error").value(n.error);
        json.end_object();
      }
      json.end_array();
    }
    json.key("advice").value(fit.advice);
    json.end_object();
  }
  json.end_array();
  json.end_object();
  *out += json.take() + "\n";
  return kExitOk;
}

}  // namespace gruwb::app
