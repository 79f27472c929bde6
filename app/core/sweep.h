#pragma once
// Sweeps: many experiments from one spec (grid and random search over any
// experiment setting), each run exactly one experiment (run_experiment) with
// its own result file in a sweep folder, run here by worker processes or on a
// Slurm cluster as one array job, then merged into one result. docs/sweeps.md.
//
// The sweep folder (on a shared filesystem for Slurm):
//   DIR/sweep.json            the expanded runs (written once, atomically)
//   DIR/runs/run-0007.json    run 7's experiment result (atomic, after every stage)
//   DIR/logs/run-0007.log     what run 7 printed (worker process or Slurm task)
//   DIR/slurm/sweep.sbatch    the array job; DIR/slurm/jobs its job ids
//   DIR/sweep-result.json     the merged result (--collect), with .html and .csv
//
// Plain C++ over Qt Core's JSON reader, like experiment.h.

#include <cstdint>
#include <string>
#include <vector>

#include "app/core/experiment.h"

namespace gruwb::app {

// One swept setting's value, as text ("gru", "16", "0.001").
struct SweepParam {
  std::string name, value;
};

struct SweepRun {
  int index = 0;
  std::vector<SweepParam> params;  // in the spec's order: grid, then random
  ExperimentSpec experiment;
};

struct SweepSpec {
  std::string name = "sweep";
  std::vector<SweepRun> runs;
};

// The settings a sweep may vary (help and errors list them).
const char* sweep_setting_names();
// Sets one setting of `spec`: a build key (cell, units, dense, layout,
// reset_after, bias_init, format) edits the build spec; lr, batch, epochs,
// optimizer, patience, clip every training stage; stages, seed, seeds,
// quantize (none|int8|int16x8|dynamic), timesteps, validation, normalize,
// length, data the experiment.
bool apply_sweep_param(const SweepParam& param, ExperimentSpec* spec, std::string* error);

// "r3 cell=gru units=16 seed=2": the run's name in tables and merged results.
std::string sweep_run_label(const SweepRun& run);

// Reads a sweep spec (format gruwb-sweep-1) and expands it into runs. Relative
// paths (an "experiment" file, data, model files) are taken from `base_dir`
// and made absolute, so tasks on other machines find them on a shared filesystem.
bool parse_sweep_spec(const std::string& text, const std::string& label,
                      const std::string& base_dir, SweepSpec* out, std::string* error);
bool load_sweep_spec(const std::string& path, SweepSpec* out, std::string* error);

// The folder's sweep.json (the runs with their experiment specs).
std::string sweep_folder_json(const SweepSpec& spec);
// Creates DIR (runs/, logs/, sweep.json), or checks that an existing DIR
// holds the same sweep (then its finished runs count: resume).
bool prepare_sweep_folder(const std::string& dir, const SweepSpec& spec, std::string* error);
bool open_sweep_folder(const std::string& dir, SweepSpec* out, std::string* error);
std::string sweep_result_path(const std::string& dir, int index);  // DIR/runs/run-0007.json
std::string sweep_log_path(const std::string& dir, int index);     // DIR/logs/run-0007.log

enum class SweepRunState { kPending, kFinished, kFailed };
const char* sweep_run_state_name(SweepRunState state);
struct SweepRunStatus {
  SweepRunState state = SweepRunState::kPending;  // pending: no result, or one cut short
  std::string error;                              // failed: the experiment's error
};
// Every run's state from its result file.
std::vector<SweepRunStatus> sweep_status(const std::string& dir, const SweepSpec& spec);
// The runs still to run: pending ones, and failed ones with `retry_failed`.
std::vector<int> sweep_runs_to_do(const std::vector<SweepRunStatus>& status, bool retry_failed);

// One run (what a worker process or a Slurm task does): its experiment, saved
// to sweep_result_path after every stage. A finished run is not run again.
ExperimentResult run_sweep_task(const std::string& dir, const SweepSpec& spec, int index,
                                const ExperimentCallback& callback,
                                const std::atomic<bool>* cancel);

// The merged result: one row per run with its settings and figures, and every
// finished run's experiment in `merged` (its cells and stages named by the
// run's label), so the experiment report writers show all runs' curves.
struct SweepRow {
  int index = 0;
  std::string label;
  std::vector<SweepParam> params;
  SweepRunState state = SweepRunState::kPending;
  std::string error;
  // Of the run's last stage (mean over seeds) and its deployed model: the
  // quantized one after a quantization stage, else the fused float model.
  double accuracy = 0.0, loss = 0.0;
  int64_t parameters = 0;
  uint64_t model_bytes = 0, arena_bytes = 0;
  double latency_us = 0.0;  // one inference on the machine that ran it
  double seconds = 0.0;
};

struct SweepResult {
  std::string name;
  std::vector<std::string> param_names;  // the swept settings, in order
  std::vector<SweepRow> rows;            // every run, by index
  int finished = 0, failed = 0, pending = 0;
  ExperimentResult merged;
};

bool collect_sweep(const std::string& dir, SweepResult* out, std::string* error);
// Finished rows, best first: higher test accuracy, then fewer model bytes, then index.
std::vector<const SweepRow*> best_sweep_rows(const SweepResult& result, size_t count);

// The hparams table (CLI, HTML, CSV and the GUI): run, the swept settings,
// state, test accuracy, loss, parameters, model bytes, arena bytes, latency,
// seconds. Figures as plain numbers (CSV) or formatted for reading.
std::vector<std::string> sweep_table_header(const SweepResult& result);
std::vector<std::string> sweep_table_row(const SweepRow& row, bool plain_numbers);

// JSON of everything (format gruwb-sweep-result-1) and its reader.
std::string sweep_result_json(const SweepResult& result);
bool parse_sweep_result(const std::string& text, const std::string& label, SweepResult* out,
                        std::string* error);
// A sweep folder (collected now) or a collected sweep-result JSON file.
bool open_sweep_result(const std::string& path, SweepResult* out, std::string* error);

// Slurm: the array job whose task i runs `GRUWB sweep --run-task DIR i`.
struct SlurmOptions {
  std::string partition, time, account, memory;  // "" = the cluster's default
  int cpus = 1;
  int max_parallel = 0;            // --array=...%N; 0 = no limit
  std::vector<std::string> extra;  // further "#SBATCH" options, as given
  std::string gruwb;               // the binary every node runs (absolute)
};
// "0-7", "1,3,5-6": runs as sbatch --array wants them.
std::string slurm_array_text(const std::vector<int>& indices);
std::string slurm_batch_script(const std::string& dir, const SweepSpec& spec,
                               const std::vector<int>& indices, const SlurmOptions& options);

}  // namespace gruwb::app
