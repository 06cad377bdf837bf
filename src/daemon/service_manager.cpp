// systemd notifications and the watchdog (see service_manager.hpp).
#include "service_manager.hpp"

#include <spdlog/spdlog.h>

namespace baton {

watchdog_step watchdog_round(const health_verdict& liveness, bool withheld_before,
                             std::chrono::microseconds interval) {
  watchdog_step s;
  s.notify = liveness.healthy;
  s.withheld = !liveness.healthy;
  s.next = liveness.healthy ? interval : interval / 10;
  if (liveness.healthy && withheld_before) {
    s.line = "systemd watchdog: live again, notifying";
  } else if (!liveness.healthy && !withheld_before) {
    s.line = "systemd watchdog: not notifying while the daemon is not live, so that systemd "
             "restarts it: " +
             liveness.reason;
    s.line_is_error = true;
  }
  return s;
}

service_manager::service_manager(boost::asio::io_context& io,
                                 std::function<health_verdict()> liveness,
                                 std::function<std::string()> status_line)
    : watchdog_timer_(io), liveness_(std::move(liveness)), status_line_(std::move(status_line)) {}

void service_manager::ready() {
  notifier_.ready();
  if (!notifier_.unusable().empty()) {
    spdlog::error("systemd: NOTIFY_SOCKET is set but no notification can be sent: {}",
                  notifier_.unusable());
  }
  tell_status();
  if (auto interval = notifier_.watchdog_interval()) {
    spdlog::info("systemd watchdog: notifying every {}ms",
                 std::chrono::duration_cast<std::chrono::milliseconds>(*interval).count());
    pet_watchdog(*interval);
  }
}

void service_manager::tell_status() {
  if (notifier_.enabled()) notifier_.status(status_line_());
}

void service_manager::stopping() {
  notifier_.stopping();
  watchdog_timer_.cancel();
}

void service_manager::pet_watchdog(std::chrono::microseconds interval) {
  const auto step = watchdog_round(liveness_(), watchdog_withheld_, interval);
  if (step.notify) {
    if (!step.line.empty()) spdlog::info("{}", step.line);
    notifier_.watchdog();
  } else if (!step.line.empty()) {
    spdlog::error("{}", step.line);
  }
  watchdog_withheld_ = step.withheld;
  watchdog_timer_.expires_after(step.next);
  watchdog_timer_.async_wait([this, interval](const boost::system::error_code& ec) {
    if (!ec) pet_watchdog(interval);
  });
}

}  // namespace baton
