// SIGHUP reloads (see hangup_reload.hpp).
#include "hangup_reload.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <exception>

#include "baton/config_reload.hpp"

namespace baton {

reload_verdict judge_reload(const config& running, const std::function<config()>& read) {
  reload_verdict v;
  if (!read) {
    v.lines.push_back({reload_level::warn,
                       "received SIGHUP: this daemon has no configuration source to reload"});
    return v;
  }
  config fresh;
  try {
    fresh = read();
  } catch (const std::exception& e) {
    v.lines.push_back({reload_level::error,
                       std::string("received SIGHUP: the configuration is invalid, nothing "
                                   "changed: ") +
                           e.what()});
    return v;
  }
  auto plan = plan_reload(running, fresh);
  if (!plan.refused.empty()) {
    std::string refused;
    for (const auto& line : plan.refused) refused += (refused.empty() ? "" : "; ") + line;
    v.lines.push_back({reload_level::error,
                       "received SIGHUP: reload refused, nothing changed: these options cannot "
                       "change while baton runs (restart it to apply them): " +
                           refused});
    return v;
  }
  if (plan.changes.empty()) {
    v.lines.push_back(
        {reload_level::info, "received SIGHUP: configuration reloaded, nothing changed"});
    return v;
  }
  for (const auto& line : plan.changes) {
    v.lines.push_back({reload_level::info, "received SIGHUP: " + line});
  }
  v.next = std::move(plan.next);
  return v;
}

hangup_reload::hangup_reload(boost::asio::io_context& io, std::function<config()> read,
                             std::function<const config&()> current,
                             std::function<void(const config&)> apply)
    : hangups_(io, SIGHUP),
      read_(std::move(read)),
      current_(std::move(current)),
      apply_(std::move(apply)) {}

void hangup_reload::listen() {
  hangups_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    reload();
    listen();
  });
}

void hangup_reload::reload() {
  auto verdict = judge_reload(current_(), read_);
  // The changes are logged once they are in force.
  if (verdict.next) apply_(*verdict.next);
  for (const auto& line : verdict.lines) {
    switch (line.level) {
      case reload_level::info: spdlog::info("{}", line.text); break;
      case reload_level::warn: spdlog::warn("{}", line.text); break;
      case reload_level::error: spdlog::error("{}", line.text); break;
    }
  }
}

}  // namespace baton
