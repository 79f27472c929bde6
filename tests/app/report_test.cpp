// Reports of a real (small) experiment: HTML is well-formed XML with inline
// SVG plots, the PDF has pages, the CSV has the documented columns and one
// row per epoch of every run, Markdown and JSON carry the headline table, and
// the JSON reads back into the same reports.

#include "app/core/report.h"

#include <gtest/gtest.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <cmath>

namespace gruwb::app {
namespace {

const ExperimentResult& small_result() {
  static const ExperimentResult result = [] {
    ExperimentSpec spec;
    spec.name = "Report <test> & co";
    spec.build = "cell=gru,units=8";
    spec.data_path = std::string(GRUWB_SHARED_DIR) + "/data/datasets/BasicMotions";
    spec.timesteps = 20;
    spec.validation_fraction = 0.25;
    spec.seeds = 2;
    StageSpec defaults;
    defaults.epochs = 2;
    defaults.learning_rate = 0.01f;
    std::string error;
    parse_stages("init,fc,all", defaults, &spec.stages, &error);
    return run_experiment(spec, nullptr, nullptr);
  }();
  return result;
}

QByteArray read(const std::string& path) {
  QFile file(QString::fromStdString(path));
  EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path;
  return file.readAll();
}

TEST(Report, HeadlineTable) {
  const ExperimentResult& r = small_result();
  ASSERT_EQ(r.status, ExperimentStatus::kCompleted) << r.error;
  const auto header = headline_header(r);
  EXPECT_EQ(header[0], "stage");
  EXPECT_EQ(header[1], "test accuracy");
  const auto rows = headline_table(r);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0], "init");
  EXPECT_EQ(rows[0][3], "-");   // no previous stage
  EXPECT_EQ(rows[0][5], "-");   // init trains nothing
  EXPECT_EQ(rows[1][5], "36");  // fc: Dense 8x4 + 4
  EXPECT_TRUE(QString::fromStdString(rows[2][1]).contains(QString::fromUtf8("±")));
  char expected[32];
  std::snprintf(expected, sizeof expected, "%+.3f", r.summary[2].delta_accuracy);
  EXPECT_EQ(rows[2][3], expected);
}

TEST(Report, HtmlIsWellFormedWithInlineSvg) {
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/r.html";
  std::string error;
  ASSERT_TRUE(write_report(path, small_result(), &error)) << error;
  const QByteArray html = read(path);
  QXmlStreamReader xml(html);
  int svgs = 0, tables = 0, polylines = 0;
  while (!xml.atEnd()) {
    if (xml.readNext() == QXmlStreamReader::StartElement) {
      svgs += xml.name() == QLatin1String("svg");
      tables += xml.name() == QLatin1String("table");
      polylines += xml.name() == QLatin1String("polyline");
    }
  }
  EXPECT_FALSE(xml.hasError()) << xml.errorString().toStdString() << " line " << xml.lineNumber();
  EXPECT_EQ(svgs, 4);            // train/val loss and accuracy
  EXPECT_EQ(polylines, 8);       // fc and all in each
  EXPECT_GE(tables, 1 + 3 + 1);  // headline, 3 confusion matrices, runs
  EXPECT_TRUE(html.contains("Report &lt;test&gt; &amp; co"));
  EXPECT_FALSE(html.contains("src=\"http"));  // self-contained
}

TEST(Report, PdfHasPages) {
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/r.pdf";
  std::string error;
  ASSERT_TRUE(write_report(path, small_result(), &error)) << error;
  const QByteArray pdf = read(path);
  EXPECT_TRUE(pdf.startsWith("%PDF-"));
  const qsizetype pages = QString::fromLatin1(pdf).count(QRegularExpression("/Type\\s*/Page[^s]"));
  EXPECT_GE(pages, 1);
  EXPECT_GT(pdf.size(), 5000);
}

TEST(Report, CsvHasTheDocumentedColumns) {
  const ExperimentResult& r = small_result();
  const QStringList lines = QString::fromStdString(report_csv(r)).split('\n', Qt::SkipEmptyParts);
  ASSERT_FALSE(lines.isEmpty());
  EXPECT_EQ(lines[0],
            "cell,stage,seed,epoch,steps,train_loss,train_accuracy,val_loss,val_accuracy,seconds,"
            "samples_per_second");
  size_t epochs = 0;
  for (const StageRun& run : r.runs) epochs += run.training.epochs.size();
  EXPECT_EQ(static_cast<size_t>(lines.size() - 1), epochs);
  for (int i = 1; i < lines.size(); ++i) {
    const QStringList fields = lines[i].split(',');
    ASSERT_EQ(fields.size(), 11) << lines[i].toStdString();
    bool ok = false;
    fields[5].toDouble(&ok);
    EXPECT_TRUE(ok) << lines[i].toStdString();
    fields[7].toDouble(&ok);  // validation split of 25%
    EXPECT_TRUE(ok) << lines[i].toStdString();
  }
  EXPECT_TRUE(lines[1].startsWith("gru,init,1,0,"));
}

TEST(Report, MarkdownAndJson) {
  const ExperimentResult& r = small_result();
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("| stage | test accuracy | cross entropy |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fc |"), std::string::npos);
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/r.json";
  std::string error;
  ASSERT_TRUE(write_report(path, r, &error)) << error;
  const QJsonObject json = QJsonDocument::fromJson(read(path)).object();
  EXPECT_EQ(json.value("summary").toArray().size(), 3);
  EXPECT_EQ(json.value("runs").toArray().size(), 6);
  EXPECT_EQ(json.value("data").toObject().value("validation").toInt(), r.validation_count);
  EXPECT_FALSE(write_report(dir.path().toStdString() + "/r.docx", r, &error));
  EXPECT_NE(error.find("unknown report format"), std::string::npos) << error;
}

// A saved result re-renders the same reports (reopened GUI projects,
// `gruwb experiment --result`): the reader takes back exactly what the
// writer wrote.
TEST(Report, ResultJsonReadsBackExactly) {
  ExperimentResult r = small_result();
  ASSERT_EQ(r.status, ExperimentStatus::kCompleted) << r.error;
  // A diverged figure is written as null and must survive too.
  r.runs[2].training.epochs[1].val_loss = INFINITY;
  const std::string json = experiment_result_json(r);
  ExperimentResult parsed;
  std::string error;
  ASSERT_TRUE(parse_experiment_result(json, "r.json", &parsed, &error)) << error;
  EXPECT_EQ(experiment_result_json(parsed), json);
  r.runs[2].training.epochs[1].val_loss = small_result().runs[2].training.epochs[1].val_loss;
  ASSERT_TRUE(parse_experiment_result(experiment_result_json(r), "r.json", &parsed, &error))
      << error;
  EXPECT_EQ(report_html(parsed), report_html(r));
  EXPECT_EQ(report_markdown(parsed), report_markdown(r));
  EXPECT_EQ(report_csv(parsed), report_csv(r));
}

}  // namespace
}  // namespace gruwb::app
