#pragma once
// What the window shows when no model is open: recent files, the bundled samples (one line
// each), one line and a button per job the workbench does (inspect, fuse, train stages,
// compare cells, board, export) and where Build mode is. Plain data in, requests out: the
// main window finds the files (app/core/bundled_files.h) and carries the requests out.

#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

class QVBoxLayout;

namespace gruwb::views {

struct WelcomeFile {
  QString path;
  QString description;  // one line; "" = the folder is shown instead
};

class WelcomePage : public QWidget {
  Q_OBJECT

 public:
  // The jobs, as jobRequested() names them.
  static constexpr const char* kJobs[] = {"inspect", "fuse",   "train", "compare",
                                          "board",   "export", "build"};

  explicit WelcomePage(QWidget* parent = nullptr);

  void setRecentFiles(const QStringList& paths);
  // `folder`: where the samples were found (shown, so the user can find them on disk).
  void setSamples(const std::vector<WelcomeFile>& samples, const QString& folder);

  // The sample buttons' paths, in display order (tests).
  QStringList samplePaths() const;
  QStringList recentPaths() const;

 signals:
  void fileActivated(const QString& path);  // a recent file or a sample was clicked
  void jobRequested(const QString& job);    // one of kJobs

 private:
  QVBoxLayout* recent_ = nullptr;
  QVBoxLayout* samples_ = nullptr;
  QStringList recent_paths_;
  QStringList sample_paths_;
};

}  // namespace gruwb::views
