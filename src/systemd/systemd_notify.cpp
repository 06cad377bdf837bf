// See baton/systemd_notify.hpp. libsystemd does the protocol (socket address
// forms, credentials, WATCHDOG_PID checks); this file only shapes messages and
// remembers failures for the caller to report.
#include "baton/systemd_notify.hpp"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "libsystemd_on_demand.hpp"

namespace baton {

systemd_notifier::systemd_notifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && *socket != '\0';
  // libsystemd is opened only here, under systemd (libsystemd_on_demand.hpp).
  // Without it nothing can be sent: every send reports why.
  if (enabled_) {
    if (auto missing = libsystemd_load_error()) unusable_ = "libsystemd: " + *missing;
  }
  std::uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is valid and WATCHDOG_PID (if set) is us;
  // 0 keeps the variables in place.
  if (enabled_ && unusable_.empty() && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    // Half the timeout leaves a whole half for a late tick to still arrive.
    watchdog_interval_ = std::chrono::microseconds(static_cast<std::int64_t>(usec / 2));
  }
}

void systemd_notifier::ready() { send("READY=1"); }

void systemd_notifier::stopping() { send("STOPPING=1"); }

void systemd_notifier::watchdog() { send("WATCHDOG=1"); }

void systemd_notifier::status(std::string_view text) {
  if (!enabled_) {
    last_error_ = {};
    return;
  }
  try {
    std::string message = "STATUS=";
    message.append(text);
    // A newline would start a new assignment; a NUL would cut the message.
    std::replace_if(
        message.begin(), message.end(),
        [](char c) { return c == '\n' || c == '\r' || c == '\0'; }, ' ');
    send(message.c_str());
  } catch (const std::bad_alloc&) {
    last_error_ = std::make_error_code(std::errc::not_enough_memory);
  }
}

void systemd_notifier::send(const char* message) noexcept {
  if (!enabled_) {
    last_error_ = {};
    return;
  }
  if (!unusable_.empty()) {
    last_error_ = std::make_error_code(std::errc::no_such_file_or_directory);
    return;
  }
  const int sent = sd_notify(0, message);
  if (sent < 0) {
    last_error_ = std::error_code(-sent, std::generic_category());
  } else if (sent == 0) {
    // NOTIFY_SOCKET vanished since construction (someone unset it).
    last_error_ = std::make_error_code(std::errc::not_connected);
  } else {
    last_error_ = {};
  }
}

const std::vector<std::string>& systemd_notifier::environment_names() {
  static const std::vector<std::string> names = {"NOTIFY_SOCKET", "WATCHDOG_USEC",
                                                 "WATCHDOG_PID"};
  return names;
}

}  // namespace baton
