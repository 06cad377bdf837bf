// The rules a config must satisfy before the daemon starts. Each failure
// names the option, shows its value, says what is allowed and, when known,
// where the value came from. Rules name an option by the field they check
// (option_name), so a message always uses the option table's name. The
// rules of a store kind's options are the kind's own (store_kind.hpp): this
// file only asks the registry for them.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "baton/candidate_card.hpp"
#include "baton/config_load.hpp"
#include "baton/duration.hpp"
#include "baton/listen_address.hpp"
#include "baton/peer_wire.hpp"
#include "baton/secret_file.hpp"
#include "baton/store_registry.hpp"
#include "config_schema/option_rules.hpp"
#include "option_table.hpp"

namespace baton {
namespace {

// The generic rules name options among the whole table.
using rules = option_rules_of<option_table>;

constexpr milliseconds min_ttl{100};
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

void check_argv(const config& cfg, const std::vector<std::string>& argv) {
  if (!argv.empty() && argv.front().empty()) {
    throw config_error(option_name(cfg, argv), format_argv(argv),
                       "the first element must be the program to run");
  }
}

void check_identity(const config& cfg) {
  if (cfg.election.empty()) {
    const option_spec& election = option_at(cfg, cfg.election);
    const std::string name(election.key);
    throw config_error::with_message(
        name, name + " is required: set " + name + " in the config file, " +
                  std::string(election.env) + " or " + std::string(election.flag_name()));
  }
  if (cfg.election.size() > 64 || !id_chars(cfg.election, false)) {
    throw config_error(option_name(cfg, cfg.election), cfg.election,
                       "must be 1 to 64 characters from A-Z a-z 0-9 . _ -");
  }
  if (cfg.node_id.empty() || cfg.node_id.size() > 128 || !id_chars(cfg.node_id, true)) {
    throw config_error(option_name(cfg, cfg.node_id), cfg.node_id,
                       "must be 1 to 128 characters from A-Z a-z 0-9 . _ @ -");
  }
  const auto& priority = std::get<integer_field>(option_at(cfg, cfg.priority).field);
  if (cfg.priority < priority.min || cfg.priority > priority.max) {
    throw config_error(option_name(cfg, cfg.priority), std::to_string(cfg.priority),
                       priority.allowed());
  }
  if (!cfg.advertise.empty()) {
    if (const auto why = advertise_problem(cfg.advertise); !why.empty()) {
      throw config_error(option_name(cfg, cfg.advertise), cfg.advertise,
                         "HOST:PORT or a URL of at most 256 printable ASCII bytes without "
                         "spaces or ';' (it " + why + ")");
    }
  }
}

bool set_by_user(const option_origins& origins, const std::string& option) {
  const auto it = origins.find(option);
  return it != origins.end() && it->second.rfind("from ", 0) == 0;
}

void check_lease(const config& cfg, const option_origins& origins) {
  const lease_config& lease = cfg.lease;
  const auto name = [&cfg](const auto& field) { return option_name(cfg, field); };
  if (lease.ttl < min_ttl) {
    throw config_error(name(lease.ttl), format_duration(lease.ttl),
                       "must be at least " + format_duration(min_ttl));
  }
  if (!(lease.drift_factor >= 0.0 && lease.drift_factor < 0.5)) {
    throw config_error(name(lease.drift_factor), format_number(lease.drift_factor),
                       "must be at least 0 and less than 0.5");
  }
  rules::require_positive(cfg, lease.renew_interval);
  rules::require_positive(cfg, lease.retry_interval);
  rules::require_positive(cfg, lease.preempt_delay);
  const milliseconds usable = lease.ttl - lease_drift(lease);
  const std::string interval = name(lease.renew_interval);
  const std::string deadline = name(lease.renew_deadline);
  // When only renew_interval was set, the derived deadline is not what the
  // user should change: blame the option they wrote.
  if (lease.renew_deadline <= lease.renew_interval && lease.renew_deadline < usable &&
      set_by_user(origins, interval) && !set_by_user(origins, deadline)) {
    throw config_error(interval, format_duration(lease.renew_interval),
                       "must be less than " + deadline + " (" +
                           format_duration(lease.renew_deadline) + ")");
  }
  if (lease.renew_deadline <= lease.renew_interval || lease.renew_deadline >= usable) {
    throw config_error(deadline, format_duration(lease.renew_deadline),
                       "must be greater than " + interval + " (" +
                           format_duration(lease.renew_interval) + ") and less than " +
                           name(lease.ttl) + " minus drift (" + format_duration(usable) + ")");
  }
}

void check_text(const config& cfg) {
  rules::require_utf8(cfg, cfg.socket.path);
  rules::require_utf8(cfg, cfg.hooks.on_start);
  rules::require_utf8(cfg, cfg.hooks.on_stop);
  rules::require_utf8(cfg, cfg.child.command);
}

void check_socket(const config& cfg) {
  const socket_config& socket = cfg.socket;
  if (socket.path.size() > max_socket_path) {
    throw config_error(option_name(cfg, socket.path), socket.path,
                       "must be at most " + std::to_string(max_socket_path) +
                           " bytes (the Unix socket path limit)");
  }
  if (socket.mode > 0777) {
    throw config_error(option_name(cfg, socket.mode), format_mode(socket.mode),
                       "must be at most 0777 (octal)");
  }
  // Without a socket no one could ever acknowledge: every stop would wait
  // for its kill deadline.
  if (socket.require_ack && socket.path.empty()) {
    throw config_error(option_name(cfg, socket.require_ack), "true",
                       "needs " + option_name(cfg, socket.path) +
                           ": acknowledgements come over the socket");
  }
  for (unsigned uid : socket.allowed_uids) {
    if (uid == static_cast<unsigned>(-1)) {
      throw config_error(option_name(cfg, socket.allowed_uids), std::to_string(uid),
                         "uids go from 0 to 4294967294 (4294967295 means no uid)");
    }
  }
}

// lease.failsafe: peers needs a store kind that keeps the record it relies
// on, a secret worth its name, and a peer port the others can reach.
void check_failsafe(const config& cfg, const store_kind& kind) {
  const lease_config& lease = cfg.lease;
  if (!lease.failsafe_listen.empty()) {
    std::string why;
    if (!parse_listen_address(lease.failsafe_listen, why)) {
      throw config_error(option_name(cfg, lease.failsafe_listen), lease.failsafe_listen, why);
    }
  }
  if (lease.failsafe == failsafe_mode::off) return;
  const std::string mode = option_name(cfg, lease.failsafe);
  if (!kind.peer_confirmed_leadership) {
    throw config_error(mode, "peers",
                       "not supported by store kind " + std::string(kind.name) + " yet");
  }
  const auto needs = [&](const std::string& option, const std::string& what) {
    throw config_error::with_message(option, option + " is required with " + mode +
                                                 " peers: " + what);
  };
  const std::string secret_option = option_name(cfg, lease.failsafe_secret_file);
  if (lease.failsafe_secret_file.empty()) {
    needs(secret_option, "a file whose first line is the secret the candidates share");
  }
  try {
    const std::string secret = read_secret_file(lease.failsafe_secret_file);
    if (auto problem = peer_wire::secret_problem(secret)) {
      // The problem names the secret's length, never its text.
      throw config_error(secret_option, lease.failsafe_secret_file, *problem);
    }
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const config_error*>(&e) != nullptr) throw;
    throw config_error(secret_option, lease.failsafe_secret_file, e.what());
  }
  const std::string listen_option = option_name(cfg, lease.failsafe_listen);
  if (lease.failsafe_listen.empty()) {
    needs(listen_option, "the ADDR:PORT of this candidate's peer port");
  }
  std::string why;
  const auto listen = parse_listen_address(lease.failsafe_listen, why);
  if (listen->port == 0) {
    throw config_error(listen_option, lease.failsafe_listen,
                       "needs a port: the other candidates must know where to reach it");
  }
  const std::string address_option = option_name(cfg, lease.failsafe_address);
  if (lease.failsafe_address.empty()) {
    if (listen->host == "0.0.0.0" || listen->host == "::") {
      needs(address_option, lease.failsafe_listen +
                                " listens on every address: say which one the other candidates "
                                "reach this one at");
    }
    return;
  }
  if (auto problem = peer_wire::peer_address_problem(lease.failsafe_address)) {
    throw config_error(address_option, lease.failsafe_address, *problem);
  }
}

void check_rest(const config& cfg) {
  check_text(cfg);
  check_argv(cfg, cfg.hooks.on_start);
  check_argv(cfg, cfg.hooks.on_stop);
  rules::require_positive(cfg, cfg.hooks.timeout);
  check_argv(cfg, cfg.child.command);
  rules::require_positive(cfg, cfg.child.stop_timeout);
  if (cfg.child.on_exit != child_exit_policy::compete && cfg.child.on_exit != child_exit_policy::exit) {
    throw config_error(option_name(cfg, cfg.child.on_exit),
                       std::to_string(static_cast<int>(cfg.child.on_exit)), "must be compete or exit");
  }
  check_socket(cfg);
  if (!cfg.http.listen.empty()) {
    std::string why;
    if (!parse_listen_address(cfg.http.listen, why)) {
      throw config_error(option_name(cfg, cfg.http.listen), cfg.http.listen, why);
    }
  }
  // As spdlog::level::from_str takes them; "warning" is spdlog's own name
  // for warn. Kept as written: check-config shows what the user typed.
  static constexpr std::string_view levels[] = {"trace", "debug",    "info", "warn", "warning",
                                                "error", "critical", "off"};
  bool level_ok = false;
  for (auto level : levels) level_ok = level_ok || cfg.log.level == level;
  if (!level_ok) {
    throw config_error(option_name(cfg, cfg.log.level), cfg.log.level,
                       "must be one of trace, debug, info, warn (or warning), error, critical, off");
  }
}

}  // namespace

void validate_config(const config& cfg, const option_origins& origins) {
  try {
    check_identity(cfg);
    const store_kind& kind = store_kind_of(cfg);
    // Every kind's options are checked for form whatever the kind, so that a
    // typo in a section not in use today is not a surprise on the day it is.
    for (const store_kind* each : store_kinds()) {
      if (each->check_form != nullptr) each->check_form(cfg);
    }
    kind.validate(cfg);
    check_lease(cfg, origins);
    check_failsafe(cfg, kind);
    check_rest(cfg);
  } catch (const config_error& e) {
    const auto it = origins.find(e.option());
    if (it == origins.end()) throw;
    throw config_error::with_message(e.option(), std::string(e.what()) + " (" + it->second + ")");
  }
}

}  // namespace baton
