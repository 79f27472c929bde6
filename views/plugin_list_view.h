#pragma once
// The plugins a program found (Help > Plugins): one row per plugin with its version, SDK,
// what it provides (cells, dataset formats, transports) and its file, refused plugins in red
// with the reason, and the folders searched. It shows the listing app/core's plugins_json()
// computes, the same object `gruwb plugins --json` prints.

#include <QJsonObject>
#include <QWidget>

class QLabel;
class QTreeWidget;

namespace gruwb::views {

class PluginListView : public QWidget {
  Q_OBJECT

 public:
  enum Column { kName, kVersion, kSdk, kProvides, kStatus, kPath, kColumnCount };

  explicit PluginListView(QWidget* parent = nullptr);
  void setReport(const QJsonObject& report);

  QTreeWidget* tree() const { return tree_; }
  QString summaryText() const;  // "2 loaded, 1 refused (plugin SDK 1)"

 private:
  QLabel* summary_;
  QTreeWidget* tree_;
  QLabel* folders_;
};

}  // namespace gruwb::views
