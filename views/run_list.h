#pragma once
// The runs of the Curves dock, as TensorBoard lists them: one row per run
// (experiment / stage, plus cell and seed when an experiment has several)
// with its colour swatch and a show/hide box; rename (double-click or the
// button), colour (QColorDialog), delete with undo, a filter (a regular
// expression, or a plain substring when it is not one, over the runs'
// names) that hides the runs it does not match, and the controls every plot
// of the dock shares: the x axis (step, epoch, wall time) and the smoothing.
// The list only keeps the runs' state and says what changed; its owner (the
// training workspace) applies it to the plots.

#include <QColor>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "views/curve_plot.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QSettings;
class QSlider;

namespace gruwb::views {

class RunList : public QWidget {
  Q_OBJECT

 public:
  explicit RunList(QWidget* parent = nullptr);

  // Adds a run with `color` unless the user chose one for this name before
  // (restored settings); false when it is listed already.
  bool addRun(const QString& key, const QColor& color);
  bool contains(const QString& key) const;
  QStringList runs() const;                 // listed, in the order they came
  QString label(const QString& key) const;  // the name shown: renamed, else the key
  QColor color(const QString& key) const;
  bool isChecked(const QString& key) const;
  bool matchesFilter(const QString& key) const;
  // Checked and matching the filter: its curves are drawn.
  bool isShown(const QString& key) const;

  // Selects the run's row ("" or an unknown run: none); currentRunChanged follows.
  void setCurrentRun(const QString& key);
  QString currentRun() const { return currentKey(); }

  void setChecked(const QString& key, bool checked);
  void rename(const QString& key, const QString& label);  // "" = back to the key
  void setColor(const QString& key, const QColor& color);
  // Takes the run out of the list (runRemoved); undoRemove() brings the last
  // one back (runRestored).
  void removeRun(const QString& key);
  bool undoRemove();
  bool isRemoved(const QString& key) const;
  // Drops a removed run from the undo stack (a new run of that name came).
  void forgetRemoved(const QString& key);

  void setFilter(const QString& pattern);
  QString filter() const { return filter_; }

  void setXAxis(CurveXAxis axis);
  CurveXAxis xAxis() const { return x_axis_; }
  void setSmoothing(double weight);  // clamped like CurvePlot's
  double smoothing() const { return smoothing_; }

  // Filter, x axis, smoothing, hidden runs, names and colours the user
  // chose, under `group`; restored names and colours apply to runs that come later.
  void saveSettings(QSettings& settings, const QString& group) const;
  void restoreSettings(QSettings& settings, const QString& group);

  QListWidget* list() const { return list_; }
  QLineEdit* filterEdit() const { return filter_edit_; }
  QComboBox* xAxisBox() const { return x_axis_box_; }
  QSlider* smoothingSlider() const { return smoothing_slider_; }
  QPushButton* deleteButton() const { return delete_button_; }
  QPushButton* undoButton() const { return undo_button_; }

 signals:
  void runsChanged();                          // shown, name or colour of any run
  void currentRunChanged(const QString& key);  // "" when none
  void runRemoved(const QString& key);
  void runRestored(const QString& key);
  void xAxisChanged(gruwb::views::CurveXAxis axis);
  void smoothingChanged(double weight);

 private:
  struct Run {
    QString key;
    QString label;  // "" = the key
    QColor color;
    bool checked = true;
  };
  struct Removed {
    Run run;
    int row = 0;
  };

  Run* find(const QString& key);
  const Run* find(const QString& key) const;
  QListWidgetItem* itemFor(const QString& key) const;
  void refreshItem(QListWidgetItem* item, const Run& run);
  void refreshFilter();
  void onItemChanged(QListWidgetItem* item);
  void chooseColor();
  QString currentKey() const;
  void updateButtons();

  QLineEdit* filter_edit_ = nullptr;
  QLabel* filter_note_ = nullptr;
  QListWidget* list_ = nullptr;
  QPushButton* rename_button_ = nullptr;
  QPushButton* color_button_ = nullptr;
  QPushButton* delete_button_ = nullptr;
  QPushButton* undo_button_ = nullptr;
  QComboBox* x_axis_box_ = nullptr;
  QSlider* smoothing_slider_ = nullptr;
  QLabel* smoothing_label_ = nullptr;

  QVector<Run> runs_;
  QVector<Removed> removed_;  // the undo stack, last removed at the back
  QString filter_;
  CurveXAxis x_axis_ = CurveXAxis::kStep;
  double smoothing_ = CurvePlot::kDefaultSmoothing;
  // Restored from settings, applied when a run of that name comes.
  QStringList hidden_keys_;
  QHash<QString, QString> saved_labels_;
  QHash<QString, QColor> saved_colors_;
  bool updating_ = false;  // item changes made here, not by the user
};

}  // namespace gruwb::views
