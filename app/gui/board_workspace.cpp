#include "app/gui/board_workspace.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMetaObject>
#include <QScrollArea>
#include <QStandardPaths>
#include <QThread>
#include <algorithm>
#include <atomic>
#include <cmath>

#include "app/core/board.h"
#include "app/core/board_flash.h"
#include "app/core/inspect.h"
#include "app/gui/model_export.h"
#include "engine/tools/model_file.h"
#include "serial/link/board_client.h"
#include "serial/link/board_run.h"
#include "serial/link/host_reference.h"
#include "serial/link/transport.h"
#include "views/curve_plot.h"
#include "views/experiment_panel.h"
#include "views/firmware_flash_dialog.h"
#include "views/scrollable.h"

namespace gruwb::gui {

using namespace gruwb::serial;

// What a worker posts to the GUI thread in one go.
struct BoardBatch {
  struct Point {
    QString series;  // "board loss", "host accuracy", ...
    bool accuracy = false;
    double samples = 0;  // samples trained since the run began
    double value = 0;
  };
  QVector<views::BoardFrameRow> frames;
  QVector<Point> points;
  bool has_progress = false;
  qint64 done = 0, total = 0;
  double kb_per_s = 0;
  QString message;
  bool has_capabilities = false;
  QVector<QPair<QString, QString>> capabilities;
  bool connected_changed = false, connected = false;
  bool finished = false;
  QString error;
};

// Collects what the worker sees and posts it at most every kPostIntervalMs
// (and once at the end), so a chatty link cannot flood the GUI thread.
class BoardPoster {
 public:
  using Post = std::function<void(BoardBatch)>;
  explicit BoardPoster(Post post) : post_(std::move(post)) { timer_.start(); }
  BoardBatch& batch() { return batch_; }
  void maybeFlush() {
    if (timer_.elapsed() >= BoardWorkspace::kPostIntervalMs) flush();
  }
  void flush() {
    post_(std::move(batch_));
    batch_ = BoardBatch();
    timer_.restart();
  }

 private:
  Post post_;
  BoardBatch batch_;
  QElapsedTimer timer_;
};

struct BoardWorkspace::Link {
  std::unique_ptr<BoardClient> client;
  std::atomic<bool> cancel{false};
};

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// Every error the panel shows names the port.
QString on_port(const QString& port, const std::string& error) {
  const QString text = q(error);
  return text.startsWith(port) ? text : port + ": " + text;
}

QVector<QPair<QString, QString>> capability_rows(const Capabilities& caps,
                                                 const std::string& transport) {
  QString ops = QString::number(caps.op_count) + " builtin";
  for (int i = 0; i < caps.custom_op_count; ++i) ops += QString(", ") + caps.custom_ops[i];
  return {
      {"board", caps.board},
      {"session id", QString("%1").arg(caps.session_id, 8, 16, QChar('0'))},
      {"protocol version", QString::number(caps.protocol_version)},
      {"engine version", caps.engine_version},
      {"max frame", QString("%1 bytes payload").arg(caps.max_payload)},
      {"RAM for arena", QString("%1 bytes").arg(caps.ram_bytes)},
      {"ops", ops},
      {"clock", caps.clock_hz ? QString("%1 MHz, %2 cycles")
                                    .arg(caps.clock_hz / 1e6, 0, 'f', 1)
                                    .arg(app::cycle_counter_name(caps))
                              : QString("host (simulated)")},
      {"link", q(transport)},
  };
}

bool to_training_settings(const views::BoardStageSettings& s, TrainingSettings* out,
                          QString* error) {
  TrainingSettings t;
  t.config.optimizer = s.optimizer == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
  t.config.loss = Loss::kCategoricalCrossEntropy;
  t.config.learning_rate = static_cast<float>(s.learning_rate);
  t.config.batch_size = s.batch_size;
  if (!parse_trainable_scope(s.stage.toStdString().c_str(), &t.config)) {
    *error = "stage must be fc or all, not '" + s.stage + "'";
    return false;
  }
  t.epochs = static_cast<uint32_t>(s.epochs);
  t.seed = static_cast<uint32_t>(s.seed);
  t.metric_every = static_cast<uint32_t>(s.metric_every);
  t.sample_limit = 0;  // the blob already holds only the chosen samples
  *out = t;
  return true;
}

double run_position(const Metric& m) {
  return static_cast<double>(m.epoch) * m.epoch_samples + m.samples;
}

void add_metric_points(const char* who, const Metric& m, BoardBatch* batch) {
  const QString name(who);
  batch->points.push_back({name + " loss", false, run_position(m), m.loss});
  batch->points.push_back({name + " accuracy", true, run_position(m), m.accuracy});
}

}  // namespace

