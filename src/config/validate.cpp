// The rules a config must satisfy before the daemon starts. Each failure
// names the option, shows its value, says what is allowed and, when known,
// where the value came from. Rules name an option by the field they check
// (option_name), so a message always uses the option table's name.
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

#include "baton/config_load.hpp"
#include "baton/duration.hpp"
#include "baton/listen_address.hpp"
#include "baton/postgres_conninfo.hpp"
#include "baton/redis_settings.hpp"
#include "baton/redis_url.hpp"
#include "libpq/libpq_on_demand.hpp"
#include "option_table.hpp"

namespace baton {
namespace {

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

void require_positive(const config& cfg, const milliseconds& value) {
  if (value.count() <= 0) {
    throw config_error(option_name(cfg, value), format_duration(value), "must be greater than 0");
  }
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
}

void check_store(const config& cfg) {
  std::string known;
  for (auto kind : store_config::known_kinds) {
    if (cfg.store.kind == kind) return;
    known += (known.empty() ? "" : ", ") + std::string(kind);
  }
  throw config_error(option_name(cfg, cfg.store.kind), cfg.store.kind,
                     "must be a store kind this build knows: " + known);
}

void check_postgres(const config& cfg) {
  // libpq reads the URL, and opening libpq costs memory: only for its store.
  if (cfg.store.kind == "postgres") {
    const std::string url = option_name(cfg, cfg.postgres.url);
    if (const auto why = libpq_load_error()) {
      throw config_error::with_message(url, "store.kind postgres needs libpq: " + *why);
    }
    const auto summary = summarize_conninfo(cfg.postgres.url);
    if (!summary.error.empty()) {
      throw config_error::with_message(url, url + ": libpq cannot read it: " + summary.error);
    }
    if (const auto problem = postgres_port_problem(summary.port)) {
      throw config_error::with_message(url, url + ": " + *problem);
    }
  }
  if (const auto problem = postgres_table_problem(cfg.postgres.table)) {
    throw config_error(option_name(cfg, cfg.postgres.table), cfg.postgres.table, *problem);
  }
  require_positive(cfg, cfg.postgres.connect_timeout);
  require_positive(cfg, cfg.postgres.command_timeout);
}

void check_redis(const config& cfg) {
  const auto url = parse_redis_url(cfg.redis.url);
  require_positive(cfg, cfg.redis.connect_timeout);
  require_positive(cfg, cfg.redis.command_timeout);
  const auto& user = cfg.redis.username;
  if (!user.empty()) {
    for (char c : user) {
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
        throw config_error(option_name(cfg, user), user, "must hold no spaces or control characters");
      }
    }
    if (!url.username.empty() && url.username != user) {
      throw config_error::with_message(
          option_name(cfg, user), "the Redis user is given twice: " + option_name(cfg, user) +
                                      " is \"" + user + "\" and redis.url names \"" + url.username +
                                      "\"; give it in one place only");
    }
  }
}

// A file the TLS context will load: it must be there and readable now, so
// that a typo is a config error at start, not a connect error every retry.
void require_readable(const config& cfg, const std::string& path, bool directory) {
  if (path.empty()) return;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    throw config_error(option_name(cfg, path), path, "the path does not exist");
  }
  if (directory != std::filesystem::is_directory(status)) {
    throw config_error(option_name(cfg, path), path,
                       directory ? "must be a directory" : "must be a file, not a directory");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    throw config_error(option_name(cfg, path), path,
                       std::string("cannot read it: ") + std::strerror(errno));
  }
}

