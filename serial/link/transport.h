#pragma once
// Byte pipes to a board (host side). Two honest implementations:
//  - libserialport: real serial ports (USB CDC, FTDI, ...): any baud, 8N1,
//    DTR on/off, listed by list_ports();
//  - termios: POSIX calls on the fd, for pseudo-terminals (/dev/pts/N of
//    `gruwb board-sim` or QEMU), which Debian's libserialport 0.1.1 cannot
//    open (sp_get_port_by_name needs /sys/class/tty/<name>, sp_open fails
//    with ENOTTY on TIOCMGET).
// Every call takes a timeout; none blocks longer.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gruwb::serial {

class Transport {
 public:
  virtual ~Transport() = default;
  // Writes all bytes within timeout_ms; false + *error on failure/timeout.
  virtual bool write(const uint8_t* data, size_t size, int timeout_ms, std::string* error) = 0;
  // Waits up to timeout_ms for bytes; returns how many were read (0 on
  // timeout) or -1 with *error when the port is gone.
  virtual long read(uint8_t* data, size_t capacity, int timeout_ms, std::string* error) = 0;
  // "libserialport /dev/ttyACM0 115200 8N1 DTR on", "termios /dev/pts/3 (pty)".
  virtual std::string description() const = 0;
};

enum class TransportKind { kAuto, kLibserialport, kTermios };

struct PortOptions {
  std::string path;
  int baud = 115200;
  bool dtr = true;  // asserting DTR resets Arduino-class boards: let the user choose
  TransportKind kind = TransportKind::kAuto;
};

// Opens `options.path`. A path "<scheme>://<address>" opens through the
// transport registered for that scheme (add_transport_scheme: plugins, e.g.
// tcp://127.0.0.1:5555). Otherwise kAuto picks termios for pseudo-terminals
// (after resolving symlinks) and libserialport for everything else; *why says
// which and why, for the user.
std::unique_ptr<Transport> open_transport(const PortOptions& options, std::string* why,
                                          std::string* error);

// A transport reached by a URL-like port name: "tcp" opens "tcp://host:port"
// with open(address = "host:port"). nullptr with a one-line *error.
struct TransportScheme {
  std::string scheme;
  std::string description;  // for --help and error messages: "TCP (tcp_transport plugin)"
  std::function<std::unique_ptr<Transport>(const std::string& address, std::string* error)> open;
};
// Registers a scheme at start-up (before any board opens); false when the name
// is taken or not [a-z0-9+.-]+.
bool add_transport_scheme(TransportScheme scheme);
const std::vector<TransportScheme>& transport_schemes();
std::unique_ptr<Transport> open_libserialport(const PortOptions& options, std::string* error);
std::unique_ptr<Transport> open_termios(const PortOptions& options, std::string* error);

bool is_pseudo_terminal(const std::string& path);

struct PortInfo {
  std::string path;
  std::string description;
  std::string transport;  // "usb", "native", "bluetooth"
  int usb_vid = -1, usb_pid = -1;
  std::string serial_number;
};
// The ports libserialport enumerates now (call again to refresh). Ptys never
// appear: give their path with --port.
bool list_ports(std::vector<PortInfo>* ports, std::string* error);

}  // namespace gruwb::serial
