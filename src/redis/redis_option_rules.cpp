// The Redis-based kinds' option rules: see redis_option_rules.hpp.
#include "redis_option_rules.hpp"

#include <optional>
#include <utility>

#include "baton/duration.hpp"
#include "config_schema/option_rules.hpp"
#include "redis_option_rows.hpp"
#include "config_schema/secret_sources.hpp"
#include "baton/redis_settings.hpp"

namespace baton::redis_detail {

// Rules name this kind's options by its own rows.
using rules = option_rules_of<redis_option_rows, sentinel_option_rows, cluster_option_rows>;
namespace {

// The kinds whose grants redis.replica_ack makes wait for replicas: those
// built on redis_store.
bool takes_replica_ack(std::string_view kind) {
  return kind == "redis" || kind == "sentinel" || kind == "cluster";
}

void check_replica_ack_form(const config& cfg) {
  const auto& r = redis_settings_of(cfg);
  // The option table parsed redis.replica_ack; a config built in code may
  // still hold a number out of range.
  if (r.replica_ack.replicas < -1 || r.replica_ack.replicas > 64) {
    throw config_error(rules::option_name(cfg, r.replica_ack), r.replica_ack.text(),
                       "must be off, all, or a number of replicas from 1 to 64");
  }
  if (r.replica_ack.on() && !takes_replica_ack(cfg.store.kind)) {
    throw config_error::with_message(
        rules::option_name(cfg, r.replica_ack),
        rules::option_name(cfg, r.replica_ack) + " applies to store.kind redis, sentinel and cluster, "
                                          "not " + cfg.store.kind);
  }
  if (r.replica_ack.on() && r.replica_ack_timeout >= r.command_timeout) {
    throw config_error(rules::option_name(cfg, r.replica_ack_timeout),
                       format_duration(r.replica_ack_timeout),
                       "must be shorter than redis.command_timeout (" +
                           format_duration(r.command_timeout) + "): WAIT runs inside it");
  }
  if (r.replica_ack.on()) rules::require_positive(cfg, r.replica_ack_timeout);
}

}  // namespace

void check_redis_section_form(const config& cfg) {
  const auto& r = redis_settings_of(cfg);
  const auto url = parse_redis_url(r.url);
  rules::require_positive(cfg, r.connect_timeout);
  rules::require_positive(cfg, r.command_timeout);
  const auto& user = r.username;
  if (!user.empty()) {
    rules::require_one_word(cfg, user);
    if (!url.username.empty() && url.username != user) {
      throw config_error::with_message(
          rules::option_name(cfg, user), "the Redis user is given twice: " + rules::option_name(cfg, user) +
                                      " is \"" + user + "\" and redis.url names \"" + url.username +
                                      "\"; give it in one place only");
    }
  }
  check_replica_ack_form(cfg);
  for (const auto* text : {&r.url, &r.password_file, &r.username, &r.tls_ca_file, &r.tls_ca_dir,
                           &r.tls_cert_file, &r.tls_key_file, &r.tls_server_name}) {
    rules::require_utf8(cfg, *text);
  }
}

// The redis.tls_* options: only where a rediss:// URL will use them, so a
// forgotten "s" in the scheme is caught instead of silently sending the
// password in clear text past the CA the operator configured.
void check_redis_tls(const config& cfg, const std::vector<std::string>& urls_in_use,
                     std::string_view where) {
  const auto& r = redis_settings_of(cfg);
  // redis.tls_verify is full, ca or none: the option table parsed it.
  const std::pair<const std::string*, bool> files[] = {
      {&r.tls_ca_file, false}, {&r.tls_ca_dir, true}, {&r.tls_cert_file, false},
      {&r.tls_key_file, false}};
  // The first TLS option set, by name ("" = none).
  std::string first_set;
  for (const auto& [path, directory] : files) {
    if (!path->empty() && first_set.empty()) first_set = rules::option_name(cfg, *path);
  }
  if (first_set.empty() && !r.tls_server_name.empty()) first_set = rules::option_name(cfg, r.tls_server_name);
  if (first_set.empty() && r.tls_verify != tls_verify::full) first_set = rules::option_name(cfg, r.tls_verify);
  bool uses_tls = false;
  for (const auto& url : urls_in_use) {
    try {
      uses_tls = uses_tls || parse_redis_url(url).tls;
    } catch (const config_error&) {
      // The kind's own rules name a bad URL.
    }
  }
  if (!first_set.empty() && !uses_tls) {
    throw config_error::with_message(
        first_set,
        first_set + " is set but " + std::string(where) +
            " a rediss:// URL: TLS settings apply only to rediss:// (write rediss:// to use TLS)");
  }
  if (r.tls_cert_file.empty() != r.tls_key_file.empty()) {
    const auto& set = r.tls_cert_file.empty() ? r.tls_key_file : r.tls_cert_file;
    const auto& missing = r.tls_cert_file.empty() ? r.tls_cert_file : r.tls_key_file;
    throw config_error::with_message(rules::option_name(cfg, missing),
                                     rules::option_name(cfg, set) + " is set but " +
                                         rules::option_name(cfg, missing) +
                                         " is not: a client certificate needs both");
  }
  for (const auto& [path, directory] : files) rules::require_readable(cfg, *path, directory);
  for (char c : r.tls_server_name) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      throw config_error(rules::option_name(cfg, r.tls_server_name), r.tls_server_name,
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
  const std::string option = rules::option_name(cfg, entries);
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

void check_sentinel_options(const config& cfg) {
  const auto& sc = sentinel_settings_of(cfg);
  check_url_list(cfg, sc.addresses, false);
  const auto& name = sc.master_name;
  if (name.empty()) {
    throw config_error::with_message(rules::option_name(cfg, name),
                                     rules::option_name(cfg, name) +
                                         " is required for store.kind sentinel: the name the "
                                         "sentinels monitor the master under");
  }
  rules::require_one_word(cfg, name);
  rules::require_one_word(cfg, sc.username);
  const std::string* tls_set = !sc.tls_ca_file.empty()     ? &sc.tls_ca_file
                               : !sc.tls_cert_file.empty() ? &sc.tls_cert_file
                               : !sc.tls_key_file.empty()  ? &sc.tls_key_file
                                                           : nullptr;
  if (tls_set != nullptr && !parse_redis_url(sc.addresses.front()).tls) {
    throw config_error::with_message(
        rules::option_name(cfg, *tls_set),
        rules::option_name(cfg, *tls_set) +
            " is set but sentinel.addresses are not a rediss:// URL: TLS settings apply only "
            "to rediss:// (write rediss:// to use TLS)");
  }
  if (sc.tls_cert_file.empty() != sc.tls_key_file.empty()) {
    const auto& set = sc.tls_cert_file.empty() ? sc.tls_key_file : sc.tls_cert_file;
    const auto& missing = sc.tls_cert_file.empty() ? sc.tls_cert_file : sc.tls_key_file;
    throw config_error::with_message(rules::option_name(cfg, missing),
                                     rules::option_name(cfg, set) + " is set but " +
                                         rules::option_name(cfg, missing) +
                                         " is not: a client certificate needs both");
  }
  for (const auto* path : {&sc.tls_ca_file, &sc.tls_cert_file, &sc.tls_key_file,
                           &sc.password_file}) {
    rules::require_readable(cfg, *path, false);
  }
}

void resolve_redis_password(config& cfg, const environment& env, const option_origins& origins) {
  auto& r = redis_settings_of(cfg);
  // The rules have parsed the URL, so this cannot throw.
  r.password = resolve_password(
      {rules::option_at(cfg, r.password), rules::option_name(cfg, r.password_file),
       r.password_file, rules::option_name(cfg, r.url),
       parse_redis_url(r.url).password, "Redis"},
      env, origins);
}

}  // namespace baton::redis_detail