BoardWorkspace::BoardWorkspace(QObject* parent) : QObject(parent) { createPanel(); }

BoardWorkspace::BoardWorkspace(QMainWindow* window) : QObject(window), window_(window) {
  createPanel();
  owns_panel_ = false;
  auto* dock = new QDockWidget(tr("Board"), window);
  dock->setObjectName("boardDock");  // the saved layout refers to it
  dock->setWidget(views::scrollable(panel_));
  window->addDockWidget(Qt::BottomDockWidgetArea, dock);
  if (auto* curves = window->findChild<QDockWidget*>("curvesDock", Qt::FindDirectChildrenOnly)) {
    window->tabifyDockWidget(curves, dock);
    curves->raise();
  }
  const QMetaObject* meta = window->metaObject();
  if (meta->indexOfSignal("modelChanged(QString)") >= 0)
    connect(window, SIGNAL(modelChanged(QString)), this, SLOT(onModelChanged(QString)));
  if (meta->indexOfSignal("datasetChanged(QString)") >= 0)
    connect(window, SIGNAL(datasetChanged(QString)), this, SLOT(onDatasetChanged(QString)));
}

BoardWorkspace::~BoardWorkspace() {
  link_->cancel = true;
  if (worker_) worker_->wait();  // every link call is bounded by its timeouts
  if (owns_panel_) delete panel_;
}

void BoardWorkspace::createPanel() {
  link_ = std::make_shared<Link>();
  panel_ = new views::BoardPanel;
  panel_->setObjectName("boardPanel");
  connect(panel_, &views::BoardPanel::refreshPortsRequested, this, &BoardWorkspace::refreshPorts);
  connect(panel_, &views::BoardPanel::connectRequested, this, &BoardWorkspace::connectBoard);
  connect(panel_, &views::BoardPanel::disconnectRequested, this, &BoardWorkspace::disconnectBoard);
  connect(panel_, &views::BoardPanel::uploadRequested, this, &BoardWorkspace::uploadModel);
  connect(panel_, &views::BoardPanel::trainRequested, this, &BoardWorkspace::train);
  connect(panel_, &views::BoardPanel::benchRequested, this, [this] { bench(); });
  connect(panel_, &views::BoardPanel::flashRequested, this, &BoardWorkspace::chooseAndFlash);
  connect(panel_, &views::BoardPanel::stopRequested, this, &BoardWorkspace::stop);
  connect(panel_, &views::BoardPanel::stageFromExperimentsRequested, this,
          &BoardWorkspace::copyExperimentSettings);
  connect(panel_, &views::BoardPanel::downloadRequested, this, [this] {
    // A new name beside the source model, never the source itself; the
    // extension picks the file type (app::download_trained_model).
    const QFileInfo source(model_path_);
    const QString suggested = model_path_.isEmpty()
                                  ? QString("board_trained.tflite")
                                  : source.absolutePath() + "/" + source.completeBaseName() +
                                        "_board_trained." + source.suffix();
    const QString path =
        chooseModelExportPath(panel_, tr("Save the Board's Trained Model"), suggested);
    if (!path.isEmpty()) downloadModel(path);
  });
  refreshPorts();
}

