#include "app/gui/model_export.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QRegularExpression>

#include "app/core/export.h"
#include "app/core/inspect.h"

namespace gruwb::gui {

namespace {
constexpr char kTfliteFilter[] = "TensorFlow Lite model (*.tflite)";
constexpr char kCircleFilter[] = "Circle model (*.circle)";
constexpr char kCArrayFilter[] = "C array for firmware (*.h *.cc *.c *.cpp)";
constexpr char kFirmwareFilter[] = "Firmware library folder (no extension) (*)";
}  // namespace

QString modelExportFilters() {
  return QStringList{kTfliteFilter, kCircleFilter, kCArrayFilter, kFirmwareFilter}.join(";;");
}

QString withExportExtension(const QString& path, const QString& selected_filter) {
  if (!QFileInfo(path).suffix().isEmpty() || selected_filter == kFirmwareFilter) return path;
  // "(*.h *.cc)" -> ".h": the filter's first pattern.
  const QRegularExpressionMatch match =
      QRegularExpression(R"(\(\*(\.[a-z]+))").match(selected_filter);
  return match.hasMatch() ? path + match.captured(1) : path;
}

QString chooseModelExportPath(QWidget* parent, const QString& title, const QString& suggested) {
  QString filter;
  const QString suffix = QFileInfo(suggested).suffix().toLower();
  if (suffix == "circle") filter = kCircleFilter;
  if (suffix == "h" || suffix == "cc") filter = kCArrayFilter;
  const QString path =
      QFileDialog::getSaveFileName(parent, title, suggested, modelExportFilters(), &filter);
  return path.isEmpty() ? path : withExportExtension(path, filter);
}

bool exportModelBytes(const QString& output, const QString& label, std::vector<uint8_t> bytes,
                      QString* message) {
  app::ExportRequest request;
  request.output = QFile::encodeName(output).toStdString();
  std::string error;
  if (!app::export_target_for_path(request.output, &request.target, &error)) {
    *message = QString::fromStdString(error);
    return false;
  }
  request.model_path = QFile::encodeName(label).toStdString();
  std::vector<app::ExportedFile> files;
  std::vector<std::string> notes;
  if (app::export_model_bytes(request, std::move(bytes), &files, &notes, &error) != app::kExitOk) {
    *message = QString::fromStdString(error);
    return false;
  }
  uint64_t total = 0;
  for (const app::ExportedFile& f : files) total += f.bytes;
  const QLocale locale(QLocale::English);
  QString where = output;
  if (request.target == app::ExportTarget::kCArray && files.size() == 2) {
    where = QFile::decodeName(files[0].path.c_str()) + " + " +
            QFileInfo(QFile::decodeName(files[1].path.c_str())).fileName();
  }
  *message = QObject::tr("Saved %1 as %2: %3 (%4, %5 bytes)")
                 .arg(QFileInfo(label).fileName(),
                      QString::fromUtf8(app::export_target_name(request.target)), where,
                      QObject::tr("%n file(s)", nullptr, int(files.size())),
                      locale.toString(qulonglong(total)));
  for (const std::string& note : notes) *message += "; " + QString::fromStdString(note);
  return true;
}

}  // namespace gruwb::gui
