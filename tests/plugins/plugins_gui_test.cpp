// Help > Plugins and plugin state in project files, with real plugins: the tsv_reader
// example from the build's plugin folder, gru_plugin_test and the SDK 999 plugin from
// GRUWB_PLUGIN_PATH, loaded as gru-workbench's main() loads them.

#include <QAction>
#include <QDialog>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include "app/core/plugin_manager.h"
#include "app/gui/main_window.h"
#include "views/plugin_list_view.h"

using gruwb::gui::MainWindow;
using gruwb::views::PluginListView;

class PluginsGuiTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    qputenv("GRUWB_PLUGIN_PATH", GRUWB_TEST_PLUGIN_DIR "/cell:" GRUWB_TEST_PLUGIN_DIR "/sdk999");
    const QStringList problems = gruwb::app::load_plugins("gru-workbench");
    QCOMPARE(problems.size(), 1);
    QVERIFY(problems[0].startsWith(
        "plugin sdk999_plugin built for SDK 999; this gru-workbench has SDK 1"));
  }

  void helpMenuListsThePlugins() {
    MainWindow window;
    auto* action = window.findChild<QAction*>("pluginsAction");
    QVERIFY(action);
    action->trigger();
    auto* dialog = window.findChild<QDialog*>("pluginsDialog");
    QVERIFY(dialog && dialog->isVisible());
    auto* view = dialog->findChild<PluginListView*>();
    QVERIFY(view);
    QCOMPARE(view->summaryText(), QString("3 loaded, 1 refused (plugin SDK 1)"));
    QTreeWidget* tree = view->tree();
    QCOMPARE(tree->topLevelItemCount(), 4);
    QMap<QString, QTreeWidgetItem*> rows;
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
      rows[tree->topLevelItem(i)->text(PluginListView::kName)] = tree->topLevelItem(i);
    }
    QTreeWidgetItem* cell = rows.value("gru_plugin_test");
    QVERIFY(cell);
    QCOMPARE(cell->text(PluginListView::kProvides),
             QString("cells: gru_plugin_test (op GRUWB_GRU_PLUGIN_TEST)"));
    QCOMPARE(cell->text(PluginListView::kStatus), QString("loaded"));
    QCOMPARE(cell->text(PluginListView::kSdk), QString("1"));
    QCOMPARE(rows.value("tsv_reader")->text(PluginListView::kProvides), QString("datasets: .tsv"));
    QCOMPARE(rows.value("tcp_transport")->text(PluginListView::kProvides),
             QString("transports: tcp://"));
    QTreeWidgetItem* refused = rows.value("sdk999_plugin");
    QVERIFY(refused);
    QCOMPARE(refused->text(PluginListView::kSdk), QString("999"));
    QVERIFY(refused->text(PluginListView::kStatus)
                .startsWith("refused: plugin sdk999_plugin built for SDK 999"));
    QCOMPARE(refused->foreground(PluginListView::kName).color(), QColor(176, 0, 32));
    auto* folders = view->findChild<QLabel*>("pluginFolders");
    QVERIFY(folders->text().contains(GRUWB_TEST_PLUGIN_DIR "/cell"));
    // A plugin's dataset format opens like a built-in one.
    QVERIFY(MainWindow::isDatasetFileName("/data/GunPoint_TRAIN.tsv"));
    QVERIFY(!MainWindow::isDatasetFileName("/data/GunPoint_TRAIN.tsx"));
  }

  // Each plugin's state travels in the project file, under its name.
  void pluginStateIsSavedInProjects() {
    QTemporaryDir dir;
    const QString project = dir.filePath("p.gruwb");
    gruwb::app::plugin_manager().restoreState(
        QJsonObject{{"tsv_reader", QJsonObject{{"trim_trailing_nan", false}}},
                    {"gru_plugin_test", QJsonObject{{"note", "from the test"}}}});
    {
      MainWindow window;
      QVERIFY(window.saveProject(project));
    }
    QFile file(project);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
    file.close();
    const QJsonObject plugins = json["sections"].toObject()["plugins"].toObject();
    QCOMPARE(plugins["tsv_reader"].toObject()["trim_trailing_nan"].toBool(true), false);
    QCOMPARE(plugins["gru_plugin_test"].toObject()["note"].toString(), QString("from the test"));

    // Opening the project gives the plugins their saved state back.
    gruwb::app::plugin_manager().restoreState(QJsonObject{});
    QCOMPARE(gruwb::app::plugin_manager()
                 .saveState()["tsv_reader"]
                 .toObject()["trim_trailing_nan"]
                 .toBool(false),
             true);
    MainWindow window;
    QVERIFY(window.openProject(project));
    const QJsonObject restored = gruwb::app::plugin_manager().saveState();
    QCOMPARE(restored["tsv_reader"].toObject()["trim_trailing_nan"].toBool(true), false);
    QCOMPARE(restored["gru_plugin_test"].toObject()["note"].toString(), QString("from the test"));
  }
};

QTEST_MAIN(PluginsGuiTest)
#include "plugins_gui_test.moc"
