#include "views/run_list.h"

#include <QColorDialog>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSlider>
#include <QVBoxLayout>
#include <algorithm>

namespace gruwb::views {
namespace {

constexpr int kKeyRole = Qt::UserRole;

QIcon swatch(const QColor& color) {
  QPixmap pixmap(14, 14);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setPen(color.darker(130));
  painter.setBrush(color);
  painter.drawRect(1, 1, 11, 11);
  return QIcon(pixmap);
}

}  // namespace

RunList::RunList(QWidget* parent) : QWidget(parent) {
  filter_edit_ = new QLineEdit;
  filter_edit_->setObjectName("runFilter");
  filter_edit_->setPlaceholderText(tr("Filter runs (regex)"));
  filter_edit_->setClearButtonEnabled(true);
  filter_edit_->setToolTip(
      tr("Shows only the runs whose name matches: a regular expression, case-insensitive "
         "(a plain substring when it is not a valid one)."));
  filter_note_ = new QLabel;
  filter_note_->setWordWrap(true);
  filter_note_->setVisible(false);

  list_ = new QListWidget;
  list_->setObjectName("runList");
  list_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  list_->setToolTip(
      tr("One row per run: tick to show its curves, double-click to rename. Solid lines are "
         "training, dashed lines validation."));
  list_->setMinimumHeight(60);

  rename_button_ = new QPushButton(tr("Rename"));
  color_button_ = new QPushButton(tr("Colour..."));
  delete_button_ = new QPushButton(tr("Delete"));
  delete_button_->setObjectName("deleteRun");
  delete_button_->setToolTip(
      tr("Removes the run's curves from both plots (Undo Delete brings them back)."));
  undo_button_ = new QPushButton(tr("Undo Delete"));
  undo_button_->setObjectName("undoDeleteRun");
  auto* buttons = new QGridLayout;
  buttons->setContentsMargins(0, 0, 0, 0);
  buttons->setSpacing(2);
  buttons->addWidget(rename_button_, 0, 0);
  buttons->addWidget(color_button_, 0, 1);
  buttons->addWidget(delete_button_, 1, 0);
  buttons->addWidget(undo_button_, 1, 1);

  x_axis_box_ = new QComboBox;
  x_axis_box_->setObjectName("xAxisBox");
  x_axis_box_->addItem(tr("Step"), int(CurveXAxis::kStep));
  x_axis_box_->addItem(tr("Epoch"), int(CurveXAxis::kEpoch));
  x_axis_box_->addItem(tr("Wall time"), int(CurveXAxis::kWallTime));
  x_axis_box_->setToolTip(
      tr("Step: optimizer steps. Epoch: fractional within an epoch. Wall time: seconds since "
         "the run started."));

  smoothing_slider_ = new QSlider(Qt::Horizontal);
  smoothing_slider_->setObjectName("runsSmoothingSlider");
  smoothing_slider_->setRange(0, 999);
  smoothing_slider_->setValue(qRound(smoothing_ * 1000));
  smoothing_slider_->setToolTip(
      tr("Exponential moving average with debiasing (TensorBoard's smoothing), for both plots."));
  smoothing_label_ = new QLabel(QString::number(smoothing_, 'f', 3));
  smoothing_label_->setMinimumWidth(smoothing_label_->fontMetrics().horizontalAdvance("0.999 "));
  auto* smoothing_row = new QHBoxLayout;
  smoothing_row->setContentsMargins(0, 0, 0, 0);
  smoothing_row->addWidget(smoothing_slider_, 1);
  smoothing_row->addWidget(smoothing_label_);

  auto* shared = new QFormLayout;
  shared->setContentsMargins(0, 0, 0, 0);
  shared->addRow(tr("X axis"), x_axis_box_);
  shared->addRow(tr("Smoothing"), smoothing_row);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 2, 2, 2);
  layout->setSpacing(3);
  layout->addLayout(shared);
  layout->addWidget(filter_edit_);
  layout->addWidget(filter_note_);
  layout->addWidget(list_, 1);
  auto* line_styles = new QLabel(tr("solid: training, dashed: validation"));
  line_styles->setEnabled(false);  // a caption, greyed
  layout->addWidget(line_styles);
  layout->addLayout(buttons);