// The redis.tls_* options: only where a rediss:// URL will use them, so a
// forgotten "s" in the scheme is caught instead of silently sending the
// password in clear text past the CA the operator configured.
void check_redis_tls(const config& cfg) {
  const auto& r = cfg.redis;
  // redis.tls_verify is full, ca or none: the option table parsed it.
  const std::pair<const std::string*, bool> files[] = {
      {&r.tls_ca_file, false}, {&r.tls_ca_dir, true}, {&r.tls_cert_file, false},
      {&r.tls_key_file, false}};
  // The first TLS option set, by name ("" = none).
  std::string first_set;
  for (const auto& [path, directory] : files) {
    if (!path->empty() && first_set.empty()) first_set = option_name(cfg, *path);
  }
  if (first_set.empty() && !r.tls_server_name.empty()) first_set = option_name(cfg, r.tls_server_name);
  if (first_set.empty() && r.tls_verify != tls_verify::full) first_set = option_name(cfg, r.tls_verify);
  bool uses_tls = false;
  for (const auto& url : redis_urls_in_use(cfg)) {
    try {
      uses_tls = uses_tls || parse_redis_url(url).tls;
    } catch (const config_error&) {
      // check_redlock names a bad master URL.
    }
  }
  if (!first_set.empty() && !uses_tls && cfg.store.kind != "postgres") {
    const std::string where = cfg.store.kind == "redlock"    ? "no master in redlock.masters is"
                              : cfg.store.kind == "sentinel" ? "sentinel.addresses are not"
                              : cfg.store.kind == "cluster"  ? "cluster.nodes are not"
                                                             : "redis.url is not";
    throw config_error::with_message(
        first_set,
        first_set + " is set but " + where +
            " a rediss:// URL: TLS settings apply only to rediss:// (write rediss:// to use TLS)");
  }
  if (r.tls_cert_file.empty() != r.tls_key_file.empty()) {
    const auto& set = r.tls_cert_file.empty() ? r.tls_key_file : r.tls_cert_file;
    const auto& missing = r.tls_cert_file.empty() ? r.tls_cert_file : r.tls_key_file;
    throw config_error::with_message(option_name(cfg, missing),
                                     option_name(cfg, set) + " is set but " +
                                         option_name(cfg, missing) +
                                         " is not: a client certificate needs both");
  }
  for (const auto& [path, directory] : files) require_readable(cfg, *path, directory);
  for (char c : r.tls_server_name) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      throw config_error(option_name(cfg, r.tls_server_name), r.tls_server_name,
                         "must be a host name or an IP address");
    }
  }
}


// One URL of a list option (redlock.masters, sentinel.addresses, ...),
// refused under the list's name and the entry's place in it.
redis_endpoint parse_list_entry(const std::string& option, const std::string& entry,
                                const std::string& url) {
  try {
    return parse_redis_url(url);
  } catch (const config_error& bad) {
    // parse_redis_url names redis.url; the rest of its message is the point.
    std::string why = bad.what();
    const auto colon = why.find(": ");
    throw config_error::with_message(option, entry + ": " + why.substr(colon + 2));
  }
}

// One list of redis:// or rediss:// URLs of a replicated store (the
// sentinels, the cluster's nodes): TCP, no password (a file serves them
// all), one scheme for all, db 0 where `no_db` (a cluster has only db 0).
void check_url_list(const config& cfg, const std::vector<std::string>& entries, bool no_db) {
  const std::string option = option_name(cfg, entries);
  const auto& urls = entries;  // one URL each: the option table split them
  if (urls.empty()) {
    throw config_error::with_message(option, option + " is required for store.kind " +
                                                 cfg.store.kind + ": give at least one URL");
  }
  std::optional<bool> tls;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    const std::string entry = option + ": entry " + std::to_string(i + 1);
    const redis_endpoint e = parse_list_entry(option, entry, urls[i]);
    if (e.kind != redis_endpoint::transport::tcp) {
      throw config_error::with_message(option, entry + " (" + e.redacted() +
                                                   ") must be redis:// or rediss://: the store "
                                                   "learns TCP addresses");
    }
    if (!e.password.empty()) {
      throw config_error::with_message(
          option, entry + " (" + e.redacted() + ") carries a password: use " +
                      (option.starts_with("sentinel") ? "sentinel.password_file"
                                                      : "redis.password_file or "
                                                        "BATON_REDIS_PASSWORD") +
                      ", never a URL");
    }
    if (no_db && e.db != 0) {
      throw config_error::with_message(option, entry + " (" + e.redacted() +
                                                   ") names a db: a Redis Cluster has only db 0");
    }
    if (tls && *tls != e.tls) {
      throw config_error::with_message(option, option + " mixes redis:// and rediss://: use one "
                                                        "scheme for all");
    }
    tls = e.tls;
  }
}

