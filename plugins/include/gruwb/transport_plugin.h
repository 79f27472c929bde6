#pragma once
// Board transports from a plugin: a scheme ("tcp") and an opener returning the byte pipe
// the board client talks through (serial/link/transport.h). A port given as
// "<scheme>://<address>" (gruwb board --port tcp://127.0.0.1:5555, the GUI's board panel)
// opens through the plugin that registered the scheme.

#include <QString>
#include <memory>
#include <string>

#include "gruwb/plugin.h"
#include "serial/link/transport.h"

namespace gruwb::sdk {

class TransportPlugin {
 public:
  virtual ~TransportPlugin() = default;
  virtual QString scheme() const = 0;  // "tcp": lower case letters, digits, '+', '-', '.'
  // Opens `address` (the text after "<scheme>://"); nullptr with a one-line *error.
  virtual std::unique_ptr<serial::Transport> open(const std::string& address,
                                                  std::string* error) const = 0;
};

}  // namespace gruwb::sdk

Q_DECLARE_INTERFACE(gruwb::sdk::TransportPlugin,
                    "org.gruwb.TransportPlugin/" GRUWB_PLUGIN_STRINGIFY(GRUWB_PLUGIN_SDK_VERSION))
