#include "app/gui/project_file.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

namespace gruwb::gui {
namespace {

QString relativeTo(const QDir& base, const QString& path) {
  return path.isEmpty() ? QString() : base.relativeFilePath(path);
}

QString resolve(const QDir& base, const QString& path) {
  return path.isEmpty() ? QString() : QDir::cleanPath(base.absoluteFilePath(path));
}

}  // namespace

bool write_project_file(const QString& path, const ProjectFile& project, QString* error) {
  const QDir base = QFileInfo(path).absoluteDir();
  QJsonObject root;
  root["format"] = kProjectFormat;
  root["version"] = kProjectVersion;
  root["model"] = relativeTo(base, project.model);
  root["dataset"] = relativeTo(base, project.dataset);
  QJsonArray graph_path;
  for (int index : project.graph_path) graph_path.append(index);
  root["graph_path"] = graph_path;
  QJsonObject layout;
  layout["window_state"] = QString::fromLatin1(project.window_state.toBase64());
  layout["geometry"] = QString::fromLatin1(project.geometry.toBase64());
  root["layout"] = layout;
  root["sections"] = project.sections;

  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    *error = QString("%1: %2").arg(QFileInfo(path).fileName(), file.errorString());
    return false;
  }
  file.write(QJsonDocument(root).toJson(QJsonDocument::Indented));
  if (!file.commit()) {
    *error = QString("%1: %2").arg(QFileInfo(path).fileName(), file.errorString());
    return false;
  }
  return true;
}

bool read_project_file(const QString& path, ProjectFile* project, QString* error) {
  const QString name = QFileInfo(path).fileName();
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    *error = QString("%1: %2").arg(name, file.errorString());
    return false;
  }
  QJsonParseError parse;
  const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parse);
  if (parse.error != QJsonParseError::NoError) {
    *error = QString("%1: not a project file: JSON error at byte %2: %3")
                 .arg(name)
                 .arg(parse.offset)
                 .arg(parse.errorString());
    return false;
  }
  const QJsonObject root = document.object();
  if (!document.isObject() || root["format"].toString() != kProjectFormat) {
    *error = QString("%1: not a project file (format is not \"%2\")").arg(name, kProjectFormat);
    return false;
  }
  const int version = root["version"].toInt(-1);
  if (version < 1 || version > kProjectVersion) {
    *error = QString("%1: project version %2, this build reads 1 to %3")
                 .arg(name)
                 .arg(version)
                 .arg(kProjectVersion);
    return false;
  }
  const QDir base = QFileInfo(path).absoluteDir();
  ProjectFile result;
  result.model = resolve(base, root["model"].toString());
  result.dataset = resolve(base, root["dataset"].toString());
  for (const QJsonValue& index : root["graph_path"].toArray()) {
    result.graph_path << index.toInt();
  }
  const QJsonObject layout = root["layout"].toObject();
  result.window_state = QByteArray::fromBase64(layout["window_state"].toString().toLatin1());
  result.geometry = QByteArray::fromBase64(layout["geometry"].toString().toLatin1());
  result.sections = root["sections"].toObject();
  *project = result;
  return true;
}

}  // namespace gruwb::gui
