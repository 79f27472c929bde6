#pragma once
// `corpus`: every model of a folder through what a new user tries first, one line each:
// does the engine run it (prepare, or why not), does it equal the real-TFLite outputs kept
// beside it (DIR/golden/<stem>/input<i>.npy and output<i>.npy, as in ../shared's real
// models), which recurrent cells `fuse` rewrites and the bytes before/after, and does it
// train (one MSE step on the loss output with finite loss and gradients), and whether the form
// `gruwb run` runs (the fused form of its loops, loop_plan.h) equals the golden outputs too. The
// CLI
// (`gruwb corpus DIR`) prints the lines; tests read the same rows.

#include <string>
#include <vector>

namespace gruwb::app {

struct CorpusRow {
  std::string file;  // name inside the folder
  bool runs = false;
  std::string run_error;  // why not (one line)
  // "" no golden files; "equal" within tolerance; else "differs by <x>" or an error.
  std::string golden;
  double golden_error = 0;  // largest error relative to max(1, |ref|) (integers: steps)
  // The form `gruwb run` runs (loop_plan.h): the fused form of its loops when that form agrees
  // with the file; its comparison with the golden outputs as `golden` ("" when not fused).
  bool runs_fused = false;
  std::string fused_golden;
  double fused_golden_error = 0;
  int cells_found = 0, cells_fused = 0;
  int stateful_fused = 0;  // with `fuse --stateful`, tried when cells are left
  std::string fuse_note;   // why the first cell left alone was not fused
  unsigned long long bytes_before = 0, bytes_after = 0;
  bool trains = false;
  int trained_weights = 0;
  int dequantized_weights = 0;  // INT8 weights of a hybrid model trained as float32 copies
  int integer_tensors = 0;      // quantized tensors of a full-integer model trained as float32
  std::string train_error;
};

struct CorpusRequest {
  std::string folder;
  std::string golden_folder;  // "" = <folder>/golden
  bool json = false;
};

// Rows in file-name order; false with *error when the folder cannot be read.
bool corpus_rows(const CorpusRequest& request, std::vector<CorpusRow>* rows, std::string* error);

int run_corpus(const CorpusRequest& request, std::string* out, std::string* err);

}  // namespace gruwb::app