void check_replicated(const config& cfg) {
  const auto& r = cfg.redis;
  // The option table parsed redis.replica_ack; a config built in code may
  // still hold a number out of range.
  if (r.replica_ack.replicas < -1 || r.replica_ack.replicas > 64) {
    throw config_error(option_name(cfg, r.replica_ack), r.replica_ack.text(),
                       "must be off, all, or a number of replicas from 1 to 64");
  }
  if (r.replica_ack.on() && cfg.store.kind != "redis" && cfg.store.kind != "sentinel" &&
      cfg.store.kind != "cluster") {
    throw config_error::with_message(
        option_name(cfg, r.replica_ack),
        option_name(cfg, r.replica_ack) + " applies to store.kind redis, sentinel and cluster, "
                                          "not " + cfg.store.kind);
  }
  if (r.replica_ack.on() && r.replica_ack_timeout >= r.command_timeout) {
    throw config_error(option_name(cfg, r.replica_ack_timeout),
                       format_duration(r.replica_ack_timeout),
                       "must be shorter than redis.command_timeout (" +
                           format_duration(r.command_timeout) + "): WAIT runs inside it");
  }
  if (r.replica_ack.on()) require_positive(cfg, r.replica_ack_timeout);
  if (cfg.store.kind == "sentinel") {
    check_url_list(cfg, cfg.sentinel.addresses, false);
    const auto& name = cfg.sentinel.master_name;
    if (name.empty()) {
      throw config_error::with_message(option_name(cfg, name),
                                       option_name(cfg, name) +
                                           " is required for store.kind sentinel: the name the "
                                           "sentinels monitor the master under");
    }
    for (char c : name) {
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
        throw config_error(option_name(cfg, name), name, "must hold no spaces or control characters");
      }
    }
    for (char c : cfg.sentinel.username) {
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
        throw config_error(option_name(cfg, cfg.sentinel.username), cfg.sentinel.username,
                           "must hold no spaces or control characters");
      }
    }
    const auto& sc = cfg.sentinel;
    const std::string* tls_set = !sc.tls_ca_file.empty()     ? &sc.tls_ca_file
                                 : !sc.tls_cert_file.empty() ? &sc.tls_cert_file
                                 : !sc.tls_key_file.empty()  ? &sc.tls_key_file
                                                             : nullptr;
    if (tls_set != nullptr && !parse_redis_url(sc.addresses.front()).tls) {
      throw config_error::with_message(
          option_name(cfg, *tls_set),
          option_name(cfg, *tls_set) +
              " is set but sentinel.addresses are not a rediss:// URL: TLS settings apply only "
              "to rediss:// (write rediss:// to use TLS)");
    }
    if (sc.tls_cert_file.empty() != sc.tls_key_file.empty()) {
      const auto& set = sc.tls_cert_file.empty() ? sc.tls_key_file : sc.tls_cert_file;
      const auto& missing = sc.tls_cert_file.empty() ? sc.tls_cert_file : sc.tls_key_file;
      throw config_error::with_message(option_name(cfg, missing),
                                       option_name(cfg, set) + " is set but " +
                                           option_name(cfg, missing) +
                                           " is not: a client certificate needs both");
    }
    for (const auto* path : {&sc.tls_ca_file, &sc.tls_cert_file, &sc.tls_key_file,
                             &sc.password_file}) {
      require_readable(cfg, *path, false);
    }
  }
  if (cfg.store.kind == "cluster") check_url_list(cfg, cfg.cluster.nodes, true);
}

