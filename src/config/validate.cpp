// The rules a config must satisfy before the daemon starts. Each failure
// names the option, shows its value, says what is allowed and, when known,
// where the value came from.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "baton/config_load.hpp"
#include "baton/duration.hpp"
#include "baton/listen_address.hpp"
#include "baton/redis_url.hpp"

namespace baton {
namespace {

constexpr milliseconds min_ttl{100};
constexpr milliseconds drift_floor{2};
// sun_path holds 108 bytes including the terminating NUL on Linux.
constexpr std::size_t max_socket_path = 107;

bool id_chars(std::string_view s, bool allow_at) {
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || (allow_at && c == '@');
    if (!ok) return false;
  }
  return true;
}

std::string format_number(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string format_mode(unsigned mode) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + (mode & 7u)));
    mode >>= 3;
  } while (mode != 0);
  return "0" + digits;
}

std::string format_argv(const std::vector<std::string>& argv) {
  return nlohmann::json(argv).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void require_positive(const char* option, milliseconds value) {
  if (value.count() <= 0) throw config_error(option, format_duration(value), "must be greater than 0");
}

void check_argv(const char* option, const std::vector<std::string>& argv) {
  if (!argv.empty() && argv.front().empty()) {
    throw config_error(option, format_argv(argv), "the first element must be the program to run");
  }
}

void check_identity(const config& cfg) {
  if (cfg.election.empty()) {
    throw config_error::with_message(
        "election", "election is required: set election in the config file, BATON_ELECTION or --election");
  }
  if (cfg.election.size() > 64 || !id_chars(cfg.election, false)) {
    throw config_error("election", cfg.election, "must be 1 to 64 characters from A-Z a-z 0-9 . _ -");
  }
  if (cfg.node_id.empty() || cfg.node_id.size() > 128 || !id_chars(cfg.node_id, true)) {
    throw config_error("node_id", cfg.node_id, "must be 1 to 128 characters from A-Z a-z 0-9 . _ @ -");
  }
}

void check_redis(const config& cfg) {
  parse_redis_url(cfg.redis.url);
  require_positive("redis.connect_timeout", cfg.redis.connect_timeout);
  require_positive("redis.command_timeout", cfg.redis.command_timeout);
}

bool set_by_user(const option_origins& origins, const char* option) {
  const auto it = origins.find(option);
  return it != origins.end() && it->second.rfind("from ", 0) == 0;
}

void check_lease(const lease_config& lease, const option_origins& origins) {
  if (lease.ttl < min_ttl) {
    throw config_error("lease.ttl", format_duration(lease.ttl),
                       "must be at least " + format_duration(min_ttl));
  }
  if (!(lease.drift_factor >= 0.0 && lease.drift_factor < 0.5)) {
    throw config_error("lease.drift_factor", format_number(lease.drift_factor),
                       "must be at least 0 and less than 0.5");
  }
  require_positive("lease.renew_interval", lease.renew_interval);
  require_positive("lease.retry_interval", lease.retry_interval);
  const milliseconds usable = lease.ttl - lease_drift(lease);
  // When only renew_interval was set, the derived deadline is not what the
  // user should change: blame the option they wrote.
  if (lease.renew_deadline <= lease.renew_interval && lease.renew_deadline < usable &&
      set_by_user(origins, "lease.renew_interval") && !set_by_user(origins, "lease.renew_deadline")) {
    throw config_error("lease.renew_interval", format_duration(lease.renew_interval),
                       "must be less than lease.renew_deadline (" +
                           format_duration(lease.renew_deadline) + ")");
  }
  if (lease.renew_deadline <= lease.renew_interval || lease.renew_deadline >= usable) {
    throw config_error("lease.renew_deadline", format_duration(lease.renew_deadline),
                       "must be greater than lease.renew_interval (" +
                           format_duration(lease.renew_interval) +
                           ") and less than lease.ttl minus drift (" + format_duration(usable) + ")");
  }
}

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_utf8(std::string_view text) {
  static constexpr std::uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
  for (std::size_t i = 0; i < text.size();) {
    auto lead = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    std::uint32_t code = lead;
    if (lead >= 0x80) {
      if ((lead & 0xE0) == 0xC0) {
        extra = 1;
        code = lead & 0x1Fu;
      } else if ((lead & 0xF0) == 0xE0) {
        extra = 2;
        code = lead & 0x0Fu;
      } else if ((lead & 0xF8) == 0xF0) {
        extra = 3;
        code = lead & 0x07u;
      } else {
        return false;
      }
    }
    if (text.size() - i <= extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (code < smallest[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// Options are written back by describe_config as YAML, which holds only
// UTF-8: any other byte would come back as U+FFFD, a different value.
void require_utf8(const char* option, std::string_view value) {
  if (!is_utf8(value)) throw config_error(option, std::string(value), "must be valid UTF-8");
}

void check_text(const config& cfg) {
  require_utf8("redis.url", cfg.redis.url);
  require_utf8("redis.password_file", cfg.redis.password_file);
  require_utf8("socket.path", cfg.socket.path);
  for (const auto& word : cfg.hooks.on_start) require_utf8("hooks.on_start", word);
  for (const auto& word : cfg.hooks.on_stop) require_utf8("hooks.on_stop", word);
  for (const auto& word : cfg.child.command) require_utf8("child.command", word);
}

void check_rest(const config& cfg) {
  check_text(cfg);
  check_argv("hooks.on_start", cfg.hooks.on_start);
  check_argv("hooks.on_stop", cfg.hooks.on_stop);
  require_positive("hooks.timeout", cfg.hooks.timeout);
  check_argv("child.command", cfg.child.command);
  require_positive("child.stop_timeout", cfg.child.stop_timeout);
  if (cfg.child.on_exit != child_exit_policy::compete && cfg.child.on_exit != child_exit_policy::exit) {
    throw config_error("child.on_exit", std::to_string(static_cast<int>(cfg.child.on_exit)),
                       "must be compete or exit");
  }
  if (cfg.socket.path.size() > max_socket_path) {
    throw config_error("socket.path", cfg.socket.path,
                       "must be at most " + std::to_string(max_socket_path) +
                           " bytes (the Unix socket path limit)");
  }
  if (cfg.socket.mode > 0777) {
    throw config_error("socket.mode", format_mode(cfg.socket.mode), "must be at most 0777 (octal)");
  }
  // Without a socket no one could ever acknowledge: every stop would wait
  // for its kill deadline.
  if (cfg.socket.require_ack && cfg.socket.path.empty()) {
    throw config_error("socket.require_ack", "true",
                       "needs socket.path: acknowledgements come over the socket");
  }
  for (unsigned uid : cfg.socket.allowed_uids) {
    if (uid == static_cast<unsigned>(-1)) {
      throw config_error("socket.allowed_uids", std::to_string(uid),
                         "uids go from 0 to 4294967294 (4294967295 means no uid)");
    }
  }
  if (!cfg.http.listen.empty()) {
    std::string why;
    if (!parse_listen_address(cfg.http.listen, why)) {
      throw config_error("http.listen", cfg.http.listen, why);
    }
  }
  if (cfg.log.format != "text" && cfg.log.format != "json") {
    throw config_error("log.format", cfg.log.format, "must be text or json");
  }
  static constexpr std::string_view levels[] = {"trace", "debug", "info",    "warn",
                                                "error", "critical", "off"};
  bool level_ok = false;
  for (auto level : levels) level_ok = level_ok || cfg.log.level == level;
  if (!level_ok) {
    throw config_error("log.level", cfg.log.level,
                       "must be one of trace, debug, info, warn, error, critical, off");
  }
}

}  // namespace

milliseconds lease_drift(const lease_config& lease) {
  // The epsilon keeps 10000 * 0.01 at 100ms despite binary rounding.
  const double scaled = static_cast<double>(lease.ttl.count()) * lease.drift_factor;
  if (!(scaled > 0.0) || !std::isfinite(scaled)) return drift_floor;
  const auto rounded_up = static_cast<milliseconds::rep>(std::ceil(scaled - 1e-6));
  return milliseconds{rounded_up} + drift_floor;
}

void validate_config(const config& cfg, const option_origins& origins) {
  try {
    check_identity(cfg);
    check_redis(cfg);
    check_lease(cfg.lease, origins);
    check_rest(cfg);
  } catch (const config_error& e) {
    const auto it = origins.find(e.option());
    if (it == origins.end()) throw;
    throw config_error::with_message(e.option(), std::string(e.what()) + " (" + it->second + ")");
  }
}

}  // namespace baton