void BoardWorkspace::setModelPath(const QString& path) {
  model_path_ = path;
  panel_->setModelAndDataset(model_path_, dataset_path_);
}

void BoardWorkspace::setDatasetPath(const QString& path) {
  dataset_path_ = path;
  panel_->setModelAndDataset(model_path_, dataset_path_);
}

void BoardWorkspace::copyExperimentSettings() {
  auto* experiments =
      window_ ? window_->findChild<views::ExperimentPanel*>("experimentPanel") : nullptr;
  if (!experiments) return;
  const views::ExperimentSettings e = experiments->settings();
  views::BoardStageSettings s = panel_->stageSettings();
  s.stage = e.stages.contains("all") || !e.stages.contains("fc") ? "all" : "fc";
  s.optimizer = e.optimizer;
  s.learning_rate = e.learning_rate;
  s.batch_size = e.batch_size;
  s.epochs = e.epochs;
  s.seed = e.first_seed;
  panel_->setStageSettings(s);
}

void BoardWorkspace::refreshPorts() {
  // Enumeration reads sysfs only: quick enough for the GUI thread.
  std::vector<PortInfo> ports;
  std::string error;
  QStringList names;
  if (list_ports(&ports, &error)) {
    for (const PortInfo& p : ports) names << q(p.path);
    // Simulated boards' ptys too (libserialport cannot see them).
    for (const std::string& pty : app::simulated_board_ports()) names << q(pty);
  } else {
    panel_->showError(tr("listing serial ports: %1").arg(q(error)));
  }
  panel_->setPorts(names);
}

bool BoardWorkspace::isBusy() const { return !operation_.isEmpty(); }

bool BoardWorkspace::waitForIdle(int timeout_ms) {
  QDeadlineTimer deadline(timeout_ms);
  while (isBusy() && !deadline.hasExpired()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(1);
  }
  QCoreApplication::processEvents();
  return !isBusy();
}

void BoardWorkspace::start(const QString& operation, std::function<QString(BoardPoster&)> work) {
  if (isBusy()) return;
  if (worker_) worker_->wait();  // the previous one has posted its end already
  operation_ = operation;
  last_error_.clear();
  link_->cancel = false;
  panel_->setBusy(operation);
  BoardWorkspace* self = this;  // the destructor joins the worker first
  std::shared_ptr<Link> link = link_;
  worker_.reset(QThread::create([self, link, work = std::move(work)] {
    BoardPoster poster([self](BoardBatch batch) {
      QMetaObject::invokeMethod(
          self, [self, batch = std::move(batch)] { self->apply(batch); }, Qt::QueuedConnection);
    });
    if (link->client) {
      link->client->set_frame_tap([&poster](const FrameRecord& f) {
        poster.batch().frames.push_back({f.outgoing, f.crc_ok ? message_type_name(f.type) : "?",
                                         f.sequence, f.length, f.crc_ok});
        poster.maybeFlush();
      });
    }
    const QString error = work(poster);
    if (link->client) link->client->set_frame_tap(nullptr);
    poster.batch().finished = true;
    poster.batch().error = error;
    poster.flush();
  }));
  worker_->setObjectName("board " + operation);
  worker_->start();
}

void BoardWorkspace::apply(const BoardBatch& batch) {
  if (!batch.frames.isEmpty()) panel_->addFrames(batch.frames);
  for (const BoardBatch::Point& p : batch.points) {
    (p.accuracy ? panel_->accuracyPlot() : panel_->lossPlot())
        ->addPoint(p.series, p.samples, p.value);
  }
  if (batch.has_progress) panel_->setUploadProgress(batch.done, batch.total, batch.kb_per_s);
  if (batch.has_capabilities) panel_->setCapabilities(batch.capabilities);
  if (batch.connected_changed) panel_->setConnected(batch.connected, QString());
  if (!batch.message.isEmpty()) panel_->showMessage(batch.message);
  if (!batch.finished) return;
  const QString operation = operation_;
  operation_.clear();
  panel_->setBusy(QString());
  if (!batch.error.isEmpty()) {
    last_error_ = batch.error;
    panel_->showError(batch.error);
  }
  emit operationFinished(operation, batch.error.isEmpty());
}