  connect(filter_edit_, &QLineEdit::textChanged, this, &RunList::setFilter);
  connect(list_, &QListWidget::itemChanged, this, &RunList::onItemChanged);
  connect(list_, &QListWidget::currentItemChanged, this, [this] {
    updateButtons();
    emit currentRunChanged(currentKey());
  });
  connect(rename_button_, &QPushButton::clicked, this, [this] {
    if (QListWidgetItem* item = list_->currentItem()) list_->editItem(item);
  });
  connect(color_button_, &QPushButton::clicked, this, &RunList::chooseColor);
  connect(delete_button_, &QPushButton::clicked, this, [this] {
    const QString key = currentKey();
    if (!key.isEmpty()) removeRun(key);
  });
  connect(undo_button_, &QPushButton::clicked, this, &RunList::undoRemove);
  connect(x_axis_box_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setXAxis(CurveXAxis(x_axis_box_->itemData(index).toInt())); });
  connect(smoothing_slider_, &QSlider::valueChanged, this,
          [this](int value) { setSmoothing(value / 1000.0); });
  updateButtons();
}

RunList::Run* RunList::find(const QString& key) {
  for (Run& run : runs_) {
    if (run.key == key) return &run;
  }
  return nullptr;
}

const RunList::Run* RunList::find(const QString& key) const {
  return const_cast<RunList*>(this)->find(key);
}

QListWidgetItem* RunList::itemFor(const QString& key) const {
  for (int i = 0; i < list_->count(); ++i) {
    if (list_->item(i)->data(kKeyRole).toString() == key) return list_->item(i);
  }
  return nullptr;
}

void RunList::refreshItem(QListWidgetItem* item, const Run& run) {
  const bool was = updating_;
  updating_ = true;
  const QString shown = run.label.isEmpty() ? run.key : run.label;
  item->setText(shown);
  item->setToolTip(run.label.isEmpty() ? run.key : tr("%1 (run %2)").arg(run.label, run.key));
  item->setIcon(swatch(run.color));
  item->setCheckState(run.checked ? Qt::Checked : Qt::Unchecked);
  item->setHidden(!matchesFilter(run.key));
  updating_ = was;
}

bool RunList::addRun(const QString& key, const QColor& color) {
  if (find(key)) return false;
  Run run;
  run.key = key;
  run.color = saved_colors_.value(key, color);
  run.label = saved_labels_.value(key);
  run.checked = !hidden_keys_.contains(key);
  runs_.append(run);
  auto* item = new QListWidgetItem;
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable |
                 Qt::ItemIsEditable);
  item->setData(kKeyRole, key);
  refreshItem(item, run);
  updating_ = true;
  list_->addItem(item);
  updating_ = false;
  updateButtons();
  return true;
}

bool RunList::contains(const QString& key) const { return find(key) != nullptr; }

QStringList RunList::runs() const {
  QStringList keys;
  for (const Run& run : runs_) keys << run.key;
  return keys;
}

QString RunList::label(const QString& key) const {
  const Run* run = find(key);
  return run && !run->label.isEmpty() ? run->label : key;
}

QColor RunList::color(const QString& key) const {
  const Run* run = find(key);
  return run ? run->color : QColor();
}

bool RunList::isChecked(const QString& key) const {
  const Run* run = find(key);
  return run && run->checked;
}

bool RunList::matchesFilter(const QString& key) const {
  if (filter_.isEmpty()) return true;
  const QString name = label(key);
  const QRegularExpression pattern(filter_, QRegularExpression::CaseInsensitiveOption);
  if (pattern.isValid()) return pattern.match(name).hasMatch() || pattern.match(key).hasMatch();
  return name.contains(filter_, Qt::CaseInsensitive) || key.contains(filter_, Qt::CaseInsensitive);
}

bool RunList::isShown(const QString& key) const { return isChecked(key) && matchesFilter(key); }

