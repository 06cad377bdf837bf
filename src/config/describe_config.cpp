// describe_config: the effective configuration as YAML, for check-config and
// the start-up log. Strings are written as JSON strings, which are valid YAML
// double-quoted scalars, so any value (spaces, colons, '#') loads back as it
// was. The password is never written; the URL is shown redacted.
#include <charconv>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/command_line.hpp"
#include "baton/duration.hpp"
#include "baton/redis_url.hpp"

namespace baton {
namespace {

std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string list(const std::vector<std::string>& argv) {
  return nlohmann::json(argv).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string number(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string octal(unsigned mode) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + (mode & 7u)));
    mode >>= 3;
  } while (mode != 0);
  return "\"0" + digits + "\"";
}

std::string shown_url(const std::string& url) {
  try {
    return parse_redis_url(url).redacted();
  } catch (const std::exception&) {
    // Unparseable: never echo it, it might hold a password.
    return "<invalid URL>";
  }
}

}  // namespace

std::string describe_config(const config& cfg) {
  std::ostringstream out;
  out << "election: " << quoted(cfg.election) << "\n"
      << "node_id: " << quoted(cfg.node_id) << "\n"
      << "redis:\n"
      << "  url: " << quoted(shown_url(cfg.redis.url)) << "\n"
      << (cfg.redis.password.empty() ? "  # password: none\n" : "  # password: \"***\"\n")
      << "  password_file: " << quoted(cfg.redis.password_file) << "\n"
      << "  connect_timeout: " << format_duration(cfg.redis.connect_timeout) << "\n"
      << "  command_timeout: " << format_duration(cfg.redis.command_timeout) << "\n"
      << "lease:\n"
      << "  ttl: " << format_duration(cfg.lease.ttl) << "\n"
      << "  renew_interval: " << format_duration(cfg.lease.renew_interval) << "\n"
      << "  renew_deadline: " << format_duration(cfg.lease.renew_deadline) << "\n"
      << "  retry_interval: " << format_duration(cfg.lease.retry_interval) << "\n"
      << "  drift_factor: " << number(cfg.lease.drift_factor) << "\n"
      << "  resign_cooldown: " << format_duration(cfg.lease.resign_cooldown) << "\n"
      << "hooks:\n"
      << "  on_start: " << list(cfg.hooks.on_start) << "\n"
      << "  on_stop: " << list(cfg.hooks.on_stop) << "\n"
      << "  timeout: " << format_duration(cfg.hooks.timeout) << "\n"
      << "child:\n"
      << "  command: " << list(cfg.child.command) << "\n"
      << "  stop_timeout: " << format_duration(cfg.child.stop_timeout) << "\n"
      << "  on_exit: " << (cfg.child.on_exit == child_exit_policy::exit ? "exit" : "compete") << "\n"
      << "socket:\n"
      << "  path: " << quoted(cfg.socket.path) << "\n"
      << "  mode: " << octal(cfg.socket.mode) << "\n"
      << "  require_ack: " << (cfg.socket.require_ack ? "true" : "false") << "\n"
      << "  allowed_uids: " << nlohmann::json(cfg.socket.allowed_uids).dump()
      << (cfg.socket.allowed_uids.empty() ? "  # the daemon's own uid and 0" : "") << "\n"
      << "http:\n"
      << "  listen: " << quoted(cfg.http.listen) << (cfg.http.listen.empty() ? "  # off" : "") << "\n"
      << "log:\n"
      << "  level: " << quoted(cfg.log.level) << "\n"
      << "  format: " << quoted(cfg.log.format) << "\n";
  return out.str();
}

}  // namespace baton
