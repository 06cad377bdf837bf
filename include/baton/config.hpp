// The effective configuration of one baton daemon: defaults, then the YAML
// file, then BATON_* environment variables, then command-line flags (each
// later source wins). Validated once, at start-up; the rest of the program
// trusts it.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "baton/lease_drift.hpp"
#include "baton/time.hpp"

namespace baton {

/// Which store holds the lease (`store: {kind: redis}`). Each kind has its
/// own section of options (redis: ...); the kind picks which one is used.
/// Fixed at start-up: SIGHUP cannot move a running daemon to another store.
struct store_config {
  /// The store kind, as its descriptor names it (baton/store_kind.hpp):
  /// redis (one Redis server, the redis: section), sentinel (the master of
  /// a Sentinel-managed group, the sentinel: section plus the redis:
  /// section's user, password, TLS files and timeouts), cluster (the master
  /// of the election's slot in a Redis Cluster, the cluster: section plus the
  /// same redis: settings), redlock (N independent Redis masters, the
  /// redlock: section plus the redis: section's password and timeouts),
  /// postgres (a lease table in PostgreSQL, the postgres: section), etcd
  /// (a key on an etcd lease, the etcd: section) or zookeeper (an ephemeral
  /// node, the zookeeper: section).
  std::string kind = "redis";
};

/// How a TLS connection checks the server (redis.tls_verify).
enum class tls_verify {
  full,  ///< the chain up to a trusted CA, and the server's name or IP address
  ca,    ///< the chain only: for managed certificates that name no usable host
  none,  ///< nothing: encryption without authentication (must be spelled out)
};

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
/// with it once; everything else reads config::redis.replica_ack.
std::optional<int> parse_replica_ack(const std::string& text);

struct redis_config {
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

struct sentinel_config {
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

struct cluster_config {
  /// Some of the cluster's nodes (redis:// or rediss://, no password, no
  /// db): asked for the slot map. From a flag or variable, separated by
  /// commas or spaces.
  std::vector<std::string> nodes;
};

struct redlock_config {
  /// The masters' URLs (redis:// or unix://, no password: every master uses
  /// the redis: section's password): 3, 5 or 7. From a flag or variable, the
  /// URLs are separated by commas or spaces.
  std::vector<std::string> masters;
};

struct postgres_config {
  /// A libpq connection string (`host=... dbname=... user=...`) or URI
  /// (`postgresql://user@host:port/db?sslmode=verify-full`), as libpq reads
  /// it; sslmode, sslrootcert and the rest keep libpq's names.
  std::string url = "postgresql://127.0.0.1:5432/postgres";
  /// Secret. Never logged, never taken from argv: from
  /// BATON_POSTGRES_PASSWORD, postgres.password_file, or the URL
  /// (discouraged). libpq's own PGPASSWORD / PGPASSFILE work too.
  std::string password;
  /// File whose first line is the password ("" = none).
  std::string password_file;
  /// The lease table, `name` or `schema.name`; its sequence is
  /// `<table>_token` and its notification channel the table's name.
  std::string table = "baton_lease";
  /// Create the table and sequence on first use when they are missing.
  bool create_schema = true;
  /// Time allowed to connect, authenticate and set the session up.
  milliseconds connect_timeout{1000};
  /// Time allowed for one statement (also the session's statement_timeout).
  /// 0 = min(1s, lease.renew_interval / 2).
  milliseconds command_timeout{0};
};

/// The etcd store (store.kind etcd): a key on an etcd lease, over etcd's
/// JSON gateway (src/etcd).
struct etcd_config {
  /// Client URLs of the cluster's members, http:// or https:// (one scheme
  /// for all), no user-info. From a flag or variable, separated by commas or
  /// spaces.
  std::vector<std::string> endpoints;
  /// Put before the election's name in every key: <prefix><election>/lease,
  /// /fence, /record.
  std::string prefix = "baton/";
  /// The etcd user ("" = etcd's auth is off); its password is the first line
  /// of password_file, read at every authentication.
  std::string username;
  std::string password_file;
  /// For https:// endpoints: the members' CA ("" = the system's trust
  /// store), and a client certificate with its key ("" = none).
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  milliseconds connect_timeout{1000};
  /// For one call; 0 = derived: min(1s, lease.renew_interval / 2).
  milliseconds command_timeout{0};
};

/// The ZooKeeper store (store.kind zookeeper): an ephemeral lease node and a
/// record per election (src/zookeeper).
struct zookeeper_config {
  /// The ensemble's client addresses, host:port each (IPv6 as [addr]:port),
  /// no chroot. From a flag or variable, separated by commas or spaces.
  std::vector<std::string> servers;
  /// The node under which each election has its own: <path>/<election>/lease
  /// and /record.
  std::string path = "/baton";
  /// The session timeout asked for; 0 = lease.ttl. The server must grant at
  /// least the ttl, or the store refuses to lead.
  milliseconds session_timeout{0};
  /// Digest authentication ("" = none); the password is the first line of
  /// password_file.
  std::string username;
  std::string password_file;
  milliseconds connect_timeout{2000};
  /// For one request's answer; 0 = derived: min(1s, lease.renew_interval / 2).
  milliseconds command_timeout{0};
};

/// lease.failsafe: what a leader whose store cannot be reached does
/// (docs/safety.md, "Peer-confirmed leadership").
enum class failsafe_mode {
  off,    ///< stops its app at its renew deadline
  peers,  ///< keeps it running while every listed candidate confirms
};

/// "off" or "peers", as the option spells it.
const char* to_string(failsafe_mode m);
/// The mode `text` names; nullopt for anything else.
std::optional<failsafe_mode> parse_failsafe_mode(std::string_view text);

struct lease_config {
  /// How long a lease lives in the store without renewal.
  milliseconds ttl{10000};
  /// How often the leader renews. 0 = ttl / 3.
  milliseconds renew_interval{0};
  /// How long after the last successful renewal the leader keeps trying
  /// before it stops its app. 0 = ttl * 2 / 3.
  milliseconds renew_deadline{0};
  /// How often a standby retries when it has nothing better to go on.
  /// 0 = min(1s, renew_interval).
  milliseconds retry_interval{0};
  /// Fraction of the ttl assumed lost to clock-rate drift between hosts.
  double drift_factor = default_drift_factor;
  /// After `baton resign`, how long this node stays out of the election so
  /// that another node takes over. 0 = ttl.
  milliseconds resign_cooldown{0};
  /// How long a candidate whose priority is above the leader's must have
  /// been a live candidate before the leader hands over to it. 0 = 3 * ttl.
  milliseconds preempt_delay{0};
  /// off (default) or peers: a leader whose renewals fail because the store
  /// cannot be reached keeps its app running while every candidate it last
  /// listed confirms over the peer channel. Every candidate of an election
  /// must run with the same mode, secret and lease timing.
  failsafe_mode failsafe = failsafe_mode::off;
  /// The peer channel's shared secret: the first line of this file, at
  /// least 32 bytes. Required with peers.
  std::string failsafe_secret_file;
  /// ADDR:PORT the peer port listens on. Required with peers.
  std::string failsafe_listen;
  /// HOST:PORT the other candidates reach this one's peer port at,
  /// published in its registration. "" = failsafe_listen, which must then
  /// name an address other than 0.0.0.0 or [::].
  std::string failsafe_address;
};

/// The margin assumed lost to clock-rate differences between hosts: the one
/// definition in lease_drift.hpp, for the lease's ttl and drift_factor.
inline milliseconds lease_drift(const lease_config& lease) {
  return lease_drift(lease.ttl, lease.drift_factor);
}

struct hooks_config {
  /// argv run when this node becomes leader (empty = none). No shell.
  std::vector<std::string> on_start;
  /// argv run when this node stops leading (empty = none). No shell.
  std::vector<std::string> on_stop;
  /// Longest a hook may run before it is killed (SIGTERM, then SIGKILL).
  milliseconds timeout{30000};
};

enum class child_exit_policy { compete, exit };

struct child_config {
  /// argv of the supervised command (`baton run -- CMD ARGS...`); empty = none.
  std::vector<std::string> command;
  /// Time between SIGTERM and SIGKILL when the stop is voluntary (shutdown,
  /// resign). Capped by the lease's validity in every case.
  milliseconds stop_timeout{10000};
  /// What to do when the command exits by itself: release and compete again,
  /// or release and exit with the command's status.
  child_exit_policy on_exit = child_exit_policy::compete;
  /// A standby keeps the next term's keeper started and the command forked,
  /// waiting before its exec, so that winning the lease costs one exec.
  bool park = true;
};

struct socket_config {
  /// Path of the Unix socket for apps ("" = no socket).
  std::string path;
  /// File mode of the socket.
  unsigned mode = 0660;
  /// When the app must stop, wait for a subscriber's acknowledgement
  /// ({"cmd":"stopped"}) besides the hooks and child, before the lease is
  /// released; never past the stop's kill deadline. Needs `path`.
  bool require_ack = false;
  /// Peer uids (SO_PEERCRED) allowed to send commands that change state
  /// (`stopped`). Empty = the daemon's own effective uid and 0 (root).
  std::vector<unsigned> allowed_uids;
};

/// How log records are written (log.format).
enum class log_format {
  text,  ///< one line per record
  json,  ///< one object per line
};

/// "text" or "json", as the option spells it.
const char* to_string(log_format f);
/// The format `text` names; nullopt for anything else.
std::optional<log_format> parse_log_format(std::string_view text);

struct log_config {
  /// trace, debug, info, warn (or warning), error, critical, off; kept as written.
  std::string level = "info";
  log_format format = log_format::text;
};

struct http_config {
  /// ADDR:PORT for /healthz, /leader, /standby, /status and /metrics
  /// ("" = no HTTP server). [v6]:PORT for IPv6.
  std::string listen;
};

struct config {
  /// Name of the election; candidates with the same name compete. Required.
  std::string election;
  /// This candidate's id. "" = hostname plus a short hash that is stable
  /// for one daemon instance (see default_node_id in config_load.hpp).
  std::string node_id;
  /// Who should lead when several can: a leader hands over to a live
  /// candidate of a higher priority (lease.preempt_delay). From -1000 to
  /// 1000.
  int priority = 0;
  store_config store;
  redis_config redis;
  sentinel_config sentinel;
  cluster_config cluster;
  redlock_config redlock;
  postgres_config postgres;
  etcd_config etcd;
  zookeeper_config zookeeper;
  lease_config lease;
  hooks_config hooks;
  child_config child;
  socket_config socket;
  http_config http;
  log_config log;
};

/// A configuration problem, reported as one line and exit code 2.
class config_error : public std::runtime_error {
 public:
  /// `option` is the dotted name (lease.ttl), `value` what was given,
  /// `allowed` what would have been accepted.
  /// what() is `<option>: <value> is not allowed: <allowed>` on one line; an
  /// empty value shows as "", and control characters are escaped.
  config_error(const std::string& option, const std::string& value, const std::string& allowed);
  /// For problems that are not one bad value (an unknown option, a missing
  /// required one, an unreadable file): what() is `message` (made one line).
  static config_error with_message(const std::string& option, const std::string& message);
  const std::string& option() const noexcept { return option_; }

 private:
  struct whole_message {};
  config_error(const std::string& option, const std::string& message, whole_message);
  std::string option_;
};

}  // namespace baton
