#include "views/plugin_list_view.h"

#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace gruwb::views {

namespace {

QStringList strings(const QJsonValue& value) {
  QStringList out;
  for (const QJsonValue& v : value.toArray()) out << v.toString();
  return out;
}

QString provides_text(const QJsonObject& plugin) {
  QStringList parts;
  const QStringList cells = strings(plugin["cells"]);
  const QStringList formats = strings(plugin["dataset_formats"]);
  QStringList transports;
  for (const QString& t : strings(plugin["transports"])) transports << t + "://";
  if (!cells.isEmpty()) parts << QObject::tr("cells: %1").arg(cells.join(", "));
  if (!formats.isEmpty()) parts << QObject::tr("datasets: %1").arg(formats.join(", "));
  if (!transports.isEmpty()) parts << QObject::tr("transports: %1").arg(transports.join(", "));
  return parts.join("; ");
}

}  // namespace

PluginListView::PluginListView(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel;
  summary_->setObjectName("pluginSummary");
  tree_ = new QTreeWidget;
  tree_->setObjectName("pluginTree");
  tree_->setColumnCount(kColumnCount);
  tree_->setHeaderLabels(
      {tr("Plugin"), tr("Version"), tr("SDK"), tr("Provides"), tr("Status"), tr("File")});
  tree_->setRootIsDecorated(false);
  tree_->setAlternatingRowColors(true);
  tree_->setWordWrap(true);
  tree_->header()->setStretchLastSection(true);
  folders_ = new QLabel;
  folders_->setObjectName("pluginFolders");
  folders_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  folders_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(tree_, 1);
  layout->addWidget(folders_);
}

void PluginListView::setReport(const QJsonObject& report) {
  tree_->clear();
  int loaded = 0, refused = 0;
  for (const QJsonValue& value : report["plugins"].toArray()) {
    const QJsonObject plugin = value.toObject();
    auto* item = new QTreeWidgetItem(tree_);
    item->setText(kName, plugin["name"].toString());
    const int sdk = plugin["sdk"].toInt();
    item->setText(kSdk, sdk > 0 ? QString::number(sdk) : QString());  // 0: unreadable metadata
    const QString path = plugin["path"].toString();
    item->setText(kPath, path);
    item->setToolTip(kPath, plugin["path"].toString());
    if (plugin["loaded"].toBool()) {
      ++loaded;
      item->setText(kVersion, plugin["version"].toString());
      item->setText(kProvides, provides_text(plugin));
      const QStringList warnings = strings(plugin["warnings"]);
      item->setText(kStatus, warnings.isEmpty() ? tr("loaded") : warnings.join("\n"));
      item->setToolTip(kName, plugin["description"].toString());
      item->setToolTip(kProvides, item->text(kProvides));
    } else {
      ++refused;
      // The File column names the file: the status keeps only the reason.
      QString problem = plugin["problem"].toString();
      if (problem.startsWith(path + ": ")) problem = problem.mid(path.size() + 2);
      if (problem.endsWith(" (" + path + ")")) problem.chop(path.size() + 3);
      item->setText(kStatus, tr("refused: %1").arg(problem));
      item->setToolTip(kStatus, item->text(kStatus));
      for (int c = 0; c < kColumnCount; ++c) item->setForeground(c, QColor(176, 0, 32));
    }
  }
  for (int c = 0; c < kPath; ++c) tree_->resizeColumnToContents(c);
  tree_->setColumnWidth(kStatus, qMin(tree_->columnWidth(kStatus), 420));
  tree_->setColumnWidth(kProvides, qMin(tree_->columnWidth(kProvides), 420));
  summary_->setText(tr("%1 loaded, %2 refused (plugin SDK %3)")
                        .arg(loaded)
                        .arg(refused)
                        .arg(report["sdk"].toInt()));
  QStringList folders;
  for (const QString& folder : strings(report["folders"])) folders << "  " + folder;
  folders_->setText(tr("Folders searched, in order:\n%1").arg(folders.join("\n")));
}

QString PluginListView::summaryText() const { return summary_->text(); }

}  // namespace gruwb::views
