#pragma once
// Bounded-rate repaints for live views. A view calls schedule() whenever its
// data changes; its replot runs at most once per kIntervalMs. All live views
// share one queue that runs a single replot per event-loop pass, so when the
// loss, accuracy, gradient and histogram plots all fall due together the GUI
// thread still handles input between two of them instead of stalling for
// their sum.

#include <QObject>
#include <QTimer>
#include <functional>

namespace gruwb::views {

class PacedReplot : public QObject {
  Q_OBJECT

 public:
  static constexpr int kIntervalMs = 33;  // <= 30 replots per second per view

  explicit PacedReplot(std::function<void()> replot, QObject* parent = nullptr);
  ~PacedReplot() override;

  void schedule();
  bool pending() const { return interval_.isActive() || queued_; }
  // Replots now if a replot is pending (tests, exports, screenshots).
  void flush();

 private:
  void enqueue();
  static QTimer* passTimer();
  static void runNext();

  std::function<void()> replot_;
  QTimer interval_;
  bool queued_ = false;
};

}  // namespace gruwb::views
