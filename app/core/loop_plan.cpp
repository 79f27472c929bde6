#include "app/core/loop_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "engine/tools/fuser.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_runner.h"

namespace gruwb::app {
namespace {

constexpr uint32_t kCheckSeed = 11;  // the same check input on every run and machine

// One invoke on the check input (float inputs uniform in [-1, 1] from a fixed seed, other
// types zero); every output as doubles, in order. False when the engine cannot run the model.
bool outputs_on_check_input(const std::vector<uint8_t>& bytes,
                            std::vector<std::vector<double>>* outputs,
                            std::vector<bool>* is_float) {
  Model model;
  if (!Model::load(bytes.data(), bytes.size(), &model).ok()) return false;
  tools::ModelRunner runner;
  std::string error;
  if (!runner.prepare(model, &error)) return false;
  std::mt19937 rng(kCheckSeed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (int i = 0; i < runner.input_count(); ++i) {
    Tensor* input = runner.interpreter().input(i);
    std::memset(input->data, 0, input->bytes);
    if (input->type != TensorType::FLOAT32) continue;
    for (int64_t e = 0; e < input->elements(); ++e) input->f32()[e] = uniform(rng);
  }
  if (!runner.invoke(&error)) return false;
  outputs->clear();
  is_float->clear();
  for (int o = 0; o < runner.output_count(); ++o) {
    const tools::NpyArray array = runner.output(o);
    std::vector<double> values;
    if (!tools::npy_values(array, "output", &values, &error)) return false;
    outputs->push_back(std::move(values));
    is_float->push_back(array.dtype.find('f') != std::string::npos);
  }
  return true;
}

// The agreement of two forms (kLoopPlanTolerance); infinity when they cannot be compared.
double difference(const std::vector<uint8_t>& file, const std::vector<uint8_t>& fused) {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> a, b;
  std::vector<bool> a_float, b_float;
  if (!outputs_on_check_input(file, &a, &a_float) || !outputs_on_check_input(fused, &b, &b_float) ||
      a.size() != b.size()) {
    return kNever;
  }
  double worst = 0.0;
  for (size_t o = 0; o < a.size(); ++o) {
    if (a[o].size() != b[o].size() || a_float[o] != b_float[o]) return kNever;
    double scale = 1.0;
    for (double v : a[o]) scale = std::max(scale, std::fabs(v));
    for (size_t e = 0; e < a[o].size(); ++e) {
      const double diff = std::fabs(a[o][e] - b[o][e]);
      if (!(diff == diff)) return kNever;  // NaN in one form only
      if (!a_float[o] && diff != 0.0) return kNever;
      worst = std::max(worst, diff / scale);
    }
  }
  return worst;
}

std::string what_was_fused(int loops, int chains) {
  std::string text;
  if (loops > 0) text += std::to_string(loops) + (loops == 1 ? " WHILE loop" : " WHILE loops");
  if (loops > 0 && chains > 0) text += " and ";
  if (chains > 0) {
    text += std::to_string(chains) + (chains == 1 ? " unrolled chain" : " unrolled chains");
  }
  return text;
}

}  // namespace

LoopPlan plan_loops(const std::vector<uint8_t>& file, const LoopPlanOptions& options) {
  LoopPlan plan;
  plan.bytes = file;
  Model model;  // a file that does not load runs as written: its loader names the problem
  if (!options.fuse_loops || !Model::load(file.data(), file.size(), &model).ok()) return plan;
  tools::FuseResult result;
  std::string error;
  // Plain fusing only: --stateful would change the model's inputs and outputs.
  if (!tools::fuse_model(file, tools::FuseOptions(), &result, &error) ||
      result.fused_count() == 0) {
    return plan;
  }
  int loops = 0, chains = 0;
  for (const tools::CellOutcome& c : result.cells) {
    if (!c.fused) continue;
    (c.cell.form == tools::CellForm::kWhile ? loops : chains) += 1;
  }
  if (options.before_check) options.before_check(&result.bytes);
  const double diff = difference(file, result.bytes);
  const std::string what = what_was_fused(loops, chains);
  char text[256];
  if (!(diff <= kLoopPlanTolerance)) {
    if (std::isinf(diff)) {
      std::snprintf(text, sizeof text,
                    "the fused form of %s does not run like the file: running the file as written",
                    what.c_str());
    } else {
      std::snprintf(text, sizeof text,
                    "the fused form of %s differs from the file by %.2g (more than %.0e): running "
                    "the file as written",
                    what.c_str(), diff, kLoopPlanTolerance);
    }
    plan.note = text;
    plan.difference = diff;
    return plan;
  }
  plan.bytes = std::move(result.bytes);
  plan.fused = true;
  plan.fused_loops = loops;
  plan.fused_chains = chains;
  plan.difference = diff;
  char agreement[48];
  if (diff == 0.0) {
    std::snprintf(agreement, sizeof agreement, "outputs equal");
  } else {
    std::snprintf(agreement, sizeof agreement, "outputs agree within %.2g", diff);
  }
  plan.fused_form = "the fused form of " + what + " (" + agreement + ")";
  std::snprintf(text, sizeof text, "running %s; --as-written runs the file as written",
                plan.fused_form.c_str());
  plan.note = text;
  return plan;
}

void write_loop_plan(tools::JsonWriter& json, const LoopPlan& plan) {
  json.key("plan").begin_object();
  json.key("form").value(plan.fused ? "fused" : "as written");
  json.key("fused_loops").value(plan.fused_loops);
  json.key("fused_chains").value(plan.fused_chains);
  if (std::isfinite(plan.difference)) json.key("difference").value(plan.difference);
  json.key("note").value(plan.note);
  json.end_object();
}

}  // namespace gruwb::app
