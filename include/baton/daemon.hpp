// The running daemon: one asio event loop that feeds the election machine
// with what happens (timers, store replies, app and signal events) and carries
// out the actions it returns, through the store, the app controller and the
// app socket. All decisions are the machine's; this file only wires.
#pragma once

#include <functional>
#include <memory>

#include "baton/config.hpp"

namespace baton {

class daemon {
 public:
  /// Reads the configuration again, from the same sources, for SIGHUP;
  /// throws config_error when it is invalid.
  using reload_source = std::function<config()>;

  /// `cfg` must be validated (parse_invocation does). Without `reload`,
  /// SIGHUP is logged and ignored.
  explicit daemon(config cfg, reload_source reload = {});
  ~daemon();
  daemon(const daemon&) = delete;
  daemon& operator=(const daemon&) = delete;

  /// Runs until shutdown. Returns the process exit code: 0 after a clean
  /// shutdown, 1 when start-up failed (e.g. the socket path is taken), or the
  /// supervised command's status when child.on_exit is `exit`.
  int run();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
