// Talks to systemd's service manager through the sd_notify protocol: start-up
// done (Type=notify), a status line for `systemctl status`, stopping, and
// watchdog keep-alives (WatchdogSec=). Outside systemd every call is a no-op,
// so the daemon calls them unconditionally.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace baton {

class systemd_notifier {
 public:
  /// Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID (through libsystemd)
  /// once, and leaves them in the environment; see environment_names() for
  /// keeping them from child processes.
  systemd_notifier();

  /// NOTIFY_SOCKET was set (non-empty): the service manager listens.
  bool enabled() const { return enabled_; }

  /// "READY=1": start-up is complete.
  void ready();
  /// "STATUS=<text>", with newlines (and other line breaks or NULs, which
  /// would end the message) replaced by spaces.
  void status(std::string_view text);
  /// "STOPPING=1": shutdown has begun.
  void stopping();
  /// "WATCHDOG=1": the daemon is live (the driver sends it only then; see
  /// baton/health.hpp).
  void watchdog();

  /// How often watchdog() should be called: half of WATCHDOG_USEC when
  /// systemd asks for a watchdog for this pid (WATCHDOG_PID unset or equal to
  /// getpid()) and notifications are enabled; nullopt otherwise.
  std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_interval_; }

  /// Why the most recent send failed; empty (false) after a successful or
  /// skipped one. Sending never throws and this class never logs.
  std::error_code last_error() const { return last_error_; }
  /// Why no notification can be sent though NOTIFY_SOCKET is set (libsystemd
  /// could not be loaded); empty when they can.
  const std::string& unusable() const { return unusable_; }

  /// Names of the variables systemd passed for the daemon itself, which hooks
  /// and the supervised child must not inherit (NOTIFY_SOCKET, WATCHDOG_USEC,
  /// WATCHDOG_PID).
  static const std::vector<std::string>& environment_names();

 private:
  void send(const char* message) noexcept;

  bool enabled_ = false;
  std::optional<std::chrono::microseconds> watchdog_interval_;
  std::error_code last_error_;
  std::string unusable_;
};

}  // namespace baton