void BoardWorkspace::connectBoard(const views::BoardPortSettings& settings) {
  if (settings.port.isEmpty()) {
    panel_->showError(tr("type a port (e.g. /dev/ttyACM0, or the /dev/pts/N board-sim prints)"));
    return;
  }
  port_ = settings.port;
  port_settings_ = settings;
  app::BoardConnection c;
  c.port = settings.port.toStdString();
  c.baud = settings.baud;
  c.dtr = settings.dtr;
  std::shared_ptr<Link> link = link_;
  start("connecting", [link, c, port = port_](BoardPoster& poster) -> QString {
    std::string note, error;
    std::unique_ptr<BoardClient> client = app::open_board(c, &note, &error);
    if (!client) return on_port(port, error);
    BoardBatch& b = poster.batch();
    b.has_capabilities = true;
    b.capabilities = capability_rows(client->capabilities(), client->transport_description());
    b.connected_changed = b.connected = true;
    b.message = q("connected: " + client->transport_description() + " (" + note + ")");
    link->client = std::move(client);
    return QString();
  });
}

void BoardWorkspace::disconnectBoard() {
  if (isBusy()) {
    // The run stops (STOP) at its next check; the port closes when it ends.
    link_->cancel = true;
    connect(this, &BoardWorkspace::operationFinished, this, &BoardWorkspace::disconnectBoard,
            Qt::SingleShotConnection);
    return;
  }
  link_->client.reset();
  panel_->setConnected(false, tr("disconnected from %1").arg(port_));
}

QString BoardWorkspace::lendPort() {
  if (isBusy() || !link_->client || !panel_->isConnected()) return QString();
  lent_ = port_settings_;
  link_->client.reset();
  panel_->setConnected(false,
                       tr("%1 lent to the cell comparison (it times each row there)").arg(port_));
  return lent_.port;
}

void BoardWorkspace::takeBackPort() {
  if (lent_.port.isEmpty()) return;
  const views::BoardPortSettings settings = lent_;
  lent_ = views::BoardPortSettings();
  connectBoard(settings);
}

void BoardWorkspace::uploadModel() {
  if (model_path_.isEmpty()) {
    panel_->showError(tr("open a model first (File > Open)"));
    return;
  }
  std::shared_ptr<Link> link = link_;
  const std::string path = model_path_.toStdString();
  start("uploading", [link, path, port = port_](BoardPoster& poster) -> QString {
    std::vector<uint8_t> model;
    std::string error;
    if (!tools::read_file_bytes(path, &model, &error)) return q(error);
    QElapsedTimer clock;
    clock.start();
    UploadReport report;
    const auto progress = [&](uint32_t done, uint32_t total) {
      BoardBatch& b = poster.batch();
      b.has_progress = true;
      b.done = done;
      b.total = total;
      const double seconds = std::max(1e-3, clock.nsecsElapsed() / 1e9);
      b.kb_per_s = (done - report.resumed_from) / 1024.0 / seconds;
      poster.maybeFlush();
    };
    if (!link->client->upload(UploadKind::kModel, model, progress, &report, &error))
      return on_port(port, "upload: " + error);
    const double rate = report.seconds > 0 ? report.payload_bytes / 1024.0 / report.seconds : 0;
    BoardBatch& b = poster.batch();
    b.has_progress = true;
    b.done = b.total = static_cast<qint64>(model.size());
    b.kb_per_s = rate;
    b.message =
        QString("uploaded %1 bytes in %2 s (%3 KB/s)%4")
            .arg(model.size())
            .arg(report.seconds, 0, 'f', 2)
            .arg(rate, 0, 'f', 1)
            .arg(report.resumed_from ? QString(", resumed at byte %1").arg(report.resumed_from)
                                     : QString());
    return QString();
  });
}

