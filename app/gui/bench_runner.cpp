#include "app/gui/bench_runner.h"

#include <QFile>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include "app/core/bench.h"
#include "app/core/inspect.h"

namespace gruwb::gui {

BenchRunner::BenchRunner(QObject* parent) : QObject(parent) {}

BenchRunner::~BenchRunner() {
  if (thread_) thread_->wait();
}

bool BenchRunner::running() const { return thread_ && thread_->isRunning(); }

bool BenchRunner::start(const QString& model_path, int repetitions, double min_seconds) {
  if (running()) return false;
  if (thread_) thread_->wait();
  QPointer<BenchRunner> self(this);
  thread_.reset(QThread::create([self, model_path, repetitions, min_seconds] {
    app::BenchRequest request;
    request.model_path = QFile::encodeName(model_path).toStdString();
    request.repetitions = repetitions;
    request.min_seconds = min_seconds;
    request.train_scope = "all";
    app::BenchResult result;
    std::string error;
    const int code = app::bench_model(request, &result, &error);
    // A model that runs but cannot train: bench_model keeps the inference
    // figures it measured before training failed.
    const bool timed = code == app::kExitOk || result.inference.invokes_per_repetition > 0;
    const QString report =
        timed ? QString::fromStdString(app::bench_report(result, false)) : QString();
    std::string problem;
    if (code != app::kExitOk) problem = timed ? "training: " + error : error;
    QMetaObject::invokeMethod(
        self,
        [self, model_path, report, problem = QString::fromStdString(problem)] {
          if (self) emit self->finished(model_path, report, problem);
        },
        Qt::QueuedConnection);
  }));
  thread_->start();  // normal priority: it is timing
  return true;
}

}  // namespace gruwb::gui
