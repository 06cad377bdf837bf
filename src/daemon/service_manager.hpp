// systemd's side of the daemon: READY once the loop runs, STATUS on every
// transition and announcement, STOPPING at exit, and WATCHDOG from a timer on
// the event loop while the daemon is live (baton/health.hpp; the store plays
// no part): if the loop stalls or a leader is wedged, the notifications stop
// and systemd restarts the daemon (its keeper then kills the app). What one
// watchdog round does is a pure function (watchdog_round), tested as a table.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "baton/health.hpp"
#include "baton/systemd_notify.hpp"

namespace baton {

/// One watchdog round's outcome.
struct watchdog_step {
  bool notify = false;  ///< send WATCHDOG=1
  /// A line to log ("" = none); an error when `withheld` begins, info when
  /// it ends.
  std::string line;
  bool line_is_error = false;
  bool withheld = false;  ///< this round found the daemon not live
  /// When to look again: the interval, or a tenth of it while withheld, so
  /// that after a stall one withheld ping (the ping's timer may run just
  /// before the deadline timer that puts things right) does not cost a restart.
  std::chrono::microseconds next{};
};

/// A round at the watchdog `interval`, with `liveness` as it is now and
/// `withheld_before` what the last round found.
watchdog_step watchdog_round(const health_verdict& liveness, bool withheld_before,
                             std::chrono::microseconds interval);

class service_manager {
 public:
  /// `liveness` assesses the daemon now; `status_line` is the STATUS= text.
  service_manager(boost::asio::io_context& io, std::function<health_verdict()> liveness,
                  std::function<std::string()> status_line);

  /// From inside the loop, once: READY=1, the first STATUS, and the
  /// watchdog if systemd asks for one.
  void ready();
  /// STATUS= for `systemctl status`; the line is built only when systemd
  /// listens, since this runs on every transition, renewals included.
  void tell_status();
  /// STOPPING=1, and no more watchdog rounds.
  void stopping();

 private:
  void pet_watchdog(std::chrono::microseconds interval);

  systemd_notifier notifier_;
  boost::asio::steady_timer watchdog_timer_;
  std::function<health_verdict()> liveness_;
  std::function<std::string()> status_line_;
  bool watchdog_withheld_ = false;  // the last round found the daemon not live
};

}  // namespace baton
