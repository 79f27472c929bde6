#pragma once
// A whole training run on a board, as the CLI and the GUI drive it: upload
// (resumable, instant when the board already has the bytes), CONFIGURE,
// START, METRIC events, a run checkpoint downloaded every so often (PAUSE,
// DOWNLOAD what=2, START), and after a board reset the same uploads plus the
// last checkpoint so the run continues where it was. The metrics delivered
// and the weights returned equal those of a run that never stopped.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "serial/link/board_client.h"

namespace gruwb::serial {

struct BoardRunOptions {
  // Take a checkpoint at the first METRIC at least this many samples after
  // the last one; 0 = at every epoch end. Checkpoints need METRIC events, so
  // settings.metric_every sets how finely they can fall.
  uint32_t checkpoint_every = 0;
  bool checkpoints = true;
  // After a reset: continue from the last checkpoint (or from the start when
  // none was taken yet); false = fail with a message saying so.
  bool resume = true;
  int max_resumes = 3;
  int run_timeout_ms = 600000;
};

struct BoardRunCallbacks {
  std::function<void(const Metric&)> on_metric;     // in order, no duplicates
  std::function<void(const std::string&)> on_line;  // resets, checkpoints, board logs
  std::function<void(UploadKind kind, uint32_t done, uint32_t total)> on_upload;
  std::function<bool()> cancelled;  // polled; true stops the run (STOP) and fails
};

struct BoardRunResult {
  std::vector<Metric> metrics;
  std::vector<uint8_t> weights;  // DOWNLOAD blob after the run
  ConfigureReply configured;
  int resumes = 0;
  uint32_t checkpoints = 0;
  size_t checkpoint_bytes = 0;
  RunCheckpointHeader last_checkpoint;
};

bool run_board_training(BoardClient& client, const std::vector<uint8_t>& model,
                        const std::vector<uint8_t>& dataset, const TrainingSettings& settings,
                        const BoardRunOptions& options, const BoardRunCallbacks& callbacks,
                        BoardRunResult* result, std::string* error);

}  // namespace gruwb::serial
