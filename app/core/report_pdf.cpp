// PDF reports: the HTML report laid out by QTextDocument on a QPdfWriter, the
// SVG plots rendered to images by QSvgRenderer (QTextDocument shows no SVG).

#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QUrl>
#include <cstdlib>

#include "app/core/report.h"

namespace gruwb::app {
namespace {

// The CLI has no application object; fonts and layout need a GUI one. The
// offscreen platform works without a display.
void ensure_gui_application() {
  if (QCoreApplication::instance()) return;
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  static int argc = 1;
  static char name[] = "gruwb";
  static char* argv[] = {name, nullptr};
  static QGuiApplication* app = new QGuiApplication(argc, argv);
  (void)app;
}

}  // namespace

bool write_report_pdf(const std::string& path, const ExperimentResult& result, std::string* error) {
  ensure_gui_application();
  if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance())) {
    *error = path + ": PDF reports need a QGuiApplication (this process made a QCoreApplication)";
    return false;
  }
  QSaveFile file(QString::fromStdString(path));
  if (!file.open(QIODevice::WriteOnly)) {
    *error = path + ": cannot write (" + file.errorString().toStdString() + ")";
    return false;
  }
  QPdfWriter writer(&file);
  writer.setPageSize(QPageSize(QPageSize::A4));
  writer.setResolution(150);
  writer.setTitle(QString::fromStdString(result.spec.name));
  writer.setCreator(QStringLiteral("GRU Workbench"));
  QTextDocument document;
  const auto plots = report_plots(result);
  for (size_t i = 0; i < plots.size(); ++i) {
    const std::string svg = curve_svg(result, plots[i].first, plots[i].second);
    QSvgRenderer renderer(QByteArray::fromStdString(svg));
    QImage image(1280, 640, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    renderer.render(&painter);
    painter.end();
    document.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("plot%1.png").arg(i)),
                         image);
  }
  document.setHtml(QString::fromStdString(report_html(result, true)));
  document.setPageSize(writer.pageLayout().paintRectPixels(writer.resolution()).size());
  document.print(&writer);
  if (!file.commit()) {
    *error = path + ": cannot write (" + file.errorString().toStdString() + ")";
    return false;
  }
  return true;
}

}  // namespace gruwb::app