void RunList::setChecked(const QString& key, bool checked) {
  Run* run = find(key);
  if (!run || run->checked == checked) return;
  run->checked = checked;
  hidden_keys_.removeAll(key);
  if (!checked) hidden_keys_ << key;
  if (QListWidgetItem* item = itemFor(key)) refreshItem(item, *run);
  emit runsChanged();
}

void RunList::rename(const QString& key, const QString& label) {
  Run* run = find(key);
  if (!run) return;
  const QString wanted = label.trimmed() == key ? QString() : label.trimmed();
  run->label = wanted;
  if (wanted.isEmpty()) {
    saved_labels_.remove(key);
  } else {
    saved_labels_.insert(key, wanted);
  }
  if (QListWidgetItem* item = itemFor(key)) refreshItem(item, *run);
  emit runsChanged();
}

void RunList::setColor(const QString& key, const QColor& color) {
  Run* run = find(key);
  if (!run || !color.isValid() || run->color == color) return;
  run->color = color;
  saved_colors_.insert(key, color);
  if (QListWidgetItem* item = itemFor(key)) refreshItem(item, *run);
  emit runsChanged();
}

void RunList::removeRun(const QString& key) {
  const auto it =
      std::find_if(runs_.begin(), runs_.end(), [&](const Run& r) { return r.key == key; });
  if (it == runs_.end()) return;
  Removed removed;
  removed.run = *it;
  removed.row = int(it - runs_.begin());
  removed_.append(removed);
  runs_.erase(it);
  updating_ = true;
  delete itemFor(key);
  updating_ = false;
  updateButtons();
  emit runRemoved(key);
}

bool RunList::undoRemove() {
  if (removed_.isEmpty()) return false;
  const Removed last = removed_.takeLast();
  const int row = std::min(last.row, int(runs_.size()));
  runs_.insert(row, last.run);
  auto* item = new QListWidgetItem;
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable |
                 Qt::ItemIsEditable);
  item->setData(kKeyRole, last.run.key);
  refreshItem(item, last.run);
  updating_ = true;
  list_->insertItem(row, item);
  updating_ = false;
  updateButtons();
  emit runRestored(last.run.key);
  return true;
}

bool RunList::isRemoved(const QString& key) const {
  return std::any_of(removed_.begin(), removed_.end(),
                     [&](const Removed& r) { return r.run.key == key; });
}

void RunList::forgetRemoved(const QString& key) {
  removed_.erase(std::remove_if(removed_.begin(), removed_.end(),
                                [&](const Removed& r) { return r.run.key == key; }),
                 removed_.end());
  updateButtons();
}

void RunList::setFilter(const QString& pattern) {
  if (filter_edit_->text() != pattern) {
    const QSignalBlocker block(filter_edit_);
    filter_edit_->setText(pattern);
  }
  if (pattern == filter_) return;
  filter_ = pattern;
  refreshFilter();
  emit runsChanged();
}

void RunList::refreshFilter() {
  const bool valid = filter_.isEmpty() || QRegularExpression(filter_).isValid();
  filter_note_->setVisible(!valid);
  filter_note_->setText(valid ? QString() : tr("Not a regular expression: matching as text."));
  for (int i = 0; i < list_->count(); ++i) {
    QListWidgetItem* item = list_->item(i);
    item->setHidden(!matchesFilter(item->data(kKeyRole).toString()));
  }
}

void RunList::setXAxis(CurveXAxis axis) {
  const int index = x_axis_box_->findData(int(axis));
  if (x_axis_box_->currentIndex() != index) {
    const QSignalBlocker block(x_axis_box_);
    x_axis_box_->setCurrentIndex(index);
  }
  if (axis == x_axis_) return;
  x_axis_ = axis;
  emit xAxisChanged(axis);
}

void RunList::setSmoothing(double weight) {
  weight = show_smoothing(smoothing_slider_, smoothing_label_, weight);
  if (weight == smoothing_) return;
  smoothing_ = weight;
  emit smoothingChanged(weight);
}

