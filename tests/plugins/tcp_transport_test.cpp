// The tcp_transport example plugin end to end: `gruwb board-sim` serves a simulated board on a
// pty; this test bridges that pty to a TCP port (what ser2net does for a real board), and
// `gruwb board info|bench --port tcp://127.0.0.1:PORT` talks to the board through the plugin.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QProcess>
#include <QRegularExpression>
#include <atomic>
#include <thread>

#include "serial/link/transport.h"

namespace {

// Forwards bytes between one TCP client on 127.0.0.1:port() and a pty, until stopped.
class TcpToPtyBridge {
 public:
  explicit TcpToPtyBridge(const std::string& pty) {
    gruwb::serial::PortOptions options;
    options.path = pty;
    std::string error;
    pty_ = gruwb::serial::open_termios(options, &error);
    EXPECT_TRUE(pty_) << error;
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(::listen(listener_, 4), 0);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TcpToPtyBridge() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  int port() const { return port_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client >= 0) forward(client);  // one client at a time, like a serial line
    }
  }
  void forward(int client) {
    uint8_t buffer[4096];
    std::string error;
    while (!stop_) {
      const long from_board = pty_ ? pty_->read(buffer, sizeof buffer, 5, &error) : -1;
      if (from_board < 0) break;
      if (from_board > 0 &&
          ::send(client, buffer, static_cast<size_t>(from_board), MSG_NOSIGNAL) != from_board) {
        break;
      }
      pollfd p{client, POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) {
        const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
        if (n <= 0 || !pty_->write(buffer, static_cast<size_t>(n), 1000, &error)) break;
      }
    }
    ::close(client);
  }

  std::unique_ptr<gruwb::serial::Transport> pty_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct CliRun {
  int exit_code = -1;
  QString out;
};

CliRun gruwb(const QStringList& args) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start(QStringLiteral(GRUWB_CLI), args);
  CliRun run;
  if (!process.waitForFinished(120000)) {
    ADD_FAILURE() << "gruwb did not finish: " << args.join(' ').toStdString();
    process.kill();
    process.waitForFinished();
    return run;
  }
  run.exit_code = process.exitCode();
  run.out = QString::fromUtf8(process.readAll());
  return run;
}

TEST(TcpTransportPlugin, TalksToTheSimulatedBoardOverTcp) {
  QProcess sim;
  sim.start(QStringLiteral(GRUWB_CLI), {"board-sim"});
  QString announced;
  const QRegularExpression serving("serving on (/dev/pts/[0-9]+)");
  while (!serving.match(announced).hasMatch() && sim.waitForReadyRead(10000)) {
    announced += QString::fromUtf8(sim.readAllStandardOutput());
  }
  const QString pty = serving.match(announced).captured(1);
  ASSERT_FALSE(pty.isEmpty()) << announced.toStdString();
  {
    TcpToPtyBridge bridge(pty.toStdString());
    const QString port = "tcp://127.0.0.1:" + QString::number(bridge.port());
    const CliRun info = gruwb({"board", "info", "--port", port});
    EXPECT_EQ(info.exit_code, 0) << info.out.toStdString();
    EXPECT_TRUE(info.out.contains("using tcp transport (tcp_transport plugin)"))
        << info.out.toStdString();
    EXPECT_TRUE(info.out.contains("custom GRUWB_GRU")) << info.out.toStdString();
    // A whole exchange: upload, timed runs on the board, the output checked against the host.
    const CliRun bench =
        gruwb({"board", "bench", GRUWB_SOURCE_DIR "/resources/samples/gesture_gru_fused.tflite",
               "--port", port, "--runs", "5"});
    EXPECT_EQ(bench.exit_code, 0) << bench.out.toStdString();
  }
  sim.terminate();
  sim.waitForFinished(5000);

  // Nothing listening: one line naming the address.
  const CliRun refused = gruwb({"board", "info", "--port", "tcp://127.0.0.1:1"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out.toStdString();
  EXPECT_TRUE(refused.out.contains("tcp://127.0.0.1:1: cannot connect: Connection refused"))
      << refused.out.toStdString();
  const CliRun malformed = gruwb({"board", "info", "--port", "tcp://nohostport"});
  EXPECT_TRUE(malformed.out.contains("tcp://nohostport: expected tcp://HOST:PORT"))
      << malformed.out.toStdString();
}

}  // namespace
