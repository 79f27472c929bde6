#include "app/core/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "app/core/text_table.h"
#include "engine/tools/model_file.h"

namespace gruwb::app {
namespace {

std::string format(const char* fmt, double v) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, v);
  return text;
}

std::string figure_text(const Figure& f, int digits = 3) {
  if (f.count == 0) return "-";
  const std::string spec = "%." + std::to_string(digits) + "f";
  std::string text = format(spec.c_str(), f.mean);
  if (f.count > 1) text += " ± " + format(spec.c_str(), f.std);
  return text;
}

std::string signed_text(double v) { return format("%+.3f", v); }

std::string bytes_text(uint64_t bytes) {
  if (bytes == 0) return "-";
  if (bytes < 1024) return std::to_string(bytes) + " B";
  return format("%.1f KB", static_cast<double>(bytes) / 1024.0);
}

std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_md(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|' || c == '*' || c == '_' || c == '`') out += '\\';
    out += c;
  }
  return out;
}

std::string number(double v) {
  if (!std::isfinite(v)) return "";
  return format("%.6g", v);
}

// The start of every report plot: a 640x320 white SVG with its title at `left`.
std::string svg_frame(const std::string& title, double left) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"320\" "
         "viewBox=\"0 0 640 320\" font-family=\"sans-serif\" font-size=\"11\">\n"
         "<rect width=\"640\" height=\"320\" fill=\"white\"/>\n<text x=\"" +
         number(left) + "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" + escape_html(title) +
         "</text>\n";
}

bool metric_of(const EpochMetrics& e, const std::string& metric, double* v) {
  if (metric == "train_loss") return *v = e.train_loss, true;
  if (metric == "train_accuracy") return *v = e.train_accuracy, e.has_accuracy;
  if (metric == "val_loss") return *v = e.val_loss, e.has_val;
  if (metric == "val_accuracy") return *v = e.val_accuracy, e.has_val && e.has_accuracy;
  return false;
}

struct Curve {
  std::string label;
  std::vector<double> x, y;
};

// Mean over seeds of `metric` per epoch, one curve per (cell, stage) that trains.
std::vector<Curve> curves(const ExperimentResult& result, const std::string& metric) {
  std::vector<Curve> out;
  const bool several_cells = result.cells.size() > 1;
  for (const StageSummary& row : result.summary) {
    std::map<int, std::pair<double, int>> sums;
    for (const StageRun& run : result.runs) {
      if (run.cell != row.cell || run.stage != row.stage) continue;
      for (const EpochMetrics& e : run.training.epochs) {
        double v = 0;
        if (metric_of(e, metric, &v) && std::isfinite(v)) {
          sums[e.epoch].first += v;
          ++sums[e.epoch].second;
        }
      }
    }
    if (sums.size() < 2) continue;  // "init" and one-point curves say nothing
    Curve curve;
    curve.label = several_cells ? row.cell + " " + row.stage : row.stage;
    for (const auto& [epoch, sum] : sums) {
      curve.x.push_back(epoch);
      curve.y.push_back(sum.first / sum.second);
    }
    out.push_back(curve);
  }
  return out;
}

std::string cells_title(const ExperimentResult& result) {
  for (const CellSummary& c : result.cells) {
    if (!c.model_path.empty()) return "Cells and model files";
  }
  return "Cells";
}

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                         "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

}  // namespace

std::vector<std::string> headline_header(const ExperimentResult& result) {
  std::vector<std::string> header;
  if (result.cells.size() > 1) header.push_back("cell");
  for (const char* h : {"stage", "test accuracy", "cross entropy", "Δ accuracy", "Δ CE",
                        "trainable params", "training memory", "epochs"}) {
    header.push_back(h);
  }
  return header;
}

std::vector<std::vector<std::string>> headline_table(const ExperimentResult& result) {
  std::vector<std::vector<std::string>> rows;
  for (const StageSummary& s : result.summary) {
    std::vector<std::string> row;
    if (result.cells.size() > 1) row.push_back(s.cell);
    row.push_back(s.stage);
    row.push_back(figure_text(s.accuracy));
    row.push_back(figure_text(s.loss));
    row.push_back(s.has_delta ? signed_text(s.delta_accuracy) : "-");
    row.push_back(s.has_delta ? signed_text(s.delta_loss) : "-");
    const bool trains = s.stage != "init" && !s.quantized;
    row.push_back(trains ? std::to_string(s.trainable_parameters) : "-");
    row.push_back(trains ? bytes_text(s.training_memory_bytes) : "-");
    row.push_back(s.quantized ? "-" : std::to_string(s.epochs_run));
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::string> cells_header() {
  return {"cell / model",       "test accuracy",  "parameters",  "fused bytes",
          "WHILE bytes",        "unrolled bytes", "arena bytes", "latency (µs)",
          "board latency (µs)", "board cycles",   "note"};
}

std::vector<std::vector<std::string>> cells_table(const ExperimentResult& result) {
  std::vector<std::vector<std::string>> rows;
  // 0: not measured, or a model file without that form.
  const auto count = [](uint64_t v) { return v ? std::to_string(v) : std::string("-"); };
  const auto micros = [](double us) { return us > 0 ? format("%.1f", us) : std::string("-"); };
  for (const CellSummary& c : result.cells) {
    if (!c.error.empty()) {
      rows.push_back({c.cell, "-", "-", "-", "-", "-", "-", "-", "-", "-", "error: " + c.error});
      continue;
    }
    std::string note = c.fuse_note;
    if (!c.board_note.empty()) {
      note += (note.empty() ? "" : "; ") +
              (c.board_note.rfind("board", 0) == 0 ? c.board_note : "board: " + c.board_note);
    }
    rows.push_back({c.cell, figure_text(c.accuracy), std::to_string(c.parameters),
                    count(c.fused_bytes), count(c.while_bytes), count(c.unrolled_bytes),
                    count(c.arena_bytes), micros(c.latency_us), micros(c.board_latency_us),
                    count(c.board_cycles), note});
  }
  return rows;
}

std::vector<std::string> quantization_header(const ExperimentResult& result) {
  std::vector<std::string> header;
  if (result.cells.size() > 1) header.push_back("cell");
  for (const char* h :
       {"stage", "from", "accuracy before", "accuracy after", "Δ accuracy", "model bytes",
        "weight bytes", "arena bytes", "latency (µs)", "kept float"}) {
    header.push_back(h);
  }
  return header;
}

std::vector<std::vector<std::string>> quantization_table(const ExperimentResult& result) {
  std::vector<std::vector<std::string>> rows;
  const auto change = [](double before, double after, const char* fmt) {
    return format(fmt, before) + " -> " + format(fmt, after);
  };
  for (const StageSummary& s : result.summary) {
    if (!s.quantized) continue;
    const QuantizationFigures& q = s.quantization;
    std::vector<std::string> row;
    if (result.cells.size() > 1) row.push_back(s.cell);
    row.push_back(s.stage);
    row.push_back(q.source_stage);
    const bool both = s.source_accuracy.count > 0 && s.accuracy.count > 0;
    row.push_back(s.source_accuracy.count > 0 ? figure_text(s.source_accuracy) : "-");
    row.push_back(s.accuracy.count > 0 ? figure_text(s.accuracy) : "-");
    row.push_back(both ? signed_text(s.accuracy.mean - s.source_accuracy.mean) : "-");
    row.push_back(change(double(q.source.model_bytes), double(q.quantized.model_bytes), "%.0f"));
    row.push_back(change(double(q.source.weight_bytes), double(q.quantized.weight_bytes), "%.0f"));
    row.push_back(change(double(q.source.arena_bytes), double(q.quantized.arena_bytes), "%.0f"));
    row.push_back(change(q.source.latency_us, q.quantized.latency_us, "%.1f"));
    std::string kept;
    for (const std::string& k : q.kept_float) kept += (kept.empty() ? "" : "; ") + k;
    row.push_back(kept.empty() ? "none" : kept);
    rows.push_back(row);
  }
  return rows;
}

std::string curve_svg(const ExperimentResult& result, const std::string& metric,
                      const std::string& title) {
  const std::vector<Curve> lines = curves(result, metric);
  if (lines.empty()) return "";
  double x_max = 1, y_min = INFINITY, y_max = -INFINITY;
  for (const Curve& c : lines) {
    for (double x : c.x) x_max = std::max(x_max, x);
    for (double y : c.y) y_min = std::min(y_min, y), y_max = std::max(y_max, y);
  }
  if (metric.find("accuracy") != std::string::npos) y_min = 0, y_max = 1;
  if (y_max - y_min < 1e-9) y_max = y_min + 1;
  y_min = std::min(y_min, 0.0);
  const double w = 640, h = 320, left = 56, right = 150, top = 30, bottom = 40;
  const double pw = w - left - right, ph = h - top - bottom;
  const auto px = [&](double x) { return left + pw * x / x_max; };
  const auto py = [&](double y) { return top + ph * (1 - (y - y_min) / (y_max - y_min)); };
  std::string svg = svg_frame(title, left);
  for (int i = 0; i <= 4; ++i) {
    const double y = y_min + (y_max - y_min) * i / 4;
    svg += "<line x1=\"" + number(left) + "\" x2=\"" + number(left + pw) + "\" y1=\"" +
           number(py(y)) + "\" y2=\"" + number(py(y)) + "\" stroke=\"#ddd\"/>\n";
    svg += "<text x=\"" + number(left - 6) + "\" y=\"" + number(py(y) + 4) +
           "\" text-anchor=\"end\">" + format("%.3g", y) + "</text>\n";
  }
  const int x_ticks = static_cast<int>(std::min(x_max, 10.0));
  for (int i = 0; i <= x_ticks; ++i) {
    const double x = std::round(x_max * i / x_ticks);
    svg += "<text x=\"" + number(px(x)) + "\" y=\"" + number(top + ph + 16) +
           "\" text-anchor=\"middle\">" + format("%.0f", x) + "</text>\n";
  }
  svg += "<text x=\"" + number(left + pw / 2) + "\" y=\"" + number(h - 6) +
         "\" text-anchor=\"middle\">epoch</text>\n";
  svg += "<rect x=\"" + number(left) + "\" y=\"" + number(top) + "\" width=\"" + number(pw) +
         "\" height=\"" + number(ph) + "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    const Curve& c = lines[i];
    const char* color = kColors[i % 10];
    std::string points;
    for (size_t k = 0; k < c.x.size(); ++k) {
      points += (k ? " " : "") + number(px(c.x[k])) + "," + number(py(c.y[k]));
    }
    svg += "<polyline fill=\"none\" stroke=\"" + std::string(color) +
           "\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
    const double ly = top + 14 + 16 * static_cast<double>(i);
    svg += "<line x1=\"" + number(w - right + 10) + "\" x2=\"" + number(w - right + 30) +
           "\" y1=\"" + number(ly - 4) + "\" y2=\"" + number(ly - 4) + "\" stroke=\"" + color +
           "\" stroke-width=\"2\"/>\n";
    svg += "<text x=\"" + number(w - right + 34) + "\" y=\"" + number(ly) + "\">" +
           escape_html(c.label) + "</text>\n";
  }
  return svg + "</svg>\n";
}

std::vector<std::pair<std::string, std::string>> report_plots(const ExperimentResult& result) {
  std::vector<std::pair<std::string, std::string>> plots;
  for (const auto& [metric, title] : std::vector<std::pair<std::string, std::string>>{
           {"train_loss", "Training loss (mean over seeds)"},
           {"val_loss", "Validation loss (mean over seeds)"},
           {"train_accuracy", "Training accuracy (mean over seeds)"},
           {"val_accuracy", "Validation accuracy (mean over seeds)"}}) {
    if (!curves(result, metric).empty()) plots.push_back({metric, title});
  }
  return plots;
}

namespace {

std::string model_text(const ExperimentSpec& spec) {
  return spec.model_path.empty() ? "built: " + spec.build : spec.model_path;
}

std::string stages_text(const ExperimentSpec& spec) {
  std::string text;
  for (const StageSpec& s : spec.stages) {
    if (!text.empty()) text += "; ";
    text += s.name;
    if (is_quantization_scope(s.scope)) {
      text +=
          " (post-training quantization of the previous stage's model, calibrated on the "
          "training split)";
    } else if (s.scope != "init") {
      text += std::string(" (") + (s.optimizer == Optimizer::kSgd ? "SGD" : "Adam") + " lr " +
              format("%g", s.learning_rate) + ", batch " + std::to_string(s.batch_size) + ", " +
              std::to_string(s.epochs) + " epochs" +
              (s.patience ? ", patience " + std::to_string(s.patience) : "") + ")";
    }
  }
  return text;
}

std::string data_text(const ExperimentResult& r) {
  std::string classes;
  for (const std::string& c : r.class_names) classes += (classes.empty() ? "" : ", ") + c;
  return r.data_name + ": " + std::to_string(r.train_count) + " train / " +
         std::to_string(r.validation_count) + " validation / " + std::to_string(r.test_count) +
         " test cases, " + std::to_string(r.timesteps) + " steps x " + std::to_string(r.features) +
         " channels; classes " + classes;
}

std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  std::string html = "<table>\n<tr>";
  for (const std::string& h : header) html += "<th>" + escape_html(h) + "</th>";
  html += "</tr>\n";
  for (const auto& row : rows) {
    html += "<tr>";
    for (const std::string& cell : row) html += "<td>" + escape_html(cell) + "</td>";
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

std::string md_table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows) {
  std::string md = "|";
  for (const std::string& h : header) md += " " + escape_md(h) + " |";
  md += "\n|";
  for (size_t i = 0; i < header.size(); ++i) md += i == 0 ? "---|" : "---:|";
  md += "\n";
  for (const auto& row : rows) {
    md += "|";
    for (const std::string& cell : row) md += " " + escape_md(cell) + " |";
    md += "\n";
  }
  return md;
}

// Test confusion matrix of the first seed's run of each (cell, stage).
std::vector<const StageRun*> first_runs(const ExperimentResult& r) {
  std::vector<const StageRun*> out;
  for (const StageSummary& s : r.summary) {
    for (const StageRun& run : r.runs) {
      if (run.cell == s.cell && run.stage == s.stage && run.evaluated) {
        out.push_back(&run);
        break;
      }
    }
  }
  return out;
}

std::vector<std::vector<std::string>> runs_table(const ExperimentResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (const StageRun& run : r.runs) {
    rows.push_back({run.cell, run.stage, std::to_string(run.seed),
                    run.evaluated ? format("%.3f", run.test_accuracy) : "-",
                    run.evaluated ? format("%.3f", run.test_loss) : "-",
                    std::to_string(std::max<int>(0, static_cast<int>(run.training.epochs.size()) -
                                                        (run.training.epochs.empty() ? 0 : 1))),
                    training_outcome_name(run.training.outcome), format("%.1f", run.seconds),
                    run.error});
  }
  return rows;
}

const std::vector<std::string> kRunsHeader = {
    "cell", "stage", "seed", "test accuracy", "test CE", "epochs", "outcome", "seconds", "error"};

}  // namespace

std::string report_html(const ExperimentResult& r, bool plot_images, const std::string& preface) {
  const ExperimentSpec& spec = r.spec;
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>" +
      escape_html(spec.name + " - GRU Workbench experiment") +
      "</title>\n<style>\nbody{font-family:sans-serif;max-width:960px;margin:2em auto;color:#222}\n"
      "table{border-collapse:collapse;margin:1em 0}\nth,td{border:1px solid #bbb;padding:4px "
      "8px;text-align:right}\nth{background:#eee}\ntd:first-child,th:first-child{text-align:left}"
      "\n.note{color:#555}\n</style>\n</head>\n<body>\n";
  html += "<h1>" + escape_html(spec.name) + "</h1>\n";
  html += preface;
  html += "<p>Status: <b>" + escape_html(experiment_status_name(r.status)) + "</b>" +
          (r.error.empty() ? "" : " &#8212; " + escape_html(r.error)) + ". Started " +
          escape_html(r.started) + ", " + format("%.1f", r.seconds) + " s.</p>\n";
  html += "<ul>\n<li>Model: " + escape_html(model_text(spec)) + "</li>\n";
  html += "<li>Data: " + escape_html(spec.data_path) + " &#8212; " + escape_html(data_text(r)) +
          "</li>\n";
  html += "<li>Stages (training stages all from the same initial weights): " +
          escape_html(stages_text(spec)) + "</li>\n";
  html += "<li>Seeds: " + std::to_string(spec.seeds) + " (from " + std::to_string(spec.first_seed) +
          "); figures are mean ± std over seeds</li>\n</ul>\n";
  if (!r.data_notes.empty()) {
    html += "<p class=\"note\">Data preparation:</p>\n<ul class=\"note\">\n";
    for (const std::string& note : r.data_notes) html += "<li>" + escape_html(note) + "</li>\n";
    html += "</ul>\n";
  }
  html +=
      "<h2>Results on the test split</h2>\n" + html_table(headline_header(r), headline_table(r));
  const auto quantization_rows = quantization_table(r);
  if (!quantization_rows.empty()) {
    html += "<h2>Quantization</h2>\n" + html_table(quantization_header(r), quantization_rows);
    html +=
        "<p class=\"note\">Before = the model the stage quantized, after = the quantized model "
        "(first seed's sizes; latency of one inference on this machine).</p>\n";
  }
  if (!r.cells.empty()) {
    html += "<h2>" + cells_title(r) + "</h2>\n" + html_table(cells_header(), cells_table(r));
    html +=
        "<p class=\"note\">Sizes and latency of the first seed's model: fused = one recurrent "
        "op, WHILE = the converter's loop; latency of one fused inference on this machine. "
        "A model file: its own bytes under its form, the fuser's output as fused when it fuses; "
        "board latency and cycles: the median of 20 inferences on the experiment's board (BENCH), "
        "when it had one.</p>\n";
  }
  const auto plots = report_plots(r);
  if (!plots.empty()) html += "<h2>Curves</h2>\n";
  for (size_t i = 0; i < plots.size(); ++i) {
    if (plot_images) {
      html += "<p><img src=\"plot" + std::to_string(i) + ".png\" width=\"640\"/></p>\n";
    } else {
      html += "<div>\n" + curve_svg(r, plots[i].first, plots[i].second) + "</div>\n";
    }
  }
  const std::vector<const StageRun*> firsts = first_runs(r);
  if (!firsts.empty()) html += "<h2>Confusion matrices (test, first seed)</h2>\n";
  for (const StageRun* run : firsts) {
    std::vector<std::string> header = {run->cell + " " + run->stage + ": true \\ predicted"};
    for (const std::string& c : r.class_names) header.push_back(c);
    header.push_back("recall");
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < run->test_classes.confusion.size(); ++i) {
      std::vector<std::string> row = {i < r.class_names.size() ? r.class_names[i]
                                                               : std::to_string(i)};
      for (int64_t n : run->test_classes.confusion[i]) row.push_back(std::to_string(n));
      row.push_back(
          i < run->test_classes.recall.size() ? format("%.2f", run->test_classes.recall[i]) : "-");
      rows.push_back(row);
    }
    html += html_table(header, rows);
  }
  html += "<h2>All runs</h2>\n" + html_table(kRunsHeader, runs_table(r));
  html +=
      "<p class=\"note\">Made by GRU Workbench (gruwb experiment). The CSV export holds every "
      "curve; the JSON export everything.</p>\n</body>\n</html>\n";
  return html;
}

std::string report_markdown(const ExperimentResult& r) {
  const ExperimentSpec& spec = r.spec;
  std::string md = "# " + spec.name + "\n\n";
  md += "Status: **" + std::string(experiment_status_name(r.status)) + "**" +
        (r.error.empty() ? "" : " — " + r.error) + ". Started " + r.started + ", " +
        format("%.1f", r.seconds) + " s.\n\n";
  md += "- Model: " + model_text(spec) + "\n- Data: " + spec.data_path + " — " + data_text(r) +
        "\n- Stages (training stages all from the same initial weights): " + stages_text(spec) +
        "\n- Seeds: " + std::to_string(spec.seeds) + " (from " + std::to_string(spec.first_seed) +
        "); figures are mean ± std over seeds\n";
  for (const std::string& note : r.data_notes) md += "- Data preparation: " + note + "\n";
  md += "\n## Results on the test split\n\n" + md_table(headline_header(r), headline_table(r));
  const auto quantization_rows = quantization_table(r);
  if (!quantization_rows.empty()) {
    md += "\n## Quantization\n\n" + md_table(quantization_header(r), quantization_rows);
  }
  if (!r.cells.empty()) {
    md += "\n## " + cells_title(r) + "\n\n" + md_table(cells_header(), cells_table(r));
  }
  md += "\n## All runs\n\n" + md_table(kRunsHeader, runs_table(r));
  return md;
}

std::string report_csv(const ExperimentResult& r) {
  std::string csv =
      "cell,stage,seed,epoch,steps,train_loss,train_accuracy,val_loss,val_accuracy,seconds,"
      "samples_per_second\n";
  for (const StageRun& run : r.runs) {
    for (const EpochMetrics& e : run.training.epochs) {
      csv += csv_field(run.cell) + "," + csv_field(run.stage) + "," + std::to_string(run.seed) +
             "," + std::to_string(e.epoch) + "," + std::to_string(e.steps) + "," +
             number(e.train_loss) + "," + (e.has_accuracy ? number(e.train_accuracy) : "") + "," +
             (e.has_val ? number(e.val_loss) : "") + "," +
             (e.has_val && e.has_accuracy ? number(e.val_accuracy) : "") + "," + number(e.seconds) +
             "," + number(e.samples_per_second) + "\n";
    }
  }
  return csv;
}

namespace {
bool ends_with(const std::string& path, const char* ext) {
  const std::string e(ext);
  return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
}
}  // namespace

bool write_report(const std::string& path, const ExperimentResult& result, std::string* error) {
  const auto ends = [&](const char* ext) { return ends_with(path, ext); };
  std::string text;
  if (ends(".html") || ends(".htm")) {
    text = report_html(result);
  } else if (ends(".md")) {
    text = report_markdown(result);
  } else if (ends(".csv")) {
    text = report_csv(result);
  } else if (ends(".json")) {
    text = experiment_result_json(result);
  } else if (ends(".pdf")) {
    return write_report_pdf(path, result, error);
  } else {
    *error = path + ": unknown report format (use .html, .pdf, .md, .csv or .json)";
    return false;
  }
  return save_text_atomically(path, text, error);
}

// ---- sweeps ----------------------------------------------------------------------------

namespace {

std::vector<std::vector<std::string>> sweep_rows(const std::vector<const SweepRow*>& rows,
                                                 bool plain_numbers) {
  std::vector<std::vector<std::string>> out;
  for (const SweepRow* row : rows) out.push_back(sweep_table_row(*row, plain_numbers));
  return out;
}

std::vector<const SweepRow*> all_rows(const SweepResult& result) {
  std::vector<const SweepRow*> rows;
  for (const SweepRow& row : result.rows) rows.push_back(&row);
  return rows;
}

std::string sweep_counts(const SweepResult& r) {
  return std::to_string(r.rows.size()) + " runs: " + std::to_string(r.finished) + " finished, " +
         std::to_string(r.failed) + " failed, " + std::to_string(r.pending) + " pending";
}

// The sections a sweep report puts before the merged experiment's.
std::string sweep_preface_html(const SweepResult& r) {
  std::string html = "<p>Sweep: " + escape_html(sweep_counts(r)) + ".</p>\n";
  const auto best = best_sweep_rows(r, 5);
  if (!best.empty()) {
    html += "<h2>Best runs</h2>\n" + html_table(sweep_table_header(r), sweep_rows(best, false));
  }
  for (const std::string& axis : {std::string("model_bytes"), std::string("latency_us")}) {
    html += "<div>\n" + sweep_scatter_svg(r, axis) + "</div>\n";
  }
  html += "<h2>Every run (hparams)</h2>\n" +
          html_table(sweep_table_header(r), sweep_rows(all_rows(r), false));
  html +=
      "<p class=\"note\">Accuracy: the test accuracy of each run's last stage (mean over its "
      "seeds); bytes, arena and latency of its deployed model (the quantized one after a "
      "quantization stage, else the fused float model); latency measured on the machine that "
      "ran it. Below: the runs merged as one experiment, each named by its run.</p>\n";
  return html;
}

}  // namespace

std::string sweep_scatter_svg(const SweepResult& result, const std::string& x_metric) {
  const bool bytes = x_metric == "model_bytes";
  struct Point {
    double x, y;
    std::string label, group;
  };
  std::vector<Point> points;
  std::vector<std::string> groups;
  for (const SweepRow& row : result.rows) {
    const double x = bytes ? static_cast<double>(row.model_bytes) : row.latency_us;
    if (row.state != SweepRunState::kFinished || !(x > 0)) continue;
    const std::string group =
        row.params.empty() ? "" : row.params[0].name + "=" + row.params[0].value;
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
    points.push_back({x, row.accuracy, row.label, group});
  }
  if (points.empty()) return "";
  double x_min = INFINITY, x_max = -INFINITY;
  for (const Point& p : points) x_min = std::min(x_min, p.x), x_max = std::max(x_max, p.x);
  // Sizes span decades (8 to 128 units): a log axis when they do.
  const bool log_x = x_max / x_min > 10;
  const auto tx = [&](double x) { return log_x ? std::log10(x) : x; };
  double lo = tx(x_min), hi = tx(x_max);
  if (hi - lo < 1e-9) lo -= 0.5, hi += 0.5;
  const double pad = (hi - lo) * 0.05;
  lo -= pad, hi += pad;
  const double w = 640, h = 320, left = 56, right = 150, top = 30, bottom = 40;
  const double pw = w - left - right, ph = h - top - bottom;
  const auto px = [&](double x) { return left + pw * (tx(x) - lo) / (hi - lo); };
  const auto py = [&](double y) { return top + ph * (1 - y); };
  const std::string title = bytes ? "Test accuracy vs model bytes" : "Test accuracy vs latency";
  const std::string x_label = std::string(bytes ? "model bytes" : "latency of one inference (µs)") +
                              (log_x ? ", log scale" : "");
  std::string svg = svg_frame(title, left);
  for (int i = 0; i <= 4; ++i) {
    const double y = i / 4.0;
    svg += "<line x1=\"" + number(left) + "\" x2=\"" + number(left + pw) + "\" y1=\"" +
           number(py(y)) + "\" y2=\"" + number(py(y)) + "\" stroke=\"#ddd\"/>\n";
    svg += "<text x=\"" + number(left - 6) + "\" y=\"" + number(py(y) + 4) +
           "\" text-anchor=\"end\">" + format("%.2f", y) + "</text>\n";
  }
  for (int i = 0; i <= 4; ++i) {
    const double t = lo + (hi - lo) * i / 4;
    const double x = log_x ? std::pow(10.0, t) : t;
    svg += "<text x=\"" + number(left + pw * i / 4) + "\" y=\"" + number(top + ph + 16) +
           "\" text-anchor=\"middle\">" + format("%.3g", x) + "</text>\n";
  }
  svg += "<text x=\"" + number(left + pw / 2) + "\" y=\"" + number(h - 6) +
         "\" text-anchor=\"middle\">" + escape_html(x_label) + "</text>\n";
  svg += "<rect x=\"" + number(left) + "\" y=\"" + number(top) + "\" width=\"" + number(pw) +
         "\" height=\"" + number(ph) + "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (const Point& p : points) {
    const size_t g =
        static_cast<size_t>(std::find(groups.begin(), groups.end(), p.group) - groups.begin());
    svg += "<circle cx=\"" + number(px(p.x)) + "\" cy=\"" + number(py(p.y)) + "\" r=\"4\" fill=\"" +
           kColors[g % 10] + "\" fill-opacity=\"0.8\"><title>" + escape_html(p.label) +
           "</title></circle>\n";
  }
  for (size_t g = 0; g < groups.size() && g < 10; ++g) {
    const double ly = top + 14 + 16 * static_cast<double>(g);
    svg += "<circle cx=\"" + number(w - right + 20) + "\" cy=\"" + number(ly - 4) +
           "\" r=\"4\" fill=\"" + kColors[g] + "\"/>\n";
    svg += "<text x=\"" + number(w - right + 30) + "\" y=\"" + number(ly) + "\">" +
           escape_html(groups[g]) + "</text>\n";
  }
  return svg + "</svg>\n";
}

std::string sweep_report_html(const SweepResult& result) {
  return report_html(result.merged, false, sweep_preface_html(result));
}

std::string sweep_report_markdown(const SweepResult& result) {
  std::string md = "# " + result.name + "\n\nSweep: " + sweep_counts(result) + ".\n\n";
  md += "## Best runs\n\n" +
        md_table(sweep_table_header(result), sweep_rows(best_sweep_rows(result, 5), false));
  md += "\n## Every run\n\n" +
        md_table(sweep_table_header(result), sweep_rows(all_rows(result), false));
  return md;
}

std::string sweep_report_csv(const SweepResult& result) {
  std::vector<std::string> header = {"run"};
  header.insert(header.end(), result.param_names.begin(), result.param_names.end());
  for (const char* column : {"state", "test_accuracy", "test_loss", "parameters", "model_bytes",
                             "arena_bytes", "latency_us", "seconds"}) {
    header.push_back(column);
  }
  std::vector<std::vector<std::string>> rows;
  for (const SweepRow& row : result.rows) rows.push_back(sweep_table_row(row, true));
  return csv_table(header, rows);
}

bool write_sweep_report(const std::string& path, const SweepResult& result, std::string* error) {
  std::string text;
  if (ends_with(path, ".html") || ends_with(path, ".htm")) {
    text = sweep_report_html(result);
  } else if (ends_with(path, ".md")) {
    text = sweep_report_markdown(result);
  } else if (ends_with(path, ".csv")) {
    text = sweep_report_csv(result);
  } else if (ends_with(path, ".json")) {
    text = sweep_result_json(result);
  } else {
    *error = path + ": unknown sweep report format (use .html, .md, .csv or .json)";
    return false;
  }
  return save_text_atomically(path, text, error);
}

}  // namespace gruwb::app
