#include "serial/link/transport.h"

#include <fcntl.h>
#include <libserialport.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace gruwb::serial {
namespace {

// EIO (a pty whose board-sim or QEMU ended) and ENXIO/ENODEV (a USB serial
// adapter unplugged) all mean the other side went away; say so the same way
// whether a read or a write noticed first.
std::string failure_text(int err) {
  return err == EIO || err == ENXIO || err == ENODEV ? "port closed" : strerror(err);
}

std::string sp_error_text(sp_return code) {
  if (code == SP_ERR_FAIL) {
    char* message = sp_last_error_message();
    std::string text = message ? message : "failed";
    sp_free_error_message(message);
    return text;
  }
  switch (code) {
    case SP_ERR_ARG: return "invalid argument (no such port?)";
    case SP_ERR_MEM: return "out of memory";
    case SP_ERR_SUPP: return "not supported";
    default: return "error " + std::to_string(static_cast<int>(code));
  }
}

class LibserialportTransport : public Transport {
 public:
  ~LibserialportTransport() override {
    if (port_) {
      sp_close(port_);
      sp_free_port(port_);
    }
  }
  bool open(const PortOptions& o, std::string* error) {
    options_ = o;
    sp_return r = sp_get_port_by_name(o.path.c_str(), &port_);
    if (r != SP_OK) {
      port_ = nullptr;
      *error =
          "libserialport: cannot find port " + o.path + ": " + sp_error_text(r) +
          (is_pseudo_terminal(o.path) ? " (a pseudo-terminal: use the termios transport)" : "");
      return false;
    }
    r = sp_open(port_, SP_MODE_READ_WRITE);
    if (r != SP_OK) {
      *error = "libserialport: cannot open " + o.path + ": " + sp_error_text(r);
      sp_free_port(port_);
      port_ = nullptr;
      return false;
    }
    // 8N1, no flow control, the baud the user asked for, DTR as chosen.
    const struct {
      sp_return result;
      const char* what;
    } steps[] = {
        {sp_set_baudrate(port_, o.baud), "baud rate"},
        {sp_set_bits(port_, 8), "data bits"},
        {sp_set_parity(port_, SP_PARITY_NONE), "parity"},
        {sp_set_stopbits(port_, 1), "stop bits"},
        {sp_set_flowcontrol(port_, SP_FLOWCONTROL_NONE), "flow control"},
        {sp_set_dtr(port_, o.dtr ? SP_DTR_ON : SP_DTR_OFF), "DTR"},
    };
    for (const auto& step : steps) {
      if (step.result != SP_OK) {
        *error = "libserialport: " + o.path + ": cannot set " + step.what + ": " +
                 sp_error_text(step.result);
        return false;
      }
    }
    return true;
  }
  bool write(const uint8_t* data, size_t size, int timeout_ms, std::string* error) override {
    const sp_return r = sp_blocking_write(port_, data, size, static_cast<unsigned>(timeout_ms));
    if (r < 0) {
      *error = "write to " + options_.path + ": " + sp_error_text(r);
      return false;
    }
    if (static_cast<size_t>(r) != size) {
      *error =
          "write to " + options_.path + ": timed out after " + std::to_string(timeout_ms) + " ms";
      return false;
    }
    return true;
  }
  long read(uint8_t* data, size_t capacity, int timeout_ms, std::string* error) override {
    const sp_return r =
        sp_blocking_read_next(port_, data, capacity, static_cast<unsigned>(timeout_ms));
    if (r < 0) {
      *error = "read from " + options_.path + ": " + sp_error_text(r);
      return -1;
    }
    return r;
  }
  std::string description() const override {
    return "libserialport " + options_.path + " " + std::to_string(options_.baud) + " 8N1 DTR " +
           (options_.dtr ? "on" : "off");
  }

 private:
  PortOptions options_;
  sp_port* port_ = nullptr;
};

speed_t baud_constant(int baud) {
  switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 2000000: return B2000000;
    default: return 0;
  }
}

