// The settings of the Redis-based kinds' own sections (redis:, sentinel:,
// cluster:), their accessors, and how to reach one Redis server with the
// redis: section's settings: the URL parsed, then the ACL user and the TLS
// options applied. The single-server store, every Redlock master, init-store
// and check-store connect through it, so they all log in and verify the same
// way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baton/config.hpp"
#include "baton/redis_url.hpp"

namespace baton {

/// redis.replica_ack, as the option table parsed it (off, all or a number):
/// the replicas that must acknowledge (WAIT) every grant and renewal.
struct replica_ack_setting {
  /// -1 = off; 0 = all (every replica the election's master has had); N =
  /// at least N replicas, 1 to 64. The number the Redis scripts and
  /// replicas_required take.
  int replicas = -1;

  static constexpr replica_ack_setting off() { return {-1}; }
  static constexpr replica_ack_setting all() { return {0}; }
  static constexpr replica_ack_setting at_least(int n) { return {n}; }
  bool on() const { return replicas >= 0; }
  /// As the option spells it: "off", "all" or the number.
  std::string text() const {
    return replicas < 0 ? "off" : replicas == 0 ? "all" : std::to_string(replicas);
  }
  friend bool operator==(const replica_ack_setting&, const replica_ack_setting&) = default;
};

/// redis.replica_ack's text as a number: -1 = off, 0 = all, N > 0; nullopt
/// when it is none of off, all, 1..64. The option table parses the option
/// with it once; everything else reads redis_settings::replica_ack.
std::optional<int> parse_replica_ack(const std::string& text);

/// The redis: section: one Redis server (store.kind redis), and the login,
/// TLS files and timeouts the sentinel, cluster and redlock kinds use too.
struct redis_settings {
  /// `redis://[:password@]host[:port][/db]` or `unix:///path/to/redis.sock[?db=N]`.
  std::string url = "redis://127.0.0.1:6379";
  /// Secret. Never logged, never taken from argv: from BATON_REDIS_PASSWORD,
  /// redis.password_file, or the URL's user-info (discouraged).
  std::string password;
  /// File whose first line is the password ("" = none). Read again on every
  /// connection attempt, so a rotated password is used from the next one on.
  std::string password_file;
  /// ACL user to log in as ("" = the URL's user, or Redis's default user).
  std::string username;
  /// TLS, for rediss:// URLs: how the server is checked (full, ca, none) and
  /// the files and name the check uses; see redis_tls_settings in
  /// baton/redis_url.hpp. "" = the system's trust store, no client
  /// certificate, the URL's host.
  ::baton::tls_verify tls_verify = ::baton::tls_verify::full;
  std::string tls_ca_file;
  std::string tls_ca_dir;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_server_name;
  /// Time allowed for TCP/Unix connect plus the TLS handshake, AUTH and SELECT.
  milliseconds connect_timeout{1000};
  /// Time allowed for one command's reply; past it the connection is dropped
  /// and re-established. 0 = min(1s, lease.renew_interval / 2).
  milliseconds command_timeout{0};
  /// Replicas that must acknowledge (WAIT) every grant and renewal before it
  /// counts: off, a number, or all (every replica the master had when
  /// baton connected). Not for redlock.
  replica_ack_setting replica_ack;
  /// How long WAIT may take. 0 = command_timeout / 2.
  milliseconds replica_ack_timeout{0};
};

/// The sentinel: section (store.kind sentinel): the master of a
/// Sentinel-managed group, reached with the redis: section's login, TLS
/// files and timeouts.
struct sentinel_settings {
  /// The sentinels' URLs, redis:// or rediss:// (TLS for the sentinels and
  /// the master alike), no password. From a flag or variable, separated by
  /// commas or spaces.
  std::vector<std::string> addresses;
  /// The group's name, as in `sentinel monitor NAME ...`.
  std::string master_name;
  /// ACL user on the sentinels ("" = the default user).
  std::string username;
  /// File whose first line is the sentinels' password ("" = none); read
  /// again at every connection attempt.
  std::string password_file;
  /// TLS files for the sentinels; "" = the matching redis.tls_* option.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  /// How often the master's address is asked again, besides the switch
  /// messages and reconnects. 0 = never.
  milliseconds check_interval{1000};
};

/// The cluster: section (store.kind cluster): the master of the election's
/// slot in a Redis Cluster, reached with the redis: section's settings.
struct cluster_settings {
  /// Some of the cluster's nodes (redis:// or rediss://, no password, no
  /// db): asked for the slot map. From a flag or variable, separated by
  /// commas or spaces.
  std::vector<std::string> nodes;
};

/// The settings of the redis:, sentinel: and cluster: sections in `cfg`.
inline redis_settings& redis_settings_of(config& cfg) {
  return cfg.kinds.get<redis_settings>();
}
inline const redis_settings& redis_settings_of(const config& cfg) {
  return cfg.kinds.get<redis_settings>();
}
inline sentinel_settings& sentinel_settings_of(config& cfg) {
  return cfg.kinds.get<sentinel_settings>();
}
inline const sentinel_settings& sentinel_settings_of(const config& cfg) {
  return cfg.kinds.get<sentinel_settings>();
}
inline cluster_settings& cluster_settings_of(config& cfg) {
  return cfg.kinds.get<cluster_settings>();
}
inline const cluster_settings& cluster_settings_of(const config& cfg) {
  return cfg.kinds.get<cluster_settings>();
}

/// The endpoint of `url` (redis.url or a Redlock master) with redis.username
/// and redis.tls_* applied. For a validated config it does not throw;
/// otherwise config_error as parse_redis_url.
redis_endpoint redis_endpoint_for(const redis_settings& redis, const std::string& url);

}  // namespace baton
