#include "tcp_transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace gruwb::plugins {

namespace {

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

class TcpTransport : public serial::Transport {
 public:
  TcpTransport(int fd, std::string address) : fd_(fd), address_(std::move(address)) {}
  ~TcpTransport() override { ::close(fd_); }

  bool write(const uint8_t* data, size_t size, int timeout_ms, std::string* error) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (size > 0) {
      pollfd p{fd_, POLLOUT, 0};
      const int ready = ::poll(&p, 1, remaining_ms(deadline));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) {
        *error = "tcp " + address_ + ": write timed out";
        return false;
      }
      const ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        *error = "tcp " + address_ + ": connection lost (" + std::strerror(errno) + ")";
        return false;
      }
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  long read(uint8_t* data, size_t capacity, int timeout_ms, std::string* error) override {
    pollfd p{fd_, POLLIN, 0};
    int ready;
    do {
      ready = ::poll(&p, 1, timeout_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) return 0;
    const ssize_t n = ready > 0 ? ::recv(fd_, data, capacity, 0) : -1;
    if (n > 0) return static_cast<long>(n);
    if (n < 0 && errno == EAGAIN) return 0;
    *error = "tcp " + address_ + ": " +
             (n == 0 ? std::string("connection closed by the other end")
                     : "connection lost (" + std::string(std::strerror(errno)) + ")");
    return -1;
  }

  std::string description() const override { return "tcp " + address_ + " (tcp_transport plugin)"; }

 private:
  int fd_;
  std::string address_;
};

}  // namespace

std::unique_ptr<serial::Transport> open_tcp(const std::string& address, int timeout_ms,
                                            std::string* error) {
  const size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? "" : address.substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    *error = "tcp://" + address + ": expected tcp://HOST:PORT";
    return nullptr;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    *error = "tcp://" + address + ": " + ::gai_strerror(rc);
    return nullptr;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int connected = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (connected != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int ready;
      do {
        ready = ::poll(&p, 1, remaining_ms(deadline));
      } while (ready < 0 && errno == EINTR);
      int so_error = ready > 0 ? 0 : ETIMEDOUT;
      socklen_t length = sizeof so_error;
      if (ready > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &length);
      connected = so_error == 0 ? 0 : -1;
      errno = so_error;
    }
    if (connected != 0) {
      why = errno == ETIMEDOUT ? "no answer within " + std::to_string(timeout_ms) + " ms"
                               : std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    *error = "tcp://" + address + ": cannot connect: " + why;
    return nullptr;
  }
  const int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  return std::make_unique<TcpTransport>(fd, address);
}

QJsonObject TcpTransportPlugin::saveState() const {
  return QJsonObject{{"connect_timeout_ms", connect_timeout_ms_}};
}

void TcpTransportPlugin::restoreState(const QJsonObject& state) {
  const int ms = state.value("connect_timeout_ms").toInt(3000);
  connect_timeout_ms_ = ms >= 100 && ms <= 60000 ? ms : 3000;
}

}  // namespace gruwb::plugins
