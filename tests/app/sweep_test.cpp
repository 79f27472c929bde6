// Sweep specs (app/core/sweep.h): grid and random expansion onto experiment
// specs, the settings' checks, the sweep folder's states, the merged result
// of two real runs (BasicMotions, 20 steps, 1 epoch) and its JSON round trip,
// and the Slurm array script.

#include "app/core/sweep.h"

#include <gtest/gtest.h>

#include <QTemporaryDir>
#include <set>

#include "app/core/report.h"

namespace gruwb::app {
namespace {

const std::string kData = GRUWB_SOURCE_DIR "/resources/samples/BasicMotions_TRAIN.ts";

std::string spec_text(const std::string& body) {
  return "{\"format\": \"gruwb-sweep-1\", \"name\": \"t\", \"experiment\": {\"build\": "
         "\"cell=gru,units=8\", \"data\": \"" +
         kData + "\", \"timesteps\": 20, \"stages\": \"all\"}" + body + "}";
}

TEST(Sweep, GridExpandsEveryCombinationInTheGivenOrder) {
  SweepSpec spec;
  std::string error;
  ASSERT_TRUE(parse_sweep_spec(spec_text(", \"fixed\": {\"epochs\": 3, \"lr\": 0.01}, \"grid\": "
                                         "[{\"cell\": [\"gru\", \"lstm\"]}, {\"units\": [8, 16]}, "
                                         "{\"seed\": [1, 2]}]"),
                               "s.json", "/", &spec, &error))
      << error;
  ASSERT_EQ(spec.runs.size(), 8u);
  EXPECT_EQ(sweep_run_label(spec.runs[0]), "r0 cell=gru units=8 seed=1");
  EXPECT_EQ(sweep_run_label(spec.runs[3]), "r3 cell=gru units=16 seed=2");
  EXPECT_EQ(sweep_run_label(spec.runs[7]), "r7 cell=lstm units=16 seed=2");
  const ExperimentSpec& e = spec.runs[5].experiment;  // lstm, 8 units, seed 2
  EXPECT_EQ(e.build, "cell=lstm,units=8");
  EXPECT_EQ(e.first_seed, 2u);
  ASSERT_EQ(e.stages.size(), 1u);
  EXPECT_EQ(e.stages[0].scope, "all");
  EXPECT_EQ(e.stages[0].epochs, 3);
  EXPECT_FLOAT_EQ(e.stages[0].learning_rate, 0.01f);
  EXPECT_EQ(e.stages[0].batch_size, 8);  // gruwb experiment's default for text stages
  EXPECT_EQ(e.data_path, kData);
}

TEST(Sweep, StagesAndQuantizeApplyBeforeAndAfterTheOtherSettings) {
  SweepSpec spec;
  std::string error;
  // lr listed before stages must still reach the new stages; quantize adds the last one.
  ASSERT_TRUE(parse_sweep_spec(spec_text(", \"grid\": {\"lr\": [0.02], \"quantize\": [\"none\", "
                                         "\"int8\"], \"stages\": [\"init,fc,all\"]}"),
                               "s.json", "/", &spec, &error))
      << error;
  ASSERT_EQ(spec.runs.size(), 2u);
  ASSERT_EQ(spec.runs[0].experiment.stages.size(), 3u);
  ASSERT_EQ(spec.runs[1].experiment.stages.size(), 4u);
  EXPECT_EQ(spec.runs[1].experiment.stages[3].scope, "int8");
  EXPECT_FLOAT_EQ(spec.runs[1].experiment.stages[2].learning_rate, 0.02f);
  EXPECT_FLOAT_EQ(spec.runs[1].experiment.stages[1].learning_rate, 0.02f);
}

TEST(Sweep, RandomTrialsStayInTheirRangesAndRepeatForTheSameSeed) {
  const std::string text = spec_text(
      ", \"grid\": {\"cell\": [\"gru\", \"rnn\"]}, \"random\": {\"trials\": 20, \"seed\": 7, "
      "\"space\": {\"lr\": {\"log_uniform\": [0.0001, 0.01]}, \"units\": {\"int_uniform\": [4, "
      "9]}, \"batch\": [4, 32]}}");
  SweepSpec a, b;
  std::string error;
  ASSERT_TRUE(parse_sweep_spec(text, "s.json", "/", &a, &error)) << error;
  ASSERT_TRUE(parse_sweep_spec(text, "s.json", "/", &b, &error)) << error;
  ASSERT_EQ(a.runs.size(), 40u);  // every grid point gets the same 20 trials
  std::set<std::string> units, batches;
  for (size_t i = 0; i < a.runs.size(); ++i) {
    EXPECT_EQ(sweep_run_label(a.runs[i]), sweep_run_label(b.runs[i]));
    const StageSpec& s = a.runs[i].experiment.stages[0];
    EXPECT_GE(s.learning_rate, 0.0001f);
    EXPECT_LE(s.learning_rate, 0.01f);
    ASSERT_EQ(a.runs[i].params.size(), 4u);  // cell, then batch, lr, units (alphabetical)
    units.insert(a.runs[i].params[3].value);
    batches.insert(a.runs[i].params[1].value);
  }
  for (size_t k = 1; k < 4; ++k) {  // the rnn runs get the gru runs' trials
    EXPECT_EQ(a.runs[0].params[k].value, a.runs[20].params[k].value);
  }
  EXPECT_EQ(a.runs[20].params[0].value, "rnn");
  for (const std::string& u : units) EXPECT_TRUE(u >= "4" && u <= "9") << u;
  EXPECT_GT(units.size(), 3u);
  EXPECT_EQ(batches, (std::set<std::string>{"32", "4"}));
}

TEST(Sweep, BadSettingsAreNamed) {
  SweepSpec spec;
  std::string error;
  EXPECT_FALSE(
      parse_sweep_spec(spec_text(", \"grid\": {\"colour\": [1]}"), "s.json", "/", &spec, &error));
  EXPECT_NE(error.find("s.json: unknown setting 'colour' (cell, units"), std::string::npos)
      << error;
  EXPECT_FALSE(
      parse_sweep_spec(spec_text(", \"grid\": {\"batch\": [0]}"), "s.json", "/", &spec, &error));
  EXPECT_NE(error.find("setting batch='0': expected a whole number in 1..100000"),
            std::string::npos)
      << error;
  EXPECT_FALSE(parse_sweep_spec(spec_text(", \"grid\": {\"cell\": [\"gruu\"]}"), "s.json", "/",
                                &spec, &error));
  EXPECT_NE(error.find("run r0 cell=gruu"), std::string::npos) << error;
  EXPECT_FALSE(
      parse_sweep_spec("{\"format\": \"gruwb-experiment-1\"}", "s.json", "/", &spec, &error));
  EXPECT_EQ(error, "s.json: not a GRU Workbench sweep (format is not gruwb-sweep-1)");
  EXPECT_FALSE(parse_sweep_spec(
      spec_text(", \"random\": {\"trials\": 2, \"space\": {\"lr\": {\"log_uniform\": [0, 1]}}}"),
      "s.json", "/", &spec, &error));
  EXPECT_NE(error.find("log_uniform takes [low, high] with low <= high and low > 0"),
            std::string::npos)
      << error;
}

TEST(Sweep, RelativeDataPathsAreTakenFromTheSpecFolder) {
  SweepSpec spec;
  std::string error;
  ASSERT_TRUE(parse_sweep_spec(
      "{\"format\": \"gruwb-sweep-1\", \"experiment\": {\"build\": \"cell=gru,units=8\", "
      "\"data\": \"../data/x.ts\", \"stages\": \"all\"}}",
      "s.json", "/shared/me/sweeps", &spec, &error))
      << error;
  ASSERT_EQ(spec.runs.size(), 1u);
  EXPECT_EQ(spec.runs[0].experiment.data_path, "/shared/me/data/x.ts");
}

TEST(Sweep, TwoRealRunsMergeIntoOneResultThatReadsBack) {
  QTemporaryDir tmp;
  const std::string dir = tmp.filePath("s").toStdString();
  SweepSpec spec;
  std::string error;
  ASSERT_TRUE(
      parse_sweep_spec(spec_text(", \"fixed\": {\"epochs\": 1}, \"grid\": {\"units\": [4, 8, 12]}"),
                       "s.json", "/", &spec, &error))
      << error;
  ASSERT_TRUE(prepare_sweep_folder(dir, spec, &error)) << error;
  // The same folder with another sweep is refused; the same sweep resumes.
  SweepSpec other = spec;
  other.runs.pop_back();
  EXPECT_FALSE(prepare_sweep_folder(dir, other, &error));
  EXPECT_NE(error.find("holds a different sweep"), std::string::npos) << error;
  ASSERT_TRUE(prepare_sweep_folder(dir, spec, &error)) << error;

  EXPECT_EQ(sweep_runs_to_do(sweep_status(dir, spec), false), (std::vector<int>{0, 1, 2}));
  for (int i : {0, 2}) {
    EXPECT_EQ(run_sweep_task(dir, spec, i, nullptr, nullptr).status, ExperimentStatus::kCompleted);
  }
  const std::vector<SweepRunStatus> status = sweep_status(dir, spec);
  EXPECT_EQ(status[0].state, SweepRunState::kFinished);
  EXPECT_EQ(status[1].state, SweepRunState::kPending);
  EXPECT_EQ(sweep_runs_to_do(status, false), (std::vector<int>{1}));

  SweepResult result;
  ASSERT_TRUE(collect_sweep(dir, &result, &error)) << error;
  EXPECT_EQ(result.finished, 2);
  EXPECT_EQ(result.pending, 1);
  EXPECT_EQ(result.param_names, (std::vector<std::string>{"units"}));
  const SweepRow& small = result.rows[0];
  const SweepRow& large = result.rows[2];
  EXPECT_LT(small.model_bytes, large.model_bytes);  // 4 vs 12 GRU units
  EXPECT_LT(small.parameters, large.parameters);
  EXPECT_GT(small.model_bytes, 0u);
  EXPECT_GT(small.latency_us, 0.0);
  // Each run's stages, named by its label, in the merged experiment.
  ASSERT_EQ(result.merged.runs.size(), 2u);
  EXPECT_EQ(result.merged.runs[1].cell, "r2 units=12");
  EXPECT_EQ(result.merged.runs[1].test_accuracy, large.accuracy);
  ASSERT_EQ(result.merged.summary.size(), 2u);
  const auto best = best_sweep_rows(result, 5);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_GE(best[0]->accuracy, best[1]->accuracy);

  SweepResult back;
  ASSERT_TRUE(parse_sweep_result(sweep_result_json(result), "r.json", &back, &error)) << error;
  EXPECT_EQ(sweep_result_json(back), sweep_result_json(result));

  // The reports: CSV one row per run (empty figures when not run), HTML with both plots.
  const std::string csv = sweep_report_csv(result);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "run,units,state,test_accuracy,test_loss,parameters,model_bytes,arena_bytes,"
            "latency_us,seconds");
  EXPECT_NE(csv.find("\n1,8,pending,,,,,,,\n"), std::string::npos) << csv;
  const std::string html = sweep_report_html(result);
  EXPECT_NE(html.find("Test accuracy vs model bytes"), std::string::npos);
  EXPECT_NE(html.find("Test accuracy vs latency"), std::string::npos);
  EXPECT_NE(html.find("<h2>Best runs</h2>"), std::string::npos);
  EXPECT_NE(html.find("<title>r2 units=12</title>"), std::string::npos);
}

TEST(Sweep, SlurmScriptRunsEachTaskOnItsRun) {
  EXPECT_EQ(slurm_array_text({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(slurm_array_text({3}), "3");
  SweepSpec spec;
  spec.name = "cells x units";
  SlurmOptions options;
  options.partition = "short";
  options.time = "0:20:00";
  options.cpus = 2;
  options.max_parallel = 4;
  options.extra = {"--qos=low"};
  options.gruwb = "/opt/gruwb/bin/gruwb";
  const std::string script = slurm_batch_script("/shared/sweep dir", spec, {0, 1, 2, 6}, options);
  for (const char* line :
       {"#SBATCH --job-name=gruwb-sweep-cells_x_units\n", "#SBATCH --array=0-2,6%4\n",
        "#SBATCH --output=/shared/sweep dir/logs/run-%4a.log\n", "#SBATCH --cpus-per-task=2\n",
        "#SBATCH --partition=short\n", "#SBATCH --time=0:20:00\n", "#SBATCH --qos=low\n",
        "exec '/opt/gruwb/bin/gruwb' sweep --run-task '/shared/sweep dir' "
        "\"$SLURM_ARRAY_TASK_ID\"\n"}) {
    EXPECT_NE(script.find(line), std::string::npos) << line << "\n" << script;
  }
  EXPECT_EQ(sweep_log_path("/d", 7), "/d/logs/run-0007.log");  // what %4a names
}

}  // namespace
}  // namespace gruwb::app