// Odd, so that two majorities always share a master; at most 7, since every
// round goes to all of them.
void check_redlock(const config& cfg) {
  if (cfg.store.kind != "redlock") return;
  const std::string option = "redlock.masters";
  const auto& urls = cfg.redlock.masters;
  if (urls.size() != 3 && urls.size() != 5 && urls.size() != 7) {
    throw config_error::with_message(
        option, option + ": store.kind redlock needs 3, 5 or 7 master URLs, got " +
                    std::to_string(urls.size()) +
                    " (an odd number, so that any two majorities share a master)");
  }
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    const std::string entry = option + ": master " + std::to_string(i + 1);
    const redis_endpoint e = parse_list_entry(option, entry, urls[i]);
    if (!e.password.empty()) {
      throw config_error::with_message(
          option, entry + " (" + e.redacted() + ") carries a password: every master uses "
                      "redis.password_file or BATON_REDIS_PASSWORD, never a URL");
    }
    auto where = e.redacted();
    if (std::find(seen.begin(), seen.end(), where) != seen.end()) {
      throw config_error::with_message(option, entry + " (" + where + ") is listed twice: a "
                                                                       "majority needs distinct masters");
    }
    seen.push_back(std::move(where));
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
  require_positive(cfg, lease.renew_interval);
  require_positive(cfg, lease.retry_interval);
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
// A string option, or every word of an argv option.
void require_utf8(const config& cfg, const std::string& value) {
  if (!is_utf8(value)) throw config_error(option_name(cfg, value), value, "must be valid UTF-8");
}
void require_utf8(const config& cfg, const std::vector<std::string>& argv) {
  for (const auto& word : argv) {
    if (!is_utf8(word)) throw config_error(option_name(cfg, argv), word, "must be valid UTF-8");
  }
}

void check_text(const config& cfg) {
  require_utf8(cfg, cfg.redis.url);
  require_utf8(cfg, cfg.redis.password_file);
  require_utf8(cfg, cfg.redis.username);
  require_utf8(cfg, cfg.redis.tls_ca_file);
  require_utf8(cfg, cfg.redis.tls_ca_dir);
  require_utf8(cfg, cfg.redis.tls_cert_file);
  require_utf8(cfg, cfg.redis.tls_key_file);
  require_utf8(cfg, cfg.redis.tls_server_name);
  require_utf8(cfg, cfg.postgres.url);
  require_utf8(cfg, cfg.postgres.password_file);
  require_utf8(cfg, cfg.socket.path);
  require_utf8(cfg, cfg.hooks.on_start);
  require_utf8(cfg, cfg.hooks.on_stop);
  require_utf8(cfg, cfg.child.command);
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

void check_rest(const config& cfg) {
  check_text(cfg);
  check_argv(cfg, cfg.hooks.on_start);
  check_argv(cfg, cfg.hooks.on_stop);
  require_positive(cfg, cfg.hooks.timeout);
  check_argv(cfg, cfg.child.command);
  require_positive(cfg, cfg.child.stop_timeout);
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
  if (cfg.log.format != "text" && cfg.log.format != "json") {
    throw config_error(option_name(cfg, cfg.log.format), cfg.log.format, "must be text or json");
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

std::vector<std::string> redlock_master_urls(const redlock_config& redlock) {
  return url_list(redlock.masters);
}

std::vector<std::string> url_list(const std::vector<std::string>& entries) {
  std::vector<std::string> urls;
  for (const auto& entry : entries) {
    std::size_t from = 0;
    while (from <= entry.size()) {
      const auto comma = std::min(entry.find(',', from), entry.size());
      auto piece = entry.substr(from, comma - from);
      piece.erase(0, piece.find_first_not_of(" \t"));
      piece.erase(piece.find_last_not_of(" \t") + 1);
      if (!piece.empty()) urls.push_back(std::move(piece));
      from = comma + 1;
    }
  }
  return urls;
}

milliseconds lease_drift(const lease_config& lease) {
  return lease_drift(lease.ttl, lease.drift_factor);
}

void validate_config(const config& cfg, const option_origins& origins) {
  try {
    check_identity(cfg);
    check_store(cfg);
    check_redis(cfg);
    check_redlock(cfg);
    check_replicated(cfg);
    check_redis_tls(cfg);
    check_postgres(cfg);
    check_lease(cfg, origins);
    check_rest(cfg);
  } catch (const config_error& e) {
    const auto it = origins.find(e.option());
    if (it == origins.end()) throw;
    throw config_error::with_message(e.option(), std::string(e.what()) + " (" + it->second + ")");
  }
}

}  // namespace baton