void RunList::onItemChanged(QListWidgetItem* item) {
  if (updating_) return;
  const QString key = item->data(kKeyRole).toString();
  Run* run = find(key);
  if (!run) return;
  const bool checked = item->checkState() == Qt::Checked;
  if (checked != run->checked) setChecked(key, checked);
  const QString shown = run->label.isEmpty() ? run->key : run->label;
  if (item->text() != shown) rename(key, item->text());
}

void RunList::chooseColor() {
  const QString key = currentKey();
  if (key.isEmpty()) return;
  const QColor chosen =
      QColorDialog::getColor(color(key), this, tr("Colour of %1").arg(label(key)));
  if (chosen.isValid()) setColor(key, chosen);
}

void RunList::setCurrentRun(const QString& key) {
  QListWidgetItem* item = key.isEmpty() ? nullptr : itemFor(key);
  if (item != list_->currentItem()) list_->setCurrentItem(item);
}

QString RunList::currentKey() const {
  const QListWidgetItem* item = list_->currentItem();
  return item ? item->data(kKeyRole).toString() : QString();
}

void RunList::updateButtons() {
  const bool selected = list_->currentItem() != nullptr;
  rename_button_->setEnabled(selected);
  color_button_->setEnabled(selected);
  delete_button_->setEnabled(selected);
  undo_button_->setEnabled(!removed_.isEmpty());
  undo_button_->setToolTip(removed_.isEmpty() ? tr("Nothing deleted")
                                              : tr("Brings back %1").arg(removed_.back().run.key));
}

void RunList::saveSettings(QSettings& settings, const QString& group) const {
  settings.beginGroup(group);
  settings.setValue("filter", filter_);
  settings.setValue("xAxis", curve_x_axis_key(x_axis_));
  settings.setValue("smoothing", smoothing_);
  settings.setValue("hiddenRuns", hidden_keys_);
  settings.beginGroup("names");
  settings.remove("");
  // Run names hold '/', which QSettings reads as groups: pairs stored as values.
  int n = 0;
  for (auto it = saved_labels_.begin(); it != saved_labels_.end(); ++it, ++n) {
    settings.setValue(QString::number(n), QStringList{it.key(), it.value()});
  }
  settings.endGroup();
  settings.beginGroup("colors");
  settings.remove("");
  n = 0;
  for (auto it = saved_colors_.begin(); it != saved_colors_.end(); ++it, ++n) {
    settings.setValue(QString::number(n), QStringList{it.key(), it.value().name()});
  }
  settings.endGroup();
  settings.endGroup();
}

void RunList::restoreSettings(QSettings& settings, const QString& group) {
  settings.beginGroup(group);
  setFilter(settings.value("filter", filter_).toString());
  setXAxis(curve_x_axis_from_key(settings.value("xAxis", curve_x_axis_key(x_axis_)).toString()));
  setSmoothing(settings.value("smoothing", smoothing_).toDouble());
  hidden_keys_ = settings.value("hiddenRuns").toStringList();
  saved_labels_.clear();
  settings.beginGroup("names");
  for (const QString& n : settings.childKeys()) {
    const QStringList pair = settings.value(n).toStringList();
    if (pair.size() == 2) saved_labels_.insert(pair[0], pair[1]);
  }
  settings.endGroup();
  saved_colors_.clear();
  settings.beginGroup("colors");
  for (const QString& n : settings.childKeys()) {
    const QStringList pair = settings.value(n).toStringList();
    if (pair.size() == 2 && QColor(pair[1]).isValid())
      saved_colors_.insert(pair[0], QColor(pair[1]));
  }
  settings.endGroup();
  settings.endGroup();
  for (Run& run : runs_) {
    run.checked = !hidden_keys_.contains(run.key);
    run.label = saved_labels_.value(run.key);
    run.color = saved_colors_.value(run.key, run.color);
    if (QListWidgetItem* item = itemFor(run.key)) refreshItem(item, run);
  }
  emit runsChanged();
}

}  // namespace gruwb::views