void BoardWorkspace::bench(int runs) {
  if (model_path_.isEmpty()) {
    panel_->showError(tr("open a model first (File > Open)"));
    return;
  }
  std::shared_ptr<Link> link = link_;
  const std::string path = model_path_.toStdString();
  const std::string label = QFileInfo(model_path_).fileName().toStdString();
  start("benchmarking", [link, path, label, runs, port = port_](BoardPoster& poster) -> QString {
    std::vector<uint8_t> model;
    std::string error;
    if (!tools::read_file_bytes(path, &model, &error)) return q(error);
    // The board resumes an upload it has complete at once: nothing is sent.
    if (!link->client->upload(UploadKind::kModel, model, nullptr, nullptr, &error))
      return on_port(port, "upload: " + error);
    app::BoardBenchResult result;
    if (!app::bench_on_board(*link->client, model, label, static_cast<uint32_t>(runs), &result,
                             &error)) {
      return on_port(port, "bench: " + error);
    }
    poster.batch().message = q(app::board_bench_line(result));
    return QString();
  });
}

void BoardWorkspace::train(const views::BoardStageSettings& stage) {
  if (model_path_.isEmpty() || dataset_path_.isEmpty()) {
    panel_->showError(tr("open a model and a dataset first"));
    return;
  }
  TrainingSettings settings;
  QString problem;
  if (!to_training_settings(stage, &settings, &problem)) {
    panel_->showError(problem);
    return;
  }
  panel_->clearCurves();
  std::shared_ptr<Link> link = link_;
  const std::string model_path = model_path_.toStdString();
  BoardRunOptions options;
  options.checkpoint_every = static_cast<uint32_t>(stage.checkpoint_every);
  // The desktop's training split (board.h BoardData: resampled, normalised).
  app::BoardData data;
  data.path = dataset_path_.toStdString();
  data.samples = static_cast<uint32_t>(stage.samples);
  data.seed = settings.seed;
  const QString port = port_;
  start("training", [=](BoardPoster& poster) -> QString {
    std::vector<uint8_t> model, blob;
    std::string error, note;
    if (!tools::read_file_bytes(model_path, &model, &error)) return q(error);
    if (!app::board_dataset_blob(data, model, &blob, &note, &error)) return q(error);
    // The host's run of the same stage, same seed: the reference curves.
    ReferenceRun host;
    if (!run_on_host(model, blob, settings, &host, &error)) return q("host run: " + error);
    for (const Metric& m : host.metrics) add_metric_points("host", m, &poster.batch());
    poster.batch().message = "host run done; training on the board";
    poster.flush();
    BoardRunCallbacks callbacks;
    const uint32_t clock_hz = link->client->capabilities().clock_hz;
    callbacks.on_metric = [&](const Metric& m) {
      add_metric_points("board", m, &poster.batch());
      poster.batch().message = QString("epoch %1, %2/%3 samples: loss %4, accuracy %5")
                                   .arg(m.epoch + 1)
                                   .arg(m.samples)
                                   .arg(m.epoch_samples)
                                   .arg(m.loss, 0, 'f', 5)
                                   .arg(m.accuracy, 0, 'f', 3);
      if (m.step_cycles) poster.batch().message += ", " + q(app::board_step_text(m, clock_hz));
      poster.maybeFlush();
    };
    callbacks.on_line = [&](const std::string& line) {
      poster.batch().message = q(line);
      poster.flush();
    };
    QElapsedTimer upload_clock;
    UploadKind upload_kind = UploadKind::kCheckpoint;
    uint32_t upload_base = 0;  // bytes the board had when this upload's clock started
    callbacks.on_upload = [&](UploadKind kind, uint32_t done, uint32_t total) {
      if (kind != upload_kind) {
        upload_kind = kind;
        upload_base = done;
        upload_clock.start();
      }
      BoardBatch& b = poster.batch();
      b.has_progress = true;
      b.done = done;
      b.total = total;
      b.kb_per_s =
          (done - upload_base) / 1024.0 / std::max(1e-3, upload_clock.nsecsElapsed() / 1e9);
      b.message = kind == UploadKind::kModel ? "uploading the model" : "uploading the dataset";
      poster.maybeFlush();
    };
    callbacks.cancelled = [&] { return link->cancel.load(); };
    BoardRunResult run;
    if (!run_board_training(*link->client, model, blob, settings, options, callbacks, &run, &error))
      return on_port(port, error);
    RunAgreement agreement;
    if (!compare_runs(run.metrics, run.weights, host, &agreement, &error)) return q(error);
    const std::string step =
        run.metrics.empty() ? std::string() : app::board_step_text(run.metrics.back(), clock_hz);
    poster.batch().message =
        QString("done: board vs host: %1%2%3")
            .arg(q(agreement.summary()))
            .arg(step.empty() ? QString() : "; " + q(step))
            .arg(run.resumes ? QString("; resumed after %1 reset(s)").arg(run.resumes) : QString());
    return QString();
  });
}

