#include "paced_replot.h"

#include <QCoreApplication>
#include <QList>
#include <QPointer>

namespace gruwb::views {
namespace {

// Views waiting for their turn, oldest first. GUI thread only.
QList<PacedReplot*>& queue() {
  static QList<PacedReplot*> waiting;
  return waiting;
}

}  // namespace

// One zero-interval timer drives the queue: it fires once per event-loop
// pass while views wait. Owned by the application so it never outlives it.
QTimer* PacedReplot::passTimer() {
  static QPointer<QTimer> timer;
  if (!timer) {
    timer = new QTimer(QCoreApplication::instance());
    timer->setInterval(0);
    QObject::connect(timer, &QTimer::timeout, &PacedReplot::runNext);
  }
  return timer;
}

PacedReplot::PacedReplot(std::function<void()> replot, QObject* parent)
    : QObject(parent), replot_(std::move(replot)) {
  interval_.setSingleShot(true);
  interval_.setInterval(kIntervalMs);
  connect(&interval_, &QTimer::timeout, this, &PacedReplot::enqueue);
}

PacedReplot::~PacedReplot() { queue().removeAll(this); }

void PacedReplot::schedule() {
  if (!interval_.isActive() && !queued_) interval_.start();
}

void PacedReplot::flush() {
  if (!pending()) return;
  interval_.stop();
  queue().removeAll(this);
  queued_ = false;
  replot_();
}

void PacedReplot::enqueue() {
  queued_ = true;
  queue().append(this);
  // The timer stops itself when the queue is empty.
  if (!passTimer()->isActive()) passTimer()->start();
}

void PacedReplot::runNext() {
  if (queue().isEmpty()) {
    passTimer()->stop();
    return;
  }
  PacedReplot* next = queue().takeFirst();
  next->queued_ = false;
  next->replot_();
  if (queue().isEmpty()) passTimer()->stop();
}

}  // namespace gruwb::views
