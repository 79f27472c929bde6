#pragma once
// `gruwb board fit`: what a model needs on a board against what the board has. RAM: the board
// keeps model, dataset, sample order and arena in one pool (serial/firmware/device.cpp), so
// inference needs model + inference arena and training model + dataset + order + the
// training arena of its scope, each from the engine's own planner (tools::measure_arenas).
// Flash: the firmware image's size, and an image with only the model's ops, estimated from the
// image's measured kernel objects (the manifest's "memory", flash_breakdown.py). The pool and
// flash come from a firmware manifest (app/core/board_flash.h) or a connected board's HELLO.

#include <cstdint>
#include <string>
#include <vector>

#include "app/core/board_flash.h"

namespace gruwb::app {

struct MemoryNeed {
  std::string what;  // "inference", "train fc", "train all", "flash (all ops)", ...
  uint64_t needed = 0;
  uint64_t available = 0;
  std::string error;  // cannot be planned or estimated (e.g. an op no kernel trains)
  bool fits() const { return error.empty() && needed <= available; }
  // "fits (41 KB free)", "needs 236 KB more", or the error.
  std::string verdict() const;
};

struct BoardFit {
  std::string board;
  std::string source;             // the manifest's path, or "connected board on PORT"
  std::vector<MemoryNeed> flash;  // the image; an image with the model's ops (estimated)
  std::vector<MemoryNeed> ram;    // inference, train fc, train all
  // One line: "fits: inference and training all weights" / "training all weights needs
  // 236 KB more: try scope fc" / "does not fit: inference needs 12 KB more".
  std::string advice;
};

// The model's side, measured once for every board.
struct ModelNeeds {
  std::string label;
  uint64_t model_bytes = 0;
  std::vector<std::string> ops;  // the firmware op table it needs (kernel names)
  std::string inference_error;   // empty when the engine plans inference
  uint64_t inference_arena = 0;
  struct Training {
    std::string scope;  // fc, all
    std::string error;
    uint64_t arena = 0;
  };
  std::vector<Training> training;
  uint64_t dataset_bytes = 0;  // the GWDS blob the board would get (0: none given)
  uint32_t samples = 0;
};

// Loads and plans the model; `samples` samples of `features` x `timesteps` floats make the
// dataset (0 samples: training needs are given without a dataset).
bool measure_model_needs(const std::string& path, uint32_t samples, ModelNeeds* out,
                         std::string* err);

// The needs against one board: `image` from its manifest (flash and pool), or pool_bytes from
// a connected board (flash unknown: image.flash_kb 0).
BoardFit fit_on_board(const ModelNeeds& model, const FirmwareImage& image,
                      const std::string& source);

// The CLI's text: the model's needs, then one row per board.
std::string board_fit_text(const ModelNeeds& model, const std::vector<BoardFit>& fits);

struct BoardFitRequest {
  std::string model_path;
  std::vector<std::string> boards;  // names of firmware images; empty = every image found
  std::string port;                 // a connected board instead (its HELLO's pool)
  uint32_t samples = 0;
  bool json = false;
};
int board_fit(const BoardFitRequest& request, std::string* out, std::string* err);

}  // namespace gruwb::app
