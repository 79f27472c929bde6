#pragma once
// The hparams table of a session's runs, as TensorBoard's HParams dashboard lists them: one row
// per run (one stage of one cell and seed of an experiment) with the settings it trained with
// and the figures it ended with. The GUI's HParams dock shows it (sorted, filtered, exported as
// CSV); a sweep's table (sweep.h) is its cousin for `gruwb sweep` runs and shares the CSV
// writer (text_table.h). Everything here is read from an ExperimentResult, so a result reopened
// from a project or a JSON file gives the same rows.

#include <cstdint>
#include <string>
#include <vector>

#include "app/core/experiment.h"

namespace gruwb::app {

struct HparamsRow {
  std::string run;         // hparams_run_name(): the Curves dock's run of the same stage
  std::string experiment;  // ExperimentSpec::name
  std::string stage;
  std::string model;      // the row's label in a comparison (cell or file), else "" (one model)
  std::string cell;       // the recurrent cell's display name ("GRU"); "" unknown
  int units = 0;          // 0 unknown
  std::string optimizer;  // "adam", "sgd"
  float learning_rate = 0.f;
  int batch_size = 0;
  int epochs = 0;  // as set for the stage; 0 for init (evaluates only) and quantization stages
  uint64_t seed = 0;
  std::string state;       // "finished", "early stopped", "stopped", "failed: <why>"
  bool evaluated = false;  // accuracy and cross entropy are valid
  double accuracy = 0.0, cross_entropy = 0.0;  // test split
  int64_t trainable_parameters = 0;
  uint64_t model_bytes = 0;            // 0 unknown
  uint64_t training_memory_bytes = 0;  // TrainingMemory::total; 0 for stages that do not train
  double seconds = 0.0;
};

// "exp / stage", plus the cell (or model file) in a comparison and "sN" with several seeds: the
// name the Curves dock lists a run under, and the hparams table's run column.
std::string hparams_run_name(const ExperimentSpec& spec, const std::string& cell,
                             const std::string& stage, uint64_t seed);

// Every run of `result`, in the order they ran.
std::vector<HparamsRow> hparams_rows(const ExperimentResult& result);

// The columns: run, experiment, stage, model, cell, units, optimizer, lr, batch, epochs, seed,
// state, accuracy (test), CE (test cross entropy), params (trainable), model bytes, train memory
// (bytes), seconds. `csv`: the CSV's longer snake_case names.
std::vector<std::string> hparams_table_header(bool csv);
// One row's cells: numbers formatted for reading ("-" when unknown), or with `plain_numbers`
// as the shortest text that reads back as the same value ("" when unknown) for CSV.
std::vector<std::string> hparams_table_row(const HparamsRow& row, bool plain_numbers);
// The CSV the HParams dock exports: hparams_table_header(true), then every row in plain numbers.
std::string hparams_csv(const std::vector<HparamsRow>& rows);

}  // namespace gruwb::app
