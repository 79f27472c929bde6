#pragma once
// Transport plugin: the board protocol over a TCP connection, for a board behind a
// serial-to-network bridge (ser2net, an ESP-Link) or with its own network stack:
// `gruwb board info --port tcp://192.168.1.20:2000`. The bytes are the serial protocol's
// frames unchanged (docs/serial-protocol.md); TCP_NODELAY, so small requests go out at once.

#include <QObject>

#include "gruwb/plugin.h"
#include "gruwb/transport_plugin.h"

namespace gruwb::plugins {

// Connects to "host:port" ("[::1]:port" for IPv6) within timeout_ms; nullptr + *error.
std::unique_ptr<serial::Transport> open_tcp(const std::string& address, int timeout_ms,
                                            std::string* error);

class TcpTransportPlugin : public QObject, public sdk::Plugin, public sdk::TransportPlugin {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID GRUWB_PLUGIN_IID FILE "tcp_transport.json")
  Q_INTERFACES(gruwb::sdk::Plugin gruwb::sdk::TransportPlugin)

 public:
  QString name() const override { return "tcp_transport"; }
  QString version() const override { return "1.0"; }
  QString description() const override {
    return "boards over TCP (tcp://host:port): network bridges, boards with Wi-Fi";
  }
  QJsonObject saveState() const override;
  void restoreState(const QJsonObject& state) override;

  QString scheme() const override { return "tcp"; }
  std::unique_ptr<serial::Transport> open(const std::string& address,
                                          std::string* error) const override {
    return open_tcp(address, connect_timeout_ms_, error);
  }

 private:
  int connect_timeout_ms_ = 3000;
};

}  // namespace gruwb::plugins
