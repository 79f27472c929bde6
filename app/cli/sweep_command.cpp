// gruwb sweep SPEC.json [--dir DIR] [--jobs N] [--retry-failed]: runs here, N worker processes.
// gruwb sweep SPEC.json --slurm [--partition P --time T --cpus C ...]: one Slurm array job.
// gruwb sweep --status DIR [--wait] | --collect DIR [--report F]... | --run-task DIR I.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QDir>
#include <QFileInfo>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "app/cli/command.h"
#include "app/core/inspect.h"
#include "app/core/report.h"
#include "app/core/sweep.h"
#include "app/core/text_table.h"
#include "engine/tools/model_file.h"

extern char** environ;

namespace gruwb::cli {
namespace {

std::atomic<bool> g_cancel{false};

void on_interrupt(int) {
  if (g_cancel.exchange(true)) std::_Exit(130);
}

std::string absolute_dir(const std::string& dir) {
  return QDir::cleanPath(QFileInfo(QString::fromStdString(dir)).absoluteFilePath()).toStdString();
}

std::string self_path() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "gruwb";
  path[n] = '\0';
  return path;
}

// A program on PATH, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string candidate = dirs.substr(start, colon - start) + "/" + name;
    if (colon > start && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  return "";
}

// Runs a shell command; its stdout and stderr together.
int capture(const std::string& command, std::string* output) {
  output->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output->append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// The last non-empty line of a log (what a failed task said last).
std::string log_tail(const std::string& path) {
  std::vector<uint8_t> bytes;
  std::string error;
  if (!tools::read_file_bytes(path, &bytes, &error)) return "(no log)";
  std::string text(bytes.begin(), bytes.end());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::string line = text.substr(
      text.find_last_of("\n\r") == std::string::npos ? 0 : text.find_last_of("\n\r") + 1);
  if (line.empty()) return "(empty log)";
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

std::string default_dir(const std::string& spec_path) {
  std::string dir = spec_path;
  if (dir.size() > 5 && dir.compare(dir.size() - 5, 5, ".json") == 0) dir.resize(dir.size() - 5);
  return dir + ".sweep";
}

std::vector<std::string> reports_for(const ParsedArgs& parsed, const std::string& dir) {
  if (parsed.has("--report")) return parsed.options.at("--report");
  return {dir + "/sweep-result.json", dir + "/sweep-result.html", dir + "/sweep-result.csv"};
}

// Collects DIR, writes the reports and says how it went: 0 every run
// finished, 1 some failed or did not run.
int collect_and_report(const std::string& dir, const std::vector<std::string>& reports,
                       std::string prefix) {
  app::SweepResult result;
  std::string error;
  if (!app::collect_sweep(dir, &result, &error)) return finish(app::kExitBadInput, "", error);
  for (const std::string& report : reports) {
    if (!app::write_sweep_report(report, result, &error)) {
      return finish(app::kExitFailure, "", error);
    }
  }
  std::string out = std::move(prefix);
  out += result.name + ": " + std::to_string(result.rows.size()) + " runs, " +
         std::to_string(result.finished) + " finished, " + std::to_string(result.failed) +
         " failed, " + std::to_string(result.pending) + " pending\n";
  const auto best = app::best_sweep_rows(result, 5);
  if (!best.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const app::SweepRow* row : best) rows.push_back(app::sweep_table_row(*row, false));
    out += "\nbest runs:\n" + app::plain_table(app::sweep_table_header(result), rows);
  }
  for (const std::string& report : reports) out += "report: " + report + "\n";
  if (result.failed == 0 && result.pending == 0) return finish(app::kExitOk, out, "");
  std::fputs(out.c_str(), stdout);
  for (const app::SweepRow& row : result.rows) {
    if (row.state == app::SweepRunState::kFailed) {
      std::fprintf(stderr, "gruwb: sweep run %d (%s) failed: %s (log: %s)\n", row.index,
                   row.label.c_str(), row.error.c_str(),
                   app::sweep_log_path(dir, row.index).c_str());
    }
  }
  return finish(app::kExitFailure, "",
                "sweep: " + std::to_string(result.failed) + " runs failed, " +
                    std::to_string(result.pending) + " did not run (gruwb sweep --status " + dir +
                    ")");
}

// ---- one run (worker process or Slurm task) ------------------------------------------------

int run_task(const ParsedArgs& parsed) {
  if (parsed.positional.size() != 1) {
    return usage_error("sweep: --run-task DIR takes the run's index I", &kSweepCommand);
  }
  const std::string dir = parsed.value("--run-task");
  long long index = 0;
  app::SweepSpec spec;
  std::string error;
  if (!app::open_sweep_folder(dir, &spec, &error)) return finish(app::kExitBadInput, "", error);
  if (!parse_integer(parsed.positional[0], 0, static_cast<long long>(spec.runs.size()) - 1,
                     &index)) {
    return usage_error("sweep: run '" + parsed.positional[0] + "' is not in 0.." +
                           std::to_string(spec.runs.size() - 1),
                       &kSweepCommand);
  }
  const app::SweepRun& run = spec.runs[static_cast<size_t>(index)];
  std::printf("gruwb sweep run %lld: %s\n", index, app::sweep_run_label(run).c_str());
  std::fflush(stdout);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);  // Slurm's scancel and time limit
  const app::ExperimentResult result =
      app::run_sweep_task(dir, spec, static_cast<int>(index), nullptr, &g_cancel);
  std::string out = std::string(app::experiment_status_name(result.status)) + " in " +
                    std::to_string(static_cast<int>(result.seconds + 0.5)) + " s\n";
  if (!result.runs.empty()) {
    out += app::plain_table(app::headline_header(result), app::headline_table(result));
  }
  if (result.status == app::ExperimentStatus::kCompleted) return finish(app::kExitOk, out, "");
  // The error last in the log (stdout and stderr share it): --status shows the last line.
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  return finish(
      app::kExitFailure, "",
      "sweep run " + std::to_string(index) + ": " +
          (result.error.empty() ? app::experiment_status_name(result.status) : result.error));
}

// ---- here: worker processes ---------------------------------------------------------------

pid_t spawn_task(const std::string& gruwb, const std::string& dir, int index) {
  const std::string log = app::sweep_log_path(dir, index);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  const std::string task = std::to_string(index);
  std::vector<char*> argv = {const_cast<char*>(gruwb.c_str()), const_cast<char*>("sweep"),
                             const_cast<char*>("--run-task"),  const_cast<char*>(dir.c_str()),
                             const_cast<char*>(task.c_str()),  nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, gruwb.c_str(), &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

void draw_progress(bool tty, size_t done, size_t total, int failed, size_t running,
                   const std::string& last) {
  if (!tty) return;
  const int filled = total ? static_cast<int>(30 * done / total) : 30;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(30, '.');
  std::fprintf(stderr, "\r[%s] %zu/%zu runs, %zu running, %d failed  %s\033[K", bar.c_str(), done,
               total, running, failed, last.c_str());
  std::fflush(stderr);
}

int run_here(const std::string& dir, const app::SweepSpec& spec, const std::vector<int>& to_do,
             int jobs, const std::vector<std::string>& reports) {
  const std::string gruwb = self_path();
  const bool tty = isatty(fileno(stderr)) != 0;
  std::signal(SIGINT, on_interrupt);  // the workers get it too: they save and stop
  std::map<pid_t, int> running;
  size_t next = 0, done = 0;
  int failed = 0;
  std::string last;
  const auto start = std::chrono::steady_clock::now();
  while ((next < to_do.size() && !g_cancel) || !running.empty()) {
    while (!g_cancel && next < to_do.size() && running.size() < static_cast<size_t>(jobs)) {
      const int index = to_do[next++];
      const pid_t pid = spawn_task(gruwb, dir, index);
      if (pid < 0) {
        return finish(app::kExitFailure, "",
                      "sweep: cannot start " + gruwb + " for run " + std::to_string(index));
      }
      running[pid] = index;
      last = app::sweep_run_label(spec.runs[static_cast<size_t>(index)]);
    }
    draw_progress(tty, done, to_do.size(), failed, running.size(), last);
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (running.erase(pid) == 0) continue;
    ++done;
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  if (tty) std::fputs("\r\033[K", stderr);
  std::signal(SIGINT, SIG_DFL);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char line[160];
  std::snprintf(line, sizeof line, "ran %zu runs with %d worker process%s in %.1f s%s\n", done,
                jobs, jobs == 1 ? "" : "es", seconds,
                g_cancel ? " (cancelled; run the sweep again to resume)" : "");
  return collect_and_report(dir, reports, line);
}

// ---- Slurm --------------------------------------------------------------------------------

std::vector<std::string> job_ids(const std::string& dir) {
  std::vector<uint8_t> bytes;
  std::string error;
  std::vector<std::string> ids;
  if (!tools::read_file_bytes(dir + "/slurm/jobs", &bytes, &error)) return ids;
  std::string id;
  for (uint8_t c : bytes) {
    if (c == '\n') {
      if (!id.empty()) ids.push_back(id);
      id.clear();
    } else {
      id += static_cast<char>(c);
    }
  }
  if (!id.empty()) ids.push_back(id);
  return ids;
}

int submit(const std::string& dir, const app::SweepSpec& spec, const std::vector<int>& to_do,
           const ParsedArgs& parsed) {
  app::SlurmOptions options;
  options.partition = parsed.value("--partition");
  options.time = parsed.value("--time");
  options.account = parsed.value("--account");
  options.memory = parsed.value("--mem");
  if (parsed.has("--sbatch-option")) options.extra = parsed.options.at("--sbatch-option");
  std::string message;
  if (!parsed.integer("--cpus", 1, 4096, &options.cpus, &message) ||
      !parsed.integer("--max-parallel", 0, 1000000, &options.max_parallel, &message)) {
    return usage_error(message, &kSweepCommand);
  }
  options.gruwb = parsed.has("--gruwb") ? absolute_dir(parsed.value("--gruwb")) : self_path();
  const std::string sbatch = find_on_path("sbatch");
  if (sbatch.empty()) {
    return finish(app::kExitBadInput, "",
                  "sweep: sbatch is not on PATH: --slurm needs a Slurm login node (or run here "
                  "with --jobs N)");
  }
  const std::string script_path = dir + "/slurm/sweep.sbatch";
  std::string error;
  if (!QDir().mkpath(QString::fromStdString(dir + "/slurm")) ||
      !app::save_text_atomically(script_path, app::slurm_batch_script(dir, spec, to_do, options),
                                 &error)) {
    return finish(app::kExitFailure, "", error.empty() ? dir + "/slurm: cannot create" : error);
  }
  std::string output;
  const int code =
      capture(shell_quote(sbatch) + " --parsable " + shell_quote(script_path), &output);
  const std::string id = first_line(output).substr(0, first_line(output).find(';'));
  if (code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    return finish(app::kExitFailure, "",
                  "sweep: sbatch failed (exit " + std::to_string(code) +
                      "): " + (output.empty() ? "no output" : first_line(output)) +
                      " (script: " + script_path + ")");
  }
  std::string jobs;
  for (const std::string& old : job_ids(dir)) jobs += old + "\n";
  if (!app::save_text_atomically(dir + "/slurm/jobs", jobs + id + "\n", &error)) {
    return finish(app::kExitFailure, "", error);
  }
  return finish(app::kExitOk,
                "submitted Slurm job " + id + ": " + std::to_string(to_do.size()) +
                    " tasks (runs " + app::slurm_array_text(to_do) + "), logs in " + dir +
                    "/logs\nfollow: gruwb sweep --status " + dir +
                    "\nmerge:  gruwb sweep --collect " + dir + "\n",
                "");
}

// The array tasks Slurm still holds (pending or running), by run index; false
// when squeue cannot tell (no Slurm here, or it failed).
bool queued_tasks(const std::string& dir, std::map<int, std::string>* out, std::string* note) {
  const std::vector<std::string> ids = job_ids(dir);
  if (ids.empty()) return false;
  const std::string squeue = find_on_path("squeue");
  if (squeue.empty()) {
    *note = "squeue is not on PATH: queued tasks are counted as pending";
    return false;
  }
  std::string list;
  for (const std::string& id : ids) list += (list.empty() ? "" : ",") + id;
  std::string output;
  if (capture(shell_quote(squeue) + " -h -r -o '%i %T' -j " + list, &output) != 0) {
    // squeue fails for job ids the controller forgot: ask one by one.
    output.clear();
    for (const std::string& id : ids) {
      std::string part;
      if (capture(shell_quote(squeue) + " -h -r -o '%i %T' -j " + id, &part) == 0) output += part;
    }
  }
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(start, end - start);
    start = end + 1;
    const size_t underscore = line.find('_'), space = line.find(' ');
    if (underscore == std::string::npos || space == std::string::npos || space < underscore) {
      continue;
    }
    const int task = std::atoi(line.substr(underscore + 1, space - underscore - 1).c_str());
    (*out)[task] = line.substr(space + 1);
  }
  return true;
}

int status(const ParsedArgs& parsed) {
  const std::string dir = absolute_dir(parsed.value("--status"));
  app::SweepSpec spec;
  std::string error;
  if (!app::open_sweep_folder(dir, &spec, &error)) return finish(app::kExitBadInput, "", error);
  double wait_limit = 0;
  std::string message;
  if (!parsed.number("--timeout", 0, 1e9, &wait_limit, &message)) {
    return usage_error(message, &kSweepCommand);
  }
  const bool wait = parsed.has("--wait");
  const auto start = std::chrono::steady_clock::now();
  std::vector<app::SweepRunStatus> states;
  std::map<int, std::string> queued;
  std::string note;
  bool known = false;
  for (;;) {
    states = app::sweep_status(dir, spec);
    queued.clear();
    known = queued_tasks(dir, &queued, &note);
    int open = 0;
    for (size_t i = 0; i < states.size(); ++i) {
      open += states[i].state == app::SweepRunState::kPending &&
              (!known || queued.count(static_cast<int>(i)));
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!wait || open == 0 || (wait_limit > 0 && waited > wait_limit)) break;
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  int finished = 0, failed = 0, in_queue = 0, pending = 0;
  std::string problems;
  for (size_t i = 0; i < states.size(); ++i) {
    const int index = static_cast<int>(i);
    const std::string label = app::sweep_run_label(spec.runs[i]);
    const std::string log = app::sweep_log_path(dir, index);
    if (states[i].state == app::SweepRunState::kFinished) {
      ++finished;
    } else if (states[i].state == app::SweepRunState::kFailed) {
      ++failed;
      problems += "run " + std::to_string(index) + " (" + label + ") failed: " + states[i].error +
                  " (log " + log + ": " + log_tail(log) + ")\n";
    } else if (known && queued.count(index)) {
      ++in_queue;
    } else if (known) {
      // Slurm no longer holds the task and it left no result: it died.
      ++failed;
      problems += "run " + std::to_string(index) + " (" + label +
                  ") failed: its Slurm task ended without a result (log " + log + ": " +
                  log_tail(log) + ")\n";
    } else {
      ++pending;
    }
  }
  std::string out = spec.name + " (" + dir + "): " + std::to_string(states.size()) + " runs, " +
                    std::to_string(finished) + " finished, " + std::to_string(failed) +
                    " failed, " + std::to_string(in_queue) + " queued or running, " +
                    std::to_string(pending) + " pending\n";
  if (!note.empty()) out += "note: " + note + "\n";
  if (failed == 0) return finish(app::kExitOk, out, "");
  std::fputs(out.c_str(), stdout);
  std::fputs(problems.c_str(), stdout);
  return finish(app::kExitFailure, "",
                "sweep: " + std::to_string(failed) +
                    " runs failed (retry them: gruwb sweep SPEC "
                    "--dir " +
                    dir + " --retry-failed [--slurm])");
}

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  const std::vector<OptionSpec> options = {
      {"--dir", true},     {"--jobs", true},         {"--retry-failed", false},
      {"--report", true},  {"--slurm", false},       {"--partition", true},
      {"--time", true},    {"--cpus", true},         {"--account", true},
      {"--mem", true},     {"--max-parallel", true}, {"--sbatch-option", true},
      {"--gruwb", true},   {"--status", true},       {"--wait", false},
      {"--timeout", true}, {"--collect", true},      {"--run-task", true},
      {"--dry-run", false}};
  if (!parse_args(kSweepCommand, args, options, &parsed, &exit_code)) return exit_code;
  if (parsed.has("--run-task")) return run_task(parsed);
  if (parsed.has("--status")) return status(parsed);
  if (parsed.has("--collect")) {
    const std::string dir = absolute_dir(parsed.value("--collect"));
    return collect_and_report(dir, reports_for(parsed, dir), "");
  }
  if (parsed.positional.size() != 1) {
    return usage_error("sweep: give one sweep spec SPEC.json (or --status/--collect DIR)",
                       &kSweepCommand);
  }
  int jobs = 1;
  std::string message, error;
  if (!parsed.integer("--jobs", 1, 256, &jobs, &message)) {
    return usage_error(message, &kSweepCommand);
  }
  const std::string spec_path = parsed.positional[0];
  app::SweepSpec spec;
  if (!app::load_sweep_spec(spec_path, &spec, &error)) return finish(app::kExitBadInput, "", error);
  const std::string dir = absolute_dir(parsed.value("--dir", default_dir(spec_path)));
  for (const std::string& report : reports_for(parsed, dir)) {
    const size_t dot = report.find_last_of('.');
    const std::string ext = dot == std::string::npos ? "" : report.substr(dot);
    if (ext != ".json" && ext != ".html" && ext != ".htm" && ext != ".md" && ext != ".csv") {
      return usage_error("sweep: --report '" + report + "' (use .json, .html, .md or .csv)",
                         &kSweepCommand);
    }
  }
  if (!app::prepare_sweep_folder(dir, spec, &error)) return finish(app::kExitBadInput, "", error);
  const std::vector<app::SweepRunStatus> states = app::sweep_status(dir, spec);
  std::vector<int> to_do = app::sweep_runs_to_do(states, parsed.has("--retry-failed"));
  if (parsed.has("--dry-run")) {
    std::string out = spec.name + ": " + std::to_string(spec.runs.size()) + " runs in " + dir +
                      ", " + std::to_string(to_do.size()) + " to run\n";
    for (int i : to_do) out += app::sweep_run_label(spec.runs[static_cast<size_t>(i)]) + "\n";
    return finish(app::kExitOk, out, "");
  }
  if (parsed.has("--slurm")) {
    // Runs an earlier job still holds are not submitted twice.
    std::map<int, std::string> queued;
    std::string note;
    if (queued_tasks(dir, &queued, &note)) {
      std::vector<int> not_queued;
      for (int i : to_do) {
        if (!queued.count(i)) not_queued.push_back(i);
      }
      to_do = not_queued;
    }
    if (to_do.empty()) {
      return finish(app::kExitOk,
                    "nothing to submit: every run of " + dir + " has a result or is queued\n", "");
    }
    return submit(dir, spec, to_do, parsed);
  }
  return run_here(dir, spec, to_do, jobs, reports_for(parsed, dir));
}

}  // namespace

const Command kSweepCommand = {
    "sweep", "Grid/random search: many experiments, here or as a Slurm array job; merge",
    "Usage: gruwb sweep SPEC.json [--dir DIR] [--jobs N] [--retry-failed] [--report F]...\n"
    "       gruwb sweep SPEC.json --slurm [--partition P] [--time T] [--cpus C] ...\n"
    "       gruwb sweep --status DIR [--wait [--timeout S]]\n"
    "       gruwb sweep --collect DIR [--report FILE]...\n"
    "       gruwb sweep --run-task DIR I\n"
    "\n"
    "Expands a sweep spec (docs/sweeps.md) into runs, each one experiment (as\n"
    "gruwb experiment runs it) with its own result DIR/runs/run-NNNN.json, written\n"
    "atomically. Running the same SPEC into the same DIR again resumes: finished\n"
    "runs are skipped, failed ones too unless --retry-failed. Settings a sweep\n"
    "varies: cell, units, dense, layout, reset_after, bias_init, format, lr, batch,\n"
    "epochs, optimizer, patience, clip, stages, seed, seeds, quantize, timesteps,\n"
    "validation, normalize, length, data.\n"
    "\n"
    "Here:\n"
    "  --dir DIR            The sweep folder (default: SPEC without .json + .sweep)\n"
    "  --jobs N             Worker processes (default 1); a progress bar on a terminal\n"
    "  --retry-failed       Run the failed runs again\n"
    "  --dry-run            List the runs still to run; run nothing\n"
    "  --report FILE        .json, .html, .md or .csv of the merged result; repeatable\n"
    "                       (default DIR/sweep-result.json, .html and .csv)\n"
    "On Slurm (DIR on a filesystem every node sees):\n"
    "  --slurm              Write DIR/slurm/sweep.sbatch and submit it: one array job,\n"
    "                       task I runs 'gruwb sweep --run-task DIR I'\n"
    "  --partition P, --time T, --account A, --mem M  The sbatch options of that name\n"
    "  --cpus C             --cpus-per-task (default 1)\n"
    "  --max-parallel N     At most N tasks at a time (--array=...%N)\n"
    "  --sbatch-option OPT  Any further sbatch option, e.g. --qos=short; repeatable\n"
    "  --gruwb PATH         The gruwb binary the nodes run (default: this one)\n"
    "Afterwards:\n"
    "  --status DIR         Finished, failed (with the task's log), queued, pending\n"
    "  --wait               With --status: until no run is queued or running\n"
    "  --timeout S          With --wait: give up after S seconds\n"
    "  --collect DIR        Merge the finished runs: hparams table, best runs, accuracy\n"
    "                       vs bytes and vs latency plots, every run's curves\n"
    "  -h, --help           Show this help\n"
    "\n"
    "Exit status: 0 every run finished (submitted, for --slurm; nothing failed, for\n"
    "--status); 1 a run failed or did not run; 2 bad options or spec (one line).\n"
    "\n"
    "Example:\n"
    "  gruwb sweep cells.json --jobs 2\n"
    "  gruwb sweep cells.json --dir /shared/me/cells --slurm --partition short --time 0:20:00\n"
    "  gruwb sweep --status /shared/me/cells --wait && gruwb sweep --collect /shared/me/cells\n",
    run};

}  // namespace gruwb::cli
