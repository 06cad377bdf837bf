// The driver: the one place that turns the election machine's actions into
// I/O (store calls, timers, the app, the socket) and I/O completions into
// events for the machine. It decides nothing itself: the machine decides, the
// stop gate decides when the lease may be released, health and the status
// report are pure functions of them.
//
// It works on any store behind the port (baton/lease_store.hpp) and on an
// io_context it does not own, so tests drive it with a scripted store and no
// server (tests/unit/daemon/driver_test.cpp).
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "baton/config.hpp"
#include "baton/election_machine.hpp"
#include "baton/lease_store.hpp"

namespace baton {

class driver {
 public:
  /// Reads the configuration again for SIGHUP; throws config_error.
  using reload_source = std::function<config()>;

  /// `cfg` must be validated; `store` must outlive the driver and be made
  /// for cfg's election, node id and ttl. Nothing happens before start().
  driver(boost::asio::io_context& io, config cfg, lease_store& store, reload_source reload = {});
  ~driver();
  driver(const driver&) = delete;
  driver& operator=(const driver&) = delete;

  /// Opens the socket and HTTP server, installs the signal handlers (unless
  /// `handle_signals` is false, as in tests) and starts the election. False,
  /// after logging why, when a listener cannot be opened.
  bool start(bool handle_signals = true);
  /// What SIGTERM does: stop the app, release the lease, exit.
  void shutdown(const std::string& why);
  /// Start-up's one-off work beside the election (the store check) is
  /// over: from now on a standby that knows who leads gives back the pages
  /// start-up used (src/daemon/startup_pages.hpp), a second after this call
  /// and a second after every new leader or term.
  void startup_work_done();
  /// The exit code once the machine asked to exit.
  std::optional<int> exit_code() const;

  /// The status object that `baton status`, the socket and /status show.
  nlohmann::json status() const;
  const election_machine& machine() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