void BoardWorkspace::stop() { link_->cancel = true; }

void BoardWorkspace::downloadModel(const QString& path) {
  std::shared_ptr<Link> link = link_;
  start("downloading", [link, path, port = port_](BoardPoster& poster) -> QString {
    std::string error;
    size_t bytes = 0;
    if (!app::download_trained_model(*link->client, path.toStdString(), &bytes, &error))
      return on_port(port, "download: " + error);
    poster.batch().message =
        QString("saved the trained model to %1 (%2 bytes)").arg(path).arg(bytes);
    return QString();
  });
}

void BoardWorkspace::chooseAndFlash() {
  const QString folders = q(app::joined(app::firmware_folders()));
  QVector<views::FirmwareChoice> choices;
  for (const app::FirmwareImage& image : app::find_firmware_images()) {
    views::FirmwareChoice choice;
    choice.board = q(image.board);
    choice.cpu = q(image.cpu);
    choice.flash_kb = image.flash_kb;
    choice.ram_kb = image.ram_kb;
    for (const std::string& tool : image.tools) {
      choice.tools << q(tool);
      choice.packages << q(app::debian_package(tool));
      if (!QStandardPaths::findExecutable(q(tool)).isEmpty()) choice.installed << q(tool);
    }
    choices << choice;
  }
  if (choices.isEmpty()) {
    panel_->showError(tr("no firmware images in %1 (the package installs them; a build from "
                         "source makes them with -DGRUWB_FIRMWARE_IMAGES=ON)")
                          .arg(folders));
    return;
  }
  views::FirmwareFlashDialog dialog(choices, folders, panel_);
  if (dialog.exec() != QDialog::Accepted) return;
  flash(dialog.board(), dialog.tool(), dialog.port());
}

void BoardWorkspace::flash(const QString& board, const QString& tool, const QString& port) {
  // stm32flash talks to the bootloader over a serial port, which the link may hold.
  if (panel_->isConnected() && !port.isEmpty() && port == port_settings_.port) {
    panel_->showError(tr("%1 is connected: disconnect before stm32flash uses it").arg(port));
    return;
  }
  app::FlashRequest request;
  request.board = board.toStdString();
  request.tool = tool.toStdString();
  request.port = port.toStdString();
  start("flashing", [request](BoardPoster& poster) -> QString {
    std::string out, error;
    const int code = app::board_flash(
        request,
        [&poster](const std::string& line) {
          poster.batch().message = q(line);
          poster.maybeFlush();
        },
        &out, &error);
    if (code != app::kExitOk) return q(error);
    poster.batch().message = q(out).trimmed();
    return QString();
  });
}

}  // namespace gruwb::gui
