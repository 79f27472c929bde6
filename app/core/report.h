#pragma once
// Experiment reports: HTML (self-contained, plots as inline SVG), Markdown,
// CSV of every curve, JSON of everything, PDF (report_pdf.cpp, Qt Gui). All
// tables come from headline_table() so every format shows the same figures.
// docs/experiments.md documents the CSV columns.

#include <string>
#include <vector>

#include "app/core/experiment.h"
#include "app/core/sweep.h"

namespace gruwb::app {

// The headline table, one row per (cell, stage), cells already formatted:
// cell, stage, test accuracy (mean ± std), cross entropy, Δ accuracy, Δ CE,
// trainable params, training memory, epochs.
std::vector<std::string> headline_header(const ExperimentResult& result);
std::vector<std::vector<std::string>> headline_table(const ExperimentResult& result);
// Cell comparison rows (empty without cell summaries).
std::vector<std::string> cells_header();
std::vector<std::vector<std::string>> cells_table(const ExperimentResult& result);

// Quantization stages (empty without them): the model before and after,
// accuracy, bytes, arena and latency, the ops kept in float.
std::vector<std::string> quantization_header(const ExperimentResult& result);
std::vector<std::vector<std::string>> quantization_table(const ExperimentResult& result);

// A line plot of one per-epoch metric ("train_loss", "val_loss",
// "train_accuracy", "val_accuracy"), one line per (cell, stage), mean over
// seeds; "" when no run has that metric.
std::string curve_svg(const ExperimentResult& result, const std::string& metric,
                      const std::string& title);

// `plot_images`: instead of inline SVG, <img src="plotN.png"> (for the PDF
// writer, which renders the SVGs to images itself). `preface_html` goes after
// the title (a sweep's own sections).
std::string report_html(const ExperimentResult& result, bool plot_images = false,
                        const std::string& preface_html = "");
std::string report_markdown(const ExperimentResult& result);
// Columns: cell,stage,seed,epoch,steps,train_loss,train_accuracy,val_loss,
// val_accuracy,seconds,samples_per_second (val empty without validation).
std::string report_csv(const ExperimentResult& result);
// The plots report_html shows, in order: (metric, title).
std::vector<std::pair<std::string, std::string>> report_plots(const ExperimentResult& result);

// By extension: .html/.htm, .md, .csv, .json, .pdf. Atomic.
bool write_report(const std::string& path, const ExperimentResult& result, std::string* error);
// PDF (QPdfWriter + QTextDocument); creates an offscreen QGuiApplication when
// none exists, so it works headless.
bool write_report_pdf(const std::string& path, const ExperimentResult& result, std::string* error);

// Sweeps (sweep.h): the hparams table, the best runs and the trade-off plots,
// then the merged runs as one experiment report.
// Test accuracy of every finished run against "model_bytes" or "latency_us"
// (log x axis when it spans a decade), coloured by the first swept setting.
std::string sweep_scatter_svg(const SweepResult& result, const std::string& x_metric);
std::string sweep_report_html(const SweepResult& result);
std::string sweep_report_markdown(const SweepResult& result);
// One row per run: run, the settings, state and plain numbers (empty when not finished).
std::string sweep_report_csv(const SweepResult& result);
// By extension: .html/.htm, .md, .csv, .json (sweep_result_json). Atomic.
bool write_sweep_report(const std::string& path, const SweepResult& result, std::string* error);

}  // namespace gruwb::app
