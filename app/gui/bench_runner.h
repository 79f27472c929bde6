#pragma once
// Tools > Benchmark Model: times the open model on this host (app::bench_model,
// the same code as `gruwb bench`) off the GUI thread and hands the text
// report back on the GUI thread.

#include <QObject>
#include <QString>
#include <memory>

class QThread;

namespace gruwb::gui {

class BenchRunner : public QObject {
  Q_OBJECT

 public:
  explicit BenchRunner(QObject* parent = nullptr);
  ~BenchRunner() override;  // waits for a run in progress (at most a few seconds)

  // Inference, then training of every weight (FC + RNN, Adam, batch 1). A
  // model that runs but cannot train still gets its inference figures, with
  // the reason training failed. False when a run is already going.
  bool start(const QString& model_path, int repetitions = 5, double min_seconds = 0.1);
  bool running() const;

 signals:
  // `report` is gruwb bench's table ("" when even inference failed);
  // `problem` one line naming what failed ("" when all ran).
  void finished(const QString& model_path, const QString& report, const QString& problem);

 private:
  std::unique_ptr<QThread> thread_;
};

}  // namespace gruwb::gui
