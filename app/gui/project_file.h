#pragma once
// The .gruwb project (session) file: which model and dataset are open, the
// graph's place, the window layout, and named sections that other parts of
// the workbench own (experiments, curves). JSON, so it diffs and survives
// hand edits; paths are stored relative to the project file so a project
// folder can move; saved atomically with QSaveFile.

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace gruwb::gui {

constexpr char kProjectFormat[] = "gru-workbench-project";
constexpr int kProjectVersion = 1;

struct ProjectFile {
  QString model;            // absolute path, "" when none
  QString dataset;          // absolute path, "" when none
  QList<int> graph_path;    // breadcrumb of the graph view (subgraph indices)
  QByteArray window_state;  // QMainWindow::saveState()
  QByteArray geometry;      // QWidget::saveGeometry()
  QJsonObject sections;     // key -> value, written by workspace hooks
};

// Writes `project` to `path` (atomically). False with a one-line `error`.
bool write_project_file(const QString& path, const ProjectFile& project, QString* error);
// Reads `path`; relative paths inside resolve against the file's folder.
// False with a one-line `error` naming the file and the problem.
bool read_project_file(const QString& path, ProjectFile* project, QString* error);

}  // namespace gruwb::gui
