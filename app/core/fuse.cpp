#include "app/core/fuse.h"

#include <cstdarg>
#include <cstdio>

#include "app/core/inspect.h"
#include "app/core/text_table.h"
#include "engine/tools/json_writer.h"
#include "engine/tools/model_file.h"

namespace gruwb::app {
namespace {

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

std::string where(const tools::DetectedCell& c) {
  char text[160];
  if (c.form == tools::CellForm::kWhile) {
    std::snprintf(text, sizeof text, "WHILE op %d of subgraph %d (cond %d, body %d)", c.op,
                  c.subgraph, c.cond_subgraph, c.body_subgraph);
  } else {
    std::snprintf(text, sizeof text, "%d step%s from %s op %d of subgraph %d", c.timesteps,
                  c.timesteps == 1 ? "" : "s", c.step_slices ? "STRIDED_SLICE" : "UNPACK", c.op,
                  c.subgraph);
  }
  return text;
}

}  // namespace

void write_model_size_figures(tools::JsonWriter& json, const tools::ModelSizeFigures& f) {
  json.begin_object();
  json.key("bytes").value(f.bytes);
  json.key("data_bytes").value(f.data_bytes);
  json.key("subgraphs").value(f.subgraphs);
  json.key("ops").value(f.ops);
  json.key("tensors").value(f.tensors);
  json.key("arena_bytes").value(f.arena_bytes);
  if (!f.arena_error.empty()) json.key("arena_error").value(f.arena_error);
  json.end_object();
}

std::string fuse_report_text(const FuseRequest& r, const tools::FuseResult& result) {
  std::string out;
  append(&out, "Fused %s -> %s (%s): %d of %zu recurrent cells fused\n", r.input_path.c_str(),
         r.output_path.c_str(), model_format_name(tools::format_for_path(r.output_path)),
         result.fused_count(), result.cells.size());
  for (size_t i = 0; i < result.cells.size(); ++i) {
    const tools::CellOutcome& c = result.cells[i];
    append(&out, "  cell %zu: %s\n          in %s, %zu ops\n", i, c.cell.summary.c_str(),
           where(c.cell).c_str(), c.cell.cell_ops.size());
    if (c.fused) {
      append(&out, "          -> %s (max |diff| %.3g %s)\n", c.fused_op.c_str(), c.max_abs_diff,
             r.stateful ? "over invokes streaming the state" : "on random inputs");
    } else {
      append(&out, "          not fused: %s\n", c.reason.c_str());
    }
  }
  if (result.cells.empty()) append(&out, "  no recurrent cell found\n");
  for (const tools::OtherLoop& l : result.other_loops) {
    append(&out, "  WHILE op %d of subgraph %d (cond %d, body %d) left alone: %s\n", l.op,
           l.subgraph, l.cond_subgraph, l.body_subgraph, l.reason.c_str());
  }
  if (r.builtin_only && result.lowered_list_ops > 0) {
    append(&out,
           "  %d Flex TensorList op(s) rewritten as builtin ops (stock TFLite runs the result)\n",
           result.lowered_list_ops);
  }
  if (r.builtin_only && !result.lowering_note.empty()) {
    append(&out, "  %s\n", result.lowering_note.c_str());
  }
  const tools::ModelSizeFigures& b = result.before;
  const tools::ModelSizeFigures& a = result.after;
  append(&out, "\n  %-12s %12s %12s\n", "", "before", "after");
  append(&out, "  %-12s %12llu %12llu\n", "bytes", ull(b.bytes), ull(a.bytes));
  append(&out, "  %-12s %12llu %12llu\n", "data bytes", ull(b.data_bytes), ull(a.data_bytes));
  append(&out, "  %-12s %12u %12u\n", "subgraphs", b.subgraphs, a.subgraphs);
  append(&out, "  %-12s %12u %12u\n", "ops", b.ops, a.ops);
  append(&out, "  %-12s %12u %12u\n", "tensors", b.tensors, a.tensors);
  append(&out, "  %-12s %12llu %12llu\n", "arena bytes", ull(b.arena_bytes), ull(a.arena_bytes));
  if (!a.arena_error.empty()) append(&out, "  (arena not planned: %s)\n", a.arena_error.c_str());
  return out;
}

std::string fuse_report_json(const FuseRequest& r, const tools::FuseResult& result) {
  tools::JsonWriter json;
  json.begin_object();
  json.key("input").value(r.input_path);
  json.key("output").value(r.output_path);
  json.key("format").value(model_format_name(tools::format_for_path(r.output_path)));
  json.key("fused").value(result.fused_count());
  json.key("cells").begin_array();
  for (const tools::CellOutcome& c : result.cells) {
    json.begin_object();
    json.key("kind").value(c.cell.type->display_name);
    json.key("form").value(tools::cell_form_name(c.cell.form));
    json.key("summary").value(c.cell.summary);
    json.key("subgraph").value(c.cell.subgraph);
    json.key("op").value(c.cell.op);
    json.key("cond_subgraph").value(c.cell.cond_subgraph);
    json.key("body_subgraph").value(c.cell.body_subgraph);
    json.key("cell_ops").array(c.cell.cell_ops);
    json.key("timesteps").value(c.cell.timesteps);
    json.key("features").value(c.cell.features);
    json.key("units").value(c.cell.units);
    if (c.cell.type->has_reset_after) json.key("reset_after").value(c.cell.reset_after);
    json.key("gate_activation").value(c.cell.gate_activation);
    json.key("activation").value(c.cell.activation);
    json.key("fused").value(c.fused);
    if (c.fused) {
      json.key("fused_op").value(c.fused_op);
      json.key("max_abs_diff").value(c.max_abs_diff);
    } else {
      json.key("reason").value(c.reason);
    }
    json.end_object();
  }
  json.end_array();
  json.key("other_loops").begin_array();
  for (const tools::OtherLoop& l : result.other_loops) {
    json.begin_object();
    json.key("subgraph").value(l.subgraph);
    json.key("op").value(l.op);
    json.key("cond_subgraph").value(l.cond_subgraph);
    json.key("body_subgraph").value(l.body_subgraph);
    json.key("reason").value(l.reason);
    json.end_object();
  }
  json.end_array();
  if (r.builtin_only) {
    json.key("lowered_list_ops").value(result.lowered_list_ops);
    json.key("lowering_note").value(result.lowering_note);
  }
  json.key("before");
  write_model_size_figures(json, result.before);
  json.key("after");
  write_model_size_figures(json, result.after);
  json.end_object();
  return json.take() + "\n";
}

int run_fuse(const FuseRequest& r, std::string* out, std::string* err) {
  tools::FuseResult result;
  const int code = fuse_file(r, &result, err);
  if (code != kExitOk) return code;
  *out = r.json ? fuse_report_json(r, result) : fuse_report_text(r, result);
  return kExitOk;
}

int fuse_file(const FuseRequest& r, tools::FuseResult* result, std::string* err) {
  tools::LoadedModel loaded;
  if (!tools::load_model_file(r.input_path, &loaded, err)) return kExitBadInput;
  tools::FuseOptions options;
  options.format = tools::format_for_path(r.output_path);
  options.tolerance = r.tolerance;
  options.builtin_only = r.builtin_only;
  options.stateful = r.stateful;
  std::string error;
  if (!tools::fuse_model(loaded.bytes, options, result, &error)) {
    *err = r.input_path + ": " + error;
    return kExitBadInput;
  }
  if (!tools::write_file_atomically(r.output_path, result->bytes, err)) return kExitFailure;
  return kExitOk;
}

}  // namespace gruwb::app