class TermiosTransport : public Transport {
 public:
  ~TermiosTransport() override {
    if (fd_ >= 0) close(fd_);
  }
  bool open(const PortOptions& o, std::string* error) {
    options_ = o;
    fd_ = ::open(o.path.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (fd_ < 0) {
      *error = "cannot open " + o.path + ": " + strerror(errno);
      return false;
    }
    termios tio{};
    if (tcgetattr(fd_, &tio) != 0) {
      *error = o.path + " is not a terminal: " + strerror(errno);
      return false;
    }
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    tio.c_cflag &= ~static_cast<tcflag_t>(CSTOPB | PARENB | CRTSCTS);
    const speed_t speed = baud_constant(o.baud);
    if (speed == 0 && !is_pseudo_terminal(o.path)) {
      *error = "termios transport: baud " + std::to_string(o.baud) +
               " is not a standard rate (libserialport takes any rate)";
      return false;
    }
    if (speed != 0) {
      cfsetispeed(&tio, speed);
      cfsetospeed(&tio, speed);
    }
    if (tcsetattr(fd_, TCSANOW, &tio) != 0) {
      *error = "cannot configure " + o.path + ": " + strerror(errno);
      return false;
    }
    // A pty has no modem lines (ENOTTY); on a real tty set DTR as asked.
    int dtr = TIOCM_DTR;
    if (!is_pseudo_terminal(o.path)) ioctl(fd_, o.dtr ? TIOCMBIS : TIOCMBIC, &dtr);
    return true;
  }
  bool write(const uint8_t* data, size_t size, int timeout_ms, std::string* error) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    size_t sent = 0;
    while (sent < size) {
      const ssize_t n = ::write(fd_, data + sent, size - sent);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        *error = "write to " + options_.path + ": " + failure_text(errno);
        return false;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        *error =
            "write to " + options_.path + ": timed out after " + std::to_string(timeout_ms) + " ms";
        return false;
      }
      pollfd p{fd_, POLLOUT, 0};
      poll(&p, 1, static_cast<int>(left.count()));
    }
    return true;
  }
  long read(uint8_t* data, size_t capacity, int timeout_ms, std::string* error) override {
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) return 0;
      *error = "poll " + options_.path + ": " + strerror(errno);
      return -1;
    }
    if (ready == 0) return 0;
    const ssize_t n = ::read(fd_, data, capacity);
    if (n > 0) return n;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    // EIO / 0 bytes on POLLHUP: the other side (board-sim, QEMU) went away.
    *error = "read from " + options_.path + ": " +
             (n == 0 ? std::string("port closed") : failure_text(errno));
    return -1;
  }
  std::string description() const override {
    return "termios " + options_.path +
           (is_pseudo_terminal(options_.path) ? " (pseudo-terminal)" : "");
  }

 private:
  PortOptions options_;
  int fd_ = -1;
};

std::string resolved(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) ? std::string(buffer) : path;
}

}  // namespace

bool is_pseudo_terminal(const std::string& path) {
  const std::string real = resolved(path);
  return real.rfind("/dev/pts/", 0) == 0 || real == "/dev/ptmx";
}

std::unique_ptr<Transport> open_libserialport(const PortOptions& options, std::string* error) {
  auto t = std::make_unique<LibserialportTransport>();
  if (!t->open(options, error)) return nullptr;
  return t;
}

std::unique_ptr<Transport> open_termios(const PortOptions& options, std::string* error) {
  auto t = std::make_unique<TermiosTransport>();
  PortOptions o = options;
  o.path = resolved(options.path);
  if (!t->open(o, error)) return nullptr;
  return t;
}

namespace {
std::vector<TransportScheme>& schemes() {
  static std::vector<TransportScheme> list;
  return list;
}
}  // namespace

bool add_transport_scheme(TransportScheme scheme) {
  if (scheme.scheme.empty() || !scheme.open) return false;
  for (char c : scheme.scheme) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    if (!ok) return false;
  }
  for (const TransportScheme& s : schemes()) {
    if (s.scheme == scheme.scheme) return false;
  }
  schemes().push_back(std::move(scheme));
  return true;
}

const std::vector<TransportScheme>& transport_schemes() { return schemes(); }

std::unique_ptr<Transport> open_transport(const PortOptions& options, std::string* why,
                                          std::string* error) {
  const size_t separator = options.path.find("://");
  if (separator != std::string::npos) {
    const std::string scheme = options.path.substr(0, separator);
    for (const TransportScheme& s : schemes()) {
      if (s.scheme != scheme) continue;
      *why = "using " + s.description;
      return s.open(options.path.substr(separator + 3), error);
    }
    std::string known;
    for (const TransportScheme& s : schemes()) known += (known.empty() ? "" : ", ") + s.scheme;
    *error = options.path + ": no transport for '" + scheme + "://' (" +
             (known.empty() ? std::string("no transport plugins loaded; see gruwb plugins")
                            : "transports: " + known) +
             ")";
    return nullptr;
  }
  TransportKind kind = options.kind;
  if (kind == TransportKind::kAuto) {
    if (is_pseudo_terminal(options.path)) {
      kind = TransportKind::kTermios;
      *why = options.path +
             " is a pseudo-terminal, which libserialport 0.1.1 cannot open: using termios";
    } else {
      kind = TransportKind::kLibserialport;
      *why = "using libserialport";
    }
  } else {
    *why =
        kind == TransportKind::kTermios ? "termios transport (chosen)" : "libserialport (chosen)";
  }
  return kind == TransportKind::kTermios ? open_termios(options, error)
                                         : open_libserialport(options, error);
}

bool list_ports(std::vector<PortInfo>* ports, std::string* error) {
  ports->clear();
  sp_port** list = nullptr;
  const sp_return r = sp_list_ports(&list);
  if (r != SP_OK) {
    *error = "libserialport: cannot list ports: " + sp_error_text(r);
    return false;
  }
  for (sp_port** p = list; *p; ++p) {
    PortInfo info;
    info.path = sp_get_port_name(*p);
    const char* description = sp_get_port_description(*p);
    info.description = description ? description : "";
    switch (sp_get_port_transport(*p)) {
      case SP_TRANSPORT_USB: {
        info.transport = "usb";
        sp_get_port_usb_vid_pid(*p, &info.usb_vid, &info.usb_pid);
        const char* serial = sp_get_port_usb_serial(*p);
        info.serial_number = serial ? serial : "";
        break;
      }
      case SP_TRANSPORT_BLUETOOTH: info.transport = "bluetooth"; break;
      default: info.transport = "native"; break;
    }
    ports->push_back(info);
  }
  sp_free_port_list(list);
  return true;
}

}  // namespace gruwb::serial
