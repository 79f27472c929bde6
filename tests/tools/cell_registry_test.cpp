// The cell registry (engine/tools/cells/): every registered cell type's emitters round-trip.
// For each cell (and each variant it has) the fused, WHILE and unrolled layouts built from
// the same weights compute the same outputs, the detector finds the WHILE and unrolled forms
// as that cell with those weights, and the fuser turns them back into the descriptor's fused
// op with the same outputs. Also: MACs per step against the fused kernel's own cost, and
// registering a cell at run time.

#include "engine/tools/cells/cell_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/tools/analyzer.h"
#include "engine/tools/fuser.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/rnn_detector.h"
#include "tests/tools/model_def_util.h"

namespace gruwb::tools {
namespace {

constexpr double kTolerance = 1e-5;

// One build spec per variant a cell has: GRU reset_after true/false and its legacy body.
std::vector<BuildSpec> variants_of(const CellDescriptor* cell, ModelFormat format) {
  BuildSpec s;
  s.cell = cell;
  s.timesteps = 5;
  s.features = 3;
  s.units = 4;
  s.classes = 3;
  s.bias_init = BiasInit::kUniform;  // zero biases would hide bias mix-ups
  s.seed = 11;
  s.format = format;
  std::vector<BuildSpec> out = {s};
  if (cell->has_reset_after) {
    s.reset_after = false;
    out.push_back(s);
  }
  if (cell->has_legacy_body) {
    s.reset_after = false;
    s.gru_variant = GruVariant::kLegacy;
    out.push_back(s);
  }
  return out;
}

std::string label(const BuildSpec& s) {
  return std::string(s.cell->name) +
         (s.cell->has_reset_after && s.reset_after ? " reset_after" : "") +
         (s.gru_variant == GruVariant::kLegacy ? " legacy" : "") + " " +
         model_format_name(s.format);
}

std::vector<uint8_t> build(BuildSpec spec, RnnLayout layout, const RnnWeights& weights) {
  spec.layout = layout;
  spec.weights = &weights;
  ModelDef def;
  std::string error;
  EXPECT_TRUE(build_model(spec, &def, &error)) << error;
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(write_model(def, spec.format, &bytes, &error)) << error;
  return bytes;
}

double max_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double diff = 1e9;
  std::string error;
  EXPECT_TRUE(compare_models(a, b, 3, 5, &diff, &error)) << error;
  return diff;
}

double largest_gap(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 1e9;
  double gap = 0;
  for (size_t i = 0; i < a.size(); ++i) gap = std::max(gap, std::fabs(double{a[i]} - b[i]));
  return gap;
}

// The converter form `bytes` is detected as `spec`'s cell with `w`'s weights, and fused back
// into the descriptor's fused op computing the same outputs.
void expect_detected_and_fused(const BuildSpec& spec, const RnnWeights& w,
                               const std::vector<uint8_t>& bytes, CellForm form) {
  const DetectionReport found = detect_rnn_cells(unpack(bytes));
  ASSERT_EQ(found.cells.size(), 1u);
  const DetectedCell& cell = found.cells[0];
  EXPECT_EQ(cell.type, spec.cell) << cell.summary;
  EXPECT_EQ(cell.form, form);
  EXPECT_EQ(cell.units, spec.units);
  EXPECT_EQ(cell.features, spec.features);
  EXPECT_LE(largest_gap(cell.weights.kernel, w.kernel), 1e-7);
  EXPECT_LE(largest_gap(cell.weights.recurrent_kernel, w.recurrent_kernel), 1e-7);
  EXPECT_LE(largest_gap(cell.weights.bias, w.bias), 1e-6);
  EXPECT_LE(largest_gap(cell.weights.recurrent_bias, w.recurrent_bias), 1e-6);
  // FastGRNN's zeta and nu come back through the logit of their folded sigmoids.
  EXPECT_LE(largest_gap(cell.weights.scalars, w.scalars), 1e-5);

  FuseOptions options;
  options.format = spec.format;
  FuseResult result;
  std::string error;
  ASSERT_TRUE(fuse_model(bytes, options, &result, &error)) << error;
  ASSERT_EQ(result.fused_count(), 1) << (result.cells.empty() ? "" : result.cells[0].reason);
  EXPECT_EQ(result.cells[0].fused_op, fused_op_name(spec));
  EXPECT_LE(max_diff(bytes, result.bytes), kTolerance);
}

// The built-ins, then the cell plugins compiled in (plugins/cells/*/cell.cmake, by folder).
TEST(CellRegistry, ListsTheBuiltInCellsFirstThenThePluginCells) {
  const auto& cells = registered_cells();
  ASSERT_GE(cells.size(), 5u);
  EXPECT_STREQ(cells[0]->name, "gru");
  EXPECT_STREQ(cells[1]->name, "lstm");
  EXPECT_STREQ(cells[2]->name, "rnn");
  EXPECT_STREQ(cells[3]->name, "fastgrnn");
  EXPECT_STREQ(cells[4]->name, "mgu");
  EXPECT_EQ(default_cell(), cells[0]);
  EXPECT_EQ(find_cell("lstm"), cells[1]);
  EXPECT_EQ(find_cell("LSTM"), nullptr);  // names are exact
  EXPECT_EQ(cell_names_text(), "gru, lstm, rnn, fastgrnn or mgu");
}

// The plugin cells' weight layouts: FastGRNN's one shared block with two biases and two
// scalars (EdgeML's zeta 1, nu -4 and biases 1), MGU's two blocks.
TEST(CellRegistry, PluginCellsKeepTheirOpsWeightLayout) {
  BuildSpec s = variants_of(find_cell("fastgrnn"), ModelFormat::kTflite)[0];
  s.bias_init = BiasInit::kKeras;
  RnnWeights w = initial_weights(s);
  EXPECT_EQ(w.kernel.size(), static_cast<size_t>(s.units * s.features));
  EXPECT_EQ(w.recurrent_kernel.size(), static_cast<size_t>(s.units * s.units));
  EXPECT_EQ(w.bias, std::vector<float>(static_cast<size_t>(2 * s.units), 1.f));
  EXPECT_EQ(w.scalars, (std::vector<float>{1.f, -4.f}));
  EXPECT_EQ(trainable_parameters(s),
            static_cast<uint64_t>(s.units * (s.features + s.units) + 2 * s.units + 2 +
                                  s.classes * (s.units + 1)));
  std::string error;
  w.scalars.pop_back();
  s.weights = &w;
  EXPECT_FALSE(check_spec(s, &error));
  EXPECT_EQ(error, "weights: scalars has 1 values, expected 2");

  s = variants_of(find_cell("mgu"), ModelFormat::kTflite)[0];
  w = initial_weights(s);
  EXPECT_EQ(w.kernel.size(), static_cast<size_t>(2 * s.units * s.features));
  EXPECT_EQ(w.recurrent_kernel.size(), static_cast<size_t>(2 * s.units * s.units));
  EXPECT_EQ(w.bias.size(), static_cast<size_t>(2 * s.units));
  EXPECT_TRUE(w.scalars.empty());
}

TEST(CellRegistry, EveryCellsLayoutsAgreeAndFuseBack) {
  for (const CellDescriptor* cell : registered_cells()) {
    for (ModelFormat format : {ModelFormat::kTflite, ModelFormat::kCircle}) {
      for (const BuildSpec& spec : variants_of(cell, format)) {
        SCOPED_TRACE(label(spec));
        const RnnWeights w = initial_weights(spec);
        const std::vector<uint8_t> fused = build(spec, RnnLayout::kFused, w);
        const std::vector<uint8_t> loop = build(spec, RnnLayout::kWhile, w);
        const std::vector<uint8_t> unrolled = build(spec, RnnLayout::kUnrolled, w);
        EXPECT_LE(max_diff(fused, loop), kTolerance);
        EXPECT_LE(max_diff(fused, unrolled), kTolerance);
        expect_detected_and_fused(spec, w, loop, CellForm::kWhile);
        expect_detected_and_fused(spec, w, unrolled, CellForm::kUnrolled);
      }
    }
  }
}

// The descriptor's MACs per step are what the fused kernel's cost counts per step.
TEST(CellRegistry, StepMacsMatchTheFusedKernelsCost) {
  for (const CellDescriptor* cell : registered_cells()) {
    for (const BuildSpec& spec : variants_of(cell, ModelFormat::kTflite)) {
      SCOPED_TRACE(label(spec));
      const RnnWeights w = initial_weights(spec);
      const std::vector<uint8_t> bytes = build(spec, RnnLayout::kFused, w);
      Model model;
      ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
      const AnalyzerReport report = analyze_model(model, "");
      uint64_t recurrent_macs = 0;
      for (const OpReport& op : report.subgraphs[0].ops) {
        const std::string name = op.custom_code.empty() ? op.name : op.custom_code;
        if (name == fused_op_name(spec)) recurrent_macs = op.macs;
      }
      EXPECT_EQ(recurrent_macs,
                static_cast<uint64_t>(spec.timesteps) * cell->step_macs(cell_config(spec)));
      EXPECT_GT(recurrent_macs, 0u);
    }
  }
}

TEST(CellRegistry, RefusesDuplicateAndIncompleteDescriptors) {
  std::string error;
  EXPECT_FALSE(register_cell(find_cell("gru"), &error));
  EXPECT_EQ(error, "cell 'gru' is already registered");
  CellDescriptor incomplete = *find_cell("rnn");
  incomplete.name = "incomplete";
  incomplete.match = nullptr;
  EXPECT_FALSE(register_cell(&incomplete, &error));
  EXPECT_EQ(error, "cell 'incomplete': a descriptor function is missing");
  EXPECT_EQ(find_cell("incomplete"), nullptr);
}

// A cell registered at run time (as a plugin will) is listed, parsed and built like the
// built-ins; its converter form is detected by the first matcher that claims it.
TEST(CellRegistry, ACellRegisteredAtRunTimeIsListedAndBuilt) {
  static CellDescriptor copy = *find_cell("rnn");
  copy.name = "my_rnn";
  copy.display_name = "MyRNN";
  std::string error;
  ASSERT_TRUE(register_cell(&copy, &error)) << error;
  EXPECT_EQ(cell_names_text(), "gru, lstm, rnn, fastgrnn, mgu or my_rnn");
  const CellDescriptor* parsed = nullptr;
  ASSERT_TRUE(parse_cell("my_rnn", &parsed));
  EXPECT_EQ(parsed, &copy);
  BuildSpec spec = variants_of(&copy, ModelFormat::kTflite)[0];
  const RnnWeights w = initial_weights(spec);
  EXPECT_LE(max_diff(build(spec, RnnLayout::kFused, w), build(spec, RnnLayout::kWhile, w)),
            kTolerance);
  const DetectionReport found = detect_rnn_cells(unpack(build(spec, RnnLayout::kWhile, w)));
  ASSERT_EQ(found.cells.size(), 1u);
  EXPECT_EQ(found.cells[0].type, find_cell("rnn"));  // registered earlier, tried first
}

}  // namespace
}  // namespace gruwb::tools
